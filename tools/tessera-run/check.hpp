// tessera-run's check: the results against the reference interpreters of
// the program's own source (Graph IR, per device for SPMD programs; any Tile
// IR kernel, run with the device's subgroup size), one line per result type
// with its tolerance.
#ifndef TESSERA_TOOLS_RUN_CHECK_HPP_
#define TESSERA_TOOLS_RUN_CHECK_HPP_

#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "npy.hpp"
#include "options.hpp"
#include "tessera/program.hpp"

namespace tessera::run {

// before/after: per device, per param (scalars as one-element arrays).
// Returns kExitOk, kExitMismatch or kExitNotChecked.
int CheckResults(const Program& program, mlir::ModuleOp source, const std::vector<std::vector<NpyArray>>& before,
                 const std::vector<std::vector<NpyArray>>& after, TsDim3 grid, uint32_t subgroup_size,
                 const RunArgs& args);

}  // namespace tessera::run

#endif
