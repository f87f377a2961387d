"""Events: record, wait, query, synchronize, elapsed time (from tessera import event)."""
from . import _tessera
from ._runtime import device as _device

Event = _tessera.Event


def create(timing=True, device=None):
    """A new event of `device` (default: the default device); timing=False
    makes one without timestamps (elapsed() refuses it)."""
    if not isinstance(timing, bool):
        raise TypeError("event.create: timing is True or False, not %r" % (timing,))
    return Event.create(_device(device), timing)


def elapsed(start, end):
    """Milliseconds between two recorded, complete events."""
    if not isinstance(start, Event):
        raise TypeError("event.elapsed: start must be a tessera.Event, not %s" % type(start).__name__)
    return start.elapsed(end)
