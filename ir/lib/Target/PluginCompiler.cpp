//===- PluginCompiler.cpp - Compiler_Compile around a plugin's lowering ---===//
#include "tessera/Target/PluginCompiler.h"
#include "tessera/Target/ArgumentAccess.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/IR/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "plugin_support.hpp"
#include "tessera/ir_version.h"
#include "tessera/InitAll.h"

using namespace mlir;
using tessera::plugin_support::errorf;
using tessera::plugin_support::make_error;

/// What the caller owns: the result and the arrays the ABI structs point at.
struct TsCompilation {
  static constexpr uint32_t kMagic = 0x54434d50;  // "TCMP"
  uint32_t magic = kMagic;
  tessera::target::CompileResult result;
  std::deque<std::string> strings;
  std::deque<std::vector<int64_t>> shapes;
  std::deque<std::vector<TsKernelParam>> params;
  std::vector<TsKernelSignature> kernels;
};

namespace tessera::target {
namespace {

constexpr size_t kMaxModuleBytes = size_t{1} << 30;  // 1 GiB of bytecode
constexpr size_t kMaxText = 4096;

bool Bounded(const char *s, std::string *out) {
  if (s == nullptr) return false;
  const void *nul = std::memchr(s, 0, kMaxText + 1);
  if (nul == nullptr) return false;
  out->assign(s, static_cast<const char *>(nul));
  return true;
}

std::vector<std::string> Split(const std::string &text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

std::string TargetList(const TsCompilerTarget *targets, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += (i ? ", " : "") + std::string(targets[i].name);
    std::string archs = targets[i].archs ? targets[i].archs : "";
    if (archs == "*")
      out += "[:<cpu name>]";
    else if (!archs.empty())
      out += "[:" + archs + "]";
  }
  return out;
}

TsCompilation *Package(CompileResult result) {
  auto c = std::make_unique<TsCompilation>();
  c->result = std::move(result);
  std::sort(c->result.kernels.begin(), c->result.kernels.end(),
            [](const KernelSpec &a, const KernelSpec &b) { return a.name < b.name; });
  for (const KernelSpec &k : c->result.kernels) {
    std::vector<TsKernelParam> ps;
    for (const KernelParamSpec &p : k.params) {
      TsKernelParam tp{};
      tp.struct_size = TS_KERNEL_PARAM_STRUCT_SIZE;
      tp.kind = p.kind;
      tp.dtype = c->strings.emplace_back(p.dtype).c_str();
      tp.rank = static_cast<uint32_t>(p.shape.size());
      tp.shape = c->shapes.emplace_back(p.shape).data();
      tp.bytes = p.bytes;
      tp.access = p.access;
      ps.push_back(tp);
    }
    std::vector<TsKernelParam> &stored = c->params.emplace_back(std::move(ps));
    TsKernelSignature s{};
    s.struct_size = TS_KERNEL_SIGNATURE_STRUCT_SIZE;
    s.name = c->strings.emplace_back(k.name).c_str();
    s.grid = TsDim3{k.grid[0], k.grid[1], k.grid[2]};
    s.group_size = TsDim3{k.group_size[0], k.group_size[1], k.group_size[2]};
    s.shared_memory_bytes = k.shared_memory_bytes;
    s.params = stored.data();
    s.num_params = stored.size();
    c->kernels.push_back(s);
  }
  return c.release();
}

}  // namespace

std::string TypeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return os.str();
}

std::vector<KernelParamSpec> ParamsOfArguments(FunctionOpInterface fn, const std::string &indexType) {
  std::vector<KernelParamSpec> out;
  llvm::ArrayRef<Type> types = fn.getArgumentTypes();
  for (unsigned i = 0; i < types.size(); ++i) {
    Type t = types[i];
    KernelParamSpec p;
    if (auto mt = t.dyn_cast<MemRefType>()) {
      p.kind = TS_KERNEL_ARG_BUFFER;
      p.dtype = TypeName(mt.getElementType());
      p.shape.assign(mt.getShape().begin(), mt.getShape().end());
      uint64_t bits = mt.getElementType().isIndex() ? 64 : mt.getElementTypeBitWidth();
      p.bytes = mt.hasStaticShape() ? static_cast<uint64_t>(mt.getNumElements()) * ((bits + 7) / 8) : 0;
      // What the body does with it (the validation layer's hazard detector).
      if (!fn.isExternal()) p.access = ArgumentAccess(fn.getArgument(i));
    } else {
      p.kind = TS_KERNEL_ARG_SCALAR;
      p.dtype = t.isIndex() ? indexType : TypeName(t);
      p.bytes = t.isIndex() ? (indexType == "i32" ? 4 : 8) : (t.getIntOrFloatBitWidth() + 7) / 8;
      p.access = TS_PARAM_READ;
    }
    out.push_back(std::move(p));
  }
  return out;
}

TsError *RunCompile(const char *plugin, const TsCompilerTarget *targets, size_t num_targets,
                    TsCompiler_Compile_Args *args, const CompileCallback &lower) noexcept {
  return plugin_support::guard(plugin, "Compiler_Compile", [&]() -> TsError * {
    if (args == nullptr)
      return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: Compiler_Compile: args is NULL", plugin);
    if (args->struct_size < TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "%s: Compiler_Compile: struct_size %zu is smaller than "
                    "TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE (%zu)",
                    plugin, args->struct_size, static_cast<size_t>(TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE));
    CompileRequest request;
    std::string target;
    if (!Bounded(args->target, &target) || target.empty())
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "%s: Compiler_Compile: no target given; this plugin compiles for %s", plugin,
                    TargetList(targets, num_targets).c_str());
    size_t colon = target.find(':');
    request.target = target.substr(0, colon);
    request.arch = colon == std::string::npos ? "" : target.substr(colon + 1);
    const TsCompilerTarget *t = nullptr;
    for (size_t i = 0; i < num_targets; ++i)
      if (request.target == targets[i].name) t = &targets[i];
    if (t == nullptr)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "%s: Compiler_Compile: unknown target '%s'; this plugin compiles for %s", plugin,
                    target.c_str(), TargetList(targets, num_targets).c_str());
    if (request.arch.empty()) request.arch = t->default_arch ? t->default_arch : "";
    std::string archs = t->archs ? t->archs : "";
    if (!request.arch.empty() && archs != "*") {
      std::vector<std::string> known = Split(archs);
      if (std::find(known.begin(), known.end(), request.arch) == known.end())
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "%s: Compiler_Compile: target %s has no architecture '%s'; it knows: %s",
                      plugin, request.target.c_str(), request.arch.c_str(),
                      archs.empty() ? "none (write the target alone)" : archs.c_str());
    }
    std::string version;
    if (!Bounded(args->ir_version, &version) || version != TESSERA_IR_VERSION)
      return errorf(TS_ERROR_ABI_MISMATCH,
                    "%s: Compiler_Compile: the module was written by Tessera IR '%s' but this "
                    "compiler reads '%s': use a plugin built with the same Tessera",
                    plugin, version.empty() ? "(none given)" : version.c_str(), TESSERA_IR_VERSION);
    if (args->module == nullptr || args->module_size == 0)
      return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: Compiler_Compile: no module (MLIR bytecode) given",
                    plugin);
    if (args->module_size > kMaxModuleBytes)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "%s: Compiler_Compile: the module is %zu bytes, more than the %zu this compiler "
                    "reads",
                    plugin, args->module_size, kMaxModuleBytes);
    if (!Bounded(args->source_name, &request.source_name)) request.source_name = "<module>";
    if (args->emit && !Bounded(args->emit, &request.emit))
      return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: Compiler_Compile: emit is not a string", plugin);
    if (!request.emit.empty()) {
      std::vector<std::string> kinds = Split(t->emit_kinds ? t->emit_kinds : "");
      if (std::find(kinds.begin(), kinds.end(), request.emit) == kinds.end())
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "%s: Compiler_Compile: target %s cannot emit '%s'; it emits: %s", plugin,
                      request.target.c_str(), request.emit.c_str(),
                      t->emit_kinds && *t->emit_kinds ? t->emit_kinds : "nothing but its executable");
    }
    if (TsError *e = plugin_support::ParseOptions(plugin, "Compiler_Compile", t->options, t->num_options,
                                                  args->options, args->num_options, &request.options))
      return e;

    // Read the module; every diagnostic from here on goes into the message.
    // The read is timed (into the log): it is what the plugin boundary costs
    // a compile, against passing the module in memory.
    const auto readStart = std::chrono::steady_clock::now();
    DialectRegistry registry;
    registerAllDialects(registry);
    MLIRContext context(registry, MLIRContext::Threading::DISABLED);
    std::string diagnostics;
    llvm::raw_string_ostream diagOS(diagnostics);
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagOS);
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
        llvm::StringRef(static_cast<const char *>(args->module), args->module_size), ParserConfig(&context));
    if (!module)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "%s: Compiler_Compile: %s is not a module of Tessera IR in MLIR bytecode: %s", plugin,
                    request.source_name.c_str(), diagOS.str().c_str());
    if (failed(verify(*module)))
      return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: compiling %s for %s: the module does not verify:\n%s",
                    plugin, request.source_name.c_str(), target.c_str(), diagOS.str().c_str());
    const double readMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - readStart).count();
    CompileResult result;
    std::string message;
    TsErrorCode code = lower(*module, request, &result, &message);
    if (code != 0) {
      std::string text = diagOS.str();
      if (!message.empty()) text += (text.empty() ? "" : "\n") + message;
      while (!text.empty() && text.back() == '\n') text.pop_back();
      return make_error(code, std::string(plugin) + ": compiling " + request.source_name + " for " + target +
                                  ":\n" + text);
    }
    if (!diagOS.str().empty()) result.log += diagOS.str();
    char timing[160];
    std::snprintf(timing, sizeof timing, "hand-off: read %zu bytes of bytecode in %.3f ms\n",
                  args->module_size, readMs);
    result.log += timing;
    TsCompilation *c = Package(std::move(result));
    args->compilation = c;
    args->format = c->strings.emplace_back(c->result.format).c_str();
    args->data = c->result.data.data();
    args->size = c->result.data.size();
    args->kernels = c->kernels.data();
    args->num_kernels = c->kernels.size();
    args->log = c->strings.emplace_back(c->result.log).c_str();
    return nullptr;
  });
}

TsError *DestroyCompilation(TsCompilation_Destroy_Args *args) noexcept {
  if (args == nullptr || args->compilation == nullptr) return nullptr;
  if (args->compilation->magic != TsCompilation::kMagic)
    return errorf(TS_ERROR_INVALID_HANDLE, "Compilation_Destroy: %p is not a live compilation",
                  static_cast<void *>(args->compilation));
  args->compilation->magic = 0;
  delete args->compilation;
  return nullptr;
}

TsPluginApi CompilerPartApi(TsError *(*compile)(TsCompiler_Compile_Args *args)) {
  TsPluginApi api{};
  api.struct_size = TS_PLUGIN_API_STRUCT_SIZE;
  api.abi_version = TsAbiVersion{TESSERA_ABI_VERSION_MAJOR, TESSERA_ABI_VERSION_MINOR};
  api.Error_Destroy = &tessera::plugin_support::Error_Destroy;
  api.Error_Message = &tessera::plugin_support::Error_Message;
  api.Error_GetCode = &tessera::plugin_support::Error_GetCode;
  api.Compiler_Compile = compile;
  api.Compilation_Destroy = &DestroyCompilation;
  return api;
}

}  // namespace tessera::target
