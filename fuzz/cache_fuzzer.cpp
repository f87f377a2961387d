// The compiled-program and cache file readers, one per input selected by
// its first byte (the rest is the file):
//   byte & 3 == 0  a kernel archive (tessera/kernel_archive.hpp,
//                  ReadKernelArchive: "archive:<format>" executables)
//            == 1  the cpu plugin's .kernels cache file
//                  (plugins/cpu/compiler/lib/KernelCache.cpp, ParseKernels)
//            == 2  a compiled program / program cache entry
//                  (ProgramImage::Deserialize, program/src/program_image.cpp)
//            == 3  an autotune cache entry (.tat, ReadAutotuneEntry,
//                  program/compiler/src/autotune.cpp), read from a file
//   byte & 4       give the body the checksum its format wants (the
//                  xxh64 of a .kernels body, the FNV-1a trailer of a program
//                  image, the checksum line of a .tat), so that mutations
//                  reach the parsing behind the check.
// What a reader accepts must survive its writer: written again and read
// again it gives the same thing.
#include <cstring>
#include <string>
#include <vector>

#include "KernelCache.h"
#include "autotune_cache.hpp"
#include "fuzz_util.hpp"
#include "llvm/Support/xxhash.h"
#include "tessera/ir_version.h"
#include "tessera/kernel_archive.hpp"
#include "tessera/program.hpp"

using namespace tessera;

namespace {

void Archive(const std::string& bytes) {
  std::vector<ArchiveEntry> entries;
  if (!ReadKernelArchive(bytes.data(), bytes.size(), &entries).empty()) return;
  const std::string again = WriteKernelArchive(entries);
  std::vector<ArchiveEntry> reread;
  if (std::string why = ReadKernelArchive(again.data(), again.size(), &reread); !why.empty())
    fuzz::Fail("a written kernel archive does not read back: " + why);
  if (reread.size() != entries.size()) fuzz::Fail("kernel archive entry count changed");
  for (size_t i = 0; i < entries.size(); ++i)
    if (reread[i].name != entries[i].name || reread[i].data != entries[i].data)
      fuzz::Fail("kernel archive entry " + std::to_string(i) + " changed");
}

void Kernels(std::string text, bool fix) {
  namespace cc = tessera::cpu::cache;
  if (fix) {
    // The header the writer puts on a body, for whatever body follows the
    // first line.
    const size_t nl = text.find('\n');
    const std::string body = nl == std::string::npos ? "" : text.substr(nl + 1);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(llvm::xxHash64(body)));
    text = "tessera-cpu-kernels " + std::to_string(cc::kFormatVersion) + " k 16 0123456789abcdef " + hex +
           "\n" + body;
  }
  std::vector<tessera::cpu::KernelInfo> kernels;
  cc::ImageId id;
  std::string key;
  if (!cc::ParseKernels(text, &kernels, &id, &key).empty()) return;
  const std::string again = cc::SerializeKernels(kernels, id, key);
  std::vector<tessera::cpu::KernelInfo> reread;
  cc::ImageId id2;
  std::string key2;
  if (std::string why = cc::ParseKernels(again, &reread, &id2, &key2); !why.empty())
    fuzz::Fail("a written .kernels file does not read back: " + why + "\n" + again);
  if (key2 != key) fuzz::Fail(".kernels round trip changed the key");
  if (cc::SerializeKernels(reread, id2, key2) != again) fuzz::Fail(".kernels round trip changed the file");
}

void ProgramFile(std::string bytes, bool fix) {
  if (fix && bytes.size() >= 8) {
    const uint64_t sum = fuzz::Fnv1a64(bytes.data(), bytes.size() - 8);
    std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
  }
  auto image = ProgramImage::Deserialize(bytes, "fuzz.tsprog");
  if (!image.ok()) return;
  // What Program::Create checks before it touches a device (steps,
  // views, streams): an error or a device-count error, never a crash.
  (void)Program::Create({}, *image);
  const std::string again = image->Serialize();
  auto reread = ProgramImage::Deserialize(again, "again.tsprog");
  if (!reread.ok()) fuzz::Fail("a written program image does not read back: " + reread.status().ToString());
  if (reread->Serialize() != again) fuzz::Fail("program image round trip changed the file");
}

void Autotune(std::string text, bool fix) {
  static fuzz::ScratchFile file(".tat");
  if (fix) {
    // Every line before the first "checksum" line, then the checksum line.
    std::string body;
    size_t at = 0;
    while (at < text.size()) {
      size_t nl = text.find('\n', at);
      std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
      at = nl == std::string::npos ? text.size() : nl + 1;
      if (line.rfind("checksum ", 0) == 0) break;
      body += line + "\n";
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(fuzz::Fnv1a64(body.data(), body.size())));
    text = body + "checksum " + hex + "\n";
  }
  // What a lookup asks for: a key and the fields the entry must match.
  static const std::vector<std::pair<std::string, std::string>> fields = {
      {"device", "llvmpipe|1.0|1.3"}, {"plugin", "cpu|0.1.0|build"}, {"target", "cpu"},
      {"program", "0123abcd"},        {"function", "main"},          {"options", ""}};
  auto entry = program::ReadAutotuneEntry(file.Write(text.data(), text.size()), "00ff00ff", fields);
  (void)entry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool fix = (mode & 4) != 0;
  switch (mode & 3) {
    case 0: Archive(bytes); break;
    case 1: Kernels(std::move(bytes), fix); break;
    case 2: ProgramFile(std::move(bytes), fix); break;
    case 3: Autotune(std::move(bytes), fix); break;
  }
  return 0;
}
