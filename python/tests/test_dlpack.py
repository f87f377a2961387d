"""DLPack both ways, zero-copy with numpy for host-visible memory (backend-neutral)."""
import ctypes
import gc

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
    tessera.memcpy(m, np.full((16, 16), 3.5))
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
