"""tessera.autotune: search a program's Schedule IR tile parameters by
measuring it on the device (docs/autotune.md).

    best = tessera.autotune.search("examples/mlp.mlir",
                                   params={"tile_m": [96, 144, 192], "micro_m": [4, 6]},
                                   objective="runtime", budget=8)
    best.params     # {"tile_m": 192, "micro_m": 4}
    best.time_ms    # the median time per run with them

The winner is kept in the autotune cache (TESSERA_CACHE_DIR/autotune); a
later tessera.compile of the same program on the same device uses it, and a
later search returns it without measuring (best.from_cache).
"""
import os

from . import _tessera
from . import _runtime
from .errors import InvalidArgumentError

# The design documents' names for the GEMM tile sizes.
ALIASES = {"BM": "tile-m", "BN": "tile-n", "BK": "tile-k", "MR": "micro-m", "NR": "micro-n"}


def _key(name):
    return ALIASES.get(name, name.replace("_", "-"))


def _value_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _parse_value(text):
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        return text


class Result:
    """What a search found: params (the winner's values by the names the
    caller used; {} when the target's default schedule won), schedule (the
    --tessera-graph-to-schedule options), time_ms (its median time per run),
    default_ms (the default schedule's; 0.0 from the cache), trials
    (schedule, ms, error) tuples in the order run (ms < 0: failed),
    search_seconds, from_cache, lookup_ms, cache_file."""

    def __init__(self, d, names):
        self.schedule = d["schedule"]
        self.time_ms = d["time_ms"]
        self.default_ms = d["default_ms"]
        self.trials = list(d["trials"])
        self.search_seconds = d["search_seconds"]
        self.from_cache = d["from_cache"]
        self.lookup_ms = d["lookup_ms"]
        self.cache_file = d["cache_file"]
        back = {_key(n): n for n in names}
        self.params = {}
        for item in self.schedule.split():
            k, _, v = item.partition("=")
            self.params[back.get(k, k.replace("-", "_"))] = _parse_value(v)

    @property
    def speedup(self):
        """default_ms / time_ms (1.0 when the default won or nothing was measured)."""
        return self.default_ms / self.time_ms if self.default_ms > 0 and self.time_ms > 0 else 1.0

    def __repr__(self):
        return "<tessera.autotune.Result %s: %.3f ms%s>" % (
            self.params or "default", self.time_ms, " (cached)" if self.from_cache else "")


def _source(program):
    # A path is read once here: the device count, every trial and the cache
    # key see the same bytes.
    from .program import _is_path
    is_path = _is_path(program)
    if not is_path:
        return _runtime.check_text(program, "the program text"), False
    path = _runtime.path_bytes(program, "the program's path")
    if _tessera.has_compiler():
        return _tessera.read_source(path), True
    return path, True


def _count(name, value, low):
    """An int count >= low (numpy ints too; not a bool, a float or a str)."""
    v = _runtime.int_or_none(value)
    if v is None or v < low or v > 2**31 - 1:
        raise InvalidArgumentError("autotune %s=%r: a whole number from %d to 2^31-1" % (name, value, low))
    return v


def _real(name, value):
    """A real number (int or float; not a bool or a str)."""
    import numbers
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError("autotune %s=%r: a number" % (name, value))
    return float(value)


def search(program, params=None, objective="runtime", budget=None, seconds=None, repeats=5, warmup=1,
           device=None, function=None, cache=True, strategy="coordinate", confirm=3,
           min_gain=0.05, mesh=None):
    """Searches the Schedule IR tile parameters of `program` (a path or the
    program's text) on `device` and returns a Result.

    params: {name: [values]} with the names of --tessera-graph-to-schedule
    (tile_m, tile_n, tile_k, micro_m, micro_n, row_tile, ...: "_" or "-"),
    or BM/BN/BK/MR/NR; None: the target's default space.
    objective: "runtime" (the median of `repeats` timed runs after `warmup`).
    budget: the most trials, the default schedule's included (an int), or
    {"trials": n, "seconds": s}; seconds: no trial starts after this.
    cache: False measures even when the cache has an answer (and still
    records the winner).
    strategy: "coordinate" (from the default, one key at a time, passes
    while one improves) or "random" (points of the space in a seeded
    order).  confirm: the best `confirm` schedules and the default are timed
    again in turns, and those medians decide (0: the trials' medians).
    min_gain: a schedule replaces the default only when faster by this
    fraction (0.05); smaller gains are taken for noise.
    mesh: a dist.Mesh for an SPMD program (each trial runs the whole step on
    its devices); without one, an SPMD program gets the first devices of
    the device's backend, as tessera.compile does.
    """
    if objective != "runtime":
        raise InvalidArgumentError("autotune objective %r: only 'runtime' is measured" % (objective,))
    trials, limit = 24, 120.0
    if isinstance(budget, dict):
        unknown = set(budget) - {"trials", "seconds"}
        if unknown:
            raise InvalidArgumentError("budget takes trials and seconds, not %s" % ", ".join(sorted(map(str, unknown))))
        trials = _count("budget trials", budget.get("trials", trials), 1)
        limit = _real("budget seconds", budget.get("seconds", limit))
    elif budget is not None:
        trials = _count("budget", budget, 1)
    if seconds is not None:
        limit = _real("seconds", seconds)
    import math
    repeats, warmup, confirm = _count("repeats", repeats, 1), _count("warmup", warmup, 0), _count("confirm", confirm, 0)
    if not (math.isfinite(limit) and limit > 0):
        raise InvalidArgumentError("autotune seconds %r: a finite number of seconds > 0" % (limit,))
    min_gain = _real("min_gain", min_gain)
    if not (math.isfinite(min_gain) and 0 <= min_gain < 1):
        raise InvalidArgumentError("autotune min_gain %r: a fraction in [0, 1)" % (min_gain,))
    _runtime.check_str(function, "autotune function")
    from .dist import check_mesh
    check_mesh(mesh, "autotune.search")
    if params is not None and not hasattr(params, "items"):
        raise TypeError("autotune params must be a dict {name: [values]}, not %s" % type(params).__name__)
    space = []
    for name, values in (params or {}).items():
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError("autotune parameter name %r: a schedule option's name (a str)" % (name,))
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise InvalidArgumentError("autotune parameter %s: a list of values, not %r" % (name, values))
        values = list(values)
        if not values:
            raise InvalidArgumentError("autotune parameter %s has no values" % name)
        space.append((_key(name), [_value_text(v) for v in values]))
    text, is_path = _source(program)
    if mesh is not None:
        devices = list(mesh.devices)
    else:
        dev = _runtime.device(device)
        needed = _tessera.devices_needed(text, is_path, function or "")
        if needed > 1:
            from .dist import _devices_for
            devices = _devices_for(needed, dev)
        else:
            devices = [dev]
    if strategy not in ("coordinate", "random"):
        raise InvalidArgumentError("autotune strategy %r: write coordinate or random" % (strategy,))
    # Every point of the space is checked first, a cached answer or not.
    d = _tessera.autotune(text, is_path, devices, function or "", space, trials, limit, repeats, warmup, bool(cache),
                          True, strategy, confirm, min_gain)
    return Result(d, (params or {}).keys())


def lookup(program, device=None, function=None):
    """The cached Result for `program` on `device`, or None (nothing is
    measured; an unusable entry warns and gives None)."""
    _runtime.check_str(function, "autotune function")
    text, is_path = _source(program)
    d = _tessera.autotune_lookup(text, is_path, _runtime.device(device), function or "")
    return None if d is None else Result(d, ())
