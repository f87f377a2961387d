"""Careless and hostile arguments from Python: each is refused with a
tessera error (or the Python exception the protocol names) saying what was
wrong, and nothing is read or written past an array.  Each case crashed the
interpreter, gave a wrong result or raised an unhelpful error before."""
import math
import warnings

import numpy as np
import pytest

import tessera
from tessera import dist, event, graph, memcpy, memcpy_async, pinned_malloc, stream

from conftest import example


# ------------------------------------------------------------------ memory
def test_nbytes_past_a_numpy_destination_is_refused(dev):
    d = tessera.empty(1 << 16, np.float32)
    small = np.zeros(4, np.float32)
    with pytest.raises(tessera.OutOfRangeError, match="past the end of the destination"):
        memcpy(small, d, nbytes=d.nbytes)  # wrote past the numpy array (SIGSEGV)
    assert (small == 0).all()


def test_nbytes_past_a_numpy_source_is_refused(dev):
    d = tessera.empty(1024, np.uint8)
    with pytest.raises(tessera.OutOfRangeError, match="past the end of the source"):
        memcpy(d, np.arange(4, dtype=np.uint8), nbytes=1024)  # read heap bytes


def test_nbytes_past_imported_host_memory_is_refused(dev):
    imported = tessera.from_dlpack(np.zeros(4, np.float32))
    d = tessera.empty(1 << 20, np.float32)
    with pytest.raises(tessera.OutOfRangeError):
        memcpy(imported, d, nbytes=4 << 20)


@pytest.mark.parametrize("nbytes", [-1, 2.0, "4", True])
def test_nbytes_must_be_a_count(dev, nbytes):
    d = tessera.empty(4, np.float32)
    with pytest.raises(tessera.InvalidArgumentError, match="nbytes"):
        memcpy(d, np.zeros(4, np.float32), nbytes=nbytes)


def test_nbytes_takes_numpy_ints(dev):
    d = tessera.asarray(np.zeros(4, np.float32))
    memcpy(d, np.arange(4, dtype=np.float32), nbytes=np.int64(8))
    assert d.numpy().tolist() == [0.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0)])
def test_empty_arrays_copy_nothing(dev, shape):
    a = tessera.asarray(np.zeros(shape, np.float32))
    assert a.shape == shape and a.numpy().shape == shape


@pytest.mark.parametrize("shape", [2.5, (3.9, 2), (2, True)])
def test_shapes_are_integers(dev, shape):
    # numpy's rule: 2.5 was silently 2.
    with pytest.raises(TypeError, match="integers"):
        tessera.empty(shape)
    with pytest.raises(TypeError, match="integers"):
        tessera.pinned_malloc(shape)


def test_counts_are_integers():
    with pytest.raises(TypeError, match="integer"):
        tessera.dist.Mesh({"tp": 1.9})
    for devices in (2.5, -1, 0, True):
        with pytest.raises(ValueError, match="devices="):
            tessera.init(devices=devices)


def test_equal_shardspecs_hash_alike():
    a, b = tessera.dist.ShardSpec(dims=(None,)), tessera.dist.ShardSpec(dims=())
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1


def test_nbytes_prefix_still_copies(dev):
    d = tessera.asarray(np.zeros(4, np.float32))
    memcpy(d, np.arange(4, dtype=np.float32), nbytes=8)
    assert d.numpy().tolist() == [0.0, 1.0, 0.0, 0.0]


def test_object_arrays_are_refused(dev):
    o = np.empty(4, dtype=object)
    o[:] = "x"
    src = tessera.asarray(np.full(4, 1.5))
    with pytest.raises(tessera.InvalidArgumentError, match="holds Python objects"):
        memcpy(o, src)  # wrote float bits over object pointers
    assert list(o) == ["x"] * 4
    with pytest.raises(tessera.InvalidArgumentError, match="holds Python objects"):
        tessera.asarray(np.array([object(), "abc", 3.5], dtype=object))
    with pytest.raises(tessera.InvalidArgumentError, match="holds Python objects"):
        tessera.empty(4, object)
    with pytest.raises(tessera.InvalidArgumentError, match="holds Python objects"):
        pinned_malloc(4, object)


def test_big_endian_input_is_converted_and_never_exported_as_native(dev):
    a = tessera.asarray(np.arange(4, dtype=">f4"))
    assert np.from_dlpack(a).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(tessera.InvalidArgumentError, match="byte order"):
        tessera.empty(4, ">f4")
    with pytest.raises(tessera.InvalidArgumentError, match="byte order"):
        memcpy(np.zeros(4, ">f4"), a)


@pytest.mark.parametrize("shape", [(2**62 + 1,), (2**32, 2**32)])
def test_shapes_whose_bytes_overflow_are_refused(dev, shape):
    with pytest.raises(tessera.InvalidArgumentError, match="2\\^62|overflows"):
        tessera.empty(shape, np.uint8 if len(shape) == 2 else np.float32)


def test_a_0d_array_stays_0d(dev):
    a = tessera.asarray(np.float32(3))
    assert a.shape == ()
    assert a.numpy() == np.float32(3)


def test_dlpack_stream_out_of_range_is_a_buffer_error(dev):
    a = tessera.asarray(np.zeros(4, np.float32))
    with pytest.raises(BufferError):  # was a bare "Unable to cast" RuntimeError
        a.__dlpack__(stream=2**70)


# ----------------------------------------------------------------- programs
@pytest.fixture
def saxpy():
    return tessera.compile(example("saxpy.mlir"))


def test_enqueue_refuses_an_array_of_another_dtype(saxpy):
    s = stream.create()
    x = tessera.asarray(np.ones(65536, np.float64)[:32768])  # the same bytes as 65536 floats
    y = tessera.asarray(np.zeros(65536, np.int32))
    with pytest.raises(tessera.InvalidArgumentError, match="holds f32"):
        saxpy.enqueue(2.0, tessera.asarray(np.ones(65536, np.float32)), y, stream=s)
    with pytest.raises(tessera.InvalidArgumentError, match="holds f32"):
        saxpy.enqueue(2.0, x, tessera.asarray(np.zeros(65536, np.float32)), stream=s)


def test_enqueue_refuses_an_array_of_another_shape(saxpy):
    s = stream.create()
    x = tessera.asarray(np.ones((256, 256), np.float32))
    y = tessera.asarray(np.zeros(65536, np.float32))
    with pytest.raises(tessera.InvalidArgumentError, match="shape"):
        saxpy.enqueue(2.0, x, y, stream=s)


@pytest.mark.parametrize("grid", [(0,), (64, 0), (-1,), (2**32,), (2.5,), "ab", (1, 1, 1, 1), (True,)])
def test_grid_dimensions_are_counts_of_groups(saxpy, grid):
    x = np.ones(65536, np.float32)
    with pytest.raises(tessera.InvalidArgumentError, match="grid"):
        saxpy(1.0, x, np.zeros(65536, np.float32), grid=grid)  # (0,) ran the whole default grid


@pytest.mark.parametrize("grid", [(128,), (64, 2), (64, 1, 2)])
def test_a_grid_past_the_kernels_is_refused_on_every_backend(saxpy, grid):
    # saxpy is compiled for 64 groups over 65536 floats: more groups would
    # access its buffers out of bounds (the cpu plugin refused, vulkan ran
    # and dropped the writes).  Fewer run part of the work.
    x = np.ones(65536, np.float32)
    with pytest.raises(tessera.InvalidArgumentError, match="larger than the grid"):
        saxpy(2.0, x, np.zeros(65536, np.float32), grid=grid)
    _, y = saxpy(2.0, x, np.zeros(65536, np.float32), grid=(32,))
    assert (y[:32768] == 2).all() and (y[32768:] == 0).all()


@pytest.mark.parametrize("scalar", ["2.0", np.array([1.0, 2.0]), None])
def test_a_scalar_of_the_wrong_kind_names_the_parameter(saxpy, scalar):
    x = np.ones(65536, np.float32)
    with pytest.raises(tessera.InvalidArgumentError, match="scalar parameter"):
        saxpy(scalar, x, np.zeros(65536, np.float32))


@pytest.mark.parametrize("chunks", [-1, 1.5, True])
def test_overlap_chunks_is_a_count(chunks):
    with pytest.raises(tessera.InvalidArgumentError, match="overlap_chunks"):
        tessera.compile(example("saxpy.mlir"), overlap_chunks=chunks)


def test_a_nul_in_a_path_is_refused():
    with pytest.raises(tessera.InvalidArgumentError, match="NUL"):
        tessera.compile("exa\x00mples/saxpy.mlir")


# ------------------------------------------------------ streams and events
@pytest.mark.parametrize("weight", [-1, 0, 2**32, 1.5, "2", True])
def test_stream_weight_is_a_positive_count(dev, weight):
    with pytest.raises(tessera.InvalidArgumentError, match="weight"):
        stream.create(weight=weight)


def test_stream_weight_takes_numpy_ints(dev):
    assert stream.create(weight=np.int64(3)).weight == 3


def test_elapsed_in_the_other_order_is_negative(dev):
    s = stream.create()
    a, b = event.create(), event.create()
    a.record(s)
    memcpy_async(tessera.empty(1 << 20, np.uint8), pinned_malloc(1 << 20, np.uint8), s)
    b.record(s)
    s.synchronize()
    forward, backward = a.elapsed(b), b.elapsed(a)  # backward raised InternalError, "the plugin is broken"
    assert forward >= 0 and backward == -forward


def test_a_bool_is_not_a_device_ordinal():
    with pytest.raises(TypeError):
        tessera.device(True)


# ------------------------------------------------------------------- graphs
def test_a_graph_launches_only_on_its_device():
    rt = tessera.init(backend="cpu", devices=2)
    try:
        d0, d1 = rt.devices[0], rt.devices[1]
        src = pinned_malloc(1024, np.uint8)
        s0, s1 = stream.create(device=d0), stream.create(device=d1)
        buf = tessera.empty(1024, np.uint8, device=d0)
        with graph.capture(s0) as g:
            memcpy_async(buf, src, s0)
        with pytest.raises(tessera.InvalidArgumentError, match="captured on"):
            g.launch(s1)
        g.launch(s0)
        s0.synchronize()
    finally:
        tessera.init()


# --------------------------------------------------------------------- dist
def test_mesh_coordinates_are_bounded():
    m = dist.Mesh({"dp": 2, "tp": 2})
    assert m.coords(3) == (1, 1) and m.device(1, 0) is m.devices[2]
    for bad in (7, -1):
        with pytest.raises(IndexError):
            m.coords(bad)
    with pytest.raises(IndexError):
        m.device(-1, 0)
    with pytest.raises(ValueError):
        m.device(1)
    with pytest.raises(ValueError):
        m.device(0, 0, 3)


def test_shardspec_dims_is_a_sequence_not_a_string():
    with pytest.raises(ValueError, match="dims=\\('tp',\\)"):
        dist.ShardSpec(dims="tp")
    assert dist.ShardSpec(dims=("tp",)).dims == ("tp",)


def test_a_mesh_that_replaces_the_runtime_says_so():
    tessera.init(backend="cpu", devices=1)
    try:
        with pytest.warns(RuntimeWarning, match="replaces it as the default"):
            dist.Mesh({"tp": 2})
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            dist.Mesh({"tp": 2})  # enough devices now: nothing replaced
    finally:
        tessera.init()


def test_broadcast_root_is_a_rank():
    devs = dist.Mesh({"tp": 2}).devices
    comm = dist.Communicator(devs)
    arrays = [tessera.asarray(np.ones(4, np.float32), device=d) for d in devs]
    for root in (-1, 2, 1.0):
        with pytest.raises(tessera.InvalidArgumentError, match="root"):
            comm.broadcast(arrays, root=root)


# ----------------------------------------------------------------- autotune
@pytest.mark.parametrize("kwargs", [
    {"params": {"tile_m": "16"}},
    {"params": {"tile_m": 16}},
    {"seconds": math.nan},
    {"seconds": -1},
    {"min_gain": math.nan},
    {"min_gain": -0.5},
    {"budget": 2**40},
    # warmup + repeats overflowed an int: no run timed, a crash
    {"repeats": 2**31 - 1},
    {"warmup": 2**31 - 1, "repeats": 1},
])
def test_autotune_arguments_are_checked(kwargs):
    with pytest.raises(tessera.InvalidArgumentError):
        tessera.autotune.search(example("mlp.mlir"), **kwargs)


def _wrong_types(dev):
    a = tessera.empty(16, np.float32)
    host = pinned_malloc(16, np.float32)
    s, ev = stream.create(), event.create()
    return {
        "memcpy_async: stream must be a tessera.Stream, not str": lambda: memcpy_async(a, host, "s"),
        "memcpy_async: stream must be a tessera.Stream, not NoneType": lambda: memcpy_async(a, host, None),
        "Event.record: stream must be a tessera.Stream, not int": lambda: ev.record(5),
        "Event.wait: stream must be a tessera.Stream, not NoneType": lambda: ev.wait(None),
        "Event.elapsed: end must be a tessera.Event, not int": lambda: ev.elapsed(3),
        "Stream.record: event must be a tessera.Event, not str": lambda: s.record("e"),
        "Stream.wait: event must be a tessera.Event, not Stream": lambda: s.wait(s),
        "prefetch: array must be a tessera.Array, not ndarray": lambda: tessera.prefetch(host, "host", s),
        "prefetch: stream must be a tessera.Stream, not int": lambda: tessera.prefetch(a, "host", 7),
        "advise: array must be a tessera.Array, not list": lambda: tessera.advise([1], "read_mostly"),
        "graph.capture\\(stream\\): stream must be a tessera.Stream, not int": lambda: graph.capture(5).__enter__(),
        "Mesh\\(axes\\): axes is a dict": lambda: dist.Mesh("tp"),
        "from_dlpack takes a DLPack producer": lambda: tessera.from_dlpack(5),
        "backend=5: a backend is a string": lambda: tessera.init(backend=5),
    }


def test_arguments_of_the_wrong_type_say_which_and_what_they_take(dev):
    # Each raises TypeError naming the argument and the type it takes, in
    # Tessera's words, not pybind11's "incompatible function arguments".
    for message, call in _wrong_types(dev).items():
        with pytest.raises(TypeError, match=message):
            call()


def test_a_device_ordinal_that_is_no_number_says_so():
    with pytest.raises(ValueError, match="the ordinal after ':' is a whole number"):
        tessera.device("%s:x" % tessera.backend())


def test_a_grid_on_a_graph_ir_function_is_refused():
    # Its kernels' grids are the compiler's: grid=(1,) computed 64 of
    # softmax's 512 rows and returned the rest uninitialized.
    fn = tessera.compile(example("softmax.mlir"))
    x = np.zeros((512, 1024), np.float32)
    with pytest.raises(tessera.InvalidArgumentError, match="softmax is a Graph IR function"):
        fn(x, grid=(1,))


@pytest.mark.parametrize("value,why", [
    (np.float32(3.7), "not an integer"), (3.0, "not an integer"), (True, "not an integer"),
    (2**31, "out of the range of i32"), (np.array([3]), "is an array"), ("3", "not an integer")])
def test_an_integer_scalar_takes_integers_in_range(value, why):
    fn = tessera.compile("""
func.func @fill(%v: i32, %out: memref<64xi32>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 1>} {
  %l = tessera_tile.lane_id 0 : index
  %vv = vector.broadcast %v : i32 to vector<1xi32>
  tessera_tile.store %vv, %out[%l] : vector<1xi32>, memref<64xi32>
  return
}""")
    with pytest.raises(tessera.InvalidArgumentError, match=why):
        fn(value, np.zeros(64, np.int32))
    out = fn(np.int64(-7), np.zeros(64, np.int32))
    assert (np.asarray(out) == -7).all()


@pytest.mark.parametrize("value,why", [(1e300, "would become inf"), (2**200, "would become inf"),
                                       (True, "not a real number"), ("1", "not a real number"),
                                       (1 + 0j, "not a real number"), (np.ones(2), "is an array")])
def test_a_float_scalar_takes_real_numbers_it_can_hold(saxpy, value, why):
    x = np.ones(65536, np.float32)
    with pytest.raises(tessera.InvalidArgumentError, match=why):
        saxpy(value, x, np.zeros(65536, np.float32))
    _, y = saxpy(np.array(2.0), x, np.zeros(65536, np.float32))  # a 0-d array is one number
    assert (y == 2.0).all()
    from fractions import Fraction
    _, y = saxpy(Fraction(1, 2), x, np.zeros(65536, np.float32))  # any real number
    assert (y == 0.5).all()


def test_a_destroyed_graph_has_no_node_count(dev):
    s = stream.create()
    a, h = tessera.empty(16, np.float32), pinned_malloc(16, np.float32)
    with graph.capture(s) as g:
        memcpy_async(a, h, s)
    assert g.num_nodes == 1
    g.graph.destroy()
    with pytest.raises(tessera.InvalidHandleError, match="destroyed"):
        g.graph.num_nodes


def test_communicator_arguments_are_checked(dev):
    with pytest.raises(tessera.InvalidArgumentError, match="give its id too"):
        dist.Communicator([dev], num_ranks=2, ranks=[0])  # made a 1-rank communicator
    with pytest.raises(TypeError, match="the bytes dist.collective_id"):
        dist.Communicator([dev], num_ranks=2, ranks=[0], id=5)
    comm = dist.Communicator([dev])
    a = tessera.asarray(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="send takes tessera.Arrays"):
        comm.all_reduce([np.ones(4, np.float32)])
    with pytest.raises(tessera.InvalidArgumentError, match="op=5"):
        comm.all_reduce([a], op=5)
    with pytest.raises(TypeError, match="deterministic is True or False"):
        comm.all_reduce([a], deterministic="no")
    comm.all_reduce(a)  # one local rank: the Array itself
    np.testing.assert_array_equal(a.numpy(), np.ones(4, np.float32))


def test_more_arguments_of_the_wrong_type(dev, saxpy, tmp_path):
    import os
    h = pinned_malloc(16, np.float32)
    a = tessera.empty(16, np.float32)
    s = stream.create()
    with graph.capture(s) as g:
        memcpy_async(a, h, s)
    cases = [
        (TypeError, "function must be a str", lambda: tessera.compile(example("mlp.mlir"), function=5)),
        (TypeError, "schedule must be a str", lambda: tessera.compile(example("mlp.mlir"), schedule=5)),
        (TypeError, "mesh must be a tessera.dist.Mesh", lambda: tessera.compile(example("mlp.mlir"), mesh={"tp": 2})),
        (tessera.InvalidArgumentError, "not valid Unicode", lambda: tessera.compile("func.func @f() {}\ud800")),
        (TypeError, "enqueue: stream must be a tessera.Stream", lambda: saxpy.enqueue(1.0, a, a, stream=5)),
        (tessera.InvalidArgumentError, "NUL", lambda: saxpy.save(str(tmp_path / "x.tsp") + "\0.evil")),
        (TypeError, "launch: stream must be a tessera.Stream", lambda: g.launch(5)),
        (TypeError, "start must be a tessera.Event", lambda: event.elapsed(None, None)),
        (TypeError, "timing is True or False", lambda: event.create(timing="no")),
        (ValueError, "non-empty", lambda: dist.Mesh({"": 2})),
        (TypeError, "non-empty str", lambda: dist.Mesh({None: 2})),
        (TypeError, "non-empty str", lambda: dist.ShardSpec(dims=[("tp", None)])),
        (TypeError, "each entry is None", lambda: dist.ShardSpec(dims=[b"tp"])),
        (TypeError, "non-empty str", lambda: dist.ShardSpec(reduce=[["a"]])),
        (TypeError, "a sequence", lambda: dist.ShardSpec(reduce=5)),
        (TypeError, "kind must be", lambda: tessera.empty(4, kind=None)),
        (tessera.InvalidArgumentError, "fits in 64 bits", lambda: tessera.empty(2**63)),
        (tessera.InvalidArgumentError, "fits in 64 bits", lambda: pinned_malloc(2**63)),
        (TypeError, "advice is a str", lambda: tessera.advise(a, 5)),
        (ValueError, "1 to 4096", lambda: tessera.init(devices=2**63)),
        (TypeError, "max_version", lambda: a.__dlpack__(max_version=1)),
    ]
    for exc, message, call in cases:
        with pytest.raises(exc, match=message):
            call()
    # A path that is no valid UTF-8 reaches the file system as its bytes.
    bad = os.path.join(str(tmp_path), os.fsdecode(b"\xff.mlir"))
    with pytest.raises(tessera.NotFoundError, match="cannot open"):
        tessera.compile(bad)
    assert dist.ShardSpec(dims=[[]]) == dist.ShardSpec(dims=[None])
    # numpy ints are device ordinals too.
    assert tessera.empty(4, device=np.int64(0)).device == dev


def test_dlpack_takes_the_array_api_keywords(dev):
    a = tessera.asarray(np.arange(4, dtype=np.float32), kind="host_pinned") \
        if "host_pinned" in dev.buffer_kinds else None
    if a is None or not a.host_visible:
        pytest.skip("no host-visible memory kind")
    v = np.from_dlpack(a)  # numpy passes none of them; in place
    assert v.ctypes.data == a._host_address()
    copied = np.from_dlpack(_Exporter(a, copy=True))
    assert copied.ctypes.data != a._host_address() and (copied == np.arange(4)).all()
    assert (np.from_dlpack(_Exporter(a, max_version=(1, 0))) == np.arange(4)).all()
    with pytest.raises(BufferError, match="not \\(2, 0\\)"):
        a.__dlpack__(dl_device=(2, 0))


class _Exporter:
    """Passes extra __dlpack__ keywords, as a newer consumer would."""

    def __init__(self, a, **kwargs):
        self.a, self.kwargs = a, kwargs

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__(stream=stream, **self.kwargs)


def test_an_old_runtimes_program_says_so_on_a_new_runtimes_stream(saxpy):
    # The two devices have the same name: the message says "another Runtime".
    tessera.init(backend=tessera.backend())
    s = stream.create()
    x = tessera.empty(65536, np.float32)
    with pytest.raises(tessera.InvalidArgumentError, match="of another Runtime"):
        saxpy.enqueue(1.0, x, x, stream=s)


def test_shapes_numpy_cannot_hold_and_numpy_to_numpy_copies_say_so(dev):
    with pytest.raises(tessera.InvalidArgumentError, match="at most 32"):
        tessera.empty([1] * 33)
    with pytest.raises(tessera.InvalidArgumentError, match="np.copyto"):
        memcpy(np.zeros(4, np.float32), np.ones(4, np.float32))


def test_copies_between_element_types_are_refused(dev):
    # A copy moves bytes: int32 ones became 1e-45 as float32, silently.
    d = tessera.empty(4, np.float32)
    with pytest.raises(tessera.InvalidArgumentError, match="holds float32 and the source int32"):
        memcpy(d, np.ones(4, np.int32))
    out = np.zeros(4, np.int32)
    with pytest.raises(tessera.InvalidArgumentError, match="reinterpret"):
        memcpy(out, tessera.asarray(np.ones(4, np.float32)))
    s = stream.create()
    with pytest.raises(tessera.InvalidArgumentError, match="memcpy_async"):
        memcpy_async(d, pinned_malloc(4, np.int32), s)
    memcpy(d, np.ones(4, np.int32), nbytes=16)  # raw bytes, asked for
    assert d.numpy().view(np.int32).tolist() == [1] * 4


def test_arguments_that_do_not_fit_their_parameter_are_refused():
    # Array arguments were cast with wrapping: 1000 as an i8 became -24,
    # 1e300 as an f32 became inf (scalar arguments refused both).
    k = tessera.compile("func.func @k(%x: tensor<4xi8>) -> tensor<4xi32> {\n"
                        "  %y = tessera_graph.cast %x : tensor<4xi8> -> tensor<4xi32>\n"
                        "  return %y : tensor<4xi32>\n}\n")
    with pytest.raises(tessera.InvalidArgumentError, match="holds -128..127; it has the value 1000"):
        k(np.array([1000, 2, 3, 4]))
    with pytest.raises(tessera.InvalidArgumentError, match="value 200"):
        k(np.array([200, 1, 1, 1], np.uint8))
    assert k([1, -2, 127, -128]).tolist() == [1, -2, 127, -128]  # values that fit
    r = tessera.compile("func.func @r(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                        "  %y = tessera_graph.relu %x : tensor<4xf32>\n"
                        "  return %y : tensor<4xf32>\n}\n")
    with pytest.raises(tessera.InvalidArgumentError, match="would become inf"):
        r(np.array([1e300, 1.0, 2.0, 3.0]))
    h = tessera.compile("func.func @h(%x: tensor<4xf16>) -> tensor<4xf16> {\n"
                        "  %y = tessera_graph.relu %x : tensor<4xf16>\n"
                        "  return %y : tensor<4xf16>\n}\n")
    with pytest.raises(tessera.InvalidArgumentError, match="would become inf"):
        h(np.array([70000, 1, 2, 3]))  # an integer beyond f16's range
    assert r(np.array([np.inf, -1.0, 0.5, 2.0])).tolist() == [np.inf, 0.0, 0.5, 2.0]  # inf stays inf


@pytest.mark.parametrize("shape", ["9223372036854775807", "4294967296x4294967296"])
def test_shapes_beyond_any_memory_are_refused_saying_so(shape):
    # 2^32 x 2^32 elements wrapped to 0 ("has no elements"); 2^63 - 1 was
    # "the program image is corrupt".
    t = "tensor<%sxf32>" % shape
    text = "func.func @f(%%x: %s) -> %s {\n  %%y = tessera_graph.relu %%x : %s\n  return %%y : %s\n}\n" % (t, t, t, t)
    with pytest.raises(tessera.InvalidArgumentError, match="no device addresses that much memory"):
        tessera.compile(text)


def test_small_mistakes_are_named():
    # bool("no") is True: a non-bool non_blocking made a non-blocking stream.
    with pytest.raises(tessera.InvalidArgumentError, match="give True or False"):
        stream.create(non_blocking="no")
    assert stream.create(non_blocking=np.bool_(True)) is not None  # numpy's bool is a bool
    # An empty source was ": cannot open".
    with pytest.raises(tessera.InvalidArgumentError, match="the source is empty"):
        tessera.compile("")


def test_function_names_longer_than_a_kernel_name_are_refused():
    # Cut at 1024 bytes by the core, then "the cpu compiler returned no kernel".
    name = "f" + "a" * 1100
    text = ("func.func @%s(%%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %%y = tessera_graph.relu %%x : tensor<4xf32>\n  return %%y : tensor<4xf32>\n}\n" % name)
    with pytest.raises(tessera.InvalidArgumentError, match="C strings of at most 1024 bytes"):
        tessera.compile(text)
