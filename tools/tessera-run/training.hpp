// Training programs in tessera-run: a Graph IR result marked
// `{tessera.update = N}` is the next value of argument N, so each run is
// one step of a training loop (docs/autodiff.md). The compiler records the
// marks in the image (ProgramImage::state_updates, step_ok_param), so a
// compiled program trains without its source. tessera-run copies each such
// result into its argument's buffer on the device after every run and
// prints result 0 (the loss) as the steps go.
#ifndef TESSERA_RUN_TRAINING_HPP
#define TESSERA_RUN_TRAINING_HPP

#include <vector>

#include "tessera/program.hpp"

namespace tessera::run {

// Copies each update's result buffer into its argument's buffer, on every
// local device (ordered on its stream).
Status ApplyStateUpdates(const std::vector<ProgramImage::StateUpdate>& updates, const std::vector<ParamSpec>& params,
                         std::vector<std::vector<Buffer>>& buffers, std::vector<Stream>& streams);

}  // namespace tessera::run

#endif
