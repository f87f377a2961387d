// The _tessera extension module: the runtime objects of tessera/runtime.hpp
// (Runtime, Device, Stream, Event, Graph, GraphExec) and the Status ->
// exception translation.  Arrays and copies are in array.cpp, programs in
// program.cpp.  The pure-Python package tessera/ builds the documented API
// (docs/python.md) on top of these.
#include <cerrno>
#include <functional>
#include <new>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common.hpp"
#include "tessera/program.hpp"

namespace tessera::python {
namespace {

std::vector<py::list>& OpenCaptures();

// Every stream's PendingWork (held by its wrappers; expired ones are pruned
// by WrapStream).  Never destroyed: no GIL at interpreter exit.
std::vector<std::weak_ptr<PendingWork>>& AllPendingWork() {
  static auto* all = new std::vector<std::weak_ptr<PendingWork>>();
  return *all;
}

// Records `e` on `s`; an eager record marks what it covers (PyEvent).
void RecordEvent(PyEvent& e, const PyStream& s) {
  ThrowIfError(e.event.record(s.stream));
  if (OpenCaptures().empty()) {
    e.work = s.pending;
    e.mark = s.pending->queued;
  } else {
    e.work.reset();
    e.mark = 0;
  }
}

// code name ("INVALID_ARGUMENT") -> exception class, set by tessera.errors
// at import.  Owned reference, kept for the life of the process.
PyObject* g_error_classes = nullptr;
PyObject* g_error_base = nullptr;

void RaiseStatus(const Status& status) {
  PyObject* cls = nullptr;
  if (g_error_classes) cls = PyDict_GetItemString(g_error_classes, StatusCodeName(status.code()));  // borrowed
  if (!cls) cls = g_error_base ? g_error_base : PyExc_RuntimeError;
  // Diagnostics may quote bytes that are not UTF-8 (a binary file read as
  // a program): escaped, never an exception with no message.
  const std::string& m = status.message();
  PyObject* text = PyUnicode_DecodeUTF8(m.data(), static_cast<Py_ssize_t>(m.size()), "backslashreplace");
  if (!text) {
    PyErr_Clear();
    text = PyUnicode_FromString("(a message that could not be decoded)");
  }
  PyErr_SetObject(cls, text);
  Py_XDECREF(text);
}

std::string DeviceRepr(const Device& d) {
  return "<tessera.Device " + d.backend() + ":" + std::to_string(d.info().ordinal) + " '" + d.info().name + "'>";
}

std::vector<std::string> KindNames(const DeviceInfo& info) {
  std::vector<std::string> out;
  for (TsBufferKind k : {TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED})
    if (info.supports(k)) out.push_back(BufferKindName(k));
  return out;
}

void BindRuntime(py::module_& m) {
  py::class_<Runtime>(m, "Runtime", "A selected backend (plugin) and its devices")
      .def_static(
          "create",
          [](const std::string& backend, int64_t cpu_devices) {
            RuntimeOptions options;
            options.backend = backend;
            // A default, like tessera-run's: TESSERA_CPU_DEVICES still wins.
            if (cpu_devices > 0)
              options.plugin_option_defaults["cpu"] = {OptionValue::Int("devices", cpu_devices)};
            ReleaseGil release;
            return Unwrap(Runtime::Create(options));
          },
          py::arg("backend") = "", py::arg("cpu_devices") = 0)
      .def_property_readonly("backend", &Runtime::backend)
      .def_property_readonly("devices", &Runtime::devices)
      .def("is_pinned", [](const Runtime& rt, uintptr_t address, size_t size) {
        return rt.is_pinned(reinterpret_cast<const void*>(address), size);
      })
      .def("__repr__", [](const Runtime& rt) {
        return "<tessera.Runtime backend=" + rt.backend() + " devices=" + std::to_string(rt.devices().size()) + ">";
      });

  py::class_<Device>(m, "Device", "One device of a backend")
      .def_property_readonly("backend", &Device::backend)
      .def_property_readonly("name", [](const Device& d) { return d.info().name; })
      .def_property_readonly("vendor", [](const Device& d) { return d.info().vendor; })
      .def_property_readonly("driver_version", [](const Device& d) { return d.info().driver_version; })
      .def_property_readonly("type", [](const Device& d) { return std::string(DeviceTypeName(d.info().type)); })
      .def_property_readonly("ordinal", [](const Device& d) { return d.info().ordinal; })
      .def_property_readonly("total_memory", [](const Device& d) { return d.info().total_memory; })
      .def_property_readonly("compute_units", [](const Device& d) { return d.info().compute_units; })
      .def_property_readonly("managed_memory", [](const Device& d) { return d.info().managed_memory; })
      .def_property_readonly("graphs", [](const Device& d) { return d.info().graphs; })
      .def_property_readonly("stream_weights", [](const Device& d) { return d.info().stream_weights; })
      .def_property_readonly("buffer_kinds", [](const Device& d) { return KindNames(d.info()); })
      .def_property_readonly("prefetch_hint",
                             [](const Device& d) { return std::string(HintResultName(d.info().prefetch_hint)); })
      .def_property_readonly("advise_hint",
                             [](const Device& d) { return std::string(HintResultName(d.info().advise_hint)); })
      .def_property_readonly("runtime", &Device::runtime)
      .def("synchronize",
           [](const Device& d) {
             // The device's streams' work queued so far is done after it.
             std::vector<std::pair<std::shared_ptr<PendingWork>, uint64_t>> marks;
             for (const auto& w : AllPendingWork())
               if (auto p = w.lock(); p && p->device == d.impl().get()) marks.emplace_back(p, p->queued);
             {
               ReleaseGil release;
               ThrowIfError(d.synchronize());
             }
             for (auto& [p, mark] : marks) p->ReleaseThrough(mark);
           })
      .def("__eq__",
           [](const Device& a, const py::object& b) { return py::isinstance<Device>(b) && a == b.cast<const Device&>(); })
      .def("__hash__", [](const Device& d) { return std::hash<const void*>()(d.impl().get()); })
      .def("__repr__", &DeviceRepr);
}

void BindStreams(py::module_& m) {
  py::class_<PyStream>(m, "Stream", "An in-order queue of copies and kernels on one device")
      .def_static(
          "create",
          [](const Device& device, uint32_t weight, int32_t priority, bool non_blocking) {
            StreamOptions options;
            options.weight = weight;
            options.priority = priority;
            options.non_blocking = non_blocking;
            return WrapStream(Unwrap(device.create_stream(options)));
          },
          py::arg("device"), py::arg("weight") = 1, py::arg("priority") = 0, py::arg("non_blocking") = false)
      .def_static("default", [](const Device& device) { return WrapStream(device.default_stream()); })
      .def_property_readonly("device", [](const PyStream& s) { return s.stream.device(); })
      .def_property_readonly("weight", [](const PyStream& s) { return s.stream.options().weight; })
      .def_property_readonly("priority", [](const PyStream& s) { return s.stream.options().priority; })
      .def_property_readonly("is_default", [](const PyStream& s) { return s.stream.is_default(); })
      .def("synchronize",
           [](PyStream& s) {
             // Only what was queued before the wait began: another thread
             // may queue more meanwhile.
             const uint64_t mark = s.pending->queued;
             {
               ReleaseGil release;
               ThrowIfError(s.stream.synchronize());
             }
             s.pending->ReleaseThrough(mark);
           })
      .def("query",
           [](PyStream& s) {
             const uint64_t mark = s.pending->queued;
             const bool idle = Unwrap(s.stream.query());
             if (idle) s.pending->ReleaseThrough(mark);
             return idle;
           })
      .def("_record",
           [](const PyStream& s, py::object e) { RecordEvent(Expect<PyEvent>(e, "Stream.record: event", "tessera.Event"), s); })
      .def("_wait",
           [](const PyStream& s, py::object e) {
             ThrowIfError(s.stream.wait(Expect<PyEvent>(e, "Stream.wait: event", "tessera.Event").event));
           })
      .def("_begin_capture", [](const PyStream& s) { ThrowIfError(s.stream.begin_capture()); })
      .def("_end_capture", [](const PyStream& s) { return Unwrap(s.stream.end_capture()); })
      .def("_launch_graph", [](const PyStream& s, const GraphExec& exec) { ThrowIfError(s.stream.launch(exec)); })
      .def("_keep", [](PyStream& s, py::object o) { KeepUntilDone(s, std::move(o)); })
      .def("destroy", [](PyStream& s) { ThrowIfError(s.stream.destroy()); })
      .def("__eq__",
           [](const PyStream& a, const py::object& b) {
             // One PendingWork per stream (WrapStream): its identity.
             return py::isinstance<PyStream>(b) && a.pending == b.cast<const PyStream&>().pending;
           })
      .def("__hash__", [](const PyStream& s) { return std::hash<const void*>()(s.pending.get()); })
      .def("__repr__", [](const PyStream& s) {
        if (!s.stream.valid()) return std::string("<tessera.Stream destroyed>");
        return std::string("<tessera.Stream ") + (s.stream.is_default() ? "default " : "") + "weight=" +
               std::to_string(s.stream.options().weight) + " on " + DeviceRepr(s.stream.device()) + ">";
      });

  py::class_<PyEvent>(m, "Event", "A point in a stream's work")
      .def_static(
          "create",
          [](const Device& device, bool timing) {
            return PyEvent{
                Unwrap(device.create_event(timing ? 0u : static_cast<uint32_t>(TS_EVENT_DISABLE_TIMING))), {}, 0};
          },
          py::arg("device"), py::arg("timing") = true)
      .def("record",
           [](PyEvent& e, py::object s) { RecordEvent(e, Expect<PyStream>(s, "Event.record: stream", "tessera.Stream")); },
           py::arg("stream"),
           "Captures all work queued on `stream` so far.")
      .def("wait",
           [](const PyEvent& e, py::object s) {
             ThrowIfError(Expect<PyStream>(s, "Event.wait: stream", "tessera.Stream").stream.wait(e.event));
           },
           py::arg("stream"), "Makes `stream` wait for this event (the host does not block).")
      .def("query",
           [](const PyEvent& e) {
             const bool done = Unwrap(e.event.query());
             if (done) e.Completed();
             return done;
           })
      .def("synchronize",
           [](const PyEvent& e) {
             // What the record being waited for covers, before the wait: the
             // event may be recorded again meanwhile (another thread).
             const PyEvent covered = e;
             {
               ReleaseGil release;
               ThrowIfError(covered.event.synchronize());
             }
             covered.Completed();
           })
      .def(
          "elapsed",
          [](const PyEvent& start, py::object end) {
            return Unwrap(Event::elapsed_ms(start.event, Expect<PyEvent>(end, "Event.elapsed: end", "tessera.Event").event));
          },
          py::arg("end"), "Milliseconds from this event to `end` (both recorded and complete).")
      .def("destroy", [](PyEvent& e) {
        ThrowIfError(e.event.destroy());
        e.work.reset();
      });

  py::class_<Graph>(m, "Graph", "Work recorded from a capturing stream")
      .def_property_readonly("num_nodes",
                             [](const Graph& g) {
                               if (!g.valid()) Fail(StatusCode::kInvalidHandle, "Graph.num_nodes: the graph was destroyed");
                               return g.num_nodes();
                             })
      .def_property_readonly("num_edges",
                             [](const Graph& g) {
                               if (!g.valid()) Fail(StatusCode::kInvalidHandle, "Graph.num_edges: the graph was destroyed");
                               return g.num_edges();
                             })
      .def("instantiate", [](const Graph& g) { return Unwrap(g.instantiate()); })
      .def("destroy", [](Graph& g) { ThrowIfError(g.destroy()); });
  py::class_<GraphExec>(m, "GraphExec", "An instantiated graph, launched many times")
      .def("destroy", [](GraphExec& g) { ThrowIfError(g.destroy()); });
}

// The keep lists of the graphs being captured (graph.py's capture), guarded
// by the GIL.  Never destroyed: at interpreter exit there is no GIL to drop
// their references with.
std::vector<py::list>& OpenCaptures() {
  static auto* lists = new std::vector<py::list>();
  return *lists;
}

}  // namespace

void KeepUntilDone(PyStream& s, py::object o) {
  for (py::list& l : OpenCaptures()) l.append(o);
  s.pending->objects.emplace_back(++s.pending->queued, std::move(o));
}

PyStream WrapStream(Stream stream) {
  std::vector<std::weak_ptr<PendingWork>>* all = &AllPendingWork();
  std::shared_ptr<PendingWork> found;
  for (size_t i = 0; i < all->size();) {
    std::shared_ptr<PendingWork> w = (*all)[i].lock();
    if (!w) {
      (*all)[i] = std::move(all->back());
      all->pop_back();
      continue;
    }
    // The default stream is one stream, whatever handle names it.
    const bool same = stream.is_default() ? w->is_default && w->device == stream.device().impl().get()
                                          : w->stream.lock() == stream.impl();
    if (same) found = std::move(w);
    ++i;
  }
  if (!found) {
    found = std::make_shared<PendingWork>();
    found->stream = stream.impl();
    found->device = stream.device().impl().get();
    found->is_default = stream.is_default();
    all->push_back(found);
  }
  return PyStream{std::move(stream), std::move(found)};
}

bool ThreadMayReleaseGilInDestructor() {
  // A thread's daemon flag never changes: asked once per thread.  A thread
  // threading did not start is a daemon to it (_DummyThread).
  thread_local int may = -1;
  if (may < 0) {
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);  // a destructor may run while an exception is set
    may = 0;
    if (PyObject* threading = PyImport_ImportModule("threading")) {
      if (PyObject* current = PyObject_CallMethod(threading, "current_thread", nullptr)) {
        if (PyObject* daemon = PyObject_GetAttrString(current, "daemon")) {
          may = daemon == Py_False ? 1 : 0;
          Py_DECREF(daemon);
        }
        Py_DECREF(current);
      }
      Py_DECREF(threading);
    }
    PyErr_Clear();
    PyErr_Restore(type, value, trace);
  }
  return may == 1;
}

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "Tessera's runtime and programs (the C++ API); use the tessera package";
  // The most devices a program's mesh may have (tessera/program.hpp).
  m.attr("MAX_PROGRAM_DEVICES") = tessera::kMaxProgramDevices;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      RaiseStatus(e.status());
    } catch (const std::bad_alloc&) {
      // A host allocation of the C++ layer failed: the runtime's class
      // (a MemoryError too), saying what to do, not a bare MemoryError.
      RaiseStatus(Status(StatusCode::kResourceExhausted,
                         "out of host memory in tessera's C++ layer (std::bad_alloc): free memory, or raise the "
                         "process's address-space limit (ulimit -v), and retry"));
    } catch (const std::system_error& e) {
      // A thread or another system resource the C++ layer could not get.
      const int err = e.code().value();
      const bool exhausted = e.code().category() == std::generic_category() ||
                             e.code().category() == std::system_category();
      if (!exhausted || (err != EAGAIN && err != ENOMEM)) throw;
      RaiseStatus(Status(StatusCode::kResourceExhausted,
                         std::string("out of a system resource in tessera's C++ layer (") + e.what() +
                             "): too many threads or processes, or too little memory; free some and retry"));
    }
  });
  m.def("_set_error_classes", [](py::dict classes, py::object base) {
    Py_XDECREF(g_error_classes);
    Py_XDECREF(g_error_base);
    g_error_classes = classes.release().ptr();
    g_error_base = base.release().ptr();
  });
  // Every status code the runtime has: name -> number.
  m.def("_status_codes", [] {
    py::dict codes;
    for (int c = 1; c <= static_cast<int>(StatusCode::kAbiMismatch); ++c)
      codes[py::str(StatusCodeName(static_cast<StatusCode>(c)))] = c;
    return codes;
  });
  // For tests of the translation itself: raises the exception of `code`.
  m.def("_raise_status", [](int code, const std::string& message) {
    ThrowIfError(Status(static_cast<StatusCode>(code), message));
  });
  // graph.capture: what work queued during a capture uses goes into `keep`.
  m.def("_open_capture", [](py::list keep) { OpenCaptures().push_back(std::move(keep)); });
  m.def("_close_capture", [](py::list keep) {
    auto& lists = OpenCaptures();
    for (auto it = lists.begin(); it != lists.end(); ++it)
      if (it->is(keep)) {
        lists.erase(it);
        return;
      }
  });
  BindRuntime(m);
  BindStreams(m);
  BindArray(m);
  BindProgram(m);
  BindCollectives(m);
}

}  // namespace tessera::python
