//===- PTXBackend.cpp - LLVM IR -> PTX (NVPTX) -> cubin (ptxas) -----------===//
//
// LLVM 16's NVPTX back end writes PTX 7.8 at most, for sm_90 at most; the
// toolkit's ptxas (CUDA 13 here) assembles it for the device.  libdevice
// (the toolkit's bitcode math library, nvvm/libdevice/libdevice.10.bc) is
// linked only when a kernel calls it.  ptxas runs as a child process on
// files in a private temporary folder: there is no in-process PTX compiler
// in the toolkit we may link (no libnvptxcompiler_static.a here, and vendor
// libraries are dlopen'ed, never linked).
//===----------------------------------------------------------------------===//
#include "PTXBackend.h"

#include "run_tool.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace tessera::cuda {
namespace {

bool IsExecutable(const std::string &path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }
bool IsFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string FindLibdevice(const std::string &configured) {
  if (!configured.empty()) return IsFile(configured) ? configured : "";
  std::vector<std::string> candidates;
  if (const char *home = std::getenv("CUDA_HOME"))
    candidates.push_back(std::string(home) + "/nvvm/libdevice/libdevice.10.bc");
  candidates.push_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  candidates.push_back("/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc");
  for (const std::string &c : candidates)
    if (IsFile(c)) return c;
  return "";
}

bool CallsLibdevice(const llvm::Module &m) {
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && f.getName().startswith("__nv_")) return true;
  return false;
}

}  // namespace

PtxTarget ParsePtxTarget(const std::string &arch) {
  PtxTarget t;
  t.arch = arch;
  t.llvmCpu = arch;
  if (!arch.empty() && arch.back() == 'a') t.llvmCpu.pop_back();
  if (t.llvmCpu.rfind("sm_", 0) == 0) t.smVersion = std::atoi(t.llvmCpu.c_str() + 3);
  return t;
}

std::string EmitPtx(llvm::Module &module, const PtxTarget &target, const std::string &entry,
                    const std::string &libdevice, std::string *error) {
  static std::once_flag init;
  std::call_once(init, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  const std::string triple = "nvptx64-nvidia-cuda";
  std::string err;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!t) {
    *error = "LLVM has no NVPTX target: " + err;
    return "";
  }
  llvm::TargetOptions to;
  // PTX 7.8: the newest LLVM 16 writes; every arch we offer accepts it.
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      triple, target.llvmCpu, "+ptx78", to, std::nullopt, std::nullopt, llvm::CodeGenOpt::Aggressive));
  if (!tm) {
    *error = "LLVM cannot target " + target.llvmCpu;
    return "";
  }
  module.setTargetTriple(triple);
  module.setDataLayout(tm->createDataLayout());

  if (CallsLibdevice(module)) {
    std::string path = FindLibdevice(libdevice);
    if (path.empty()) {
      *error = libdevice.empty()
                   ? "the kernel calls CUDA math functions (__nv_*), and libdevice.10.bc was not "
                     "found ($CUDA_HOME/nvvm/libdevice, /usr/local/cuda/nvvm/libdevice): install "
                     "the CUDA toolkit, or name the file with the compile option libdevice=PATH"
                   : "libdevice='" + libdevice + "' is not a file";
      return "";
    }
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(path, diag, module.getContext());
    if (!lib) {
      *error = "cannot read " + path + ": " + diag.getMessage().str();
      return "";
    }
    lib->setTargetTriple(triple);
    lib->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded)) {
      *error = "linking " + path + " failed";
      return "";
    }
    // libdevice branches on __nvvm_reflect("__CUDA_FTZ"): no flush to zero,
    // as CUDA C++ compiles by default.
    module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  }
  // Shared arrays 16-byte aligned: cp.async of 16 bytes and vector
  // accesses need it (MLIR's workgroup attributions carry the element's).
  for (llvm::GlobalVariable &g : module.globals())
    if (g.getAddressSpace() == 3 && g.getAlign().valueOrOne() < llvm::Align(16))
      g.setAlignment(llvm::Align(16));
  // Everything but the kernel's entry is internal, so -O3 drops what the
  // kernel does not call (most of libdevice).
  for (llvm::Function &f : module)
    if (!f.isDeclaration() && f.getName() != entry) f.setLinkage(llvm::GlobalValue::InternalLinkage);

  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(module, mam);
  }
  llvm::SmallString<0> text;
  {
    llvm::raw_svector_ostream os(text);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CGFT_AssemblyFile)) {
      *error = "the NVPTX back end cannot emit PTX for " + target.llvmCpu;
      return "";
    }
    codegen.run(module);
  }
  std::string ptx(text.str());
  if (target.arch != target.llvmCpu) {
    // sm_90a: ".target sm_90a", which PTX 8.0 introduced (LLVM 16 writes
    // 7.8); the instructions are the same.
    auto raise = [&](const std::string &from, const std::string &to) {
      size_t at = ptx.find(from);
      if (at != std::string::npos) ptx.replace(at, from.size(), to);
    };
    raise(".target " + target.llvmCpu, ".target " + target.arch);
    raise(".version 7.8", ".version 8.0");
  }
  return ptx;
}

void AnnotateGroupSize(llvm::Module &module, const std::string &entry, const std::array<int64_t, 3> &group) {
  llvm::Function *f = module.getFunction(entry);
  if (!f) return;
  llvm::LLVMContext &ctx = module.getContext();
  llvm::NamedMDNode *annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
  const char *names[3] = {"maxntidx", "maxntidy", "maxntidz"};
  for (int d = 0; d < 3; ++d) {
    llvm::Metadata *ops[] = {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, names[d]),
                             llvm::ConstantAsMetadata::get(
                                 llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), static_cast<uint64_t>(group[d])))};
    annotations->addOperand(llvm::MDNode::get(ctx, ops));
  }
}

std::string FindPtxas(const std::string &configured) {
  if (!configured.empty()) return IsExecutable(configured) ? configured : "";
  std::vector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME")) dirs.push_back(std::string(home) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  if (const char *path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) dirs.push_back(dir);
  }
  return plugin_support::FindExecutable("ptxas", dirs);
}

std::string RunPtxas(const std::string &ptxas, const std::string &ptx, const std::string &arch,
                     int optLevel, bool verbose, std::string *log, std::string *error) {
  plugin_support::TempDir dir;
  if (!dir.ok()) {
    *error = "cannot create a temporary folder for ptxas";
    return "";
  }
  const std::string in = dir.file("kernel.ptx"), out = dir.file("kernel.cubin");
  if (!plugin_support::WriteFile(in, ptx)) {
    *error = "cannot write " + in;
    return "";
  }
  std::vector<std::string> argv = {ptxas, "-arch=" + arch, "-O" + std::to_string(optLevel), "-o", out, in};
  if (verbose) argv.insert(argv.begin() + 1, "-v");
  std::string output;
  const int status = plugin_support::RunTool(argv, &output);
  if (status != 0) {
    *error = status < 0 ? output : "ptxas -arch=" + arch + " rejected the PTX: " + output;
    return "";
  }
  *log = output;
  std::string why;
  std::string cubin = plugin_support::ReadFile(out, uint64_t{1} << 30, &why);  // Executable_Load's limit
  if (cubin.empty()) *error = why.empty() ? "ptxas wrote no cubin" : "ptxas's cubin: " + why;
  return cubin;
}

}  // namespace tessera::cuda
