// tessera-run's check: the results against the reference interpreters of
// the program's own source (Graph IR, per device for SPMD programs; any Tile
// IR kernel, run with the device's subgroup size), one line per result type
// with its tolerance.
#ifndef TESSERA_TOOLS_RUN_CHECK_HPP_
#define TESSERA_TOOLS_RUN_CHECK_HPP_

#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "tessera/Reference/GraphInterpreter.h"
#include "npy.hpp"
#include "options.hpp"
#include "tessera/program.hpp"

namespace tessera::run {

// The Tile IR interpreter's run of a kernel (a user's own included) on the
// inputs `before` (per param): every param's values after it, or the
// interpreter's error.  tessera-run computes it before the device runs the
// kernel: an access out of bounds is refused there instead of corrupting
// (cpu: this process's) memory.
struct TileReference {
  reference::HostTensors values;
  std::string error;
  bool out_of_bounds = false;  // the error is an access out of bounds
  bool limit = false;          // the interpreter stopped at max_seconds
  bool divergent = false;      // a barrier or subgroup op not every lane reaches
  bool no_launch = false;      // the program launches no kernel
};
// max_seconds: the interpreter's limit (0: none).
TileReference RunTileReference(const Program& program, mlir::ModuleOp source, const std::vector<NpyArray>& before,
                               TsDim3 grid, uint32_t subgroup_size, double max_seconds);

// before/after: per device, per param (scalars as one-element arrays).
// tile_expected: a Tile IR kernel's reference values when computed already.
// Returns kExitOk, kExitMismatch or kExitNotChecked.
// no_source: why `source` is null (the message of "not checked").
int CheckResults(const Program& program, mlir::ModuleOp source, const std::string& no_source,
                 const std::vector<std::vector<NpyArray>>& before,
                 const std::vector<std::vector<NpyArray>>& after, TsDim3 grid, uint32_t subgroup_size,
                 const RunArgs& args, const reference::HostTensors* tile_expected = nullptr);

}  // namespace tessera::run

#endif
