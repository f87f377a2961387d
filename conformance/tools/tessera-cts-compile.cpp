// tessera-cts-compile: compiles one Tile IR program (examples/*.mlir) into
// the conformance suite's Tile IR kernel modules at build time.
//
//   tessera-cts-compile PROGRAM.mlir --kernel NAME --elf-native OUT.so
//                       [--spirv OUT.spv] [--cache-dir DIR]
//
// --elf-native: the cpu plugin's format (tessera::cpu::compileForCPU, for
// the host CPU), copied to OUT.so.  --spirv: the kernel's SPIR-V module
// (tessera::spv::compileForVulkan), entry point NAME.  Exit 0 on success, 1
// on any error (with the MLIR diagnostics on stderr).
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "tessera/InitAll.h"
#include "tessera/cpu/Compiler.h"
#include "tessera/Conversion/TileToSPIRV/Passes.h"

namespace {
int fail(const std::string& why) {
  std::fprintf(stderr, "tessera-cts-compile: %s\n", why.c_str());
  return 1;
}
}  // namespace

int main(int argc, char** argv) {
  std::string program, kernel, so_out, spv_out, cache_dir;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (s == "--kernel" && v) kernel = v, ++i;
    else if (s == "--elf-native" && v) so_out = v, ++i;
    else if (s == "--spirv" && v) spv_out = v, ++i;
    else if (s == "--cache-dir" && v) cache_dir = v, ++i;
    else if (!s.empty() && s[0] != '-' && program.empty()) program = s;
    else return fail("usage: tessera-cts-compile PROGRAM.mlir --kernel NAME "
                     "--elf-native OUT.so [--spirv OUT.spv] [--cache-dir DIR]");
  }
  if (program.empty() || kernel.empty() || (so_out.empty() && spv_out.empty()))
    return fail("a program, --kernel and an output are required");

  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  mlir::registerAllPasses();
  tessera::registerAllPasses();
  mlir::MLIRContext context(registry);
  llvm::SourceMgr source_mgr;
  mlir::SourceMgrDiagnosticHandler diag(source_mgr, &context);
  std::string err;
  auto file = mlir::openInputFile(program, &err);
  if (!file) return fail(err);
  source_mgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(source_mgr, &context);
  if (!module) return fail(program + ": invalid program");

  if (!so_out.empty()) {
    tessera::cpu::CompileOptions options;
    options.cache_dir = cache_dir;
    options.use_cache = false;  // a build step: always compile afresh
    auto compiled = tessera::cpu::compileForCPU(*module, options);
    if (mlir::failed(compiled)) return fail(program + ": cpu compilation failed");
    bool found = false;
    for (const auto& k : compiled->kernels) found |= k.name == kernel;
    if (!found) return fail(program + ": no kernel named " + kernel);
    {
      std::error_code ec;
      llvm::raw_fd_ostream out(so_out, ec);
      if (ec) return fail("writing " + so_out + ": " + ec.message());
      out << compiled->image;
    }
  }
  if (!spv_out.empty()) {
    std::vector<tessera::spv::VulkanKernel> kernels;
    if (mlir::failed(tessera::spv::compileForVulkan(*module, &kernels)))
      return fail(program + ": SPIR-V compilation failed");
    const tessera::spv::VulkanKernel* vk = nullptr;
    for (const auto& k : kernels)
      if (k.name == kernel) vk = &k;
    if (!vk) return fail(program + ": no SPIR-V kernel named " + kernel);
    std::ofstream out(spv_out, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(vk->spirv.data()),
              static_cast<std::streamsize>(vk->spirv.size() * sizeof(uint32_t)));
    if (!out) return fail("writing " + spv_out);
  }
  return 0;
}
