"""Distributed programs: device meshes and shardings, and communicators
(from tessera import dist).

An SPMD program (docs/spmd.md) names its mesh and the sharding of each
argument and result in its IR; a Mesh gives it devices, and ShardSpec is the
Python spelling of #tessera_graph.shard, for reading and checking a compiled
program's shardings.  A Communicator runs collectives over devices of this
process, or across processes from an id one of them made (collective_id).
"""
import math
import operator

import numpy as np

from . import _runtime, _tessera


class Mesh:
    """Devices arranged along named axes, numbered row-major.

        mesh = dist.Mesh({"tp": 2})                 # the first 2 devices
        mesh = dist.Mesh({"dp": 2, "tp": 2}, devices=[...])
    """

    def __init__(self, axes, devices=None):
        items = (list(axes.items()) if isinstance(axes, dict)
                 else list(axes) if isinstance(axes, (tuple, list)) else None)
        if items is None or any(not isinstance(i, (tuple, list)) or len(i) != 2 for i in items):
            raise TypeError("Mesh(axes): axes is a dict {name: size} or a sequence of (name, size) pairs, not %r"
                            % (axes,))
        if not items:
            raise ValueError("a mesh has at least one axis")
        self.axis_names = tuple(_axis_name(name, "Mesh") for name, _ in items)
        for name, size in items:  # integers only: 1.9 is no axis size (it was 1)
            if isinstance(size, (bool, np.bool_)) or not hasattr(size, "__index__"):
                raise TypeError("mesh axis %r: its size must be an integer, not %r" % (name, size))
        self.shape = tuple(operator.index(size) for _, size in items)
        if len(set(self.axis_names)) != len(self.axis_names) or min(self.shape) < 1:
            raise ValueError("mesh axes must have distinct names and sizes >= 1: %r" % (items,))
        if self.size > _tessera.MAX_PROGRAM_DEVICES:
            raise ValueError("a mesh of shape %s has %d devices; a program runs on at most %d" % (
                self.shape, self.size, _tessera.MAX_PROGRAM_DEVICES))
        if devices is None:
            self.devices = _runtime.ensure_devices(self.size)
        else:
            self.devices = [_runtime.device(d) for d in devices]
            if len(self.devices) != self.size:
                raise ValueError("a mesh of shape %s needs %d devices, %d given" % (
                    self.shape, self.size, len(self.devices)))

    @property
    def size(self):
        return math.prod(self.shape)

    def __len__(self):
        return self.size

    def coords(self, index):
        """The coordinates of device `index` (row-major)."""
        if _runtime.int_or_none(index) is None:
            raise TypeError("Mesh.coords takes a device index (an int), not %r" % (index,))
        if not 0 <= index < self.size:
            raise IndexError("device index %d of a mesh of %d devices (0..%d)" % (index, self.size, self.size - 1))
        out = []
        for size in reversed(self.shape):
            out.append(index % size)
            index //= size
        return tuple(reversed(out))

    def device(self, *coords):
        """The device at these coordinates (one per axis)."""
        if len(coords) != len(self.shape):
            raise ValueError("a mesh of axes %s takes %d coordinates, %d given" % (
                self.axis_names, len(self.shape), len(coords)))
        index = 0
        for name, c, size in zip(self.axis_names, coords, self.shape):
            if _runtime.int_or_none(c) is None:
                raise TypeError("mesh coordinate %r along %s: an int" % (c, name))
            if not 0 <= c < size:
                raise IndexError("coordinate %d along %s, which has %d devices (0..%d)" % (c, name, size, size - 1))
            index = index * size + c
        return self.devices[index]

    def __repr__(self):
        return "Mesh(%s, %s)" % (dict(zip(self.axis_names, self.shape)), self.devices[0].backend)


def check_mesh(mesh, what):
    """None or a Mesh; else TypeError."""
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError("%s: mesh must be a tessera.dist.Mesh, not %s" % (what, type(mesh).__name__))


def _axis_name(a, what):
    if not isinstance(a, str):
        raise TypeError("%s: a mesh axis is a non-empty str, not %r" % (what, a))
    if not a:
        raise ValueError("%s: mesh axes must be non-empty names" % what)
    return a


def _dim_axes(d):
    """None, an axis name, or a tuple of two or more names."""
    if d is None or (isinstance(d, (str, tuple, list)) and len(d) == 0):
        return None
    if isinstance(d, str):
        return d
    if not isinstance(d, (tuple, list)):
        raise TypeError("ShardSpec dims: each entry is None, an axis name or a tuple of names, not %r" % (d,))
    names = tuple(_axis_name(a, "ShardSpec dims") for a in d)
    return names[0] if len(names) == 1 else names


class ShardSpec:
    """How local tensors make up a global one (#tessera_graph.shard):
    dims[i] names the mesh axis global dim i is partitioned over (None: not
    partitioned), or a tuple of axes for a dim partitioned over several, the
    major first (("dp", "tp"), as jax.sharding.PartitionSpec writes it);
    reduce lists the axes holding partial sums; every other axis holds
    copies (replicate says so explicitly, for reading)."""

    def __init__(self, dims=(), reduce=(), replicate=()):
        for what, v in (("dims", dims), ("reduce", reduce), ("replicate", replicate)):
            if isinstance(v, (str, bytes)):
                raise ValueError("ShardSpec %s=%r: a sequence, one entry per %s (write %s=(%r,))" % (
                    what, v, "global dim" if what == "dims" else "mesh axis", what, v))
            if not isinstance(v, (tuple, list)):
                raise TypeError("ShardSpec %s=%r: a sequence (tuple or list)" % (what, v))
        self.dims = tuple(_dim_axes(d) for d in dims)
        self.reduce = tuple(_axis_name(a, "ShardSpec reduce") for a in reduce)
        self.replicate = tuple(_axis_name(a, "ShardSpec replicate") for a in replicate)

    @classmethod
    def _of_param(cls, param):
        dims = param.get("dims") or [None] * len(param["shape"])
        return cls(dims, param.get("reduce") or ())

    @property
    def replicated(self):
        return all(d is None for d in self.dims) and not self.reduce

    def _key(self):
        # No partitioned dim is the same as no dims at all; equal specs hash
        # alike (set and dict keys).
        dims = self.dims if any(d is not None for d in self.dims) else ()
        return dims, frozenset(self.reduce)

    def __eq__(self, other):
        if not isinstance(other, ShardSpec):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        parts = ["dims=%r" % (self.dims,)]
        if self.reduce:
            parts.append("reduce=%r" % (self.reduce,))
        if self.replicate:
            parts.append("replicate=%r" % (self.replicate,))
        return "ShardSpec(%s)" % ", ".join(parts)


def _devices_for(count, device=None):
    """The devices an SPMD program of `count` gets without a Mesh: the first
    `count` of `device`'s backend."""
    return _runtime.ensure_devices(count, device.backend if device is not None else None)


def collective_id(device=None):
    """The id of a new communicator across processes (128 bytes), as
    ncclGetUniqueId: make it in one process, hand it to the others (a
    multiprocessing queue, a file, a socket), then every process makes
    Communicator(devices, num_ranks=..., ranks=..., id=...).  Only backends
    whose collectives span processes make one (cpu: shared memory among the
    processes of one host; cuda and hip: NCCL and RCCL); others raise
    UnsupportedError."""
    return _tessera._create_collective_id(_runtime.device(device))


class Communicator:
    """Collectives over ranks, one per device.

        comm = dist.Communicator(tessera.devices()[:2])       # this process
        comm.all_reduce([a0, a1])                             # in place, sum

        # across processes (each process its own devices and their ranks)
        comm = dist.Communicator([dev], num_ranks=4, ranks=[p], id=the_id)

    Every call takes one tessera.Array per local rank (on that rank's
    device) and returns when this process's results are in place.
    Reductions are deterministic by default: the same bits run to run and
    as on one process."""

    def __init__(self, devices=None, num_ranks=None, ranks=None, id=None):
        from .errors import InvalidArgumentError
        devs = [_runtime.device(d) for d in devices] if devices is not None else [_runtime.device()]
        if id is None and (num_ranks is not None or ranks is not None):
            raise InvalidArgumentError("num_ranks and ranks make a communicator across processes: give its id too "
                                       "(dist.collective_id() in one process, handed to the others)")
        if id is not None and not isinstance(id, (bytes, bytearray)):
            raise TypeError("Communicator id must be the bytes dist.collective_id() made, not %s" % type(id).__name__)
        self._comm = _tessera._create_communicator(devs, num_ranks, ranks, bytes(id) if id is not None else None)

    def _run(self, kind, send, recv, op, root, deterministic):
        from .errors import InvalidArgumentError
        from .memory import Array
        sides = []
        for side, arrays in (("send", send), ("recv", recv)):
            arrays = [arrays] if isinstance(arrays, Array) else list(arrays)
            for a in arrays:
                if not isinstance(a, Array):
                    raise TypeError("Communicator.%s: %s takes tessera.Arrays (one per local rank), not %s"
                                    % (kind, side, type(a).__name__))
            sides.append(arrays)
        if not isinstance(op, str):
            raise InvalidArgumentError("Communicator.%s: op=%r is not 'sum', 'prod', 'max' or 'min'" % (kind, op))
        if not isinstance(deterministic, (bool, np.bool_)):
            raise TypeError("Communicator.%s: deterministic is True or False, not %r" % (kind, deterministic))
        self._comm._collective(kind, sides[0], sides[1], op, root, bool(deterministic))

    @property
    def size(self):
        """Ranks of every process."""
        return self._comm.size

    @property
    def devices(self):
        """This process's ranks' devices, in rank order."""
        return list(self._comm.devices)

    def all_reduce(self, send, recv=None, op="sum", deterministic=True):
        self._run("all_reduce", send, recv if recv is not None else send, op, 0, deterministic)

    def reduce_scatter(self, send, recv, op="sum", deterministic=True):
        self._run("reduce_scatter", send, recv, op, 0, deterministic)

    def all_gather(self, send, recv):
        self._run("all_gather", send, recv, "sum", 0, True)

    def broadcast(self, send, recv=None, root=0):
        if _runtime.int_or_none(root) is None or not 0 <= root < self.size:
            from .errors import InvalidArgumentError
            raise InvalidArgumentError("broadcast root %r: a rank in 0..%d" % (root, self.size - 1))
        self._run("broadcast", send, recv if recv is not None else send, "sum", int(root), True)

    def destroy(self):
        self._comm.destroy()

    def __repr__(self):
        return "Communicator(size=%d, local=%d)" % (self.size, len(self.devices))
