// Training programs in tessera-run: a Graph IR result marked
// `{tessera.update = N}` is the next value of argument N, so each run is
// one step of a training loop (docs/autodiff.md). tessera-run copies
// each such result into its argument's buffer on the device after every
// run and prints result 0 (the loss) as the steps go.
#ifndef TESSERA_RUN_TRAINING_HPP
#define TESSERA_RUN_TRAINING_HPP

#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "tessera/program.hpp"

namespace tessera::run {

// The result attribute that names the argument a result replaces.
constexpr const char* kUpdateAttr = "tessera.update";

struct StateUpdate {
  size_t result_param = 0;  // index into the image's params
  size_t arg_param = 0;
};

// Reads the `tessera.update` marks of `function` in `source` (the parsed
// .mlir; null for a compiled program without its source: no marks). Each
// must name an argument of the result's type, at most once. Returns "" or
// what is wrong.
std::string FindStateUpdates(mlir::ModuleOp source, const std::string& function,
                             const std::vector<ParamSpec>& params, std::vector<StateUpdate>* out);

// Copies each update's result buffer into its argument's buffer, on every
// local device (ordered on its stream).
Status ApplyStateUpdates(const std::vector<StateUpdate>& updates, const std::vector<ParamSpec>& params,
                         std::vector<std::vector<Buffer>>& buffers, std::vector<Stream>& streams);

}  // namespace tessera::run

#endif
