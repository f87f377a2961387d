"""Graph capture (backend-neutral): `with graph.capture(s) as g:` ... g.launch()."""
import gc
import weakref

import numpy as np
import pytest

import tessera
from tessera import event, graph, memcpy_async, pinned_malloc, stream

SCALE = """
func.func @scale(%a: f32, %x: memref<1024xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 16>} {
  %g = tessera_tile.group_id 0 : index
  %n = tessera_tile.lane_count 0 : index
  %l = tessera_tile.lane_id 0 : index
  %b = arith.muli %g, %n : index
  %i = arith.addi %b, %l : index
  %v = memref.load %x[%i] : memref<1024xf32>
  %r = arith.mulf %v, %a : f32
  memref.store %r, %x[%i] : memref<1024xf32>
  return
}
"""


def test_captured_copies_run_only_at_launch(dev, rng):
    if not dev.graphs:
        pytest.skip("%s has no graphs" % dev.name)
    src, dst = pinned_malloc(4096, np.float32), pinned_malloc(4096, np.float32)
    src[:] = rng.standard_normal(4096, dtype=np.float32)
    dst[:] = 0
    buf = tessera.empty(4096, np.float32)
    s = stream.create()
    with graph.capture(s) as g:
        memcpy_async(buf, src, s)
        memcpy_async(dst, buf, s)
    s.synchronize()
    assert not dst.any(), "captured work ran during the capture"
    assert g.num_nodes == 2
    g.launch()
    s.synchronize()
    np.testing.assert_array_equal(dst, src)
    src[:] = 3.0  # the graph reads the memory anew at every launch
    g.launch()
    g.launch()
    s.synchronize()
    np.testing.assert_array_equal(dst, 3.0)


def test_captured_program_launches(dev, rng):
    if not dev.graphs:
        pytest.skip("%s has no graphs" % dev.name)
    fn = tessera.compile(SCALE)
    x = rng.standard_normal(1024).astype(np.float32)
    host = pinned_malloc(1024, np.float32)
    host[:] = x
    buf = tessera.empty(1024, np.float32)
    s = stream.create()
    with graph.capture(s) as g:
        memcpy_async(buf, host, s)
        fn.enqueue(2.0, buf, stream=s)
        fn.enqueue(0.5, buf, stream=s)
        fn.enqueue(3.0, buf, stream=s)
        memcpy_async(host, buf, s)
    assert g.num_nodes == 5
    for i in range(3):
        g.launch()
    s.synchronize()
    np.testing.assert_allclose(host, x * 27.0, rtol=1e-6)


def test_an_exception_in_the_block_ends_the_capture(dev):
    if not dev.graphs:
        pytest.skip("%s has no graphs" % dev.name)
    s = stream.create()
    buf = tessera.empty(16, np.float32)
    src = pinned_malloc(16, np.float32)
    with pytest.raises(KeyError):
        with graph.capture(s) as g:
            memcpy_async(buf, src, s)
            with pytest.raises(tessera.FailedPreconditionError):
                g.launch()  # still capturing
            raise KeyError("boom")
    # The stream works eagerly again.
    src[:] = 5
    memcpy_async(buf, src, s)
    s.synchronize()
    np.testing.assert_array_equal(buf.numpy(), 5)


def test_the_graph_keeps_what_joined_streams_queued():
    # Fork/join capture: the staging memory of a copy queued on the side
    # stream must live as long as the graph, not until the side stream's
    # synchronize (the graph replayed a copy from freed memory: SIGSEGV).
    s, side = stream.create(), stream.create()
    buf = tessera.empty(1 << 16, np.float32)
    fork, join = event.create(), event.create()
    staging = pinned_malloc(1 << 16, np.float32)
    staging[:] = 3.0
    alive = weakref.ref(staging)
    with graph.capture(s) as g:
        fork.record(s)
        side.wait(fork)
        memcpy_async(buf, staging, side)
        join.record(side)
        s.wait(join)
    del staging
    side.synchronize()
    gc.collect()
    assert alive() is not None
    g.launch()
    s.synchronize()
    np.testing.assert_array_equal(buf.numpy(), np.full(1 << 16, 3.0, np.float32))


def test_a_refused_nested_capture_keeps_the_outer_captures_memory():
    s = stream.create()
    buf = tessera.empty(1 << 16, np.float32)
    staging = pinned_malloc(1 << 16, np.float32)
    staging[:] = 5.0
    alive = weakref.ref(staging)
    with graph.capture(s) as g:
        memcpy_async(buf, staging, s)
        with pytest.raises(tessera.Error, match="already capturing"):
            with graph.capture(s):
                pass
    del staging
    gc.collect()
    assert alive() is not None
    g.launch()
    s.synchronize()
    np.testing.assert_array_equal(buf.numpy(), np.full(1 << 16, 5.0, np.float32))


def test_the_graph_keeps_the_program_it_replays(dev):
    # A program compiled in a helper and dropped after the capture: every
    # launch failed ("the executable ... was destroyed").
    if not dev.graphs:
        pytest.skip("%s has no graphs" % dev.name)
    s = stream.create()
    x = tessera.asarray(-np.ones((4, 8), np.float32))
    y = tessera.empty((4, 8), np.float32)

    def build():
        fn = tessera.compile("func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
                             "  %y = tessera_graph.relu %x : tensor<4x8xf32>\n"
                             "  return %y : tensor<4x8xf32>\n}\n", device=dev)
        with graph.capture(s) as g:
            fn.enqueue(x, y, stream=s)
        return g

    g = build()
    gc.collect()
    g.launch()
    s.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.zeros((4, 8), np.float32))
