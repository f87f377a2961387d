#!/usr/bin/env bash
# The cpu kernel cache ($TESSERA_CACHE_DIR/cpu: <key>.so + <key>.kernels)
# under damage: every broken entry is dropped with a warning and compiled
# again (the run succeeds), an unusable cache folder means compiling without
# it, and entries are written whole (header with version and checksums, no
# temporary files left).  Before: a truncated .so crashed every later run, an
# edited .kernels hung or aborted, a swapped .so ran the wrong kernels, a
# read-only folder was an error.
#   usage: cpu_kernel_cache.sh TESSERA_RUN EXAMPLES_DIR
set -u
RUN=$1 EX=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TESSERA_BACKEND=cpu
fail=0

run() {  # cache-dir program -> output in $T/out, status in $rc
  # The compiled-program cache (<dir>/cpu/programs/*.tsp) above the kernel
  # cache would answer first: cleared, so the code generator runs each time.
  rm -rf "$1/cpu/programs"
  TESSERA_CACHE_DIR=$1 timeout 120 "$RUN" "$2" --iterations 1 >"$T/out" 2>&1
  rc=$?
}
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; cat "$T/out"; fail=1; }

# expect_recovered NAME WANT: the run succeeded and warned with WANT.
expect_recovered() {
  if [[ $rc -ne 0 ]]; then bad "$1: exit $rc (want 0)"
  elif ! grep -q "$2" "$T/out"; then bad "$1: no warning with '$2'"
  else ok "$1: $(grep -m1 'warning' "$T/out")"; fi
}

C=$T/cache
run "$C" "$EX/saxpy.mlir"
[[ $rc -eq 0 ]] || bad "first run: exit $rc"
so=$(ls "$C"/cpu/*.so 2>/dev/null | head -1)
meta=${so%.so}.kernels
if [[ -z "$so" || ! -f "$meta" ]]; then bad "no cache entry in $C/cpu"; exit 1; fi
head -1 "$meta" | grep -q '^tessera-cpu-kernels 3 [0-9a-f]* [0-9]* [0-9a-f]\{16\} [0-9a-f]\{16\}$' &&
  ok "header: $(head -1 "$meta")" || { bad "header: $(head -1 "$meta")"; }
ls "$C"/cpu | grep -q '\.tmp' && bad "temporary files left: $(ls "$C"/cpu)" || ok "no temporary files left"
cp "$so" "$T/good.so"; cp "$meta" "$T/good.kernels"
restore() { rm -rf "$so" "$meta"; cp "$T/good.so" "$so"; cp "$T/good.kernels" "$meta"; }

head -c 1000 "$T/good.so" >"$so"
run "$C" "$EX/saxpy.mlir"; expect_recovered "truncated .so" "unusable"
cmp -s "$so" "$T/good.so" && ok "truncated .so: compiled and stored again" || bad "truncated .so: not stored again"

restore; head -c 30 "$T/good.kernels" >"$meta"
run "$C" "$EX/saxpy.mlir"; expect_recovered "truncated .kernels" "unusable"

# An argument count of 10^11 once made the reader loop for hours.
restore; sed -i '2,$s/^\(kernel .*\) 3$/\1 99999999999/' "$meta"
cmp -s "$meta" "$T/good.kernels" && bad "the edit did not change the .kernels file"
run "$C" "$EX/saxpy.mlir"; expect_recovered "edited .kernels" "checksum"

# Another program's shared object under this key: exports other symbols.
restore; run "$T/other" "$EX/softmax.mlir"
cp "$(ls "$T"/other/cpu/*.so | head -1)" "$so"
run "$C" "$EX/saxpy.mlir"; expect_recovered "swapped .so" "not the shared object"

restore; rm "$so"; mkfifo "$so"
run "$C" "$EX/saxpy.mlir"; expect_recovered "FIFO as .so" "only regular files"

# Another program's whole entry (.so and .kernels, each vouching for the
# other) under this key: its header names its own key.  Before, it ran the
# other program's kernels, or failed every compile for good.
restore; other=$(ls "$T"/other/cpu/*.kernels | head -1)
cp "$other" "$meta"; cp "${other%.kernels}.so" "$so"
run "$C" "$EX/saxpy.mlir"; expect_recovered "another entry's pair" "written for the entry"

# The compiled-program cache above it (<dir>/cpu/programs/<key>.tsp): a byte
# changed inside the program's executable image is caught by its checksum.
restore; TESSERA_CACHE_DIR=$C "$RUN" "$EX/saxpy.mlir" --iterations 1 >/dev/null 2>&1
tsp=$(ls "$C"/cpu/programs/*.tsp 2>/dev/null | head -1)
if [[ -z "$tsp" ]]; then bad "no cached program in $C/cpu/programs"; else
  python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0x40; open(sys.argv[1], "wb").write(b)' "$tsp"
  TESSERA_CACHE_DIR=$C timeout 120 "$RUN" "$EX/saxpy.mlir" --iterations 1 >"$T/out" 2>&1; rc=$?
  expect_recovered "edited cached program" "checksum mismatch"
  # Another program's well-formed file under this key: it names its own.
  # Before, it answered silently for the wrong program.
  restore; TESSERA_CACHE_DIR=$T/other "$RUN" "$EX/softmax.mlir" --iterations 1 >/dev/null 2>&1
  other_tsp=$(ls "$T"/other/cpu/programs/*.tsp 2>/dev/null | head -1)
  cp "$other_tsp" "$tsp"
  TESSERA_CACHE_DIR=$C timeout 120 "$RUN" "$EX/saxpy.mlir" --iterations 1 >"$T/out" 2>&1; rc=$?
  expect_recovered "another program's cached file" "written for another program"
  # A FIFO in its place: the warning, then a new entry (before: the write
  # into the FIFO waited for a reader for ever).
  rm -f "$tsp"; mkfifo "$tsp"
  TESSERA_CACHE_DIR=$C timeout 120 "$RUN" "$EX/saxpy.mlir" --iterations 1 >"$T/out" 2>&1; rc=$?
  expect_recovered "FIFO as cached program" "not a regular file"
  [[ -f "$tsp" && ! -p "$tsp" ]] && ok "FIFO as cached program: replaced by the new entry" ||
    bad "FIFO as cached program: not replaced"
fi

# Cache folders that cannot be used: a regular file, a read-only file system
# (/proc; chmod does not stop root).
touch "$T/file"
run "$T/file" "$EX/saxpy.mlir"; expect_recovered "cache folder is a file" "compiling without it"
mkdir -p "$T/sub"; touch "$T/sub/cpu"
run "$T/sub" "$EX/saxpy.mlir"; expect_recovered "the plugin's cache folder is a file" "compiling without it"
run /proc/self/tessera-cache "$EX/saxpy.mlir"; expect_recovered "read-only cache folder" "compiling without it"

exit $fail
