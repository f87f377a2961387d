/*
 * Executable format "elf-x86_64" / "elf-native" of the CPU plugin.  C99.
 *
 * An executable is a native shared object.  Each kernel is an exported
 * function with C linkage:
 *
 *     TESSERA_CPU_KERNEL(saxpy) { ... uses ctx ... }
 *
 * which expands to `void tessera_kernel_saxpy(const TsCpuLaunchContext* ctx)`.
 * Executable_GetKernel("saxpy") looks up `tessera_kernel_saxpy`.
 *
 * One call runs ONE tile group (ctx->group_id).  The kernel iterates over its
 * own lanes (0 .. group_size-1): code generated from Tile IR splits the body
 * at each barrier into regions and wraps each region in a lane loop, keeping
 * lane-private values that cross a barrier in arrays (PoCL's work-item loops).
 * Groups run in parallel on the plugin's worker threads; one group always runs
 * on one thread from start to end.
 *
 * Optionally, a kernel's argument list, which Kernel_Launch then checks (a
 * wrong list is an INVALID_ARGUMENT error naming the argument, not a worker
 * thread reading a scalar as a pointer):
 *
 *     TESSERA_CPU_KERNEL_SIGNATURE(saxpy, "s4 b262144 b262144 grid=64,1,1");
 *
 * exports `const char tessera_signature_saxpy[]`: space-separated tokens,
 * one per argument in order, then an optional grid:
 *     s<N>          a scalar of N bytes (TsKernelArg::size must be N)
 *     b<N>          a buffer of which the kernel accesses N bytes from the
 *                   argument's offset (b0: any length)
 *     grid=X,Y,Z    the kernel's buffers are sized for this grid: a launch
 *                   over more groups in any dimension is refused
 * The cpu code generator exports one for every kernel it compiles; a kernel
 * without one is launched unchecked.  At most TESSERA_CPU_SIGNATURE_MAX_BYTES
 * bytes are read.
 */
#ifndef TESSERA_CPU_KERNEL_H_
#define TESSERA_CPU_KERNEL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_CPU_KERNEL_ABI_VERSION 1
#define TESSERA_CPU_KERNEL_PREFIX "tessera_kernel_"
#define TESSERA_CPU_SIGNATURE_PREFIX "tessera_signature_"
#define TESSERA_CPU_SIGNATURE_MAX_BYTES 65536

typedef struct TsCpuLaunchContext {
  size_t struct_size;
  uint32_t grid[3];       /* tile groups in x, y, z */
  uint32_t group_size[3]; /* lanes per group in x, y, z */
  uint32_t group_id[3];   /* this group */
  void* shared_memory;    /* per-group scratch, 64-byte aligned */
  uint64_t shared_memory_size;
  /* One entry per launch argument: a buffer argument is the address of the
   * buffer's byte at its offset; a scalar argument is a pointer to a copy of
   * its bytes. */
  void* const* args;
  uint32_t num_args;
  uint32_t device_ordinal;
} TsCpuLaunchContext;

typedef void (*TsCpuKernelFn)(const TsCpuLaunchContext* ctx);

#if defined(__GNUC__)
#define TESSERA_CPU_KERNEL_EXPORT __attribute__((visibility("default")))
#else
#define TESSERA_CPU_KERNEL_EXPORT
#endif

#ifdef __cplusplus
#define TESSERA_CPU_KERNEL_LINKAGE extern "C"
#else
#define TESSERA_CPU_KERNEL_LINKAGE
#endif

#define TESSERA_CPU_KERNEL(name)                                   \
  TESSERA_CPU_KERNEL_LINKAGE TESSERA_CPU_KERNEL_EXPORT void        \
      tessera_kernel_##name(const TsCpuLaunchContext* ctx)

#define TESSERA_CPU_KERNEL_SIGNATURE(name, text)                         \
  TESSERA_CPU_KERNEL_LINKAGE TESSERA_CPU_KERNEL_EXPORT const char        \
      tessera_signature_##name[] = text

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CPU_KERNEL_H_ */
