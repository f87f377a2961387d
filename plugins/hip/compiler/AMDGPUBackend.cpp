//===- AMDGPUBackend.cpp - LLVM IR -> AMDGPU object -> code object --------===//
//
// LLVM 16's AMDGPU back end (amdgcn-amd-amdhsa) writes a relocatable ELF
// per kernel; `ld.lld -shared` (lld-16, a child process: its library form
// keeps global state that another compiler part in the same process also
// uses) turns it into the code object hipModuleLoadData takes.  ROCm's
// device libraries are bitcode (rocm-device-libs), linked only when a
// kernel calls one of their functions.
//===----------------------------------------------------------------------===//
#include "AMDGPUBackend.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "isa_version.hpp"
#include "run_tool.hpp"

namespace tessera::hip {
namespace {

bool IsDir(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string FindDeviceLibs(const std::string &configured) {
  if (!configured.empty()) return IsDir(configured) ? configured : "";
  std::vector<std::string> dirs;
  if (const char *rocm = std::getenv("ROCM_PATH")) dirs.push_back(std::string(rocm) + "/amdgcn/bitcode");
  dirs.push_back("/opt/rocm/amdgcn/bitcode");
  dirs.push_back("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
  for (const std::string &d : dirs)
    if (IsDir(d + "/") && ::access((d + "/ocml.bc").c_str(), R_OK) == 0) return d;
  return "";
}

bool CallsDeviceLibs(const llvm::Module &m) {
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && (f.getName().startswith("__ocml_") || f.getName().startswith("__ockl_")))
      return true;
  return false;
}

// `@__oclc_ISA_version = <version>`, what oclc_isa_version_<isa>.bc holds,
// for a chipset whose file the installed device libraries lack
// (isa_version.hpp says why).
std::unique_ptr<llvm::Module> IsaVersionControl(const llvm::Module &module, int version) {
  auto control = std::make_unique<llvm::Module>("oclc_isa_version", module.getContext());
  control->setTargetTriple(module.getTargetTriple());
  control->setDataLayout(module.getDataLayout());
  llvm::Type *i32 = llvm::Type::getInt32Ty(module.getContext());
  auto *gv = new llvm::GlobalVariable(*control, i32, /*isConstant=*/true,
                                      llvm::GlobalValue::LinkOnceODRLinkage,
                                      llvm::ConstantInt::get(i32, version), "__oclc_ISA_version",
                                      nullptr, llvm::GlobalValue::NotThreadLocal,
                                      /*AddressSpace=*/4);  // constant memory, as ROCm's
  gv->setVisibility(llvm::GlobalValue::ProtectedVisibility);
  gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Local);
  gv->setAlignment(llvm::Align(4));
  return control;
}

// The device libraries the way clang links them for HIP: ocml and ockl,
// then the oclc_* controls (no finite-only, no unsafe math, no DAZ,
// correctly rounded sqrt, the chipset's ISA version, its wavefront size).
bool LinkDeviceLibs(llvm::Module &module, const AmdgpuTarget &target, const std::string &dir,
                    std::string *error) {
  std::string isa = target.chipset.substr(3);  // "90a"
  std::vector<std::string> files = {
      "ocml.bc", "ockl.bc", "oclc_finite_only_off.bc", "oclc_unsafe_math_off.bc",
      "oclc_daz_opt_off.bc", "oclc_correctly_rounded_sqrt_on.bc", "oclc_isa_version_" + isa + ".bc",
      target.wavefront == 64 ? "oclc_wavefrontsize64_on.bc" : "oclc_wavefrontsize64_off.bc",
      "oclc_abi_version_400.bc"};
  for (const std::string &f : files) {
    const std::string path = dir + "/" + f;
    if (::access(path.c_str(), R_OK) != 0) {
      if (f.rfind("oclc_abi_version", 0) == 0) continue;  // older ROCm has none
      const int version = amdgpu_isa_version(target.chipset);
      if (f.rfind("oclc_isa_version_", 0) == 0 && version > 0) {
        if (llvm::Linker::linkModules(module, IsaVersionControl(module, version),
                                      llvm::Linker::Flags::LinkOnlyNeeded)) {
          *error = "linking the ISA version control for " + target.chipset + " failed";
          return false;
        }
        continue;
      }
      *error = "ROCm device library " + path + " is missing (rocm-device-libs for " + target.chipset + ")";
      return false;
    }
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(path, diag, module.getContext());
    if (!lib) {
      *error = "cannot read " + path + ": " + diag.getMessage().str();
      return false;
    }
    lib->setTargetTriple(module.getTargetTriple());
    lib->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded)) {
      *error = "linking " + path + " failed";
      return false;
    }
  }
  return true;
}

}  // namespace

AmdgpuTarget ParseAmdgpuTarget(const std::string &arch) {
  AmdgpuTarget t;
  t.chipset = arch;
  // gfx9 (GCN / CDNA) runs 64-lane wavefronts; gfx10 and later (RDNA)
  // default to wave32.
  t.wavefront = arch.rfind("gfx9", 0) == 0 ? 64 : 32;
  return t;
}

bool EmitAmdgpu(llvm::Module &module, const AmdgpuTarget &target, const std::string &entry,
                int64_t lanes, const std::string &deviceLibs, const std::string &emit,
                AmdgpuOutput *out, std::string *error) {
  static std::once_flag init;
  std::call_once(init, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
  const std::string triple = "amdgcn-amd-amdhsa";
  std::string err;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!t) {
    *error = "LLVM has no AMDGPU target: " + err;
    return false;
  }
  llvm::TargetOptions to;
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      triple, target.chipset, target.wavefront == 32 ? "+wavefrontsize32" : "", to, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOpt::Aggressive));
  if (!tm) {
    *error = "LLVM cannot target " + target.chipset;
    return false;
  }
  module.setTargetTriple(triple);
  module.setDataLayout(tm->createDataLayout());
  if (CallsDeviceLibs(module)) {
    const std::string dir = FindDeviceLibs(deviceLibs);
    if (dir.empty()) {
      *error = deviceLibs.empty()
                   ? "the kernel calls ROCm math functions (__ocml_*), and ROCm's device libraries "
                     "were not found ($ROCM_PATH/amdgcn/bitcode, /opt/rocm/amdgcn/bitcode, "
                     "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode): apt-get install "
                     "rocm-device-libs, or name the folder with the compile option device_libs=DIR"
                   : "device_libs='" + deviceLibs + "' is not a folder";
      return false;
    }
    if (!LinkDeviceLibs(module, target, dir, error)) return false;
  }
  for (llvm::Function &f : module) {
    if (f.isDeclaration()) continue;
    if (f.getName() == entry) {
      // The launch's lanes per group: the register allocator may use all
      // the registers that many lanes leave (the default assumes 1024).
      f.addFnAttr("amdgpu-flat-work-group-size", "1," + std::to_string(lanes));
    } else {
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  }
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
  if (emit == "llvm") {
    llvm::raw_string_ostream os(out->llvm);
    module.print(os, nullptr);
    return true;
  }
  llvm::SmallString<0> bytes;
  {
    llvm::raw_svector_ostream os(bytes);
    llvm::legacy::PassManager codegen;
    const auto kind = emit == "asm" ? llvm::CGFT_AssemblyFile : llvm::CGFT_ObjectFile;
    if (tm->addPassesToEmitFile(codegen, os, nullptr, kind)) {
      *error = "the AMDGPU back end cannot emit code for " + target.chipset;
      return false;
    }
    codegen.run(module);
  }
  (emit == "asm" ? out->asm_ : out->object) = std::string(bytes.str());
  return true;
}

std::string LinkCodeObject(const std::string &object, std::string *error) {
  std::vector<std::string> dirs;
  if (const char *path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      size_t colon = p.find(':', start);
      if (colon == std::string::npos) colon = p.size();
      dirs.push_back(p.substr(start, colon - start));
      start = colon + 1;
    }
  }
  dirs.push_back("/usr/lib/llvm-16/bin");
  std::string lld = plugin_support::FindExecutable("ld.lld-16", dirs);
  if (lld.empty()) lld = plugin_support::FindExecutable("ld.lld", {"/usr/lib/llvm-16/bin"});
  if (lld.empty()) {
    *error = "no ld.lld-16 to link the code object (apt-get install lld-16)";
    return "";
  }
  plugin_support::TempDir dir;
  if (!dir.ok()) {
    *error = "cannot create a temporary folder for ld.lld";
    return "";
  }
  const std::string in = dir.file("kernel.o"), out = dir.file("kernel.hsaco");
  if (!plugin_support::WriteFile(in, object)) {
    *error = "cannot write " + in;
    return "";
  }
  std::string output;
  const int status = plugin_support::RunTool({lld, "-shared", "-o", out, in}, &output);
  if (status != 0) {
    *error = status < 0 ? output : "ld.lld -shared failed: " + output;
    return "";
  }
  std::string why;
  std::string hsaco = plugin_support::ReadFile(out, uint64_t{1} << 30, &why);  // Executable_Load's limit
  if (hsaco.empty()) *error = why.empty() ? "ld.lld wrote no code object" : "ld.lld's code object: " + why;
  return hsaco;
}

}  // namespace tessera::hip
