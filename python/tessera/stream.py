"""Streams: in-order queues of copies and kernels (from tessera import stream)."""
import numpy as np

from . import _tessera
from ._runtime import device as _device, int_or_none as _int_or_none

Stream = _tessera.Stream


def create(weight=1, priority=0, non_blocking=False, device=None):
    """A new stream on `device` (default: the default device).  weight: its
    share of the device when streams compete; priority: larger first when
    both are ready; non_blocking: not ordered with the default stream."""
    from .errors import InvalidArgumentError
    w, p = _int_or_none(weight), _int_or_none(priority)
    if w is None or not 1 <= w <= 0xFFFFFFFF:
        raise InvalidArgumentError("stream weight %r: a weight is an int in 1..4294967295 (its share of the device "
                                   "relative to the other streams' weights)" % (weight,))
    if p is None or not -2**31 <= p < 2**31:
        raise InvalidArgumentError("stream priority %r: a priority is a 32-bit int" % (priority,))
    if not isinstance(non_blocking, (bool, np.bool_)):
        # bool("no") is True: a str or number here is a mistake, not a choice.
        raise InvalidArgumentError("non_blocking=%r: give True or False" % (non_blocking,))
    return Stream.create(_device(device), w, p, bool(non_blocking))


def default(device=None):
    """The sequential default stream of `device`."""
    return Stream.default(_device(device))


def _stream_record(self, event):
    self._record(event)


def _stream_wait(self, event):
    self._wait(event)


# The stream's side of the same operations: s.record(ev), s.wait(ev).
Stream.record = _stream_record
Stream.wait = _stream_wait
