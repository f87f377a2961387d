//===- TileInterpreter.h - Tile IR kernels run on the host ----------------===//
//
// The reference for any Tile IR kernel, including a user's own: the kernel
// is interpreted op by op, every tile group of the grid in turn and every
// lane of a group as its own fiber, so that barriers, shuffles and subgroup
// reductions meet as the Tile IR contract says (all lanes of the group, or
// of the subgroup, reach the same op; shuffles read the other lanes' values
// there).  Arithmetic rounds to each op's element type (f32 in float, f16 /
// bf16 to nearest even, integers wrap in their width); cp_async copies at
// once; schedule pipelines are loops and prefetches are views of their tile.
//
// Nothing here shares code with the code generators: it checks them.
//
// Thread-safety: each call is independent (no globals).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_REFERENCE_TILEINTERPRETER_H
#define TESSERA_REFERENCE_TILEINTERPRETER_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tessera::reference {

/// One kernel argument: a buffer (values of its element type, row-major,
/// updated in place) or a scalar (one value).
struct TileArgument {
  std::vector<double> values;
};

struct TileLaunch {
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> group_size{1, 1, 1};
  /// Lanes per subgroup (shuffles and subgroup reductions work within
  /// one): the device's (TsDeviceProperties::subgroup_size).
  uint32_t subgroup_size = 1;
  /// Bounds on the work of one call (0: none), so that a kernel whose loop
  /// never ends is reported instead of hanging its caller: operations
  /// executed over all lanes and groups, and wall-clock seconds.
  uint64_t max_operations = 0;
  double max_seconds = 0;
};

/// Why RunTileKernel failed, for callers that act on it (tessera-run
/// refuses to run a kernel out of bounds or past the limit on a device).
enum class TileFailure {
  kNone,
  kOutOfBounds,  // a load, store or view outside its buffer
  kLimit,        // max_operations or max_seconds reached
  kDivergent,    // a barrier or subgroup op not every lane reaches (a GPU hangs or corrupts)
  kOther,
};

/// Runs `kernel` over `launch` on `args` (one per kernel argument, sized to
/// its memref: checked before anything is written).  Returns "" or what
/// went wrong (an op the interpreter does not know, an access out of
/// bounds, lanes that do not all reach a barrier, a limit of `launch`
/// reached, naming the loop it was in) with the op's location; `failure`,
/// when given, receives its kind.
std::string RunTileKernel(mlir::func::FuncOp kernel, const TileLaunch &launch,
                          std::vector<TileArgument> *args, TileFailure *failure = nullptr);

}  // namespace tessera::reference

#endif
