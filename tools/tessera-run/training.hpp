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
// The result attribute of a tensor<1xi1> that says whether the step's
// updates apply (false: the step is skipped, e.g. gradients that
// overflowed under a loss scale; docs/autodiff.md).
constexpr const char* kStepOkAttr = "tessera.step_ok";

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

// The param of the result of `function` marked `tessera.step_ok` into
// *param (-1: none). Returns "" or what is wrong (a mark on a result that is
// not tensor<1xi1>, two marks).
std::string FindStepOk(mlir::ModuleOp source, const std::string& function, const std::vector<ParamSpec>& params,
                       int* param);

// Copies each update's result buffer into its argument's buffer, on every
// local device (ordered on its stream).
Status ApplyStateUpdates(const std::vector<StateUpdate>& updates, const std::vector<ParamSpec>& params,
                         std::vector<std::vector<Buffer>>& buffers, std::vector<Stream>& streams);

}  // namespace tessera::run

#endif
