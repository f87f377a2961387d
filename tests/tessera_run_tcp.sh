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
# Process 1 fails alone (a backend that does not exist, after the processes
# agreed on the program): it exits, and process 0 fails as soon as its
# connection closes, not at the timeout.
port=$(free_port)
start=$SECONDS
(TESSERA_BACKEND=nope TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=1 \
   timeout 60 "$RUN" "$EX/tp_mlp.mlir" > "$T/bad.1" 2>&1; echo $? > "$T/bad.1.rc") &
TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=0 \
  timeout 60 "$RUN" "$EX/tp_mlp.mlir" > "$T/bad.0" 2>&1
rc=$?
wait
cat "$T/bad.0" "$T/bad.1"
check "process 1 fails alone: it exits non-zero, process 0 fails at once naming it" \
  $(( rc == 0 || $(cat "$T/bad.1.rc") == 0 || ! $(grep -c "unknown backend 'nope'" "$T/bad.1") || SECONDS - start > 30 || ! $(grep -c "process 1 closed the connection" "$T/bad.0") ))
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
  $(( rc != 1 || ! $(grep -c "the program is '$EX/tp_mlp.mlir (contents [0-9a-f]*)' on rank 0, '$EX/spmd_collectives.mlir" "$T/mm.0") || SECONDS - start > 30 ))
# Settings and inputs every process must share: other --iterations left
# rank 0 waiting for a peer that had exited 0; other inputs (or --output
# on one rank only) gave wrong results with exit 0.  Both processes exit 1,
# rank 0 naming each difference.  Inputs of the same contents at other
# paths are fine.
"$RUN" "$EX/tp_mlp.mlir" --iterations 1 --no-check --output "$T/in_a.npy" > /dev/null 2>&1
python3 - "$T/in_a.npy" "$T/in_b.npy" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[-1] ^= 0x01  # one value differs
open(sys.argv[2], "wb").write(b)
PY
port=$(free_port)
(TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=1 \
   timeout 60 "$RUN" "$EX/tp_mlp.mlir" --iterations 1 > "$T/it.1" 2>&1; echo $? > "$T/it.1.rc") &
TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=0 \
  timeout 60 "$RUN" "$EX/tp_mlp.mlir" --iterations 5 > "$T/it.0" 2>&1
rc=$?
wait
cat "$T/it.0"
check "other --iterations: both exit 1 at once, naming it" \
  $(( rc != 1 || $(rc_of "$T/it.1") != 1 || ! $(grep -c "\-\-iterations is '5' on rank 0, '1' on rank 1" "$T/it.0") ))
# two_ranks NAME "ARGS0" "ARGS1": process 0 and 1 of a TCP run with their own
# arguments (output in $T/NAME.p, exit code in $T/NAME.p.rc).
two_ranks() {
  local name=$1 port
  port=$(free_port)
  for p in 0 1; do
    local args=$2
    [ $p -eq 1 ] && args=$3
    # shellcheck disable=SC2086  # the arguments are words
    (TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=$p \
       timeout -k 5 60 "$RUN" $args > "$T/$name.$p" 2>&1; echo $? > "$T/$name.$p.rc") &
  done
  wait
}
two_ranks inputs "$EX/tp_mlp.mlir --iterations 1 --input $T/in_a.npy" "$EX/tp_mlp.mlir --iterations 1 --input $T/in_b.npy"
cat "$T/inputs.0"
check "other --input contents: both exit 1, naming it" \
  $(( $(rc_of "$T/inputs.0") != 1 || $(rc_of "$T/inputs.1") != 1 || ! $(grep -c "\-\-input is 'contents [0-9a-f]*' on rank 0, 'contents [0-9a-f]*' on rank 1" "$T/inputs.0") ))
two_ranks outputs "$EX/tp_mlp.mlir --iterations 1" "$EX/tp_mlp.mlir --iterations 1 --output $T/lost.npy"
check "--output on rank 1 only: both exit 1 (only rank 0 writes results)" \
  $(( $(rc_of "$T/outputs.0") != 1 || ! $(grep -c "the number of --output files is '0' on rank 0, '1' on rank 1" "$T/outputs.0") ))
# Another program listening on the coordinator's port (it accepts, never
# answers): process 1 says so after half its timeout, instead of waiting
# it all out and blaming process 0.
port=$(free_port)
python3 -c "
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(5)
c = s.accept(); time.sleep(30)" "$port" &
squatter=$!
sleep 1
start=$SECONDS
TESSERA_TCP_TIMEOUT=6 TESSERA_COORDINATOR=127.0.0.1:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=1 \
  timeout 60 "$RUN" "$EX/tp_mlp.mlir" > "$T/squat" 2>&1
rc=$?
kill $squatter 2>/dev/null; wait $squatter 2>/dev/null
cat "$T/squat"
check "another program on the coordinator's port: process 1 says so within half its timeout" \
  $(( rc == 0 || SECONDS - start > 10 || ! $(grep -c "is another program listening on that port" "$T/squat") ))
# A host name as the coordinator (it had to be an IPv4 literal).
port=$(free_port)
(TESSERA_COORDINATOR=localhost:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=1 \
   timeout 60 "$RUN" "$EX/tp_mlp.mlir" --iterations 1 > "$T/host.1" 2>&1; echo $? > "$T/host.1.rc") &
TESSERA_COORDINATOR=localhost:$port TESSERA_NUM_PROCESSES=2 TESSERA_PROCESS_ID=0 \
  timeout 60 "$RUN" "$EX/tp_mlp.mlir" --iterations 1 > "$T/host.0" 2>&1
rc=$?
wait
check "TESSERA_COORDINATOR=localhost:PORT: runs and passes" $(( rc != 0 || $(rc_of "$T/host.1") != 0 ))
cp "$T/in_a.npy" "$T/in_a_copy.npy"
two_ranks same_data "$EX/tp_mlp.mlir --iterations 1 --input $T/in_a.npy" "$EX/tp_mlp.mlir --iterations 1 --input $T/in_a_copy.npy"
cat "$T/same_data.0"
check "the same input contents at other paths: runs and passes" \
  $(( $(rc_of "$T/same_data.0") != 0 || $(rc_of "$T/same_data.1") != 0 ))

# A FIFO named as the program, placed with --mesh: every process hashes
# the program to check they agree, and that read blocked on the FIFO
# forever; now each says it is not a program file.
mkfifo "$T/fifo.mlir"
launch 2 "$T/fifo" "$T/fifo.mlir" --mesh tp=2 --iterations 1
check "a FIFO as the program on 2 processes: both exit 1 at once, 'not a regular file'" \
  $(( $(rc_of "$T/fifo.0") != 1 || $(rc_of "$T/fifo.1") != 1 || ! $(grep -c "not a regular file" "$T/fifo.0") ))

exit $fail
