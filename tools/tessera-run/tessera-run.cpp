// tessera-run: compile a Tessera program (Graph IR or Tile IR) for the
// selected backend, run it on generated or given inputs, check it against a
// reference implementation in the same run and report the time per iteration.
//
//   tessera-run PROGRAM.mlir [--input a.npy ...] [--output out.npy ...]
//               [--iterations N] [--kernel NAME] [--scalar V ...]
//               [--grid X[,Y,Z]] [--tolerance T] [--seed S] [--no-verify]
//               [--cpu NAME]   (LLVM cpu for the cpu backend, default: the host)
//               [--schedule "OPTIONS"] (--tessera-graph-to-schedule options over
//                              the backend's schedule: "tile-m=64 micro-m=4")
//
// Backends: cpu (Graph IR and Tile IR, compiled to a shared object) and
// vulkan (Tile IR compiled to SPIR-V by tessera::spv::compileForVulkan;
// Graph IR lowered to Tile IR kernels + a launch plan first, gpu_plan.cpp).
//
// Exit codes: 0 verified (or --no-verify), 1 bad input / compile error,
// 2 runtime error (or a program the backend cannot run), 3 result mismatch,
// 4 no reference to check the result against (run it with --no-verify to
// accept an unchecked result), 77 the vulkan backend was requested but is
// unavailable (ctest SKIP).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "dtype.hpp"
#include "gpu_plan.hpp"
#include "npy.hpp"
#include "reference.hpp"
#include "spmd.hpp"
#include "mlir/IR/Verifier.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Tile/IR/Tile.h"
#include "tessera/InitAll.h"
#include "tessera/Target/CPU/Compiler.h"
#include "tessera/Target/SPIRV/Passes.h"
#include "tessera/runtime.hpp"

using namespace tessera;

namespace {

struct Args {
  std::string program, kernel;
  std::vector<std::string> outputs;  // one per result, in order
  std::string cpu;  // LLVM cpu to compile for (cpu backend); empty: the host
  std::string schedule;  // graph-to-schedule options over the backend's schedule
  std::vector<std::string> inputs;
  std::vector<double> scalars;
  std::vector<unsigned> grid;
  int iterations = 10;
  double tolerance = -1;  // < 0: the default of each result's type (dtype.hpp)
  unsigned seed = 42;
  bool verify = true;
};

int usage(const char* why) {
  std::fprintf(stderr,
               "tessera-run: %s\nusage: tessera-run PROGRAM.mlir [--input a.npy ...] "
               "[--output out.npy ...] [--iterations N] [--kernel NAME] [--scalar V ...] "
               "[--grid X[,Y,Z]] [--tolerance T] [--seed S] [--no-verify] [--cpu NAME] "
               "[--schedule \"tile-m=64 ...\"]\n",
               why);
  return 1;
}

// Exit code for "the requested backend cannot run here" (ctest SKIP_RETURN_CODE).
constexpr int kExitSkip = 77;
// Exit code for "verification was asked for but nothing could check the result".
constexpr int kExitNoReference = 4;

bool requestsVulkan() {
  const char* env = std::getenv("TESSERA_BACKEND");
  return env && std::strstr(env, "vulkan");
}

// Host dtype of a SPIR-V kernel argument: index is 32-bit there.
std::string spirvTypeName(mlir::Type t) {
  if (t.isIndex()) return "i32";
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return os.str();
}

std::string shapeStr(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r + "]";
}

// The device decides how much shared memory a tile group gets: Tile IR
// kernels are verified against its limit (lowering an explicit
// tessera_tile.max_shared_memory to it), so an allocation that does not fit
// is a diagnostic at the shared_alloc, with file:line:col, rather than a
// load-time error from the plugin.  Returns false after a diagnostic.
bool FitKernelsToDevice(mlir::ModuleOp module, const Device& dev) {
  const int64_t limit = static_cast<int64_t>(dev.info().shared_memory_per_group);
  if (limit <= 0) return true;  // the device does not say
  bool changed = false;
  module.walk([&](mlir::func::FuncOp f) {
    if (!f->hasAttr(tile::kGroupSizeAttr)) return;
    int64_t cur = tile::kDefaultMaxSharedMemory;
    if (auto a = f->getAttrOfType<mlir::IntegerAttr>(tile::kMaxSharedAttr)) cur = a.getInt();
    if (limit < cur) {
      f->setAttr(tile::kMaxSharedAttr, mlir::IntegerAttr::get(mlir::IntegerType::get(f.getContext(), 64), limit));
      changed = true;
    }
  });
  if (changed && mlir::failed(mlir::verify(module))) {
    std::fprintf(stderr, "tessera-run: the kernel does not fit device %s: %lld bytes of shared memory per group\n",
                 dev.info().name.c_str(), static_cast<long long>(limit));
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (s == "--input" && (v = next())) a.inputs.push_back(v);
    else if (s == "--output" && (v = next())) a.outputs.push_back(v);
    else if (s == "--iterations" && (v = next())) a.iterations = std::max(1, std::atoi(v));
    else if (s == "--kernel" && (v = next())) a.kernel = v;
    else if (s == "--scalar" && (v = next())) a.scalars.push_back(std::atof(v));
    else if (s == "--tolerance" && (v = next())) a.tolerance = std::atof(v);
    else if (s == "--seed" && (v = next())) a.seed = std::atoi(v);
    else if (s == "--cpu" && (v = next())) a.cpu = v;
    else if (s == "--schedule" && (v = next())) a.schedule = v;
    else if (s == "--grid" && (v = next())) {
      for (char* t = std::strtok(const_cast<char*>(v), ","); t; t = std::strtok(nullptr, ","))
        a.grid.push_back(std::atoi(t));
    } else if (s == "--no-verify") a.verify = false;
    else if (s == "-h" || s == "--help") return usage("help"), 0;
    else if (!s.empty() && s[0] != '-' && a.program.empty()) a.program = s;
    else return usage(("unknown or incomplete argument '" + s + "'").c_str());
  }
  if (a.program.empty()) return usage("no program given");

  // ---- parse and verify: diagnostics carry file:line:col
  mlir::DialectRegistry registry;
  tessera::registerAllDialects(registry);
  mlir::registerAllPasses();
  tessera::registerAllPasses();
  mlir::MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diag(sourceMgr, &context);
  std::string err;
  auto file = mlir::openInputFile(a.program, &err);
  if (!file) return std::fprintf(stderr, "tessera-run: %s\n", err.c_str()), 1;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module) return std::fprintf(stderr, "tessera-run: %s: invalid program\n", a.program.c_str()), 1;

  bool isGraph = false;
  module->walk([&](mlir::Operation* op) {
    if (mlir::isa_and_nonnull<graph::GraphDialect>(op->getDialect())) isGraph = true;
  });

  // An SPMD program (a function on a tessera_graph.mesh) runs on one device
  // per mesh position (spmd.cpp).  The cpu backend makes
  // TESSERA_CPU_DEVICES devices: unless the user chose, as many as the mesh.
  const int64_t meshDevices = run::SpmdDevicesNeeded(*module, a.kernel);
  if (meshDevices < 0) return 1;
  if (meshDevices > 0 && !std::getenv("TESSERA_CPU_DEVICES"))
    setenv("TESSERA_CPU_DEVICES", std::to_string(meshDevices).c_str(), 1);

  // ---- runtime: selected first, since the backend decides how to compile
  auto rt = Runtime::Create();
  if (!rt.ok()) {
    std::fprintf(stderr, "tessera-run: %s\n", rt.status().ToString().c_str());
    // A vulkan backend that was asked for but cannot be used (no plugin, no
    // loader, no device): exit 77 so that ctest reports SKIP.
    if (requestsVulkan() && (rt.status().code() == StatusCode::kUnavailable ||
                             rt.status().code() == StatusCode::kNotFound))
      return std::fprintf(stderr, "tessera-run: vulkan backend unavailable: skipped\n"), kExitSkip;
    return 2;
  }
  if (rt->devices().empty()) {
    std::fprintf(stderr, "tessera-run: backend %s has no device\n", rt->backend().c_str());
    return rt->backend() == "vulkan" ? kExitSkip : 2;
  }
  if (meshDevices > 0) {
    run::SpmdOptions so;
    so.function = a.kernel;
    so.program = a.program;
    so.inputs = a.inputs;
    so.outputs = a.outputs;
    so.iterations = a.iterations;
    so.tolerance = a.tolerance;
    so.seed = a.seed;
    so.verify = a.verify;
    return run::RunSpmd(*module, so, *rt);
  }
  Device dev = rt->devices().front();
  const bool vulkan = rt->backend() == "vulkan";
  if (!isGraph && !FitKernelsToDevice(*module, dev)) return 1;
  // Graph IR on a GPU backend: kernels + launch plan (gpu_plan.cpp).
  const bool gpuGraph = vulkan && isGraph;
  run::GpuProgram gpu;
  // ---- compile (cpu and others: cached shared object; vulkan: SPIR-V in process)
  cpu::KernelInfo vkInfo;
  const cpu::KernelInfo* kinfo = nullptr;
  StatusOr<Executable> exe = Status(StatusCode::kInternal, "not loaded");
  if (gpuGraph) {
    if (int rc = run::CompileGraphForGpu(*module, a.kernel, dev, a.schedule, &gpu)) return rc;
    vkInfo = gpu.info;
    kinfo = &vkInfo;
    std::printf("compiled %s: %s to %zu kernels, %zu launches, %zu intermediate buffers "
                "(SPIR-V, %zu words) in %.1f ms\n",
                a.program.c_str(), kinfo->name.c_str(), gpu.num_kernels, gpu.plan.launches.size(),
                gpu.intermediates.size(), gpu.spirv_words, gpu.compile_ms);
  } else if (vulkan) {
    std::vector<spv::VulkanKernel> vks;
    auto t0 = std::chrono::steady_clock::now();
    if (mlir::failed(spv::compileForVulkan(*module, &vks)))
      return std::fprintf(stderr, "tessera-run: %s: SPIR-V compilation failed\n", a.program.c_str()), 1;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const spv::VulkanKernel* vk = &vks.front();
    for (auto& k : vks)
      if (k.name == a.kernel) vk = &k;
    mlir::func::FuncOp fn;
    module->walk([&](mlir::func::FuncOp f) { if (f.getName() == vk->name) fn = f; });
    if (!fn) return std::fprintf(stderr, "tessera-run: kernel %s not found\n", vk->name.c_str()), 1;
    vkInfo.name = vk->name;
    for (int d = 0; d < 3; ++d) {
      vkInfo.grid[d] = static_cast<uint32_t>(vk->grid[d]);
      vkInfo.group_size[d] = static_cast<uint32_t>(vk->groupSize[d]);
    }
    for (mlir::Type t : fn.getArgumentTypes()) {
      cpu::KernelArgInfo ai;
      if (auto mt = t.dyn_cast<mlir::MemRefType>()) {
        ai.dtype = spirvTypeName(mt.getElementType());
        ai.shape.assign(mt.getShape().begin(), mt.getShape().end());
      } else {
        ai.buffer = false;
        ai.dtype = spirvTypeName(t);
      }
      vkInfo.args.push_back(ai);
    }
    kinfo = &vkInfo;
    std::printf("compiled %s: kernel %s to SPIR-V (%zu words) in %.1f ms\n", a.program.c_str(),
                kinfo->name.c_str(), vk->spirv.size(), ms);
    exe = dev.load_executable("spirv", vk->spirv.data(), vk->spirv.size() * sizeof(uint32_t));
  } else {
    cpu::CompileOptions copts;
    copts.cpu = a.cpu;
    copts.tiles.schedule = a.schedule;
    auto compiled = cpu::compileForCPU(*module, copts);
    if (mlir::failed(compiled))
      return std::fprintf(stderr, "tessera-run: %s: compilation failed\n", a.program.c_str()), 1;
    kinfo = &compiled->kernels.front();
    for (auto& k : compiled->kernels)
      if (k.name == a.kernel) kinfo = &k;
    vkInfo = *kinfo;  // keep it past `compiled`
    kinfo = &vkInfo;
    std::printf("compiled %s: kernel %s in %.1f ms%s\n", a.program.c_str(), kinfo->name.c_str(),
                compiled->compile_ms, compiled->cache_hit ? " (cache hit)" : "");
    exe = dev.load_executable("elf-native", compiled->so_path);
  }
  StatusOr<Kernel> kernel = Status(StatusCode::kInternal, "not loaded");
  if (!gpuGraph) {
    if (!exe.ok()) return std::fprintf(stderr, "tessera-run: %s\n", exe.status().ToString().c_str()), 2;
    kernel = exe->kernel(kinfo->name);
    if (!kernel.ok()) return std::fprintf(stderr, "tessera-run: %s\n", kernel.status().ToString().c_str()), 2;
  }

  // ---- arguments: given inputs are matched to non-output buffers in order
  std::mt19937 rng(a.seed);
  std::vector<run::NpyArray> host(kinfo->args.size());
  std::vector<Buffer> buffers(kinfo->args.size());
  size_t nextInput = 0, nextScalar = 0;
  for (size_t i = 0; i < kinfo->args.size(); ++i) {
    const auto& ai = kinfo->args[i];
    auto& h = host[i];
    h.dtype = ai.dtype;
    h.shape = ai.buffer ? ai.shape : std::vector<int64_t>{1};
    size_t n = 1;
    for (int64_t d : h.shape) n *= d;
    h.bytes.assign(n * run::DtypeSize(ai.dtype), 0);
    if (!ai.buffer) {
      double v = nextScalar < a.scalars.size() ? a.scalars[nextScalar++] : 1.5;
      run::Encode(v, h.bytes.data(), ai.dtype);
      continue;
    }
    if (!ai.output && nextInput < a.inputs.size()) {
      run::NpyArray in;
      std::string e = run::ReadNpy(a.inputs[nextInput], &in);
      if (!e.empty()) return std::fprintf(stderr, "tessera-run: %s\n", e.c_str()), 1;
      if (in.dtype != ai.dtype || in.shape != ai.shape)
        return std::fprintf(stderr,
                            "tessera-run: %s: argument %zu of %s expects %s %s, the file holds %s %s\n",
                            a.inputs[nextInput].c_str(), i, kinfo->name.c_str(), ai.dtype.c_str(),
                            shapeStr(ai.shape).c_str(), in.dtype.c_str(), shapeStr(in.shape).c_str()),
               1;
      h = in;
      ++nextInput;
    } else if (!ai.output) {
      size_t s = run::DtypeSize(ai.dtype);
      for (size_t k = 0; k < n; ++k)
        run::Encode(run::RandomValue(rng, ai.dtype), &h.bytes[k * s], ai.dtype);
    }
    auto buf = dev.allocate(h.bytes.size());
    if (!buf.ok()) return std::fprintf(stderr, "tessera-run: %s\n", buf.status().ToString().c_str()), 2;
    buffers[i] = *buf;
    if (auto st = copy(buffers[i], h.bytes.data(), h.bytes.size()); !st.ok())
      return std::fprintf(stderr, "tessera-run: %s\n", st.ToString().c_str()), 2;
  }
  if (nextInput < a.inputs.size())
    return std::fprintf(stderr, "tessera-run: %zu --input files given, %s takes %zu\n", a.inputs.size(),
                        kinfo->name.c_str(), nextInput), 1;
  // --output files: the results in order (Graph IR), or a Tile IR kernel's
  // last buffer argument.
  std::vector<size_t> outputArgs;
  for (size_t i = 0; i < kinfo->args.size(); ++i)
    if (kinfo->args[i].output) outputArgs.push_back(i);
  if (outputArgs.empty())
    for (size_t i = kinfo->args.size(); i-- > 0;)
      if (kinfo->args[i].buffer) { outputArgs.push_back(i); break; }
  if (a.outputs.size() > outputArgs.size())
    return std::fprintf(stderr, "tessera-run: %zu --output files given, %s has %zu result%s\n", a.outputs.size(),
                        kinfo->name.c_str(), outputArgs.size(), outputArgs.size() == 1 ? "" : "s"), 1;
  std::vector<KernelArg> kargs;
  for (size_t i = 0; i < kinfo->args.size(); ++i) {
    if (kinfo->args[i].buffer) { kargs.push_back(KernelArg::buffer(buffers[i])); continue; }
    KernelArg s = KernelArg::scalar(uint64_t{0});
    uint64_t raw = 0;
    std::memcpy(&raw, host[i].bytes.data(), host[i].bytes.size());
    if (run::DtypeSize(kinfo->args[i].dtype) == 4) { uint32_t r32; std::memcpy(&r32, &raw, 4); s = KernelArg::scalar(r32); }
    else s = KernelArg::scalar(raw);
    kargs.push_back(s);
  }
  TsDim3 grid{kinfo->grid[0], kinfo->grid[1], kinfo->grid[2]};
  for (size_t d = 0; d < a.grid.size() && d < 3; ++d) (&grid.x)[d] = a.grid[d];
  TsDim3 group{kinfo->group_size[0], kinfo->group_size[1], kinfo->group_size[2]};
  // The cpu backend gives Tile IR kernels their shared memory at launch; a
  // SPIR-V shader declares its Workgroup variables itself (shared = 0) and
  // fixes its group size (LocalSize), which the plugin reports.
  uint64_t shared = (kinfo->graph || vulkan) ? 0 : 65536;
  if (vulkan && !gpuGraph) {
    const TsDim3& req = kernel->info().required_group_size;
    if (req.x && (req.x != group.x || req.y != group.y || req.z != group.z))
      return std::fprintf(stderr, "tessera-run: %s: the shader's group size %ux%ux%u differs from the kernel's %ux%ux%u\n",
                          kinfo->name.c_str(), req.x, req.y, req.z, group.x, group.y, group.z),
             2;
  }
  Stream stream = dev.default_stream();

  // Snapshot of inputs for the reference (outputs may be updated in place).
  run::HostTensors before;
  for (auto& h : host) before.push_back(run::DecodeAll(h.bytes, h.dtype));

  // ---- one checked run, then timed iterations
  auto launch = [&]() -> bool {
    Status st = gpuGraph ? run::EnqueueGpuProgram(gpu, stream, buffers)
                         : stream.launch(*kernel, grid, group, kargs, shared);
    if (st.ok()) st = stream.synchronize();
    if (!st.ok()) std::fprintf(stderr, "tessera-run: launch: %s\n", st.ToString().c_str());
    return st.ok();
  };
  if (!launch()) return 2;
  std::vector<run::NpyArray> results = host;
  for (size_t i = 0; i < kinfo->args.size(); ++i)
    if (kinfo->args[i].buffer) (void)copy(results[i].bytes.data(), buffers[i], results[i].bytes.size());

  int rc = 0;
  if (a.verify) {
    run::HostTensors expected;
    bool have = false;
    std::vector<size_t> checked;
    if (kinfo->graph) {
      mlir::func::FuncOp fn;
      module->walk([&](mlir::func::FuncOp f) { if (f.getName() == kinfo->name) fn = f; });
      size_t nIn = 0;
      for (auto& ai : kinfo->args) nIn += !ai.output;
      run::HostTensors ins(before.begin(), before.begin() + nIn), outs;
      std::string e = fn ? run::ReferenceGraph(fn, ins, &outs) : "function not found";
      if (!e.empty()) std::fprintf(stderr, "tessera-run: reference: %s\n", e.c_str());
      else {
        have = true;
        expected = before;
        for (size_t k = 0; k < outs.size(); ++k) { expected[nIn + k] = outs[k]; checked.push_back(nIn + k); }
      }
    } else {
      std::vector<unsigned> gv{grid.x, grid.y, grid.z}, bv{group.x, group.y, group.z};
      have = run::ReferenceTile(kinfo->name, before, gv, bv, &expected);
      for (size_t i = 0; i < kinfo->args.size(); ++i) if (kinfo->args[i].buffer) checked.push_back(i);
    }
    if (!have) {
      // A check that could not be made is not a pass: say so in the exit code.
      std::printf("verify: no reference for kernel %s: the result was NOT checked "
                  "(--no-verify runs it unchecked on purpose)\n", kinfo->name.c_str());
      rc = kExitNoReference;
    } else {
      // One line per result type, each with its tolerance (dtype.hpp).
      std::vector<std::string> types;
      for (size_t i : checked)
        if (std::find(types.begin(), types.end(), results[i].dtype) == types.end()) types.push_back(results[i].dtype);
      for (const std::string& dt : types) {
        run::Mismatch m;
        for (size_t i : checked)
          if (results[i].dtype == dt) run::Compare(results[i].bytes, dt, expected[i], &m);
        double tol = a.tolerance >= 0 ? a.tolerance : run::DefaultTolerance(dt);
        bool ok = m.max_error <= tol * std::max(1.0, m.max_ref);
        std::string label = types.size() > 1 ? dt + " results: " : "";
        std::string why = a.tolerance >= 0 ? "--tolerance" : "default for " + dt;
        std::printf("verify: %smax abs error %.3g (max |ref| %.3g, tolerance %.3g relative, %s): %s\n",
                    label.c_str(), m.max_error, m.max_ref, tol, why.c_str(), ok ? "PASS" : "FAIL");
        if (!ok) rc = 3;
      }
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < a.iterations; ++it)
    if (!launch()) return 2;
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
              a.iterations;
  double flops = 0;
  module->walk([&](graph::MatmulOp mm) {  // this kernel's matmuls only
    auto fn = mm->getParentOfType<mlir::func::FuncOp>();
    if (fn && fn.getName() != kinfo->name) return;
    auto t = mm.getLhs().getType().cast<mlir::RankedTensorType>();
    auto r = mm.getResult().getType().cast<mlir::RankedTensorType>();
    flops += 2.0 * r.getNumElements() * t.getShape().back();
  });
  if (gpuGraph)
    std::printf("time: %.3f ms per iteration over %d iterations (%zu launches, %s)", ms, a.iterations,
                gpu.plan.launches.size(), rt->backend().c_str());
  else
    std::printf("time: %.3f ms per iteration over %d iterations (grid %u, %s)", ms, a.iterations,
                grid.x * grid.y * grid.z, rt->backend().c_str());
  if (flops > 0) std::printf(", %.1f GFLOP/s", flops / (ms * 1e6));
  std::printf("\n");
  for (size_t k = 0; k < a.outputs.size(); ++k) {
    std::string e = run::WriteNpy(a.outputs[k], results[outputArgs[k]]);
    if (!e.empty()) return std::fprintf(stderr, "tessera-run: %s\n", e.c_str()), 1;
  }
  return rc;
}
