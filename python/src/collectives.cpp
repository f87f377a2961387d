// Communicators in Python (tessera.dist.Communicator): over devices of one
// process, or across processes from an id one process makes and hands the
// others (Runtime::create_collective_id, docs/spmd.md "The plugin's own
// collectives across processes"), as torch.distributed and NCCL's
// ncclGetUniqueId / ncclCommInitRank are used.
//
// Arrays are tessera.Array objects on the communicator's devices, one per
// local rank; counts come from their sizes.  Calls release the GIL (a call
// across processes waits for the other processes).
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "common.hpp"

namespace tessera::python {

namespace {

// Runs `work` (which may wait minutes for other processes) on its own
// thread with the GIL released, and checks for Python signals every 100 ms
// so that Ctrl-C raises KeyboardInterrupt at once instead of after the
// processes' timeout.  An interrupted call's thread is left to finish or
// time out by itself: `work` owns copies of everything it uses (handles
// that keep their memory alive), never references to this frame.
template <typename T>
T Interruptible(std::function<T()> work) {
  auto task = std::make_shared<std::packaged_task<T()>>(std::move(work));
  std::future<T> result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  for (;;) {
    {
      ReleaseGil release;
      if (result.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready) break;
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
  return result.get();
}

// A count from Python: an int in [0, 2^32) (not a bool), else
// InvalidArgumentError naming it.
uint32_t Count(const py::handle& v, const std::string& what) {
  if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v) || v < py::int_(0) ||
      v > py::int_(UINT32_MAX))
    Fail(StatusCode::kInvalidArgument, what + " " + std::string(py::repr(v)) + ": an int in 0..4294967295");
  return v.cast<uint32_t>();
}

TsDataType DataTypeOf(const py::dtype& dt) {
  const char kind = dt.kind();
  const size_t size = dt.itemsize();
  if (kind == 'f' && size == 4) return TS_DTYPE_F32;
  if (kind == 'f' && size == 8) return TS_DTYPE_F64;
  if (kind == 'f' && size == 2) return TS_DTYPE_F16;
  if (kind == 'i' && size == 4) return TS_DTYPE_I32;
  if (kind == 'i' && size == 8) return TS_DTYPE_I64;
  if (kind == 'i' && size == 1) return TS_DTYPE_I8;
  if (kind == 'u' && size == 1) return TS_DTYPE_U8;
  Fail(StatusCode::kUnsupported,
       "collectives take float32, float64, float16, int32, int64, int8 or uint8 arrays, not " +
           std::string(py::str(static_cast<py::handle>(dt))));
}

TsReduceOp ReduceOf(const std::string& op) {
  if (op == "sum") return TS_REDUCE_SUM;
  if (op == "prod") return TS_REDUCE_PROD;
  if (op == "max") return TS_REDUCE_MAX;
  if (op == "min") return TS_REDUCE_MIN;
  Fail(StatusCode::kInvalidArgument, "op='" + op + "' is not 'sum', 'prod', 'max' or 'min'");
}

// The buffers of one side of a call: device arrays, one per local rank, of
// one dtype; *elements: the size of each (they must agree).
std::vector<Buffer> Buffers(const Communicator& c, const std::vector<PyArray*>& arrays, const char* side,
                            TsDataType* dtype, uint64_t* elements) {
  if (arrays.size() != c.devices().size())
    Fail(StatusCode::kInvalidArgument, std::string(side) + ": pass one array per local rank (" +
                                           std::to_string(c.devices().size()) + "), not " +
                                           std::to_string(arrays.size()));
  std::vector<Buffer> out;
  for (size_t r = 0; r < arrays.size(); ++r) {
    const PyArray* a = arrays[r];
    if (!a || !a->on_device())
      Fail(StatusCode::kInvalidArgument, std::string(side) + "[" + std::to_string(r) +
                                             "] is not an array in Tessera memory (tessera.empty/asarray on the rank's "
                                             "device)");
    const TsDataType t = DataTypeOf(a->dtype);
    const uint64_t n = a->nbytes / a->dtype.itemsize();
    if (r == 0) {
      *dtype = t;
      *elements = n;
    } else if (t != *dtype || n != *elements) {
      Fail(StatusCode::kInvalidArgument, std::string(side) + ": every rank's array must have the same dtype and size");
    }
    out.push_back(a->buffer);
  }
  return out;
}

std::vector<Stream> DefaultStreams(const Communicator& c) {
  std::vector<Stream> s;
  for (const Device& d : c.devices()) s.push_back(d.default_stream());
  return s;
}

}  // namespace

void BindCollectives(py::module_& m) {
  py::class_<Communicator>(m, "Communicator", "Collectives over ranks, one per device (possibly in other processes)")
      .def_property_readonly("size", &Communicator::size)
      .def_property_readonly("devices", &Communicator::devices)
      .def_property_readonly("provider", &Communicator::provider)
      .def(
          "_collective",
          [](const Communicator& c, const std::string& kind, const std::vector<PyArray*>& send,
             const std::vector<PyArray*>& recv, const std::string& op, uint32_t root, bool deterministic) {
            TsDataType st = TS_DTYPE_F32, rt = TS_DTYPE_F32;
            uint64_t sn = 0, rn = 0;
            std::vector<Buffer> sb = Buffers(c, send, "send", &st, &sn), rb = Buffers(c, recv, "recv", &rt, &rn);
            if (st != rt) Fail(StatusCode::kInvalidArgument, "send and recv arrays must have one dtype");
            const std::vector<Stream> streams = DefaultStreams(c);
            const uint64_t ranks = c.size();
            if (kind != "all_reduce" && kind != "reduce_scatter" && kind != "all_gather" && kind != "broadcast")
              Fail(StatusCode::kInvalidArgument, "unknown collective " + kind);
            if (kind == "reduce_scatter" && sn % ranks != 0)
              Fail(StatusCode::kInvalidArgument, "reduce_scatter: the send arrays' size (" + std::to_string(sn) +
                                                     ") is not a multiple of the ranks (" + std::to_string(ranks) + ")");
            const TsReduceOp reduce = ReduceOf(op);
            std::function<bool()> work = [=] {
              Status status;
              if (kind == "all_reduce") status = c.all_reduce(sb, rb, sn, st, reduce, streams, deterministic);
              else if (kind == "reduce_scatter")
                status = c.reduce_scatter(sb, rb, sn / ranks, st, reduce, streams, deterministic);
              else if (kind == "all_gather") status = c.all_gather(sb, rb, sn, st, streams);
              else status = c.broadcast(sb, rb, sn, st, root, streams);
              ThrowIfError(status);
              for (const Stream& s : streams) ThrowIfError(s.synchronize());
              return true;
            };
            // Across processes this waits for the others: interruptible.
            if (ranks > c.devices().size()) {
              Interruptible<bool>(std::move(work));
            } else {
              ReleaseGil release;
              work();
            }
          },
          py::arg("kind"), py::arg("send"), py::arg("recv"), py::arg("op") = "sum", py::arg("root") = 0,
          py::arg("deterministic") = true)
      .def("destroy", [](Communicator& c) { ThrowIfError(c.destroy()); });

  m.def(
      "_create_collective_id",
      [](const Device& device) {
        Runtime::CollectiveId id = Unwrap(device.runtime().create_collective_id());
        return py::bytes(reinterpret_cast<const char*>(id.data()), id.size());
      },
      py::arg("device"));
  m.def(
      "_create_communicator",
      [](const std::vector<Device>& devices, py::object num_ranks, py::object ranks, py::object id) {
        if (devices.empty()) Fail(StatusCode::kInvalidArgument, "a communicator needs at least one device");
        const Runtime runtime = devices[0].runtime();
        if (id.is_none()) {
          ReleaseGil release;
          return Unwrap(runtime.create_communicator(devices));
        }
        const std::string bytes = id.cast<std::string>();
        const Runtime::CollectiveId raw(bytes.begin(), bytes.end());
        if (num_ranks.is_none() || ranks.is_none())
          Fail(StatusCode::kInvalidArgument, "a communicator across processes needs num_ranks and ranks with the id");
        const uint32_t n = Count(num_ranks, "num_ranks");
        std::vector<uint32_t> r;
        for (const py::handle& rank : ranks) r.push_back(Count(rank, "rank"));
        // Waits for the other processes: interruptible (Ctrl-C).
        return Interruptible<Communicator>([runtime, devices, n, r, raw] {
          return Unwrap(runtime.create_communicator(devices, n, r, raw));
        });
      },
      py::arg("devices"), py::arg("num_ranks") = py::none(), py::arg("ranks") = py::none(), py::arg("id") = py::none());
}

}  // namespace tessera::python
