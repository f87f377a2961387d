// Helpers shared by the harnesses (fuzz/, docs/fuzzing.md).  None of them
// reads a format: the readers fuzzed are the project's own.
#ifndef TESSERA_FUZZ_FUZZ_UTIL_HPP_
#define TESSERA_FUZZ_FUZZ_UTIL_HPP_

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tessera::fuzz {

// A file of this process for readers that take a path (ReadNpy, the
// autotune cache): rewritten on every input, removed at exit.
class ScratchFile {
 public:
  explicit ScratchFile(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/tessera-fuzz-" + std::to_string(::getpid()) + suffix;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  const std::string& Write(const void* data, size_t size) {
    FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f) std::abort();  // the harness's own failure, not the reader's
    if (size && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// FNV-1a 64: the checksum the program image and the autotune cache put on
// their contents.  The harnesses use it to give a mutated body a matching
// checksum, so that the fuzzer reaches the parsing behind the check.
inline uint64_t Fnv1a64(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Prints "fuzz check failed: <what>" and aborts: a round trip that did not
// hold is a finding like a crash.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

}  // namespace tessera::fuzz

#endif  // TESSERA_FUZZ_FUZZ_UTIL_HPP_
