// The OpenCL built-ins Debian 12's PoCL 3.1 lacks, linked into the
// level_zero kernels that spirv_kernels_on_pocl.py runs there:
//
// - the subgroup built-ins, for subgroups of one work-item (cl_khr_subgroups
//   is not among PoCL's extensions; a subgroup size of 1 is one every
//   OpenCL device may report). The cpu plugin runs its kernels with
//   one-lane subgroups too (docs/ir.md "Work-item loops"), so the two runs
//   compute alike. What this leaves unchecked: the multi-lane paths of
//   shuffles and subgroup reductions (the vulkan plugin's lavapipe runs
//   them, with 8-lane subgroups and more);
// - mem_fence (OpenCL 1.2; the translation of OpMemoryBarrier, which the
//   conformance suite's hand-written module uses), as a sequentially
//   consistent fence: on a CPU every address space is the same memory.
//
// Built by clang-15 for spir64 (PoCL's LLVM), with the Itanium mangling of
// overloadable functions that the Khronos translator's calls use.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define OVERLOAD __attribute__((overloadable))

size_t OVERLOAD get_local_id(uint dim);
size_t OVERLOAD get_local_size(uint dim);

uint OVERLOAD get_sub_group_size(void) { return 1; }
uint OVERLOAD get_max_sub_group_size(void) { return 1; }
uint OVERLOAD get_sub_group_local_id(void) { return 0; }
uint OVERLOAD get_enqueued_num_sub_groups(void) {
  return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
}
uint OVERLOAD get_num_sub_groups(void) {
  return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
}
// Each work-item is its own subgroup: the subgroup id is the linear local id.
uint OVERLOAD get_sub_group_id(void) {
  return (uint)(get_local_id(0) +
                get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
}
void OVERLOAD sub_group_barrier(uint flags) {}

void OVERLOAD mem_fence(uint flags) { __c11_atomic_thread_fence(__ATOMIC_SEQ_CST); }
void OVERLOAD read_mem_fence(uint flags) { __c11_atomic_thread_fence(__ATOMIC_SEQ_CST); }
void OVERLOAD write_mem_fence(uint flags) { __c11_atomic_thread_fence(__ATOMIC_SEQ_CST); }

// A reduction or scan over one lane is its value; a shuffle reads lane 0,
// the caller's own (the Tile IR lowering guards reads past the subgroup).
#define ONE_LANE(T)                                                          \
  T OVERLOAD sub_group_reduce_add(T x) { return x; }                         \
  T OVERLOAD sub_group_reduce_min(T x) { return x; }                         \
  T OVERLOAD sub_group_reduce_max(T x) { return x; }                         \
  T OVERLOAD sub_group_non_uniform_reduce_add(T x) { return x; }             \
  T OVERLOAD sub_group_non_uniform_reduce_min(T x) { return x; }             \
  T OVERLOAD sub_group_non_uniform_reduce_max(T x) { return x; }             \
  T OVERLOAD sub_group_non_uniform_reduce_mul(T x) { return x; }             \
  T OVERLOAD sub_group_scan_inclusive_add(T x) { return x; }                 \
  T OVERLOAD sub_group_broadcast(T x, uint lane) { return x; }               \
  T OVERLOAD sub_group_non_uniform_broadcast(T x, uint lane) { return x; }   \
  T OVERLOAD sub_group_broadcast_first(T x) { return x; }                    \
  T OVERLOAD sub_group_shuffle(T x, uint lane) { return x; }                 \
  T OVERLOAD sub_group_shuffle_xor(T x, uint mask) { return x; }             \
  T OVERLOAD sub_group_shuffle_down(T x, uint delta) { return x; }           \
  T OVERLOAD sub_group_shuffle_up(T x, uint delta) { return x; }

ONE_LANE(char)
ONE_LANE(uchar)
ONE_LANE(short)
ONE_LANE(ushort)
ONE_LANE(int)
ONE_LANE(uint)
ONE_LANE(long)
ONE_LANE(ulong)
ONE_LANE(half)
ONE_LANE(float)
ONE_LANE(double)
