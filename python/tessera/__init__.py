"""Tessera: a vendor-portable GPU runtime and compiler, from Python.

    import numpy as np
    import tessera
    from tessera import memcpy, memcpy_async, stream, event, pinned_malloc, graph, dist

The API follows the design documents; docs/python.md lists where Python's
syntax made it differ (memcpy.async is memcpy_async, ...).  Every failed call
raises a tessera.Error subclass carrying the runtime's message.
"""
from . import _tessera
from . import errors
from .errors import *  # noqa: F401,F403  (the exception classes)
from ._runtime import backend, device, devices, init, runtime
from .memory import (Array, advise, asarray, empty, from_dlpack, managed_malloc, memcpy, memcpy_async,
                     pinned_malloc, prefetch)
from . import stream, event, graph, dist, autotune
from .stream import Stream
from .event import Event
from .program import CompiledProgram, compile, from_bf16_bits, to_bf16_bits

Device = _tessera.Device
Runtime = _tessera.Runtime

__all__ = [
    "Array", "CompiledProgram", "Device", "Event", "Runtime", "Stream", "advise", "asarray", "autotune", "backend",
    "compile", "device", "devices", "dist", "empty", "errors", "event", "from_bf16_bits", "from_dlpack", "graph",
    "init", "managed_malloc", "memcpy", "memcpy_async", "pinned_malloc", "prefetch", "runtime", "stream",
    "to_bf16_bits",
] + errors.__all__
