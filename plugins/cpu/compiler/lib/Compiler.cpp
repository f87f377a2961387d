//===- Compiler.cpp - Tessera IR -> elf-native shared object --------------===//
#include "tessera/cpu/Compiler.h"
#include "tessera/Target/ArgumentAccess.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "lld/Common/CommonLinkerContext.h"
#include "lld/Common/Driver.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/SubtargetFeature.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "build_id.hpp"
#include "KernelCache.h"
#include "KernelSignature.h"
#include "file_io.hpp"
#include "plugin_log.hpp"
#include "llvm/Target/TargetMachine.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"
#include "tessera/Dialect/Tile/IR/Tile.h"
#include "tessera/cpu/Passes.h"

using namespace mlir;
using namespace tessera::cpu;
namespace fileio = tessera::plugin_support;

namespace {

constexpr const char *kCompilerVersion = "tessera-cpu-6-plugin";

// The build of the object this code generator is linked into (its file's
// size and modification time): part of every cache key, so that a rebuilt
// compiler never loads kernels an older build cached under the same version.
const std::string &compilerBuildId() {
  static const std::string id = tessera::plugin_support::BuildIdOfObjectHolding(
      reinterpret_cast<const void *>(&compilerBuildId));
  return id;
}

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (t.isIndex()) return "i64";
  t.print(os);
  return os.str();
}

/// Reads the kernels' launch descriptions off the loop-level module.
std::vector<KernelInfo> collectKernels(ModuleOp m) {
  std::vector<KernelInfo> out;
  m.walk([&](func::FuncOp f) {
    auto d = f->getAttrOfType<DictionaryAttr>(kKernelAttr);
    if (!d) return;
    KernelInfo k;
    k.name = f.getName().str();
    int64_t nIn = d.getAs<IntegerAttr>("inputs").getInt();
    int64_t nOut = d.getAs<IntegerAttr>("outputs").getInt();
    k.graph = d.get("graph") != nullptr;
    if (auto sm = d.getAs<IntegerAttr>("shared_memory")) k.shared_memory = static_cast<uint64_t>(sm.getInt());
    auto grid = d.getAs<DenseI64ArrayAttr>("grid").asArrayRef();
    auto gs = d.getAs<DenseI64ArrayAttr>("group_size").asArrayRef();
    for (int i = 0; i < 3; ++i) {
      k.grid[i] = static_cast<uint32_t>(grid[i]);
      k.group_size[i] = static_cast<uint32_t>(gs[i]);
    }
    // Graph IR kernels list their element types (an fp8 buffer is an i8 memref).
    auto dtypes = d.getAs<ArrayAttr>("dtypes");
    // Scratch buffers after the outputs (ScheduleToCPU: "scratch").
    int64_t nScratch = 0;
    if (auto sc = d.getAs<IntegerAttr>("scratch")) nScratch = sc.getInt();
    for (int64_t i = 0; i < nIn + nOut + nScratch; ++i) {
      KernelArgInfo a;
      Type t = f.getArgumentTypes()[i];
      if (auto mt = t.dyn_cast<MemRefType>()) {
        a.dtype = typeName(dtypes && i < (int64_t)dtypes.size()
                               ? dtypes[i].cast<TypeAttr>().getValue()
                               : mt.getElementType());
        a.shape.assign(mt.getShape().begin(), mt.getShape().end());
        for (int64_t &d : a.shape)
          if (d == kDynamicExtent) d = ShapedType::kDynamic;  // memref<?xT>: any length
      } else {
        a.buffer = false;
        a.dtype = typeName(t);
      }
      a.output = i >= nIn && i < nIn + nOut;
      if (a.buffer && !f.isExternal()) a.access = tessera::target::ArgumentAccess(f.getArgument(i));
      if (i >= nIn + nOut) a.access = TS_PARAM_READ | TS_PARAM_WRITE | TS_PARAM_SCRATCH;
      k.args.push_back(a);
    }
    out.push_back(k);
  });
  return out;
}

std::mutex gMutex;
// Programs found or stored on disk in this process, without their image (the
// file is the cache): a hit re-reads the .so and checks it is still the one
// recorded, so a file replaced behind the process's back is never loaded.
struct MemoryEntry {
  CompiledProgram program;
  cache::ImageId id;
};
std::map<std::string, MemoryEntry> gMemoryCache;

// Where a cache folder that cannot be written was already reported: one
// warning per folder and process.
std::set<std::string> gUnwritableDirs;

// "" when files can be created in `dir` (created if missing), else why not.
std::string checkWritable(const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return "cannot create it: " + ec.message();
  // create_directories takes an existing file of that name for the folder.
  if (!llvm::sys::fs::is_directory(dir)) return "it is not a folder";
  if (std::error_code ec = llvm::sys::fs::access(dir, llvm::sys::fs::AccessMode::Write))
    return "cannot write into it: " + ec.message();
  return "";
}

/// Does the LLVM cpu `cpu` have AVX-512F?  (The caller answers for the host
/// from its features, which also say whether the OS saves zmm state.)
bool cpuHasAvx512(const std::string &cpu) {
  std::string triple = llvm::sys::getProcessTriple(), err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) return false;
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, cpu, ""));
  return sti && sti->checkFeatures("+avx512f");
}

}  // namespace

FailureOr<CompiledProgram> tessera::cpu::compileForCPU(ModuleOp input,
                                                       const CompileOptions &opts) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  static std::once_flag llvmInit;
  std::call_once(llvmInit, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  std::string cpu = opts.cpu.empty() ? llvm::sys::getHostCPUName().str() : opts.cpu;
  // A cpu LLVM does not know would be "ignored" with a note and then abort
  // code generation (LLVM ERROR: 64-bit code requested on a subtarget that
  // doesn't support it): refuse it here, naming it.
  if (!opts.cpu.empty()) {
    std::string triple = llvm::sys::getProcessTriple(), err;
    if (const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, err)) {
      std::unique_ptr<llvm::MCSubtargetInfo> sti(t->createMCSubtargetInfo(triple, "", ""));
      if (sti && !sti->isCPUStringValid(opts.cpu)) {
        emitError(input.getLoc()) << "'" << opts.cpu << "' is not a CPU LLVM 16 knows for " << triple
                                  << ": give one of its names (cpu:znver3, cpu:skylake-avx512, cpu:x86-64-v3; "
                                     "`llc-16 -mcpu=help` lists them), or plain cpu for this machine's";
        return failure();
      }
    }
  }
  // Host features (an explicit cpu gets that cpu's defaults); F16C decides
  // how f16 is converted (ElementTypes.h).
  // Read once per process: it runs cpuid, and warm compiles (cache hits)
  // take well under 100 us.
  static const llvm::StringMap<bool> hostFeatures = [] {
    llvm::StringMap<bool> f;
    if (!llvm::sys::getHostCPUFeatures(f)) f.clear();
    return f;
  }();
  llvm::SubtargetFeatures features;
  if (opts.cpu.empty())
    for (auto &f : hostFeatures) features.AddFeature(f.first(), f.second);
  GraphPipelineOptions tiles = opts.tiles;
  tiles.hardwareF16 = opts.cpu.empty() && hostFeatures.lookup("f16c");
  // The matmul micro-kernel on zmm registers where the target has them.
  tiles.matmulLanes = (opts.cpu.empty() ? hostFeatures.lookup("avx512f") : cpuHasAvx512(opts.cpu)) ? 16 : 8;

  // Cache key: IR text + everything that changes the binary.
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    input->print(os, OpPrintingFlags().enableDebugInfo(false));
    os << "\n" << kCompilerVersion << " build=" << compilerBuildId() << " cpu=" << cpu << " O" << opts.opt_level
       << " tiles=" << opts.tiles.tileM << "," << opts.tiles.tileN << "," << opts.tiles.tileK
       << "," << opts.tiles.microM << "," << opts.tiles.microN
       << " attn=" << opts.tiles.attnBlockQ << "," << opts.tiles.attnBlockKV
       << " f16c=" << tiles.hardwareF16 << " lanes=" << tiles.matmulLanes << " schedule=" << opts.tiles.schedule;
  }
  std::string key = llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(text)), true).substr(0, 32);
  // Emitted text is never cached; without a cache folder the object and the
  // shared object go through a fresh temporary folder, removed afterwards.
  const bool emitting = !opts.emit.empty();
  const bool diskCache = opts.use_cache && !opts.cache_dir.empty() && !emitting;
  std::string dir = opts.cache_dir;
  SmallString<256> tempDir;
  auto removeTemp = llvm::make_scope_exit([&] {
    if (!tempDir.empty()) llvm::sys::fs::remove_directories(tempDir);
  });

  std::lock_guard<std::mutex> lock(gMutex);
  if (diskCache) {
    if (auto it = gMemoryCache.find(key); it != gMemoryCache.end()) {
      CompiledProgram p = it->second.program;
      if (cache::ReadImage(p.so_path, it->second.id, &p.image).empty()) {
        p.cache_hit = true;
        p.compile_ms = elapsed();
        return p;
      }
      gMemoryCache.erase(it);  // changed on disk: the disk lookup below judges it
    }
    CompiledProgram p;
    cache::ImageId id;
    if (cache::Load(dir, key, &p, &id)) {
      p.cache_hit = true;
      gMemoryCache[key] = {p, id};
      gMemoryCache[key].program.image.clear();
      p.compile_ms = elapsed();
      return p;
    }
  }
  // A cache folder this process cannot write (read-only, not a folder, no
  // permission) is not an error: compile into a private temporary folder,
  // with a warning. Emitted text and use_cache=false need no folder either.
  bool storeOnDisk = diskCache;
  if (storeOnDisk && !emitting) {
    if (std::string why = checkWritable(dir); !why.empty()) {
      if (gUnwritableDirs.insert(dir).second)
        tessera::plugin_support::LogWarning("cpu: the kernel cache folder " + dir + " is unusable (" +
                                            why + "): compiling without it");
      storeOnDisk = false;
    }
  }
  if (!storeOnDisk && !emitting) {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tessera-cpu", tempDir)) {
      emitError(input->getLoc()) << "cannot create a temporary folder: " << ec.message();
      return failure();
    }
    dir = std::string(tempDir);
  }

  // Tile IR kernels that declare their grid: their buffers are sized for it
  // (the exported signature then bounds the launch grid).
  std::vector<std::string> declaredGrid;
  input->walk([&](func::FuncOp f) {
    if (f->hasAttr(tessera::tile::kGridAttr)) declaredGrid.push_back(f.getName().str());
  });

  // 1. Tessera IR -> loops (one pipeline per kind of input).
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(input->clone()));
  MLIRContext *ctx = module->getContext();
  bool graph = false;
  module->walk([&](Operation *op) {
    // Schedule IR on tensors (e.g. a hand-tuned flash_attention) takes the
    // Graph IR pipeline too: graph-to-schedule leaves it as it is.
    if (isa<graph::GraphDialect>(op->getDialect()) ||
        isa<schedule::FlashAttentionOp, schedule::FlashAttentionGradOp, schedule::TileOp>(op))
      graph = true;
    // A function on tensors with nothing to compute (it returns an
    // argument) is a program too: the lowering copies.
    if (auto f = dyn_cast<func::FuncOp>(op))
      if (llvm::any_of(f.getArgumentTypes(), [](Type t) { return t.isa<TensorType>(); }) ||
          llvm::any_of(f.getResultTypes(), [](Type t) { return t.isa<TensorType>(); }))
        graph = true;
  });
  PassManager pm(ctx);
  if (graph) {
    if (failed(buildGraphToLoopsPipeline(pm, tiles)))
      return emitError(module->getLoc()) << "bad schedule options '" << tiles.schedule
                                         << "' for --tessera-graph-to-schedule";
  } else {
    buildTileToLoopsPipeline(pm);
  }
  if (failed(pm.run(*module))) return failure();
  CompiledProgram prog;
  prog.kernels = collectKernels(*module);
  if (graph) for (KernelInfo &k : prog.kernels) k.graph = true;
  if (prog.kernels.empty()) {
    emitError(module->getLoc()) << "no kernel to compile: expected a Graph IR function "
                                   "on tensors or a Tile IR kernel (tessera_tile.group_size)";
    return failure();
  }
  // 2. loops -> LLVM dialect -> LLVM IR.
  PassManager llvmPm(ctx);
  buildLoopsToLLVMPipeline(llvmPm);
  if (failed(llvmPm.run(*module))) return failure();
  DialectRegistry reg;
  registerLLVMDialectTranslation(reg);
  ctx->appendDialectRegistry(reg);
  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(*module, llvmCtx, "tessera");
  if (!llvmModule) {
    emitError(module->getLoc()) << "translation to LLVM IR failed";
    return failure();
  }
  addKernelSignatures(*llvmModule, prog.kernels, declaredGrid);
  // 3. LLVM -O3 for the host (AVX2/FMA on this machine's Zen 3), object code.
  std::string triple = llvm::sys::getProcessTriple(), err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) {
    emitError(module->getLoc()) << "no LLVM target for " << triple << ": " << err;
    return failure();
  }
  llvm::TargetOptions to;
  to.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features.getString(), to, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOpt::Aggressive));
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(triple);
  if (graph) {
    // Graph IR kernels: the generator already unrolls the micro-kernel's k
    // loop (and the register tile is fully unrolled), so LLVM's loop
    // unroller only multiplies the code: it took ~65% of `opt -O3` and made
    // loop strength reduction in the backend ~45% of codegen (mlp.mlir:
    // 2.1 s -> ~0.5 s cold compile), for no speed-up.
    llvm::PipelineTuningOptions pto;
    pto.LoopUnrolling = false;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get(), pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level = opts.opt_level >= 3   ? llvm::OptimizationLevel::O3
                                    : opts.opt_level == 2 ? llvm::OptimizationLevel::O2
                                    : opts.opt_level == 1 ? llvm::OptimizationLevel::O1
                                                          : llvm::OptimizationLevel::O0;
    llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                      ? pb.buildO0DefaultPipeline(level)
                                      : pb.buildPerModuleDefaultPipeline(level);
    mpm.run(*llvmModule, mam);
  } else {
    auto optimize = makeOptimizingTransformer(opts.opt_level, 0, tm.get());
    if (llvm::Error e = optimize(llvmModule.get())) {
      emitError(module->getLoc()) << "LLVM optimization failed: " << llvm::toString(std::move(e));
      return failure();
    }
  }
  if (emitting) {
    llvm::raw_string_ostream os(prog.emitted);
    if (opts.emit == "llvm") {
      llvmModule->print(os, nullptr);
    } else {
      llvm::SmallString<0> text;
      llvm::raw_svector_ostream asmOS(text);
      llvm::legacy::PassManager codegen;
      if (tm->addPassesToEmitFile(codegen, asmOS, nullptr, llvm::CGFT_AssemblyFile)) {
        emitError(module->getLoc()) << "the target cannot emit assembly";
        return failure();
      }
      codegen.run(*llvmModule);
      os << text;
    }
    os.flush();
    prog.key = key;
    prog.compile_ms = elapsed();
    return prog;
  }
  SmallString<256> objPath(dir), tmpSo(dir);
  llvm::sys::path::append(objPath, key + ".tmp%%%%%%.o");
  llvm::sys::path::append(tmpSo, key + ".tmp%%%%%%.so");
  int fd;
  SmallString<256> objReal, soReal;
  // The temporary files go on every way out, an error or an exception
  // included (a failed link under memory pressure left them in the cache
  // folder); the shared object handed to the cache was renamed away by then.
  struct RemoveOnExit {
    SmallString<256> &obj, &so;
    ~RemoveOnExit() {
      if (!obj.empty()) llvm::sys::fs::remove(obj);
      if (!so.empty()) llvm::sys::fs::remove(so);
    }
  } removeOnExit{objReal, soReal};
  // Out of memory, disk space or threads: said so to the caller.
  auto noteResource = [&](const std::string &text) {
    if (opts.resource_failure &&
        (text.find("Cannot allocate memory") != std::string::npos ||
         text.find("No space left on device") != std::string::npos ||
         text.find("Resource temporarily unavailable") != std::string::npos))
      *opts.resource_failure = true;
  };
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(objPath, fd, objReal);
      ec || (ec = llvm::sys::fs::createUniqueFile(tmpSo, soReal))) {
    noteResource(ec.message());
    emitError(module->getLoc()) << "cannot write into " << dir << ": " << ec.message();
    return failure();
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CGFT_ObjectFile)) {
      emitError(module->getLoc()) << "the target cannot emit object files";
      return failure();
    }
    codegen.run(*llvmModule);
  }
  // 4. lld, in this process (the ELF driver of liblld; compiles are
  // serialized by gMutex, which lld's global state needs), -shared -> the
  // elf-native executable.
  std::string linkLog;
  bool linked;
  {
    llvm::raw_string_ostream log(linkLog);
    // One thread: the link of a program's kernels is small, and lld's
    // worker threads, which may fail to start (out of memory or threads),
    // end the process from a thread no caller can catch.
    const char *args[] = {"ld.lld", "-shared", "--hash-style=gnu", "--threads=1",
                          "-o", soReal.c_str(), objReal.c_str()};
    // What lld's own main does after each link, on every way out.
    struct ResetLinker {
      ~ResetLinker() { lld::CommonLinkerContext::destroy(); }
    } resetLinker;
    linked = lld::elf::link(args, log, log, /*exitEarly=*/false, /*disableOutput=*/false);
  }
  llvm::sys::fs::remove(objReal);
  if (!linked) {
    llvm::sys::fs::remove(soReal);
    noteResource(linkLog);
    emitError(module->getLoc()) << "linking the kernels into a shared object failed (lld): " << linkLog;
    return failure();
  }
  // The image handed to the loader is the bytes read here (bounded): what a
  // later run finds in the cache must match their size and checksum.
  fileio::FileReadResult read =
      fileio::ReadBoundedFile(std::string(soReal), cache::kMaxSharedObjectBytes, &prog.image);
  if (!read.ok()) {
    llvm::sys::fs::remove(soReal);
    noteResource(read.message);
    emitError(module->getLoc()) << "cannot read the linked kernels back: " << read.message;
    return failure();
  }
  prog.key = key;
  const cache::ImageId id = cache::IdOf(prog.image);
  if (storeOnDisk) {
    if (std::string why = cache::Store(dir, key, std::string(soReal), prog.kernels, id); !why.empty()) {
      // The program is compiled: only later runs lose the cache entry.
      llvm::sys::fs::remove(soReal);
      tessera::plugin_support::LogWarning("cpu: cannot store compiled kernels in " + dir + ": " + why);
      prog.compile_ms = elapsed();
      return prog;
    }
    prog.so_path = cache::SharedObjectPath(dir, key);
    gMemoryCache[key] = {prog, id};
    gMemoryCache[key].program.image.clear();
  } else {
    llvm::sys::fs::remove(soReal);  // the temporary folder goes with this call
  }
  prog.compile_ms = elapsed();
  return prog;
}
