//===- SpmdPlan.h - SPMD Graph IR programs: the stage plan ----------------===//
//
// An SPMD program is a Graph IR function that names a `tessera_graph.mesh`
// (in a collective, or in the `tessera_graph.sharding` of an argument or a
// result). Every device of the mesh runs the function on its own *local*
// tensors (the types in the function are local shapes); collectives
// exchange data between devices; shardings say how the local tensors of the
// arguments and results make up the global ones (docs/spmd.md).
//
// `--tessera-spmd-stages` cuts such a function at its collectives: the
// compute between two collectives becomes a private stage function (a plain
// Graph IR function, compiled like any other program), and the function
// itself becomes its plan (`tessera.spmd_plan`): calls to the stages and the
// collectives between them. readSpmdPlan reads the plan back for a runner.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DIALECT_GRAPH_TRANSFORMS_SPMDPLAN_H
#define TESSERA_DIALECT_GRAPH_TRANSFORMS_SPMDPLAN_H

#include <cstdint>
#include <string>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

namespace tessera::graph {

/// Unit attribute of a plan function; `tessera.mesh` names its mesh.
constexpr llvm::StringLiteral kSpmdPlanAttr = "tessera.spmd_plan";
constexpr llvm::StringLiteral kSpmdMeshAttr = "tessera.mesh";
/// On a collective of a plan: the stream it runs on (0: the program's, 1:
/// the communication stream; --tessera-overlap-collectives sets 1).
constexpr llvm::StringLiteral kPlanStreamAttr = "tessera.stream";
/// The sharding attribute on arguments, results and ops.
constexpr llvm::StringLiteral kShardingAttr = "tessera_graph.sharding";

/// The mesh an SPMD function uses: the one mesh named by its collectives and
/// shardings. Null (no error) when it names none; an error when it names
/// several or one that does not exist.
mlir::FailureOr<MeshOp> findSpmdMesh(mlir::func::FuncOp fn);

/// How one argument or result is laid out over the mesh.
struct SpmdSharding {
  /// Per tensor dim: the mesh axes (indices into SpmdPlan::axes) the dim is
  /// partitioned over, the major one first; empty when it is whole.
  std::vector<std::vector<int>> dimAxes;
  /// Axes whose devices hold partial sums of the global tensor.
  std::vector<int> reduceAxes;
  /// Every other axis of the mesh holds copies (replicated).
};

/// A tensor of the plan: one buffer of this local type on every device.
struct SpmdValue {
  std::string dtype;               // "f32", "bf16", "i32", ...
  std::vector<int64_t> shape;      // local shape
  int64_t bytes = 0;               // local bytes
  /// A view (a `slice` of whole rows, or an operand of a `concat` along
  /// dim 0): the bytes of value `aliasOf` from `byteOffset`; -1: its own.
  int aliasOf = -1;
  int64_t byteOffset = 0;
  /// A `tessera_graph.mesh_position`: the device's position (i32), written
  /// by the runner into each device's buffer, never by a step.
  bool meshPosition = false;
};

struct SpmdStep {
  enum Kind { kStage, kAllReduce, kBroadcast, kAllGather, kReduceScatter } kind = kStage;
  std::string stage;               // kStage: the stage function (kernel) name
  std::vector<unsigned> inputs;    // value ids (kStage: its arguments; collectives: one)
  std::vector<unsigned> outputs;   // value ids (kStage: its results; collectives: one)
  std::vector<int> axes;           // collectives: mesh axes, in the op's order
  ReduceKind reduce = ReduceKind::sum;
  int64_t root = 0;                // kBroadcast: rank within the group
  /// Collectives: elements each rank sends (all_gather, broadcast,
  /// all_reduce) or receives (reduce_scatter). Gathers and scatters are flat:
  /// the pass rewrote them so that rank r's part is the r-th contiguous
  /// chunk of the full buffer.
  int64_t count = 0;
  unsigned stream = 0;             // collectives: kPlanStreamAttr (0 or 1)
  mlir::Operation *op = nullptr;   // the plan op, for diagnostics
};

struct SpmdPlan {
  std::string name;
  std::string mesh;                       // symbol name
  std::vector<std::string> axes;          // mesh axis names
  std::vector<int64_t> shape;             // mesh axis sizes
  std::vector<SpmdValue> values;          // arguments first, in order
  std::vector<SpmdSharding> argShardings; // one per argument
  std::vector<unsigned> results;          // value ids returned, in order
  std::vector<SpmdSharding> resultShardings;
  std::vector<SpmdStep> steps;            // in program order
  int64_t devices() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
};

/// Reads a `tessera.spmd_plan` function. Diagnostics on failure.
mlir::FailureOr<SpmdPlan> readSpmdPlan(mlir::func::FuncOp plan);

/// The sharding of argument/result `i` of `fn` on `mesh`, or an error.
mlir::FailureOr<SpmdSharding> readSharding(mlir::Operation *at, ShardAttr attr, MeshOp mesh,
                                           int64_t rank);

/// Devices are numbered row-major over the mesh shape: device d has
/// coordinate coords(d)[a] on axis a.
std::vector<int64_t> meshCoords(const std::vector<int64_t> &shape, int64_t device);
/// The devices that take part with `device` in a collective over `axes`
/// (indices into the mesh's axes), in rank order: they share the device's
/// coordinates on every other axis, and rank is row-major over `axes` in the
/// order given. `rank` (optional) receives `device`'s own rank.
std::vector<int64_t> collectiveGroup(const std::vector<int64_t> &shape,
                                     const std::vector<int> &axes, int64_t device,
                                     int64_t *rank = nullptr);

}  // namespace tessera::graph

#endif
