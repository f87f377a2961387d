"""Shared set-up of the Python package's tests (ctest runs each file with
TESSERA_BACKEND=cpu, and the backend-neutral ones with vulkan too).

Where the backend has no usable device (no Vulkan driver), every test is
skipped and pytest exits 77, which ctest reports as a skip."""
import os

import pytest

import tessera

BACKEND = os.environ.get("TESSERA_BACKEND", "cpu")
_unavailable = None


def pytest_configure(config):
    global _unavailable
    try:
        tessera.devices()
    except tessera.Error as e:
        if BACKEND == "cpu":
            raise
        _unavailable = "backend %s unavailable: %s" % (BACKEND, e)


def pytest_collection_modifyitems(config, items):
    if _unavailable:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=_unavailable))


def pytest_sessionfinish(session, exitstatus):
    if _unavailable:
        print("\n" + _unavailable)
        session.exitstatus = 77


@pytest.fixture
def dev():
    return tessera.device()


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def example(name):
    return os.path.join(REPO, "examples", name)
