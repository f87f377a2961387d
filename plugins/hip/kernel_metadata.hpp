// The kernels' argument layout recorded in an AMDGPU code object: the
// NT_AMDGPU_METADATA note (a MessagePack map, "amdhsa.kernels") that the
// HIP runtime itself reads to place kernel arguments. Executable_GetKernel
// reports it (args_known) and Kernel_Launch checks a launch's arguments
// against it, so a wrong argument list is an error naming the argument
// instead of a kernel reading garbage. Pure functions over bytes that
// check_code_object has accepted; every read is bounded by the note
// (hip_plugin_test checks them without an AMD GPU, on real code objects).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::hip {

// One explicit kernel argument (the runtime's hidden_* arguments are not
// listed: the launch does not pass them).
struct KernelArgMetadata {
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string value_kind;  // "global_buffer", "by_value", ...
  bool is_buffer() const { return value_kind == "global_buffer" || value_kind == "dynamic_shared_pointer"; }
};

struct KernelMetadata {
  std::string name;
  std::vector<KernelArgMetadata> args;
  uint64_t kernarg_segment_size = 0;
  uint64_t max_flat_workgroup_size = 0;  // 0: not recorded
  uint64_t group_segment_fixed_size = 0;
};

// The kernels of the code object in `data` (already accepted by
// check_code_object). "" and `out` filled (empty when the object has no
// metadata note), or what is malformed.
std::string read_kernel_metadata(const void* data, size_t size, std::vector<KernelMetadata>* out);

// A launch's arguments (already checked one by one: kinds valid, scalars
// with data) against the kernel's metadata: the count, each one's kind
// (buffer or value) and each scalar's size. "" or what differs.
std::string check_launch_args(const KernelMetadata& m, const TsKernelArg* args, size_t n);

// "" when `msgpack` (a NT_AMDGPU_METADATA descriptor) decodes to kernels,
// else what is wrong; exposed for the tests and the fuzzer.
std::string decode_kernel_metadata(const unsigned char* msgpack, size_t size, std::vector<KernelMetadata>* out);

}  // namespace tessera::hip
