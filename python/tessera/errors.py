"""Tessera's exceptions: one class per status code of the runtime.

Every failed call of the runtime raises the class of its status code, with
the runtime's message as the exception's text (str(e)).  All derive from
tessera.Error; where a built-in exception means the same thing, the class
derives from it too (InvalidArgumentError is a ValueError, so code that
catches ValueError keeps working).
"""
from . import _tessera


class Error(RuntimeError):
    """Base class of every error the Tessera runtime reports."""

    code = "UNKNOWN"  # the runtime's status code name


def _make(name, code, *bases, doc):
    return type(name, (Error,) + bases, {"code": code, "__doc__": doc, "__module__": __name__})


CancelledError = _make("CancelledError", "CANCELLED", doc="The operation was cancelled.")
UnknownError = _make("UnknownError", "UNKNOWN", doc="An error the runtime could not classify.")
InvalidArgumentError = _make("InvalidArgumentError", "INVALID_ARGUMENT", ValueError,
                             doc="A bad argument: a size, a shape, a program, an option.")
DeadlineExceededError = _make("DeadlineExceededError", "DEADLINE_EXCEEDED", TimeoutError,
                              doc="A wait ran out of time.")
NotFoundError = _make("NotFoundError", "NOT_FOUND", LookupError,
                      doc="A plugin, a kernel, a function or a file was not found.")
AlreadyExistsError = _make("AlreadyExistsError", "ALREADY_EXISTS", doc="It exists already.")
PermissionDeniedError = _make("PermissionDeniedError", "PERMISSION_DENIED", PermissionError,
                              doc="Not permitted.")
ResourceExhaustedError = _make("ResourceExhaustedError", "RESOURCE_EXHAUSTED", MemoryError,
                               doc="Out of memory, or a limit such as RLIMIT_MEMLOCK.")
FailedPreconditionError = _make("FailedPreconditionError", "FAILED_PRECONDITION",
                                doc="Misuse: the wrong state (pageable memory in an async copy, "
                                    "elapsed time of an unrecorded event, ...).")
AbortedError = _make("AbortedError", "ABORTED", doc="The operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", "OUT_OF_RANGE", IndexError,
                        doc="A range past the end of a buffer.")
UnimplementedError = _make("UnimplementedError", "UNIMPLEMENTED", NotImplementedError,
                           doc="The entry point exists but is not written.")
InternalError = _make("InternalError", "INTERNAL", doc="A bug in Tessera or a plugin.")
UnavailableError = _make("UnavailableError", "UNAVAILABLE",
                         doc="No driver or no device for the backend.")
DataLossError = _make("DataLossError", "DATA_LOSS", doc="Data was lost or corrupted.")
UnauthenticatedError = _make("UnauthenticatedError", "UNAUTHENTICATED", doc="Not authenticated.")
UnsupportedError = _make("UnsupportedError", "UNSUPPORTED", NotImplementedError,
                         doc="The device or backend lacks a capability.")
NotReadyError = _make("NotReadyError", "NOT_READY", doc="The work is still running.")
InvalidHandleError = _make("InvalidHandleError", "INVALID_HANDLE",
                           doc="A destroyed (or foreign) object was used.")
AbiMismatchError = _make("AbiMismatchError", "ABI_MISMATCH",
                         doc="A plugin or a file of another ABI or IR version.")

_BY_CODE = {cls.code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
    AbortedError, OutOfRangeError, UnimplementedError, InternalError, UnavailableError, DataLossError,
    UnauthenticatedError, UnsupportedError, NotReadyError, InvalidHandleError, AbiMismatchError)}


def error_class(code):
    """The exception class of a status code name ("INVALID_ARGUMENT")."""
    return _BY_CODE.get(code, Error)


# Every code the runtime knows must have its class: a new code in the C++
# API without one here is a bug of this file (tests/test_errors.py).
_tessera._set_error_classes(dict(_BY_CODE), Error)

__all__ = ["Error", "error_class"] + sorted(cls.__name__ for cls in _BY_CODE.values())
