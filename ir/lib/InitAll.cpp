//===- InitAll.cpp --------------------------------------------------------===//
#include "tessera/InitAll.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "tessera/Conversion/GraphToTile/Passes.h"
#include "tessera/Conversion/GraphToTile/Pipeline.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Schedule/Transforms/Passes.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Target/CPU/Passes.h"
#include "tessera/Target/CPU/Pipeline.h"
#include "tessera/Target/SPIRV/Passes.h"

void tessera::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, schedule::ScheduleDialect,
                  tile::TileDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect,
                  mlir::vector::VectorDialect, mlir::tensor::TensorDialect,
                  mlir::cf::ControlFlowDialect, mlir::LLVM::LLVMDialect>();
  // The Vulkan (SPIR-V) code generator's output dialects.
  registry.insert<mlir::gpu::GPUDialect, mlir::spirv::SPIRVDialect>();
}

void tessera::registerAllPasses() {
  graph::registerGraphPasses();
  schedule::registerSchedulePasses();
  tile::registerTilePasses();
  cpu::registerCPUPasses();
  cpu::registerCPUPipelines();
  spv::registerSPIRVPasses();
  spv::registerSPIRVPipelines();
  conversion::registerGraphToTilePasses();
  conversion::registerGpuPipelines();
}
