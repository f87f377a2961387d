// Program: a ProgramImage loaded on devices, and its runs.
#include "tessera/program.hpp"

#include <algorithm>
#include <new>
#include <type_traits>
#include <map>
#include <set>

#include "mesh.hpp"
#include "program_impl.hpp"
#include "tessera/element_types.hpp"

namespace tessera {

const char* ParamRoleName(ParamRole role) {
  switch (role) {
    case ParamRole::kInput: return "input";
    case ParamRole::kOutput: return "output";
    case ParamRole::kInOut: return "inout";
    case ParamRole::kScalar: return "scalar";
  }
  return "unknown";
}

bool Sharding::replicated() const {
  return std::all_of(dim_axes.begin(), dim_axes.end(), [](const std::vector<int>& a) { return a.empty(); }) &&
         partial_sum_axes.empty();
}


namespace detail {

bool ResolveView(const ProgramImage& im, uint32_t v, uint32_t* root, uint64_t* offset) {
  uint64_t off = 0;
  // A chain visits each value once at most: longer is a cycle.
  for (size_t hops = 0; hops <= im.values.size(); ++hops) {
    if (v >= im.values.size()) return false;
    const PlanValue& pv = im.values[v];
    if (pv.alias_of < 0) {
      *root = v;
      *offset = off;
      return true;
    }
    if (pv.offset > UINT64_MAX - off) return false;
    off += pv.offset;
    v = static_cast<uint32_t>(pv.alias_of);
  }
  return false;
}

}  // namespace detail

namespace {

// A device named in a message about another one: when the two are of
// different Runtimes their names are the same ("cpu device 0" twice), so
// that is said.
std::string OtherDevice(const Device& have, const Device& want) {
  if (have.runtime().impl() != want.runtime().impl())
    return have.info().name + " of another Runtime (objects of one Runtime cannot be used with another's)";
  return have.info().name;
}

Status Invalid(const ProgramImage& im, const std::string& what) {
  return Status(StatusCode::kDataLoss, "program " + im.function + " (" + im.source_name + ", target " +
                                           im.target + "): " + what + ": the program image is corrupt");
}

// Everything an image refers to exists and fits: a hand-edited or damaged
// file is rejected here, not by a plugin at launch time.
Status CheckImage(const ProgramImage& im) {
  if (im.params.size() != im.param_values.size()) return Invalid(im, "params and their values differ in number");
  if (im.mesh_axes.size() != im.mesh_shape.size()) return Invalid(im, "mesh axes and sizes differ in number");
  for (int64_t s : im.mesh_shape)
    if (s <= 0 || s > kMaxProgramDevices) return Invalid(im, "a mesh axis of size " + std::to_string(s));
  if (im.devices() > static_cast<uint64_t>(kMaxProgramDevices))
    return Invalid(im, "a mesh of more than " + std::to_string(kMaxProgramDevices) + " devices");
  for (size_t i = 0; i < im.params.size(); ++i) {
    const ParamSpec& p = im.params[i];
    int32_t v = im.param_values[i];
    if (p.role == ParamRole::kScalar) {
      if (v != -1) return Invalid(im, "scalar param " + p.name + " bound to a buffer");
      if (p.bytes == 0 || p.bytes > 16) return Invalid(im, "scalar param " + p.name + " of " + std::to_string(p.bytes) + " bytes");
      continue;
    }
    if (v < 0 || static_cast<size_t>(v) >= im.values.size())
      return Invalid(im, "param " + p.name + " bound to no value");
    // Its bytes are what its shape and element type say: runners size host
    // arrays, scatter and check by shape, and write up to `bytes`.
    if (!elements::HasElementSize(p.dtype))
      return Invalid(im, "param " + p.name + " has element type '" + p.dtype + "', which has no known size");
    // A dynamic dim (a Tile IR kernel's memref<?xf32>, negative here) leaves
    // the size to the caller's buffer.
    uint64_t bytes = elements::DtypeSize(p.dtype);
    bool dynamic = false;
    for (int64_t d : p.shape) {
      if (d < 0) dynamic = true;
      else if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
        return Invalid(im, "param " + p.name + " has an overflowing shape");
    }
    if (!dynamic && bytes != p.bytes)
      return Invalid(im, "param " + p.name + " holds " + std::to_string(p.bytes) + " bytes, its shape and " +
                             p.dtype + " elements " + std::to_string(bytes));
    if (im.values[v].bytes < p.bytes) return Invalid(im, "param " + p.name + " is bound to a smaller value");
    // Every axis known and used once (a dim split over an axis twice, or an
    // axis both splitting and reducing, has no meaning).
    std::vector<bool> used(im.mesh_shape.size(), false);
    auto use = [&](int a) -> bool {
      if (a < 0 || a >= static_cast<int>(im.mesh_shape.size()) || used[a]) return false;
      used[a] = true;
      return true;
    };
    for (const std::vector<int>& axes : p.sharding.dim_axes)
      for (int a : axes)
        if (!use(a)) return Invalid(im, "param " + p.name + " has a sharding on an unknown or repeated axis");
    for (int a : p.sharding.partial_sum_axes)
      if (!use(a)) return Invalid(im, "param " + p.name + " has a sharding on an unknown or repeated axis");
    if (!p.sharding.dim_axes.empty() && p.sharding.dim_axes.size() != p.shape.size())
      return Invalid(im, "param " + p.name + " sharded over a different rank");
  }
  // A placement given at compile time names the mesh's axes, once each, and
  // fits the arguments and results (a runner places its reference with it).
  if (im.placed) {
    if (im.mesh_axes.empty()) return Invalid(im, "a placement without a mesh");
    for (const auto* side : {&im.placed_in, &im.placed_out}) {
      if (side->size() > im.params.size()) return Invalid(im, "a placement of more tensors than the program has");
      for (const auto& dims : *side) {
        if (dims.size() > 8) return Invalid(im, "a placement of more than 8 dims");
        std::vector<bool> used(im.mesh_axes.size(), false);
        for (const auto& axes : dims)
          for (const std::string& a : axes) {
            auto at = std::find(im.mesh_axes.begin(), im.mesh_axes.end(), a);
            if (at == im.mesh_axes.end() || used[at - im.mesh_axes.begin()])
              return Invalid(im, "a placement over an unknown or repeated mesh axis '" + a + "'");
            used[at - im.mesh_axes.begin()] = true;
          }
      }
    }
  }
  // Training marks: a result param replaces an input param of its size,
  // each input at most once; step_ok is a result of one byte or more.
  std::vector<bool> updated(im.params.size(), false);
  for (const ProgramImage::StateUpdate& u : im.state_updates) {
    if (u.result_param >= im.params.size() || u.arg_param >= im.params.size() ||
        im.params[u.result_param].role != ParamRole::kOutput || im.params[u.arg_param].role != ParamRole::kInput ||
        im.params[u.result_param].bytes != im.params[u.arg_param].bytes || updated[u.arg_param])
      return Invalid(im, "a state update of param " + std::to_string(u.arg_param) + " by param " +
                             std::to_string(u.result_param) + " that do not match");
    updated[u.arg_param] = true;
  }
  if (im.step_ok_param >= 0 && (static_cast<size_t>(im.step_ok_param) >= im.params.size() ||
                                im.params[im.step_ok_param].role != ParamRole::kOutput ||
                                im.params[im.step_ok_param].bytes == 0))
    return Invalid(im, "a step_ok mark on param " + std::to_string(im.step_ok_param) + ", which is no result");
  for (size_t v = 0; v < im.values.size(); ++v) {
    const PlanValue& pv = im.values[v];
    if (pv.mesh_position &&
        (pv.alias_of >= 0 || pv.dtype != "i32" || pv.bytes != 4 ||
         std::find(im.param_values.begin(), im.param_values.end(), static_cast<int32_t>(v)) != im.param_values.end()))
      return Invalid(im, "value " + std::to_string(v) + " holds the mesh position: it must be an i32 buffer of its own");
    if (pv.alias_of < 0) continue;
    const std::string at = "value " + std::to_string(v);
    if (std::find(im.param_values.begin(), im.param_values.end(), static_cast<int32_t>(v)) != im.param_values.end())
      return Invalid(im, at + " is a parameter and a view");
    uint32_t root = 0;
    uint64_t offset = 0;
    if (!detail::ResolveView(im, static_cast<uint32_t>(v), &root, &offset))
      return Invalid(im, at + " is a view of no value (or of itself)");
    const uint64_t size = im.values[root].bytes;
    if (offset > size || size - offset < pv.bytes) return Invalid(im, at + " is a view past the end of its value");
  }
  for (size_t n = 0; n < im.steps.size(); ++n) {
    const PlanStep& s = im.steps[n];
    const std::string at = "step " + std::to_string(n);
    if (s.stream >= kPlanStreams) return Invalid(im, at + " runs on an unknown stream");
    if (s.kind == PlanStep::kLaunch && s.stream != 0) return Invalid(im, at + " launches off the program's stream");
    if (s.kind == PlanStep::kLaunch) {
      if (s.executable >= im.executables.size()) return Invalid(im, at + " uses no executable");
      const ExecutableImage& e = im.executables[s.executable];
      auto sig = std::find_if(e.kernels.begin(), e.kernels.end(),
                              [&](const KernelSignature& k) { return k.name == s.kernel; });
      if (sig == e.kernels.end()) return Invalid(im, at + " launches '" + s.kernel + "', which its executable lacks");
      if (sig->params.size() != s.args.size())
        return Invalid(im, at + " passes " + std::to_string(s.args.size()) + " arguments to '" + s.kernel +
                               "', which takes " + std::to_string(sig->params.size()));
      for (size_t a = 0; a < s.args.size(); ++a) {
        const PlanArg& arg = s.args[a];
        const KernelParamInfo& kp = sig->params[a];
        if (arg.kind == PlanArg::kValue) {
          if (arg.index >= im.values.size() || kp.kind != TS_KERNEL_ARG_BUFFER)
            return Invalid(im, at + " argument " + std::to_string(a) + " is not a buffer");
          if (im.values[arg.index].bytes < kp.bytes)
            return Invalid(im, at + " argument " + std::to_string(a) + " is smaller than '" + s.kernel + "' reads");
        } else {
          if (arg.index >= im.params.size() || im.params[arg.index].role != ParamRole::kScalar ||
              kp.kind != TS_KERNEL_ARG_SCALAR)
            return Invalid(im, at + " argument " + std::to_string(a) + " is not a scalar");
        }
      }
      if (s.grid.x == 0 || s.grid.y == 0 || s.grid.z == 0 || s.group_size.x == 0 || s.group_size.y == 0 ||
          s.group_size.z == 0)
        return Invalid(im, at + " has an empty grid or group");
    } else {
      if (s.input >= im.values.size() || s.output >= im.values.size()) return Invalid(im, at + " uses no value");
      for (int a : s.axes)
        if (a < 0 || a >= static_cast<int>(im.mesh_shape.size())) return Invalid(im, at + " spans an unknown axis");
      uint64_t group = 1;
      for (int a : s.axes) group *= static_cast<uint64_t>(im.mesh_shape[a]);
      const uint64_t es = DataTypeSize(s.dtype);
      if (es == 0) return Invalid(im, at + " has an unknown element type");
      const uint64_t in = s.kind == PlanStep::kReduceScatter ? s.count * group * es : s.count * es;
      const uint64_t out = s.kind == PlanStep::kAllGather ? s.count * group * es : s.count * es;
      if (im.values[s.input].bytes < in || im.values[s.output].bytes < out)
        return Invalid(im, at + " moves more than its buffers hold");
    }
  }
  return Status::Ok();
}

// The bytes of a step's buffers, as [root value, lo, hi) ranges, and
// whether it writes them.
struct Access {
  uint32_t root;
  uint64_t lo, hi;
  bool write;
};

// `impl`'s value_root / value_offset: every view resolved (Program::Create).
std::vector<Access> AccessesOf(const ProgramImage& im, const detail::ProgramImpl& impl, const PlanStep& s) {
  std::vector<Access> out;
  auto add = [&](uint32_t v, uint64_t bytes, bool write) {
    const uint64_t off = impl.value_offset[v];
    out.push_back({impl.value_root[v], off, off + bytes, write});
  };
  if (s.kind == PlanStep::kLaunch) {
    const KernelSignature* sig = nullptr;
    for (const KernelSignature& k : im.executables[s.executable].kernels)
      if (k.name == s.kernel) sig = &k;
    for (size_t a = 0; a < s.args.size(); ++a) {
      if (s.args[a].kind != PlanArg::kValue) continue;
      const uint32_t access = sig ? sig->params[a].access : TS_PARAM_READ | TS_PARAM_WRITE;
      add(s.args[a].index, im.values[s.args[a].index].bytes, (access & TS_PARAM_WRITE) != 0);
    }
  } else {
    add(s.input, im.values[s.input].bytes, false);
    add(s.output, im.values[s.output].bytes, true);
  }
  return out;
}

// Which steps wait for which on the other stream: the latest earlier step
// of the other stream whose bytes overlap this one's with a write on either
// side (stream order covers everything before it).  Empty when every step
// is on the caller's stream.
std::vector<detail::StepOrder> OrderSteps(const ProgramImage& im, const detail::ProgramImpl& impl) {
  if (std::none_of(im.steps.begin(), im.steps.end(), [](const PlanStep& s) { return s.stream != 0; })) return {};
  std::vector<detail::StepOrder> order(im.steps.size());
  std::vector<std::vector<Access>> acc;
  for (const PlanStep& s : im.steps) acc.push_back(AccessesOf(im, impl, s));
  for (size_t n = 0; n < im.steps.size(); ++n) {
    for (size_t p = n; p-- > 0;) {
      if (im.steps[p].stream == im.steps[n].stream) continue;
      bool conflict = false;
      for (const Access& a : acc[n])
        for (const Access& b : acc[p])
          conflict = conflict || (a.root == b.root && a.lo < b.hi && b.lo < a.hi && (a.write || b.write));
      if (!conflict) continue;
      order[n].waits.push_back(static_cast<uint32_t>(p));
      order[p].recorded = true;
      break;
    }
  }
  return order;
}

}  // namespace

StatusOr<Program> Program::Create(const std::vector<Device>& devices, ProgramImage image) {
  return Create(devices, std::move(image), nullptr);
}

StatusOr<Program> Program::Create(const std::vector<Device>& devices, ProgramImage image,
                                  std::shared_ptr<ProcessGroup> processes) {
  TESSERA_RETURN_IF_ERROR(CheckImage(image));
  uint64_t need = image.devices();
  size_t first = 0;
  if (processes && processes->size() > 1) {
    const uint64_t P = static_cast<uint64_t>(processes->size());
    if (need % P != 0 || devices.size() != need / P)
      return Status(StatusCode::kInvalidArgument,
                    "program " + image.function + " runs on " + std::to_string(need) + " device(s); " +
                        std::to_string(P) + " processes must hold " +
                        (need % P ? std::string("as many each, which does not divide") :
                                    std::to_string(need / P) + " each; this one passes " + std::to_string(devices.size())));
    first = static_cast<size_t>(processes->rank()) * devices.size();
    need = devices.size();
  } else {
    processes = nullptr;
  }
  if (devices.size() != need) {
    std::string mesh;
    for (size_t a = 0; a < image.mesh_axes.size(); ++a)
      mesh += (a ? ", " : "") + image.mesh_axes[a] + "=" + std::to_string(image.mesh_shape[a]);
    return Status(StatusCode::kInvalidArgument,
                  "program " + image.function + " runs on " + std::to_string(need) + " device(s)" +
                      (mesh.empty() ? "" : " (mesh [" + mesh + "])") + "; " + std::to_string(devices.size()) +
                      " given" +
                      (need > devices.size() && !devices.empty() && devices[0].valid() && devices[0].backend() == "cpu"
                           ? " (the cpu plugin makes more with TESSERA_CPU_DEVICES=" + std::to_string(need) + ")"
                           : ""));
  }
  auto impl = std::make_shared<detail::ProgramImpl>();
  impl->devices = devices;
  impl->first_device = first;
  impl->processes = processes;
  for (uint32_t v = 0; v < image.values.size(); ++v) {
    uint32_t root = v;
    uint64_t off = 0;
    detail::ResolveView(image, v, &root, &off);  // CheckImage accepted every view
    impl->value_root.push_back(root);
    impl->value_offset.push_back(off);
  }
  impl->order = OrderSteps(image, *impl);
  impl->value_param.assign(image.values.size(), -1);
  for (size_t i = 0; i < image.params.size(); ++i)
    if (image.param_values[i] >= 0) impl->value_param[image.param_values[i]] = static_cast<int32_t>(i);
  for (const PlanStep& s : image.steps) {
    bool through = s.kind == PlanStep::kLaunch && s.args.size() == image.params.size();
    for (size_t i = 0; through && i < s.args.size(); ++i) {
      const PlanArg& a = s.args[i];
      through = a.kind == PlanArg::kScalarParam ? a.index == i
                                                : a.index < impl->value_param.size() &&
                                                      impl->value_param[a.index] == static_cast<int32_t>(i);
    }
    impl->passes_args_through.push_back(through ? 1 : 0);
  }
  impl->launches_only = devices.size() == 1 && impl->order.empty() &&
                        std::all_of(image.steps.begin(), image.steps.end(),
                                    [](const PlanStep& s) { return s.kind == PlanStep::kLaunch; });
  impl->single_passthrough = impl->launches_only && image.steps.size() == 1 && impl->passes_args_through[0];
  for (const ParamSpec& p : image.params)
    impl->arg_needs.push_back({p.bytes, p.role == ParamRole::kScalar});
  for (size_t d = 0; d < devices.size(); ++d) {
    const Device& dev = devices[d];
    if (!dev.valid()) return Status(StatusCode::kInvalidHandle, "Program::Create: device " + std::to_string(d) + " is a null handle");
    if (dev.backend() != image.plugin)
      return Status(StatusCode::kInvalidArgument,
                    image.source_name + ": compiled for plugin '" + image.plugin + "' (target " + image.target +
                        "), but the device is on the '" + dev.backend() + "' backend: compile it for " +
                        dev.backend() + " (tessera-compile --target " + dev.backend() + ") or select " +
                        image.plugin + " (TESSERA_BACKEND=" + image.plugin + ")");
    detail::DeviceState st;
    st.device = dev;
    const auto& formats = dev.info().executable_formats;
    for (const ExecutableImage& e : image.executables) {
      if (std::find(formats.begin(), formats.end(), e.format) == formats.end())
        return Status(StatusCode::kUnsupported, image.source_name + ": executable format '" + e.format +
                                                    "' (target " + image.target + ") is not loaded by device " +
                                                    dev.info().name);
      auto exe = dev.load_executable(e.format, e.data.data(), e.data.size());
      if (!exe.ok()) return Status(exe.status()).Annotate("loading " + image.source_name + " (target " + image.target + ")");
      st.executables.push_back(*exe);
    }
    std::vector<uint32_t> scratch_values;  // zero-filled once allocated (TS_PARAM_SCRATCH)
    for (const PlanStep& s : image.steps) {
      if (s.kind != PlanStep::kLaunch) {
        st.kernels.emplace_back();
        continue;
      }
      auto k = st.executables[s.executable].kernel(s.kernel);
      if (!k.ok()) return k.status();
      // What each buffer parameter does, for the validation layer's hazard
      // detector (a no-op when it is off), and which are scratch buffers.
      for (const KernelSignature& sig : image.executables[s.executable].kernels) {
        if (sig.name != s.kernel) continue;
        std::vector<uint32_t> access;
        for (const KernelParamInfo& p : sig.params)
          if (p.kind == TS_KERNEL_ARG_BUFFER) access.push_back(p.access);
        for (size_t a = 0; a < s.args.size() && a < sig.params.size(); ++a)
          if ((sig.params[a].access & TS_PARAM_SCRATCH) && s.args[a].kind == PlanArg::kValue)
            scratch_values.push_back(s.args[a].index);
        k->declare_buffer_access(access);
        break;
      }
      const TsDim3& req = k->info().required_group_size;
      if (req.x && (req.x != s.group_size.x || req.y != s.group_size.y || req.z != s.group_size.z))
        return Status(StatusCode::kInvalidArgument,
                      s.kernel + ": the binary fixes the group size " + std::to_string(req.x) + "x" +
                          std::to_string(req.y) + "x" + std::to_string(req.z) + ", the plan launches " +
                          std::to_string(s.group_size.x) + "x" + std::to_string(s.group_size.y) + "x" +
                          std::to_string(s.group_size.z));
      st.kernels.push_back(*k);
    }
    st.values.resize(image.values.size());
    for (size_t v = 0; v < image.values.size(); ++v) {
      if (impl->value_param[v] >= 0 || image.values[v].alias_of >= 0) continue;
      auto b = dev.allocate(std::max<uint64_t>(image.values[v].bytes, 1));
      if (!b.ok())
        return Status(b.status()).Annotate("intermediate buffer " + std::to_string(v) + " of " + image.function);
      st.values[v] = *b;
    }
    for (size_t v = 0; v < image.values.size(); ++v) {
      if (!image.values[v].mesh_position) continue;
      // The position in the whole mesh (across processes: after the
      // earlier processes' devices).
      const int32_t position = static_cast<int32_t>(first + d);
      Status w = copy(MemoryRef(st.values[v]), MemoryRef(&position), sizeof position);
      if (!w.ok()) return w.Annotate("writing the mesh position of device " + std::to_string(first + d));
    }
    for (uint32_t v : scratch_values) {
      const Buffer& scratch = st.values[v];
      if (!scratch.valid()) continue;
      Status z = memset(scratch, 0, 0, scratch.size());
      if (!z.ok()) return z.Annotate("zero-filling scratch buffer " + std::to_string(v) + " of " + image.function);
    }
    if (!impl->order.empty()) {
      // Not ordered with the default stream: only the plan's events order
      // it, so a caller on the default stream still overlaps.
      StreamOptions so;
      so.non_blocking = true;
      auto side = dev.create_stream(so);
      if (!side.ok()) return Status(side.status()).Annotate("the communication stream of " + image.function);
      st.side_stream = *side;
      auto event = [&]() -> StatusOr<Event> { return dev.create_event(TS_EVENT_DISABLE_TIMING); };
      st.step_events.resize(image.steps.size());
      for (size_t n = 0; n < image.steps.size(); ++n) {
        if (!impl->order[n].recorded) continue;
        auto e = event();
        if (!e.ok()) return e.status();
        st.step_events[n] = *e;
      }
      auto start = event(), join = event();
      if (!start.ok()) return start.status();
      if (!join.ok()) return join.status();
      st.start = *start;
      st.join = *join;
    }
    impl->states.push_back(std::move(st));
  }
  // Communicators: one per group of devices per set of axes a collective
  // spans (for the groups that hold a device of this process).  A group
  // across processes gets one of the ProcessGroup; every process creates
  // its groups in the same order (by first device).
  if (!image.mesh_shape.empty()) {
    Runtime rt = devices[0].runtime();
    const int64_t L = static_cast<int64_t>(devices.size()), lo = static_cast<int64_t>(first);
    for (const PlanStep& s : image.steps) {
      if (s.kind == PlanStep::kLaunch || impl->comms.count(s.axes)) continue;
      auto& byGroup = impl->comms[s.axes];
      for (int64_t d = 0; d < static_cast<int64_t>(image.devices()); ++d) {
        std::vector<int64_t> group = mesh::Group(image.mesh_shape, s.axes, d);
        if (byGroup.count(group[0])) continue;
        std::vector<Device> members;
        std::vector<uint32_t> rank_process;
        for (int64_t m : group) {
          if (m >= lo && m < lo + L) members.push_back(devices[m - lo]);
          rank_process.push_back(static_cast<uint32_t>(m / L));
        }
        if (members.empty()) continue;
        auto c = members.size() == group.size() ? rt.create_communicator(members)
                                                : processes->CreateCommunicator(rank_process, members);
        if (!c.ok())
          return Status(c.status()).Annotate("communicator over " + std::to_string(group.size()) + " devices of " +
                                     image.function);
        byGroup[group[0]] = *c;
      }
    }
  }
  impl->image = std::move(image);
  Program p;
  p.impl_ = std::move(impl);
  return p;
}

StatusOr<Program> Program::Load(const std::vector<Device>& devices, const std::string& path) {
  auto image = ProgramImage::ReadFile(path);
  if (!image.ok()) return image.status();
  return Create(devices, std::move(*image));
}

const ProgramImage& Program::image() const { return impl_->image; }
const std::vector<ParamSpec>& Program::params() const { return impl_->image.params; }
const std::vector<Device>& Program::devices() const { return impl_->devices; }
size_t Program::first_device() const { return impl_ ? impl_->first_device : 0; }
Status Program::Save(const std::string& path) const { return impl_->image.WriteFile(path); }

namespace {

// Checks one device's arguments against the params; returns the buffer
// KernelArg bound to each value (params' values) in `bound`.
Status CheckArgs(const ProgramImage& im, const Device& dev, const std::vector<KernelArg>& args, size_t device) {
  // Messages are built only on failure: Run checks every call.
  auto who = [&] { return "program " + im.function + (im.devices() > 1 ? " on device " + std::to_string(device) : ""); };
  if (args.size() != im.params.size()) {
    std::string list;
    for (const ParamSpec& p : im.params)
      list += (list.empty() ? "" : ", ") + p.name + " (" + ParamRoleName(p.role) + " " + p.dtype + ")";
    return Status(StatusCode::kInvalidArgument, who() + " takes " + std::to_string(im.params.size()) +
                                                    " arguments, " + std::to_string(args.size()) + " given: " + list);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamSpec& p = im.params[i];
    const KernelArg& a = args[i];
    auto what = [&] { return who() + ": argument " + std::to_string(i) + " (" + p.name + ")"; };
    if (p.role == ParamRole::kScalar) {
      if (a.kind() != TS_KERNEL_ARG_SCALAR)
        return Status(StatusCode::kInvalidArgument, what() + " is a " + p.dtype + " scalar; a buffer was given");
      if (a.size() != p.bytes)
        return Status(StatusCode::kInvalidArgument, what() + " is a " + p.dtype + " scalar of " +
                                                        std::to_string(p.bytes) + " bytes; " +
                                                        std::to_string(a.size()) + " bytes were given");
      continue;
    }
    if (a.kind() != TS_KERNEL_ARG_BUFFER || a.buffer_ref() == nullptr)
      return Status(StatusCode::kInvalidArgument, what() + " is a buffer; a scalar was given");
    const Buffer& b = *a.buffer_ref();
    if (!b.valid()) return Status(StatusCode::kInvalidHandle, what() + ": the buffer was destroyed or never created");
    if (!b.is_on(dev))
      return Status(StatusCode::kInvalidArgument, what() + ": the buffer is on " + OtherDevice(b.device(), dev) +
                                                      ", not on the program's device " + dev.info().name);
    const uint64_t size = b.size();
    if (a.offset() > size || size - a.offset() < p.bytes)
      return Status(StatusCode::kOutOfRange,
                    what() + " needs " + FormatBytes(p.bytes) + " (" + p.dtype + " " + [&] {
                      std::string s = "[";
                      for (size_t k = 0; k < p.shape.size(); ++k) s += (k ? "x" : "") + std::to_string(p.shape[k]);
                      return s + "]";
                    }() + "); the buffer has " + FormatBytes(b.size() - std::min(a.offset(), b.size())) +
                        " after offset " + std::to_string(a.offset()));
  }
  return Status::Ok();
}

// What CheckArgs accepts, answered without building anything (one call per
// buffer): Run's fast path checks this first and leaves the diagnosis of a
// false to CheckArgs.
bool ArgsUsable(const detail::ProgramImpl& impl, const std::vector<KernelArg>& args) {
  const size_t n = args.size();
  if (n != impl.arg_needs.size()) return false;
  const KernelArg* a = args.data();
  const KernelArgRequirement* need = impl.arg_needs.data();
  const Device& dev = impl.devices[0];
  for (size_t i = 0; i < n; ++i) {
    if (need[i].scalar) {
      if (a[i].kind() != TS_KERNEL_ARG_SCALAR || a[i].size() != need[i].bytes) return false;
    } else {
      const Buffer* b = a[i].buffer_ref();
      if (b == nullptr || a[i].kind() != TS_KERNEL_ARG_BUFFER || !b->holds(dev, a[i].offset(), need[i].bytes))
        return false;
    }
  }
  return true;
}

}  // namespace

Status Program::LaunchStep(size_t sidx, size_t d, const Stream& stream, const std::vector<KernelArg>& args,
                           TsDim3 grid) const {
  const PlanStep& s = impl_->image.steps[sidx];
  // One named Status returned on every path (no move per launch); the
  // annotation is built only on failure.
  Status st = impl_->passes_args_through[sidx]
                  ? stream.launch(impl_->states[d].kernels[sidx], grid, s.group_size, args.data(), args.size(),
                                  s.shared_memory_bytes)
                  : LaunchWithPlanArgs(sidx, d, stream, args, grid);
  if (!st.ok()) AnnotateStep(sidx, &st);
  return st;
}

void Program::AnnotateStep(size_t sidx, Status* st) const {
  const PlanStep& s = impl_->image.steps[sidx];
  st->Annotate(s.location.empty() ? "launching " + s.kernel : s.location + ": launching " + s.kernel);
}

Status Program::LaunchWithPlanArgs(size_t sidx, size_t d, const Stream& stream, const std::vector<KernelArg>& args,
                                   TsDim3 grid) const {
  const PlanStep& s = impl_->image.steps[sidx];
  // The kernel's arguments on the stack (a heap array only for kernels of
  // many parameters): no allocation per launch.  Raw storage: the slots are
  // written before the launch reads them, so constructing (zeroing) 16
  // KernelArgs per launch would be waste.
  constexpr size_t kInline = 16;
  static_assert(std::is_trivially_copyable<KernelArg>::value && std::is_trivially_destructible<KernelArg>::value,
                "KernelArg slots are raw storage");
  alignas(KernelArg) unsigned char inline_storage[kInline * sizeof(KernelArg)];
  std::vector<KernelArg> heap_args;
  KernelArg* kargs = reinterpret_cast<KernelArg*>(inline_storage);
  if (s.args.size() > kInline) {
    heap_args.resize(s.args.size());
    kargs = heap_args.data();
  }
  for (size_t i = 0; i < s.args.size(); ++i) {
    const PlanArg& a = s.args[i];
    if (a.kind == PlanArg::kScalarParam) {
      new (&kargs[i]) KernelArg(args[a.index]);
    } else {
      uint64_t offset = 0;
      const Buffer& b = BufferOf(d, a.index, args, &offset);
      new (&kargs[i]) KernelArg(KernelArg::buffer(b, offset));
    }
  }
  return stream.launch(impl_->states[d].kernels[sidx], grid, s.group_size, kargs, s.args.size(),
                       s.shared_memory_bytes);
}

const Buffer& Program::BufferOf(size_t d, uint32_t v, const std::vector<KernelArg>& args, uint64_t* offset) const {
  const uint64_t view = impl_->value_offset[v];
  v = impl_->value_root[v];
  const int32_t p = impl_->value_param[v];
  if (p >= 0) {
    *offset = args[p].offset() + view;
    return *args[p].buffer_ref();
  }
  *offset = view;
  return impl_->states[d].values[v];
}

Status Program::Run(const Stream& stream, const std::vector<KernelArg>& args, const RunOptions& options) const {
  // The fast path (a program of launches on one device, valid arguments):
  // RunOn's checks answered in one pass, then the launches.  Anything it
  // does not accept takes RunOn, which says what is wrong.
  const detail::ProgramImpl* p = impl_.get();
  if (p && p->launches_only && options.grid.x == 0 && args.size() == p->arg_needs.size()) {
    if (p->single_passthrough) {
      // The launch checks the arguments against the parameters (kind,
      // scalar size, the stream's device, bytes) as it converts them, and
      // the stream's device is left to it too (every plugin refuses a
      // stream of another device, conformance Abi.Rejects): a launch that
      // fails queues nothing, so RunOn can still say what was wrong.
      const PlanStep& s = p->image.steps[0];
      // One named Status on every path (no move per launch).
      Status st = stream.launch(p->states[0].kernels[0], s.grid, s.group_size, args.data(), args.size(),
                                s.shared_memory_bytes, p->arg_needs.data());
      if (!st.ok()) DiagnoseFastLaunch(stream, args, options, &st);
      return st;
    }
    if (ArgsUsable(*p, args) && stream.usable_on(p->devices[0])) {
      const size_t steps = p->image.steps.size();
      for (size_t sidx = 0; sidx < steps; ++sidx)
        TESSERA_RETURN_IF_ERROR(LaunchStep(sidx, 0, stream, args, p->image.steps[sidx].grid));
      return Status::Ok();
    }
  }
  if (!p) return Status(StatusCode::kInvalidHandle, "null Program handle: Program::Create or Load first");
  if (p->devices.size() != 1)
    return Status(StatusCode::kInvalidArgument, "program " + p->image.function + " runs on " +
                                                    std::to_string(p->devices.size()) +
                                                    " devices: pass one stream and argument list per device");
  return RunOn(&stream, &args, 1, options);
}

[[gnu::cold]] void Program::DiagnoseFastLaunch(const Stream& stream, const std::vector<KernelArg>& args,
                                               const RunOptions& options, Status* st) const {
  // A refused argument or stream: RunOn's checks name it (and queue
  // nothing).  Otherwise the plugin refused the launch itself.
  if (!ArgsUsable(*impl_, args) || !stream.usable_on(impl_->devices[0])) {
    *st = RunOn(&stream, &args, 1, options);
    return;
  }
  AnnotateStep(0, st);
}

Status Program::Run(const std::vector<Stream>& streams, const std::vector<std::vector<KernelArg>>& args,
                    const RunOptions& options) const {
  if (!impl_) return Status(StatusCode::kInvalidHandle, "null Program handle: Program::Create or Load first");
  const size_t n = impl_->devices.size();
  if (streams.size() != n || args.size() != n)
    return Status(StatusCode::kInvalidArgument, "program " + impl_->image.function + " runs on " + std::to_string(n) +
                                                    " device(s): " + std::to_string(streams.size()) + " streams and " +
                                                    std::to_string(args.size()) + " argument lists given");
  return RunOn(streams.data(), args.data(), n, options);
}

Status Program::RunOn(const Stream* streams, const std::vector<KernelArg>* args, size_t n,
                      const RunOptions& options) const {
  const ProgramImage& im = impl_->image;
  // Everything is checked before anything is enqueued.
  for (size_t d = 0; d < n; ++d) {
    if (!streams[d].valid())
      return Status(StatusCode::kInvalidHandle,
                    "stream " + std::to_string(d) + " is not valid (destroyed, or the default stream of a device whose "
                    "plugin has no Device_GetDefaultStream: create one with Device::create_stream)");
    if (!streams[d].is_on(impl_->devices[d]))
      return Status(StatusCode::kInvalidArgument, "stream " + std::to_string(d) + " is on " +
                                                      OtherDevice(streams[d].device(), impl_->devices[d]) +
                                                      ", not on the program's device " + impl_->devices[d].info().name);
    TESSERA_RETURN_IF_ERROR(CheckArgs(im, impl_->devices[d], args[d], d));
    if (n > 1)
      for (const KernelArg& a : args[d])
        if (a.kind() == TS_KERNEL_ARG_BUFFER && a.offset() != 0)
          return Status(StatusCode::kInvalidArgument,
                        "SPMD program arguments must start at offset 0 (collectives move whole buffers)");
  }
  const bool overrideGrid = options.grid.x != 0;
  if (overrideGrid && (im.steps.size() != 1 || options.grid.y == 0 || options.grid.z == 0))
    return Status(StatusCode::kInvalidArgument,
                  "RunOptions::grid applies to a program of one launch (a Tile IR kernel), with every "
                  "dimension > 0");
  // A Graph IR function's parameters are inputs and outputs (a Tile IR
  // kernel's are in-out buffers and scalars): its kernels' grids are the
  // compiler's, and a smaller one left part of each result unwritten.
  if (overrideGrid)
    for (const ParamSpec& p : im.params)
      if (p.role == ParamRole::kInput || p.role == ParamRole::kOutput)
        return Status(StatusCode::kInvalidArgument,
                      "RunOptions::grid applies to a Tile IR kernel; " + im.function +
                          " is a Graph IR function, whose kernels' grids the compiler chose to cover "
                          "its results (a smaller grid would leave part of them unwritten): run it "
                          "without a grid");
  // A kernel whose buffers are all of dynamic size (memref<?xf32>) is
  // sized by its caller and bounds itself by its scalars (the conformance
  // kernels' `n`): any grid is the caller's to choose, as with a CUDA
  // kernel.  One static buffer keeps the check (groups past the grid would
  // overrun it).
  auto dynamic = [](const ParamSpec& p) {
    return std::any_of(p.shape.begin(), p.shape.end(), [](int64_t d) { return d < 0; });
  };
  bool anyBuffer = false, allDynamic = true;
  for (const ParamSpec& p : im.params)
    if (p.role != ParamRole::kScalar) anyBuffer = true, allDynamic = allDynamic && dynamic(p);
  const bool callerSized = anyBuffer && allDynamic;
  if (overrideGrid && !callerSized && im.steps[0].kind == PlanStep::kLaunch &&
      im.steps[0].executable < im.executables.size()) {
    // A kernel of static buffers compiled for a grid (its tessera_tile.grid,
    // or the one its shapes give) has buffers sized for it: groups past it
    // would access out of bounds, which no backend checks alike (the cpu
    // plugin refused, vulkan's robust buffer access dropped the writes, a
    // GPU corrupts memory).  Smaller grids run part of the work.
    const PlanStep& s = im.steps[0];
    for (const KernelSignature& k : im.executables[s.executable].kernels) {
      if (k.name != s.kernel || k.grid.x == 0) continue;
      const TsDim3 g = options.grid;
      if (g.x > k.grid.x || g.y > std::max(1u, k.grid.y) || g.z > std::max(1u, k.grid.z))
        return Status(StatusCode::kInvalidArgument,
                      "RunOptions::grid (" + std::to_string(g.x) + ", " + std::to_string(g.y) + ", " +
                          std::to_string(g.z) + ") is larger than the grid (" + std::to_string(k.grid.x) + ", " +
                          std::to_string(k.grid.y) + ", " + std::to_string(k.grid.z) + ") kernel '" + k.name +
                          "' was compiled for: its buffers are sized for that grid, and the groups past it "
                          "would access them out of bounds; give at most that grid");
    }
  }
  // Plans with a communication stream: it starts after what the caller
  // queued before Run, and the caller's stream ends after all of it (every
  // return below, errors too: nothing is left unordered behind the
  // caller's back).
  const std::vector<detail::StepOrder>& order = impl_->order;
  const bool sides = !order.empty();
  auto streamOf = [&](size_t d, const PlanStep& s) -> const Stream& {
    return s.stream ? impl_->states[d].side_stream : streams[d];
  };
  if (sides)
    for (size_t d = 0; d < n; ++d) {
      const detail::DeviceState& ds = impl_->states[d];
      TESSERA_RETURN_IF_ERROR(ds.start.record(streams[d]));
      TESSERA_RETURN_IF_ERROR(ds.side_stream.wait(ds.start));
    }
  auto join = [&](Status st) {
    if (!sides) return st;
    for (size_t d = 0; d < n; ++d) {
      const detail::DeviceState& ds = impl_->states[d];
      Status j = ds.join.record(ds.side_stream);
      if (j.ok()) j = streams[d].wait(ds.join);
      if (!j.ok() && st.ok()) st = j.Annotate("joining the communication stream");
    }
    return st;
  };
  // Every step in plan order; a step waits first for the steps of the other
  // stream it depends on, and records its event when one waits for it.
  auto runSteps = [&]() -> Status {
    for (size_t sidx = 0; sidx < im.steps.size(); ++sidx) {
      const PlanStep& s = im.steps[sidx];
      if (sides) {
        for (uint32_t p : order[sidx].waits)
          for (size_t d = 0; d < n; ++d)
            TESSERA_RETURN_IF_ERROR(streamOf(d, s).wait(impl_->states[d].step_events[p]));
      }
      auto recordAfter = [&]() -> Status {
        if (sides && order[sidx].recorded)
          for (size_t d = 0; d < n; ++d)
            TESSERA_RETURN_IF_ERROR(impl_->states[d].step_events[sidx].record(streamOf(d, s)));
        return Status::Ok();
      };
      if (s.kind == PlanStep::kLaunch) {
        const TsDim3 grid = overrideGrid ? options.grid : s.grid;
        for (size_t d = 0; d < n; ++d) TESSERA_RETURN_IF_ERROR(LaunchStep(sidx, d, streams[d], args[d], grid));
        TESSERA_RETURN_IF_ERROR(recordAfter());
        continue;
      }
      const int64_t lo = static_cast<int64_t>(impl_->first_device), hi = lo + static_cast<int64_t>(n);
      for (auto& [first, comm] : impl_->comms.at(s.axes)) {
        std::vector<int64_t> group = mesh::Group(im.mesh_shape, s.axes, first);
        std::vector<MemoryRef> send, recv;
        std::vector<Stream> ss;
        for (int64_t m : group) {
          if (m < lo || m >= hi) continue;  // another process's
          m -= lo;
          uint64_t off = 0;
          const Buffer& in = BufferOf(m, s.input, args[m], &off);
          send.emplace_back(in, off);
          const Buffer& out = BufferOf(m, s.output, args[m], &off);
          recv.emplace_back(out, off);
          ss.push_back(streamOf(m, s));
        }
        Status st;
        switch (s.kind) {
          case PlanStep::kAllReduce: st = comm.all_reduce(send, recv, s.count, s.dtype, s.reduce, ss, true); break;
          case PlanStep::kBroadcast: st = comm.broadcast(send, recv, s.count, s.dtype, s.root, ss); break;
          case PlanStep::kAllGather: st = comm.all_gather(send, recv, s.count, s.dtype, ss); break;
          case PlanStep::kReduceScatter:
            st = comm.reduce_scatter(send, recv, s.count, s.dtype, s.reduce, ss, true);
            break;
          default: break;
        }
        if (!st.ok()) return st.Annotate(s.location.empty() ? "collective" : s.location);
      }
      TESSERA_RETURN_IF_ERROR(recordAfter());
    }
    return Status::Ok();
  };
  return join(runSteps());
}

}  // namespace tessera
