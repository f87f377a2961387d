//===- KernelCache.h - the cpu code generator's disk cache ----------------===//
//
// One compiled program is two files in the cache folder:
//   <key>.so       the elf-native shared object;
//   <key>.kernels  a header line, then the kernels' launch descriptions:
//     tessera-cpu-kernels <version> <key> <so bytes> <so xxh64> <body xxh64>
// The header names its own key (an entry renamed or copied over another,
// .so and .kernels together, is caught: it would run another program's
// kernels) and the exact shared object (size and xxHash64 of its bytes,
// LLVM's implementation), so a truncated, edited or swapped .so is caught
// before it is loaded, and the body's checksum catches an edited or cut
// .kernels file.  Both files are read with a size limit (regular files only)
// and written atomically (temporary file, fsync, rename): the .so first,
// then the .kernels that vouches for it.  An entry that fails any check is
// removed with a TESSERA_LOG warning and the caller compiles again.
//
// Thread-compatible: callers serialize (compileForCPU's mutex); several
// processes may share a folder (renames are atomic, a checksum mismatch from
// a concurrent writer only costs a recompile).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CPU_KERNELCACHE_H
#define TESSERA_CPU_KERNELCACHE_H

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/cpu/Compiler.h"

namespace tessera::cpu::cache {

/// Bumped when the .kernels text changes meaning: older entries are dropped.
inline constexpr int kFormatVersion = 3;  // 3: the key in the header
/// A shared object of cpu kernels larger than this is not read back.
inline constexpr uint64_t kMaxSharedObjectBytes = uint64_t{512} << 20;
/// Launch descriptions: a few lines per kernel.
inline constexpr uint64_t kMaxKernelsFileBytes = uint64_t{16} << 20;

/// What identifies one shared object: its size and checksum.
struct ImageId {
  uint64_t bytes = 0;
  uint64_t xxh64 = 0;
  bool operator==(const ImageId &o) const { return bytes == o.bytes && xxh64 == o.xxh64; }
};
ImageId IdOf(const std::string &image);

/// The .kernels file of entry `key`: header + body.
std::string SerializeKernels(const std::vector<KernelInfo> &kernels, const ImageId &so,
                             const std::string &key);
/// Parses and checks a .kernels file; "" on success (the key it names in
/// *key), else why it is bad.
std::string ParseKernels(const std::string &text, std::vector<KernelInfo> *kernels, ImageId *so,
                         std::string *key);

/// Reads the shared object at `path` (bounded) and checks it is `want`.
/// "" on success (the bytes in *image), else why not.
std::string ReadImage(const std::string &path, const ImageId &want, std::string *image);

/// Looks `key` up in `dir`. On a hit fills prog->kernels, ->image and
/// ->so_path and returns true; a bad entry is removed with a warning.
bool Load(const std::string &dir, const std::string &key, CompiledProgram *prog, ImageId *id);

/// Stores a freshly linked shared object (`linkedSo`, a temporary file in
/// `dir`, renamed into place) and its descriptions. "" on success.
std::string Store(const std::string &dir, const std::string &key, const std::string &linkedSo,
                  const std::vector<KernelInfo> &kernels, const ImageId &id);

/// <dir>/<key>.so and <dir>/<key>.kernels.
std::string SharedObjectPath(const std::string &dir, const std::string &key);
std::string KernelsPath(const std::string &dir, const std::string &key);

}  // namespace tessera::cpu::cache

#endif
