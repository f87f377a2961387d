// Arrays (typed views of Buffers or of imported host memory), pinned host
// memory as numpy arrays, synchronous and asynchronous copies, managed
// memory hints, and DLPack in both directions.
//
// DLPack (v0.6 capsules, what numpy 1.24 speaks): memory the host can
// address is exported as kDLCPU, so numpy views it without a copy; memory
// only the device can address is exported with its device type and the
// address the vendor's API uses (Buffer::device_address, plugin ABI 1.6:
// a CUdeviceptr for kDLCUDA, a hipDeviceptr_t for kDLROCM, a USM pointer
// for oneAPI), so CuPy, PyTorch or JAX use it in place; a plugin without
// such addresses (vulkan) makes __dlpack__ say so (BufferError).  Imported
// tensors must be C-contiguous: kDLCPU ones are viewed as host memory,
// device ones are imported on the matching device (Device::import_memory);
// the array keeps the producer's DLManagedTensor and calls its deleter when
// the last reference goes.
#include <dlpack/dlpack.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"

namespace tessera::python {
namespace {

std::string DtypeName(const py::dtype& dtype) { return dtype.attr("name").cast<std::string>(); }

uint64_t NumElements(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) Fail(StatusCode::kInvalidArgument, "negative dimension " + std::to_string(d) + " in a shape");
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      Fail(StatusCode::kInvalidArgument, "a shape whose element count overflows 64 bits");
  }
  return n;
}

/// The bytes of `shape` x `dtype`, refusing counts that wrap (a wrapped
/// size once made an Array of 2^62 elements over 4 bytes of memory).
uint64_t NumBytes(const std::vector<int64_t>& shape, const py::dtype& dtype) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(NumElements(shape), static_cast<uint64_t>(dtype.itemsize()), &bytes) ||
      bytes > (uint64_t{1} << 62))
    Fail(StatusCode::kInvalidArgument, "a shape of more than 2^62 bytes of " + DtypeName(dtype) + " elements");
  return bytes;
}

/// Tessera memory holds plain data: a dtype that holds Python object
/// references would be copied as raw pointers (numpy then reads freed or
/// foreign objects), and one in the other byte order would be exported to
/// DLPack, which has no byte order, as the wrong numbers.
// numpy spells this machine's order '=' (and '|' where order does not
// apply): an explicit '<' or '>' is always the other one.
bool ForeignByteOrder(const py::dtype& dtype) {
  const char order = dtype.attr("byteorder").cast<std::string>()[0];
  return order == '<' || order == '>';
}

void CheckPlainDtype(const py::dtype& dtype, const std::string& what) {
  if (dtype.attr("hasobject").cast<bool>())
    Fail(StatusCode::kInvalidArgument, what + ": dtype " + DtypeName(dtype) +
                                           " holds Python objects; Tessera memory holds numbers (use a numeric dtype)");
  if (ForeignByteOrder(dtype))
    Fail(StatusCode::kInvalidArgument, what + ": dtype " + std::string(py::str(py::object(dtype))) +
                                           " is not in this machine's byte order (arr.astype(arr.dtype.newbyteorder('=')) "
                                           "converts it)");
}

TsBufferKind KindFromName(const std::string& name) {
  if (name == "device") return TS_BUFFER_DEVICE;
  if (name == "host-pinned" || name == "host_pinned" || name == "pinned") return TS_BUFFER_HOST_PINNED;
  if (name == "managed") return TS_BUFFER_MANAGED;
  Fail(StatusCode::kInvalidArgument, "unknown memory kind '" + name + "' (device, host_pinned or managed)");
}

TsAdvice AdviceFromName(const std::string& name) {
  static const std::pair<const char*, TsAdvice> kNames[] = {
      {"preferred_location", TS_ADVICE_PREFERRED_LOCATION},
      {"read_mostly", TS_ADVICE_READ_MOSTLY},
      {"accessed_by", TS_ADVICE_ACCESSED_BY},
      {"unset_preferred_location", TS_ADVICE_UNSET_PREFERRED_LOCATION},
      {"unset_read_mostly", TS_ADVICE_UNSET_READ_MOSTLY},
      {"unset_accessed_by", TS_ADVICE_UNSET_ACCESSED_BY},
  };
  std::string known;
  for (const auto& [n, a] : kNames) {
    if (name == n) return a;
    known += known.empty() ? n : std::string(", ") + n;
  }
  Fail(StatusCode::kInvalidArgument, "unknown advice '" + name + "' (" + known + ")");
}

PyArray Empty(const Device& device, const std::vector<int64_t>& shape, const py::dtype& dtype,
              const std::string& kind) {
  CheckPlainDtype(dtype, "empty");
  PyArray a;
  a.shape = shape;
  a.dtype = dtype;
  a.nbytes = NumBytes(shape, dtype);
  // A buffer has at least one byte; an empty array still has a buffer.
  a.buffer = Unwrap(device.allocate(a.nbytes ? a.nbytes : 1, KindFromName(kind)));
  return a;
}

// A place in memory for a copy: a tessera Array, or a C-contiguous numpy
// array (writable when it is the destination).  `keep` receives what must
// outlive an asynchronous copy.
struct Endpoint {
  MemoryRef ref{static_cast<void*>(nullptr)};
  uint64_t nbytes = 0;
};

Endpoint ToEndpoint(const py::handle& o, bool writable, const char* role) {
  if (py::isinstance<PyArray>(o)) {
    const PyArray& a = o.cast<const PyArray&>();
    return Endpoint{a.ref(), a.nbytes};
  }
  if (py::isinstance<py::array>(o)) {
    py::array a = py::reinterpret_borrow<py::array>(o);
    if (!(a.flags() & py::array::c_style))
      Fail(StatusCode::kInvalidArgument, std::string("the ") + role +
                                             " numpy array is not C-contiguous (np.ascontiguousarray makes one)");
    if (writable && !a.writeable())
      Fail(StatusCode::kInvalidArgument, std::string("the ") + role + " numpy array is read-only");
    CheckPlainDtype(a.dtype(), std::string("the ") + role + " numpy array");
    void* p = const_cast<void*>(a.data());
    return Endpoint{MemoryRef(p), static_cast<uint64_t>(a.nbytes())};
  }
  Fail(StatusCode::kInvalidArgument, std::string("the ") + role + " of a copy must be a tessera.Array or a numpy "
                                         "array, not " + std::string(py::str(o.get_type().attr("__name__"))));
}

// Bytes to copy: `nbytes` when given (an int in [0, both sizes]), else the
// common size.  Both ends are checked here: the runtime bounds-checks
// Tessera buffers, but a numpy array is only an address to it.
uint64_t CopySize(const Endpoint& dst, const Endpoint& src, py::object nbytes) {
  if (nbytes.is_none()) {
    if (dst.nbytes != src.nbytes)
      Fail(StatusCode::kInvalidArgument, "copy between " + std::to_string(src.nbytes) + " and " +
                                             std::to_string(dst.nbytes) + " bytes: the sizes differ (pass nbytes= "
                                             "to copy a prefix)");
    return dst.nbytes;
  }
  // Any integer (numpy's too: __index__), never a bool or a float.
  if (py::isinstance<py::bool_>(nbytes) || !PyIndex_Check(nbytes.ptr()))
    Fail(StatusCode::kInvalidArgument, "nbytes must be an int, not " +
                                           std::string(py::str(nbytes.get_type().attr("__name__"))));
  nbytes = py::reinterpret_steal<py::object>(PyNumber_Index(nbytes.ptr()));
  if (!nbytes) throw py::error_already_set();
  if (nbytes < py::int_(0))
    Fail(StatusCode::kInvalidArgument, "nbytes=" + std::string(py::str(nbytes)) + ": a byte count is >= 0");
  const uint64_t smaller = std::min(dst.nbytes, src.nbytes);
  if (nbytes > py::int_(smaller))
    Fail(StatusCode::kOutOfRange, "nbytes=" + std::string(py::str(nbytes)) + " runs past the end of the " +
                                      (dst.nbytes <= src.nbytes ? "destination" : "source") + " (" +
                                      std::to_string(smaller) + " bytes)");
  return nbytes.cast<uint64_t>();
}

// ------------------------------------------------------------------ DLPack
DLDataType ToDLType(const py::dtype& dtype) {
  if (ForeignByteOrder(dtype))
    throw py::buffer_error("DLPack has no byte order: dtype " + std::string(py::str(py::object(dtype))) +
                           " is not in this machine's order (convert with astype first)");
  DLDataType t;
  t.bits = static_cast<uint8_t>(dtype.itemsize() * 8);
  t.lanes = 1;
  switch (dtype.kind()) {
    case 'f': t.code = kDLFloat; break;
    case 'i': t.code = kDLInt; break;
    case 'u': t.code = kDLUInt; break;
    default:
      throw py::buffer_error("DLPack (0.6) has no type for numpy dtype " + DtypeName(dtype));
  }
  return t;
}

py::dtype FromDLType(const DLDataType& t) {
  if (t.lanes != 1) throw py::buffer_error("from_dlpack: vector types (lanes " + std::to_string(t.lanes) + ") are not supported");
  const int bytes = t.bits / 8;
  if (t.bits % 8 != 0 || bytes == 0) throw py::buffer_error("from_dlpack: " + std::to_string(t.bits) + "-bit elements are not supported");
  switch (t.code) {
    case kDLFloat:
      if (bytes == 2 || bytes == 4 || bytes == 8) return py::dtype("f" + std::to_string(bytes));
      break;
    case kDLInt: return py::dtype("i" + std::to_string(bytes));
    case kDLUInt: return py::dtype("u" + std::to_string(bytes));
    case kDLBfloat:  // numpy has no bfloat16: the raw bits (docs/python.md)
      if (bytes == 2) return py::dtype("u2");
      break;
    default: break;
  }
  throw py::buffer_error("from_dlpack: DLPack type code " + std::to_string(t.code) + " with " +
                         std::to_string(t.bits) + " bits has no numpy dtype");
}

DLDeviceType DLDeviceOf(const PyArray& a) {
  if (a.host_address()) return kDLCPU;
  const std::string& backend = a.buffer.device().backend();
  if (backend == "cuda") return kDLCUDA;
  if (backend == "hip") return kDLROCM;
  if (backend == "vulkan") return kDLVulkan;
  // kDLOneAPI (DLPack 0.7 and later; this header is 0.6).
  if (backend == "level_zero") return static_cast<DLDeviceType>(14);
  return kDLExtDev;
}

struct ExportContext {
  DLManagedTensor tensor{};
  std::vector<int64_t> shape, strides;
  Buffer buffer;     // keeps device memory alive
  py::object owner;  // keeps imported memory alive
};

void DeleteExport(DLManagedTensor* t) {
  py::gil_scoped_acquire gil;  // `owner` is a Python object
  delete static_cast<ExportContext*>(t->manager_ctx);
}

void CapsuleDestructor(PyObject* capsule) {
  // Only a capsule nobody consumed still owns its tensor.
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (t && t->deleter) t->deleter(t);
}

py::object ExportDLPack(const PyArray& a, const py::object& stream) {
  void* data = a.host_address();
  DLDevice device{kDLCPU, 0};
  if (!data) {
    // Memory only the device can address: its address for the vendor's
    // API, with its device type and ordinal.
    const DLDeviceType type = DLDeviceOf(a);
    StatusOr<uint64_t> address = a.buffer.device_address();
    if (type == kDLVulkan || type == kDLExtDev || !address.ok())
      throw py::buffer_error("this array's " + std::string(BufferKindName(a.buffer.kind())) + " memory on " +
                             a.buffer.device().backend() +
                             " has no address another library can use (" +
                             (address.ok() ? std::string("no DLPack device type for it")
                                           : address.status().ToString()) +
                             "): copy it with memcpy, or allocate kind='managed' / 'host_pinned'");
    data = reinterpret_cast<void*>(static_cast<uintptr_t>(*address));
    device = DLDevice{type, static_cast<int32_t>(a.buffer.device().info().ordinal)};
    // Any stream the consumer names is fine: the device's queued work is
    // finished before the capsule is made (below), which orders it before
    // whatever the consumer queues next on any stream.
    if (!stream.is_none() && !py::isinstance<py::int_>(stream))
      throw py::buffer_error("__dlpack__: stream must be None or an int (the consumer's stream handle)");
  } else if (!stream.is_none() &&
             !(py::isinstance<py::int_>(stream) && (stream.equal(py::int_(-1)) || stream.equal(py::int_(0))))) {
    throw py::buffer_error("__dlpack__: host memory (kDLCPU) takes no stream (stream=None)");
  }
  if (a.on_device()) {
    // The consumer reads at once: the device's queued work must be done.
    ReleaseGil release;
    ThrowIfError(a.buffer.device().synchronize());
  }
  // The type first: a dtype DLPack cannot name must not leak the context
  // (which holds the buffer).
  const DLDataType dl_type = ToDLType(a.dtype);
  auto owned = std::make_unique<ExportContext>();
  ExportContext* ctx = owned.get();
  ctx->shape = a.shape;
  ctx->strides.resize(a.shape.size());
  int64_t stride = 1;
  for (size_t i = a.shape.size(); i-- > 0;) {
    ctx->strides[i] = stride;
    stride *= a.shape[i];
  }
  ctx->buffer = a.buffer;
  ctx->owner = a.owner;
  DLTensor& t = ctx->tensor.dl_tensor;
  t.data = data;
  t.device = device;
  t.ndim = static_cast<int32_t>(a.shape.size());
  t.dtype = dl_type;
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;
  ctx->tensor.manager_ctx = ctx;
  ctx->tensor.deleter = &DeleteExport;
  PyObject* capsule = PyCapsule_New(&ctx->tensor, "dltensor", &CapsuleDestructor);
  if (!capsule) throw py::error_already_set();  // `owned` frees the context
  owned.release();  // the capsule's destructor (or the consumer's deleter) frees it
  return py::reinterpret_steal<py::object>(capsule);
}

// The capsule's tensor, now owned by the returned object (it calls the
// producer's deleter); a C-contiguous layout checked.
std::pair<const DLTensor*, py::capsule> TakeDLPack(const py::capsule& capsule) {
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
    throw py::buffer_error("from_dlpack: not an unconsumed 'dltensor' capsule (a capsule is consumed once)");
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  // From here on the tensor is ours: the array's owner calls its deleter.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  py::capsule owner(t, [](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (m->deleter) m->deleter(m);
  });
  const DLTensor& d = t->dl_tensor;
  // What a broken or hostile producer may hand over: checked before use.
  if (d.ndim < 0 || d.ndim > 64 || (d.ndim > 0 && !d.shape))
    throw py::buffer_error("from_dlpack: a tensor of " + std::to_string(d.ndim) + " dims" +
                           (d.ndim > 0 && !d.shape ? " and no shape" : "") + ": the producer's capsule is broken");
  for (int i = 0; i < d.ndim; ++i)
    if (d.shape[i] < 0)
      throw py::buffer_error("from_dlpack: dim " + std::to_string(i) + " of size " + std::to_string(d.shape[i]) +
                             ": the producer's capsule is broken");
  if (d.strides) {
    int64_t expect = 1;
    for (int i = d.ndim; i-- > 0;) {
      if (d.shape[i] != 1 && d.strides[i] != expect)
        throw py::buffer_error("from_dlpack: the tensor is not C-contiguous (np.ascontiguousarray first)");
      expect *= d.shape[i];
    }
  }
  return {&t->dl_tensor, std::move(owner)};
}

// The first byte of the tensor, data + byte_offset, once the whole range
// [data + byte_offset, + nbytes) is known not to wrap the address space (a
// byte_offset of 2^63 made an address the first read crashed on; 2^64 - 16
// pointed 16 bytes before the producer's memory).
uint64_t DLPackAddress(const DLTensor& d, uint64_t nbytes) {
  const uint64_t data = reinterpret_cast<uintptr_t>(d.data);
  uint64_t first = 0, end = 0;
  if (__builtin_add_overflow(data, d.byte_offset, &first) || __builtin_add_overflow(first, nbytes, &end) ||
      end > (uint64_t{1} << 57))  // beyond any user-space address (57-bit virtual addresses)
    throw py::buffer_error("from_dlpack: data " + std::to_string(data) + " + byte_offset " +
                           std::to_string(d.byte_offset) + " + " + std::to_string(nbytes) +
                           " bytes is past the end of the address space: the producer's capsule is broken");
  return first;
}

PyArray ImportDLPack(const py::capsule& capsule) {
  auto [d, owner] = TakeDLPack(capsule);
  if (d->device.device_type != kDLCPU && d->device.device_type != kDLCUDAHost)
    throw py::buffer_error("from_dlpack: only host memory (kDLCPU) is imported this way; this tensor is on DLPack "
                           "device type " + std::to_string(d->device.device_type));
  PyArray a;
  a.dtype = FromDLType(d->dtype);
  a.shape.assign(d->shape, d->shape + d->ndim);
  a.nbytes = NumBytes(a.shape, a.dtype);
  if (!d->data && a.nbytes > 0)
    throw py::buffer_error("from_dlpack: the tensor holds " + std::to_string(a.nbytes) +
                           " bytes at address NULL: the producer's capsule is broken");
  a.host = reinterpret_cast<char*>(static_cast<uintptr_t>(DLPackAddress(*d, a.nbytes)));
  a.owner = std::move(owner);
  return a;
}

// Device memory of another library (kDLCUDA, kDLROCM, oneAPI) on `device`,
// used in place (Device::import_memory, plugin ABI 1.6); the producer's
// tensor lives as long as the array.
PyArray ImportDLPackOnDevice(const py::capsule& capsule, const Device& device) {
  auto [d, owner] = TakeDLPack(capsule);
  PyArray a;
  a.dtype = FromDLType(d->dtype);
  a.shape.assign(d->shape, d->shape + d->ndim);
  a.nbytes = NumBytes(a.shape, a.dtype);
  if (a.nbytes == 0) throw py::buffer_error("from_dlpack: an empty tensor has no memory to use in place");
  if (!d->data)
    throw py::buffer_error("from_dlpack: the tensor holds " + std::to_string(a.nbytes) +
                           " bytes at address NULL: the producer's capsule is broken");
  const uint64_t address = DLPackAddress(*d, a.nbytes);
  StatusOr<Buffer> buffer = device.import_memory(address, a.nbytes, TS_BUFFER_DEVICE);
  if (!buffer.ok())
    throw py::buffer_error("from_dlpack: cannot use the tensor's memory on " + device.backend() + " in place: " +
                           buffer.status().ToString());
  a.buffer = *buffer;
  a.owner = std::move(owner);
  return a;
}

// ------------------------------------------------------------ pinned memory
struct PinnedAllocation {
  Runtime runtime;
  void* pointer = nullptr;
};

py::array PinnedEmpty(const Runtime& runtime, const std::vector<int64_t>& shape, const py::dtype& dtype) {
  CheckPlainDtype(dtype, "pinned_malloc");
  const uint64_t nbytes = NumBytes(shape, dtype);
  auto* alloc = new PinnedAllocation{runtime, nullptr};
  StatusOr<void*> p = runtime.pinned_malloc(nbytes ? nbytes : 1);
  if (!p.ok()) {
    delete alloc;
    ThrowIfError(p.status());
  }
  alloc->pointer = *p;
  py::capsule owner(alloc, [](void* v) {
    auto* a = static_cast<PinnedAllocation*>(v);
    FreeWithoutGil([a] {
      a->runtime.pinned_free(a->pointer).IgnoreError();  // nothing to report it to
      delete a;
    });
  });
  return py::array(dtype, shape, {}, alloc->pointer, owner);
}

py::array ToNumpy(const PyArray& a) {
  py::array out(a.dtype, a.shape);
  if (a.nbytes == 0) return out;
  void* dst = out.mutable_data();
  if (!a.on_device()) {
    std::memcpy(dst, a.host, a.nbytes);
    return out;
  }
  ReleaseGil release;
  ThrowIfError(copy(MemoryRef(dst), a.ref(), a.nbytes));
  return out;
}

}  // namespace

void BindArray(py::module_& m) {
  py::class_<PyArray>(m, "Array", "A typed array in Tessera memory (or imported host memory)")
      .def_static("empty", &Empty, py::arg("device"), py::arg("shape"), py::arg("dtype"), py::arg("kind") = "device")
      .def_static("_from_dlpack_capsule", &ImportDLPack)
      .def_static("_from_dlpack_device_capsule", &ImportDLPackOnDevice)
      .def_property_readonly("shape", [](const PyArray& a) { return py::tuple(py::cast(a.shape)); })
      .def_property_readonly("dtype", [](const PyArray& a) { return a.dtype; })
      .def_property_readonly("nbytes", [](const PyArray& a) { return a.nbytes; })
      .def_property_readonly("ndim", [](const PyArray& a) { return a.shape.size(); })
      .def_property_readonly("size", [](const PyArray& a) { return NumElements(a.shape); })
      .def_property_readonly("device",
                             [](const PyArray& a) -> py::object {
                               if (!a.on_device()) return py::none();
                               return py::cast(a.buffer.device());
                             })
      .def_property_readonly("kind",
                             [](const PyArray& a) {
                               return a.on_device() ? std::string(BufferKindName(a.buffer.kind())) : "host";
                             })
      .def_property_readonly("host_visible", [](const PyArray& a) { return a.host_address() != nullptr; })
      .def("numpy", &ToNumpy, "A copy in a new numpy array (waits for the device's queued work).")
      .def("__array__",
           [](const PyArray& a, py::object dtype) {
             py::array out = ToNumpy(a);
             return dtype.is_none() ? out : py::array(out.attr("astype")(dtype));
           },
           py::arg("dtype") = py::none())
      .def("__dlpack__", &ExportDLPack, py::kw_only(), py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const PyArray& a) {
             const int ordinal = a.host_address() ? 0 : static_cast<int>(a.buffer.device().info().ordinal);
             return py::make_tuple(static_cast<int>(DLDeviceOf(a)), ordinal);
           })
      .def("_host_address", [](const PyArray& a) { return reinterpret_cast<uintptr_t>(a.host_address()); })
      .def("_device_address",
           [](const PyArray& a) -> uint64_t {
             if (!a.on_device()) return reinterpret_cast<uintptr_t>(a.host);
             StatusOr<uint64_t> address = a.buffer.device_address();
             ThrowIfError(address.status());
             return *address;
           },
           "The address the device's own API uses for the memory (plugin ABI 1.6); raises where the plugin "
           "gives none.")
      .def("__repr__", [](const PyArray& a) {
        std::string shape;
        for (int64_t d : a.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
        std::string where = a.on_device() ? std::string(BufferKindName(a.buffer.kind())) + " memory of " +
                                                a.buffer.device().backend() + ":" +
                                                std::to_string(a.buffer.device().info().ordinal)
                                          : std::string("imported host memory");
        return "<tessera.Array shape=(" + shape + ") dtype=" + DtypeName(a.dtype) + " in " + where + ">";
      });

  m.def("pinned_empty", &PinnedEmpty, py::arg("runtime"), py::arg("shape"), py::arg("dtype"));

  m.def(
      "memcpy",
      [](py::object dst, py::object src, py::object nbytes) {
        Endpoint d = ToEndpoint(dst, true, "destination"), s = ToEndpoint(src, false, "source");
        const uint64_t size = CopySize(d, s, nbytes);
        if (size == 0) return;  // nothing to copy (an empty array): as cudaMemcpy of 0 bytes
        ReleaseGil release;
        ThrowIfError(copy(d.ref, s.ref, size));
      },
      py::arg("dst"), py::arg("src"), py::arg("nbytes") = py::none());
  m.def(
      "memcpy_async",
      [](py::object dst, py::object src, py::object stream_arg, py::object nbytes) {
        PyStream& stream = Expect<PyStream>(stream_arg, "memcpy_async: stream", "tessera.Stream");
        Endpoint d = ToEndpoint(dst, true, "destination"), s = ToEndpoint(src, false, "source");
        const uint64_t size = CopySize(d, s, nbytes);
        if (size == 0) return;  // nothing to copy, nothing to keep
        ThrowIfError(stream.stream.copy_async(d.ref, s.ref, size));
        // The memory must outlive the copy: held until the copy is known complete.
        KeepUntilDone(stream, dst);
        KeepUntilDone(stream, src);
      },
      py::arg("dst"), py::arg("src"), py::arg("stream"), py::arg("nbytes") = py::none());
  m.def(
      "prefetch",
      [](py::object array, py::object target, py::object stream_arg) {
        const PyArray& a = Expect<PyArray>(array, "prefetch: array", "tessera.Array");
        const PyStream& stream = Expect<PyStream>(stream_arg, "prefetch: stream", "tessera.Stream");
        if (!a.on_device()) Fail(StatusCode::kInvalidArgument, "prefetch: the array is not in Tessera memory");
        Device d;
        if (!target.is_none()) d = target.cast<Device>();
        return std::string(HintResultName(Unwrap(stream.stream.prefetch(a.buffer, target.is_none() ? nullptr : &d))));
      },
      py::arg("array"), py::arg("target"), py::arg("stream"));
  m.def(
      "advise",
      [](py::object array, const std::string& advice, py::object device) {
        const PyArray& a = Expect<PyArray>(array, "advise: array", "tessera.Array");
        if (!a.on_device()) Fail(StatusCode::kInvalidArgument, "advise: the array is not in Tessera memory");
        Device d;
        if (!device.is_none()) d = device.cast<Device>();
        return std::string(
            HintResultName(Unwrap(advise(a.buffer, AdviceFromName(advice), device.is_none() ? nullptr : &d))));
      },
      py::arg("array"), py::arg("advice"), py::arg("device") = py::none());
}

}  // namespace tessera::python
