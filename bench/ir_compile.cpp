// Graph IR / Tile IR text -> programs through libtessera_compiler (the path
// tessera-run takes); Graph IR -> .so through tessera::cpu::compileForCPU
// directly for the compile-time reference.
#include "ir_compile.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "tessera/InitAll.h"
#include "tessera/cpu/Compiler.h"
#include "tessera/kernel_archive.hpp"
#include "tessera/program_compiler.hpp"

namespace tessera_bench {

namespace {
double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<tessera::OptionValue> CacheOptions(const IrCompileOptions& o) {
  // No cache: an empty cache_dir (the cpu compiler then uses a temporary
  // folder and keeps nothing).
  if (!o.use_cache) return {tessera::OptionValue::String("cache_dir", "")};
  if (!o.cache_dir.empty()) return {tessera::OptionValue::String("cache_dir", o.cache_dir)};
  return {};
}
}  // namespace

bool CompileGraphIR(const std::string& text, const tessera::Device& device, const IrCompileOptions& options,
                    IrProgram* out, std::string* error) {
  tessera::ProgramCompileOptions co;
  co.compiler_options = CacheOptions(options);
  co.schedule = options.schedule;
  std::string log;
  // The compile alone is timed (Program::Create, which loads the kernels
  // on the device, is not part of it).
  const auto t0 = std::chrono::steady_clock::now();
  auto image = tessera::CompileProgramImage(tessera::ProgramSource::Text(text, "<bench>"), co, &device, &log);
  out->compile_ms = Since(t0);
  if (!image.ok()) {
    *error = image.status().ToString();
    return false;
  }
  out->cache_hit = log.find("cache hit") != std::string::npos;
  out->handoff_ms = out->handoff_bytes = 0;
  for (const char* side : {"hand-off: wrote ", "hand-off: read "}) {
    size_t at = log.find(side);
    double bytes = 0, ms = 0;
    if (at != std::string::npos &&
        std::sscanf(log.c_str() + at + std::strlen(side), "%lf bytes of bytecode in %lf ms", &bytes, &ms) == 2) {
      out->handoff_ms += ms;
      out->handoff_bytes = bytes;
    }
  }
  auto program = tessera::Program::Create({device}, std::move(*image));
  if (!program.ok()) {
    *error = program.status().ToString();
    return false;
  }
  out->program = std::move(*program);
  const tessera::ProgramImage& im = out->program.image();
  for (const tessera::PlanStep& s : im.steps)
    if (s.kind == tessera::PlanStep::kLaunch) {
      out->kernel = s.kernel;
      out->grid[0] = s.grid.x, out->grid[1] = s.grid.y, out->grid[2] = s.grid.z;
      out->group[0] = s.group_size.x, out->group[1] = s.group_size.y, out->group[2] = s.group_size.z;
      break;
    }
  out->output.clear();
  out->shapes.clear();
  out->dtypes.clear();
  for (const tessera::ParamSpec& p : im.params) {
    out->output.push_back(p.role == tessera::ParamRole::kOutput);
    out->shapes.push_back(p.shape);
    out->dtypes.push_back(p.dtype);
  }
  return true;
}

bool CompileGraphIRDirect(const std::string& text, const IrCompileOptions& options, double* ms,
                          bool* cache_hit, std::string* error) {
  static mlir::MLIRContext* context = [] {
    mlir::DialectRegistry registry;
    tessera::registerAllDialects(registry);
    auto* c = new mlir::MLIRContext(registry);
    c->disableMultithreading();
    return c;
  }();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic& d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  const auto t0 = std::chrono::steady_clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, context);
  if (!module) {
    *error = "parse failed: " + diagnostics;
    return false;
  }
  tessera::cpu::CompileOptions opts;
  opts.use_cache = options.use_cache;
  opts.cache_dir = options.cache_dir;
  auto compiled = tessera::cpu::compileForCPU(*module, opts);
  *ms = Since(t0);
  if (mlir::failed(compiled)) {
    *error = "compile failed: " + diagnostics;
    return false;
  }
  *cache_hit = compiled->cache_hit;
  return true;
}

bool CompileTileIRForVulkan(const std::string& text, const std::string& kernel, SpirvKernel* out,
                            std::string* error) {
  tessera::ProgramCompileOptions co;
  co.target = "vulkan";
  co.function = kernel;
  const auto t0 = std::chrono::steady_clock::now();
  auto image = tessera::CompileProgramImage(tessera::ProgramSource::Text(text, "<bench>"), co);
  out->compile_ms = Since(t0);
  if (!image.ok()) {
    *error = image.status().ToString();
    return false;
  }
  const tessera::ExecutableImage& e = image->executables.front();
  std::vector<tessera::ArchiveEntry> entries;
  if (std::string why = tessera::ReadKernelArchive(e.data.data(), e.data.size(), &entries); !why.empty()) {
    *error = "the vulkan compiler returned " + e.format + ": " + why;
    return false;
  }
  const tessera::PlanStep& s = image->steps.front();
  out->name = s.kernel;
  for (const tessera::ArchiveEntry& a : entries)
    if (a.name == s.kernel) {
      out->words.resize(a.data.size() / 4);
      std::memcpy(out->words.data(), a.data.data(), out->words.size() * 4);
    }
  if (out->words.empty()) {
    *error = "no SPIR-V module for kernel " + s.kernel;
    return false;
  }
  out->grid[0] = s.grid.x, out->grid[1] = s.grid.y, out->grid[2] = s.grid.z;
  out->group[0] = s.group_size.x, out->group[1] = s.group_size.y, out->group[2] = s.group_size.z;
  return true;
}

}  // namespace tessera_bench
