// The public entry points of libtessera_compiler: parse, lower, compile
// through the plugin, finish the image.
#include <algorithm>

#include <llvm/Support/raw_ostream.h>

#include "lower.hpp"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "tessera/ir_version.h"

namespace tessera {

ProgramSource ProgramSource::File(std::string path) {
  ProgramSource s;
  s.name = path;
  s.path = std::move(path);
  return s;
}

ProgramSource ProgramSource::Text(std::string text, std::string name) {
  ProgramSource s;
  s.text = std::move(text);
  s.name = std::move(name);
  return s;
}

namespace {

struct Compiled {
  ProgramImage image;
  CompileOutput output;
};

// The compile options: the caller's, and the plugin's cache folder unless
// the caller chose one.
std::vector<OptionValue> CompileOptionsFor(const CompileTargetInfo& target, const ProgramCompileOptions& options) {
  std::vector<OptionValue> out = options.compiler_options;
  bool declares_cache = false, chosen = false;
  for (const OptionInfo& o : target.options) declares_cache |= o.name == "cache_dir";
  for (const OptionValue& v : out) chosen |= v.name == "cache_dir";
  if (declares_cache && !chosen) {
    std::string dir = DefaultCacheDirectory();
    if (!dir.empty()) out.push_back(OptionValue::String("cache_dir", dir + "/" + target.plugin));
  }
  return out;
}

StatusOr<Compiled> Build(const ProgramSource& source, const ProgramCompileOptions& options, const Compiler& compiler,
                         const std::string& target_text, const Device* device, const std::string& emit) {
  const CompileTargetInfo* target = compiler.FindTarget(target_text);
  if (!target) return Status(StatusCode::kInvalidArgument, "the " + compiler.plugin() + " plugin has no target '" + target_text + "'");
  auto parsed = program::ParsedModule::Parse(source);
  if (!parsed.ok()) return parsed.status();
  auto lowered = program::Lower(**parsed, options.function, *target, options.schedule, device);
  if (!lowered.ok()) return lowered.status();
  // An SPMD program of collectives alone has nothing for the plugin to compile.
  const bool launches = std::any_of(lowered->image.steps.begin(), lowered->image.steps.end(),
                                    [](const PlanStep& s) { return s.kind == PlanStep::kLaunch; });
  if (!launches && emit.empty()) {
    Compiled c;
    c.image = std::move(lowered->image);
    c.image.target = target_text;
    c.image.ir_version = TESSERA_IR_VERSION;
    c.output.plugin = compiler.plugin();
    c.output.target = target_text;
    TESSERA_RETURN_IF_ERROR(program::FinishImage(&c.image, c.output));
    return c;
  }
  CompileRequest request;
  request.target = target_text;
  request.ir_version = TESSERA_IR_VERSION;
  request.source_name = (*parsed)->name();
  request.options = CompileOptionsFor(*target, options);
  request.emit = emit;
  {
    llvm::raw_string_ostream os(request.module);
    mlir::writeBytecodeToFile(*lowered->module, os);
  }
  auto out = compiler.Compile(request, device);
  if (!out.ok()) return out.status();
  Compiled c;
  c.image = std::move(lowered->image);
  c.image.target = target_text;
  c.image.ir_version = TESSERA_IR_VERSION;
  if (emit.empty()) {
    TESSERA_RETURN_IF_ERROR(program::FinishImage(&c.image, *out));
    ExecutableImage e;
    e.format = out->format;
    e.data = out->data;
    e.kernels = out->kernels;
    c.image.executables.push_back(std::move(e));
  }
  c.output = std::move(*out);
  return c;
}

StatusOr<Compiler> CompilerFor(const ProgramCompileOptions& options) {
  if (options.target.empty())
    return Status(StatusCode::kInvalidArgument,
                  "no target given: write one of the targets tessera-info lists (cpu, vulkan, cuda:sm_90a, ...)");
  return Compiler::ForTarget(options.target, options.plugins);
}

}  // namespace

StatusOr<Program> CompileProgram(const std::vector<Device>& devices, const ProgramSource& source,
                                 const ProgramCompileOptions& options) {
  if (devices.empty() || !devices[0].valid())
    return Status(StatusCode::kInvalidArgument, "CompileProgram: give the device (one per mesh position) to compile for");
  auto image = CompileProgramImage(source, options, &devices[0]);
  if (!image.ok()) return image.status();
  return Program::Create(devices, std::move(*image));
}

StatusOr<ProgramImage> CompileProgramImage(const ProgramSource& source, const ProgramCompileOptions& options,
                                           const Device* device, std::string* log) {
  StatusOr<Compiler> compiler = device ? Compiler::ForDevice(*device) : CompilerFor(options);
  if (!compiler.ok()) return compiler.status();
  std::string target = options.target.empty() ? compiler->targets().front().name : options.target;
  auto built = Build(source, options, *compiler, target, device, "");
  if (!built.ok()) return built.status();
  if (log) *log = built->output.log;
  return std::move(built->image);
}

StatusOr<int64_t> ProgramDevicesNeeded(const ProgramSource& source, const std::string& function) {
  auto parsed = program::ParsedModule::Parse(source);
  if (!parsed.ok()) return parsed.status();
  return program::DevicesNeeded(**parsed, function);
}

StatusOr<CompileOutput> EmitProgram(const ProgramSource& source, const ProgramCompileOptions& options,
                                    const std::string& emit) {
  auto compiler = CompilerFor(options);
  if (!compiler.ok()) return compiler.status();
  auto built = Build(source, options, *compiler, options.target, nullptr, emit);
  if (!built.ok()) return built.status();
  return std::move(built->output);
}

StatusOr<std::vector<std::string>> ListProgramFunctions(const ProgramSource& source) {
  auto parsed = program::ParsedModule::Parse(source);
  if (!parsed.ok()) return parsed.status();
  return program::Candidates((*parsed)->module());
}

}  // namespace tessera
