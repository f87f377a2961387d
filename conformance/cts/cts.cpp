#include "cts/cts.hpp"

#if TESSERA_CTS_HAVE_COMPILER
#include "tessera/program_compiler.hpp"
#endif

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>

namespace tessera::cts {

Config& GlobalConfig() {
  static Config config;
  return config;
}

namespace {
std::optional<StatusOr<Runtime>>& RuntimeSlot() {
  static std::optional<StatusOr<Runtime>> slot;
  return slot;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
}  // namespace

const StatusOr<Runtime>& SharedRuntime() {
  auto& slot = RuntimeSlot();
  if (!slot) {
    const Config& config = GlobalConfig();
    RuntimeOptions options;
    options.backend = config.backend;
    options.plugin_file = config.plugin_file;
    options.plugin_options = config.plugin_options;
    options.plugin_option_defaults = config.plugin_option_defaults;
    StatusOr<Runtime> rt = Runtime::Create(options);
    if (!rt.ok()) {
      std::string what = !config.plugin_file.empty()
                             ? "plugin " + config.plugin_file
                             : !config.backend.empty()
                                   ? "backend " + config.backend
                                   : std::string("the default backend");
      slot.emplace(Status(rt.status()).Annotate("cannot create a Runtime for " + what));
    } else if (rt->devices().empty()) {
      slot.emplace(Status(StatusCode::kUnavailable,
                          "the Runtime for backend " + rt->backend() +
                              " has no device"));
    } else {
      slot.emplace(std::move(rt));
    }
  }
  return *slot;
}

void ResetSharedRuntime() { RuntimeSlot().reset(); }

std::string FindKernelsDir(const std::string& argv0) {
  if (const char* env = std::getenv("TESSERA_CTS_KERNELS_DIR"))
    if (IsDirectory(env)) return env;
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string self = n > 0 ? std::string(exe, n) : argv0;
  std::string bin_dir = self.substr(0, self.find_last_of('/'));
  // Installed: <prefix>/bin/tessera-conformance and
  // <prefix>/<libdir>/tessera/conformance; the same relative layout holds
  // in the build tree (bin/ and lib/tessera/conformance).
  std::string relative = bin_dir + "/" TESSERA_CTS_KERNELS_RELATIVE_DIR;
  if (IsDirectory(relative)) return relative;
  if (IsDirectory(TESSERA_CTS_KERNELS_BUILD_DIR))
    return TESSERA_CTS_KERNELS_BUILD_DIR;
  return "";
}

const std::vector<KernelModule>& ShippedKernelModules() {
  // Add a format here together with its module target in CMakeLists.txt.
  static const std::vector<KernelModule> modules = {
      {"elf-native", "libtessera_cts_kernels_elf_native.so", false},
      {"spirv", "spirv", true},
#ifdef TESSERA_CTS_HAVE_PTX
      // kernels/cuda/basic.cu, built only where nvcc is found.
      {"ptx", "cuda/basic.ptx", false},
#endif
#ifdef TESSERA_CTS_HAVE_SPIRV_KERNEL
      // kernels/level_zero/basic.spvasm: one OpenCL SPIR-V module.
      {"spirv-kernel", "level_zero/basic.spv", false},
#endif
#ifdef TESSERA_CTS_HSACO_ARCHS
      // kernels/hip/basic.hip, one code object per arch (clang 16).
      {"hsaco", "hip/basic-{arch}.hsaco", false, "", TESSERA_CTS_HSACO_ARCHS},
#endif
  };
  return modules;
}

const KernelModule* ShippedModuleFor(const DeviceInfo& info) {
  // The per-arch modules resolved for an arch, kept for the process (the
  // callers hold the pointer).
  static std::mutex mu;
  static std::map<std::string, std::pair<std::string, KernelModule>> resolved;
  for (const KernelModule& m : ShippedKernelModules())
    for (const std::string& f : info.executable_formats) {
      if (f != m.format) continue;
      if (!m.archs) return &m;
      const std::string list = std::string(",") + m.archs + ",";
      if (info.compile_arch.empty() || list.find("," + info.compile_arch + ",") == std::string::npos) continue;
      std::lock_guard<std::mutex> lock(mu);
      auto& entry = resolved[std::string(m.format) + "/" + info.compile_arch];
      if (entry.first.empty()) {
        entry.first = m.file;
        entry.first.replace(entry.first.find("{arch}"), 6, info.compile_arch);
        entry.second = m;
      }
      entry.second.file = entry.first.c_str();
      return &entry.second;
    }
  return nullptr;
}

std::string KernelModulePath(const KernelModule& module, const std::string& kernel) {
  std::string path = GlobalConfig().kernels_dir + "/" + module.file;
  if (module.per_kernel) path += "/" + kernel + module.suffix;
  return path;
}

// --------------------------------------------------------------- fixture
void CtsTest::SetUp() {
  const StatusOr<Runtime>& rt = SharedRuntime();
  if (!rt.ok()) FAIL() << rt.status().ToString();
  runtime_ = *rt;
  device_ = runtime_.devices().front();
  executables_.assign(runtime_.devices().size(), {});
  modules_.assign(runtime_.devices().size(), nullptr);

  const ::testing::TestInfo* test =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(test->test_suite_name()) + "." + test->name();
  if (const char* reason = KnownFailureReason(runtime_.backend(), name)) {
    if (!GlobalConfig().run_known_failures)
      GTEST_SKIP() << "expected failure: " << reason;
  }
}

std::pair<int, std::string> TakeRawError(const TsPluginApi* api, TsError* error) {
  if (!error) return {0, ""};
  TsError_GetCode_Args g{};
  g.struct_size = TS_ERROR_GETCODE_ARGS_STRUCT_SIZE;
  g.error = error;
  api->Error_GetCode(&g);
  TsError_Message_Args m{};
  m.struct_size = TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE;
  m.error = error;
  api->Error_Message(&m);
  std::string text = m.message ? std::string(m.message, m.message_size) : std::string();
  TsError_Destroy_Args d{};
  d.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
  d.error = error;
  api->Error_Destroy(&d);
  return {static_cast<int>(g.code), text};
}

std::string CtsTest::TakeError(TsError* error) {
  if (!error) return "";
  auto [code, text] = TakeRawError(runtime().plugin_api(), error);
  return "code " + std::to_string(code) + ": " + text;
}

bool CtsTest::LoadKernels(std::string* why, size_t device_index) {
  if (device_index >= executables_.size()) {
    *why = "no device " + std::to_string(device_index);
    return false;
  }
  if (modules_[device_index]) return true;
  const tessera::Device& dev = runtime_.devices()[device_index];
  const KernelModule* module = ShippedModuleFor(dev.info());
  if (!module) {
    std::string shipped, accepted;
    for (const KernelModule& m : ShippedKernelModules())
      shipped += (shipped.empty() ? "" : ",") + std::string(m.format) +
                 (m.archs ? " for " + std::string(m.archs) : "");
    for (const std::string& f : dev.info().executable_formats)
      accepted += (accepted.empty() ? "" : ",") + f;
    *why = "unsupported: executable_formats (the suite ships " + shipped +
           "; the device accepts " + (accepted.empty() ? "none" : accepted) +
           (dev.info().compile_arch.empty() ? "" : ", compile arch " + dev.info().compile_arch) + ")";
    return false;
  }
  const std::string& dir = GlobalConfig().kernels_dir;
  if (dir.empty()) {
    *why = "the conformance kernel modules were not found: set "
           "TESSERA_CTS_KERNELS_DIR";
    return false;
  }
  if (module->per_kernel) {
    // One module per kernel, loaded on first use; check that one loads.
    const std::string probe = "fill_u32";
    StatusOr<Executable> exe =
        dev.load_executable(module->format, KernelModulePath(*module, probe));
    if (!exe.ok()) {
      *why = "loading the " + std::string(module->format) + " kernel modules (" +
             dir + "/" + module->file + "/): " + exe.status().ToString();
      return false;
    }
    executables_[device_index][probe] = *exe;
  } else {
    StatusOr<Executable> exe =
        dev.load_executable(module->format, KernelModulePath(*module, ""));
    if (!exe.ok()) {
      *why = "loading the " + std::string(module->format) +
             " kernel module: " + exe.status().ToString();
      return false;
    }
    executables_[device_index][""] = *exe;
  }
  modules_[device_index] = module;
  return true;
}

namespace {

// The hand-written kernels that synchronize with the host or with launches
// on other streams through memory use only atomics on those buffers: say so,
// so that the validation layer's hazard detector (TESSERA_VALIDATE=1) does
// not report the races the runtime areas make on purpose.  Compiled Tile IR
// kernels carry this in their signature (TsKernelParam.access).
StatusOr<Kernel> DeclareAccess(StatusOr<Kernel> kernel, const std::string& name) {
  constexpr uint32_t kAtomic = TS_PARAM_READ | TS_PARAM_WRITE | TS_PARAM_ATOMIC;
  static const std::map<std::string, std::vector<uint32_t>> kAtomicBuffers = {
      {"gate", {kAtomic, kAtomic}},
      {"handshake", {kAtomic, kAtomic}},
      {"log_stream", {kAtomic}},
      {"count", {kAtomic}},
  };
  if (!kernel.ok()) return kernel;
  if (auto it = kAtomicBuffers.find(name); it != kAtomicBuffers.end())
    kernel->declare_buffer_access(it->second);
  return kernel;
}

}  // namespace

StatusOr<Kernel> CtsTest::kernel(const std::string& name, size_t device_index) {
  if (device_index >= executables_.size() || !modules_[device_index]) {
    std::string why;
    if (!LoadKernels(&why, device_index))
      return Status(StatusCode::kFailedPrecondition, why);
  }
  const KernelModule& module = *modules_[device_index];
  auto& loaded = executables_[device_index];
  if (!module.per_kernel) return DeclareAccess(loaded[""].kernel(name), name);
  auto it = loaded.find(name);
  if (it == loaded.end()) {
    // No module for the name: the same NOT_FOUND a one-module format gives
    // for an unknown kernel.
    struct stat st;
    const std::string path = KernelModulePath(module, name);
    if (name.empty() || name.find('/') != std::string::npos ||
        ::stat(path.c_str(), &st) != 0)
      return Status(StatusCode::kNotFound,
                    "no " + std::string(module.format) + " kernel named '" + name +
                        "' in the suite's kernels (" + path + ")");
    StatusOr<Executable> exe =
        runtime_.devices()[device_index].load_executable(module.format, path);
    if (!exe.ok()) return exe.status();
    it = loaded.emplace(name, *exe).first;
  }
  return DeclareAccess(it->second.kernel(name), name);
}

bool CtsTest::CompileTileKernel(const std::string& file, const std::string& name,
                                const std::map<std::string, std::string>& params, TileKernel* out,
                                std::string* why, size_t device_index) {
  if (device_index >= devices().size()) {
    *why = "no device " + std::to_string(device_index);
    return false;
  }
  const Device& dev = devices()[device_index];
  std::string key = std::to_string(device_index) + "|" + file + "|" + name;
  for (const auto& [k, v] : params) key += "|" + k + "=" + v;
  auto it = tile_kernels_.find(key);
  if (it != tile_kernels_.end()) {
    *out = it->second.second;
    return true;
  }
  const std::string& dir = GlobalConfig().kernels_dir;
  const std::string path = dir + "/tile/" + file + ".mlir";
  std::ifstream in(path);
  if (dir.empty() || !in) {
    *why = "the suite's Tile IR source " + path + " was not found (set TESSERA_CTS_KERNELS_DIR)";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (const auto& [k, v] : params) {
    const std::string marker = "@" + k + "@";
    for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + v.size()))
      text.replace(at, marker.size(), v);
  }
  std::smatch left;
  if (std::regex_search(text, left, std::regex("@[A-Z][A-Z0-9_]*@"))) {
    *why = "the test left parameter " + left.str() + " of " + path + " unset";
    return false;
  }
#if !TESSERA_CTS_HAVE_COMPILER
  (void)text;
  *why = "unsupported: compiler (this suite was built without Tessera IR: it compiles no Tile IR)";
  return false;
#else
  // A plugin that compiles nothing cannot run Tile IR: unsupported.
  if (auto c = tessera::Compiler::ForDevice(dev); !c.ok()) {
    *why = "unsupported: compiler (the plugin lists no compile targets: " + c.status().message() + ")";
    return false;
  }
  ProgramCompileOptions options;
  options.function = name;
  auto image = CompileProgramImage(ProgramSource::Text(text, path), options, &dev);
  if (!image.ok()) {
    const Status& st = image.status();
    if (st.code() == StatusCode::kUnsupported)
      *why = "unsupported: compiler (" + dev.backend() + " cannot compile " + name + ": " + st.message() + ")";
    else
      *why = "compiling the Tile IR kernel " + name + " (" + path + ") with the " + dev.backend() +
             " plugin's compiler: " + st.ToString();
    return false;
  }
  auto program = Program::Create({dev}, std::move(*image));
  if (!program.ok()) {
    *why = "loading the compiled " + name + ": " + program.status().ToString();
    return false;
  }
  const ProgramImage& im = program->image();
  if (im.executables.size() != 1 || im.steps.size() != 1) {
    *why = "the compiled " + name + " is not one kernel";
    return false;
  }
  auto exe = dev.load_executable(im.executables[0].format, im.executables[0].data.data(),
                                 im.executables[0].data.size());
  if (!exe.ok()) {
    *why = "loading the " + im.executables[0].format + " executable of " + name + ": " + exe.status().ToString();
    return false;
  }
  auto k = exe->kernel(name);
  if (!k.ok()) {
    *why = "kernel " + name + ": " + k.status().ToString();
    return false;
  }
  // What each buffer parameter does (the signature's access): the
  // validation layer's hazard detector reads it.
  for (const KernelSignature& sig : im.executables[0].kernels) {
    if (sig.name != name) continue;
    std::vector<uint32_t> access;
    for (const KernelParamInfo& p : sig.params)
      if (p.kind == TS_KERNEL_ARG_BUFFER) access.push_back(p.access);
    k->declare_buffer_access(access);
  }
  TileKernel tk;
  tk.kernel = *k;
  tk.group = im.steps[0].group_size;
  tk.shared_memory_bytes = im.steps[0].shared_memory_bytes;
  tile_kernels_[key] = {*program, tk};
  *out = tk;
  return true;
#endif
}

bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace tessera::cts
