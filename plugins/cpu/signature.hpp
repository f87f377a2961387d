// A kernel's exported argument list (tessera_signature_<name>,
// tessera/cpu_kernel.h) and the launch checks made against it.
// Thread-safety: a KernelSignature is immutable once parsed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::cpu {

struct KernelSignature {
  struct Arg {
    bool buffer = false;
    uint64_t bytes = 0;  // scalar: its size; buffer: bytes accessed (0: any)
  };
  std::vector<Arg> args;
  bool has_grid = false;
  uint32_t grid[3] = {1, 1, 1};
};

// Parses the signature text (at most TESSERA_CPU_SIGNATURE_MAX_BYTES);
// "" on success, else what is wrong with it.
std::string ParseKernelSignature(const char* text, KernelSignature* out);

// "3 arguments (s4 b262144 b262144)": for messages.
std::string DescribeSignature(const KernelSignature& sig);

}  // namespace tessera::cpu
