"""DLPack both ways, zero-copy with numpy for host-visible memory (backend-neutral)."""
import ctypes
import gc
import os

import numpy as np
import pytest

import tessera


def test_numpy_into_tessera_without_a_copy(rng):
    a = rng.standard_normal((64, 3)).astype(np.float32)
    t = tessera.from_dlpack(a)
    assert t.kind == "host" and t.shape == (64, 3) and t.dtype == np.float32
    assert t._host_address() == a.ctypes.data  # the same memory
    assert t.__dlpack_device__() == (1, 0)
    back = np.from_dlpack(t)
    assert np.shares_memory(back, a)
    a[5, 1] = 42.0
    assert back[5, 1] == 42.0
    # The producer's memory lives as long as the tessera array.
    addr = a.ctypes.data
    del a, back
    gc.collect()
    assert t._host_address() == addr
    assert t.numpy()[5, 1] == 42.0


def capsule_tensor(capsule):
    """(data, device_type, device_id) of an unconsumed DLPack 0.6 capsule."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    p = get(capsule, b"dltensor")  # DLManagedTensor*: its DLTensor first
    return (ctypes.c_void_p.from_address(p).value or 0, ctypes.c_int32.from_address(p + 8).value,
            ctypes.c_int32.from_address(p + 12).value)


def test_capsule_points_at_the_memory(rng, dev):
    d = tessera.asarray(rng.standard_normal(256).astype(np.float32))
    try:
        address = d._device_address()
    except tessera.UnsupportedError as e:  # a plugin without device addresses (vulkan)
        assert "Buffer_GetDeviceAddress" in str(e)
        if not d.host_visible:
            with pytest.raises(BufferError, match="no address another library can use"):
                d.__dlpack__()
        pytest.skip("%s gives no device addresses" % dev.name)
    data, device_type, device_id = capsule_tensor(d.__dlpack__())
    assert (device_type, device_id) == d.__dlpack_device__()
    if d.host_visible:
        assert (data, device_type) == (d._host_address(), 1)
    else:
        # Device memory: the vendor's address (kDLCUDA 2, kDLROCM 10,
        # kDLOneAPI 14), what CuPy or PyTorch would use in place.
        assert data == address and device_type in (2, 10, 14)


def test_tessera_device_memory_into_numpy(rng, dev):
    x = rng.standard_normal(1000).astype(np.float32)
    d = tessera.asarray(x)
    if not d.host_visible:
        pytest.skip("device memory of %s is not host-visible" % dev.name)
    assert d.__dlpack_device__() == (1, 0)
    view = np.from_dlpack(d)
    assert view.ctypes.data == d._host_address()  # no copy
    np.testing.assert_array_equal(view, x)
    # Tessera writes, the numpy view sees it (numpy 1.24 marks DLPack
    # imports read-only, so the view cannot write).
    tessera.memcpy(d, np.full(10, 7.0, np.float32), nbytes=40)
    np.testing.assert_array_equal(view[:10], 7.0)
    np.testing.assert_array_equal(view[10:], x[10:])
    # The view keeps the buffer alive after the Array is gone.
    del d
    gc.collect()
    np.testing.assert_array_equal(view[10:], x[10:])


def test_managed_memory_into_numpy(dev, rng):
    if "managed" not in dev.buffer_kinds:
        pytest.skip("no managed memory")
    m = tessera.managed_malloc((16, 16), np.float64)
    if not m.host_visible:
        pytest.skip("managed memory not host-visible")
    v = np.from_dlpack(m)
    tessera.memcpy(m, np.full((16, 16), 3.5, np.float64))
    assert v.ctypes.data == m._host_address()
    np.testing.assert_array_equal(v, 3.5)


def test_a_program_reads_imported_memory(rng):
    fn = tessera.compile("""
func.func @twice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = tessera_graph.add %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
""")
    a = rng.standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_array_equal(fn(tessera.from_dlpack(a)), a + a)
    d = tessera.from_dlpack(a, device=tessera.device())  # a copy on the device
    assert d.kind == "device"
    np.testing.assert_array_equal(fn(d), a + a)


def test_refusals(rng):
    a = np.arange(20, dtype=np.float32)
    with pytest.raises(BufferError, match="C-contiguous"):
        tessera.from_dlpack(a[::2])
    cap = a.__dlpack__()
    tessera.Array._from_dlpack_capsule(cap)
    with pytest.raises(BufferError, match="consumed"):
        tessera.Array._from_dlpack_capsule(cap)
    b = tessera.from_dlpack(np.array([True, False]).view(np.uint8))
    assert b.dtype == np.uint8


def test_device_tensor_of_a_missing_backend_is_a_buffer_error():
    # A producer of CUDA memory (kDLCUDA = 2, device 0) where no cuda
    # device is available: the message names the backend; the capsule is
    # not asked for.
    class CudaTensor:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("the capsule is taken only once a device is found")

    if any(d.backend == "cuda" for d in tessera.devices()):
        pytest.skip("a cuda device is present")
    with pytest.raises(BufferError, match="cuda"):
        tessera.from_dlpack(CudaTensor())


# A hand-made DLPack producer (ctypes): what a broken or hostile library may
# hand over must be refused at import, never read.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


def _capsule(keep, data, shape, ndim=None, with_shape=True, byte_offset=0):
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    m = _DLManagedTensor()
    m.dl_tensor.data = data
    m.dl_tensor.device = _DLDevice(1, 0)  # kDLCPU
    m.dl_tensor.ndim = len(shape) if ndim is None else ndim
    m.dl_tensor.dtype = _DLDataType(2, 32, 1)  # float32
    if with_shape:
        m.dl_tensor.shape = dims
    m.dl_tensor.byte_offset = byte_offset
    m.deleter = _DELETER(0)
    keep.extend([dims, m])
    return new(ctypes.addressof(m), b"dltensor", None)


def test_broken_producers_are_refused():
    keep = []
    real = np.zeros(4, np.float32)
    # 16 bytes at NULL: imported, .numpy() read address 0 (SIGSEGV).
    with pytest.raises(BufferError, match="at address NULL"):
        tessera.Array._from_dlpack_capsule(_capsule(keep, None, [4]))
    with pytest.raises(BufferError, match="no shape"):
        tessera.Array._from_dlpack_capsule(_capsule(keep, real.ctypes.data, [4], with_shape=False))
    with pytest.raises(BufferError, match="-1 dims"):
        tessera.Array._from_dlpack_capsule(_capsule(keep, real.ctypes.data, [4], ndim=-1))
    with pytest.raises(BufferError, match="size -4"):
        tessera.Array._from_dlpack_capsule(_capsule(keep, real.ctypes.data, [-4]))
    # A byte_offset that wraps the address space: 2^63 was imported and its
    # first read crashed; 2^64 - 16 read 16 bytes before the memory.
    for offset in (2**63, 2**64 - 16):
        with pytest.raises(BufferError, match="past the end of the address space"):
            tessera.Array._from_dlpack_capsule(_capsule(keep, real.ctypes.data, [4], byte_offset=offset))
    # An empty tensor may have no memory.
    assert tessera.Array._from_dlpack_capsule(_capsule(keep, None, [0])).shape == (0,)


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_refused_export_leaks_nothing():
    # A dtype DLPack cannot name (bool) is refused before anything is made:
    # the export's context, which holds the buffer, leaked it whole before
    # (16 x 32 MiB here; the bound leaves room for the allocator's noise).
    gc.collect()
    start = _rss_bytes()
    for _ in range(16):
        a = tessera.asarray(np.ones(32 << 20, bool))
        with pytest.raises(BufferError):
            a.__dlpack__()
        del a
    gc.collect()
    assert _rss_bytes() - start < (160 << 20)
