//===- Compiler.h - Tessera IR -> cpu plugin executable -------------------===//
//
// Compiles a module (Graph IR program or Tile IR kernels) into a native
// shared object in the cpu plugin's "elf-native" format.  Results are cached
// by a hash of the IR text and the options, in memory and on disk under
// $TESSERA_CACHE_DIR (default ~/.cache/tessera).  Thread-compatible: one
// compile at a time per process (the in-memory cache is locked).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_CPU_COMPILER_H
#define TESSERA_TARGET_CPU_COMPILER_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "tessera/Target/CPU/Pipeline.h"

namespace tessera::cpu {

/// One kernel argument as the launcher must pass it.
struct KernelArgInfo {
  bool buffer = true;              // memref (else a scalar by value)
  std::string dtype;               // "f32", "f16", "bf16", "i32", "i8", "i64", ...
  std::vector<int64_t> shape;      // buffers: static shape (elements)
  bool output = false;             // written by the kernel (Graph IR results)
};

struct KernelInfo {
  std::string name;                // kernel tessera_kernel_<name>
  std::vector<KernelArgInfo> args;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> group_size{1, 1, 1};
  bool graph = false;              // compiled from Graph IR
};

struct CompileOptions {
  std::string cpu;                 // empty: the host CPU (-mcpu=native)
  unsigned opt_level = 3;
  std::string cache_dir;           // empty: $TESSERA_CACHE_DIR or ~/.cache/tessera
  bool use_cache = true;
  GraphPipelineOptions tiles;
};

struct CompiledProgram {
  std::string so_path;             // load with Device::load_executable("elf-native", ...)
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
