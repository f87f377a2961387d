// Helpers for tests that need exact scheduling situations without timing:
// a host-controlled gate (a kernel that waits until the host opens it) and
// kernel shortcuts.  The gate's time limit is a safety net: a runtime that
// waits where it must not makes the test fail instead of hanging.
#ifndef TESSERA_CONFORMANCE_SCHED_UTIL_HPP_
#define TESSERA_CONFORMANCE_SCHED_UTIL_HPP_

#include "cts/cts.hpp"

namespace tessera::cts {

// Two words of host-visible memory: [0] the flag the host sets, and at
// byte kTimedOutOffset the word the gate kernel sets when it gave up
// waiting.  256 bytes apart: buffer arguments at an offset must respect the
// device's storage-buffer offset alignment (Vulkan allows up to 256).
class HostGate {
 public:
  Status Init(const tessera::Device& device) {
    StatusOr<Buffer> b = device.allocate(2 * kTimedOutOffset, TS_BUFFER_HOST_PINNED);
    if (!b.ok()) return b.status();
    buffer_ = *b;
    words_ = static_cast<uint32_t*>(buffer_.host_pointer());
    if (!words_) return Status(StatusCode::kInternal, "pinned buffer without host pointer");
    __atomic_store_n(&words_[0], 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&words_[kTimedOutOffset / 4], 0u, __ATOMIC_RELEASE);
    return Status::Ok();
  }
  // Queues the gate on `s`: work after it on `s` waits for open().  A gate
  // compiled for a fixed group size (SPIR-V) is launched over kSpirvGroups
  // groups that each wait (see kernels/spirv/gate.comp: lavapipe ends one
  // invocation's loops after 65535 iterations); the cpu gate is one group.
  Status Queue(const Stream& s, const Kernel& gate, uint32_t limit_ms = 10000) {
    groups_ = gate.info().required_group_size.x ? kSpirvGroups : 1;
    return s.launch(gate, Dim(groups_), Dim(1),
                    {KernelArg::buffer(buffer_), KernelArg::buffer(buffer_, kTimedOutOffset),
                     KernelArg::scalar(limit_ms)});
  }
  // The same launch through the plugin table (tests of launch fields the
  // C++ API does not expose): fills grid, group size and the three
  // arguments, which point into `raw` and `limit_ms` (kept by the caller).
  void FillLaunch(const Kernel& gate, TsKernel_Launch_Args* a, TsKernelArg raw[3],
                  const uint32_t* limit_ms) {
    groups_ = gate.info().required_group_size.x ? kSpirvGroups : 1;
    for (int i = 0; i < 2; ++i) {
      raw[i] = TsKernelArg{};
      raw[i].kind = TS_KERNEL_ARG_BUFFER;
      raw[i].buffer = buffer_.raw();
      raw[i].offset = i == 0 ? 0 : kTimedOutOffset;
    }
    raw[2] = TsKernelArg{};
    raw[2].kind = TS_KERNEL_ARG_SCALAR;
    raw[2].data = limit_ms;
    raw[2].size = sizeof *limit_ms;
    a->kernel = gate.raw();
    a->grid = Dim(groups_);
    a->group_size = Dim(1);
    a->args = raw;
    a->num_args = 3;
  }
  void open() { __atomic_store_n(&words_[0], 1u, __ATOMIC_RELEASE); }
  // True when the gate gave up waiting (every group of it).
  bool timed_out() const {
    return __atomic_load_n(&words_[kTimedOutOffset / 4], __ATOMIC_ACQUIRE) >= groups_;
  }

 private:
  static constexpr uint64_t kTimedOutOffset = 256;
  static constexpr uint32_t kSpirvGroups = 128;
  uint32_t groups_ = 1;
  Buffer buffer_;
  uint32_t* words_ = nullptr;
};

// Requires what the gate needs: kernels and host-pinned buffers.
#define CTS_REQUIRE_GATE()                                              \
  do {                                                                  \
    CTS_REQUIRE_KERNELS();                                              \
    CTS_REQUIRE(info().supports(TS_BUFFER_HOST_PINNED),                 \
                "buffer_kinds.host_pinned (host-controlled gates)");    \
  } while (0)

}  // namespace tessera::cts

#endif  // TESSERA_CONFORMANCE_SCHED_UTIL_HPP_
