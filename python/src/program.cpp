// Programs (tessera/program.hpp, tessera/program_compiler.hpp): compile a
// .mlir (or load a .tsp) for devices, describe its parameters, run it on
// streams, and cut / assemble the global tensors of SPMD programs.  The
// pure-Python tessera.compile() turns this into a callable on numpy arrays.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "tessera/program.hpp"
#ifdef TESSERA_PYTHON_HAS_COMPILER
#include "tessera/autotune.hpp"
#include "tessera/program_compiler.hpp"
#endif

namespace tessera::python {
namespace {

#ifdef TESSERA_PYTHON_HAS_COMPILER
// A program file read once (read_source): every step of a compile, and the
// device count asked for before it, see the same bytes.
struct SourceFile {
  ProgramSource source;
};

// `source`: a SourceFile, a path (is_path) or the program's text.
ProgramSource SourceOf(const py::object& source, bool is_path, const std::string& name) {
  if (py::isinstance<SourceFile>(source)) return source.cast<const SourceFile&>().source;
  const std::string text = source.cast<std::string>();
  return is_path ? ProgramSource::File(text) : ProgramSource::Text(text, name.empty() ? "<text>" : name);
}

// tessera.autotune.search / lookup (docs/autotune.md): the result as a dict.
py::dict AutotuneDict(const AutotuneResult& r) {
  py::dict d;
  d["schedule"] = r.schedule;
  d["time_ms"] = r.time_ms;
  d["default_ms"] = r.default_ms;
  d["search_seconds"] = r.search_seconds;
  d["from_cache"] = r.from_cache;
  d["lookup_ms"] = r.lookup_ms;
  d["cache_file"] = r.cache_file;
  py::list trials;
  for (const AutotuneTrial& t : r.trials) trials.append(py::make_tuple(t.schedule, t.time_ms, t.error));
  d["trials"] = trials;
  return d;
}
#else
[[noreturn]] void NoCompiler() {
  Fail(StatusCode::kUnsupported, "this tessera module was built without the compiler (-DTESSERA_BUILD_IR=OFF): "
                                 "only compiled .tsp programs can be loaded");
}
#endif

// A shape as Python shows it: a dynamic dim (memref<?xf32>: MLIR's
// kDynamic, the most negative int64) is None, as in numpy-facing APIs
// (JAX, TensorFlow), and a call takes any extent for it.
py::tuple ShapeTuple(const std::vector<int64_t>& shape) {
  py::list dims;
  for (int64_t d : shape) dims.append(d < 0 ? py::object(py::none()) : py::object(py::int_(d)));
  return py::tuple(dims);
}

py::dict ParamDict(const Program& p, size_t i) {
  const ParamSpec& s = p.params()[i];
  const auto& axes = p.image().mesh_axes;
  py::dict d;
  d["name"] = s.name;
  d["role"] = std::string(ParamRoleName(s.role));
  d["dtype"] = s.dtype;
  d["shape"] = ShapeTuple(s.shape);
  d["bytes"] = s.bytes;
  // Per dim: None (whole), an axis name, or a tuple of names (a dim split
  // over several axes, the major first), as dist.ShardSpec takes them.
  py::list dims;
  for (const std::vector<int>& list : s.sharding.dim_axes) {
    std::vector<std::string> names;
    for (int a : list)
      if (a >= 0 && static_cast<size_t>(a) < axes.size()) names.push_back(axes[a]);
    if (names.empty()) dims.append(py::none());
    else if (names.size() == 1) dims.append(names[0]);
    else dims.append(py::tuple(py::cast(names)));
  }
  py::list reduce;
  for (int a : s.sharding.partial_sum_axes)
    if (a >= 0 && static_cast<size_t>(a) < axes.size()) reduce.append(axes[a]);
  d["dims"] = dims;
  d["reduce"] = reduce;
  d["global_shape"] = axes.empty() ? ShapeTuple(s.shape) : ShapeTuple(p.GlobalShape(i));
  return d;
}

// A scalar argument, converted only where no value is lost: an integer
// parameter takes ints (Python or numpy, not bools or floats) within its
// range; a float parameter takes real numbers (not bools) that its type can
// hold (inf and nan as given, but no finite value that would become inf);
// an i1 parameter takes bools, or the ints 0 and 1.
KernelArg ScalarArg(const py::handle& value, const ParamSpec& spec) {
  const std::string& t = spec.dtype;
  auto refuse = [&](const std::string& why) {
    Fail(StatusCode::kInvalidArgument, "scalar parameter " + spec.name + " is " + t + ": " +
                                           std::string(py::repr(value)) + " " + why);
  };
  py::module_ np = py::module_::import("numpy");
  // A numpy array passes as its one number only when it is 0-d.
  py::object v = py::reinterpret_borrow<py::object>(value);
  if (py::isinstance(v, np.attr("ndarray"))) {
    if (v.attr("ndim").cast<int>() != 0) refuse("is an array; a scalar parameter takes one number");
    v = v.attr("item")();
  }
  const bool is_bool = PyBool_Check(v.ptr()) || py::isinstance(v, np.attr("bool_"));
  auto integer = [&](long double lo, long double hi) -> int64_t {
    if (is_bool || !PyIndex_Check(v.ptr()))
      refuse("is not an integer (give an int; a float or a bool is not converted)");
    py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
    if (!i) {
      PyErr_Clear();
      refuse("is not an integer (give an int; a float or a bool is not converted)");
    }
    if (i < py::int_(static_cast<int64_t>(lo)) || i > py::int_(static_cast<int64_t>(hi)))
      refuse("is out of the range of " + t);
    return i.cast<int64_t>();
  };
  auto real = [&](double max) -> double {
    if (is_bool || (!PyFloat_Check(v.ptr()) && !PyIndex_Check(v.ptr()) && !py::isinstance(v, np.attr("floating")) &&
                    !py::isinstance(v, py::module_::import("numbers").attr("Real"))))  // Fraction, ...
      refuse("is not a real number");
    const double d = PyFloat_AsDouble(v.ptr());
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      refuse("is out of the range of " + t);
    }
    if (std::isfinite(d) && std::fabs(d) > max) refuse("is out of the range of " + t + " (it would become inf)");
    return d;
  };
  if (t == "f32") return KernelArg::scalar(static_cast<float>(real(std::numeric_limits<float>::max())));
  if (t == "f64") return KernelArg::scalar(real(std::numeric_limits<double>::max()));
  if (t == "i32") return KernelArg::scalar(static_cast<int32_t>(integer(INT32_MIN, INT32_MAX)));
  if (t == "i64" || t == "index") return KernelArg::scalar(integer(INT64_MIN, INT64_MAX));
  if (t == "i16") return KernelArg::scalar(static_cast<int16_t>(integer(INT16_MIN, INT16_MAX)));
  if (t == "i8") return KernelArg::scalar(static_cast<int8_t>(integer(INT8_MIN, INT8_MAX)));
  if (t == "i1") {
    if (is_bool) return KernelArg::scalar(static_cast<uint8_t>(PyObject_IsTrue(v.ptr()) == 1));
    if (!PyIndex_Check(v.ptr())) refuse("is not a bool (give True, False, 0 or 1)");
    return KernelArg::scalar(static_cast<uint8_t>(integer(0, 1)));
  }
  Fail(StatusCode::kInvalidArgument, "scalar parameter " + spec.name + " of type " + t +
                                         " cannot be passed from Python");
}

// The numpy dtype an Array holding `type` elements has (bf16 and fp8 as
// their raw bits, as tessera.program.DTYPES says); None when there is none.
py::object NumpyDtypeOf(const std::string& type) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {"f64", "float64"}, {"f32", "float32"}, {"f16", "float16"}, {"bf16", "uint16"}, {"f8E4M3FN", "uint8"},
      {"f8E5M2", "uint8"}, {"i64", "int64"}, {"i32", "int32"}, {"i16", "int16"}, {"i8", "int8"},
      {"ui8", "uint8"}, {"i1", "bool"}, {"index", "int64"}};
  for (const auto& [t, n] : kTypes)
    if (type == t) return py::dtype(std::string(n));
  return py::none();
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// An Array given for buffer parameter `spec`: in device memory, of the
// parameter's dtype, and of its shape where the shape is static.  (The
// plugin checks only byte sizes: a float64 array of the same bytes would
// run, reinterpreted.)
const PyArray& BufferArg(const py::object& o, const ParamSpec& spec) {
  if (!py::isinstance<PyArray>(o) || !o.cast<const PyArray&>().on_device())
    Fail(StatusCode::kInvalidArgument, "argument " + spec.name + " must be a tessera.Array in device memory");
  const PyArray& a = o.cast<const PyArray&>();
  py::object want = NumpyDtypeOf(spec.dtype);
  if (!want.is_none() && !a.dtype.equal(want))
    Fail(StatusCode::kInvalidArgument, "argument " + spec.name + " holds " + spec.dtype + " (numpy " +
                                           std::string(py::str(want)) + "); the Array given is " +
                                           std::string(py::str(py::object(a.dtype))));
  // (An Array too small for the parameter is left to the runtime, whose
  // OUT_OF_RANGE error says how many bytes each side has.)
  bool is_static = true;
  for (int64_t d : spec.shape) is_static &= d >= 0;
  if (is_static && a.shape != spec.shape && a.nbytes >= spec.bytes)
    Fail(StatusCode::kInvalidArgument, "argument " + spec.name + " has shape " + ShapeText(spec.shape) +
                                           "; the Array given has shape " + ShapeText(a.shape));
  return a;
}

void Run(const Program& program, std::vector<PyStream*> streams, const std::vector<std::vector<py::object>>& args,
         const std::vector<py::int_>& grid) {
  const auto& params = program.params();
  if (streams.size() != args.size())
    Fail(StatusCode::kInvalidArgument, std::to_string(streams.size()) + " streams for " +
                                           std::to_string(args.size()) + " argument lists");
  std::vector<Stream> ss;
  std::vector<std::vector<KernelArg>> kargs(args.size());
  for (size_t d = 0; d < args.size(); ++d) {
    if (!streams[d]) Fail(StatusCode::kInvalidArgument, "stream " + std::to_string(d) + " is None");
    ss.push_back(streams[d]->stream);
    if (args[d].size() != params.size())
      Fail(StatusCode::kInvalidArgument, "program " + program.image().function + " takes " +
                                             std::to_string(params.size()) + " arguments, " +
                                             std::to_string(args[d].size()) + " given");
    for (size_t i = 0; i < params.size(); ++i) {
      const py::object& o = args[d][i];
      if (!params[i].is_buffer()) {
        kargs[d].push_back(ScalarArg(o, params[i]));
        continue;
      }
      kargs[d].push_back(KernelArg::buffer(BufferArg(o, params[i]).buffer));
    }
  }
  RunOptions options;
  if (!grid.empty()) {
    if (grid.size() > 3) Fail(StatusCode::kInvalidArgument, "grid has at most 3 dimensions");
    uint32_t dims[3] = {1, 1, 1};
    for (size_t i = 0; i < grid.size(); ++i) {
      if (grid[i] < py::int_(1) || grid[i] > py::int_(UINT32_MAX))
        Fail(StatusCode::kInvalidArgument, "grid=" + std::string(py::str(py::tuple(py::cast(grid)))) +
                                               ": every dimension is a number of groups in 1..4294967295");
      dims[i] = grid[i].cast<uint32_t>();
    }
    options.grid = TsDim3{dims[0], dims[1], dims[2]};
  }
  {
    ReleaseGil release;  // the arrays are held by `args`
    if (ss.size() == 1 && program.devices().size() == 1)
      ThrowIfError(program.Run(ss[0], kargs[0], options));
    else
      ThrowIfError(program.Run(ss, kargs, options));
  }
  for (size_t d = 0; d < args.size(); ++d)
    for (const py::object& o : args[d]) KeepUntilDone(*streams[d], o);
}

void CheckParam(const Program& p, size_t i) {
  if (i >= p.params().size())
    Fail(StatusCode::kOutOfRange, "parameter " + std::to_string(i) + " of a program with " +
                                      std::to_string(p.params().size()));
}

}  // namespace

void BindProgram(py::module_& m) {
  py::class_<Program>(m, "Program", "A compiled program loaded on its devices")
      .def_property_readonly("function", [](const Program& p) { return p.image().function; })
      .def_property_readonly("target", [](const Program& p) { return p.image().target; })
      .def_property_readonly("plugin", [](const Program& p) { return p.image().plugin; })
      .def_property_readonly("source_name", [](const Program& p) { return p.image().source_name; })
      .def_property_readonly("mesh_axes", [](const Program& p) { return p.image().mesh_axes; })
      .def_property_readonly("mesh_shape", [](const Program& p) { return p.image().mesh_shape; })
      .def_property_readonly("devices", &Program::devices)
      .def_property_readonly("params",
                             [](const Program& p) {
                               py::list out;
                               for (size_t i = 0; i < p.params().size(); ++i) out.append(ParamDict(p, i));
                               return out;
                             })
      .def("save", [](const Program& p, const std::string& path) { ThrowIfError(p.Save(path)); })
      .def("run", &Run, py::arg("streams"), py::arg("args"), py::arg("grid") = std::vector<py::int_>{})
      .def("scatter_global",
           [](const Program& p, size_t i, const py::bytes& global) {
             CheckParam(p, i);
             std::vector<std::string> locals = p.ScatterGlobal(i, std::string(global));
             py::list out;
             for (auto& s : locals) out.append(py::bytes(s));
             return out;
           })
      .def("gather_global",
           [](const Program& p, size_t i, const std::vector<std::string>& locals) {
             CheckParam(p, i);
             if (locals.size() != p.devices().size())
               Fail(StatusCode::kInvalidArgument, "gather_global: " + std::to_string(locals.size()) +
                                                      " local tensors for " + std::to_string(p.devices().size()) +
                                                      " devices");
             double difference = 0;
             std::string global = p.GatherGlobal(i, locals, &difference);
             return py::make_tuple(py::bytes(global), difference);
           });

  m.def(
      "compile_program",
      [](py::object source, bool is_path, const std::vector<Device>& devices, const std::string& function,
         const std::string& schedule, const std::string& name, int64_t overlap_chunks,
         const std::vector<std::pair<std::string, int64_t>>& mesh,
         const std::vector<std::vector<std::vector<std::string>>>& in_shardings,
         const std::vector<std::vector<std::vector<std::string>>>& out_shardings) -> Program {
#ifdef TESSERA_PYTHON_HAS_COMPILER
        ProgramSource src = SourceOf(source, is_path, name);
        ProgramCompileOptions options;
        options.function = function;
        options.schedule = schedule;
        options.overlap_chunks = overlap_chunks;
        for (const auto& [axis, size] : mesh) options.mesh.push_back({axis, size});
        options.in_shardings = in_shardings;
        options.out_shardings = out_shardings;
        ReleaseGil release;
        return Unwrap(CompileProgram(devices, src, options));
#else
        (void)source, (void)is_path, (void)devices, (void)function, (void)schedule, (void)name, (void)overlap_chunks;
        (void)mesh, (void)in_shardings, (void)out_shardings;
        NoCompiler();
#endif
      },
      py::arg("source"), py::arg("is_path"), py::arg("devices"), py::arg("function") = "",
      py::arg("schedule") = "", py::arg("name") = "", py::arg("overlap_chunks") = 0,
      py::arg("mesh") = std::vector<std::pair<std::string, int64_t>>{},
      py::arg("in_shardings") = std::vector<std::vector<std::vector<std::string>>>{},
      py::arg("out_shardings") = std::vector<std::vector<std::vector<std::string>>>{});
  m.def(
      "autotune",
      [](py::object source, bool is_path, const std::vector<Device>& devices, const std::string& function,
         const std::vector<std::pair<std::string, std::vector<std::string>>>& space, int trials, double seconds,
         int repeats, int warmup, bool use_cache, bool write_cache, const std::string& strategy,
         int confirm, double min_gain) -> py::dict {
#ifdef TESSERA_PYTHON_HAS_COMPILER
        ProgramCompileOptions options;
        options.function = function;
        AutotuneOptions o;
        o.space = space;
        o.max_trials = trials;
        o.max_seconds = seconds;
        o.repeats = repeats;
        o.warmup = warmup;
        o.use_cache = use_cache;
        o.write_cache = write_cache;
        o.strategy = strategy;
        o.confirm = confirm;
        o.min_gain = min_gain;
        StatusOr<AutotuneResult> r = AutotuneResult{};
        const ProgramSource src = SourceOf(source, is_path, "");  // with the GIL
        {
          ReleaseGil release;
          r = Autotune(devices, src, options, o);
        }
        return AutotuneDict(Unwrap(std::move(r)));
#else
        (void)source, (void)is_path, (void)devices, (void)function, (void)space, (void)trials, (void)seconds;
        (void)repeats, (void)warmup, (void)use_cache, (void)write_cache, (void)strategy, (void)confirm;
        (void)min_gain;
        NoCompiler();
#endif
      },
      py::arg("source"), py::arg("is_path"), py::arg("devices"), py::arg("function"), py::arg("space"),
      py::arg("trials"), py::arg("seconds"), py::arg("repeats"), py::arg("warmup"), py::arg("use_cache"),
      py::arg("write_cache"), py::arg("strategy") = "coordinate", py::arg("confirm") = 3,
      py::arg("min_gain") = 0.05);
  m.def(
      "autotune_lookup",
      [](py::object source, bool is_path, const Device& device, const std::string& function) -> py::object {
#ifdef TESSERA_PYTHON_HAS_COMPILER
        ProgramCompileOptions options;
        options.function = function;
        StatusOr<AutotuneResult> r = AutotuneResult{};
        const ProgramSource src = SourceOf(source, is_path, "");  // with the GIL
        {
          ReleaseGil release;
          r = LookupAutotuneCache(device, src, options);
        }
        if (!r.ok() && r.status().code() == StatusCode::kNotFound) return py::none();
        return AutotuneDict(Unwrap(std::move(r)));
#else
        (void)source, (void)is_path, (void)device, (void)function;
        NoCompiler();
#endif
      },
      py::arg("source"), py::arg("is_path"), py::arg("device"), py::arg("function") = "");
  m.def(
      "devices_needed",
      [](py::object source, bool is_path, const std::string& function) -> int64_t {
#ifdef TESSERA_PYTHON_HAS_COMPILER
        return Unwrap(ProgramDevicesNeeded(SourceOf(source, is_path, ""), function));
#else
        (void)source, (void)is_path, (void)function;
        NoCompiler();
#endif
      },
      py::arg("source"), py::arg("is_path"), py::arg("function") = "");
#ifdef TESSERA_PYTHON_HAS_COMPILER
  py::class_<SourceFile>(m, "_SourceFile", "A program file read once (read_source)")
      .def_property_readonly("name", [](const SourceFile& f) { return f.source.name; });
  m.def(
      "read_source",
      [](const std::string& path) {
        ReleaseGil release;
        return SourceFile{Unwrap(ProgramSource::Read(path))};
      },
      py::arg("path"), "Reads a program file once (bounded): pass the result where a path is taken.");
#endif
  // A compiled program (.tsp) read once: its device count and the program
  // loaded on the devices come from the same bytes.
  py::class_<ProgramImage>(m, "_ProgramImage", "A compiled program file, read (read_image)")
      .def_property_readonly("devices", [](const ProgramImage& im) { return static_cast<int64_t>(im.devices()); });
  m.def(
      "read_image",
      [](const std::string& path) {
        ReleaseGil release;
        return Unwrap(ProgramImage::ReadFile(path));
      },
      py::arg("path"));
  m.def(
      "load_program_image",
      [](const std::vector<Device>& devices, const ProgramImage& image) {
        ProgramImage copy = image;
        ReleaseGil release;
        return Unwrap(Program::Create(devices, std::move(copy)));
      },
      py::arg("devices"), py::arg("image"));
  m.def("has_compiler", [] {
#ifdef TESSERA_PYTHON_HAS_COMPILER
    return true;
#else
    return false;
#endif
  });
}

}  // namespace tessera::python
