// Shared pieces of the _tessera extension module: Status -> Python
// exception, and the wrapper objects that more than one file binds.
//
// Ownership: every wrapper holds a C++ handle (a shared_ptr underneath), so
// a Python object keeps its runtime, device and plugin alive; Python's
// garbage collector decides when the last handle goes.
//
// Thread-safety: calls that may block on the device (synchronize, copies,
// program runs) release the GIL; the C++ API is thread-safe.
#ifndef TESSERA_PYTHON_COMMON_HPP_
#define TESSERA_PYTHON_COMMON_HPP_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "tessera/runtime.hpp"
#include "tessera/status.hpp"

// Py_IsFinalizing became public in Python 3.13 (and _Py_IsFinalizing went).
#if PY_VERSION_HEX >= 0x030D0000
#define Py_IsFinalizingCompat() Py_IsFinalizing()
#else
#define Py_IsFinalizingCompat() _Py_IsFinalizing()
#endif

namespace tessera::python {

namespace py = pybind11;

// Releases the GIL around a blocking call, as py::gil_scoped_release, and
// lets a daemon thread end when the interpreter exits: Python ends a thread
// that takes the GIL back during finalization with pthread_exit, a forced
// unwind, which through a noexcept destructor (py::gil_scoped_release's)
// called std::terminate (the process aborted, exit 134, at a normal exit).
// This destructor lets it pass; pybind11's dispatcher rethrows it.
class ReleaseGil {
 public:
  ReleaseGil() : state_(PyEval_SaveThread()) {}
  ~ReleaseGil() noexcept(false) { PyEval_RestoreThread(state_); }
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  PyThreadState* state_;
};

// Runs `free` (a call that may wait for the device: Buffer_Free and
// Host_Free wait for the work that may use the memory) from a destructor,
// without the GIL where that is safe, so other Python threads go on
// meanwhile.  It is not safe in a daemon thread (or a thread Python did not
// start): once the interpreter begins to finalize, such a thread waiting to
// take the GIL back is ended by pthread_exit, a forced unwind that a
// destructor cannot pass (the process would abort at exit).  The main
// thread finalizes, and the other threads threading started are joined
// before it does, so they release it; nobody does while finalizing.
bool ThreadMayReleaseGilInDestructor();  // module.cpp; the GIL held

template <typename F>
void FreeWithoutGil(F&& free) {
  if (Py_IsFinalizingCompat() || !ThreadMayReleaseGilInDestructor()) {
    free();
    return;
  }
  PyThreadState* state = PyEval_SaveThread();
  free();
  PyEval_RestoreThread(state);
}

// A failed Status on its way to Python: the translator registered in
// module.cpp raises the tessera.errors class registered for its code.
class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)) {}
  const char* what() const noexcept override { return status_.message().c_str(); }
  const Status& status() const { return status_; }

 private:
  Status status_;
};

inline void ThrowIfError(Status status) {
  if (!status.ok()) throw StatusError(std::move(status));
}

template <typename T>
T Unwrap(StatusOr<T> value) {
  if (!value.ok()) throw StatusError(std::move(value).status());
  return std::move(value).value();
}

// An error made here (not by the runtime), with the code it would have.
[[noreturn]] inline void Fail(StatusCode code, const std::string& message) {
  throw StatusError(Status(code, message));
}

// The Python objects whose memory a stream's queued work uses, each with
// the number of the operation that queued it (numbered from 1, in order).
// One per stream, shared by all its wrappers (Stream.default(d) twice is one
// stream).  Guarded by the GIL.
struct PendingWork {
  std::weak_ptr<detail::StreamImpl> stream;
  const void* device = nullptr;  // the stream's DeviceImpl, compared only
  bool is_default = false;       // the device's default stream (a new impl per handle)
  uint64_t queued = 0;           // operations kept so far
  std::deque<std::pair<uint64_t, py::object>> objects;
  // Drops the objects of operations 1..done (their work has completed).
  // They are dropped after the list is updated: a finalizer may run Python
  // code that calls back into this list (a query, a synchronize).
  void ReleaseThrough(uint64_t done) {
    std::vector<py::object> dropped;
    while (!objects.empty() && objects.front().first <= done) {
      dropped.push_back(std::move(objects.front().second));
      objects.pop_front();
    }
  }
};

// A stream and what its queued work uses: kept alive until the work is
// known complete (the stream, its device or a later event synchronized or
// queried complete), or, for work captured into a graph, as long as the graph.
struct PyStream {
  Stream stream;
  std::shared_ptr<PendingWork> pending;
};

// `o` as a T, else a TypeError naming the argument and what it takes
// (pybind11's own says "incompatible function arguments" and prints the
// signature).  `what`: "Event.record: stream"; `type_name`: "tessera.Stream".
template <typename T>
T& Expect(const py::handle& o, const char* what, const char* type_name) {
  if (!py::isinstance<T>(o))
    throw py::type_error(std::string(what) + " must be a " + type_name + ", not " +
                         std::string(py::str(py::type::handle_of(o).attr("__name__"))));
  return o.cast<T&>();
}

// The wrapper of `stream`, sharing the PendingWork of its other wrappers.
PyStream WrapStream(Stream stream);

// An event and what its last record covers: the operations of the stream's
// PendingWork through `mark`.  Only an eager record (no capture open in this
// process) marks: a record inside a capture says nothing about the eager
// work queued before it.
struct PyEvent {
  Event event;
  std::weak_ptr<PendingWork> work;
  uint64_t mark = 0;
  // The event is complete: what its record covers is done.
  void Completed() const {
    if (auto w = work.lock()) w->ReleaseThrough(mark);
  }
};

// Keeps `o` (whose memory work queued on `s` uses) until that work is known
// complete, and in every graph being captured: a stream that joined a
// capture queues into it, and the graph replays that work later. (Holding
// more than a graph needs only delays a free.) Called with the GIL held,
// after the work was queued.
void KeepUntilDone(PyStream& s, py::object o);

// A Tessera array: a typed view of a whole Buffer (device, host-pinned or
// managed memory), or of host memory that another library owns (imported
// through DLPack; `owner` keeps it alive).
struct PyArray {
  PyArray() = default;
  PyArray(const PyArray&) = default;
  PyArray(PyArray&&) = default;
  PyArray& operator=(const PyArray&) = default;
  PyArray& operator=(PyArray&&) = default;
  // The buffer's free waits for the device: without the GIL.
  ~PyArray() {
    if (buffer.valid()) FreeWithoutGil([b = std::move(buffer)]() mutable { b = Buffer(); });
  }

  Buffer buffer;                // invalid for imported host memory
  void* host = nullptr;         // imported host memory
  py::object owner;             // what keeps `host` alive
  std::vector<int64_t> shape;
  py::dtype dtype;
  uint64_t nbytes = 0;

  bool on_device() const { return buffer.valid(); }
  // The host address when the host can address the memory, else nullptr.
  void* host_address() const { return on_device() ? buffer.host_pointer() : host; }
  MemoryRef ref() const { return on_device() ? MemoryRef(buffer) : MemoryRef(host); }
};

void BindArray(py::module_& m);
void BindProgram(py::module_& m);
void BindCollectives(py::module_& m);

}  // namespace tessera::python

#endif  // TESSERA_PYTHON_COMMON_HPP_
