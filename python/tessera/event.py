"""Events: record, wait, query, synchronize, elapsed time (from tessera import event)."""
from . import _tessera
from ._runtime import device as _device

Event = _tessera.Event


def create(timing=True, device=None):
    """A new event of `device` (default: the default device); timing=False
    makes one without timestamps (elapsed() refuses it)."""
    return Event.create(_device(device), bool(timing))


def elapsed(start, end):
    """Milliseconds between two recorded, complete events."""
    return start.elapsed(end)
