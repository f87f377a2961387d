#include "spmd.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include "mlir/Pass/PassManager.h"
#include "dtype.hpp"
#include "npy.hpp"
#include "spmd_reference.hpp"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"
#include "tessera/Target/CPU/Compiler.h"

namespace tessera::run {
namespace {

namespace g = tessera::graph;
using mlir::func::FuncOp;

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}
std::string ShapeStr(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r + "]";
}
TsDataType TsType(const std::string& dt) {
  if (dt == "f32") return TS_DTYPE_F32;
  if (dt == "f64") return TS_DTYPE_F64;
  if (dt == "i32") return TS_DTYPE_I32;
  if (dt == "i64") return TS_DTYPE_I64;
  if (dt == "f16") return TS_DTYPE_F16;
  if (dt == "bf16") return TS_DTYPE_BF16;
  if (dt == "i8") return TS_DTYPE_I8;
  return TS_DTYPE_U8;  // f8E4M3FN: bytes
}
TsReduceOp TsReduce(g::ReduceKind k) { return k == g::ReduceKind::max ? TS_REDUCE_MAX : TS_REDUCE_SUM; }

// ---------------------------------------------------------------- shardings

// The global shape of a value with sharding `s` on a mesh of `mesh` sizes.
std::vector<int64_t> GlobalShape(const g::SpmdSharding& s, const std::vector<int64_t>& local,
                                 const std::vector<int64_t>& mesh) {
  std::vector<int64_t> out = local;
  for (size_t d = 0; d < out.size(); ++d)
    if (s.dimAxis[d] >= 0) out[d] *= mesh[s.dimAxis[d]];
  return out;
}
// Element offset in the (row-major) global tensor of device `dev`'s local
// element at flat row-major index `i`.
struct BlockMap {
  std::vector<int64_t> local, global, origin;
  BlockMap(const g::SpmdSharding& s, const std::vector<int64_t>& localShape,
           const std::vector<int64_t>& mesh, int64_t dev)
      : local(localShape), global(GlobalShape(s, localShape, mesh)), origin(localShape.size(), 0) {
    std::vector<int64_t> c = g::meshCoords(mesh, dev);
    for (size_t d = 0; d < local.size(); ++d)
      if (s.dimAxis[d] >= 0) origin[d] = c[s.dimAxis[d]] * local[d];
  }
  int64_t operator()(int64_t i) const {
    int64_t off = 0, stride = 1;
    for (size_t d = local.size(); d-- > 0;) {
      off += (origin[d] + i % local[d]) * stride;
      i /= local[d];
      stride *= global[d];
    }
    return off;
  }
};
// True when device `dev` holds the value of a partial-sum (reduce) sharding:
// coordinate 0 on every reduce axis; the others hold zeros.
bool HoldsPartial(const g::SpmdSharding& s, const std::vector<int64_t>& mesh, int64_t dev) {
  std::vector<int64_t> c = g::meshCoords(mesh, dev);
  for (int a : s.reduceAxes)
    if (c[a] != 0) return false;
  return true;
}
bool Partitioned(const g::SpmdSharding& s) {
  for (int a : s.dimAxis)
    if (a >= 0) return true;
  return false;
}

std::string ShardingStr(const g::SpmdSharding& s, const g::SpmdPlan& p) {
  std::string r;
  for (size_t d = 0; d < s.dimAxis.size(); ++d)
    if (s.dimAxis[d] >= 0) r += (r.empty() ? "" : ", ") + ("dim " + std::to_string(d) + " over " + p.axes[s.dimAxis[d]]);
  for (int a : s.reduceAxes) r += (r.empty() ? "" : ", ") + ("partial sums over " + p.axes[a]);
  return r.empty() ? "replicated" : r;
}

// ------------------------------------------------------------- the program

struct Stage {
  Kernel kernel;
  cpu::KernelInfo info;
};
struct DeviceState {
  Device device;
  Stream stream;
  Executable executable;
  std::map<std::string, Stage> stages;
  std::vector<Buffer> values;  // one buffer per plan value
};

int Fail(int rc, const std::string& what) {
  std::fprintf(stderr, "tessera-run: %s\n", what.c_str());
  return rc;
}

FuncOp PickFunction(mlir::ModuleOp module, const std::string& name, g::MeshOp* mesh) {
  for (FuncOp fn : module.getOps<FuncOp>()) {
    if (fn.isExternal() || (!name.empty() && fn.getName() != name)) continue;
    mlir::FailureOr<g::MeshOp> m = g::findSpmdMesh(fn);
    if (mlir::failed(m)) return nullptr;
    if (*m) {
      *mesh = *m;
      return fn;
    }
  }
  return nullptr;
}

}  // namespace

int64_t SpmdDevicesNeeded(mlir::ModuleOp module, const std::string& function) {
  for (FuncOp fn : module.getOps<FuncOp>()) {
    if (fn.isExternal() || (!function.empty() && fn.getName() != function)) continue;
    mlir::FailureOr<g::MeshOp> m = g::findSpmdMesh(fn);
    if (mlir::failed(m)) return -1;
    if (*m) {
      int64_t n = 1;
      for (int64_t s : m->getShape()) n *= s;
      return n;
    }
  }
  return 0;
}

int RunSpmd(mlir::ModuleOp module, const SpmdOptions& o, const Runtime& rt) {
  g::MeshOp srcMesh;
  FuncOp srcFn = PickFunction(module, o.function, &srcMesh);
  if (!srcFn) return Fail(1, o.program + ": no SPMD function" + (o.function.empty() ? "" : " named " + o.function));
  if (rt.backend() != "cpu")
    return Fail(2, "SPMD programs run on the cpu backend for now (backend " + rt.backend() +
                       "); run with TESSERA_BACKEND=cpu");

  // ---- stages + plan, on a copy (the original is the reference's)
  auto t0 = std::chrono::steady_clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> staged(module.clone());
  for (FuncOp fn : llvm::make_early_inc_range(staged->getOps<FuncOp>()))
    if (fn.getName() != srcFn.getName()) fn.erase();  // only the program that runs
  {
    mlir::PassManager pm(module.getContext());
    pm.addPass(g::createSpmdStages());
    if (mlir::failed(pm.run(*staged))) return Fail(1, o.program + ": cannot cut the program into stages");
  }
  FuncOp planFn = staged->lookupSymbol<FuncOp>(srcFn.getName());
  mlir::FailureOr<g::SpmdPlan> planOr = g::readSpmdPlan(planFn);
  if (mlir::failed(planOr)) return 1;
  const g::SpmdPlan& plan = *planOr;
  const int64_t P = plan.devices();
  // fp8 is a storage type: the Communicator moves it as bytes (U8), which
  // is right for gathers and broadcasts and wrong for sums.
  for (const g::SpmdStep& st : plan.steps)
    if ((st.kind == g::SpmdStep::kAllReduce || st.kind == g::SpmdStep::kReduceScatter) &&
        plan.values[st.inputs[0]].dtype == "f8E4M3FN") {
      st.op->emitOpError("reduces f8E4M3FN values: fp8 is a storage type, cast to bf16 or f32 "
                         "before reducing across devices");
      return 1;
    }
  for (size_t i = 0; i < plan.argShardings.size(); ++i)
    if (Partitioned(plan.argShardings[i]) && g::getLayout(srcFn.getArgumentTypes()[i]) &&
        !g::getLayout(srcFn.getArgumentTypes()[i]).isRowMajor())
      return Fail(1, "argument " + std::to_string(i) + " is partitioned over the mesh: it must be row-major");
  for (size_t i = 0; i < plan.resultShardings.size(); ++i)
    if (g::getLayout(srcFn.getResultTypes()[i]) && !g::getLayout(srcFn.getResultTypes()[i]).isRowMajor())
      return Fail(1, "result " + std::to_string(i) + " of an SPMD function must be row-major");

  // ---- devices
  std::vector<Device> devs = rt.devices();
  if (static_cast<int64_t>(devs.size()) < P)
    return Fail(2, "mesh @" + plan.mesh + " needs " + std::to_string(P) + " devices; backend " + rt.backend() +
                       " has " + std::to_string(devs.size()) + " (set TESSERA_CPU_DEVICES=" + std::to_string(P) +
                       " for the cpu backend)");
  devs.resize(P);

  // ---- compile the stages once: a module of the stage functions alone
  cpu::CompiledProgram compiled;
  bool haveStages = false;
  {
    mlir::OwningOpRef<mlir::ModuleOp> stages(staged->clone());
    for (FuncOp fn : llvm::make_early_inc_range(stages->getOps<FuncOp>()))
      if (!fn.isPrivate() || fn.isExternal()) fn.erase();
    for (g::MeshOp m : llvm::make_early_inc_range(stages->getOps<g::MeshOp>())) m.erase();
    for (FuncOp fn : stages->getOps<FuncOp>()) {
      fn.setPublic();
      haveStages = true;
    }
    if (haveStages) {
      auto c = cpu::compileForCPU(*stages, {});
      if (mlir::failed(c)) return Fail(1, o.program + ": compilation of the stages failed");
      compiled = *c;
    }
  }
  double compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  size_t nStages = 0, nCollectives = 0;
  for (const g::SpmdStep& s : plan.steps) (s.kind == g::SpmdStep::kStage ? nStages : nCollectives)++;
  std::printf("compiled %s: %s on mesh @%s [", o.program.c_str(), plan.name.c_str(), plan.mesh.c_str());
  for (size_t a = 0; a < plan.axes.size(); ++a)
    std::printf("%s%s=%lld", a ? ", " : "", plan.axes[a].c_str(), static_cast<long long>(plan.shape[a]));
  std::printf("] to %zu stages and %zu collectives in %.1f ms%s\n", nStages, nCollectives, compileMs,
              compiled.cache_hit ? " (cache hit)" : "");

  // ---- per device: executable, stage kernels, buffers
  std::vector<DeviceState> ds(P);
  for (int64_t d = 0; d < P; ++d) {
    DeviceState& s = ds[d];
    s.device = devs[d];
    s.stream = s.device.default_stream();
    if (haveStages) {
      auto exe = s.device.load_executable("elf-native", compiled.so_path);
      if (!exe.ok()) return Fail(2, "device " + std::to_string(d) + ": " + exe.status().ToString());
      s.executable = *exe;
      for (const cpu::KernelInfo& k : compiled.kernels) {
        auto kern = s.executable.kernel(k.name);
        if (!kern.ok()) return Fail(2, kern.status().ToString());
        s.stages[k.name] = Stage{*kern, k};
      }
    }
    for (const g::SpmdValue& v : plan.values) {
      auto b = s.device.allocate(std::max<int64_t>(v.bytes, 1));
      if (!b.ok()) return Fail(2, "device " + std::to_string(d) + ": " + b.status().ToString());
      s.values.push_back(*b);
    }
  }

  // ---- inputs: global tensors cut into local ones
  std::mt19937 rng(o.seed);
  const size_t nArgs = plan.argShardings.size();
  if (o.inputs.size() > nArgs)
    return Fail(1, std::to_string(o.inputs.size()) + " --input files given, " + plan.name + " takes " +
                       std::to_string(nArgs));
  if (o.outputs.size() > plan.results.size())
    return Fail(1, std::to_string(o.outputs.size()) + " --output files given, " + plan.name + " has " +
                       std::to_string(plan.results.size()) + " results");
  std::vector<HostTensors> localIn(P, HostTensors(nArgs));
  for (size_t i = 0; i < nArgs; ++i) {
    const g::SpmdValue& v = plan.values[i];
    const g::SpmdSharding& sh = plan.argShardings[i];
    NpyArray global;
    global.dtype = v.dtype;
    global.shape = GlobalShape(sh, v.shape, plan.shape);
    const size_t es = DtypeSize(v.dtype);
    if (i < o.inputs.size()) {
      std::string e = ReadNpy(o.inputs[i], &global);
      if (!e.empty()) return Fail(1, e);
      std::vector<int64_t> want = GlobalShape(sh, v.shape, plan.shape);
      if (global.dtype != v.dtype || global.shape != want)
        return Fail(1, o.inputs[i] + ": argument " + std::to_string(i) + " of " + plan.name + " expects the global " +
                           v.dtype + " " + ShapeStr(want) + " (local " + ShapeStr(v.shape) + ", " +
                           ShardingStr(sh, plan) + "), the file holds " + global.dtype + " " + ShapeStr(global.shape));
    } else {
      global.bytes.assign(Elements(global.shape) * es, 0);
      for (int64_t k = 0; k < Elements(global.shape); ++k)
        Encode(RandomValue(rng, v.dtype), &global.bytes[k * es], v.dtype);
    }
    for (int64_t d = 0; d < P; ++d) {
      std::vector<unsigned char> local(v.bytes, 0);
      if (HoldsPartial(sh, plan.shape, d)) {
        BlockMap map(sh, v.shape, plan.shape, d);
        for (int64_t k = 0; k < Elements(v.shape); ++k)
          std::memcpy(&local[k * es], &global.bytes[map(k) * es], es);
      }
      if (Status st = copy(ds[d].values[i], local.data(), local.size()); !st.ok()) return Fail(2, st.ToString());
      localIn[d][i] = DecodeAll(local, v.dtype);
    }
  }

  // ---- communicators: one per group of devices, per set of axes
  std::map<std::vector<int>, std::map<int64_t, Communicator>> comms;  // axes -> first device -> comm
  for (const g::SpmdStep& s : plan.steps) {
    if (s.kind == g::SpmdStep::kStage || comms.count(s.axes)) continue;
    auto& byGroup = comms[s.axes];
    for (int64_t d = 0; d < P; ++d) {
      std::vector<int64_t> group = g::collectiveGroup(plan.shape, s.axes, d);
      if (byGroup.count(group[0])) continue;
      std::vector<Device> members;
      for (int64_t m : group) members.push_back(devs[m]);
      auto c = rt.create_communicator(members);
      if (!c.ok()) return Fail(2, "communicator over " + std::to_string(group.size()) + " devices: " + c.status().ToString());
      byGroup[group[0]] = *c;
    }
  }

  // ---- one iteration: the plan's steps on every device, then synchronize
  auto enqueue = [&](const g::SpmdStep& s) -> Status {
    if (s.kind == g::SpmdStep::kStage) {
      for (int64_t d = 0; d < P; ++d) {
        const Stage& st = ds[d].stages.at(s.stage);
        std::vector<KernelArg> args;
        for (unsigned v : s.inputs) args.push_back(KernelArg::buffer(ds[d].values[v]));
        for (unsigned v : s.outputs) args.push_back(KernelArg::buffer(ds[d].values[v]));
        TsDim3 grid{st.info.grid[0], st.info.grid[1], st.info.grid[2]};
        TsDim3 group{st.info.group_size[0], st.info.group_size[1], st.info.group_size[2]};
        if (Status e = ds[d].stream.launch(st.kernel, grid, group, args, 0); !e.ok()) return e;
      }
      return Status();
    }
    const g::SpmdValue& in = plan.values[s.inputs[0]];
    for (auto& [first, comm] : comms.at(s.axes)) {
      std::vector<int64_t> group = g::collectiveGroup(plan.shape, s.axes, first);
      std::vector<Buffer> send, recv;
      std::vector<Stream> streams;
      for (int64_t m : group) {
        send.push_back(ds[m].values[s.inputs[0]]);
        recv.push_back(ds[m].values[s.outputs[0]]);
        streams.push_back(ds[m].stream);
      }
      const uint64_t n = static_cast<uint64_t>(s.count);
      const TsDataType dt = TsType(in.dtype);
      Status e;
      switch (s.kind) {
        case g::SpmdStep::kAllReduce: e = comm.all_reduce(send, recv, n, dt, TsReduce(s.reduce), streams, true); break;
        case g::SpmdStep::kBroadcast: e = comm.broadcast(send, recv, n, dt, static_cast<uint32_t>(s.root), streams); break;
        case g::SpmdStep::kAllGather: e = comm.all_gather(send, recv, n, dt, streams); break;
        case g::SpmdStep::kReduceScatter: e = comm.reduce_scatter(send, recv, n, dt, TsReduce(s.reduce), streams, true); break;
        default: break;
      }
      if (!e.ok()) return e;
    }
    return Status();
  };
  auto iteration = [&]() -> bool {
    for (const g::SpmdStep& s : plan.steps) {
      if (Status e = enqueue(s); !e.ok()) {
        std::string what;
        llvm::raw_string_ostream os(what);
        s.op->getLoc().print(os);
        std::fprintf(stderr, "tessera-run: %s: %s\n", os.str().c_str(), e.ToString().c_str());
        return false;
      }
    }
    for (DeviceState& s : ds)
      if (Status e = s.stream.synchronize(); !e.ok()) return Fail(2, e.ToString()), false;
    return true;
  };
  if (!iteration()) return 2;

  // ---- results: per device, then the global ones
  std::vector<std::vector<std::vector<unsigned char>>> gotBytes(P);  // [device][result]
  std::vector<HostTensors> got(P);
  for (int64_t d = 0; d < P; ++d)
    for (unsigned r : plan.results) {
      const g::SpmdValue& v = plan.values[r];
      std::vector<unsigned char> bytes(v.bytes);
      if (Status st = copy(bytes.data(), ds[d].values[r], bytes.size()); !st.ok()) return Fail(2, st.ToString());
      got[d].push_back(DecodeAll(bytes, v.dtype));
      gotBytes[d].push_back(std::move(bytes));
    }
  int rc = 0;
  if (o.verify) {
    std::vector<HostTensors> expected;
    std::string e = ReferenceSpmd(srcFn, srcMesh, localIn, &expected);
    if (!e.empty()) {
      std::fprintf(stderr, "tessera-run: reference: %s: the result was NOT checked "
                   "(--no-verify runs it unchecked on purpose)\n", e.c_str());
      rc = 4;  // not checked (tessera-run.cpp's kExitNoReference)
    } else {
      // One line per result type, each with its tolerance (dtype.hpp).
      std::vector<std::string> types;
      for (unsigned r : plan.results)
        if (std::find(types.begin(), types.end(), plan.values[r].dtype) == types.end())
          types.push_back(plan.values[r].dtype);
      for (const std::string& dt : types) {
        Mismatch m, worst;
        int64_t worstDevice = 0;
        for (int64_t d = 0; d < P; ++d) {
          Mismatch md;
          for (size_t r = 0; r < plan.results.size(); ++r)
            if (plan.values[plan.results[r]].dtype == dt) Compare(gotBytes[d][r], dt, expected[d][r], &md);
          if (md.max_error > worst.max_error || d == 0) { worst = md; worstDevice = d; }
          m.max_error = std::max(m.max_error, md.max_error);
          m.max_ref = std::max(m.max_ref, md.max_ref);
        }
        double tol = o.tolerance >= 0 ? o.tolerance : DefaultTolerance(dt);
        bool ok = m.max_error <= tol * std::max(1.0, m.max_ref);
        std::string label = types.size() > 1 ? dt + " results: " : "";
        std::string why = o.tolerance >= 0 ? "--tolerance" : "default for " + dt;
        std::printf("verify: %lld devices, %smax abs error %.3g (device %lld; max |ref| %.3g, tolerance %.3g "
                    "relative, %s): %s\n",
                    static_cast<long long>(P), label.c_str(), m.max_error, static_cast<long long>(worstDevice),
                    m.max_ref, tol, why.c_str(), ok ? "PASS" : "FAIL");
        if (!ok) rc = 3;
      }
    }
  }
  // Global results: partitioned dims placed, partial sums added; copies on
  // replicated axes must agree.
  std::vector<NpyArray> globals;
  for (size_t r = 0; r < plan.results.size(); ++r) {
    const g::SpmdValue& v = plan.values[plan.results[r]];
    const g::SpmdSharding& sh = plan.resultShardings[r];
    std::vector<int64_t> gshape = GlobalShape(sh, v.shape, plan.shape);
    std::vector<double> sum(Elements(gshape), 0.0);
    double replicaDiff = 0;
    // Devices with the same coordinates on the partitioned and reduce axes
    // hold copies of one block: the first is placed (partial sums added),
    // the others are compared with it.
    std::map<std::vector<int64_t>, int64_t> firstHolder;
    for (int64_t d = 0; d < P; ++d) {
      std::vector<int64_t> c = g::meshCoords(plan.shape, d), key;
      for (int a : sh.dimAxis) key.push_back(a >= 0 ? c[a] : -1);
      for (int a : sh.reduceAxes) key.push_back(c[a]);
      auto [it, isFirst] = firstHolder.emplace(key, d);
      const std::vector<double>& x = got[d][r];
      if (!isFirst) {
        const std::vector<double>& ref = got[it->second][r];
        for (size_t k = 0; k < x.size(); ++k) replicaDiff = std::max<double>(replicaDiff, std::fabs(x[k] - ref[k]));
        continue;
      }
      BlockMap map(sh, v.shape, plan.shape, d);
      for (int64_t k = 0; k < Elements(v.shape); ++k) sum[map(k)] += x[k];
    }
    if (replicaDiff > 0)
      std::printf("warning: result %zu is replicated over some mesh axes (%s) but the devices hold values that differ "
                  "by up to %.3g: declare how it is sharded\n",
                  r, ShardingStr(sh, plan).c_str(), replicaDiff);
    NpyArray out;
    out.dtype = v.dtype;
    out.shape = gshape;
    out.bytes.assign(sum.size() * DtypeSize(v.dtype), 0);
    // Partial sums add exactly in double and are rounded once to the type.
    for (size_t k = 0; k < sum.size(); ++k) Encode(sum[k], &out.bytes[k * DtypeSize(v.dtype)], v.dtype);
    globals.push_back(std::move(out));
  }

  // ---- timing
  auto t1 = std::chrono::steady_clock::now();
  for (int it = 0; it < o.iterations; ++it)
    if (!iteration()) return 2;
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count() / o.iterations;
  double flops = 0;
  srcFn.walk([&](g::MatmulOp mm) {
    auto t = mm.getLhs().getType().cast<mlir::RankedTensorType>();
    auto r = mm.getResult().getType().cast<mlir::RankedTensorType>();
    flops += 2.0 * r.getNumElements() * t.getShape().back() * P;
  });
  std::printf("time: %.3f ms per iteration over %d iterations (%lld devices, %zu steps, %s)", ms, o.iterations,
              static_cast<long long>(P), plan.steps.size(), rt.backend().c_str());
  if (flops > 0) std::printf(", %.1f GFLOP/s over all devices", flops / (ms * 1e6));
  std::printf("\n");
  for (size_t k = 0; k < o.outputs.size(); ++k) {
    std::string e = WriteNpy(o.outputs[k], globals[k]);
    if (!e.empty()) return Fail(1, e);
    std::printf("wrote %s: global result %zu, %s %s\n", o.outputs[k].c_str(), k, globals[k].dtype.c_str(),
                ShapeStr(globals[k].shape).c_str());
  }
  return rc;
}

}  // namespace tessera::run
