#include "run_tool.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "file_io.hpp"

extern char** environ;

namespace tessera::plugin_support {

namespace {
// A tool's messages (ptxas -v, lld): far below this; more is a runaway tool.
constexpr uint64_t kMaxToolLogBytes = uint64_t{16} << 20;
}  // namespace

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/tessera-tool-XXXXXX";
  if (::mkdtemp(tmpl.data())) path_ = tmpl;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  if (DIR* d = ::opendir(path_.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
        ::unlink((path_ + "/" + e->d_name).c_str());
    ::closedir(d);
  }
  ::rmdir(path_.c_str());
}

bool WriteFile(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f << data;
  return static_cast<bool>(f);
}

std::string ReadFile(const std::string& path, uint64_t max_bytes, std::string* why) {
  std::string data;
  FileReadResult r = ReadBoundedFile(path, max_bytes, &data);
  if (why) *why = r.message;
  return data;
}

int RunTool(const std::vector<std::string>& argv, std::string* output) {
  output->clear();
  if (argv.empty()) return -1;
  TempDir dir;
  if (!dir.ok()) {
    *output = "cannot create a temporary folder";
    return -1;
  }
  const std::string log = dir.file("output.log");
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *output = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      *output = "waitpid failed for " + argv[0];
      return -1;
    }
  // A runaway tool's log is refused, not read whole.
  std::string why;
  *output = ReadFile(log, kMaxToolLogBytes, &why);
  if (!why.empty()) *output = "the tool's output is unreadable: " + why;
  if (!WIFEXITED(status)) {
    *output += argv[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
    return -1;
  }
  return WEXITSTATUS(status);
}

std::string FindExecutable(const std::string& name, const std::vector<std::string>& dirs) {
  for (const std::string& d : dirs) {
    if (d.empty()) continue;
    const std::string p = d + "/" + name;
    struct stat st;
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

}  // namespace tessera::plugin_support
