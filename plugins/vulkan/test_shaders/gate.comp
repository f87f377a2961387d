#version 450
// gate(uint* words, uint iterations), launched over G groups of one lane:
// every group spins until the host sets words[0] != 0 (a host-visible
// buffer), then adds 1 to words[1] (done: words[1] == G).  A group that
// gives up after `iterations` rounds of 64 checks without seeing the flag
// adds 1 to words[2]: the gate fell through only when words[2] == G.  A
// safety net, not a timing.
//
// The shape is for lavapipe: llvmpipe ends the loops of one invocation
// after 65535 iterations in total (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS),
// whatever their bounds say, so a plain spin loop falls through after a few
// milliseconds there.  64 checks per iteration make a group last about a
// quarter of a second, and G groups (run two at a time there) multiply that; groups that
// start after the gate opened return after their first round.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) coherent buffer Words { uint words[]; };
layout(push_constant) uniform Args { uint iterations; } args;
#define CHECK if (atomicOr(words[0], 0u) != 0u) open = true;
#define CHECK4 CHECK CHECK CHECK CHECK
#define CHECK16 CHECK4 CHECK4 CHECK4 CHECK4
#define CHECK64 CHECK16 CHECK16 CHECK16 CHECK16
void main() {
  bool open = false;
  for (uint it = 0u; !open && it < args.iterations; ++it) {
    CHECK64
  }
  if (!open) atomicAdd(words[2], 1u);
  atomicAdd(words[1], 1u);
}
