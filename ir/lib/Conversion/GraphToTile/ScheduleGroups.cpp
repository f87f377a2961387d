//===- ScheduleGroups.cpp - what Schedule IR decided, for the GPU kernels -===//
#include "ScheduleGroups.h"

#include "llvm/ADT/SetVector.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

using namespace mlir;
namespace g = tessera::graph;
namespace s = tessera::schedule;

namespace tessera::conversion {

ScheduleGroups inlineScheduleGroups(func::FuncOp fn) {
  ScheduleGroups groups;
  for (Operation &op : llvm::make_early_inc_range(fn.front())) {
    auto tile = dyn_cast<s::TileOp>(op);
    if (!tile) continue;
    Block &body = tile.getBody().front();
    llvm::SmallVector<Value> storedList = s::storedValues(tile);
    llvm::DenseSet<Value> stored(storedList.begin(), storedList.end());
    GemmTile sizes;
    bool hasMatmul = !body.getOps<g::MatmulOp>().empty();
    if (hasMatmul) {
      ArrayRef<int64_t> ts = tile.getTileSizes(), mt = tile.getMicroTile();
      StringAttr mma = tile.getMmaAttr();
      sizes = GemmTile{ts[0], ts[1], ts[2], mt[0], mt[1], mma && mma.getValue() == "sync",
                       tile.getMicroLayoutAttr() && tile.getMicroLayoutAttr().getValue() == "quads",
                       mma && mma.getValue() == "wgmma", tile.getStagesAttr() ? tile.getStagesAttr().getInt() : 0,
                       mma && mma.getValue() == "mfma", mma && mma.getValue() == "wmma",
                       mma && mma.getValue() == "wgmma" && tile.getWarpSpecialize()};
    }
    IRMapping map;
    for (auto [arg, v] : llvm::zip(body.getArguments(), tile.getOperands())) map.map(arg, v);
    OpBuilder b(tile);
    for (Operation &inner : body.without_terminator()) {
      Operation *c = b.clone(inner, map);
      for (Value r : inner.getResults())
        if (!stored.contains(r)) groups.fused.insert(map.lookup(r));
      if (isa<g::MatmulOp>(c)) groups.gemm[c] = sizes;
    }
    for (auto [r, y] : llvm::zip(tile.getResults(), body.getTerminator()->getOperands()))
      r.replaceAllUsesWith(map.lookupOrDefault(y));
    tile.erase();
  }
  return groups;
}

}  // namespace tessera::conversion
