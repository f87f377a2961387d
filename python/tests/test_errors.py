"""Runtime errors become Python exceptions of a class per status code."""
import pytest

import tessera
from tessera import _tessera, errors


def test_every_status_code_has_its_class():
    codes = _tessera._status_codes()
    assert "INVALID_ARGUMENT" in codes and len(codes) >= 20
    for name, number in codes.items():
        cls = errors.error_class(name)
        assert cls is not errors.Error and cls.code == name, name
        with pytest.raises(cls) as e:
            _tessera._raise_status(number, "message of %s" % name)
        assert str(e.value) == "message of %s" % name
        assert isinstance(e.value, tessera.Error)


def test_builtin_bases():
    assert issubclass(tessera.InvalidArgumentError, ValueError)
    assert issubclass(tessera.OutOfRangeError, IndexError)
    assert issubclass(tessera.ResourceExhaustedError, MemoryError)
    assert issubclass(tessera.UnsupportedError, NotImplementedError)
    assert issubclass(tessera.NotFoundError, LookupError)


def test_runtime_messages_arrive_unchanged():
    with pytest.raises(tessera.Error) as e:
        tessera.Runtime.create("no_such_backend")
    assert "no_such_backend" in str(e.value) and "cpu" in str(e.value)
    with pytest.raises(tessera.ResourceExhaustedError) as e:
        tessera.empty(1 << 60, "u1")
    assert "1.0 EiB" in str(e.value) or "EiB" in str(e.value) or "allocat" in str(e.value)


def test_a_message_quoting_bytes_that_are_not_utf8_arrives(tmp_path):
    # A binary file compiled as a program: the diagnostic quotes its bytes;
    # the exception had no message at all (PyErr_SetString failed).
    bad = tmp_path / "bad.mlir"
    bad.write_bytes(b"garbage\xff\xfe")
    with pytest.raises(tessera.InvalidArgumentError) as e:
        tessera.compile(str(bad))
    assert "not a valid Tessera program" in str(e.value)
