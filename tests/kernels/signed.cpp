// Kernels that export their signature (tessera/cpu_kernel.h), as the cpu
// code generator's do, for the launch-check tests (test_kernel_signature.cpp).
#include <cstdint>

#include "tessera/cpu_kernel.h"

// scale64(float* data, float factor): data[0..63] *= factor over 4 groups of
// 16 lanes, with no bounds check (it trusts its buffer and grid, like
// generated code): the signature is what keeps a bad launch off the memory.
TESSERA_CPU_KERNEL_SIGNATURE(scale64, "b256 s4 grid=4,1,1");
TESSERA_CPU_KERNEL(scale64) {
  float* data = static_cast<float*>(ctx->args[0]);
  const float factor = *static_cast<const float*>(ctx->args[1]);
  for (uint32_t lane = 0; lane < 16; ++lane) data[ctx->group_id[0] * 16 + lane] *= factor;
}

// A signature the plugin must refuse at Executable_GetKernel.
TESSERA_CPU_KERNEL_SIGNATURE(badly_signed, "b256 q7");
TESSERA_CPU_KERNEL(badly_signed) { (void)ctx; }
