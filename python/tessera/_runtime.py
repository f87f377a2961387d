"""The process's runtimes: a default one, created on first use, and one per
backend named explicitly (device="vulkan:0")."""
import operator
import os
import threading

from . import _tessera

_lock = threading.RLock()
_default = None
_by_backend = {}
_parents = []  # the runtimes of the parent in a fork()ed child, kept unused


def _after_fork_in_child():
    # The parent's runtimes do not work here (their plugins' threads stayed
    # in the parent; every call says so): the child makes its own on first
    # use.  They are kept, never destroyed here: their client is the
    # parent's.
    global _default, _by_backend, _lock
    _parents.append((_default, _by_backend))
    _default, _by_backend = None, {}
    # A parent thread may have held the lock at fork(): it never lets go here.
    _lock = threading.RLock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def init(backend=None, devices=None):
    """Creates (or replaces) the default runtime and returns it.

    backend: an ordered, comma-separated list of plugin names, as
    TESSERA_BACKEND ("vulkan,cpu"); None reads TESSERA_BACKEND, then the
    automatic choice.  devices: how many devices the cpu plugin makes (its
    "devices" option; TESSERA_CPU_DEVICES, when set, wins).  Objects made
    from an earlier runtime keep it alive and go on working.
    """
    global _default
    if backend is not None and not isinstance(backend, str):
        raise TypeError("backend=%r: a backend is a string of plugin names, as TESSERA_BACKEND (\"vulkan,cpu\")"
                        % (backend,))
    if devices is not None and (isinstance(devices, bool) or not hasattr(devices, "__index__")
                                or not 1 <= operator.index(devices) <= 4096):
        raise ValueError("devices=%r: give a whole number of devices, 1 to 4096 (or None)" % (devices,))
    rt = _tessera.Runtime.create(backend or "", operator.index(devices) if devices is not None else 0)
    with _lock:
        _default = rt
        _by_backend[rt.backend] = rt
    return rt


def runtime():
    """The default runtime (created by init() on first use)."""
    with _lock:
        if _default is None:
            init()
        return _default


def _initialized():
    return _default is not None


def runtime_for(backend):
    """A runtime of exactly this backend: the default one when it is that
    backend, else one made for it (and kept)."""
    with _lock:
        rt = runtime()
        if rt.backend == backend:
            return rt
        if backend not in _by_backend:
            _by_backend[backend] = _tessera.Runtime.create(backend, 0)
        return _by_backend[backend]


def backend():
    """The name of the default runtime's backend ("cpu", "vulkan", ...)."""
    return runtime().backend


def devices(backend=None):
    """The devices of the default runtime, or of `backend`."""
    return list((runtime_for(backend) if backend else runtime()).devices)


def check_str(value, what):
    """None or a str; else TypeError naming `what`."""
    if value is not None and not isinstance(value, str):
        raise TypeError("%s must be a str, not %s" % (what, type(value).__name__))
    return value


def path_bytes(path, what):
    """A path (str or os.PathLike) as the bytes the file system takes (a
    name that is no valid UTF-8 survives); a NUL in it is refused (the C
    layer would cut the name there)."""
    from .errors import InvalidArgumentError
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError("%s must be a path (str or os.PathLike), not %s" % (what, type(path).__name__))
    raw = os.fsencode(path)
    if b"\0" in raw:
        raise InvalidArgumentError("%s %r holds a NUL character" % (what, path))
    return raw


def check_text(text, what):
    """Program text as UTF-8 (a lone surrogate is refused, saying where)."""
    from .errors import InvalidArgumentError
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidArgumentError("%s is not valid Unicode text: %s at character %d" % (what, e.reason, e.start)) \
            from None
    return text


def int_or_none(v):
    """v as an int when it is one (numpy ints too), else None: bools and
    floats are not counts, ordinals or ranks.  The argument checks of the
    package use it."""
    import operator
    if isinstance(v, bool):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def device(spec=None):
    """A Device from None (the default device), a Device, an ordinal of the
    default runtime, or "backend" / "backend:ordinal"."""
    if isinstance(spec, _tessera.Device):
        return spec
    if spec is None:
        spec = 0
    if isinstance(spec, bool):  # an int to Python, but never meant as an ordinal
        raise TypeError("device must be None, a tessera.Device, an int or 'backend[:ordinal]', not %r" % (spec,))
    if int_or_none(spec) is not None:  # numpy ints too
        spec = int_or_none(spec)
        devs = devices()
        if not 0 <= spec < len(devs):
            from .errors import OutOfRangeError
            raise OutOfRangeError("device %d: backend %s has %d device(s)" % (spec, backend(), len(devs)))
        return devs[spec]
    if isinstance(spec, str):
        name, _, ordinal = spec.partition(":")
        if ordinal and not (ordinal.isascii() and ordinal.isdigit()):
            raise ValueError("device %r: the ordinal after ':' is a whole number ('%s:0')" % (spec, name))
        devs = devices(name)
        index = int(ordinal) if ordinal else 0
        if not 0 <= index < len(devs):
            from .errors import OutOfRangeError
            raise OutOfRangeError("device %s: backend %s has %d device(s)" % (spec, name, len(devs)))
        return devs[index]
    raise TypeError("device must be None, a tessera.Device, an int or 'backend[:ordinal]', not %r" % (spec,))


def ensure_devices(count, backend=None):
    """Devices for a mesh of `count`: the first `count` devices of the
    default runtime (or of `backend`).  A default cpu runtime with fewer
    devices is replaced by one with `count` (as tessera-run does), unless
    TESSERA_CPU_DEVICES fixes the number; other backends have what they
    have."""
    import os
    global _default
    with _lock:
        rt = runtime_for(backend) if backend else runtime()
        if len(rt.devices) < count and rt.backend == "cpu" and not os.environ.get("TESSERA_CPU_DEVICES"):
            # Objects of the old runtime go on working among themselves but
            # cannot be mixed with the new one's (a copy between the two, or
            # pinned memory of one on a stream of the other, is refused):
            # say so now, where the cause is, not at that later call.
            import warnings
            warnings.warn("the cpu runtime has %d device(s) and a mesh needs %d: a new runtime with %d replaces "
                          "it as the default. Arrays, streams, events and pinned memory made before belong to the "
                          "old runtime and cannot be used with the new one's; call tessera.init(devices=%d) first "
                          "to have one runtime" % (len(rt.devices), count, count, count), RuntimeWarning,
                          stacklevel=3)
            new = _tessera.Runtime.create("cpu", int(count))
            if rt is _default:
                _default = new
            _by_backend["cpu"] = new
            rt = new
        devs = list(rt.devices)
    if len(devs) < count:
        from .errors import UnavailableError
        hint = " (set TESSERA_CPU_DEVICES=%d for the cpu backend)" % count if rt.backend == "cpu" else ""
        raise UnavailableError("a mesh of %d devices needs %d devices; backend %s has %d%s" % (
            count, count, rt.backend, len(devs), hint))
    return devs[:count]
