"""docs/python.md stays true: every ```python block runs as shown.

Each block runs in a fresh namespace, in order, from the repository root
(the examples name examples/*.mlir)."""
import os
import re

import pytest

from conftest import REPO

DOC = os.path.join(REPO, "docs", "python.md")


def blocks():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    out = []
    for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        line = text.count("\n", 0, m.start()) + 2
        out.append(pytest.param(m.group(1), line, id="python.md:%d" % line))
    return out


def test_the_doc_has_examples():
    assert len(blocks()) >= 6


@pytest.mark.parametrize("code,line", blocks())
def test_example(code, line, monkeypatch):
    monkeypatch.chdir(REPO)
    exec(compile("\n" * (line - 1) + code, DOC, "exec"), {"__name__": "__doc_example__"})
