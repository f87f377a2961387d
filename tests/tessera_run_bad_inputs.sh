#!/usr/bin/env bash
# tessera-run given bad .npy inputs: every case must exit 1 with a message
# naming the file and the problem, never crash (a signal gives 128+N).
#   usage: tessera_run_bad_inputs.sh TESSERA_RUN EXAMPLES_DIR
set -u
RUN=$1 EX=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TESSERA_BACKEND=cpu
fail=0

# Writes a .npy with the given header dict and N float32 zeros of data.
npy() {  # path header-dict nfloats
  python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
path, d, n = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
d += b' ' * ((64 - (10 + len(d) + 1) % 64) % 64) + b'\n'
open(path, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(d)) + d + b'\0' * (4 * n))
PY
}

expect() {  # name expected-substring args...
  local name=$1 want=$2; shift 2
  local out rc
  out=$("$RUN" "$@" --iterations 1 2>&1); rc=$?
  if [[ $rc -ne 1 ]]; then
    echo "FAIL $name: exit $rc (want 1)"; echo "$out"; fail=1
  elif [[ "$out" != *"$want"* ]]; then
    echo "FAIL $name: message lacks '$want'"; echo "$out"; fail=1
  else
    echo "ok   $name: $(grep -m1 'tessera-run:' <<<"$out")"
  fi
}

npy "$T/good.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (512, 1024), }" $((512 * 1024))
head -c 40 "$T/good.npy" > "$T/truncated_header.npy"
head -c 4096 "$T/good.npy" > "$T/truncated_data.npy"
printf 'this is not numpy' > "$T/text.npy"
npy "$T/big_endian.npy" "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }" 4
npy "$T/fortran.npy" "{'descr': '<f4', 'fortran_order': True, 'shape': (512, 1024), }" $((512 * 1024))
npy "$T/negative.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4), }" 4
npy "$T/huge.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }" 0
npy "$T/noshape.npy" "{'descr': '<f4', 'fortran_order': False, }" 4
# Headers NumPy itself refuses or would read differently: each was taken
# by a substring search (the first of two keys won, '<f48' read as f32).
npy "$T/dup_key.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (512, 1024), 'shape': (4,), }" $((512 * 1024))
npy "$T/unknown_key.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (512, 1024), 'extra': 1, }" $((512 * 1024))
npy "$T/descr_prefix.npy" "{'descr': '<f48', 'fortran_order': False, 'shape': (512, 1024), }" $((512 * 1024))
npy "$T/int_not_tuple.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4), }" 4
npy "$T/empty_dim.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (512,, 1024), }" $((512 * 1024))
npy "$T/trailing.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (512, 1024), }" $((512 * 1024 + 1))
# 2^62 f64 elements: the byte count wrapped to 0 and the header passed the
# size check against an empty file.
npy "$T/bytes_wrap.npy" "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }" 0
npy "$T/not_bool.npy" "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }" 1
printf '\x02' | dd of="$T/not_bool.npy" bs=1 seek=$(( $(stat -c %s "$T/not_bool.npy") - 2 )) conv=notrunc status=none
npy "$T/i32.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (512, 1024), }" $((512 * 1024))

SM=$EX/softmax.mlir
expect missing_file     "nope.npy: cannot open"                 "$SM" --input "$T/nope.npy"
expect not_npy          "not a .npy file"                       "$SM" --input "$T/text.npy"
expect truncated_header "truncated header"                      "$SM" --input "$T/truncated_header.npy"
expect truncated_data   "shorter than its header says"          "$SM" --input "$T/truncated_data.npy"
expect big_endian       "unsupported dtype"                     "$SM" --input "$T/big_endian.npy"
expect fortran_order    "Fortran-order arrays are not supported" "$SM" --input "$T/fortran.npy"
expect negative_dim     "malformed or too large shape"          "$SM" --input "$T/negative.npy"
expect huge_shape       "malformed or too large shape"          "$SM" --input "$T/huge.npy"
expect no_shape_key     "malformed header"                      "$SM" --input "$T/noshape.npy"
expect dup_key          "key 'shape' appears twice"             "$SM" --input "$T/dup_key.npy"
expect unknown_key      "unknown key 'extra'"                   "$SM" --input "$T/unknown_key.npy"
expect descr_prefix     "unsupported dtype '<f48'"              "$SM" --input "$T/descr_prefix.npy"
expect int_not_tuple    "malformed or too large shape (4)"      "$SM" --input "$T/int_not_tuple.npy"
expect empty_dim        "malformed or too large shape"          "$SM" --input "$T/empty_dim.npy"
expect trailing_bytes   "file is longer than its header says"   "$SM" --input "$T/trailing.npy"
expect bytes_wrap       "malformed or too large shape"          "$SM" --input "$T/bytes_wrap.npy"
expect not_bool         "bool element 2 is byte 2"              "$SM" --input "$T/not_bool.npy"
expect wrong_shape      "expects f32 [65536], the file holds f32 [512x1024]" "$EX/saxpy.mlir" --input "$T/good.npy"
# A grid past what the kernel's buffers are sized for (saxpy declares 64
# groups over 65536 floats): the Tile IR interpreter, run first, finds the
# access out of bounds and the kernel is not run (exit 1).
expect grid_past_buffers_checked "saxpy accessing memory out of bounds, so it was not run" \
  "$EX/saxpy.mlir" --grid 1000
# Unchecked, the program layer refuses it before any launch, on every
# backend (it segfaulted a cpu worker; vulkan dropped the writes).  It is a
# launch error (exit 2), naming the kernel's grid.
for backend in cpu vulkan; do
  out=$(TESSERA_BACKEND=$backend "$RUN" "$EX/saxpy.mlir" --grid 1000 --iterations 1 --no-check 2>&1); rc=$?
  if [[ $backend == vulkan && $rc -eq 77 ]]; then echo "skip grid_past_buffers.vulkan: no vulkan"; continue; fi
  if [[ $rc -eq 2 && "$out" == *"is larger than the grid (64, 1, 1) kernel 'saxpy' was compiled for"* ]]; then
    echo "ok   grid_past_buffers.$backend: $(grep -m1 'tessera-run:' <<<"$out")"
  else
    echo "FAIL grid_past_buffers.$backend: exit $rc (want 2)"; echo "$out"; fail=1
  fi
done
# A grid on a Graph IR function: its kernels' grids are the compiler's, and
# a smaller one left most of the result unwritten (softmax with --grid 1
# computed 64 of 512 rows, silently).  A launch error (exit 2).
out=$("$RUN" "$SM" --grid 1 --iterations 1 --no-check 2>&1); rc=$?
if [[ $rc -eq 2 && "$out" == *"softmax is a Graph IR function, whose kernels' grids the compiler chose"* ]]; then
  echo "ok   grid_on_graph_ir: $(grep -m1 'tessera-run:' <<<"$out")"
else
  echo "FAIL grid_on_graph_ir: exit $rc (want 2)"; echo "$out"; fail=1
fi
expect wrong_dtype      "the file holds i32"                    "$SM" --input "$T/i32.npy"
# A kernel whose loop never ends: the Tile IR interpreter, run first,
# stops at --check-seconds naming the loop, and the kernel is not run on
# the device (the interpreter, and then the device, hung forever).
cat > "$T/endless.mlir" <<'MLIR'
func.func @endless(%x: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 4>, tessera_tile.grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %r = scf.while (%i = %c0) : (index) -> index {
    %go = arith.cmpi sge, %i, %c0 : index
    scf.condition(%go) %i : index
  } do {
  ^bb0(%j: index):
    %k = arith.remui %j, %c64 : index
    %v = memref.load %x[%k] : memref<64xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %x[%k] : memref<64xf32>
    %n = arith.addi %j, %c1 : index
    scf.yield %n : index
  }
  return
}
MLIR
expect endless_loop_checked "did not finish endless within --check-seconds, so it was not run on cpu" \
  "$T/endless.mlir" --check-seconds 0.5
expect endless_loop_names_the_loop "in the scf.while at $T/endless.mlir:7:8" "$T/endless.mlir" --check-seconds 0.5
# A loop with an empty body counted no operation, so --check-seconds never
# stopped it: each iteration counts now.
cat > "$T/empty_loop.mlir" <<'MLIR'
func.func @empty_loop(%x: memref<256xf32>)
    attributes {tessera_tile.group_size = array<i64: 1>, tessera_tile.grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %big = arith.constant 9223372036854775807 : index
  scf.for %i = %c0 to %big step %c1 {
  }
  return
}
MLIR
expect empty_loop_checked "did not finish empty_loop within --check-seconds, so it was not run on cpu" \
  "$T/empty_loop.mlir" --check-seconds 0.5
# A barrier only some lanes reach (lane-dependent scf.if): undefined on a
# GPU (a hang, or shared memory read early).  It was run, "NOT checked".
cat > "$T/divergent.mlir" <<'MLIR'
func.func @divergent(%x: memref<256xf32>)
    attributes {tessera_tile.group_size = array<i64: 256>, tessera_tile.grid = array<i64: 1>} {
  %c128 = arith.constant 128 : index
  %l = tessera_tile.lane_id 0 : index
  %lo = arith.cmpi ult, %l, %c128 : index
  scf.if %lo {
    tessera_tile.barrier
  }
  return
}
MLIR
expect divergent_barrier_not_run "found divergent with lanes that do not all reach the same barrier or subgroup op, so it was not run on cpu" \
  "$T/divergent.mlir"
# A kernel whose buffers are of any length (memref<?xf32>) is sized by its
# --input files; without one it says so (it "needed more than 2^63 bytes").
sed -e 's/memref<65536xf32>/memref<?xf32>/g' "$EX/saxpy.mlir" > "$T/saxpy_any.mlir"
npy "$T/x8k.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (8192,), }" 8192
expect any_length_needs_input "argument 1 of saxpy (f32 [?]) has a dimension of any length: give its contents with --input" \
  "$T/saxpy_any.mlir" --scalar 2
out=$("$RUN" "$T/saxpy_any.mlir" --scalar 2 --input "$T/x8k.npy" --input "$T/x8k.npy" --grid 8 --iterations 1 \
  --output "$T/any.npy" 2>&1); rc=$?
if [[ $rc -eq 0 && "$out" == *PASS* ]] && python3 -c "
import sys; b = open(sys.argv[1], 'rb').read(); sys.exit(0 if b\"'shape': (8192,)\" in b else 1)" "$T/any.npy"; then
  echo "ok   any_length_sized_by_its_input: $(grep -m1 verify <<<"$out")"
else
  echo "FAIL any_length_sized_by_its_input: exit $rc"; echo "$out"; fail=1
fi
expect check_seconds_nan "--check-seconds nan: not a number of seconds" "$T/endless.mlir" --check-seconds nan
expect timeout_negative "--timeout -1: not a number of seconds" "$T/endless.mlir" --timeout -1
# Unchecked, --timeout bounds the run: exit 2 saying what it was doing.
# (3 s: the limit counts from the start, compiling included.)
out=$("$RUN" "$T/endless.mlir" --no-check --timeout 3 --iterations 1 2>&1); rc=$?
if [[ $rc -eq 2 && "$out" == *"--timeout 3 s reached while running on the device"* ]]; then
  echo "ok   endless_loop_timeout: $(grep -m1 'tessera-run:' <<<"$out")"
else
  echo "FAIL endless_loop_timeout: exit $rc (want 2)"; echo "$out"; fail=1
fi

# Scalars an integer argument cannot hold, and scalars nothing takes: they
# were truncated (2.9 -> 2), wrapped or silently ignored.
I16=$(dirname "$EX")/tools/tessera-run/testdata/int16_scale.mlir
expect scalar_not_whole "--scalar 2.9: argument 0 of int16_scale is i16; give a whole number it holds" \
  "$I16" --scalar 2.9
expect scalar_too_big   "--scalar 40000: argument 0 of int16_scale is i16" "$I16" --scalar 40000
expect extra_scalars    "2 --scalar values given, int16_scale takes 1 scalar argument" "$I16" --scalar 3 --scalar 4
# A float scalar beyond its type: 1e300 for saxpy's f32 a became inf.
expect scalar_beyond_f32 "--scalar 1e+300: argument 0 of saxpy is f32, whose largest value is smaller" \
  "$EX/saxpy.mlir" --scalar 1e300
expect extra_scalars_graph "1 --scalar values given, softmax takes 0 scalar arguments" "$SM" --scalar 3
# An i16 result is written as numpy's '<i2' and reads back as what ran.
if "$RUN" "$I16" --scalar 3 --iterations 1 --output "$T/i16.npy" >/dev/null 2>&1 &&
   python3 - "$T/i16.npy" <<'PY'
import ast, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<H", b[8:10])[0]
h = ast.literal_eval(b[10:10 + n].decode())
assert h["descr"] == "<i2" and tuple(h["shape"]) == (256,), h
vals = struct.unpack("<256h", b[10 + n:])
assert any(v != 0 for v in vals), "all zeros"
PY
then echo "ok   i16 output"; else echo "FAIL i16 output"; fail=1; fi

# An autotune space with a key the schedule does not have: refused before
# any trial (every trial failed, and the default was cached as the choice).
expect autotune_typo "--tessera-graph-to-schedule has no option 'tile_m'" "$SM" --autotune-space "tile_m=8,16"
# A process count an int cannot hold was truncated (4294967298 joined a
# group of 2).
TESSERA_COORDINATOR=127.0.0.1:1 TESSERA_NUM_PROCESSES=4294967298 TESSERA_PROCESS_ID=1 \
  expect num_processes_huge "TESSERA_NUM_PROCESSES (N from 1 to 65536)" "$SM"

# A program file with terminal control bytes: MLIR's diagnostic quotes the
# line, and the bytes reached the terminal (ESC starts its sequences); now
# they are shown as \xNN.
printf 'func.func @f() {\n  \033[31mRED\033[0m \007\n}\n' > "$T/escape.mlir"
out=$("$RUN" "$T/escape.mlir" --iterations 1 2>&1); rc=$?
if [[ $rc -eq 1 && "$out" == *'\x1b[31mRED'* && "$out" != *$'\033'* && "$out" != *$'\007'* ]]; then
  echo "ok   control bytes quoted as \\xNN"
else
  echo "FAIL control bytes: exit $rc"; echo "$out" | cat -v; fail=1
fi
# A header that parses, with control bytes in its dtype and in a key.
npy "$T/escape_dtype.npy" "{'descr': '"$'\033'"[2J', 'fortran_order': False, 'shape': (4,), }" 4
npy "$T/escape_key.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), '"$'\033'"[2J': 1, }" 4
for f in escape_dtype escape_key; do
  out=$("$RUN" "$SM" --input "$T/$f.npy" --iterations 1 2>&1); rc=$?
  if [[ $rc -ne 1 || "$out" == *$'\033'* || "$out" != *'\x1b[2J'* ]]; then
    echo "FAIL $f: exit $rc, control bytes not quoted"; echo "$out" | cat -v; fail=1
  else echo "ok   $f: $(grep -m1 'tessera-run:' <<<"$out")"; fi
done

# A static shape too large for this machine's memory: refused before the
# host arrays are allocated (it ended in an uncaught std::bad_alloc).
cat > "$T/huge_tensor.mlir" <<'MLIR'
func.func @h(%x: tensor<100000000x100000xf32>) -> tensor<100000000x100000xf32> {
  %y = tessera_graph.exp %x : tensor<100000000x100000xf32>
  return %y : tensor<100000000x100000xf32>
}
MLIR
expect huge_tensor      "needs 40000000000000 bytes of host memory" "$T/huge_tensor.mlir"
# Tensors that fit one by one but not together, under a 4 GB address-space
# limit: refused before any is allocated (each alone was checked, against
# the physical memory: three 8 GiB tensors passed on a 23.5 GiB machine).
cat > "$T/together.mlir" <<'MLIR'
func.func @t(%x: tensor<400000000xf32>, %y: tensor<400000000xf32>) -> tensor<400000000xf32> {
  %z = tessera_graph.add %x, %y : tensor<400000000xf32>, tensor<400000000xf32>
  return %z : tensor<400000000xf32>
}
MLIR
# (Not under a sanitizer: its shadow memory alone is past any such limit.)
if ldd "$RUN" 2>/dev/null | grep -q 'libasan\|libtsan\|libubsan'; then
  out="skipped: sanitizer build"; rc=77
else
  out=$(bash -c 'ulimit -v 4000000; exec "$0" "$1" --iterations 1' "$RUN" "$T/together.mlir" 2>&1); rc=$?
fi
if [[ $rc -eq 77 ]]; then
  echo "skip tensors_together: $out"
elif [[ $rc -eq 1 && "$out" == *"bytes of host memory together; this process can use 4096000000"* ]]; then
  echo "ok   tensors_together: $(grep -m1 'tessera-run:' <<<"$out")"
else
  echo "FAIL tensors_together: exit $rc (want 1)"; echo "$out"; fail=1
fi
# 100,000 nested brackets: refused before MLIR's recursive parser runs (it
# overflowed the stack: SIGSEGV).
{ echo 'func.func @d(%x: tensor<4xf32>) -> tensor<4xf32> {'
  printf '  %%c = arith.constant dense<'; printf '[%.0s' $(seq 100000); printf '1.0'; printf ']%.0s' $(seq 100000)
  echo '> : tensor<4xf32>'; echo '  return %x : tensor<4xf32>'; echo '}'; } > "$T/deep.mlir"
expect deep_nesting     "nested more than 256 levels deep"      "$T/deep.mlir"
expect too_many_inputs  "2 --input files given, softmax takes 1" "$SM" --input "$T/good.npy" --input "$T/good.npy"
expect too_many_outputs "2 --output files given, softmax has 1 result" "$SM" --output "$T/a.npy" --output "$T/b.npy"
# A module of several functions runs the one named, and says which it has
# when none is (it used to run the first one silently).
expect no_function      "defines 2 functions (reductions, softmax_dims): choose one" "$EX/reductions.mlir"
# Numbers that would check nothing or divide by zero: errors naming them.
expect tolerance_nan    "--tolerance nan: a tolerance is a finite number >= 0" "$SM" --tolerance nan
expect tolerance_neg    "--tolerance -1: a tolerance is a finite number >= 0" "$SM" --tolerance -1
expect autotune_nan     "--autotune-seconds nan: not a number of seconds" "$SM" --autotune-seconds nan
expect micro_zero       "micro-m=0 is out of range; use 1..64" "$SM" --schedule micro-m=0
expect wide_vectors     "vector-width=65536 is out of range; use 1..64" "$SM" --schedule vector-width=65536
expect unknown_function "has no function or kernel named 'nope'; it has: reductions, softmax_dims" \
  "$EX/reductions.mlir" --function nope

# Several results: one --output file per result, in order, each with its
# own shape and dtype.
if "$RUN" "$EX/reductions.mlir" --function reductions --iterations 1 --output "$T/r0.npy" --output "$T/r1.npy" \
     --output "$T/r2.npy" --output "$T/r3.npy" --output "$T/r4.npy" >/dev/null 2>&1 &&
   python3 - "$T" <<'PY'
import ast, struct, sys
want = [("<f4", (6,)), ("<f4", (4, 8)), ("<f4", ()), ("<i4", (8,)), ("<i4", (4, 6))]
for k, (descr, shape) in enumerate(want):
    b = open("%s/r%d.npy" % (sys.argv[1], k), "rb").read()
    h = ast.literal_eval(b[10:10 + struct.unpack("<H", b[8:10])[0]].decode())
    assert (h["descr"], tuple(h["shape"])) == (descr, shape), (k, h)
PY
then echo "ok   one --output per result"; else echo "FAIL one --output per result"; fail=1; fi

# A buffer the device refuses (TESSERA_FAULT fails the 2nd allocation: the
# result) is named, with its size: a runtime error, exit 2.
out=$(TESSERA_FAULT=alloc:2 "$RUN" "$SM" --iterations 1 2>&1); rc=$?
if [[ $rc -eq 2 && "$out" == *"output result0 of softmax (f32 [512x1024], 2097152 bytes) on device 0: "* ]]; then
  echo "ok   device allocation refused: $(grep -m1 'tessera-run:' <<<"$out")"
else
  echo "FAIL device allocation refused: exit $rc (want 2, naming the result)"; echo "$out"; fail=1
fi

# And the good file runs.
if ! "$RUN" "$SM" --input "$T/good.npy" --iterations 1 >/dev/null 2>&1; then
  echo "FAIL good input did not run"; fail=1
fi
exit $fail
