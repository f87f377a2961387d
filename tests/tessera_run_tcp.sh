#!/usr/bin/env bash
# SPMD programs across processes without MPI (docs/spmd.md, "Without MPI"):
# processes started by this script, each told TESSERA_COORDINATOR (where
# process 0 listens), TESSERA_NUM_PROCESSES and TESSERA_PROCESS_ID, meet
# over TCP.  Results are verified by each tessera-run and must be the same
# bits as the single-process run; bad setups fail with their message in
# bounded time (every process runs under `timeout`).
#   usage: tessera_run_tcp.sh TESSERA_RUN REPO_ROOT
set -u
RUN=$1 ROOT=$2
EX=$ROOT/examples
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TESSERA_BACKEND=cpu
unset TESSERA_CPU_DEVICES TESSERA_VISIBLE_DEVICES OMPI_COMM_WORLD_SIZE PMI_SIZE
fail=0
check() {  # check NAME RC: report
  if [ "$2" -eq 0 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# launch N PREFIX ARGS...: N tessera-runs (process p's output in
# PREFIX.p, its exit code in PREFIX.p.rc); waits for all.
launch() {
  local n=$1 prefix=$2
  shift 2
  local port
  port=$(free_port)
  for ((p = 0; p < n; ++p)); do
    (TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=$n TESSERA_PROCESS_ID=$p \
       timeout -k 5 120 "$RUN" "$@" > "$prefix.$p" 2>&1; echo $? > "$prefix.$p.rc") &
  done
  wait
}
rc_of() { cat "$1.rc"; }

"$RUN" "$EX/tp_mlp.mlir" --iterations 1 --warmup 0 --output "$T/single.npy" > "$T/single" 2>&1 ||
  { cat "$T/single"; check "single-process tp_mlp" 1; }

# tp_mlp on 2 processes, plain and overlapped: verified, bit-identical.
for chunks in 0 4; do
  launch 2 "$T/tp$chunks" "$EX/tp_mlp.mlir" --iterations 2 --warmup 0 --overlap-chunks $chunks --output "$T/tp$chunks.npy"
  cat "$T/tp$chunks.0"
  check "tp_mlp --overlap-chunks $chunks on 2 processes over tcp: verified" \
    $(( $(rc_of "$T/tp$chunks.0") != 0 || $(rc_of "$T/tp$chunks.1") != 0 || ! $(grep -c "in 2 processes (tcp)" "$T/tp$chunks.0") ))
  cmp -s "$T/single.npy" "$T/tp$chunks.npy"
  check "tp_mlp --overlap-chunks $chunks over tcp: bit-identical to one process" $?
done

# Every collective on 4 processes, and 2 processes x 2 devices.
"$RUN" "$EX/spmd_collectives.mlir" --iterations 1 --warmup 0 --output "$T/c_single0.npy" --output "$T/c_single1.npy" \
  > "$T/c_single" 2>&1 || { cat "$T/c_single"; check "single-process spmd_collectives" 1; }
launch 4 "$T/c4" "$EX/spmd_collectives.mlir" --iterations 1 --warmup 0 --output "$T/c4_0.npy" --output "$T/c4_1.npy"
cat "$T/c4.0"
check "spmd_collectives on 4 processes over tcp: verified" \
  $(( $(rc_of "$T/c4.0") + $(rc_of "$T/c4.1") + $(rc_of "$T/c4.2") + $(rc_of "$T/c4.3") != 0 ))
cmp -s "$T/c_single0.npy" "$T/c4_0.npy" && cmp -s "$T/c_single1.npy" "$T/c4_1.npy"
check "spmd_collectives on 4 processes: bit-identical to one process" $?
TESSERA_CPU_DEVICES=2 launch 2 "$T/h" "$EX/spmd_collectives.mlir" --iterations 1 --warmup 0 --output "$T/h0.npy" --output "$T/h1.npy"
check "spmd_collectives on 2 processes x 2 devices over tcp: verified" \
  $(( $(rc_of "$T/h.0") + $(rc_of "$T/h.1") != 0 ))
cmp -s "$T/c_single0.npy" "$T/h0.npy"; check "hybrid: bit-identical to one process" $?

# Bad setups.
TESSERA_COORDINATOR=127.0.0.1:1 TESSERA_NUM_PROCESSES=2 timeout 60 "$RUN" "$EX/tp_mlp.mlir" > "$T/noid" 2>&1
rc=$?
check "a missing TESSERA_PROCESS_ID: exit 1, says what to set" \
  $(( rc != 1 || ! $(grep -c "TESSERA_PROCESS_ID (0..N-1) must be set too" "$T/noid") ))
port=$(free_port)
start=$SECONDS
TESSERA_TCP_TIMEOUT=2 TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=0 \
  timeout 60 "$RUN" "$EX/tp_mlp.mlir" > "$T/alone" 2>&1
rc=$?
cat "$T/alone"
check "process 1 never comes: process 0 stops after TESSERA_TCP_TIMEOUT, saying who is missing" \
  $(( rc != 2 || SECONDS - start > 30 || ! $(grep -c "1 more of 2 processes" "$T/alone") ))
# Process 1 fails alone (an input file that does not exist): it exits, and
# process 0 fails as soon as its connection closes, not at the timeout.
port=$(free_port)
start=$SECONDS
(TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=1 \
   timeout 60 "$RUN" "$EX/tp_mlp.mlir" --input "$T/none.npy" > "$T/bad.1" 2>&1; echo $? > "$T/bad.1.rc") &
TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=0 \
  timeout 60 "$RUN" "$EX/tp_mlp.mlir" > "$T/bad.0" 2>&1
rc=$?
wait
cat "$T/bad.0" "$T/bad.1"
check "process 1 fails alone: it exits 1, process 0 fails at once naming it" \
  $(( rc == 0 || $(cat "$T/bad.1.rc") != 1 || SECONDS - start > 30 || ! $(grep -c "process 1 closed the connection" "$T/bad.0") ))
port=$(free_port)
start=$SECONDS
(TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=1 \
   timeout 60 "$RUN" "$EX/spmd_collectives.mlir" > "$T/mm.1" 2>&1; echo $? > "$T/mm.1.rc") &
TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=0 \
  timeout 60 "$RUN" "$EX/tp_mlp.mlir" > "$T/mm.0" 2>&1
rc=$?
wait
cat "$T/mm.0"
check "two programs (MPMD): refused by both, naming what each runs" \
  $(( rc != 1 || ! $(grep -c "the processes disagree on the program" "$T/mm.0") || SECONDS - start > 30 ))
# A FIFO named as the program, placed with --mesh: every process hashes
# the program to check they agree, and that read blocked on the FIFO
# forever; now each says it is not a program file.
mkfifo "$T/fifo.mlir"
launch 2 "$T/fifo" "$T/fifo.mlir" --mesh tp=2 --iterations 1
check "a FIFO as the program on 2 processes: both exit 1 at once, 'not a regular file'" \
  $(( $(rc_of "$T/fifo.0") != 1 || $(rc_of "$T/fifo.1") != 1 || ! $(grep -c "not a regular file" "$T/fifo.0") ))

exit $fail
