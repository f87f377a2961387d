// Graph IR text -> elf-native .so through tessera::cpu::compileForCPU (the
// same library, pipeline and cache as tessera-run).
#include "ir_compile.hpp"

#include <memory>

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "tessera/InitAll.h"
#include "tessera/Target/CPU/Compiler.h"

namespace tessera_bench {

bool CompileGraphIR(const std::string& text, const IrCompileOptions& options,
                    IrProgram* out, std::string* error) {
  // One context for the process (dialects load once, as in a long-running
  // compiler); every call parses and compiles from the text.
  static mlir::MLIRContext* context = [] {
    mlir::DialectRegistry registry;
    tessera::registerAllDialects(registry);
    mlir::registerAllPasses();
    tessera::registerAllPasses();
    auto* c = new mlir::MLIRContext(registry);
    c->disableMultithreading();
    return c;
  }();
  std::string diag;
  llvm::raw_string_ostream diag_os(diag);
  mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic& d) {
    diag_os << d << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, context);
  if (!module) {
    *error = "parse failed: " + diag_os.str();
    return false;
  }
  tessera::cpu::CompileOptions opts;
  opts.use_cache = options.use_cache;
  opts.cache_dir = options.cache_dir;
  auto compiled = tessera::cpu::compileForCPU(*module, opts);
  if (mlir::failed(compiled) || compiled->kernels.empty()) {
    *error = "compile failed: " + diag_os.str();
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
