// The IR front end and the lowering pipelines: the input is MLIR text
// (Graph, Schedule or Tile IR, as the examples/ and tessera-run take it).
// It is parsed and verified with every Tessera dialect, then lowered as the
// plugins' compilers lower it, each on its own clone of the module:
//   - the cpu code generator (plugins/cpu/compiler/lib/Compiler.cpp):
//     Graph IR (or Schedule IR on tensors) through buildGraphToLoopsPipeline,
//     a Tile IR kernel through buildTileToLoopsPipeline; then
//     buildLoopsToLLVMPipeline;
//   - the GPU path: buildGpuGraphPipeline (Graph IR -> Tile IR kernels and
//     launch plans, what cuda/hip/vulkan/level_zero take), then
//     spv::compileForVulkan (Tile IR -> SPIR-V, serialized) on the result,
//     or on the input when it is Tile IR already.
// A failing pass is an answer (a diagnostic), not a finding; a crash, a
// sanitizer report, a hang or an uncaught exception is.
//
// MLIR's parser recurses on nesting (regions, types, attributes): an input
// nested deeper than kMaxDepth is skipped, or the fuzzer finds that known
// stack overflow first (issue 17).
#include <cstring>
#include <string>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "tessera/Conversion/GraphToTile/Pipeline.h"
#include "tessera/Conversion/TileToSPIRV/Passes.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"
#include "tessera/InitAll.h"
#include "tessera/cpu/Pipeline.h"

namespace {

constexpr int kMaxDepth = 48;

bool TooDeep(const char* p, size_t n) {
  int depth = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = p[i];
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (depth > 0) --depth;
    }
  }
  return false;
}

// As Compiler.cpp decides between its two pipelines.
bool IsGraphInput(mlir::ModuleOp module) {
  bool graph = false;
  module->walk([&](mlir::Operation* op) {
    if (llvm::isa<tessera::graph::GraphDialect>(op->getDialect()) ||
        llvm::isa<tessera::schedule::FlashAttentionOp, tessera::schedule::TileOp>(op))
      graph = true;
    if (auto f = llvm::dyn_cast<mlir::func::FuncOp>(op))
      if (llvm::any_of(f.getArgumentTypes(), [](mlir::Type t) { return t.isa<mlir::TensorType>(); }) ||
          llvm::any_of(f.getResultTypes(), [](mlir::Type t) { return t.isa<mlir::TensorType>(); }))
        graph = true;
  });
  return graph;
}

void CpuPipeline(mlir::ModuleOp input, bool graph) {
  mlir::OwningOpRef<mlir::ModuleOp> m(input.clone());
  mlir::PassManager pm(m->getContext());
  if (graph) {
    if (mlir::failed(tessera::cpu::buildGraphToLoopsPipeline(pm))) return;
  } else {
    tessera::cpu::buildTileToLoopsPipeline(pm);
  }
  if (mlir::failed(pm.run(*m))) return;
  mlir::PassManager llvmPm(m->getContext());
  tessera::cpu::buildLoopsToLLVMPipeline(llvmPm);
  (void)llvmPm.run(*m);
}

void GpuPipeline(mlir::ModuleOp input, bool graph) {
  mlir::OwningOpRef<mlir::ModuleOp> m(input.clone());
  if (graph) {
    mlir::PassManager pm(m->getContext());
    if (mlir::failed(tessera::conversion::buildGpuGraphPipeline(pm, "vulkan"))) return;
    if (mlir::failed(pm.run(*m))) return;
  }
  std::vector<tessera::spv::VulkanKernel> kernels;
  (void)tessera::spv::compileForVulkan(*m, &kernels);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // NUL-terminated, as every caller's text is (a file through SourceMgr, a
  // std::string): MLIR's lexer reads the terminator.
  const std::string source(reinterpret_cast<const char*>(data), size);
  if (TooDeep(source.data(), size)) return 0;
  static mlir::DialectRegistry* registry = [] {
    auto* r = new mlir::DialectRegistry();
    tessera::registerAllDialects(*r);
    return r;
  }();
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(false);
  // Diagnostics are answers: swallowed.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic&) { return mlir::success(); });
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, config);
  if (!module) return 0;  // parse or verification failed
  const bool graph = IsGraphInput(*module);
  CpuPipeline(*module, graph);
  GpuPipeline(*module, graph);
  return 0;
}
