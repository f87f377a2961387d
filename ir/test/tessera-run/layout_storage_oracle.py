#!/usr/bin/env python3
"""Independent oracle for the storage order of the five Graph IR layouts.

  layout_storage_oracle.py input OUT.npy M N        writes x[i][j] = i*N + j
  layout_storage_oracle.py check FILE.npy M N LAYOUT checks tessera-run's output

tessera-run writes a non-row-major result as its storage, a flat array.
The order is built here by enumerating blocks in storage order, not by the
offset formulas the compiler and tessera-run's reference share
(LayoutAttr::offset), so a formula both got wrong is still caught.
LAYOUT: col_major | blocked:BM,BN | tiled:TM,TN,UM,UN | interleaved:F
"""
import struct
import sys


def write_npy(path, values, shape):
    d = ("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }"
         % ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "")).encode()
    d += b" " * ((64 - (10 + len(d) + 1) % 64) % 64) + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d)
        f.write(struct.pack("<%df" % len(values), *values))


def read_npy(path):
    b = open(path, "rb").read()
    assert b[:6] == b"\x93NUMPY", "not a .npy file"
    hl = struct.unpack("<H", b[8:10])[0]
    data = b[10 + hl:]
    return list(struct.unpack("<%df" % (len(data) // 4), data))


def storage_order(layout, M, N):
    """(i, j) of each stored element, in storage order."""
    kind, _, params = layout.partition(":")
    p = [int(v) for v in params.split(",")] if params else []
    order = []
    if kind == "col_major":
        for j in range(N):
            for i in range(M):
                order.append((i, j))
    elif kind == "blocked":
        bm, bn = p
        for bi in range(M // bm):
            for bj in range(N // bn):
                for ii in range(bm):
                    for jj in range(bn):
                        order.append((bi * bm + ii, bj * bn + jj))
    elif kind == "tiled":
        tm, tn, um, un = p
        for ti in range(M // tm):
            for tj in range(N // tn):
                for ui in range(tm // um):
                    for uj in range(tn // un):
                        for ii in range(um):
                            for jj in range(un):
                                order.append((ti * tm + ui * um + ii, tj * tn + uj * un + jj))
    elif kind == "interleaved":
        (f,) = p
        for g in range(M // f):
            for j in range(N):
                for r in range(f):
                    order.append((g * f + r, j))
    else:
        sys.exit("unknown layout " + layout)
    return order


def main():
    cmd, path, M, N = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if cmd == "input":
        write_npy(path, [float(i * N + j) for i in range(M) for j in range(N)], (M, N))
        return
    layout = sys.argv[5]
    got = read_npy(path)
    want = [float(i * N + j) for (i, j) in storage_order(layout, M, N)]
    assert len(set(storage_order(layout, M, N))) == M * N, "the oracle itself is not a permutation"
    if got != want:
        bad = next(k for k in range(min(len(got), len(want))) if got[k] != want[k]) if len(got) == len(want) else -1
        sys.exit("%s: storage differs at element %d (got %s, want %s), %d values"
                 % (layout, bad, got[bad] if bad >= 0 else "-", want[bad] if bad >= 0 else "-", len(got)))
    print("%s: storage order OK (%d values)" % (layout, len(got)))


if __name__ == "__main__":
    main()
