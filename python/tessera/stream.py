"""Streams: in-order queues of copies and kernels (from tessera import stream)."""
from . import _tessera
from ._runtime import device as _device

Stream = _tessera.Stream


def create(weight=1, priority=0, non_blocking=False, device=None):
    """A new stream on `device` (default: the default device).  weight: its
    share of the device when streams compete; priority: larger first when
    both are ready; non_blocking: not ordered with the default stream."""
    return Stream.create(_device(device), int(weight), int(priority), bool(non_blocking))


def default(device=None):
    """The sequential default stream of `device`."""
    return Stream.default(_device(device))


def _record(self, event):
    event.record(self)


def _wait(self, event):
    event.wait(self)


# The stream's side of the same operations: s.record(ev), s.wait(ev).
Stream.record = _record
Stream.wait = _wait
