#!/usr/bin/env bash
# SPMD Graph IR programs under tessera-run (docs/spmd.md), end to end:
# - the global result assembled from the devices' results equals the same
#   computation run unsplit on one device, from the same global inputs;
# - bad setups get a clear message and the documented exit code.
#   usage: tessera_run_spmd.sh TESSERA_RUN REPO_ROOT
set -u
RUN=$1 ROOT=$2
EX=$ROOT/examples TD=$ROOT/tools/tessera-run/testdata
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TESSERA_BACKEND=cpu
unset TESSERA_CPU_DEVICES TESSERA_VISIBLE_DEVICES
fail=0

# rand_npy PATH SEED DIM...: float32 in [-1, 1).
rand_npy() {
  python3 - "$@" <<'PY'
import random, struct, sys
path, seed, shape = sys.argv[1], int(sys.argv[2]), [int(d) for d in sys.argv[3:]]
n = 1
for d in shape: n *= d
rng = random.Random(seed)
d = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d," % s for s in shape)
d = d.encode(); d += b' ' * ((64 - (10 + len(d) + 1) % 64) % 64) + b'\n'
data = struct.pack('<%df' % n, *[rng.uniform(-1, 1) for _ in range(n)])
open(path, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(d)) + d + data)
PY
}
# same NAME A.npy B.npy REL_TOL: the two float32 arrays agree.
same() {
  if python3 - "$2" "$3" "$4" <<'PY'
import ast, struct, sys
def load(p):
    b = open(p, 'rb').read()
    hl = struct.unpack('<H', b[8:10])[0]
    h = ast.literal_eval(b[10:10 + hl].decode())
    assert h['descr'] == '<f4', h
    n = 1
    for d in h['shape']: n *= d
    return h['shape'], struct.unpack('<%df' % n, b[10 + hl:10 + hl + 4 * n])
sa, a = load(sys.argv[1]); sb, b = load(sys.argv[2])
if tuple(sa) != tuple(sb): sys.exit('shapes differ: %s %s' % (sa, sb))
err = max(abs(x - y) for x, y in zip(a, b)); ref = max(abs(y) for y in b)
print('max abs difference %.3g (max |ref| %.3g)' % (err, ref))
sys.exit(0 if err <= float(sys.argv[3]) * max(1.0, ref) else 1)
PY
  then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
# expect NAME RC SUBSTRING ARGS...: exit code RC and the message.
expect() {
  local name=$1 want_rc=$2 want=$3; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [[ $rc -ne $want_rc ]]; then
    echo "FAIL $name: exit $rc (want $want_rc)"; echo "$out"; fail=1
  elif [[ "$out" != *"$want"* ]]; then
    echo "FAIL $name: output lacks '$want'"; echo "$out"; fail=1
  else
    echo "ok   $name"
  fi
}

# 1. Tensor-parallel MLP == the unsplit MLP.
rand_npy "$T/x.npy" 1 256 512
rand_npy "$T/w1.npy" 2 512 2048
rand_npy "$T/b1.npy" 3 2048
rand_npy "$T/w2.npy" 4 2048 512
rand_npy "$T/b2.npy" 5 512
IN=(--input "$T/x.npy" --input "$T/w1.npy" --input "$T/b1.npy" --input "$T/w2.npy" --input "$T/b2.npy")
"$RUN" "$TD/tp_mlp_global.mlir" "${IN[@]}" --iterations 1 --output "$T/ref.npy" || fail=1
expect tp_mlp.runs 0 "verify: 2 devices" "$RUN" "$EX/tp_mlp.mlir" "${IN[@]}" --iterations 1 --output "$T/out.npy"
same tp_mlp.global_equals_unsplit "$T/out.npy" "$T/ref.npy" 1e-4

# 2. The collectives example on a 2x2 mesh: its first result is
#    relu(x w + bias) of the global x and w.
rand_npy "$T/cx.npy" 6 128 128
rand_npy "$T/cw.npy" 7 128 128
rand_npy "$T/cb.npy" 8 128
CIN=(--input "$T/cx.npy" --input "$T/cw.npy" --input "$T/cb.npy")
"$RUN" "$TD/spmd_collectives_global.mlir" "${CIN[@]}" --iterations 1 --output "$T/cref.npy" || fail=1
expect collectives.runs 0 "verify: 4 devices" "$RUN" "$EX/spmd_collectives.mlir" "${CIN[@]}" --iterations 1 \
  --output "$T/cout.npy" --output "$T/cout1.npy" --output "$T/cout2.npy"
same collectives.global_equals_unsplit "$T/cout.npy" "$T/cref.npy" 1e-5
# The other global results have the shapes their shardings give.
if python3 - "$T" <<'PY'
import ast, struct, sys
for name, shape in (("cout1", (64, 128)), ("cout2", (256, 64))):
    b = open("%s/%s.npy" % (sys.argv[1], name), "rb").read()
    h = ast.literal_eval(b[10:10 + struct.unpack("<H", b[8:10])[0]].decode())
    assert tuple(h["shape"]) == shape, (name, h)
PY
then echo "ok   collectives.global_shapes"; else echo "FAIL collectives.global_shapes"; fail=1; fi
expect too_many_outputs 1 "4 --output files given, collectives has 3 results" \
  "$RUN" "$EX/spmd_collectives.mlir" --iterations 1 --output "$T/o1.npy" --output "$T/o2.npy" --output "$T/o3.npy" --output "$T/o4.npy"

# 3. A result of partial sums (reduce = ["tp"]): the global result is their
#    sum, x w of the global x and w.
rand_npy "$T/px.npy" 9 64 128
rand_npy "$T/pw.npy" 10 128 48
"$RUN" "$TD/matmul_global.mlir" --input "$T/px.npy" --input "$T/pw.npy" --iterations 1 --output "$T/pref.npy" || fail=1
expect partial_sums.runs 0 "verify: 4 devices" \
  "$RUN" "$TD/spmd_partial_sums.mlir" --input "$T/px.npy" --input "$T/pw.npy" --iterations 1 --output "$T/pout.npy"
same partial_sums.global_equals_unsplit "$T/pout.npy" "$T/pref.npy" 1e-5

# 4. Other element types: the collectives example on bf16 and i32 tensors
#    (the Communicator reduces bf16 in f32 and rounds once; i32 wraps).
sed 's/xf32/xbf16/g' "$EX/spmd_collectives.mlir" > "$T/coll_bf16.mlir"
expect collectives.bf16 0 "PASS" "$RUN" "$T/coll_bf16.mlir" --iterations 1
sed 's/xf32/xi32/g; s/tessera_graph.exp %c/tessera_graph.relu %c/' "$EX/spmd_collectives.mlir" > "$T/coll_i32.mlir"
expect collectives.i32 0 "tolerance 0 relative, default for i32): PASS" "$RUN" "$T/coll_i32.mlir" --iterations 1

# 5. A program that declares no placement, placed by --mesh and
#    --in-sharding / --out-sharding (docs/spmd.md, "Shardings given at
#    compile time"): sequence parallel around a Megatron MLP on 2 x 2, the
#    same as the program on one device.
rand_npy "$T/sx.npy" 11 64 32
rand_npy "$T/sw1.npy" 12 32 128
rand_npy "$T/sw2.npy" 13 128 32
SIN=(--input "$T/sx.npy" --input "$T/sw1.npy" --input "$T/sw2.npy")
"$RUN" "$TD/placed_mlp.mlir" "${SIN[@]}" --iterations 1 --output "$T/sref.npy" || fail=1
PLACE=(--mesh dp=2,tp=2 --in-sharding 'dp*tp,-' --in-sharding '-,tp' --in-sharding 'tp,-' --out-sharding 'dp*tp,-')
expect placed.runs 0 "2 collectives on 4 devices" \
  "$RUN" "$TD/placed_mlp.mlir" "${SIN[@]}" "${PLACE[@]}" --iterations 1 --output "$T/sout.npy"
same placed.global_equals_unsplit "$T/sout.npy" "$T/sref.npy" 1e-5
expect placed.verified 0 "verify: 4 devices" "$RUN" "$TD/placed_mlp.mlir" "${PLACE[@]}" --iterations 1
expect placed.unknown_axis 1 "argument 0: mesh @mesh has no axis 'pp'" \
  "$RUN" "$TD/placed_mlp.mlir" --mesh dp=2 --in-sharding 'pp,-' --iterations 1
expect placed.splits_nothing 1 "split no dim" "$RUN" "$TD/placed_mlp.mlir" --mesh dp=2 --iterations 1
expect placed.no_mesh 1 "give the mesh too" "$RUN" "$TD/placed_mlp.mlir" --in-sharding 'dp,-' --iterations 1
expect placed.bad_spec 1 "each dim is '-' (whole) or mesh axes joined by '*'" \
  "$RUN" "$TD/placed_mlp.mlir" --mesh dp=2 --in-sharding 'dp**,-'
expect placed.bad_mesh 1 "each axis is NAME=SIZE" "$RUN" "$TD/placed_mlp.mlir" --mesh dp=0
expect placed.declares_its_own 1 "declares its own placement" \
  "$RUN" "$EX/tp_mlp_global.mlir" --mesh tp=2 --in-sharding '-,-' --iterations 1
# Placed ahead of time by tessera-compile: the .tsp records the placement,
# so tessera-run places its reference the same way and checks the devices.
COMPILE=$(dirname "$RUN")/tessera-compile
expect placed.compiled_ahead 0 "wrote $T/placed.tsp" \
  "$COMPILE" "$TD/placed_mlp.mlir" --target cpu "${PLACE[@]}" -o "$T/placed.tsp"
expect placed.tsp_verified 0 "verify: 4 devices" \
  "$RUN" "$T/placed.tsp" "${SIN[@]}" --iterations 1 --output "$T/stsp.npy"
same placed.tsp_equals_unsplit "$T/stsp.npy" "$T/sref.npy" 1e-5
expect placed.tsp_is_placed_already 1 "is compiled already (its placement, if any, is in the file)" \
  "$RUN" "$T/placed.tsp" --mesh dp=2,tp=2 --iterations 1
expect placed.compile_bad_spec 1 "--in-sharding dp**: each dim is '-' (whole)" \
  "$COMPILE" "$TD/placed_mlp.mlir" --target cpu --mesh dp=2 --in-sharding 'dp**'
expect placed.compile_unknown_axis 1 "mesh @mesh has no axis 'pp'" \
  "$COMPILE" "$TD/placed_mlp.mlir" --target cpu --mesh dp=2 --in-sharding 'pp,-'

# 6. Bad setups.
# Meshes larger than a program runs on: refused by name, never a product
# that overflows (4 axes of 2^20 multiply past int64).
sed 's/axes = \["tp"\] shape = \[2\]/axes = ["tp", "x"] shape = [2, 4096]/' "$EX/tp_mlp.mlir" > "$T/bigmesh.mlir"
expect mesh_too_big 1 "mesh @mesh (2 x 4096) has more devices than a program runs on (4096)" \
  "$RUN" "$T/bigmesh.mlir" --iterations 1
sed 's/axes = \["tp"\] shape = \[2\]/axes = ["tp", "x"] shape = [4611686018427387904, 4]/' "$EX/tp_mlp.mlir" > "$T/hugemesh.mlir"
expect mesh_overflows 1 "op has more than 2147483647 devices" "$RUN" "$T/hugemesh.mlir" --iterations 1
expect mesh_option_overflows 1 "--mesh: 4 axes whose sizes multiply to more than a program runs on" \
  "$RUN" "$EX/mlp.mlir" --mesh a=1048576,b=1048576,c=1048576,d=1048576 --in-sharding 'a,-'
expect fp8_gather 0 "PASS" "$RUN" "$TD/spmd_fp8.mlir" --kernel gather --iterations 1
expect fp8_reduction 1 "reduces f8E4M3FN values: fp8 is a storage type" \
  "$RUN" "$TD/spmd_fp8.mlir" --kernel reduce --iterations 1
expect too_few_devices 2 "mesh needs 2 devices; backend cpu has 1 (set TESSERA_CPU_DEVICES=2" \
  env TESSERA_CPU_DEVICES=1 "$RUN" "$EX/tp_mlp.mlir" --iterations 1
expect local_shape_input 1 "expects the global f32 [512x2048] (local [512x1024], dim 1 over tp)" \
  "$RUN" "$EX/tp_mlp.mlir" --input "$T/x.npy" --input "$T/cx.npy" --iterations 1
expect wrong_replication 0 "warning: result 0 is replicated over some mesh axes" \
  "$RUN" "$TD/spmd_bad_sharding.mlir" --iterations 1
expect middle_dim_collectives 0 "verify: 2 devices" \
  "$RUN" "$TD/spmd_middle_dim.mlir" --iterations 1

exit $fail
