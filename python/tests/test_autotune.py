"""tessera.autotune: the search, its persistent cache, and the cache's
defences (a corrupted or foreign entry is ignored with a warning).  No test
asserts a time: only that times were measured and choices were kept."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tessera

from conftest import example

GEMM = """
func.func @gemm(%a: tensor<64x96xf32>, %b: tensor<96x80xf32>) -> tensor<64x80xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<64x96xf32>, tensor<96x80xf32> -> tensor<64x80xf32>
  return %c : tensor<64x80xf32>
}
"""

OTHER = GEMM.replace("@gemm", "@gemm2")

SPACE = {"tile_m": [16, 32], "micro_m": [4, 6]}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path))
    return tmp_path


def fnv1a(data):
    h = 14695981039346656037
    for c in data:
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def rewrite(path, edit):
    """Edits an entry's fields and signs it again (a well-formed entry)."""
    lines = open(path).read().splitlines()
    body = [edit(l) for l in lines if not l.startswith("checksum ")]
    text = "".join(l + "\n" for l in body)
    open(path, "w").write(text + "checksum " + fnv1a(text.encode()) + "\n")


def test_search_measures_and_caches(cache):
    r = tessera.autotune.search(GEMM, params=SPACE, objective="runtime", budget=3, repeats=3)
    assert not r.from_cache
    assert 1 <= len(r.trials) <= 3
    assert r.trials[0][0] == ""  # the target's own schedule first
    assert all(ms > 0 for _, ms, err in r.trials if not err)
    assert r.time_ms > 0 and r.default_ms > 0 and r.time_ms <= r.default_ms
    assert r.schedule in [t[0] for t in r.trials]
    for k, v in r.params.items():
        assert k in SPACE and v in SPACE[k]
    assert os.path.isfile(r.cache_file) and r.cache_file.startswith(str(cache))
    text = open(r.cache_file).read()
    assert text.startswith("tessera-autotune 1\n") and "\nchecksum " in text
    assert "shapes " in text and "64x96" in text

    # The second search is answered by the cache, measuring nothing.
    again = tessera.autotune.search(GEMM, params=SPACE, budget=3)
    assert again.from_cache and again.schedule == r.schedule and again.trials == []
    assert again.lookup_ms >= 0
    looked = tessera.autotune.lookup(GEMM)
    assert looked is not None and looked.schedule == r.schedule
    # Another program has no entry; cache=False measures again.
    assert tessera.autotune.lookup(OTHER) is None
    fresh = tessera.autotune.search(GEMM, params=SPACE, budget=2, cache=False)
    assert not fresh.from_cache and len(fresh.trials) == 2


def test_compile_uses_the_tuned_schedule(cache, rng):
    r = tessera.autotune.search(GEMM, params={"tile_m": [16]}, budget=2, repeats=1)
    assert r.cache_file
    a = rng.standard_normal((64, 96), np.float32)
    b = rng.standard_normal((96, 80), np.float32)
    np.testing.assert_allclose(tessera.compile(GEMM)(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    # TESSERA_LOG=debug says so (the level is read once per process).
    code = ("import tessera, sys; tessera.compile(sys.argv[1])")
    env = dict(os.environ, TESSERA_LOG="debug", TESSERA_CACHE_DIR=str(cache))
    p = subprocess.run([sys.executable, "-c", code, GEMM], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "autotune cache hit" in p.stderr and "looked up in" in p.stderr, p.stderr
    # TESSERA_AUTOTUNE=off: no reuse.
    env["TESSERA_AUTOTUNE"] = "off"
    p = subprocess.run([sys.executable, "-c", code, GEMM], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "autotune cache hit" not in p.stderr


def test_aliases_and_bad_arguments(cache):
    r = tessera.autotune.search(GEMM, params={"BM": [16]}, budget={"trials": 2, "seconds": 60}, repeats=1)
    assert r.trials[1][0] == "tile-m=16"
    assert r.params in ({}, {"BM": 16})
    with pytest.raises(tessera.InvalidArgumentError):
        tessera.autotune.search(GEMM, objective="memory")
    with pytest.raises(tessera.InvalidArgumentError):
        tessera.autotune.search(GEMM, params={"tile_m": []})
    with pytest.raises(tessera.InvalidArgumentError):
        tessera.autotune.search(GEMM, budget={"trails": 3})


def test_random_strategy_without_confirmation(cache):
    r = tessera.autotune.search(GEMM, params=SPACE, budget=5, repeats=1, strategy="random", confirm=0,
                                min_gain=0)
    assert len(r.trials) == 5 and r.trials[0][0] == ""
    points = {"tile-m=%d micro-m=%d" % (m, u) for m in SPACE["tile_m"] for u in SPACE["micro_m"]}
    assert {t[0] for t in r.trials[1:]} == points  # every point once
    ok = [(ms, s) for s, ms, err in r.trials if not err]
    # No confirmation and no margin: the fastest trial wins.
    assert r.time_ms == min(ok)[0]
    assert dict(((s, ms) for ms, s in ok))[r.schedule] == r.time_ms
    with pytest.raises(tessera.InvalidArgumentError):
        tessera.autotune.search(GEMM, strategy="annealing")


def test_a_point_that_is_no_schedule_option_is_an_error_cache_or_not(cache):
    # Checked before any trial and before the cache answers (a search with a
    # typo returned the cached choice, measuring nothing).
    tessera.autotune.search(GEMM, params={"tile_m": [16]}, budget=1, repeats=1)
    for cached in (True, False):
        for params, why in (({"no-such-key": [1]}, "no-such-key"), ({"tile_m": ["a b"]}, "without spaces")):
            with pytest.raises(tessera.InvalidArgumentError, match=why):
                tessera.autotune.search(GEMM, params=params, budget=2, repeats=1, cache=cached)


@pytest.mark.parametrize("kwargs,why", [
    (dict(budget="3"), "budget"), (dict(budget=2.7), "budget"), (dict(budget={"trials": None}), "trials"),
    (dict(seconds="x"), "seconds"), (dict(seconds=float("nan")), "seconds"), (dict(repeats=2.5), "repeats"),
    (dict(repeats="3"), "repeats"), (dict(warmup=None), "warmup"), (dict(confirm=2.5), "confirm"),
    (dict(min_gain="x"), "min_gain")])
def test_search_counts_and_numbers_are_checked(kwargs, why):
    with pytest.raises(tessera.InvalidArgumentError, match=why):
        tessera.autotune.search(GEMM, params={"tile_m": [16]}, **kwargs)


def test_search_argument_types_are_checked():
    with pytest.raises(TypeError, match="params must be a dict"):
        tessera.autotune.search(GEMM, params=[("tile_m", [16])])
    with pytest.raises(tessera.InvalidArgumentError, match="parameter name 5"):
        tessera.autotune.search(GEMM, params={5: [1]})
    with pytest.raises(TypeError, match="mesh must be a tessera.dist.Mesh"):
        tessera.autotune.search(GEMM, mesh={"tp": 2})
    with pytest.raises(TypeError, match="function must be a str"):
        tessera.autotune.lookup(GEMM, function=5)
    with pytest.raises(tessera.InvalidArgumentError, match="NUL"):
        tessera.autotune.lookup("examples/mlp.mlir\0x")


@pytest.mark.parametrize("damage", ["edit", "truncate", "garbage", "version"])
def test_corrupted_entry_is_ignored_with_a_warning(cache, capfd, damage):
    r = tessera.autotune.search(GEMM, params={"tile_m": [16]}, budget=2, repeats=1)
    path = r.cache_file
    data = open(path, "rb").read()
    if damage == "edit":  # a changed field, the old checksum
        data = data.replace(b"\nschedule ", b"\nschedule tile-m=8 ")
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = bytes(range(256))
    else:
        data = data.replace(b"tessera-autotune 1", b"tessera-autotune 9")
    open(path, "wb").write(data)
    capfd.readouterr()
    assert tessera.autotune.lookup(GEMM) is None
    assert "is ignored" in capfd.readouterr().err
    # A compile still works (the default schedule), warning again.
    fn = tessera.compile(GEMM)
    assert "is ignored" in capfd.readouterr().err
    assert fn.outputs[0]["shape"] == (64, 80)
    # The next search measures and replaces the entry.
    again = tessera.autotune.search(GEMM, params={"tile_m": [16]}, budget=2, repeats=1)
    assert not again.from_cache
    assert tessera.autotune.lookup(GEMM) is not None


@pytest.mark.parametrize("field", ["device", "plugin", "program", "key"])
def test_foreign_entry_is_ignored_with_a_warning(cache, capfd, field):
    r = tessera.autotune.search(GEMM, params={"tile_m": [16]}, budget=2, repeats=1)
    # A well-formed, correctly signed entry made for something else.
    rewrite(r.cache_file, lambda l: field + " other-" + l.split(" ", 1)[1] if l.startswith(field + " ") else l)
    capfd.readouterr()
    assert tessera.autotune.lookup(GEMM) is None
    err = capfd.readouterr().err
    assert "is ignored" in err and ("another " + field) in err, err


@pytest.mark.parametrize("schedule", ["micro-m=0", "bogus=1", "vector-width=65536"])
def test_signed_entry_whose_schedule_does_not_compile(cache, capfd, schedule):
    # A well-formed, correctly signed entry with a schedule the pass refuses
    # (micro-m=0 once divided by zero in every later compile): the compile
    # warns naming the file and goes on with the default schedule.
    r = tessera.autotune.search(GEMM, params={"tile_m": [16]}, budget=2, repeats=1)
    rewrite(r.cache_file, lambda l: "schedule " + schedule if l.startswith("schedule ") else l)
    capfd.readouterr()
    fn = tessera.compile(GEMM)
    err = capfd.readouterr().err
    assert "the autotune cache entry " + r.cache_file + " is ignored" in err, err
    assert "compiling with the default schedule" in err, err
    assert fn.outputs[0]["shape"] == (64, 80)


def test_entry_of_another_program_copied_over(cache, capfd):
    mine = tessera.autotune.search(GEMM, params={"tile_m": [16]}, budget=2, repeats=1)
    other = tessera.autotune.search(OTHER, params={"tile_m": [16]}, budget=2, repeats=1)
    assert mine.cache_file != other.cache_file
    open(mine.cache_file, "wb").write(open(other.cache_file, "rb").read())
    capfd.readouterr()
    assert tessera.autotune.lookup(GEMM) is None
    assert "is ignored" in capfd.readouterr().err


def test_spmd_program_over_a_mesh(cache):
    # The tensor-parallel MLP: each trial runs the whole step on both devices
    # of the mesh; the choice is cached under the first device, where
    # tessera.compile of the SPMD program finds it.
    if os.environ.get("TESSERA_BACKEND", "cpu") != "cpu":
        pytest.skip("a 2-device mesh: the cpu backend")
    from tessera import dist
    mesh = dist.Mesh({"tp": 2})
    r = tessera.autotune.search(example("tp_mlp.mlir"), params={"tile_m": [24, 48]}, budget=2,
                                repeats=1, mesh=mesh)
    assert not r.from_cache and len(r.trials) == 2
    assert all(not err and ms > 0 for _, ms, err in r.trials)
    looked = tessera.autotune.lookup(example("tp_mlp.mlir"), device=mesh.devices[0])
    assert looked is not None and looked.schedule == r.schedule
    # Without a mesh, the first devices of the backend, as tessera.compile.
    again = tessera.autotune.search(example("tp_mlp.mlir"), params={"tile_m": [24, 48]}, budget=2)
    assert again.from_cache
