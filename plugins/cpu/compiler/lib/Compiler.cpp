//===- Compiler.cpp - Tessera IR -> elf-native shared object --------------===//
#include "tessera/cpu/Compiler.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>

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
#include "llvm/Target/TargetMachine.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"
#include "tessera/cpu/Passes.h"

using namespace mlir;
using namespace tessera::cpu;

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
    for (int64_t i = 0; i < nIn + nOut; ++i) {
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
      a.output = i >= nIn;
      k.args.push_back(a);
    }
    out.push_back(k);
  });
  return out;
}

std::string serialize(const std::vector<KernelInfo> &ks) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (const KernelInfo &k : ks) {
    os << "kernel " << k.name << " " << k.graph << " " << k.shared_memory;
    for (uint32_t v : k.grid) os << " " << v;
    for (uint32_t v : k.group_size) os << " " << v;
    os << " " << k.args.size() << "\n";
    for (const KernelArgInfo &a : k.args) {
      os << "arg " << a.buffer << " " << a.output << " " << a.dtype << " " << a.shape.size();
      for (int64_t d : a.shape) os << " " << d;
      os << "\n";
    }
  }
  return os.str();
}

bool deserialize(llvm::StringRef text, std::vector<KernelInfo> &ks) {
  SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, false);
  for (StringRef line : lines) {
    SmallVector<StringRef> w;
    line.split(w, ' ', -1, false);
    auto num = [&](size_t i) { int64_t v = 0; if (i < w.size()) w[i].getAsInteger(10, v); return v; };
    if (w.empty()) continue;
    if (w[0] == "kernel" && w.size() >= 11) {
      KernelInfo k;
      k.name = w[1].str();
      k.graph = num(2);
      k.shared_memory = static_cast<uint64_t>(num(3));
      for (int i = 0; i < 3; ++i) { k.grid[i] = num(4 + i); k.group_size[i] = num(7 + i); }
      ks.push_back(k);
    } else if (w[0] == "arg" && w.size() >= 5 && !ks.empty()) {
      KernelArgInfo a;
      a.buffer = num(1);
      a.output = num(2);
      a.dtype = w[3].str();
      for (int64_t i = 0; i < num(4); ++i) a.shape.push_back(num(5 + i));
      ks.back().args.push_back(a);
    } else {
      return false;
    }
  }
  return !ks.empty();
}

/// Reads the shared object at p.so_path into p.image.
LogicalResult readImage(CompiledProgram &p, Location loc) {
  auto file = llvm::MemoryBuffer::getFile(p.so_path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file) {
    emitError(loc) << "cannot read the compiled kernels " << p.so_path << ": " << file.getError().message();
    return failure();
  }
  p.image = (*file)->getBuffer().str();
  return success();
}

std::mutex gMutex;
std::map<std::string, CompiledProgram> gMemoryCache;

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

  // Cache key: IR text + everything that changes the binary.
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    input->print(os, OpPrintingFlags().enableDebugInfo(false));
    os << "\n" << kCompilerVersion << " build=" << compilerBuildId() << " cpu=" << cpu << " O" << opts.opt_level
       << " tiles=" << opts.tiles.tileM << "," << opts.tiles.tileN << "," << opts.tiles.tileK
       << "," << opts.tiles.microM << "," << opts.tiles.microN
       << " attn=" << opts.tiles.attnBlockQ << "," << opts.tiles.attnBlockKV
       << " f16c=" << tiles.hardwareF16 << " schedule=" << opts.tiles.schedule;
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
  if (!diskCache) {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tessera-cpu", tempDir)) {
      emitError(input->getLoc()) << "cannot create a temporary folder: " << ec.message();
      return failure();
    }
    dir = std::string(tempDir);
  }
  SmallString<256> soPath(dir), metaPath(dir);
  llvm::sys::path::append(soPath, key + ".so");
  llvm::sys::path::append(metaPath, key + ".kernels");

  std::lock_guard<std::mutex> lock(gMutex);
  if (diskCache) {
    if (auto it = gMemoryCache.find(key); it != gMemoryCache.end() && llvm::sys::fs::exists(it->second.so_path)) {
      CompiledProgram p = it->second;
      p.cache_hit = true;
      if (failed(readImage(p, input->getLoc()))) return failure();
      p.compile_ms = elapsed();
      return p;
    }
    auto meta = llvm::MemoryBuffer::getFile(metaPath);
    if (meta && llvm::sys::fs::exists(soPath)) {
      CompiledProgram p;
      if (deserialize((*meta)->getBuffer(), p.kernels)) {
        p.so_path = std::string(soPath);
        p.key = key;
        p.cache_hit = true;
        if (failed(readImage(p, input->getLoc()))) return failure();
        gMemoryCache[key] = p;
        gMemoryCache[key].image.clear();  // the file is the cache
        p.compile_ms = elapsed();
        return p;
      }
    }
  }

  // 1. Tessera IR -> loops (one pipeline per kind of input).
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(input->clone()));
  MLIRContext *ctx = module->getContext();
  bool graph = false;
  module->walk([&](Operation *op) {
    // Schedule IR on tensors (e.g. a hand-tuned flash_attention) takes the
    // Graph IR pipeline too: graph-to-schedule leaves it as it is.
    if (isa<graph::GraphDialect>(op->getDialect()) ||
        isa<schedule::FlashAttentionOp, schedule::TileOp>(op))
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
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    emitError(module->getLoc()) << "cannot create cache directory " << dir << ": " << ec.message();
    return failure();
  }
  SmallString<256> objPath(dir), tmpSo(dir);
  llvm::sys::path::append(objPath, key + ".tmp%%%%%%.o");
  llvm::sys::path::append(tmpSo, key + ".tmp%%%%%%.so");
  int fd;
  SmallString<256> objReal, soReal;
  if (llvm::sys::fs::createUniqueFile(objPath, fd, objReal) ||
      llvm::sys::fs::createUniqueFile(tmpSo, soReal)) {
    emitError(module->getLoc()) << "cannot write into " << dir;
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
    const char *args[] = {"ld.lld", "-shared", "--hash-style=gnu", "-o", soReal.c_str(), objReal.c_str()};
    linked = lld::elf::link(args, log, log, /*exitEarly=*/false, /*disableOutput=*/false);
    lld::CommonLinkerContext::destroy();  // what lld's own main does after each link
  }
  llvm::sys::fs::remove(objReal);
  if (!linked) {
    llvm::sys::fs::remove(soReal);
    emitError(module->getLoc()) << "linking the kernels into a shared object failed (lld): " << linkLog;
    return failure();
  }
  if (std::error_code ec = llvm::sys::fs::rename(soReal, soPath)) {
    emitError(module->getLoc()) << "cannot store " << soPath << ": " << ec.message();
    return failure();
  }
  if (diskCache) {
    // Written whole, then renamed: a reader never sees half a file.
    SmallString<256> tmpMeta(dir), metaReal;
    llvm::sys::path::append(tmpMeta, key + ".tmp%%%%%%.kernels");
    int mfd;
    if (!llvm::sys::fs::createUniqueFile(tmpMeta, mfd, metaReal)) {
      {
        llvm::raw_fd_ostream meta(mfd, /*shouldClose=*/true);
        meta << serialize(prog.kernels);
      }
      if (llvm::sys::fs::rename(metaReal, metaPath)) llvm::sys::fs::remove(metaReal);
    }
  }
  prog.so_path = std::string(soPath);
  prog.key = key;
  if (failed(readImage(prog, module->getLoc()))) return failure();
  if (!diskCache) {
    prog.so_path.clear();  // the temporary folder goes with this call
    prog.compile_ms = elapsed();
    return prog;
  }
  gMemoryCache[key] = prog;
  gMemoryCache[key].image.clear();
  prog.compile_ms = elapsed();
  return prog;
}
