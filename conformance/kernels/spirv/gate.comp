#version 450
// gate(uint32* flag, uint32* timed_out, uint32 limit_ms): waits until the
// host sets flag[0] != 0 (a host-visible buffer).  Launched over
// HostGate::kSpirvGroups groups (sched_util.hpp): every group waits, and a
// group that gives up adds 1 to timed_out[0]; the gate fell through when all
// of them did.
//
// Why groups, and 64 checks per iteration: llvmpipe (lavapipe) ends the
// loops of one invocation after 65535 iterations in total (gallivm's
// LP_MAX_TGSI_LOOP_ITERATIONS), whatever their bounds say, so a single
// spinning invocation falls through after a few milliseconds there (the
// gate used to, silently).  Each group now holds about 0.1 s there, and
// groups that start after the gate opened return after one iteration.  A GPU
// spins up to limit_ms in every group, in parallel.
layout(local_size_x = 1) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) coherent buffer Flag { uint flag[]; };
layout(set = 0, binding = 1) coherent buffer TimedOut { uint timed_out[]; };
layout(push_constant) uniform Args { uint limit_ms; } args;
#define CHECK if (atomicOr(flag[0], 0u) != 0u) open = true;
#define CHECK4 CHECK CHECK CHECK CHECK
#define CHECK16 CHECK4 CHECK4 CHECK4 CHECK4
void main() {
  uint64_t limit = uint64_t(args.limit_ms) * (kSpinPerMs / 64u);
  bool open = false;
  for (uint64_t it = 0; !open && it < limit; ++it) {
    CHECK16 CHECK16 CHECK16 CHECK16
  }
  if (!open && atomicOr(flag[0], 0u) == 0u) atomicAdd(timed_out[0], 1u);
}
