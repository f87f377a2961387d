#include "training.hpp"

namespace tessera::run {

Status ApplyStateUpdates(const std::vector<ProgramImage::StateUpdate>& updates, const std::vector<ParamSpec>& params,
                         std::vector<std::vector<Buffer>>& buffers, std::vector<Stream>& streams) {
  for (size_t d = 0; d < buffers.size(); ++d) {
    for (const ProgramImage::StateUpdate& u : updates)
      if (Status st = streams[d].copy_async(buffers[d][u.arg_param], buffers[d][u.result_param],
                                            params[u.arg_param].bytes);
          !st.ok())
        return st;
    if (Status st = streams[d].synchronize(); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace tessera::run
