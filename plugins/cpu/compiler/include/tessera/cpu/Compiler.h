//===- Compiler.h - Tessera IR -> cpu plugin executable -------------------===//
//
// Compiles a module (Schedule IR functions, Graph IR programs or Tile IR
// kernels) into a native shared object in the cpu plugin's "elf-native"
// format.  Results are cached by a hash of the IR text and the options, in
// memory and on disk under CompileOptions::cache_dir (the core passes
// $TESSERA_CACHE_DIR/cpu; empty: a temporary folder, no disk cache).
// Thread-compatible: one compile at a time per process (a mutex).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CPU_COMPILER_H
#define TESSERA_CPU_COMPILER_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "tessera/cpu/Pipeline.h"

namespace tessera::cpu {

/// One kernel argument as the launcher must pass it.
struct KernelArgInfo {
  bool buffer = true;              // memref (else a scalar by value)
  std::string dtype;               // "f32", "f16", "bf16", "i32", "i8", "i64", ...
  std::vector<int64_t> shape;      // buffers: static shape (elements)
  bool output = false;             // written by the kernel (Graph IR results)
  uint32_t access = 0;             // buffers: TS_PARAM_* of the body (0: unknown)
};

struct KernelInfo {
  std::string name;                // kernel tessera_kernel_<name>
  std::vector<KernelArgInfo> args;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> group_size{1, 1, 1};
  uint64_t shared_memory = 0;      // bytes of TsCpuLaunchContext::shared_memory it uses
  bool graph = false;              // compiled from Graph IR
};

struct CompileOptions {
  std::string cpu;                 // empty: the host CPU (-mcpu=native)
  unsigned opt_level = 3;
  std::string cache_dir;           // empty: no disk cache
  bool use_cache = true;
  GraphPipelineOptions tiles;
  /// "" for the shared object; "llvm" (LLVM IR after -O) or "asm" (the
  /// target's assembly) for text in CompiledProgram::emitted.  Never cached.
  std::string emit;
  /// Set by compileForCPU when it failed for want of a system resource
  /// (memory, disk space, threads) while writing or linking the kernels,
  /// not because the module cannot be lowered: the caller reports that as
  /// exhaustion, not as an unsupported program.
  bool *resource_failure = nullptr;
};

struct CompiledProgram {
  std::string so_path;             // in the cache folder; empty without a disk cache
  std::string emitted;             // CompileOptions::emit's text
  std::string image;               // the shared object's bytes (not when emitting)
  std::vector<KernelInfo> kernels;
  std::string key;                 // cache key (hex)
  bool cache_hit = false;
  double compile_ms = 0;
};

/// Compiles `module` (not modified). Diagnostics go to the context's handler.
mlir::FailureOr<CompiledProgram> compileForCPU(mlir::ModuleOp module,
                                               const CompileOptions &options);

}  // namespace tessera::cpu

#endif
