#include "gpu_plan.hpp"

#include "tessera/Conversion/GraphToTile/Pipeline.h"

#include <chrono>
#include <cstdio>
#include <map>

#include "mlir/Pass/PassManager.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Target/SPIRV/Passes.h"

namespace tessera::run {

namespace {
int fail(int rc, const std::string& msg) {
  std::fprintf(stderr, "tessera-run: %s\n", msg.c_str());
  return rc;
}
}  // namespace

int CompileGraphForGpu(mlir::ModuleOp module, const std::string& name, const Device& dev,
                       const std::string& schedule, GpuProgram* out) {
  const std::string& backend = dev.backend();
  auto t0 = std::chrono::steady_clock::now();
  // The Graph function: by name, else the first function with tensor arguments.
  mlir::func::FuncOp fn;
  module.walk([&](mlir::func::FuncOp f) {
    if (fn || f.isExternal()) return;
    bool tensors = llvm::any_of(f.getArgumentTypes(), [](mlir::Type t) { return t.isa<mlir::TensorType>(); });
    if (name.empty() ? tensors : f.getName() == name) fn = f;
  });
  if (!fn) return fail(1, "no Graph IR function" + (name.empty() ? std::string() : " named " + name));

  // Graph -> Schedule IR (the GPU schedule) -> Tile IR kernels + launch
  // plan, on a copy (the original stays for the reference interpreter) that
  // holds only the function to run: another function of the file that the
  // GPU path cannot lower must not stop this one.
  mlir::OwningOpRef<mlir::ModuleOp> m(module.clone());
  for (auto f : llvm::make_early_inc_range(m->getOps<mlir::func::FuncOp>()))
    if (f.getName() != fn.getName() && !f.isExternal()) f.erase();
  mlir::PassManager pm(module.getContext());
  if (mlir::failed(conversion::buildGpuGraphPipeline(pm, backend, schedule)))
    return fail(1, "--schedule '" + schedule + "': not options of --tessera-graph-to-schedule");
  if (mlir::failed(pm.run(*m))) return 1;
  auto planFn = m->lookupSymbol<mlir::func::FuncOp>(fn.getName());
  if (!planFn) return fail(1, "no launch plan for " + fn.getName().str());
  auto plan = conversion::readLaunchPlan(planFn);
  if (mlir::failed(plan)) return 1;
  out->plan = std::move(*plan);

  // What tessera-run's generic path needs: logical shapes of the inputs and
  // results (the reference and --input files use them).
  cpu::KernelInfo& info = out->info;
  info.name = fn.getName().str();
  info.graph = true;
  auto addArg = [&](mlir::Type t, bool output) {
    auto tt = t.cast<mlir::RankedTensorType>();
    cpu::KernelArgInfo ai;
    llvm::raw_string_ostream os(ai.dtype);  // as MLIR prints it: f32, bf16, i8, ...
    tt.getElementType().print(os);
    os.flush();
    ai.shape.assign(tt.getShape().begin(), tt.getShape().end());
    ai.output = output;
    info.args.push_back(ai);
  };
  for (mlir::Type t : fn.getArgumentTypes()) addArg(t, false);
  for (mlir::Type t : fn.getResultTypes()) addArg(t, true);

  // Kernels -> the backend's binary format.
  if (backend != "vulkan")
    return fail(2, "Graph IR kernels have no compiler for the " + backend + " backend yet");
  mlir::PassManager strip(module.getContext());
  strip.addPass(conversion::createStripLaunchPlans());
  if (mlir::failed(strip.run(*m))) return 1;
  std::vector<spv::VulkanKernel> vks;
  if (mlir::failed(spv::compileForVulkan(*m, &vks))) return fail(1, "SPIR-V compilation of the Graph IR kernels failed");
  out->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::map<std::string, std::pair<Executable, Kernel>> loaded;
  for (const spv::VulkanKernel& vk : vks) {
    out->spirv_words += vk.spirv.size();
    auto exe = dev.load_executable("spirv", vk.spirv.data(), vk.spirv.size() * sizeof(uint32_t));
    if (!exe.ok()) return fail(2, vk.name + ": " + exe.status().ToString());
    auto k = exe->kernel(vk.name);
    if (!k.ok()) return fail(2, vk.name + ": " + k.status().ToString());
    loaded[vk.name] = {*exe, *k};
  }
  out->num_kernels = loaded.size();
  for (const conversion::PlanLaunch& l : out->plan.launches) {
    auto it = loaded.find(l.kernel);
    if (it == loaded.end()) return fail(2, "kernel " + l.kernel + " of the plan was not compiled");
    const TsDim3& req = it->second.second.info().required_group_size;
    if (req.x && (req.x != l.groupSize[0] || req.y != l.groupSize[1] || req.z != l.groupSize[2]))
      return fail(2, l.kernel + ": the shader's group size differs from the plan's");
    out->executables.push_back(it->second.first);
    out->kernels.push_back(it->second.second);
  }
  size_t nArgs = info.args.size();
  for (size_t i = nArgs; i < out->plan.buffers.size(); ++i) {
    auto b = dev.allocate(static_cast<uint64_t>(out->plan.buffers[i].bytes));
    if (!b.ok()) return fail(2, "intermediate buffer: " + b.status().ToString());
    out->intermediates.push_back(*b);
  }
  return 0;
}

Status EnqueueGpuProgram(const GpuProgram& p, const Stream& stream, const std::vector<Buffer>& args) {
  auto bufferAt = [&](unsigned i) -> const Buffer& {
    return i < args.size() ? args[i] : p.intermediates[i - args.size()];
  };
  for (size_t n = 0; n < p.plan.launches.size(); ++n) {
    const conversion::PlanLaunch& l = p.plan.launches[n];
    std::vector<KernelArg> kargs;
    for (unsigned b : l.buffers) kargs.push_back(KernelArg::buffer(bufferAt(b)));
    TsDim3 grid{static_cast<uint32_t>(l.grid[0]), static_cast<uint32_t>(l.grid[1]),
                static_cast<uint32_t>(l.grid[2])};
    TsDim3 group{static_cast<uint32_t>(l.groupSize[0]), static_cast<uint32_t>(l.groupSize[1]),
                 static_cast<uint32_t>(l.groupSize[2])};
    // Shared memory is declared by the kernels themselves (0 at launch).
    if (Status st = stream.launch(p.kernels[n], grid, group, kargs, 0); !st.ok()) return st;
  }
  return Status();
}

}  // namespace tessera::run
