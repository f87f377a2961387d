// tessera-opt reads only regular files (or - for stdin): MLIR reads the
// whole input first, so /dev/zero ran out of memory and a FIFO without a
// writer hung.
// RUN: not tessera-opt /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: tessera-opt: /dev/zero: not a regular file (give a .mlir file, or - for stdin)
// RUN: rm -f %t.fifo && mkfifo %t.fifo
// RUN: not tessera-opt %t.fifo 2>&1 | FileCheck %s --check-prefix=FIFO
// FIFO: not a regular file
// An output device is not an input: -o /dev/null still works.
// RUN: echo 'module {}' | tessera-opt - -o /dev/null
