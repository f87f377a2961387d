//===- InitAllDialects.cpp ------------------------------------------------===//
#include "tessera/InitAll.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

void tessera::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, schedule::ScheduleDialect,
                  tile::TileDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect,
                  mlir::vector::VectorDialect, mlir::tensor::TensorDialect,
                  mlir::cf::ControlFlowDialect, mlir::LLVM::LLVMDialect>();
  // The GPU code generators' output dialects.
  registry.insert<mlir::gpu::GPUDialect, mlir::spirv::SPIRVDialect>();
}
