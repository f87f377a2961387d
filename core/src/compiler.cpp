// Compiler: a plugin's compile entry points from C++, every answer checked.
#include "tessera/compiler.hpp"

#include <cstring>

#include "backend_selection.hpp"
#include "log.hpp"
#include "plugin_discovery.hpp"
#include "plugin_options.hpp"
#include "plugin_probe.hpp"
#include "runtime_impl.hpp"

namespace tessera {

namespace detail {
struct CompilerImpl {
  std::shared_ptr<PluginLibrary> plugin;
  std::vector<CompileTargetInfo> targets;
  Device device;  // ForDevice: keeps the runtime (and its client) alive
};
}  // namespace detail

namespace {

using detail::MakeArgs;

// Bounds on a plugin's answer: a broken or hostile plugin must not make the
// core read or allocate without end.
constexpr size_t kMaxExecutableBytes = size_t{2} << 30;
constexpr size_t kMaxKernels = 1 << 16;
constexpr size_t kMaxParams = 1 << 12;
constexpr uint32_t kMaxRank = 16;
constexpr size_t kMaxLog = 1 << 20;

std::string TargetName(const std::string& target) { return target.substr(0, target.find(':')); }

// Copies what the plugin returned, checking each field.
StatusOr<CompileOutput> CopyOutput(const detail::PluginLibrary& lib,
                                   const TsCompiler_Compile_Args& a) {
  auto BadAnswer = [&lib](const std::string&, const std::string& what) {
    return lib.BadAnswer("Compiler_Compile", what);
  };
  const std::string& plugin = lib.name();
  CompileOutput out;
  out.plugin = plugin;
  if (a.compilation == nullptr) return BadAnswer(plugin, "success without a compilation");
  if (a.size > kMaxExecutableBytes) return BadAnswer(plugin, "an executable of " + FormatBytes(a.size));
  if (a.size > 0 && a.data == nullptr) return BadAnswer(plugin, "a size without data");
  out.format = detail::BoundedString(a.format, TS_NAME_MAX);
  if (out.format.empty()) return BadAnswer(plugin, "no format");
  if (a.size) out.data.assign(static_cast<const char*>(a.data), a.size);
  out.log = detail::BoundedString(a.log, kMaxLog);
  if (a.num_kernels > kMaxKernels) return BadAnswer(plugin, std::to_string(a.num_kernels) + " kernels");
  if (a.num_kernels > 0 && a.kernels == nullptr) return BadAnswer(plugin, "a kernel count without kernels");
  for (size_t i = 0; i < a.num_kernels; ++i) {
    const TsKernelSignature& s = a.kernels[i];
    if (s.struct_size < TS_KERNEL_SIGNATURE_STRUCT_SIZE)
      return BadAnswer(plugin, "kernel " + std::to_string(i) + " with struct_size " + std::to_string(s.struct_size));
    KernelSignature k;
    k.name = detail::BoundedString(s.name, 1024);
    if (k.name.empty()) return BadAnswer(plugin, "kernel " + std::to_string(i) + " without a name");
    k.grid = s.grid;
    k.group_size = s.group_size;
    k.shared_memory_bytes = s.shared_memory_bytes;
    if (s.num_params > kMaxParams || (s.num_params > 0 && s.params == nullptr))
      return BadAnswer(plugin, "kernel '" + k.name + "' with a bad parameter list");
    for (size_t j = 0; j < s.num_params; ++j) {
      const TsKernelParam& p = s.params[j];
      if (p.struct_size < TS_KERNEL_PARAM_STRUCT_SIZE || p.rank > kMaxRank ||
          (p.rank > 0 && p.shape == nullptr) ||
          (p.kind != TS_KERNEL_ARG_BUFFER && p.kind != TS_KERNEL_ARG_SCALAR))
        return BadAnswer(plugin, "kernel '" + k.name + "' parameter " + std::to_string(j) + " malformed");
      KernelParamInfo info;
      info.kind = p.kind;
      info.dtype = detail::BoundedString(p.dtype, 64);
      info.shape.assign(p.shape, p.shape + p.rank);
      info.bytes = p.bytes;
      info.access = p.access & (TS_PARAM_READ | TS_PARAM_WRITE | TS_PARAM_ATOMIC | TS_PARAM_SCRATCH);
      if ((info.access & (TS_PARAM_READ | TS_PARAM_WRITE)) == 0)
        info.access = TS_PARAM_READ | TS_PARAM_WRITE;
      k.params.push_back(std::move(info));
    }
    out.kernels.push_back(std::move(k));
  }
  return out;
}

// Every plugin may be opened: their isolation probes run at once.
void ProbeAtOnce(const std::vector<PluginCandidate>& candidates, const RuntimeOptions& options) {
  std::vector<const PluginCandidate*> all;
  for (const PluginCandidate& c : candidates) all.push_back(&c);
  detail::ProbePluginFiles(all, options);
}

std::string DescribeTargets(const std::vector<CompileTargetInfo>& targets) {
  std::string out;
  for (const CompileTargetInfo& t : targets)
    out += (out.empty() ? "" : ", ") + t.name + " (plugin " + t.plugin + ")";
  return out.empty() ? "none" : out;
}

}  // namespace

StatusOr<Compiler> Compiler::ForTarget(const std::string& target, const RuntimeOptions& options) {
  const std::string name = TargetName(target);
  std::vector<CompileTargetInfo> seen;
  std::vector<PluginCandidate> candidates = detail::DiscoverPlugins(options);
  ProbeAtOnce(candidates, options);
  for (PluginCandidate& c : candidates) {
    if (c.state == PluginState::kShadowed) continue;
    auto lib = detail::PluginLibrary::Load(&c, options);
    if (!lib.ok()) continue;
    for (const CompileTargetInfo& t : c.compile_targets) {
      seen.push_back(t);
      if (t.name != name) continue;
      Compiler compiler;
      compiler.impl_ = std::make_shared<detail::CompilerImpl>();
      compiler.impl_->plugin = *lib;
      compiler.impl_->targets = c.compile_targets;
      return compiler;
    }
  }
  return Status(StatusCode::kNotFound, "no plugin compiles for target '" + target +
                                           "'; the targets found are: " + DescribeTargets(seen));
}

StatusOr<Compiler> Compiler::ForDevice(const Device& device) {
  if (!device.valid())
    return Status(StatusCode::kInvalidHandle, "Compiler::ForDevice: null Device handle");
  const detail::RuntimeImpl& rt = *device.impl()->runtime;
  Compiler compiler;
  compiler.impl_ = std::make_shared<detail::CompilerImpl>();
  compiler.impl_->plugin = rt.plugin;
  compiler.impl_->targets = rt.plugin->ReadCompileTargets();
  compiler.impl_->device = device;
  if (compiler.impl_->targets.empty())
    return Status(StatusCode::kUnsupported,
                  "the '" + rt.backend + "' plugin compiles nothing (it has no compile targets: " +
                      "a plugin of ABI 1.2 or later lists them with Compiler_GetTargets)");
  return compiler;
}

std::vector<CompileTargetInfo> Compiler::ListTargets(const RuntimeOptions& options) {
  std::vector<CompileTargetInfo> out;
  std::vector<PluginCandidate> candidates = detail::DiscoverPlugins(options);
  ProbeAtOnce(candidates, options);
  for (PluginCandidate& c : candidates) {
    if (c.state == PluginState::kShadowed) continue;
    if (!detail::PluginLibrary::Load(&c, options).ok()) continue;
    out.insert(out.end(), c.compile_targets.begin(), c.compile_targets.end());
  }
  return out;
}

// A default-constructed Compiler answers empty values, as Runtime does.
const std::string& Compiler::plugin() const {
  static const std::string none;
  return impl_ ? impl_->plugin->name() : none;
}
const std::vector<CompileTargetInfo>& Compiler::targets() const {
  static const std::vector<CompileTargetInfo> none;
  return impl_ ? impl_->targets : none;
}

const CompileTargetInfo* Compiler::FindTarget(const std::string& target) const {
  if (!impl_) return nullptr;
  const std::string name = TargetName(target);
  for (const CompileTargetInfo& t : impl_->targets)
    if (t.name == name) return &t;
  return nullptr;
}

StatusOr<CompileOutput> Compiler::Compile(const CompileRequest& request, const Device* device) const {
  if (!impl_) return Status(StatusCode::kInvalidHandle, "null Compiler handle: use ForTarget or ForDevice");
  const detail::PluginLibrary& lib = *impl_->plugin;
  std::string target = request.target;
  if (target.empty()) {
    if (!device && !impl_->device.valid())
      return Status(StatusCode::kInvalidArgument,
                    "Compile: no target given (write e.g. cpu, vulkan or cuda:sm_90a)");
    target = impl_->targets.front().name;
  }
  if (!FindTarget(target)) {
    std::string names;
    for (const CompileTargetInfo& t : impl_->targets) names += (names.empty() ? "" : ", ") + t.name;
    return Status(StatusCode::kInvalidArgument, "the '" + lib.name() + "' plugin does not compile for '" +
                                                    target + "'; it compiles for " + names);
  }
  if (device && device->valid() && device->impl()->runtime->plugin.get() != impl_->plugin.get())
    return Status(StatusCode::kInvalidArgument,
                  "Compile: the device belongs to the '" + device->backend() + "' plugin, not to '" +
                      lib.name() + "'");
  std::vector<TsNamedValue> named = detail::ToNamedValues(request.options);
  auto args = MakeArgs<TsCompiler_Compile_Args>();
  args.target = target.c_str();
  args.ir_version = request.ir_version.c_str();
  args.module = request.module.data();
  args.module_size = request.module.size();
  args.source_name = request.source_name.empty() ? nullptr : request.source_name.c_str();
  args.options = named.empty() ? nullptr : named.data();
  args.num_options = named.size();
  args.emit = request.emit.empty() ? nullptr : request.emit.c_str();
  args.device = device && device->valid() ? device->raw() : nullptr;
  detail::RuntimeTrace* rt_trace =
      device && device->valid() ? device->impl()->runtime->trace.get() : nullptr;
  // With a device: its runtime's trace, if it traces; without: the active
  // trace (TESSERA_TRACE), if any.
  detail::Tracer* tracer = rt_trace ? &rt_trace->tracer()
                           : device && device->valid() ? nullptr
                                                       : detail::Tracer::Active();
  detail::ApiScope trace_scope(tracer, "Compiler::Compile",
      "compile");
  if (trace_scope.on())
    trace_scope.args = detail::TraceArg("plugin", lib.name()) + "," +
                       detail::TraceArg("target", target) + "," +
                       detail::TraceArg("source", request.source_name) + "," +
                       detail::TraceArg("module_bytes", static_cast<uint64_t>(request.module.size()));
  detail::FaultInjector* faults =
      device && device->valid() ? device->impl()->runtime->faults.get()
                                : detail::FaultInjector::FromEnvironment();
  if (faults) {
    Status injected = faults->Check(detail::FaultKind::kCompile, "Compile");
    if (!injected.ok()) return injected;
  }
  Status st = TESSERA_PLUGIN_CALL(lib, Compiler_Compile, args);
  if (!st.ok()) return st;
  auto out = CopyOutput(lib, args);
  auto destroy = MakeArgs<TsCompilation_Destroy_Args>();
  destroy.compilation = args.compilation;
  if (args.compilation) {
    Status d = TESSERA_PLUGIN_CALL(lib, Compilation_Destroy, destroy);
    if (!d.ok()) TESSERA_LOG(kWarning, "Compilation_Destroy failed: " + d.ToString());
  }
  if (!out.ok()) return out.status();
  out->target = target;
  return out;
}

}  // namespace tessera
