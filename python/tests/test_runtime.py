"""Devices, streams and events (backend-neutral)."""
import os

import numpy as np
import pytest

import tessera
from tessera import event, memcpy, memcpy_async, pinned_malloc, stream

from conftest import BACKEND


def test_devices_of_the_selected_backend():
    devs = tessera.devices()
    assert devs, "no device"
    assert tessera.backend() == BACKEND
    d = tessera.device()
    assert d == devs[0] and d.backend == BACKEND
    assert d.name and d.ordinal == 0 and "device" in d.buffer_kinds
    assert tessera.device("%s:0" % BACKEND) == d
    with pytest.raises(tessera.OutOfRangeError):
        tessera.device(len(devs))


def test_stream_create_with_weight(dev):
    s = stream.create(weight=3)
    assert s.weight == 3 and not s.is_default and s.device == dev
    assert stream.default().is_default
    s.synchronize()
    assert s.query() is True


def test_event_orders_two_streams(rng):
    # s1 uploads; s2 waits for the event recorded after the upload, then
    # downloads: without the wait the download could read stale memory.
    n = 1 << 20
    src, out = pinned_malloc(n, np.float32), pinned_malloc(n, np.float32)
    src[:] = rng.standard_normal(n, dtype=np.float32)
    out[:] = 0
    buf = tessera.empty(n, np.float32)
    s1, s2 = stream.create(), stream.create()
    ev = event.create()
    memcpy_async(buf, src, s1)
    ev.record(s1)
    ev.wait(s2)
    memcpy_async(out, buf, s2)
    s2.synchronize()
    np.testing.assert_array_equal(out, src)
    assert ev.query() is True


def test_elapsed_between_two_events(rng):
    n = 4 << 20
    src = pinned_malloc(n, np.uint8)
    src[:] = 7
    buf = tessera.empty(n, np.uint8)
    s = stream.create()
    start, end = event.create(), event.create()
    start.record(s)
    for _ in range(4):
        memcpy_async(buf, src, s)
    end.record(s)
    end.synchronize()
    ms = start.elapsed(end)
    assert ms >= 0.0 and ms < 60_000
    assert event.elapsed(start, end) == pytest.approx(ms)


def test_elapsed_errors_carry_the_runtime_message():
    never = event.create()
    other = event.create()
    with pytest.raises(tessera.FailedPreconditionError) as e:
        never.elapsed(other)
    assert str(e.value)  # the runtime's message, not empty
    s = stream.create()
    a, b = event.create(timing=False), event.create(timing=False)
    a.record(s)
    b.record(s)
    s.synchronize()
    with pytest.raises(tessera.FailedPreconditionError):
        a.elapsed(b)


def test_destroyed_stream_is_an_invalid_handle():
    s = stream.create()
    s.destroy()
    with pytest.raises(tessera.InvalidHandleError):
        s.synchronize()
    with pytest.raises(tessera.Error):
        stream.default().destroy()  # the default stream cannot be destroyed


def test_sync_copy_roundtrip_pageable(rng):
    a = rng.standard_normal((33, 17)).astype(np.float32)
    d = tessera.asarray(a)
    back = np.empty_like(a)
    memcpy(back, d)
    np.testing.assert_array_equal(back, a)


def test_stream_side_of_record_and_wait(rng):
    n = 1 << 18
    src, out = pinned_malloc(n, np.float32), pinned_malloc(n, np.float32)
    src[:] = rng.standard_normal(n, dtype=np.float32)
    buf = tessera.empty(n, np.float32)
    s1, s2 = stream.create(), stream.create(weight=2)
    ev = event.create()
    memcpy_async(buf, src, s1)
    s1.record(ev)
    s2.wait(ev)
    memcpy_async(out, buf, s2)
    s2.synchronize()
    np.testing.assert_array_equal(out, src)


def test_a_forked_child_makes_its_own_runtime():
    # The parent's runtime has no plugin threads in a fork()ed child (every
    # call hung); the child makes its own on first use.
    tessera.asarray(np.ones(4, np.float32))
    pid = os.fork()
    if pid == 0:
        try:
            ok = tessera.asarray(np.ones(4, np.float32)).numpy().tolist() == [1.0] * 4
            os._exit(0 if ok else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_a_daemon_thread_in_a_blocking_call_does_not_abort_the_exit():
    # Python ends a daemon thread that takes the GIL back during
    # finalization with pthread_exit; through a C++ destructor that aborted
    # the process (exit 134) at a normal exit.
    import subprocess
    import sys
    code = (
        "import threading, time, tessera\n"
        "s = tessera.stream.create()\n"
        "def work():\n"
        "    while True:\n"
        "        s.synchronize()\n"
        "threading.Thread(target=work, daemon=True).start()\n"
        "time.sleep(0.2)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=120, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _queued_copy(s):
    """Queues a copy from a temporary pinned array on `s`; returns a weak
    reference to that array, which only the stream keeps alive."""
    import weakref
    src = pinned_malloc(1 << 16, np.float32)
    src[:] = 2.0
    buf = tessera.empty(1 << 16, np.float32)
    memcpy_async(buf, src, s)
    return weakref.ref(src)


def test_an_event_synchronize_releases_what_the_work_before_it_used():
    # The stream keeps a host array of queued work alive until that work is
    # known complete; an event recorded after it says so as well as a stream
    # synchronize.
    import gc
    s = stream.create()
    kept = _queued_copy(s)
    ev = event.create()
    ev.record(s)
    later = _queued_copy(s)          # queued after the record: not covered
    gc.collect()
    assert kept() is not None
    ev.synchronize()
    gc.collect()
    assert kept() is None, "the event completed, but the stream still keeps the array of the work before it"
    assert later() is not None, "released the array of work queued after the event"
    s.synchronize()
    gc.collect()
    assert later() is None


def test_a_complete_query_releases_too():
    import gc
    import time
    s = stream.create()
    kept = _queued_copy(s)
    ev = event.create()
    s.record(ev)
    deadline = time.monotonic() + 60
    while not ev.query():
        assert time.monotonic() < deadline
        time.sleep(0.001)
    gc.collect()
    assert kept() is None
    kept = _queued_copy(s)
    while not s.query():
        assert time.monotonic() < deadline
        time.sleep(0.001)
    gc.collect()
    assert kept() is None


def test_every_wrapper_of_a_stream_shares_what_it_keeps(dev):
    # stream.default() twice is one stream: a synchronize through either
    # releases what work queued through the other used; so does the device's.
    import gc
    first = stream.default()
    kept = _queued_copy(first)
    second = stream.default()
    assert first == second and hash(first) == hash(second)
    second.synchronize()
    gc.collect()
    assert kept() is None, "a synchronize through another wrapper of the default stream released nothing"
    kept = _queued_copy(first)
    del first
    gc.collect()
    assert kept() is not None, "the default stream's work lost its keep-alive with the wrapper that queued it"
    stream.default().synchronize()
    gc.collect()
    assert kept() is None
    s = stream.create()
    kept = _queued_copy(s)
    dev.synchronize()
    gc.collect()
    assert kept() is None


def test_an_event_recorded_while_a_capture_is_open_releases_nothing():
    # Such a record may belong to the capture, and its completion says
    # nothing about the eager work before it: only a synchronize releases.
    import gc
    from tessera import graph
    s, other = stream.create(), stream.create()
    kept = _queued_copy(s)
    ev = event.create()
    with graph.capture(other):
        ev.record(s)
    ev.synchronize()
    gc.collect()
    assert kept() is not None
    s.synchronize()
    gc.collect()
    assert kept() is None


@pytest.mark.parametrize("how", ["query", "synchronize", "device", "event"])
def test_a_finalizer_that_calls_back_during_a_release(how):
    # Dropping kept arrays runs their finalizers, which may call the stream
    # API again (a pool's recycle hook): that re-entered the list being
    # released (SIGSEGV).
    import gc
    import weakref
    s = stream.create()
    ev = event.create()
    buf = tessera.empty(1024, np.float32)
    calls = {"query": s.query, "synchronize": s.synchronize,
             "device": lambda: s.device.synchronize(), "event": ev.query}
    for _ in range(3):
        h = pinned_malloc(1024, np.float32)
        weakref.finalize(h, calls[how])
        memcpy_async(buf, h, s)
        del h
    ev.record(s)
    if how == "event":
        ev.synchronize()
    else:
        calls[how]()
    gc.collect()
    s.synchronize()
