// Graph IR text -> elf-native .so through tessera::cpu::compileForCPU (the
// same library, pipeline and cache as tessera-run); Tile IR text -> SPIR-V
// through tessera::spv::compileForVulkan (as tessera-run on vulkan).
#include "ir_compile.hpp"

#include <chrono>
#include <memory>

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "tessera/InitAll.h"
#include "tessera/cpu/Compiler.h"
#include "tessera/Conversion/TileToSPIRV/Passes.h"

namespace tessera_bench {

namespace {

// One context for the process (dialects load once, as in a long-running
// compiler); every call parses and compiles from the text.
mlir::MLIRContext* Context() {
  static mlir::MLIRContext* context = [] {
    mlir::DialectRegistry registry;
    tessera::registerAllDialects(registry);
    mlir::registerAllPasses();
    tessera::registerAllPasses();
    auto* c = new mlir::MLIRContext(registry);
    c->disableMultithreading();
    return c;
  }();
  return context;
}

// Collects the context's diagnostics while it lives (one compile), so that
// an error message can carry them.
struct Diagnostics {
  explicit Diagnostics(mlir::MLIRContext* c)
      : context(c), os(buffer), handler(c, [this](mlir::Diagnostic& d) {
          os << d << "\n";
          return mlir::success();
        }) {}
  std::string text() { return os.str(); }
  mlir::MLIRContext* context;
  std::string buffer;
  llvm::raw_string_ostream os;
  mlir::ScopedDiagnosticHandler handler;
};

}  // namespace

bool CompileTileIRForVulkan(const std::string& text, const std::string& kernel,
                            SpirvKernel* out, std::string* error) {
  Diagnostics diag(Context());
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, diag.context);
  if (!module) {
    *error = "parse failed: " + diag.text();
    return false;
  }
  std::vector<tessera::spv::VulkanKernel> kernels;
  const auto t0 = std::chrono::steady_clock::now();
  if (mlir::failed(tessera::spv::compileForVulkan(*module, &kernels)) || kernels.empty()) {
    *error = "SPIR-V compilation failed: " + diag.text();
    return false;
  }
  out->compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const tessera::spv::VulkanKernel* k = &kernels.front();
  for (const auto& c : kernels)
    if (c.name == kernel) k = &c;
  if (!kernel.empty() && k->name != kernel) {
    *error = "no Tile IR kernel named " + kernel;
    return false;
  }
  out->name = k->name;
  out->words = k->spirv;
  for (int i = 0; i < 3; ++i) {
    out->grid[i] = static_cast<uint32_t>(k->grid[i]);
    out->group[i] = static_cast<uint32_t>(k->groupSize[i]);
  }
  return true;
}

bool CompileGraphIR(const std::string& text, const IrCompileOptions& options,
                    IrProgram* out, std::string* error) {
  Diagnostics diag(Context());
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, diag.context);
  if (!module) {
    *error = "parse failed: " + diag.text();
    return false;
  }
  tessera::cpu::CompileOptions opts;
  opts.use_cache = options.use_cache;
  opts.cache_dir = options.cache_dir;
  auto compiled = tessera::cpu::compileForCPU(*module, opts);
  if (mlir::failed(compiled) || compiled->kernels.empty()) {
    *error = "compile failed: " + diag.text();
    return false;
  }
  const auto& k = compiled->kernels.front();
  out->so_path = compiled->so_path;
  out->kernel = k.name;
  for (int i = 0; i < 3; ++i) {
    out->grid[i] = k.grid[i];
    out->group[i] = k.group_size[i];
  }
  out->output.clear();
  out->shapes.clear();
  out->dtypes.clear();
  for (const auto& a : k.args) {
    out->output.push_back(a.output);
    out->shapes.push_back(a.shape);
    out->dtypes.push_back(a.dtype);
  }
  out->compile_ms = compiled->compile_ms;
  out->cache_hit = compiled->cache_hit;
  return true;
}

}  // namespace tessera_bench
