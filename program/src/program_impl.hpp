// What a Program holds on its devices (shared by program.cpp and
// sharding.cpp).  Immutable after Program::Create except the buffers' contents.
#ifndef TESSERA_PROGRAM_PROGRAM_IMPL_HPP_
#define TESSERA_PROGRAM_PROGRAM_IMPL_HPP_

#include <map>
#include <vector>

#include "tessera/program.hpp"

namespace tessera {
namespace detail {

struct DeviceState {
  Device device;
  std::vector<Executable> executables;
  std::vector<Kernel> kernels;     // per step (launches; empty Kernel otherwise)
  std::vector<Buffer> values;      // per plan value (params' values left empty)
};

struct ProgramImpl {
  ProgramImage image;
  std::vector<Device> devices;  // this process's: mesh positions first_device, ...
  size_t first_device = 0;
  std::shared_ptr<ProcessGroup> processes;  // null: every device is local
  std::vector<DeviceState> states;
  // SPMD: axes -> first device of the group -> communicator.
  std::map<std::vector<int>, std::map<int64_t, Communicator>> comms;
  std::vector<int32_t> value_param;  // per value: the param bound to it, or -1
  // Per step: a launch whose kernel arguments are the program's arguments,
  // in order (a Tile IR kernel run as a program): Run passes the caller's
  // list as it is, building nothing.
  std::vector<bool> passes_args_through;
};

}  // namespace detail
}  // namespace tessera

#endif
