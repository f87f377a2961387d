//===- InitAllPasses.cpp --------------------------------------------------===//
#include "tessera/InitAll.h"

#include "tessera/Conversion/GraphToTile/Passes.h"
#include "tessera/Conversion/GraphToTile/Pipeline.h"
#include "tessera/Conversion/TileToSPIRV/Passes.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Schedule/Transforms/Passes.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

void tessera::registerAllPasses() {
  graph::registerGraphPasses();
  schedule::registerSchedulePasses();
  tile::registerTilePasses();
  spv::registerSPIRVPasses();
  spv::registerSPIRVPipelines();
  conversion::registerGraphToTilePasses();
  conversion::registerGpuPipelines();
}
