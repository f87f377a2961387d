"""dist.Mesh, ShardSpec and SPMD programs over a mesh (cpu: 2 devices)."""
import numpy as np
import pytest

import tessera
from tessera import dist
from tessera.dist import ShardSpec

from conftest import example

PARTIAL = """
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @partial(%x: tensor<16x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
                   %w: tensor<8x12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<16x12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = [], reduce = ["tp"]>}) {
  %p = tessera_graph.matmul %x, %w : tensor<16x8xf32>, tensor<8x12xf32> -> tensor<16x12xf32>
  return %p : tensor<16x12xf32>
}
"""


def test_mesh():
    mesh = dist.Mesh({"tp": 2})
    assert mesh.axis_names == ("tp",) and mesh.shape == (2,) and len(mesh.devices) == 2
    assert mesh.devices[0] != mesh.devices[1]
    assert mesh.device(1) == mesh.devices[1] and mesh.coords(1) == (1,)
    grid = dist.Mesh([("dp", 2), ("tp", 2)])
    assert grid.coords(3) == (1, 1) and grid.device(1, 0) == grid.devices[2]
    with pytest.raises(ValueError):
        dist.Mesh({"tp": 2}, devices=[tessera.device()])
    # More devices than a program runs on: a ValueError saying so, before
    # any runtime is asked for 2^64 devices.
    with pytest.raises(ValueError, match="a program runs on at most 4096"):
        dist.Mesh({"dp": 2**62, "tp": 4})


def test_tensor_parallel_mlp_over_a_mesh(rng):
    mesh = dist.Mesh({"tp": 2})
    fn = tessera.compile(example("tp_mlp.mlir"), mesh=mesh,
                         in_specs=[ShardSpec(()), ShardSpec((None, "tp")), ShardSpec(("tp",)),
                                   ShardSpec(("tp", None)), ShardSpec(())])
    assert fn.out_specs == [ShardSpec(())]
    assert [p["global_shape"] for p in fn.inputs] == [(256, 512), (512, 2048), (2048,), (2048, 512), (512,)]
    x = rng.standard_normal((256, 512), np.float32)
    w1 = (rng.standard_normal((512, 2048)) / 16).astype(np.float32)
    b1 = rng.standard_normal(2048, np.float32)
    w2 = (rng.standard_normal((2048, 512)) / 32).astype(np.float32)
    b2 = rng.standard_normal(512, np.float32)
    y = fn(x, w1, b1, w2, b2)  # global arrays in, the global result out
    ref = np.maximum(x.astype(np.float64) @ w1 + b1, 0) @ w2 + b2
    assert y.shape == (256, 512)
    np.testing.assert_allclose(y, ref, rtol=2e-3, atol=2e-3)
    assert fn.last_replica_difference == 0.0  # both devices hold the same y


def test_a_dim_over_two_axes(rng):
    # Megatron's sequence parallelism (examples/sp_mlp_global.mlir): rows
    # over dp x tp of a 2 x 2 mesh, read back as a tuple of axes.
    mesh = dist.Mesh({"dp": 2, "tp": 2})
    fn = tessera.compile(example("sp_mlp_global.mlir"), mesh=mesh,
                         in_specs=[ShardSpec((("dp", "tp"), None)), ShardSpec(()), ShardSpec(()),
                                   ShardSpec((None, "tp")), ShardSpec(("tp", None))])
    assert fn.out_specs == [ShardSpec((("dp", "tp"), None))]
    assert fn.out_specs != [ShardSpec((("tp", "dp"), None))]  # the order places the blocks
    assert fn.inputs[0]["shape"] == (128, 256) and fn.inputs[0]["global_shape"] == (512, 256)
    x = rng.standard_normal((512, 256), np.float32)
    g = rng.standard_normal(256, np.float32)
    b = rng.standard_normal(256, np.float32)
    w1 = (rng.standard_normal((256, 1024)) / 16).astype(np.float32)
    w2 = (rng.standard_normal((1024, 256)) / 32).astype(np.float32)
    y = fn(x, g, b, w1, w2)
    x64 = x.astype(np.float64)
    n = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5) * g + b
    h = n @ w1
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    np.testing.assert_allclose(y, h @ w2 + x64, rtol=2e-3, atol=2e-3)
    with pytest.raises(ValueError, match="non-empty"):
        ShardSpec((("dp", ""), None))


# A program on global tensors that declares no placement: placed at
# compile time, as jax.jit(in_shardings=..., out_shardings=...) does.
GLOBAL_MLP = """
func.func @mlp(%x: tensor<64x32xf32>, %w1: tensor<32x128xf32>, %w2: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  %h = tessera_graph.relu %h0 : tensor<64x128xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<64x128xf32>, tensor<128x32xf32> -> tensor<64x32xf32>
  %y = tessera_graph.add %y0, %x : tensor<64x32xf32>, tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
"""


def test_shardings_given_at_compile_time(rng):
    mesh = dist.Mesh({"dp": 2, "tp": 2})
    rows = ShardSpec((("dp", "tp"), None))  # sequence parallel around a Megatron MLP
    fn = tessera.compile(GLOBAL_MLP, mesh=mesh, in_shardings=[rows, ShardSpec((None, "tp")), ShardSpec(("tp", None))],
                         out_shardings=[rows])
    assert fn.in_specs == [rows, ShardSpec((None, "tp")), ShardSpec(("tp", None))] and fn.out_specs == [rows]
    assert [p["shape"] for p in fn.inputs] == [(16, 32), (32, 64), (64, 32)]  # local parts
    x = rng.standard_normal((64, 32), np.float32)
    w1 = (rng.standard_normal((32, 128)) / 8).astype(np.float32)
    w2 = (rng.standard_normal((128, 32)) / 8).astype(np.float32)
    y = fn(x, w1, w2)
    ref = np.maximum(x.astype(np.float64) @ w1, 0) @ w2 + x
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y, tessera.compile(GLOBAL_MLP)(x, w1, w2), rtol=1e-5, atol=1e-5)
    # Replicated where nothing is given: only x split over dp.
    fn = tessera.compile(GLOBAL_MLP, mesh=dist.Mesh({"dp": 2}), in_shardings=[ShardSpec(("dp",))])
    assert fn.out_specs == [ShardSpec(())]
    np.testing.assert_allclose(fn(x, w1, w2), ref, rtol=1e-4, atol=1e-4)


def test_shardings_given_at_compile_time_that_do_not_fit():
    mesh = dist.Mesh({"dp": 2, "tp": 2})
    cases = [
        (dict(in_shardings=[ShardSpec(("dp",))]), "give mesh= too"),
        (dict(mesh=mesh, in_shardings=[ShardSpec(("pp", None))]), "has no axis 'pp'"),
        (dict(mesh=mesh, in_shardings=[ShardSpec(("dp", "dp"))]), "mesh axis 'dp' twice"),
        (dict(mesh=mesh, in_shardings=[ShardSpec(("dp", None, None))]), "has rank 2; its sharding names 3 dims"),
        (dict(mesh=mesh, in_shardings=[None] * 4), "4 in_shardings and 0 out_shardings for @mlp of 3 arguments"),
        (dict(mesh=mesh, in_shardings=[ShardSpec(("dp",), reduce=("tp",))]), "holds partial sums"),
        (dict(mesh=mesh, in_shardings=["dp"]), "a dist.ShardSpec or None per argument"),
        (dict(mesh=mesh, in_shardings=[ShardSpec(("dp",))], source=PARTIAL), "declares its own placement"),
    ]
    for kwargs, message in cases:
        source = kwargs.pop("source", GLOBAL_MLP)
        with pytest.raises(tessera.InvalidArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
            tessera.compile(source, **kwargs)


def test_overlapped_collectives_give_the_same_bits(rng):
    # The stage and its all_reduce in 4 row blocks on two streams: the
    # result equals the plain compile's bit for bit.
    mesh = dist.Mesh({"tp": 2})
    args = [rng.standard_normal((256, 512), np.float32), (rng.standard_normal((512, 2048)) / 16).astype(np.float32),
            rng.standard_normal(2048, np.float32), (rng.standard_normal((2048, 512)) / 32).astype(np.float32),
            rng.standard_normal(512, np.float32)]
    plain = tessera.compile(example("tp_mlp.mlir"), mesh=mesh)(*args)
    overlapped = tessera.compile(example("tp_mlp.mlir"), mesh=mesh, overlap_chunks=4)(*args)
    assert np.array_equal(plain, overlapped)


def test_partial_sums_are_added_when_assembled(rng):
    fn = tessera.compile(PARTIAL)  # no mesh given: the first 2 devices
    assert len(fn.devices) == 2
    assert fn.out_specs == [ShardSpec((), reduce=("tp",))]
    x = rng.standard_normal((16, 16), np.float32)
    w = rng.standard_normal((16, 12), np.float32)
    np.testing.assert_allclose(fn(x, w), x.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)


def test_a_compiled_spmd_program_loads_on_its_mesh(tmp_path, rng):
    path = tmp_path / "partial.tsp"
    tessera.compile(PARTIAL).save(path)
    fn = tessera.compile(str(path))  # the file says how many devices
    assert len(fn.devices) == 2
    x = rng.standard_normal((16, 16), np.float32)
    w = rng.standard_normal((16, 12), np.float32)
    np.testing.assert_allclose(fn(x, w), x.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)


def test_specs_and_meshes_that_do_not_match():
    with pytest.raises(tessera.InvalidArgumentError, match="in_specs"):
        tessera.compile(PARTIAL, in_specs=[ShardSpec(()), ShardSpec(())])
    with pytest.raises(tessera.InvalidArgumentError, match="mesh"):
        tessera.compile(PARTIAL, mesh=dist.Mesh({"dp": 2}))
    fn = tessera.compile(PARTIAL)
    with pytest.raises(tessera.InvalidArgumentError, match="shape"):
        fn(np.zeros((16, 8), np.float32), np.zeros((16, 12), np.float32))  # local shapes


ROUNDED = """
{mesh}
func.func @rounded(%x: tensor<64x48xf32> {rows}, %a: tensor<64x8xf32>, %w: tensor<8x40xf32> {cols})
    -> (tensor<64x48xf32> {rows}, tensor<64x40xf32> {cols}) {attrs} {{
  %r = tessera_graph.cast %x {{rounding = "stochastic", seed = 21}} : tensor<64x48xf32> -> tensor<64x48xbf16>
  %r32 = tessera_graph.cast %r : tensor<64x48xbf16> -> tensor<64x48xf32>
  %c = tessera_graph.matmul %a, %w : tensor<64x8xf32>, tensor<8x40xf32> -> tensor<64x40xf32>
  %k = arith.constant dense<0.3> : tensor<64x40xf32>
  %s = tessera_graph.mul %c, %k : tensor<64x40xf32>, tensor<64x40xf32>
  %q = tessera_graph.cast %s {{rounding = "stochastic", seed = 22}} : tensor<64x40xf32> -> tensor<64x40xbf16>
  %q32 = tessera_graph.cast %q : tensor<64x40xbf16> -> tensor<64x40xf32>
  return %r32, %q32 : tensor<64x48xf32>, tensor<64x40xf32>
}}
"""


def test_stochastic_rounding_of_parts_gives_the_single_device_bits(rng):
    # Written on global tensors, split over 2 devices (rows of x, columns of
    # the matmul): each device keys its random bits by the global index, so
    # the assembled results are the one-device program's bits. The matmul
    # takes small integers (exact sums in any blocking) and the scale by 0.3
    # is rounded alike, so only the rounding's random bits could differ.
    shard = '{{tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [{}], replicate = [], reduce = []>}}'
    spmd = ROUNDED.format(mesh='tessera_graph.mesh @mesh axes = ["tp"] shape = [2]',
                          rows=shard.format('"tp", ""'), cols=shard.format('"", "tp"'),
                          attrs="attributes {tessera.global_view}")
    single = ROUNDED.format(mesh="", rows="", cols="", attrs="")
    x = rng.standard_normal((64, 48), np.float32)
    a = rng.integers(-4, 5, (64, 8)).astype(np.float32)
    w = rng.integers(-4, 5, (8, 40)).astype(np.float32)
    split = tessera.compile(spmd, mesh=dist.Mesh({"tp": 2}))
    assert split.out_specs == [ShardSpec(("tp", None)), ShardSpec((None, "tp"))]
    r2, q2 = split(x, a, w)
    r1, q1 = tessera.compile(single)(x, a, w)
    assert np.array_equal(r1, r2) and np.array_equal(q1, q2)
    # Stochastic: the rounding went both ways (not all to nearest).
    nearest = x.astype(np.float32).view(np.uint32)
    assert np.any(r1.view(np.uint32) != ((nearest + 0x7FFF + ((nearest >> 16) & 1)) & 0xFFFF0000))


ROUNDED_STAGE = """
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @rounded_mlp(%x: tensor<256x64xf32>, %w1: tensor<64x128xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
                       %w2: tensor<128x64xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> tensor<256x64xf32> attributes {tessera.global_view} {
  %h = tessera_graph.matmul %x, %w1 : tensor<256x64xf32>, tensor<64x128xf32> -> tensor<256x128xf32>
  %hb = tessera_graph.cast %h {rounding = "stochastic", seed = 4} : tensor<256x128xf32> -> tensor<256x128xbf16>
  %hf = tessera_graph.cast %hb : tensor<256x128xbf16> -> tensor<256x128xf32>
  %y = tessera_graph.matmul %hf, %w2 : tensor<256x128xf32>, tensor<128x64xf32> -> tensor<256x64xf32>
  return %y : tensor<256x64xf32>
}
"""


def test_a_stage_with_stochastic_rounding_is_not_cut_into_row_blocks(rng):
    # The stage before the all_reduce rounds stochastically: its bits depend
    # on each row's index, so --tessera-overlap-collectives leaves it whole
    # and the overlapped compile gives the plain compile's bits.
    mesh = dist.Mesh({"tp": 2})
    args = [rng.standard_normal((256, 64), np.float32), rng.standard_normal((64, 128), np.float32),
            rng.standard_normal((128, 64), np.float32)]
    plain = tessera.compile(ROUNDED_STAGE, mesh=mesh)(*args)
    overlapped = tessera.compile(ROUNDED_STAGE, mesh=mesh, overlap_chunks=4)(*args)
    assert np.array_equal(plain, overlapped)


# ---- Communicators: over this process's devices, and across processes
# from an id one process makes (docs/spmd.md).

def test_communicator_over_two_devices():
    devs = dist.Mesh({"tp": 2}).devices
    comm = dist.Communicator(devs)
    assert comm.size == 2 and comm.devices == devs
    xs = [tessera.asarray(np.arange(10, dtype=np.float32) * (k + 1), device=d) for k, d in enumerate(devs)]
    comm.all_reduce(xs)
    for x in xs:
        np.testing.assert_array_equal(x.numpy(), np.arange(10, dtype=np.float32) * 3)
    with pytest.raises(tessera.InvalidArgumentError, match="one array per local rank"):
        comm.all_reduce(xs[:1])


def _rank_main(id, rank, queue):
    # One process of test_communicator_across_processes (spawned: a fresh
    # interpreter with its own runtime).
    import numpy as np
    import tessera
    from tessera import dist
    try:
        dev = tessera.device()
        comm = dist.Communicator([dev], num_ranks=2, ranks=[rank], id=id)
        a = tessera.asarray(np.arange(1000, dtype=np.float32) * (rank + 1), device=dev)
        comm.all_reduce([a])
        g = tessera.empty((2000,), np.int32, device=dev)
        comm.all_gather([tessera.asarray(np.full(1000, rank, np.int32), device=dev)], [g])
        queue.put((rank, a.numpy(), g.numpy(), comm.size))
    except Exception as e:  # reported to the parent, which fails the test
        queue.put((rank, repr(e), None, None))


def test_communicator_across_processes():
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    id = dist.collective_id()
    assert isinstance(id, bytes) and len(id) == 128
    queue = ctx.Queue()
    procs = [ctx.Process(target=_rank_main, args=(id, r, queue)) for r in range(2)]
    for p in procs:
        p.start()
    results = sorted(queue.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    for rank, reduced, gathered, size in results:
        assert gathered is not None, reduced  # the child's error
        assert size == 2
        np.testing.assert_array_equal(reduced, np.arange(1000, dtype=np.float32) * 3)
        np.testing.assert_array_equal(gathered, np.repeat(np.arange(2, dtype=np.int32), 1000))


def test_communicator_bad_ids():
    dev = tessera.device()
    with pytest.raises(tessera.InvalidArgumentError, match="the id has 5 bytes"):
        dist.Communicator([dev], num_ranks=2, ranks=[0], id=b"x" * 5)
    with pytest.raises(tessera.InvalidArgumentError, match="not made by the cpu plugin"):
        dist.Communicator([dev], num_ranks=2, ranks=[0], id=bytes(128))
    with pytest.raises(tessera.InvalidArgumentError, match="needs num_ranks and ranks"):
        dist.Communicator([dev], id=dist.collective_id())


def test_ctrl_c_interrupts_a_join_across_processes(monkeypatch):
    """A communicator across processes whose peers never come waits for
    them (up to process_timeout_s); Ctrl-C must end the wait at once, as it
    ends any other blocking call in Python (it came only after the timeout,
    30 s here, so a pass within the ctest timeout needs the interrupt)."""
    import os
    import signal
    import threading

    monkeypatch.setenv("TESSERA_CPU_PROCESS_TIMEOUT_S", "30")
    rt = tessera.init(backend="cpu")
    try:
        dev = rt.devices[0]
        cid = dist.collective_id(dev)
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            dist.Communicator([dev], num_ranks=2, ranks=[0], id=cid)
        timer.join()
    finally:
        tessera.init()
