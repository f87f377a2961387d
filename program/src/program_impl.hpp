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
  std::vector<Buffer> values;      // per plan value (params' and views' left empty)
  // Plans with steps on the communication stream (PlanStep::stream 1):
  // that stream, and the events that order the two (re-recorded each run).
  Stream side_stream;
  std::vector<Event> step_events;  // per step that another stream waits for
  Event start, join;               // the caller's stream -> side; side -> caller's
};

// A step's dependencies on the other stream, and whether a later step of
// the other stream waits for it (Program::Create works them out from the
// buffers the steps read and write; views count as their value's buffer).
struct StepOrder {
  std::vector<uint32_t> waits;  // earlier steps on the other stream
  bool recorded = false;        // an event follows it
};

// The value a view resolves to and the byte offset into it; false when the
// chain of views leaves the image or loops.
bool ResolveView(const ProgramImage& im, uint32_t v, uint32_t* root, uint64_t* offset);

struct ProgramImpl {
  ProgramImage image;
  std::vector<Device> devices;  // this process's: mesh positions first_device, ...
  size_t first_device = 0;
  std::shared_ptr<ProcessGroup> processes;  // null: every device is local
  std::vector<DeviceState> states;
  // SPMD: axes -> first device of the group -> communicator.
  std::map<std::vector<int>, std::map<int64_t, Communicator>> comms;
  std::vector<int32_t> value_param;  // per value: the param bound to it, or -1
  // Per value: the value whose buffer holds it (itself unless a view) and
  // the byte offset there.
  std::vector<uint32_t> value_root;
  std::vector<uint64_t> value_offset;
  // Per step: a launch whose kernel arguments are the program's arguments,
  // in order (a Tile IR kernel run as a program): Run passes the caller's
  // list as it is, building nothing.  Bytes, not vector<bool>: read per launch.
  std::vector<uint8_t> passes_args_through;
  // Per step; empty when every step is on the caller's stream.
  std::vector<StepOrder> order;
  // One device, every step a launch on the caller's stream: Run's fast path
  // (ArgsUsable, then the launches) applies.
  bool launches_only = false;
  // ... and a single launch that passes the caller's arguments through (a
  // Tile IR kernel): the fast path is one Stream::launch.
  bool single_passthrough = false;
  // What the fast path checks per parameter, flat (a ParamSpec carries its
  // name, type and shape: a wide stride to walk per launch): the bytes a
  // buffer must hold after its offset, or a scalar's size.  The single
  // pass-through launch hands them to Stream::launch, which checks them
  // while it converts the arguments.
  std::vector<KernelArgRequirement> arg_needs;
};

}  // namespace detail
}  // namespace tessera

#endif
