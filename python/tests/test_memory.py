"""Arrays, pinned and managed memory, copies and hints (backend-neutral)."""
import numpy as np
import pytest

import tessera
from tessera import memcpy, memcpy_async, pinned_malloc, stream


def test_pinned_malloc_is_a_numpy_array_in_pinned_memory():
    a = pinned_malloc((256, 3), np.float32)
    assert isinstance(a, np.ndarray) and a.shape == (256, 3) and a.dtype == np.float32
    assert a.flags.c_contiguous and a.flags.writeable
    # numpy uses the pinned allocation itself: the runtime says it is pinned.
    assert tessera.runtime().is_pinned(a.ctypes.data, a.nbytes)
    assert not tessera.runtime().is_pinned(np.empty(1024, np.float32).ctypes.data, 4096)
    a[:] = np.arange(a.size, dtype=np.float32).reshape(a.shape)
    view = a[10:20]  # a view keeps the allocation alive
    del a
    np.testing.assert_array_equal(view[0], [30, 31, 32])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.uint8])
def test_device_roundtrip(dtype, rng):
    a = (rng.standard_normal(1001) * 50).astype(dtype)
    d = tessera.asarray(a)
    assert d.shape == (1001,) and d.dtype == np.dtype(dtype) and d.nbytes == a.nbytes and d.kind == "device"
    np.testing.assert_array_equal(d.numpy(), a)
    np.testing.assert_array_equal(np.asarray(d), a)


def test_async_copy_from_pageable_memory_names_the_fix():
    d = tessera.empty(1024, np.float32)
    s = stream.create()
    with pytest.raises(tessera.FailedPreconditionError, match="pinned_malloc"):
        memcpy_async(d, np.zeros(1024, np.float32), s)


def test_async_copies_through_pinned_memory(rng):
    src, dst = pinned_malloc(100003, np.float32), pinned_malloc(100003, np.float32)
    src[:] = rng.standard_normal(src.size, dtype=np.float32)
    dst[:] = -1
    d = tessera.empty(src.shape, np.float32)
    s = stream.create(weight=2)
    memcpy_async(d, src, s)
    memcpy_async(dst, d, s)
    s.synchronize()
    np.testing.assert_array_equal(dst, src)


def test_copy_size_and_layout_errors():
    d = tessera.empty(10, np.float32)
    with pytest.raises(tessera.InvalidArgumentError) as e:
        memcpy(d, np.zeros(11, np.float32))
    assert isinstance(e.value, ValueError) and "sizes differ" in str(e.value)
    with pytest.raises(tessera.InvalidArgumentError, match="C-contiguous"):
        memcpy(d, np.zeros(20, np.float32)[::2])
    with pytest.raises(tessera.InvalidArgumentError, match="read-only"):
        ro = np.zeros(10, np.float32)
        ro.flags.writeable = False
        memcpy(ro, d)
    # A prefix with nbytes=, and past the end of the buffer: OUT_OF_RANGE.
    memcpy(d, np.arange(20, dtype=np.float32), nbytes=16)
    np.testing.assert_array_equal(d.numpy()[:4], [0, 1, 2, 3])
    with pytest.raises(tessera.OutOfRangeError):
        memcpy(d, np.zeros(20, np.float32), nbytes=80)


def test_managed_memory_prefetch_and_advise(dev, rng):
    if "managed" not in dev.buffer_kinds:
        with pytest.raises(tessera.UnsupportedError):
            tessera.managed_malloc(16)
        pytest.skip("%s has no managed memory" % dev.name)
    a = rng.standard_normal(4096).astype(np.float32)
    m = tessera.managed_malloc(a.shape, np.float32)
    assert m.kind == "managed"
    memcpy(m, a)
    s = stream.create()
    # Each hint reports exactly what the device says it does.
    assert tessera.prefetch(m, dev, s) == dev.prefetch_hint
    assert tessera.prefetch(m, "host", s) == dev.prefetch_hint
    assert tessera.advise(m, "read_mostly") == dev.advise_hint
    assert tessera.advise(m, "preferred_location", dev) == dev.advise_hint
    s.synchronize()
    np.testing.assert_array_equal(m.numpy(), a)  # hints never change results
    with pytest.raises(tessera.InvalidArgumentError, match="unknown advice"):
        tessera.advise(m, "fastest")
    # A hint on memory that is not managed is ignored, and says so.
    assert tessera.advise(tessera.empty(16), "read_mostly") == "ignored"


def test_pinned_kind_array(dev, rng):
    if "host-pinned" not in dev.buffer_kinds:
        pytest.skip("no host-pinned buffers")
    a = rng.standard_normal(777).astype(np.float32)
    p = tessera.asarray(a, kind="host_pinned")
    assert p.kind == "host-pinned"
    np.testing.assert_array_equal(p.numpy(), a)


def test_unknown_kind():
    with pytest.raises(tessera.InvalidArgumentError, match="unknown memory kind"):
        tessera.empty(4, kind="texture")
