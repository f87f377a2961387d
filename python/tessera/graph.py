"""Graphs: work captured from a stream, launched many times (from tessera import graph).

    with graph.capture(s) as g:
        memcpy_async(dev, host, s)
        ...
    g.launch()
"""
import contextlib

from . import _tessera


class CapturedGraph:
    """What `with graph.capture(stream) as g:` gives: empty inside the block,
    an instantiated graph after it."""

    def __init__(self, stream):
        self.stream = stream
        self.graph = None   # tessera.Graph after the block
        self.exec = None    # tessera.GraphExec after the block
        self._keep = []     # Python objects whose memory the graph uses

    @property
    def num_nodes(self):
        return self._captured().num_nodes

    @property
    def num_edges(self):
        return self._captured().num_edges

    def _captured(self):
        if self.graph is None:
            from .errors import FailedPreconditionError
            raise FailedPreconditionError("the graph is still being captured: use it after the with block")
        return self.graph

    def launch(self, stream=None):
        """Runs the captured work once on `stream` (default: the capture's
        stream); returns at once, like the work it replays."""
        self._captured()
        s = stream if stream is not None else self.stream
        if not isinstance(s, _tessera.Stream):
            raise TypeError("launch: stream must be a tessera.Stream, not %s" % type(s).__name__)
        s._launch_graph(self.exec)
        for o in self._keep:
            s._keep(o)


@contextlib.contextmanager
def capture(stream):
    """Records the work issued to `stream` inside the block (it does not
    run), then instantiates it.  An exception inside the block ends the
    capture and drops the graph."""
    if not isinstance(stream, _tessera.Stream):
        raise TypeError("graph.capture(stream): stream must be a tessera.Stream, not %s" % type(stream).__name__)
    g = CapturedGraph(stream)
    # What the captured work uses, on this stream and on every stream that
    # joins the capture (fork/join through events), goes with the graph.
    # Open before the capture begins: an event recorded meanwhile (another
    # thread) must not count as an eager record (it would release memory of
    # eager work when it completes).
    keep = []
    _tessera._open_capture(keep)
    try:
        # Refused (a nested capture, the default stream): nothing has changed.
        stream._begin_capture()
    except BaseException:
        _tessera._close_capture(keep)
        raise
    try:
        yield g
    except BaseException:
        _tessera._close_capture(keep)
        try:
            stream._end_capture()
        except _tessera_errors():
            pass
        raise
    _tessera._close_capture(keep)
    g._keep = keep
    g.graph = stream._end_capture()
    g.exec = g.graph.instantiate()


def _tessera_errors():
    from .errors import Error
    return Error
