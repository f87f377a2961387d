#include "lower.hpp"
#include "schedule_check.hpp"
#include "training_marks.hpp"

#include <algorithm>
#include <map>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "tessera/Conversion/GraphToTile/Passes.h"
#include "tessera/Conversion/GraphToTile/Pipeline.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Graph/Transforms/RowStages.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"
#include "tessera/Dialect/Tile/IR/Tile.h"
#include "tessera/element_types.hpp"

namespace tessera::program {

namespace {

using mlir::func::FuncOp;
namespace g = tessera::graph;

bool IsTileKernel(FuncOp f) { return f->hasAttr(tile::kGroupSizeAttr); }
bool IsGraphFunction(FuncOp f) {
  auto tensor = [](mlir::Type t) { return t.isa<mlir::TensorType>(); };
  return llvm::any_of(f.getArgumentTypes(), tensor) || llvm::any_of(f.getResultTypes(), tensor);
}


std::string LocText(mlir::Location loc) {
  if (auto f = loc.dyn_cast<mlir::FileLineColLoc>())
    return f.getFilename().str() + ":" + std::to_string(f.getLine()) + ":" + std::to_string(f.getColumn());
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return os.str();
}

TsDataType ToTsType(const std::string& dt) {
  if (dt == "f32") return TS_DTYPE_F32;
  if (dt == "f64") return TS_DTYPE_F64;
  if (dt == "i32") return TS_DTYPE_I32;
  if (dt == "i64") return TS_DTYPE_I64;
  if (dt == "f16") return TS_DTYPE_F16;
  if (dt == "bf16") return TS_DTYPE_BF16;
  if (dt == "i8") return TS_DTYPE_I8;
  return TS_DTYPE_U8;  // f8E4M3FN, f8E5M2: bytes
}

uint64_t TensorBytes(mlir::Type t) {
  auto tt = t.cast<mlir::RankedTensorType>();
  return static_cast<uint64_t>(tt.getNumElements()) * elements::DtypeSize(g::typeText(tt.getElementType()));
}

// A module holding clones of `keep` (public) and whatever they need that is
// not a function (meshes are dropped: stages no longer name them).
mlir::OwningOpRef<mlir::ModuleOp> ModuleOf(mlir::ModuleOp from, const std::vector<std::string>& keep) {
  mlir::OwningOpRef<mlir::ModuleOp> m(from.clone());
  for (mlir::Operation& op : llvm::make_early_inc_range(m->getBody()->getOperations())) {
    if (auto f = mlir::dyn_cast<FuncOp>(op)) {
      if (std::find(keep.begin(), keep.end(), f.getName().str()) == keep.end())
        f.erase();
      else
        f.setPublic();
    } else if (mlir::isa<g::MeshOp>(op)) {
      op.erase();
    }
  }
  return m;
}

// Tile IR kernels are checked against the device's shared memory: an
// allocation that does not fit is a diagnostic at the shared_alloc.
mlir::LogicalResult FitKernelsToDevice(mlir::ModuleOp module, const Device& dev) {
  const int64_t limit = static_cast<int64_t>(dev.info().shared_memory_per_group);
  if (limit <= 0) return mlir::success();
  bool changed = false;
  module.walk([&](FuncOp f) {
    if (!IsTileKernel(f)) return;
    int64_t cur = tile::kDefaultMaxSharedMemory;
    if (auto a = f->getAttrOfType<mlir::IntegerAttr>(tile::kMaxSharedAttr)) cur = a.getInt();
    if (limit < cur) {
      f->setAttr(tile::kMaxSharedAttr, mlir::IntegerAttr::get(mlir::IntegerType::get(f.getContext(), 64), limit));
      changed = true;
    }
  });
  return changed ? mlir::verify(module) : mlir::success();
}

struct Stage {
  std::string name;
  std::vector<uint32_t> inputs, outputs;  // plan values
  std::string location;
};

StatusOr<LoweredProgram> LowerTileKernel(ParsedModule& parsed, FuncOp kernel, const Device* device) {
  LoweredProgram out;
  // Only the kernel that runs: another kernel of the file that the target
  // cannot compile must not stop this one.
  out.module = ModuleOf(parsed.module(), {kernel.getName().str()});
  if (device && mlir::failed(FitKernelsToDevice(*out.module, *device)))
    return parsed.Error(StatusCode::kInvalidArgument,
                        kernel.getName().str() + " does not fit device " + device->info().name + " (" +
                            FormatBytes(device->info().shared_memory_per_group) + " of shared memory per group)");
  ProgramImage& im = out.image;
  im.function = kernel.getName().str();
  PlanStep step;
  step.kind = PlanStep::kLaunch;
  step.kernel = im.function;
  step.location = LocText(kernel.getLoc());
  step.grid = step.group_size = TsDim3{0, 0, 0};  // the kernel's own (FinishImage)
  for (auto [i, t] : llvm::enumerate(kernel.getArgumentTypes())) {
    ParamSpec p;
    p.name = "arg" + std::to_string(i);
    if (auto mt = t.dyn_cast<mlir::MemRefType>()) {
      p.role = ParamRole::kInOut;
      p.dtype = g::typeText(mt.getElementType());
      p.shape.assign(mt.getShape().begin(), mt.getShape().end());
      im.param_values.push_back(static_cast<int32_t>(im.values.size()));
      step.args.push_back({PlanArg::kValue, static_cast<uint32_t>(im.values.size())});
      im.values.push_back({p.dtype, 0});
    } else {
      p.role = ParamRole::kScalar;
      p.dtype = g::typeText(t);
      im.param_values.push_back(-1);
      step.args.push_back({PlanArg::kScalarParam, static_cast<uint32_t>(i)});
    }
    im.params.push_back(std::move(p));
  }
  im.steps.push_back(std::move(step));
  return out;
}

// A function cut into row stages (RowStages.h): its parts in call order,
// each operand and result as the function's input i, its output k, or
// intermediate j (a buffer of its own per call of the function).
struct PartRef {
  enum Kind { kInput, kOutput, kIntermediate } kind;
  uint32_t index;
};
struct RowPartLaunch {
  std::string kernel;
  std::string location;
  std::vector<PartRef> args;  // operands, then results
};
struct RowStagePlan {
  std::vector<RowPartLaunch> launches;
  std::vector<mlir::RankedTensorType> intermediates;
};

StatusOr<RowStagePlan> ReadRowStages(FuncOp fn) {
  RowStagePlan plan;
  llvm::DenseMap<mlir::Value, PartRef> ref;
  for (auto [i, a] : llvm::enumerate(fn.getArguments())) ref[a] = {PartRef::kInput, static_cast<uint32_t>(i)};
  mlir::Operation* ret = fn.front().getTerminator();
  for (auto [k, v] : llvm::enumerate(ret->getOperands())) ref[v] = {PartRef::kOutput, static_cast<uint32_t>(k)};
  for (mlir::Operation& op : fn.front().without_terminator()) {
    auto call = mlir::dyn_cast<mlir::func::CallOp>(op);
    if (!call) return Status(StatusCode::kInternal, "a row-stage plan holds something that is not a call");
    RowPartLaunch l;
    l.kernel = call.getCallee().str();
    l.location = LocText(call.getLoc());
    for (mlir::Value v : call.getOperands()) {
      auto it = ref.find(v);
      if (it == ref.end()) return Status(StatusCode::kInternal, "a row-stage operand comes from nowhere");
      l.args.push_back(it->second);
    }
    for (mlir::Value r : call.getResults()) {
      if (!ref.count(r)) {
        ref[r] = {PartRef::kIntermediate, static_cast<uint32_t>(plan.intermediates.size())};
        plan.intermediates.push_back(r.getType().cast<mlir::RankedTensorType>());
      }
      l.args.push_back(ref[r]);
    }
    plan.launches.push_back(std::move(l));
  }
  return plan;
}

// Graph IR stages -> Schedule IR functions the plugin turns into kernels.
// On these targets (cpu) a kernel's groups split its dim-0 rows, so a stage
// that is not row-local is cut into parts that are (row-stages, on unless
// the schedule says row-stages=0): one launch per part.
Status LowerStagesToSchedule(ParsedModule& parsed, mlir::ModuleOp staged, const std::vector<Stage>& stages,
                             const CompileTargetInfo& target, const std::string& schedule, LoweredProgram* out,
                             std::vector<std::pair<size_t, size_t>>* stage_steps) {
  // A stage function called several times (row blocks of an overlapped
  // pipeline) is compiled once; each call is a launch of its own.
  std::vector<std::string> names;
  for (const Stage& s : stages)
    if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
  out->module = ModuleOf(staged, names);
  mlir::PassManager pm(&parsed.context());
  pm.addPass(graph::createLowerQuantization());
  pm.addPass(graph::createLowerLayouts());
  graph::GraphToScheduleOptions defaults;
  defaults.rowStages = true;
  std::unique_ptr<mlir::Pass> gs = graph::createGraphToSchedule(defaults);
  if (std::string e = CheckSchedule(schedule); !e.empty()) return Status(StatusCode::kInvalidArgument, e);
  const std::string text = target.schedule + (schedule.empty() ? "" : " " + schedule);
  if (!text.empty() && mlir::failed(gs->initializeOptions(text)))
    return Status(StatusCode::kInvalidArgument,
                  "schedule '" + schedule + "' is not a list of --tessera-graph-to-schedule options "
                  "(e.g. \"tile-m=64 micro-m=4\")");
  pm.addPass(std::move(gs));
  if (mlir::failed(pm.run(*out->module)))
    // The program verified: what the schedule cannot lower (a policy no
    // backend honours, an unsupported shape) is UNSUPPORTED, as on the GPU
    // path (LowerStagesToTile).
    return parsed.Error(StatusCode::kUnsupported, "lowering " + parsed.name() + " to Schedule IR failed");
  // Stages cut into parts: read their plans, then leave only kernels.
  std::map<std::string, RowStagePlan> cut;
  for (const std::string& name : names) {
    auto fn = out->module->lookupSymbol<FuncOp>(name);
    if (!fn || !fn->hasAttr(graph::kRowStagesAttr)) continue;
    StatusOr<RowStagePlan> plan = ReadRowStages(fn);
    if (!plan.ok()) return plan.status();
    cut.emplace(name, std::move(*plan));
    fn.erase();
  }
  for (FuncOp f : out->module->getOps<FuncOp>()) f.setPublic();
  for (const Stage& s : stages) {
    const size_t first = out->image.steps.size();
    auto plan = cut.find(s.name);
    if (plan == cut.end()) {
      PlanStep step;
      step.kind = PlanStep::kLaunch;
      step.kernel = s.name;
      step.location = s.location;
      step.grid = step.group_size = TsDim3{0, 0, 0};  // the kernel's own (FinishImage)
      for (uint32_t v : s.inputs) step.args.push_back({PlanArg::kValue, v});
      for (uint32_t v : s.outputs) step.args.push_back({PlanArg::kValue, v});
      out->image.steps.push_back(std::move(step));
      stage_steps->push_back({first, out->image.steps.size()});
      continue;
    }
    // Fresh intermediates per call: calls of one stage may be in flight on
    // different streams (the overlapped pipeline).
    std::vector<uint32_t> intermediate;
    for (mlir::RankedTensorType t : plan->second.intermediates) {
      intermediate.push_back(static_cast<uint32_t>(out->image.values.size()));
      out->image.values.push_back({g::typeText(t.getElementType()), TensorBytes(t)});
    }
    for (const RowPartLaunch& l : plan->second.launches) {
      PlanStep step;
      step.kind = PlanStep::kLaunch;
      step.kernel = l.kernel;
      step.location = l.location;
      step.grid = step.group_size = TsDim3{0, 0, 0};
      for (const PartRef& r : l.args) {
        const std::vector<uint32_t>& from =
            r.kind == PartRef::kInput ? s.inputs : r.kind == PartRef::kOutput ? s.outputs : intermediate;
        if (r.index >= from.size()) return Status(StatusCode::kInternal, "a row-stage plan names an unknown value");
        step.args.push_back({PlanArg::kValue, from[r.index]});
      }
      out->image.steps.push_back(std::move(step));
    }
    stage_steps->push_back({first, out->image.steps.size()});
  }
  return Status::Ok();
}

// Graph IR stages -> Tile IR kernels + launch plans (the GPU path).
Status LowerStagesToTile(ParsedModule& parsed, mlir::ModuleOp staged, const std::vector<Stage>& stages,
                         const CompileTargetInfo& target, const std::string& schedule, LoweredProgram* out,
                         std::vector<std::pair<size_t, size_t>>* stage_steps) {
  out->module = ModuleOf(staged, {});
  if (std::string e = CheckSchedule(schedule); !e.empty()) return Status(StatusCode::kInvalidArgument, e);
  const std::string text = target.schedule + (schedule.empty() ? "" : " " + schedule);
  // Each stage function is lowered once; a function called several times
  // (row blocks of an overlapped pipeline) gets launches per call.
  std::map<std::string, conversion::LaunchPlan> plans;
  for (const Stage& s : stages) {
    auto known = plans.find(s.name);
    if (known == plans.end()) {
      mlir::OwningOpRef<mlir::ModuleOp> m = ModuleOf(staged, {s.name});
      mlir::PassManager pm(&parsed.context());
      if (mlir::failed(conversion::buildGpuGraphPipeline(pm, target.plugin, text)))
        return Status(StatusCode::kInvalidArgument,
                      "schedule '" + schedule + "' is not a list of --tessera-graph-to-schedule options "
                      "(e.g. \"tile-m=64 micro-m=4\")");
      if (mlir::failed(pm.run(*m)))
        return parsed.Error(StatusCode::kUnsupported,
                            "lowering " + s.name + " to Tile IR kernels for " + target.name + " failed");
      auto planFn = m->lookupSymbol<FuncOp>(s.name);
      if (!planFn) return Status(StatusCode::kInternal, "no launch plan for " + s.name);
      auto read = conversion::readLaunchPlan(planFn);
      if (mlir::failed(read)) return parsed.Error(StatusCode::kInternal, "reading the launch plan of " + s.name);
      mlir::PassManager strip(&parsed.context());
      strip.addPass(conversion::createStripLaunchPlans());
      if (mlir::failed(strip.run(*m))) return parsed.Error(StatusCode::kInternal, "stripping the launch plans");
      for (mlir::Operation& op : llvm::make_early_inc_range(m->getBody()->getOperations()))
        op.moveBefore(out->module->getBody(), out->module->getBody()->end());
      known = plans.emplace(s.name, std::move(*read)).first;
    }
    const conversion::LaunchPlan* plan = &known->second;
    // Plan buffers: the stage's inputs, its outputs, then intermediates.
    std::vector<uint32_t> value_of;
    const size_t nIn = s.inputs.size(), nOut = s.outputs.size();
    for (size_t b = 0; b < plan->buffers.size(); ++b) {
      const conversion::PlanBuffer& pb = plan->buffers[b];
      uint32_t v;
      if (b < nIn) v = s.inputs[b];
      else if (b < nIn + nOut) v = s.outputs[b - nIn];
      else {
        v = static_cast<uint32_t>(out->image.values.size());
        out->image.values.push_back({pb.dtype, 0});
      }
      PlanValue& pv = out->image.values[v];
      pv.bytes = std::max<uint64_t>(pv.bytes, static_cast<uint64_t>(pb.bytes));
      value_of.push_back(v);
    }
    size_t first = out->image.steps.size();
    for (const conversion::PlanLaunch& l : plan->launches) {
      PlanStep step;
      step.kind = PlanStep::kLaunch;
      step.kernel = l.kernel;
      step.location = s.location;
      step.grid = TsDim3{static_cast<uint32_t>(l.grid[0]), static_cast<uint32_t>(l.grid[1]),
                         static_cast<uint32_t>(l.grid[2])};
      step.group_size = TsDim3{static_cast<uint32_t>(l.groupSize[0]), static_cast<uint32_t>(l.groupSize[1]),
                               static_cast<uint32_t>(l.groupSize[2])};
      for (unsigned b : l.buffers) {
        if (b >= value_of.size()) return Status(StatusCode::kInternal, "a launch plan names an unknown buffer");
        step.args.push_back({PlanArg::kValue, value_of[b]});
      }
      out->image.steps.push_back(std::move(step));
    }
    stage_steps->push_back({first, out->image.steps.size()});
  }
  return Status::Ok();
}

// The devices of `mesh`, or an error naming it when a program cannot run on
// that many (kMaxProgramDevices).
StatusOr<int64_t> MeshDevices(ParsedModule& parsed, g::MeshOp mesh) {
  int64_t n = 1;
  for (int64_t s : mesh.getShape())
    if (__builtin_mul_overflow(n, s, &n) || n > kMaxProgramDevices) break;
  if (n <= kMaxProgramDevices) return n;
  std::string shape;
  for (int64_t s : mesh.getShape()) shape += (shape.empty() ? "" : " x ") + std::to_string(s);
  return parsed.Error(StatusCode::kInvalidArgument,
                      "mesh @" + mesh.getSymName().str() + " (" + shape + ") has more devices than a program runs on (" +
                          std::to_string(kMaxProgramDevices) + ")");
}

StatusOr<LoweredProgram> LowerGraph(ParsedModule& parsed, FuncOp fn, const CompileTargetInfo& target,
                                    const std::string& schedule, int64_t overlap_chunks) {
  LoweredProgram out;
  ProgramImage& im = out.image;
  im.function = fn.getName().str();
  mlir::FailureOr<g::MeshOp> mesh = g::findSpmdMesh(fn);
  if (mlir::failed(mesh)) return parsed.Error(StatusCode::kInvalidArgument, "the SPMD function " + im.function + " names no single mesh");
  mlir::OwningOpRef<mlir::ModuleOp> staged = ModuleOf(parsed.module(), {im.function});
  if (*mesh)
    if (auto devices = MeshDevices(parsed, *mesh); !devices.ok()) return devices.status();
  // Put the mesh back for the stage pass (ModuleOf drops meshes).
  if (*mesh) staged->push_back((*mesh)->clone());
  std::vector<Stage> stages;
  struct Collective {
    size_t order;  // index among the plan's steps
    PlanStep step;
  };
  std::vector<std::pair<bool, size_t>> order;  // (is stage, index into stages / collectives)
  std::vector<PlanStep> collectives;
  if (*mesh) {
    mlir::PassManager pm(&parsed.context());
    pm.addPass(g::createSpmdStages());
    if (overlap_chunks >= 2) pm.addPass(g::createOverlapCollectives({overlap_chunks}));
    if (mlir::failed(pm.run(*staged)))
      return parsed.Error(StatusCode::kInvalidArgument, "cannot cut " + im.function + " into SPMD stages");
    auto planFn = staged->lookupSymbol<FuncOp>(im.function);
    mlir::FailureOr<g::SpmdPlan> plan = g::readSpmdPlan(planFn);
    if (mlir::failed(plan)) return parsed.Error(StatusCode::kInvalidArgument, "reading the SPMD plan of " + im.function);
    im.mesh_axes = plan->axes;
    im.mesh_shape = plan->shape;
    for (const g::SpmdValue& v : plan->values)
      im.values.push_back({v.dtype, static_cast<uint64_t>(v.bytes), v.aliasOf, static_cast<uint64_t>(v.byteOffset),
                           v.meshPosition});
    for (const g::SpmdStep& st : plan->steps) {
      if (st.kind == g::SpmdStep::kStage) {
        order.push_back({true, stages.size()});
        stages.push_back({st.stage, {st.inputs.begin(), st.inputs.end()}, {st.outputs.begin(), st.outputs.end()},
                          LocText(st.op->getLoc())});
        continue;
      }
      const std::string& dt = plan->values[st.inputs[0]].dtype;
      // fp8 is a storage type: moved as bytes, which is right for gathers
      // and broadcasts and wrong for sums.
      if ((st.kind == g::SpmdStep::kAllReduce || st.kind == g::SpmdStep::kReduceScatter) &&
          (dt == "f8E4M3FN" || dt == "f8E5M2")) {
        st.op->emitOpError() << "reduces " << dt
                             << " values: fp8 is a storage type, cast to bf16 or f32 before reducing across devices";
        return parsed.Error(StatusCode::kInvalidArgument, "unsupported collective");
      }
      PlanStep c;
      c.kind = st.kind == g::SpmdStep::kAllReduce     ? PlanStep::kAllReduce
               : st.kind == g::SpmdStep::kBroadcast   ? PlanStep::kBroadcast
               : st.kind == g::SpmdStep::kAllGather   ? PlanStep::kAllGather
                                                      : PlanStep::kReduceScatter;
      c.input = st.inputs[0];
      c.output = st.outputs[0];
      c.axes = st.axes;
      c.count = static_cast<uint64_t>(st.count);
      c.reduce = st.reduce == g::ReduceKind::max   ? TS_REDUCE_MAX
                 : st.reduce == g::ReduceKind::min ? TS_REDUCE_MIN
                                                   : TS_REDUCE_SUM;
      c.dtype = ToTsType(dt);
      c.root = static_cast<uint32_t>(st.root);
      c.stream = st.stream;
      c.location = LocText(st.op->getLoc());
      order.push_back({false, collectives.size()});
      collectives.push_back(std::move(c));
    }
    // Params: the function's arguments then its results, with shardings.
    for (size_t i = 0; i < plan->argShardings.size(); ++i) {
      mlir::Type t = fn.getArgumentTypes()[i];
      if (llvm::any_of(plan->argShardings[i].dimAxes, [](const std::vector<int>& a) { return !a.empty(); }) &&
          g::getLayout(t) &&
          !g::getLayout(t).isRowMajor())
        return Status(StatusCode::kInvalidArgument,
                      parsed.name() + ": argument " + std::to_string(i) + " of " + im.function +
                          " is partitioned over the mesh: it must be row-major");
      ParamSpec p;
      p.name = "arg" + std::to_string(i);
      p.role = ParamRole::kInput;
      p.dtype = g::typeText(t.cast<mlir::RankedTensorType>().getElementType());
      p.shape.assign(t.cast<mlir::RankedTensorType>().getShape().begin(), t.cast<mlir::RankedTensorType>().getShape().end());
      p.sharding.dim_axes = plan->argShardings[i].dimAxes;
      p.sharding.partial_sum_axes = plan->argShardings[i].reduceAxes;
      im.params.push_back(std::move(p));
      im.param_values.push_back(static_cast<int32_t>(i));
    }
    for (size_t r = 0; r < plan->results.size(); ++r) {
      mlir::Type t = fn.getResultTypes()[r];
      if (g::getLayout(t) && !g::getLayout(t).isRowMajor())
        return Status(StatusCode::kInvalidArgument,
                      parsed.name() + ": result " + std::to_string(r) + " of an SPMD function must be row-major");
      ParamSpec p;
      p.name = "result" + std::to_string(r);
      p.role = ParamRole::kOutput;
      p.dtype = g::typeText(t.cast<mlir::RankedTensorType>().getElementType());
      p.shape.assign(t.cast<mlir::RankedTensorType>().getShape().begin(), t.cast<mlir::RankedTensorType>().getShape().end());
      p.sharding.dim_axes = plan->resultShardings[r].dimAxes;
      p.sharding.partial_sum_axes = plan->resultShardings[r].reduceAxes;
      im.params.push_back(std::move(p));
      im.param_values.push_back(static_cast<int32_t>(plan->results[r]));
    }
  } else {
    Stage s;
    s.name = im.function;
    s.location = LocText(fn.getLoc());
    auto addParam = [&](mlir::Type t, bool output, size_t i) -> Status {
      auto tt = t.dyn_cast<mlir::RankedTensorType>();
      if (!tt || !tt.hasStaticShape())
        return Status(StatusCode::kInvalidArgument,
                      parsed.name() + ": " + (output ? "result " : "argument ") + std::to_string(i) + " of " +
                          im.function + " is " + g::typeText(t) + ": programs take tensors of static shape");
      ParamSpec p;
      p.name = (output ? "result" : "arg") + std::to_string(i);
      p.role = output ? ParamRole::kOutput : ParamRole::kInput;
      p.dtype = g::typeText(tt.getElementType());
      p.shape.assign(tt.getShape().begin(), tt.getShape().end());
      uint32_t v = static_cast<uint32_t>(im.values.size());
      im.values.push_back({p.dtype, TensorBytes(tt)});
      im.param_values.push_back(static_cast<int32_t>(v));
      (output ? s.outputs : s.inputs).push_back(v);
      im.params.push_back(std::move(p));
      return Status::Ok();
    };
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) TESSERA_RETURN_IF_ERROR(addParam(t, false, i));
    for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) TESSERA_RETURN_IF_ERROR(addParam(t, true, i));
    order.push_back({true, 0});
    stages.push_back(std::move(s));
  }

  // Each stage lowered for the target; steps then follow the plan's order.
  std::vector<PlanStep> collected;
  std::vector<std::pair<size_t, size_t>> stage_steps;  // per stage call: its launches
  if (target.input_levels & TS_IR_LEVEL_SCHEDULE)
    TESSERA_RETURN_IF_ERROR(LowerStagesToSchedule(parsed, *staged, stages, target, schedule, &out, &stage_steps));
  else
    TESSERA_RETURN_IF_ERROR(LowerStagesToTile(parsed, *staged, stages, target, schedule, &out, &stage_steps));
  std::vector<PlanStep> launches = std::move(im.steps);
  for (auto [is_stage, index] : order) {
    if (!is_stage) {
      collected.push_back(collectives[index]);
      continue;
    }
    auto [first, last] = stage_steps[index];
    for (size_t k = first; k < last; ++k) collected.push_back(launches[k]);
  }
  im.steps = std::move(collected);
  return out;
}

}  // namespace

std::vector<std::string> Candidates(mlir::ModuleOp module) {
  std::vector<std::string> names;
  for (FuncOp f : module.getOps<FuncOp>())
    if (!f.isExternal() && (IsTileKernel(f) || IsGraphFunction(f))) names.push_back(f.getName().str());
  return names;
}

namespace {
StatusOr<FuncOp> Select(ParsedModule& parsed, const std::string& function) {
  std::vector<std::string> names = Candidates(parsed.module());
  auto list = [&] {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? std::string("none") : s;
  };
  std::string chosen = function;
  if (chosen.empty()) {
    if (names.empty())
      return Status(StatusCode::kInvalidArgument,
                    parsed.name() + ": nothing to run: no Graph IR function on tensors and no Tile IR kernel "
                                    "(a function with tessera_tile.group_size)");
    if (names.size() > 1)
      return Status(StatusCode::kInvalidArgument,
                    parsed.name() + " defines " + std::to_string(names.size()) + " functions (" + list() +
                        "): choose one (tessera-run --function NAME, ProgramCompileOptions::function)");
    chosen = names.front();
  } else if (std::find(names.begin(), names.end(), chosen) == names.end()) {
    return Status(StatusCode::kNotFound,
                  parsed.name() + " has no function or kernel named '" + chosen + "'; it has: " + list());
  }
  return parsed.module().lookupSymbol<FuncOp>(chosen);
}
}  // namespace

StatusOr<int64_t> DevicesNeeded(ParsedModule& parsed, const std::string& function) {
  auto fn = Select(parsed, function);
  if (!fn.ok()) return fn.status();
  if (IsTileKernel(*fn)) return int64_t{1};
  mlir::FailureOr<g::MeshOp> mesh = g::findSpmdMesh(*fn);
  if (mlir::failed(mesh)) return parsed.Error(StatusCode::kInvalidArgument, "the SPMD function names no single mesh");
  if (!*mesh) return int64_t{1};
  return MeshDevices(parsed, *mesh);
}

std::string ScheduleForArch(const std::string& schedule, const std::string& arch) {
  std::string out;
  llvm::SmallVector<llvm::StringRef, 16> tokens;
  llvm::StringRef(schedule).split(tokens, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef t : tokens) {
    // Option names have no ':' (tile-m, mma, ...): one before the '=' is an
    // architecture's.
    const size_t colon = t.find(':');
    if (colon != llvm::StringRef::npos && colon < t.find('=')) {
      if (t.take_front(colon) != arch) continue;
      t = t.drop_front(colon + 1);
    }
    out += (out.empty() ? "" : " ") + t.str();
  }
  return out;
}

StatusOr<LoweredProgram> Lower(ParsedModule& parsed, const std::string& function, const CompileTargetInfo& target,
                               const std::string& schedule, int64_t overlap_chunks, const Device* device) {
  auto selected = Select(parsed, function);
  if (!selected.ok()) return selected.status();
  FuncOp fn = *selected;
  const std::string chosen = fn.getName().str();
  // Read before lowering changes the function; recorded once params exist.
  TrainingMarks marks;
  if (std::string e = ReadTrainingMarks(fn, &marks); !e.empty())
    return Status(StatusCode::kInvalidArgument, parsed.name() + ": " + e);
  StatusOr<LoweredProgram> lowered = IsTileKernel(fn) ? LowerTileKernel(parsed, fn, device)
                                                      : LowerGraph(parsed, fn, target, schedule, overlap_chunks);
  if (!lowered.ok()) return lowered;
  ProgramImage& im = lowered->image;
  if (std::string e = RecordTrainingMarks(marks, &im); !e.empty()) return Status(StatusCode::kInternal, e);
  im.plugin = target.plugin;
  // The absolute path: a .tsp is checked against its source from any folder.
  im.source_name = parsed.absolute_path().empty() ? parsed.name() : parsed.absolute_path();
  if (mlir::failed(mlir::verify(*lowered->module)))
    return parsed.Error(StatusCode::kInternal, "the lowered module of " + chosen + " does not verify");
  return lowered;
}

Status FinishImage(ProgramImage* image, const CompileOutput& compiled) {
  for (PlanStep& s : image->steps) {
    if (s.kind != PlanStep::kLaunch) continue;
    auto sig = std::find_if(compiled.kernels.begin(), compiled.kernels.end(),
                            [&](const KernelSignature& k) { return k.name == s.kernel; });
    if (sig == compiled.kernels.end())
      return Status(StatusCode::kInternal, "the " + compiled.plugin + " compiler returned no kernel '" + s.kernel + "'");
    // Scratch parameters (TS_PARAM_SCRATCH) follow the function's: each
    // launch gets a buffer of its own, kept by the program between runs.
    for (size_t a = s.args.size(); a < sig->params.size(); ++a) {
      const KernelParamInfo& kp = sig->params[a];
      if (kp.kind != TS_KERNEL_ARG_BUFFER || !(kp.access & TS_PARAM_SCRATCH)) break;
      s.args.push_back({PlanArg::kValue, static_cast<uint32_t>(image->values.size())});
      image->values.push_back({kp.dtype.empty() ? "i8" : kp.dtype, kp.bytes});
    }
    if (sig->params.size() != s.args.size())
      return Status(StatusCode::kInternal, "the " + compiled.plugin + " compiler's kernel '" + s.kernel + "' takes " +
                                               std::to_string(sig->params.size()) + " arguments; the plan passes " +
                                               std::to_string(s.args.size()));
    // The kernel's own launch description where the plan left it to the
    // kernel (Tile IR kernels, kernels compiled from Schedule IR).
    if (s.grid.x == 0) s.grid = sig->grid.x ? sig->grid : TsDim3{1, 1, 1};
    if (s.group_size.x == 0) s.group_size = sig->group_size.x ? sig->group_size : TsDim3{1, 1, 1};
    s.shared_memory_bytes = sig->shared_memory_bytes;
    for (size_t a = 0; a < s.args.size(); ++a) {
      const KernelParamInfo& kp = sig->params[a];
      if (s.args[a].kind == PlanArg::kValue) {
        PlanValue& v = image->values[s.args[a].index];
        if (v.alias_of >= 0 && kp.bytes > v.bytes)
          return Status(StatusCode::kInternal, "kernel '" + s.kernel + "' reads " + std::to_string(kp.bytes) +
                                                   " bytes of argument " + std::to_string(a) +
                                                   ", a view of " + std::to_string(v.bytes));
        v.bytes = std::max(v.bytes, kp.bytes);
      }
    }
  }
  for (size_t i = 0; i < image->params.size(); ++i) {
    ParamSpec& p = image->params[i];
    if (image->param_values[i] >= 0) {
      p.bytes = image->values[image->param_values[i]].bytes;
    } else {
      // A scalar: its type and size as the kernel takes it (an index is
      // i64 on the cpu, i32 in SPIR-V).
      for (const PlanStep& s : image->steps)
        for (size_t a = 0; a < s.args.size(); ++a)
          if (s.args[a].kind == PlanArg::kScalarParam && s.args[a].index == i)
            for (const KernelSignature& k : compiled.kernels)
              if (k.name == s.kernel && a < k.params.size()) {
                p.bytes = k.params[a].bytes;
                if (!k.params[a].dtype.empty()) p.dtype = k.params[a].dtype;
              }
      if (p.bytes == 0) p.bytes = elements::DtypeSize(p.dtype);
    }
  }
  return Status::Ok();
}

}  // namespace tessera::program
