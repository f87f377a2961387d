"""tessera.compile(): programs as callables on numpy arrays (backend-neutral)."""
import os

import numpy as np
import pytest

import tessera

from conftest import example

MLP = """
func.func @mlp(%x: tensor<32x64xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
               %w2: tensor<128x48xf32>) -> tensor<32x48xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<32x64xf32>, tensor<64x128xf32> -> tensor<32x128xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<32x128xf32>, tensor<128xf32>
  %h = tessera_graph.relu %h1 : tensor<32x128xf32>
  %y = tessera_graph.matmul %h, %w2 : tensor<32x128xf32>, tensor<128x48xf32> -> tensor<32x48xf32>
  return %y : tensor<32x48xf32>
}
"""

TWO = """
func.func @two(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %r = tessera_graph.relu %x : tensor<8x16xf32>
  %s = tessera_graph.add %x, %x : tensor<8x16xf32>, tensor<8x16xf32>
  return %r, %s : tensor<8x16xf32>, tensor<8x16xf32>
}
"""


def mlp_ref(x, w1, b1, w2):
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    return h @ w2


def test_compile_text_and_call(rng):
    fn = tessera.compile(MLP)
    assert [p["name"] for p in fn.inputs] == ["arg0", "arg1", "arg2", "arg3"] or len(fn.inputs) == 4
    x, w1 = rng.standard_normal((32, 64), np.float32), rng.standard_normal((64, 128), np.float32)
    b1, w2 = rng.standard_normal(128, np.float32), rng.standard_normal((128, 48), np.float32)
    y = fn(x, w1, b1, w2)
    assert isinstance(y, np.ndarray) and y.shape == (32, 48) and y.dtype == np.float32
    np.testing.assert_allclose(y, mlp_ref(x, w1, b1, w2), rtol=1e-3, atol=1e-3)
    # Called again with other values: a new result, not a stale one.
    y2 = fn(-x, w1, b1, w2)
    np.testing.assert_allclose(y2, mlp_ref(-x, w1, b1, w2), rtol=1e-3, atol=1e-3)


# Weights every tile group reads whole: on cpu (2048 rows: 8 or 16 groups)
# each is packed once per call into the kernel's scratch buffer, by
# whichever group reaches a sliver first (K = 300: two K slices; N = 100,
# 72: remainder slivers; W2 read through a transpose).  Calls with new weights must not see the slivers
# packed from the old ones.
SHARED_WEIGHTS = """
func.func @shared(%x: tensor<2048x300xf32>, %w1: tensor<300x100xf32>, %w2t: tensor<72x100xf32>)
    -> tensor<2048x72xf32> {
  %h = tessera_graph.matmul %x, %w1 : tensor<2048x300xf32>, tensor<300x100xf32> -> tensor<2048x100xf32>
  %w2 = tessera_graph.transpose %w2t perm = [1, 0] : tensor<72x100xf32> -> tensor<100x72xf32>
  %y = tessera_graph.matmul %h, %w2 : tensor<2048x100xf32>, tensor<100x72xf32> -> tensor<2048x72xf32>
  return %y : tensor<2048x72xf32>
}
"""


def test_weights_shared_by_groups_are_packed_again_each_call(rng):
    fn = tessera.compile(SHARED_WEIGHTS)
    x = rng.standard_normal((2048, 300), np.float32)
    for _ in range(3):
        w1 = rng.standard_normal((300, 100), np.float32)
        w2t = rng.standard_normal((72, 100), np.float32)
        ref = (x.astype(np.float64) @ w1) @ w2t.T
        np.testing.assert_allclose(fn(x, w1, w2t), ref, rtol=1e-3, atol=1e-2)


def test_compile_file_and_device_argument(rng, dev):
    fn = tessera.compile(example("softmax.mlir"), device=dev)
    assert fn.devices == [dev]
    x = rng.standard_normal((512, 1024), np.float32)
    y = fn(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-3, atol=1e-6)


def test_several_results_and_arrays_in_place(rng, dev):
    fn = tessera.compile(TWO)
    x = rng.standard_normal((8, 16), np.float32)
    r, s = fn(tessera.asarray(x))  # a device Array is used in place
    np.testing.assert_array_equal(r, np.maximum(x, 0))
    np.testing.assert_array_equal(s, x + x)


MASK = """
func.func @mask(%x: tensor<8x16xf32>, %y: tensor<16xf32>, %m: tensor<8x16xi1>)
    -> (tensor<8x16xi1>, tensor<8x16xf32>) {
  %lt = tessera_graph.compare lt %x, %y : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xi1>
  %s = tessera_graph.select %m, %x, %y : tensor<8x16xi1>, tensor<8x16xf32>, tensor<16xf32>
  return %lt, %s : tensor<8x16xi1>, tensor<8x16xf32>
}
"""


def test_i1_tensors_are_numpy_bool(rng):
    # compare's i1 result comes back as np.bool_; a bool array is an i1 argument.
    fn = tessera.compile(MASK)
    x, y = rng.standard_normal((8, 16), np.float32), rng.standard_normal(16, np.float32)
    m = rng.standard_normal((8, 16)) > 0
    lt, s = fn(x, y, m)
    assert lt.dtype == np.bool_ and lt.shape == (8, 16)
    np.testing.assert_array_equal(lt, x < y)
    np.testing.assert_array_equal(s, np.where(m, x, y))


def test_tile_kernel_with_scalar_and_inout(rng):
    fn = tessera.compile(example("saxpy.mlir"))
    x = rng.standard_normal(65536, np.float32)
    y = rng.standard_normal(65536, np.float32)
    assert [p["role"] for p in fn.params] == ["scalar", "inout", "inout"]
    x_out, y_out = fn(2.5, x, y)  # a kernel returns its buffers after the run
    np.testing.assert_array_equal(x_out, x)
    np.testing.assert_allclose(y_out, 2.5 * x + y, rtol=1e-6, atol=1e-6)
    # The grid can be overridden: half the groups update half of y.
    _, half = fn(1.0, x, y, grid=(32,))
    np.testing.assert_allclose(half[:32768], x[:32768] + y[:32768], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(half[32768:], y[32768:])


SCALE_ANY_LENGTH = """
func.func @scale(%y: memref<?xf32>, %a: f32, %n: i64)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %t = tessera_tile.tile_id : index
  %lanes = tessera_tile.lane_count 0 : index
  %l = tessera_tile.lane_id 0 : index
  %base = arith.muli %t, %lanes : index
  %i = arith.addi %base, %l : index
  %ni = arith.index_cast %n : i64 to index
  %in = arith.cmpi ult, %i, %ni : index
  scf.if %in {
    %v = memref.load %y[%i] : memref<?xf32>
    %r = arith.mulf %v, %a : f32
    memref.store %r, %y[%i] : memref<?xf32>
  }
  return
}
"""


def test_a_kernel_of_buffers_of_any_length(rng):
    # memref<?xf32>: the shape shows None (not MLIR's kDynamic, -2^63), a
    # call takes any length, and any grid: the kernel bounds itself by n.
    fn = tessera.compile(SCALE_ANY_LENGTH)
    assert fn.inputs[0]["shape"] == (None,)
    assert "f32[?]" in repr(fn)
    for n in (1000, 70):
        y = rng.standard_normal(n, np.float32)
        out = fn(y, 3.0, n, grid=(-(-n // 64),))
        np.testing.assert_allclose(out, 3.0 * y, rtol=1e-6)
    with pytest.raises(tessera.InvalidArgumentError, match="shape"):
        fn(np.zeros((4, 4), np.float32), 1.0, 16)
    # One static buffer keeps the grid check: groups past the compiled grid
    # would overrun it.
    mixed = tessera.compile(SCALE_ANY_LENGTH.replace("(%y: memref<?xf32>,", "(%s: memref<64xf32>, %y: memref<?xf32>,"))
    assert [p["shape"] for p in mixed.inputs[:2]] == [(64,), (None,)]
    with pytest.raises(tessera.InvalidArgumentError, match="larger than the grid"):
        mixed(np.zeros(64, np.float32), np.zeros(1000, np.float32), 1.0, 1000, grid=(16,))


def test_save_and_load_a_compiled_program(tmp_path, rng):
    fn = tessera.compile(TWO)
    path = tmp_path / "two.tsp"
    fn.save(path)
    loaded = tessera.compile(os.fspath(path))
    x = rng.standard_normal((8, 16), np.float32)
    np.testing.assert_array_equal(loaded(x)[1], x + x)


def test_errors_carry_diagnostics(rng):
    with pytest.raises(tessera.InvalidArgumentError) as e:
        tessera.compile("func.func @bad(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %y : tensor<4xf32>\n}\n")
    assert "2:" in str(e.value)  # file:line:col of the undefined value
    with pytest.raises(tessera.Error):
        tessera.compile("/no/such/program.mlir")
    fn = tessera.compile(TWO)
    with pytest.raises(tessera.InvalidArgumentError, match="shape"):
        fn(np.zeros((4, 16), np.float32))
    with pytest.raises(tessera.InvalidArgumentError, match="takes 1 argument"):
        fn(np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32))
    with pytest.raises(tessera.InvalidArgumentError):
        fn(np.zeros((8, 16), np.complex64))


def test_a_policy_no_backend_honours_is_unsupported(rng):
    # accum = f32 is what every backend does; bf16 accumulation is refused
    # at compile time (UNSUPPORTED, naming it), never run at another precision.
    text = """
func.func @f(%a: tensor<16x8xbf16>, %b: tensor<8x16xbf16>) -> tensor<16x16xf32> {
  %c = tessera_graph.matmul %a, %b {accum = ACCUM} : tensor<16x8xbf16>, tensor<8x16xbf16> -> tensor<16x16xf32>
  return %c : tensor<16x16xf32>
}
"""
    with pytest.raises(tessera.UnsupportedError, match="accum = bf16"):
        tessera.compile(text.replace("ACCUM", "bf16"))
    fn = tessera.compile(text.replace("ACCUM", "f32"))
    assert fn is not None


def test_a_device_of_another_backend(rng):
    # device="vulkan:0" from a process whose default backend is another one:
    # that backend gets its own runtime.
    other = "vulkan" if tessera.backend() != "vulkan" else "cpu"
    try:
        devs = tessera.devices(other)
    except tessera.Error as e:
        pytest.skip("backend %s unavailable: %s" % (other, e))
    fn = tessera.compile(TWO, device="%s:0" % other)
    assert fn.devices == [devs[0]] and devs[0].backend == other
    x = rng.standard_normal((8, 16), np.float32)
    r, s = fn(x)
    np.testing.assert_array_equal(r, np.maximum(x, 0))
    np.testing.assert_array_equal(s, x + x)
    a = tessera.asarray(x, device=devs[0])
    with pytest.raises(tessera.InvalidArgumentError, match="Runtimes"):
        tessera.memcpy(tessera.empty((8, 16), np.float32), a)  # devices of two runtimes


def test_enqueue_checks_every_argument_before_launching(dev, rng):
    """Program::Run's checks (its fast path answers them with one call per
    argument; whatever it refuses takes the full path, which names the
    problem) and the launches of a valid call."""
    from tessera import stream as tstream
    fn = tessera.compile(example("saxpy.mlir"), device=dev)
    s = tstream.create(device=dev)
    x = rng.standard_normal(65536, np.float32)
    y = rng.standard_normal(65536, np.float32)
    xa, ya = tessera.asarray(x, device=dev), tessera.asarray(y, device=dev)
    fn.enqueue(2.0, xa, ya, stream=s)
    s.synchronize()
    np.testing.assert_allclose(ya.numpy(), 2.0 * x + y, rtol=1e-6, atol=1e-6)
    # A buffer smaller than the parameter: OUT_OF_RANGE naming both sizes.
    small = tessera.empty(100, np.float32, device=dev)
    with pytest.raises(tessera.OutOfRangeError, match=r"argument 2 \(arg2\) needs 256 KiB \(f32 \[65536\]\); the buffer has 400 B"):
        fn.enqueue(2.0, xa, small, stream=s)
    # A destroyed stream.
    gone = tstream.create(device=dev)
    gone.destroy()
    with pytest.raises(tessera.InvalidHandleError, match="stream 0 is not valid"):
        fn.enqueue(2.0, xa, ya, stream=gone)
    s.synchronize()
    # Nothing of the refused calls ran: y is as the valid call left it.
    np.testing.assert_allclose(ya.numpy(), 2.0 * x + y, rtol=1e-6, atol=1e-6)


def test_enqueue_of_a_graph_program_checks_before_any_launch(dev, rng):
    """A program of several kernels: a bad argument is refused before its
    first launch."""
    from tessera import stream as tstream
    fn = tessera.compile(MLP, device=dev)
    s = tstream.create(device=dev)
    x, w1 = rng.standard_normal((32, 64), np.float32), rng.standard_normal((64, 128), np.float32)
    b1, w2 = rng.standard_normal(128, np.float32), rng.standard_normal((128, 48), np.float32)
    args = [tessera.asarray(a, device=dev) for a in (x, w1, b1, w2)]
    out = tessera.empty((32, 48), np.float32, device=dev)
    fn.enqueue(*args, out, stream=s)
    s.synchronize()
    np.testing.assert_allclose(out.numpy(), mlp_ref(x, w1, b1, w2), rtol=1e-3, atol=1e-3)
    with pytest.raises(tessera.OutOfRangeError, match=r"argument 4 \(result0\) needs 6 KiB"):
        fn.enqueue(*args, tessera.empty(8, np.float32, device=dev), stream=s)


def test_bf16_bits_round_to_nearest_even():
    ones = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, -2.5, np.inf, 0.0], np.float32)
    bits = tessera.to_bf16_bits(ones)
    assert bits.dtype == np.uint16
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to the even one (1.0);
    # 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to 1 + 2^-6.
    assert list(bits) == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x7F80, 0x0000]
    back = tessera.from_bf16_bits(bits)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, np.array([1.0, 1.0, 1.015625, -2.5, np.inf, 0.0], np.float32))
    assert np.isnan(tessera.from_bf16_bits(tessera.to_bf16_bits(np.float32("nan"))))
    # float64 (and Python floats) are rounded once: 1 + 2^-8 + 2^-30 is just
    # above the tie, so it goes up (rounding to float32 first made it the
    # tie, and then 1.0).
    assert tessera.to_bf16_bits(1 + 2**-8 + 2**-30) == 0x3F81
    assert tessera.to_bf16_bits(np.float64(-(1 + 2**-8 + 2**-30))) == 0xBF81
    assert tessera.to_bf16_bits(1e300) == 0x7F80 and tessera.to_bf16_bits(-1e-300) == 0x8000
    with pytest.raises(tessera.InvalidArgumentError, match="uint16"):
        tessera.from_bf16_bits(np.zeros(2, np.float32))


def test_a_bf16_parameter_takes_floats_or_their_bits(rng):
    fn = tessera.compile("""
func.func @f(%a: tensor<16x8xbf16>, %b: tensor<8x16xbf16>) -> tensor<16x16xf32> {
  %c = tessera_graph.matmul %a, %b {accum = f32} : tensor<16x8xbf16>, tensor<8x16xbf16> -> tensor<16x16xf32>
  return %c : tensor<16x16xf32>
}""")
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 16)).astype(np.float32)
    want = tessera.from_bf16_bits(tessera.to_bf16_bits(a)) @ tessera.from_bf16_bits(tessera.to_bf16_bits(b))
    np.testing.assert_allclose(fn(a, b), want, rtol=1e-5, atol=1e-5)  # floats, rounded to bf16
    np.testing.assert_allclose(fn(tessera.to_bf16_bits(a), tessera.to_bf16_bits(b)), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(tessera.InvalidArgumentError, match="is bf16 .*bfloat16.*got int32"):
        fn(np.ones((16, 8), np.int32), b)


_SPECIAL = np.array([np.nan, np.inf, -np.inf, 88.5, 88.8, 100.0, -1e38, -100.0, 0.0, -0.0, 1.0, -2.5,
                     3e38, -3e38, 1e-40, 88.7], np.float32)


@pytest.mark.parametrize("op,ref", [
    ("relu", lambda x: np.where(x < 0, np.float32(0), x)),
    ("exp", np.exp),
    ("erf", None),
    ("silu", lambda x: x / (1 + np.exp(-x.astype(np.float64)))),
])
def test_special_values_follow_ieee(op, ref):
    # NaN stays NaN, exp overflows to inf: the cpu backend gave relu(NaN) = 0,
    # erf(NaN) = 1, exp(inf) = exp(88.8) = 2.4e38 and silu(-1e38) = -0.42.
    fn = tessera.compile("func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {\n"
                         "  %y = tessera_graph.OP %x : tensor<16xf32>\n"
                         "  return %y : tensor<16xf32>\n}\n".replace("OP", op))
    with np.errstate(all="ignore"):
        got = np.asarray(fn(_SPECIAL), np.float64)
        if ref is None:  # erf: NaN in, NaN out; +-1 at the infinities
            assert np.isnan(got[0]) and got[1] == 1.0 and got[2] == -1.0
            return
        want = np.asarray(ref(_SPECIAL), np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    finite = ~np.isnan(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-30)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_propagate_nan_from_either_side(op):
    fn = tessera.compile("func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {\n"
                         "  %r = tessera_graph.OP %x, %y : tensor<4xf32>, tensor<4xf32>\n"
                         "  return %r : tensor<4xf32>\n}\n".replace("OP", op))
    x = np.array([np.nan, 1.0, np.nan, 2.0], np.float32)
    y = np.array([1.0, np.nan, np.nan, 3.0], np.float32)
    got = fn(x, y)
    assert np.isnan(got[:3]).all() and got[3] == (3.0 if op == "max" else 2.0)


def test_pow_follows_c_on_every_backend():
    # GLSL's Pow is undefined for x < 0 and for 0^y, y <= 0: on Vulkan
    # pow(0, 0) was 0, pow(-20, -20) negative and pow(NaN, NaN) 0.
    fn = tessera.compile("func.func @f(%x: tensor<20xf32>, %y: tensor<20xf32>) -> tensor<20xf32> {\n"
                         "  %r = tessera_graph.pow %x, %y : tensor<20xf32>, tensor<20xf32>\n"
                         "  return %r : tensor<20xf32>\n}\n")
    inf = np.inf
    x = np.array([0, -20, -2, -2, -88.8, np.nan, 1, np.nan, 0, 0, 2, 3,
                  -0.0, -0.0, -inf, -inf, -inf, -1, -1, -0.5], np.float32)
    y = np.array([0, -20, 3, 2, -88.8, np.nan, np.nan, 0, 2, -1, 10, 0.5,
                  -3, 3, 0.5, -0.5, 3, inf, -inf, inf], np.float32)
    got = fn(x, y)
    # The signs C gives: pow(-0, odd) keeps the sign, pow(-inf, 3) = -inf.
    assert np.signbit(got[12]) and np.isinf(got[12]) and np.signbit(got[13]) and got[13] == 0
    assert got[16] == -inf
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-5)
