//===- KernelCache.cpp - the cpu code generator's disk cache --------------===//
#include "KernelCache.h"

#include <cstdio>

#include "file_io.hpp"
#include "plugin_log.hpp"
#include "tessera/plugin.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using llvm::StringRef;
namespace fileio = tessera::plugin_support;

namespace tessera::cpu::cache {
namespace {

constexpr const char *kMagic = "tessera-cpu-kernels";
// Far above what the code generator emits; they bound the work a corrupt
// file can cause (an edited count once made the reader loop for hours).
constexpr uint64_t kMaxArgs = 4096;
constexpr uint64_t kMaxRank = 64;

std::string Hex(uint64_t v) { return llvm::utohexstr(v, /*LowerCase=*/true, /*Width=*/16); }

template <class T>
bool Num(StringRef word, T *out) {
  unsigned long long v = 0;
  long long s = 0;
  if constexpr (std::is_signed_v<T>) {
    if (word.getAsInteger(10, s)) return false;
    *out = static_cast<T>(s);
    return static_cast<long long>(*out) == s;
  } else {
    if (word.getAsInteger(10, v)) return false;
    *out = static_cast<T>(v);
    return static_cast<unsigned long long>(*out) == v;
  }
}

std::string Body(const std::vector<KernelInfo> &ks) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (const KernelInfo &k : ks) {
    os << "kernel " << k.name << " " << k.graph << " " << k.shared_memory;
    for (uint32_t v : k.grid) os << " " << v;
    for (uint32_t v : k.group_size) os << " " << v;
    os << " " << k.args.size() << "\n";
    for (const KernelArgInfo &a : k.args) {
      // The second word: bit 0 output, the bits above the access (TS_PARAM_*).
      os << "arg " << a.buffer << " " << (static_cast<uint64_t>(a.output) | (uint64_t{a.access} << 1))
         << " " << a.dtype << " " << a.shape.size();
      for (int64_t d : a.shape) os << " " << d;
      os << "\n";
    }
  }
  return os.str();
}

std::string ParseBody(StringRef text, std::vector<KernelInfo> &ks) {
  llvm::SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  uint64_t expectedArgs = 0;
  for (size_t n = 0; n < lines.size(); ++n) {
    llvm::SmallVector<StringRef> w;
    lines[n].split(w, ' ', -1, /*KeepEmpty=*/false);
    const std::string where = "line " + std::to_string(n + 2);
    if (w.size() == 11 && w[0] == "kernel") {
      if (!ks.empty() && ks.back().args.size() != expectedArgs)
        return where + ": the kernel before it lacks arguments";
      KernelInfo k;
      k.name = w[1].str();
      int graph = 0;
      bool ok = Num(w[2], &graph) && Num(w[3], &k.shared_memory) && Num(w[10], &expectedArgs);
      for (int i = 0; i < 3; ++i) ok = ok && Num(w[4 + i], &k.grid[i]) && Num(w[7 + i], &k.group_size[i]);
      if (!ok || expectedArgs > kMaxArgs) return where + ": malformed kernel line";
      k.graph = graph != 0;
      ks.push_back(std::move(k));
    } else if (w.size() >= 5 && w[0] == "arg" && !ks.empty()) {
      KernelArgInfo a;
      int buffer = 0;
      uint32_t output = 0;
      uint64_t rank = 0;
      if (!Num(w[1], &buffer) || !Num(w[2], &output) || !Num(w[4], &rank) || rank > kMaxRank ||
          w.size() != 5 + rank || ks.back().args.size() >= expectedArgs)
        return where + ": malformed argument line";
      a.buffer = buffer != 0;
      a.output = (output & 1) != 0;
      a.access = (output >> 1) & (TS_PARAM_READ | TS_PARAM_WRITE | TS_PARAM_ATOMIC | TS_PARAM_SCRATCH);
      a.dtype = w[3].str();
      for (uint64_t i = 0; i < rank; ++i) {
        int64_t d = 0;
        if (!Num(w[5 + i], &d)) return where + ": malformed argument line";
        a.shape.push_back(d);
      }
      ks.back().args.push_back(std::move(a));
    } else {
      return where + ": not a kernel or argument line";
    }
  }
  if (ks.empty()) return "no kernel";
  if (ks.back().args.size() != expectedArgs) return "the last kernel lacks arguments";
  return "";
}

void Drop(const std::string &dir, const std::string &key, const std::string &why) {
  fileio::LogWarning("cpu: the cached kernels " + SharedObjectPath(dir, key) + " are unusable (" +
                     why + "): dropped, compiling again");
  llvm::sys::fs::remove(KernelsPath(dir, key));
  llvm::sys::fs::remove(SharedObjectPath(dir, key));
}

}  // namespace

ImageId IdOf(const std::string &image) { return {image.size(), llvm::xxHash64(StringRef(image))}; }

std::string SharedObjectPath(const std::string &dir, const std::string &key) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, key + ".so");
  return std::string(p);
}

std::string KernelsPath(const std::string &dir, const std::string &key) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, key + ".kernels");
  return std::string(p);
}

std::string SerializeKernels(const std::vector<KernelInfo> &kernels, const ImageId &so,
                             const std::string &key) {
  const std::string body = Body(kernels);
  return std::string(kMagic) + " " + std::to_string(kFormatVersion) + " " + key + " " +
         std::to_string(so.bytes) +
         " " + Hex(so.xxh64) + " " + Hex(llvm::xxHash64(StringRef(body))) + "\n" + body;
}

std::string ParseKernels(const std::string &text, std::vector<KernelInfo> *kernels, ImageId *so,
                         std::string *key) {
  kernels->clear();
  StringRef all(text);
  auto [header, body] = all.split('\n');
  llvm::SmallVector<StringRef> w;
  header.split(w, ' ', -1, /*KeepEmpty=*/false);
  if (w.empty() || w[0] != kMagic) return "no tessera-cpu-kernels header";
  int version = 0;
  if (w.size() < 2 || !Num(w[1], &version) || version != kFormatVersion)
    return "format version " + (w.size() < 2 ? std::string("?") : w[1].str()) +
           ", this build writes " + std::to_string(kFormatVersion);
  if (w.size() != 6) return "malformed header";
  *key = w[2].str();
  uint64_t bodyHash = 0;
  if (!Num(w[3], &so->bytes) || w[4].getAsInteger(16, so->xxh64) || w[5].getAsInteger(16, bodyHash))
    return "malformed header";
  if (llvm::xxHash64(body) != bodyHash) return "the launch descriptions do not match their checksum";
  return ParseBody(body, *kernels);
}

std::string ReadImage(const std::string &path, const ImageId &want, std::string *image) {
  fileio::FileReadResult r = fileio::ReadBoundedFile(path, kMaxSharedObjectBytes, image);
  if (!r.ok()) return r.message;
  const ImageId got = IdOf(*image);
  if (!(got == want)) {
    image->clear();
    return "'" + path + "' is not the shared object its .kernels file names (" +
           std::to_string(got.bytes) + " bytes, xxh64 " + Hex(got.xxh64) + "; expected " +
           std::to_string(want.bytes) + " bytes, xxh64 " + Hex(want.xxh64) + ")";
  }
  return "";
}

bool Load(const std::string &dir, const std::string &key, CompiledProgram *prog, ImageId *id) {
  const std::string metaPath = KernelsPath(dir, key), soPath = SharedObjectPath(dir, key);
  std::string text;
  fileio::FileReadResult r = fileio::ReadBoundedFile(metaPath, kMaxKernelsFileBytes, &text);
  if (r.status == fileio::FileReadStatus::kCannotOpen && !llvm::sys::fs::exists(metaPath))
    return false;  // not cached yet: the common miss, no warning
  if (!r.ok()) {
    Drop(dir, key, r.message);
    return false;
  }
  std::vector<KernelInfo> kernels;
  std::string named;
  if (std::string why = ParseKernels(text, &kernels, id, &named); !why.empty()) {
    Drop(dir, key, metaPath + ": " + why);
    return false;
  }
  // A well-formed entry of another key (renamed, or copied over this one
  // with its .so) holds another program's kernels.
  if (named != key) {
    Drop(dir, key, metaPath + ": it was written for the entry '" + named + "'");
    return false;
  }
  std::string image;
  if (std::string why = ReadImage(soPath, *id, &image); !why.empty()) {
    Drop(dir, key, why);
    return false;
  }
  prog->kernels = std::move(kernels);
  prog->image = std::move(image);
  prog->so_path = soPath;
  prog->key = key;
  return true;
}

std::string Store(const std::string &dir, const std::string &key, const std::string &linkedSo,
                  const std::vector<KernelInfo> &kernels, const ImageId &id) {
  const std::string soPath = SharedObjectPath(dir, key);
  if (std::string why = fileio::SyncFile(linkedSo); !why.empty()) return why;
  if (std::error_code ec = llvm::sys::fs::rename(linkedSo, soPath))
    return "cannot rename " + linkedSo + " to " + soPath + ": " + ec.message();
  const std::string text = SerializeKernels(kernels, id, key);
  return fileio::WriteFileAtomically(KernelsPath(dir, key), text.data(), text.size());
}

}  // namespace tessera::cpu::cache
