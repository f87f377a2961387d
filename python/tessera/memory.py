"""Memory: arrays in device, pinned and managed memory, copies, hints, and
DLPack import."""
import operator

import numpy as np

from . import _tessera
from ._runtime import device as _device, runtime as _runtime, runtime_for as _runtime_for

Array = _tessera.Array


def _dim(d):
    # Integers only (numpy's too), as numpy itself: 2.5 is a TypeError, never
    # silently 2.
    if isinstance(d, (bool, np.bool_)) or not hasattr(d, "__index__"):
        raise TypeError("a shape holds integers, not %s (%r)" % (type(d).__name__, d))
    v = operator.index(d)
    if not -2**63 <= v < 2**63:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError("shape dimension %d: no array is that large (a dimension fits in 64 bits)" % v)
    return v


def _shape(shape):
    dims = [_dim(shape)] if np.isscalar(shape) else [_dim(d) for d in shape]
    if len(dims) > 32:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError("a shape of %d dimensions: numpy (and so .numpy()) takes at most 32" % len(dims))
    return dims


def empty(shape, dtype=np.float32, device=None, kind="device"):
    """An uninitialized Array on `device` (default: the default device).

    kind: "device", "host_pinned" or "managed" (the device must list it in
    Device.buffer_kinds)."""
    if not isinstance(kind, str):
        raise TypeError("kind must be 'device', 'host_pinned' or 'managed', not %r" % (kind,))
    return Array.empty(_device(device), _shape(shape), np.dtype(dtype), kind)


def asarray(obj, dtype=None, device=None, kind="device"):
    """A new Array on `device` holding a copy of `obj` (anything numpy takes)."""
    # np.asarray keeps a 0-d array 0-d (ascontiguousarray makes it 1-d);
    # the other byte order is converted, as DLPack has no byte order.
    host = np.asarray(obj, dtype=dtype, order="C")
    if host.dtype.byteorder not in "=|":
        host = host.astype(host.dtype.newbyteorder("="))
    out = empty(host.shape, host.dtype, device, kind)
    memcpy(out, host)
    return out


def pinned_malloc(shape, dtype=np.float32):
    """A numpy array in page-locked host memory: numpy uses it in place (no
    copy), and asynchronous copies accept it.  Freed when the array (and
    every view of it) is gone."""
    return _tessera.pinned_empty(_runtime(), _shape(shape), np.dtype(dtype))


def managed_malloc(shape, dtype=np.float32, device=None):
    """An Array in managed (unified) memory of `device`: migrates between the
    host and the device; see prefetch() and advise().  Where the memory is
    host-visible, np.from_dlpack(a) views it without a copy."""
    return empty(shape, dtype, device, "managed")


def _check_same_dtype(dst, src, nbytes, what):
    """A copy moves bytes: between element types that differ it would
    reinterpret them (int32 ones read as float32 are 1e-45), so the types
    must agree unless the caller asks for raw bytes with nbytes."""
    if nbytes is not None:
        return
    a, b = getattr(dst, "dtype", None), getattr(src, "dtype", None)
    if a is None or b is None or np.dtype(a) == np.dtype(b):
        return
    a, b = np.dtype(a), np.dtype(b)
    if "O" in (a.kind, b.kind) or not (a.isnative and b.isnative):
        return  # refused below with its own reason (objects, byte order)
    from .errors import InvalidArgumentError
    raise InvalidArgumentError(
        "%s: the destination holds %s and the source %s; a copy moves bytes and would reinterpret them: "
        "convert the data first (numpy's astype), or pass nbytes to copy raw bytes" % (what, np.dtype(a), np.dtype(b)))


def memcpy(dst, src, nbytes=None):
    """Copies src to dst and returns when the copy is done.  Each is a
    tessera.Array or a C-contiguous numpy array (pageable memory is fine);
    the sizes and element types must match unless nbytes is given (then raw
    bytes are copied)."""
    if isinstance(dst, np.ndarray) and isinstance(src, np.ndarray):
        from .errors import InvalidArgumentError
        raise InvalidArgumentError("memcpy between two numpy arrays: copy them with numpy (np.copyto(dst, src)); "
                                   "a Tessera copy has a tessera.Array on at least one side")
    _check_same_dtype(dst, src, nbytes, "memcpy")
    _tessera.memcpy(dst, src, nbytes)


def memcpy_async(dst, src, stream, nbytes=None):
    """Queues the copy on `stream` and returns at once (the design's
    memcpy.async).  Host memory must be pinned (pinned_malloc), else
    FailedPreconditionError.  Both objects are kept alive until the copy is
    known complete (the stream or its device synchronized, the stream's
    query() True, or an event recorded after the copy synchronized or
    queried complete); do not change the host memory before that."""
    _check_same_dtype(dst, src, nbytes, "memcpy_async")
    _tessera.memcpy_async(dst, src, stream, nbytes)


def prefetch(array, target, stream):
    """Migrates managed memory toward `target` (a Device, or "host") on
    `stream`.  Returns what the device did: "applied", "emulated" or
    "ignored" (never a silent success)."""
    host = target is None or (isinstance(target, str) and target.lower() == "host")
    return _tessera.prefetch(array, None if host else _device(target), stream)


def advise(array, advice, device=None):
    """Advice on managed memory: "preferred_location", "read_mostly",
    "accessed_by" (or "unset_..."); device None or "host" means the host.
    Returns "applied", "emulated" or "ignored"."""
    if not isinstance(advice, str):
        raise TypeError("advise: advice is a str such as 'read_mostly', not %r" % (advice,))
    host = device is None or (isinstance(device, str) and device.lower() == "host")
    return _tessera.advise(array, advice, None if host else _device(device))


# DLPack device types of device memory -> the backend whose devices use it.
_DLPACK_BACKENDS = {2: "cuda", 10: "hip", 14: "level_zero"}  # kDLCUDA, kDLROCM, kDLOneAPI


def _dlpack_device(dev_type, dev_id):
    backend = _DLPACK_BACKENDS[dev_type]
    try:
        devs = _runtime_for(backend).devices
    except Exception as e:  # the backend is not available here
        raise BufferError("from_dlpack: the tensor is in %s memory, and the %s backend is not available: %s"
                          % (backend, backend, e)) from e
    for d in devs:
        if d.ordinal == dev_id:
            return d
    raise BufferError("from_dlpack: the tensor is on %s device %d, which the %s runtime does not have"
                      % (backend, dev_id, backend))


def from_dlpack(obj, device=None):
    """An Array from any DLPack producer (numpy arrays, CuPy, PyTorch, ...).

    Without `device`: host memory (DLPack device kCPU) is viewed in place,
    no copy; device memory of CUDA, ROCm or oneAPI is used in place on the
    runtime's device with that ordinal (plugin ABI 1.6). The producer's
    memory stays alive while the Array lives. With `device`: a copy of host
    memory in that device's memory."""
    if not (hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")):
        raise TypeError("from_dlpack takes a DLPack producer (an object with __dlpack__ and __dlpack_device__: "
                        "a numpy array, a tessera.Array, a CuPy or PyTorch tensor), not %s" % type(obj).__name__)
    dev_type, dev_id = obj.__dlpack_device__()
    if device is None and dev_type in _DLPACK_BACKENDS:
        target = _dlpack_device(dev_type, dev_id)
        try:
            capsule = obj.__dlpack__(stream=None)
        except TypeError:
            capsule = obj.__dlpack__()
        return Array._from_dlpack_device_capsule(capsule, target)
    if device is not None:
        if dev_type != 1:
            raise BufferError("from_dlpack(device=...) copies from host memory (DLPack kDLCPU) only")
        return asarray(np.from_dlpack(obj), device=device)
    try:
        capsule = obj.__dlpack__(stream=None)
    except TypeError:  # producers of the first protocol version take no stream
        capsule = obj.__dlpack__()
    return Array._from_dlpack_capsule(capsule)


# The array API's (2023) keywords of __dlpack__ around the binding's own.
_export_dlpack = Array.__dlpack__


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of this array (in place), for from_dlpack of numpy,
    CuPy, PyTorch, ...  max_version: the consumer's newest DLPack version;
    this exports the unversioned (0.x) capsule, which every consumer reads.
    dl_device: where the consumer wants it; only this array's own device
    (__dlpack_device__) is possible.  copy: True exports a copy (host-visible
    memory only), False or None the array in place."""
    if max_version is not None and not (
            isinstance(max_version, tuple) and len(max_version) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in max_version)):
        raise TypeError("__dlpack__: max_version is None or a (major, minor) tuple of ints, not %r" % (max_version,))
    if dl_device is not None and tuple(dl_device) != tuple(self.__dlpack_device__()):
        raise BufferError("__dlpack__: this array is on DLPack device %s, not %s; copy it there first "
                          "(memcpy, or tessera.asarray)" % (tuple(self.__dlpack_device__()), tuple(dl_device)))
    if copy not in (None, True, False):
        raise TypeError("__dlpack__: copy is None, True or False, not %r" % (copy,))
    if copy:
        if not self.host_visible:
            raise BufferError("__dlpack__(copy=True): the array is in device memory; copy it to the host with "
                              ".numpy() and export that")
        return self.numpy().__dlpack__()
    return _export_dlpack(self, stream=stream)


Array.__dlpack__ = _dlpack
