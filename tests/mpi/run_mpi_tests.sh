#!/usr/bin/env bash
# SPMD and collectives across processes over MPI (docs/spmd.md, "Across
# processes"), one ctest per CASE.  Every mpirun runs under `timeout`, so a
# hang is a failure, never a stuck CI job (the ctests have a TIMEOUT too).
# Exit 77 (ctest SKIP) only when MPI is genuinely absent: no mpirun, or a
# build without MPI (no tessera-mpi-test).
#   usage: run_mpi_tests.sh CASE BIN_DIR REPO_ROOT
set -u
CASE=$1 BIN=$2 ROOT=$3
EX=$ROOT/examples
if ! command -v mpirun >/dev/null 2>&1; then
  echo "mpi tests: no mpirun (apt-get install openmpi-bin libopenmpi-dev): skipped"; exit 77
fi
if [ ! -x "$BIN/tessera-mpi-test" ]; then
  echo "mpi tests: built without MPI (TESSERA_WITH_MPI=OFF): skipped"; exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TESSERA_BACKEND=cpu
unset TESSERA_CPU_DEVICES TESSERA_VISIBLE_DEVICES
# Loopback only; as root Open MPI wants the two variables; --oversubscribe:
# more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm_rsh_agent=
# Sanitizer builds (scripts/sanitize.sh address): LeakSanitizer reports
# Open MPI's own allocations (libmpi, and MCA components it has dlclosed,
# "<unknown module>"), which no suppression can name; the MPI processes
# run without leak checking (ASan and UBSan stay on; the core's side of
# these communicators is leak-checked by tessera_tests, ProcessCollectives*).
if [ -n "${ASAN_OPTIONS:-}" ]; then export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"; fi
MPIRUN="timeout -k 5 120 mpirun --oversubscribe"
fail=0
check() {  # check NAME COND_RC: report
  if [ "$2" -eq 0 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
# bits_equal A.npy B.npy: the same bytes (the results bit for bit).
bits_equal() { cmp -s "$1" "$2"; }

case $CASE in
  collectives2|collectives4)
    n=${CASE#collectives}
    $MPIRUN -np "$n" "$BIN/tessera-mpi-test" > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "every collective, $n processes x 1 device" $(( rc != 0 || ! $(grep -c "mpi test: .*ok" "$T/out") ))
    ;;
  collectives_timeout)
    # The nonblocking forms (polled against TESSERA_MPI_TIMEOUT), 2 x 2.
    TESSERA_MPI_TIMEOUT=100 TESSERA_CPU_DEVICES=2 $MPIRUN -np 2 -x TESSERA_MPI_TIMEOUT -x TESSERA_CPU_DEVICES \
      "$BIN/tessera-mpi-test" > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "every collective through MPI's nonblocking calls (TESSERA_MPI_TIMEOUT set)" $(( rc != 0 || ! $(grep -c "4 ranks in 2 processes.*ok" "$T/out") ))
    ;;
  collectives_hybrid)
    TESSERA_CPU_DEVICES=2 $MPIRUN -np 2 -x TESSERA_CPU_DEVICES "$BIN/tessera-mpi-test" > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "every collective, 2 processes x 2 devices" $(( rc != 0 || ! $(grep -c "4 ranks in 2 processes.*ok" "$T/out") ))
    ;;
  collectives_chunked)
    # TESSERA_MPI_MAX_MESSAGE_BYTES=4096: every collective of more than a
    # few hundred elements is split into pieces (what a collective over
    # 2 GiB needs: MPI counts are ints), once with one rank per process and
    # once with two; every result is still checked element by element.
    TESSERA_MPI_MAX_MESSAGE_BYTES=4096 $MPIRUN -np 2 -x TESSERA_MPI_MAX_MESSAGE_BYTES \
      "$BIN/tessera-mpi-test" > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "every collective in 4 KiB pieces, 2 processes x 1 device" $(( rc != 0 || ! $(grep -c "mpi test: .*ok" "$T/out") ))
    TESSERA_MPI_MAX_MESSAGE_BYTES=4096 TESSERA_CPU_DEVICES=2 $MPIRUN -np 2 -x TESSERA_MPI_MAX_MESSAGE_BYTES \
      -x TESSERA_CPU_DEVICES "$BIN/tessera-mpi-test" > "$T/out2" 2>&1; rc=$?
    cat "$T/out2"
    check "every collective in 4 KiB pieces, 2 processes x 2 devices" $(( rc != 0 || ! $(grep -c "4 ranks in 2 processes.*ok" "$T/out2") ))
    ;;
  collectives_vulkan)
    # Vulkan buffers (lavapipe here) are staged through host memory.
    TESSERA_BACKEND=vulkan $MPIRUN -np 2 -x TESSERA_BACKEND "$BIN/tessera-mpi-test" > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    if [ $rc -eq 77 ] || grep -q "vulkan.*not available\|no usable backend" "$T/out" && [ $rc -ne 0 ]; then
      echo "mpi tests: the vulkan backend is unavailable: skipped"; exit 77
    fi
    check "every collective on vulkan buffers (host-staged), 2 processes" $(( rc != 0 || ! $(grep -c "2 ranks in 2 processes on vulkan.*ok" "$T/out") ))
    ;;
  collectives_plugin)
    # The plugin's own collectives across processes (ABI 1.4; the cpu
    # plugin's: shared memory), chosen by TESSERA_PROCESS_COLLECTIVES=plugin:
    # every collective with 2 and 4 processes and 2 x 2, a count mismatch
    # named on every rank, a dead process noticed; and SPMD programs bit for
    # bit equal to the single-process run.
    export TESSERA_PROCESS_COLLECTIVES=plugin
    X=(-x TESSERA_PROCESS_COLLECTIVES)
    for np in 2 4; do
      $MPIRUN -np $np "${X[@]}" "$BIN/tessera-mpi-test" > "$T/out" 2>&1; rc=$?
      cat "$T/out"
      check "every collective, $np processes x 1 device, through the plugin" \
        $(( rc != 0 || ! $(grep -c "$np ranks in $np processes on cpu .*data moved by the plugin): ok" "$T/out") ))
    done
    TESSERA_CPU_DEVICES=2 $MPIRUN -np 2 "${X[@]}" -x TESSERA_CPU_DEVICES "$BIN/tessera-mpi-test" > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "every collective, 2 processes x 2 devices, through the plugin" \
      $(( rc != 0 || ! $(grep -c "4 ranks in 2 processes on cpu .*data moved by the plugin): ok" "$T/out") ))
    $MPIRUN -np 2 "${X[@]}" "$BIN/tessera-mpi-test" --mismatch > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "ranks that disagree on the count fail together, naming both (plugin)" \
      $(( rc != 0 || ! $(grep -c "detected on every rank: ok" "$T/out") ))
    start=$(date +%s)
    $MPIRUN -np 2 "${X[@]}" "$BIN/tessera-mpi-test" --die > "$T/out" 2>&1; rc=$?
    took=$(( $(date +%s) - start ))
    cat "$T/out"
    check "a rank that dies mid-collective ends the job within ${took} s (plugin)" $(( rc == 0 || rc == 124 || took >= 110 ))
    if [ -x "$BIN/tessera-run" ]; then
      for prog in tp_mlp spmd_collectives; do
        np=2; [ "$prog" = spmd_collectives ] && np=4
        "$BIN/tessera-run" "$EX/$prog.mlir" --iterations 1 --warmup 0 --output "$T/single.npy" > "$T/single" 2>&1 ||
          { cat "$T/single"; check "single-process run" 1; }
        $MPIRUN -np $np "${X[@]}" "$BIN/tessera-run" "$EX/$prog.mlir" --iterations 2 --warmup 0 \
          --output "$T/mpi.npy" > "$T/mpi" 2>&1; rc=$?
        cat "$T/mpi"
        check "$prog under mpirun -np $np through the plugin: verified" \
          $(( rc != 0 || ! $(grep -c "processes (mpi .*; data moved by the cpu plugin)" "$T/mpi") ))
        bits_equal "$T/single.npy" "$T/mpi.npy"; check "$prog through the plugin: bit-identical to the single-process run" $?
      done
    fi
    ;;
  mismatch)
    $MPIRUN -np 2 "$BIN/tessera-mpi-test" --mismatch > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "ranks that disagree on the count fail together, naming both" $(( rc != 0 || ! $(grep -c "detected on every rank: ok" "$T/out") ))
    ;;
  dead_rank)
    start=$(date +%s)
    $MPIRUN -np 2 "$BIN/tessera-mpi-test" --die > "$T/out" 2>&1; rc=$?
    took=$(( $(date +%s) - start ))
    cat "$T/out"
    echo "mpirun exit $rc after ${took} s"
    # Non-zero, well before timeout's limit (124): mpirun ended the job itself.
    check "a rank that dies mid-collective ends the job within ${took} s (no hang)" $(( rc == 0 || rc == 124 || took >= 110 ))
    ;;
  stuck_rank)
    start=$(date +%s)
    TESSERA_MPI_TIMEOUT=3 $MPIRUN -np 2 -x TESSERA_MPI_TIMEOUT "$BIN/tessera-mpi-test" --stuck > "$T/out" 2>&1; rc=$?
    took=$(( $(date +%s) - start ))
    cat "$T/out"
    echo "mpirun exit $rc after ${took} s"
    check "a rank that never reaches the collective: TESSERA_MPI_TIMEOUT=3 aborts the job (${took} s)" \
      $(( rc == 0 || took >= 60 || ! $(grep -c "did not complete within 3 s (TESSERA_MPI_TIMEOUT)" "$T/out") ))
    ;;
  tp_mlp|spmd_collectives|spmd_collectives_hybrid|dp_adam_global|tp_attention_global|tp_attention_fused_qkv_global|\
  sp_mlp_global|sp_mlp_global_hybrid)
    prog=${CASE%_hybrid}
    np=2; [ "$CASE" = spmd_collectives ] || [ "$CASE" = sp_mlp_global ] && np=4
    # The results each program has (an --output more than results is an
    # error): spmd_collectives 2, dp_adam_global 3 (the weight, assembled
    # by the all_gather the sharding pass inserts, and the moments' parts).
    nres=1; [ "$prog" = spmd_collectives ] && nres=2; [ "$prog" = dp_adam_global ] && nres=3
    souts=() outs=()
    for ((r = 0; r < nres; ++r)); do souts+=(--output "$T/single$r.npy"); outs+=(--output "$T/mpi$r.npy"); done
    "$BIN/tessera-run" "$EX/$prog.mlir" --iterations 1 --warmup 0 "${souts[@]}" > "$T/single" 2>&1 ||
      { cat "$T/single"; check "single-process run" 1; }
    extra=()
    if [ "${CASE%_hybrid}" != "$CASE" ]; then np=2; extra=(-x TESSERA_CPU_DEVICES); export TESSERA_CPU_DEVICES=2; fi
    $MPIRUN -np $np "${extra[@]}" "$BIN/tessera-run" "$EX/$prog.mlir" --iterations 1 --warmup 0 "${outs[@]}" \
      > "$T/mpi" 2>&1; rc=$?
    unset TESSERA_CPU_DEVICES
    cat "$T/mpi"
    check "$prog under mpirun -np $np: verified against the reference" $(( rc != 0 || ! $(grep -c "processes (mpi" "$T/mpi") ))
    for ((r = 0; r < nres; ++r)); do
      bits_equal "$T/single$r.npy" "$T/mpi$r.npy"; check "$prog: result $r bit-identical to the single-process run" $?
    done
    ;;
  data_parallel)
    # Data-parallel training (examples/train_dp_mlp.mlir: each process one
    # half of the batch, the weight gradients all_reduced): the same loss
    # at every step as the single-process run (as printed, 6 digits).
    "$BIN/tessera-run" "$EX/train_dp_mlp.mlir" --iterations 10 > "$T/single" 2>&1 ||
      { cat "$T/single"; check "single-process run" 1; }
    $MPIRUN -np 2 "$BIN/tessera-run" "$EX/train_dp_mlp.mlir" --iterations 10 > "$T/mpi" 2>&1; rc=$?
    cat "$T/mpi"
    check "train_dp_mlp under mpirun -np 2: verified" $(( rc != 0 || ! $(grep -c "processes (mpi" "$T/mpi") ))
    grep "^step " "$T/single" > "$T/single.steps"; grep "^step " "$T/mpi" > "$T/mpi.steps"
    [ -s "$T/single.steps" ] && cmp -s "$T/single.steps" "$T/mpi.steps"
    check "train_dp_mlp: the losses of every step equal the single-process run's" $?
    ;;
  tp_mlp_overlap)
    # The stage and its all_reduce pipelined in row blocks on a second
    # stream (--overlap-chunks, docs/spmd.md "Overlap"): verified, and the
    # same bits as the plain plan, in one process (2 cpu devices) and in 2.
    "$BIN/tessera-run" "$EX/tp_mlp.mlir" --iterations 1 --warmup 0 --output "$T/plain.npy" > "$T/plain" 2>&1 ||
      { cat "$T/plain"; check "plain single-process run" 1; }
    "$BIN/tessera-run" "$EX/tp_mlp.mlir" --overlap-chunks 4 --iterations 3 --warmup 0 --output "$T/one.npy" \
      > "$T/one" 2>&1; rc=$?
    cat "$T/one"
    check "tp_mlp --overlap-chunks 4 in one process: verified" $(( rc != 0 || ! $(grep -c "4 collectives" "$T/one") ))
    bits_equal "$T/plain.npy" "$T/one.npy"; check "tp_mlp overlapped (one process): bit-identical to the plain plan" $?
    $MPIRUN -np 2 "$BIN/tessera-run" "$EX/tp_mlp.mlir" --overlap-chunks 3 --iterations 3 --warmup 0 \
      --output "$T/mpi.npy" > "$T/mpi" 2>&1; rc=$?
    cat "$T/mpi"
    # 3 does not divide 256 rows: the largest count below that does (2).
    check "tp_mlp --overlap-chunks 3 under mpirun -np 2: verified" \
      $(( rc != 0 || ! $(grep -c "2 collectives on 2 devices in 2 processes" "$T/mpi") ))
    bits_equal "$T/plain.npy" "$T/mpi.npy"; check "tp_mlp overlapped (2 processes): bit-identical to the plain plan" $?
    ;;
  bad_launches)
    $MPIRUN -np 4 "$BIN/tessera-run" "$EX/tp_mlp.mlir" --iterations 1 > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "more processes than mesh devices: exit 2 and a message" \
      $(( rc != 2 || ! $(grep -c "mpirun started 4 processes, but the program's mesh has 2 devices" "$T/out") ))
    $MPIRUN -np 3 "$BIN/tessera-run" "$EX/spmd_collectives.mlir" --iterations 1 > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "a process count that does not divide the mesh: exit 2 and a message" \
      $(( rc != 2 || ! $(grep -c "3 processes cannot share equally" "$T/out") ))
    # Fewer processes than devices, with too few devices each.
    TESSERA_CPU_DEVICES=1 $MPIRUN -np 2 -x TESSERA_CPU_DEVICES "$BIN/tessera-run" "$EX/spmd_collectives.mlir" \
      --iterations 1 > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "fewer processes than devices without enough devices each: exit 2 and a message" \
      $(( rc != 2 || ! $(grep -c "2 in each of 2 processes; backend cpu has 1" "$T/out") ))
    # Two programs (MPMD): the processes disagree on the program.
    $MPIRUN -np 1 "$BIN/tessera-run" "$EX/tp_mlp.mlir" --iterations 1 : \
            -np 1 "$BIN/tessera-run" "$EX/tp_mlp.mlir" --iterations 1 --seed 7 > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "processes that run different programs: exit 1, naming the ranks" \
      $(( rc != 1 || ! $(grep -c "the processes disagree on the program, its inputs or its settings; --seed is '42' on rank 0, '7' on rank 1" "$T/out") ))
    # Other --iterations: rank 1 finished and rank 0 waited in a collective
    # forever; now both refuse at the start.
    timeout 120 $MPIRUN -np 1 "$BIN/tessera-run" "$EX/tp_mlp.mlir" --iterations 5 : \
            -np 1 "$BIN/tessera-run" "$EX/tp_mlp.mlir" --iterations 1 > "$T/out" 2>&1; rc=$?
    cat "$T/out"
    check "processes with other --iterations: exit 1 at once, naming the setting" \
      $(( rc != 1 || ! $(grep -c "\-\-iterations is '5' on rank 0, '1' on rank 1" "$T/out") ))
    ;;
  one_rank_fails)
    # Rank 1 alone fails (a backend that does not exist, after the ranks
    # agreed on the program and its settings) while rank 0 goes on into the
    # collectives: rank 1 calls MPI_Abort, the job ends with its exit code
    # instead of rank 0 waiting for ever.
    start=$(date +%s)
    $MPIRUN -np 1 "$BIN/tessera-run" "$EX/tp_mlp.mlir" --iterations 1 : \
            -np 1 env TESSERA_BACKEND=nope "$BIN/tessera-run" "$EX/tp_mlp.mlir" --iterations 1 > "$T/out" 2>&1; rc=$?
    took=$(( $(date +%s) - start ))
    cat "$T/out"
    echo "mpirun exit $rc after ${took} s"
    check "a rank that fails alone ends the job (non-zero, rank 1's reason, no hang)" \
      $(( rc == 0 || took >= 110 || ! $(grep -c "unknown backend 'nope'" "$T/out") ))
    ;;
  *) echo "unknown case $CASE"; exit 2 ;;
esac
exit $fail
