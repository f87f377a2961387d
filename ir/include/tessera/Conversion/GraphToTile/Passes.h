//===- Passes.h - Graph IR -> Tile IR kernels + launch plan ---------------===//
//
// Target-neutral: the kernels are plain Tile IR, so every GPU backend that
// lowers Tile IR (vulkan today; cuda, hip later) runs the same plan.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CONVERSION_GRAPHTOTILE_PASSES_H
#define TESSERA_CONVERSION_GRAPHTOTILE_PASSES_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::conversion {
#define GEN_PASS_DECL
#include "tessera/Conversion/GraphToTile/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "tessera/Conversion/GraphToTile/Passes.h.inc"

/// How the GPU kernels store Graph IR element types (ElementTypes.h): f16
/// as f16 (SPIR-V Float16 + 16-bit storage), bf16 as its bits in i16 (no
/// bf16 type in SPIR-V), fp8 as i8; so a plan buffer of a bf16 tensor is
/// `memref<N x i16>` with the bf16 bytes, what a host uploads unchanged.
/// Float division by zero is selected (ElementOptions::selectDivisionByZero).
inline constexpr elements::ElementOptions kGpuElements{/*hardwareF16=*/true, /*bf16AsI16=*/true,
                                                       /*selectDivisionByZero=*/true};

/// Attribute names of the launch plan.
constexpr llvm::StringLiteral kLaunchPlanAttr = "tessera.launch_plan";
constexpr llvm::StringLiteral kBufferRoleAttr = "tessera.buffer";
constexpr llvm::StringLiteral kBytesAttr = "tessera.bytes";
constexpr llvm::StringLiteral kLaunchGridAttr = "tessera.grid";

/// The launch plan of one Graph IR function, read back from the IR.
struct PlanBuffer {
  enum Role { kInput, kOutput, kIntermediate } role = kIntermediate;
  int64_t bytes = 0;
  std::string dtype;                 // the memref element type: "f32", "i16" (bf16), ...
  std::vector<int64_t> elements;     // flat element count {N}
};
struct PlanLaunch {
  std::string kernel;
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> groupSize{1, 1, 1};
  std::vector<unsigned> buffers;     // indices into LaunchPlan::buffers
};
struct LaunchPlan {
  std::string name;
  std::vector<PlanBuffer> buffers;   // inputs, outputs (argument order), then intermediates
  std::vector<PlanLaunch> launches;  // in order
};
/// Reads the plan of a `tessera.launch_plan` function (kernels are looked
/// up in its module for their group size). Diagnostics on failure.
mlir::FailureOr<LaunchPlan> readLaunchPlan(mlir::func::FuncOp plan);

}  // namespace tessera::conversion

#endif
