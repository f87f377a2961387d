// Element types and reductions on host memory, for plugins whose
// collectives are host-staged (cpu, vulkan): every TsDataType, in one place.
//
// Semantics (what docs/abi.md promises for Communicator_Collective):
// - integers wrap (two's complement), like the hardware's integer adds;
// - F32/F64 combine in their own type;
// - F16/BF16 combine in float and are rounded to nearest even once, at the
//   end, so a reduction over many ranks loses no more than one rounding;
// - max/min are the usual comparisons (a NaN operand may or may not win).
// With `deterministic`, ranks combine in a fixed pairwise tree
// ((r0 op r1) op (r2 op r3)) ..., so the bits never depend on arrival order;
// otherwise in the `order` given (the order the ranks arrived in).
//
// Thread-safety: stateless; callers own the buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::plugin_support {

// Bytes per element; 0 for a value outside TsDataType.
size_t dtype_size(TsDataType t);
// "F32", "BF16", ...; "unknown" outside the enum.
const char* dtype_name(TsDataType t);

// out[i] = in[r0][i] op in[r1][i] op ... for i < n.  `in` has one pointer
// per rank; `order` lists the ranks (used when !deterministic).  `out` may
// alias one of the inputs.
void host_reduce(TsDataType dtype, TsReduceOp op, const std::vector<const void*>& in,
                 const std::vector<uint32_t>& order, bool deterministic, uint64_t n, void* out);

// The host-staged combine of one collective (plugins without a collective
// library: vulkan, cuda without NCCL).  `in` holds each rank's send part,
// copied to the host (broadcast: in[root] only; it is moved from); the
// result is what the ranks receive: the whole of it for all_reduce,
// broadcast and all_gather, rank r's part at r * (send_elems / ranks)
// elements for reduce_scatter.  Reductions take the fixed tree
// (deterministic), whatever the caller asked.
std::vector<uint8_t> host_collective(TsCollectiveOp op, TsDataType dtype, TsReduceOp reduce_op,
                                     uint32_t root, std::vector<std::vector<uint8_t>>& in,
                                     uint64_t send_elems);

// IEEE binary16 and bfloat16 <-> float (round to nearest even; NaN stays
// NaN, overflow goes to infinity).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

}  // namespace tessera::plugin_support
