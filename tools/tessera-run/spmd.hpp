// tessera-run for SPMD Graph IR programs (docs/spmd.md): a function that
// names a `tessera_graph.mesh` runs on one device per mesh position.
//
//   1. --tessera-spmd-stages cuts it at its collectives (stage functions
//      plus a plan); the stages are compiled once for the backend and
//      loaded on every device;
//   2. global inputs (random, or --input .npy of the GLOBAL shapes) are cut
//      into each device's local arguments by the arguments' shardings;
//   3. every iteration enqueues, per step of the plan, the stage's kernel on
//      every device's stream, or the collective on one Communicator per
//      group of devices (created once per set of mesh axes), and then
//      synchronizes every stream;
//   4. every device's results are checked against the SPMD reference
//      (spmd_reference.hpp); the global results are assembled from the
//      results' shardings (--output files get them, in order).
#ifndef TESSERA_TOOLS_RUN_SPMD_HPP_
#define TESSERA_TOOLS_RUN_SPMD_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "tessera/runtime.hpp"

namespace tessera::run {

struct SpmdOptions {
  std::string function;             // empty: the first SPMD function
  std::string program;              // file name, for messages
  std::vector<std::string> inputs;  // .npy files of the GLOBAL arguments, in order
  std::vector<std::string> outputs; // .npy files for the GLOBAL results, in order
  int iterations = 10;
  double tolerance = -1;            // < 0: the default of each result type (dtype.hpp)
  unsigned seed = 42;
  bool verify = true;
};

// The number of devices the SPMD function of `module` needs (the size of
// its mesh), or 0 when the module has no SPMD function; -1 after a
// diagnostic (e.g. a function naming two meshes).
int64_t SpmdDevicesNeeded(mlir::ModuleOp module, const std::string& function);

// Compiles, runs, verifies and times it; returns tessera-run's exit code
// (0 verified, 1 bad program or input, 2 runtime error, 3 mismatch).
int RunSpmd(mlir::ModuleOp module, const SpmdOptions& options, const Runtime& runtime);

}  // namespace tessera::run

#endif
