// Runs a vendor's offline tool (ptxas, ld.lld) as a child process on files
// in a private temporary folder, for compiler parts whose toolchain has no
// library form we may link.
//
// Thread-safety: each call has its own folder; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::plugin_support {

// A private folder under $TMPDIR (or /tmp), removed with everything in it
// when the object goes.  ok() is false when it could not be created.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs argv[0] (a path) with `argv`, stdout and stderr into *output.
// Returns its exit status, or -1 when it could not run or was killed
// (*output then says why).
int RunTool(const std::vector<std::string>& argv, std::string* output);

// Whole-file helpers for the tools' inputs and outputs.  ReadFile reads a
// regular file of at most max_bytes (file_io.hpp); else it returns "" and,
// with `why`, says what was wrong (naming the file and the limit).
bool WriteFile(const std::string& path, const std::string& data);
std::string ReadFile(const std::string& path, uint64_t max_bytes, std::string* why = nullptr);

// `name` in the first of `dirs` where it is an executable file, else "".
std::string FindExecutable(const std::string& name, const std::vector<std::string>& dirs);

}  // namespace tessera::plugin_support
