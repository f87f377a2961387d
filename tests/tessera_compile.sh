#!/usr/bin/env bash
# tessera-compile end to end: ahead-of-time programs that tessera-run loads
# and checks, emitted intermediate forms that the vendors' tools read, and
# every bad input a clear error with the documented exit code.
#   usage: tessera_compile.sh BIN_DIR REPO_ROOT
set -u
BIN=$1 ROOT=$2
EX=$ROOT/examples
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
unset TESSERA_BACKEND TESSERA_CPU_DEVICES
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; shift; printf '%s\n' "$@"; fail=1; }

# expect NAME RC SUBSTRING CMD...: exit code RC and SUBSTRING in the output.
expect() {
  local name=$1 rc=$2 want=$3; shift 3
  local out got
  out=$("$@" 2>&1); got=$?
  if [[ $got -ne $rc ]]; then bad "$name: exit $got (want $rc)" "$out"
  elif [[ "$out" != *"$want"* ]]; then bad "$name: output lacks '$want'" "$out"
  else ok "$name"; fi
}

# 1. cpu: compile ahead of time, then run the file (checked against the
#    source it names).
expect cpu.compile 0 "wrote $T/mlp.tsp: mlp for cpu" "$BIN/tessera-compile" "$EX/mlp.mlir" --target cpu -o "$T/mlp.tsp"
expect cpu.empty_output_name 1 "-o needs a file name" "$BIN/tessera-compile" "$EX/mlp.mlir" --target cpu -o ""
expect cpu.run_compiled 0 "PASS" env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/mlp.tsp" --iterations 1
# How to compile, given for a compiled file: refused (it was ignored).
expect cpu.compiled_ignores_no_option 1 "these options choose how a program is compiled: --schedule --compile-option" \
  env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/mlp.tsp" --iterations 1 --schedule tile-m=64 --compile-option opt_level=0
expect cpu.tile_kernel 0 "wrote $T/saxpy.tsp" "$BIN/tessera-compile" "$EX/saxpy.mlir" --target cpu -o "$T/saxpy.tsp"
expect cpu.run_tile 0 "PASS" env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/saxpy.tsp" --iterations 1
expect cpu.spmd 0 "wrote $T/tp.tsp" "$BIN/tessera-compile" "$EX/tp_mlp.mlir" --target cpu -o "$T/tp.tsp"
expect cpu.run_spmd 0 "verify: 2 devices" env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/tp.tsp" --iterations 1
# A program compiled from a relative path is checked from any folder: the
# image names its source by absolute path.
(cd "$ROOT" && "$BIN/tessera-compile" examples/softmax.mlir --target cpu -o "$T/rel.tsp" > /dev/null 2>&1) ||
  bad cpu.relative_compile
expect cpu.relative_source_elsewhere 0 "PASS" env -C "$T" TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/rel.tsp" --iterations 1
# The reference of a compiled program runs on its source only while the
# source is the text compiled (the image holds its SHA-256), read once and
# bounded: an edited source is "not checked" (exit 4), never a FAIL that
# blames the program; one that became a FIFO or /dev/zero never hangs.
cp "$EX/saxpy.mlir" "$T/src.mlir"
"$BIN/tessera-compile" "$T/src.mlir" --target cpu -o "$T/src.tsp" > /dev/null 2>&1 || bad cpu.source_compile
sed 's/fma(%av, %xv, %yv)/fma(%av, %yv, %xv)/' "$EX/saxpy.mlir" > "$T/src.mlir"
expect cpu.source_edited 4 "changed after it was compiled" env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/src.tsp" --iterations 1
rm "$T/src.mlir"; mkfifo "$T/src.mlir"
expect cpu.source_fifo 4 "not a regular file" timeout 60 env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/src.tsp" --iterations 1
rm "$T/src.mlir"; ln -s /dev/zero "$T/src.mlir"
expect cpu.source_dev_zero 4 "not a regular file" timeout 60 env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/src.tsp" --iterations 1
rm "$T/src.mlir"
expect cpu.source_gone 4 "no source of saxpy" env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/src.tsp" --iterations 1
# A compiled training program trains without its source (the image holds
# its tessera.update marks): the loss of step 3 is the source run's.
cp "$EX/train_mlp.mlir" "$T/train.mlir"
from_source=$(env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/train.mlir" --iterations 3 2>&1 | grep '^step 3:')
"$BIN/tessera-compile" "$T/train.mlir" --target cpu -o "$T/train.tsp" > /dev/null 2>&1 || bad cpu.train_compile
rm "$T/train.mlir"
from_image=$(env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/train.tsp" --iterations 3 2>&1 | grep '^step 3:')
if [[ -n "$from_source" && "$from_source" == "$from_image" ]]; then ok cpu.train_without_source
else bad cpu.train_without_source "from the source: '$from_source'" "from the image alone: '$from_image'"; fi
expect cpu.arch 0 "for cpu:x86-64" "$BIN/tessera-compile" "$EX/softmax.mlir" --target cpu:x86-64 -o "$T/sm.tsp"
# A cpu LLVM does not know: an error naming it (LLVM aborted code generation).
expect cpu.unknown_arch 1 "'nonexistentcpu' is not a CPU LLVM 16 knows" \
  "$BIN/tessera-compile" "$EX/softmax.mlir" --target cpu:nonexistentcpu -o "$T/bad.tsp"
expect cpu.arch_with_flags 1 "'x86-64 -mattr=+avx' is not a CPU LLVM 16 knows" \
  "$BIN/tessera-compile" "$EX/softmax.mlir" --target 'cpu:x86-64 -mattr=+avx' -o "$T/bad.tsp"

# 2. --emit: the target's own text.
expect cpu.emit_llvm 0 "wrote $T/mlp.ll" "$BIN/tessera-compile" "$EX/mlp.mlir" --target cpu --emit llvm -o "$T/mlp.ll"
grep -q "define void @tessera_kernel_mlp" "$T/mlp.ll" && ok cpu.emit_llvm.kernel || bad cpu.emit_llvm.kernel "$(head -5 "$T/mlp.ll")"
expect cpu.emit_asm 0 "wrote $T/mlp.s" "$BIN/tessera-compile" "$EX/mlp.mlir" --target cpu --emit asm -o "$T/mlp.s"
grep -q "tessera_kernel_mlp:" "$T/mlp.s" && ok cpu.emit_asm.kernel || bad cpu.emit_asm.kernel "$(head -5 "$T/mlp.s")"
if "$BIN/tessera-compile" --list-targets 2>/dev/null | grep -q "^vulkan"; then
  expect vulkan.emit_spirv 0 "wrote" "$BIN/tessera-compile" "$EX/softmax.mlir" --target vulkan --emit spirv -o "$T/sm.spv"
  n=0
  for f in "$T"/sm*.spv; do
    n=$((n + 1))
    if spirv-val --target-env vulkan1.1 "$f"; then ok "vulkan.spirv_val $(basename "$f")"
    else bad "vulkan.spirv_val $(basename "$f")"; fi
  done
  [[ $n -ge 1 ]] || bad "vulkan.emit_spirv wrote no module"
  expect vulkan.emit_asm 0 "wrote $T/sm.spvasm" "$BIN/tessera-compile" "$EX/softmax.mlir" --target vulkan --emit spirv-asm -o "$T/sm.spvasm"
  grep -q "OpEntryPoint GLCompute" "$T/sm.spvasm" && ok vulkan.emit_asm.entry || bad vulkan.emit_asm.entry
  expect vulkan.compile 0 "wrote $T/sm_vk.tsp" "$BIN/tessera-compile" "$EX/softmax.mlir" --target vulkan -o "$T/sm_vk.tsp"
  # Negative bf16, f16 and i8 constants: valid literals for 16- and 8-bit
  # types (the compile runs spirv-val on every module).
  expect vulkan.narrow_negative_constants 0 "wrote $T/narrow_vk.tsp" "$BIN/tessera-compile" \
    "$ROOT/tools/tessera-run/testdata/narrow_negative_constants.mlir" --target vulkan -o "$T/narrow_vk.tsp"
  # A program compiled for vulkan, loaded on cpu: both sides named.
  expect mismatch.target 2 "compiled for plugin 'vulkan' (target vulkan), but the device is on the 'cpu' backend" \
    env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$T/sm_vk.tsp" --iterations 1
fi

if "$BIN/tessera-compile" --list-targets 2>/dev/null | grep -q "^level_zero"; then
  # OpenCL Kernel modules for Level Zero: the same softmax program, SPIR-V
  # 1.2 (no subgroups in its kernels) valid under OpenCL 2.2's rules, a
  # Kernel entry point, physical 64-bit addressing, buffers as
  # CrossWorkgroup pointer parameters.
  expect level_zero.emit_spirv 0 "wrote" "$BIN/tessera-compile" "$EX/softmax.mlir" --target level_zero --emit spirv -o "$T/ze.spv"
  n=0
  for f in "$T"/ze*.spv; do
    n=$((n + 1))
    if spirv-val --target-env opencl2.2 "$f"; then ok "level_zero.spirv_val $(basename "$f")"
    else bad "level_zero.spirv_val $(basename "$f")"; fi
  done
  [[ $n -ge 1 ]] || bad "level_zero.emit_spirv wrote no module"
  expect level_zero.emit_asm 0 "wrote $T/ze.spvasm" "$BIN/tessera-compile" "$EX/softmax.mlir" --target level_zero --emit spirv-asm -o "$T/ze.spvasm"
  for want in "OpEntryPoint Kernel" "OpMemoryModel Physical64 OpenCL" "CrossWorkgroup"; do
    grep -q "$want" "$T/ze.spvasm" && ok "level_zero.emit_asm '$want'" || bad "level_zero.emit_asm '$want'"
  done
  grep -q "OpEntryPoint GLCompute\|PushConstant\|StorageBuffer" "$T/ze.spvasm" && bad level_zero.no_shader_abi || ok level_zero.no_shader_abi
  expect level_zero.compile 0 "wrote $T/sm_ze.tsp" "$BIN/tessera-compile" "$EX/softmax.mlir" --target level_zero -o "$T/sm_ze.tsp"
  expect level_zero.narrow_negative_constants 0 "wrote $T/narrow_ze.tsp" "$BIN/tessera-compile" \
    "$ROOT/tools/tessera-run/testdata/narrow_negative_constants.mlir" --target level_zero -o "$T/narrow_ze.tsp"
fi

# 3. Bad input.
expect bad.no_target 1 "no --target given" "$BIN/tessera-compile" "$EX/mlp.mlir"
expect bad.unknown_target 2 "no plugin compiles for target 'cdua'; the targets found are: cpu (plugin cpu)" \
  "$BIN/tessera-compile" "$EX/mlp.mlir" --target cdua
expect bad.arch 1 "target vulkan has no architecture 'gfx90a'; it knows: none (write the target alone)" "$BIN/tessera-compile" "$EX/mlp.mlir" --target vulkan:gfx90a
expect bad.emit 1 "target cpu cannot emit 'ptx'; it emits: llvm,asm" "$BIN/tessera-compile" "$EX/mlp.mlir" --target cpu --emit ptx
expect bad.option 1 "unknown option 'opt_lvl'" "$BIN/tessera-compile" "$EX/mlp.mlir" --target cpu --compile-option opt_lvl=2
expect bad.two_functions 1 "defines 2 functions (reductions, softmax_dims): choose one" \
  "$BIN/tessera-compile" "$EX/reductions.mlir" --target cpu -o "$T/r.tsp"
head -c 100 "$T/mlp.tsp" > "$T/cut.tsp"
expect bad.truncated 1 "unexpected end of file" "$BIN/tessera-run" "$T/cut.tsp"
# One byte changed inside the executable image: still well-formed, so only
# the checksum trailer (format 2) catches it before the code is loaded.
python3 - "$T/mlp.tsp" "$T/edited.tsp" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0x40
open(sys.argv[2], "wb").write(b)
PY
expect bad.edited 1 "checksum mismatch" "$BIN/tessera-run" "$T/edited.tsp"
mkfifo "$T/fifo.tsp"
expect bad.fifo 1 "not a regular file" "$BIN/tessera-run" "$T/fifo.tsp"
printf 'not a program' > "$T/junk.tsp"
expect bad.not_a_program 1 "not a compiled Tessera program" "$BIN/tessera-run" "$T/junk.tsp"
python3 - "$T/mlp.tsp" "$T/v9.tsp" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[8] = 9  # the file format version
open(sys.argv[2], "wb").write(b)
PY
expect bad.version 1 "program file version 9; this Tessera reads version 8" "$BIN/tessera-run" "$T/v9.tsp"
expect bad.dev_zero 1 "not a regular file" "$BIN/tessera-compile" /dev/zero --target cpu
expect bad.missing_program 1 "nope.mlir: No such file or directory" "$BIN/tessera-compile" "$T/nope.mlir" --target cpu

# Outputs (WriteOutputFile): a device is written, never replaced; a full
# disk is an error with its reason and leaves no file; an output may not be
# the program or an input; folders are named as such.
expect out.dev_null 0 "wrote /dev/null" "$BIN/tessera-compile" "$EX/softmax.mlir" --target cpu -o /dev/null
[[ -c /dev/null ]] || bad "out.dev_null: /dev/null is no longer a device"
expect out.dev_null_emit 0 "wrote /dev/null" "$BIN/tessera-compile" "$EX/softmax.mlir" --target cpu --emit asm -o /dev/null
[[ -c /dev/null ]] || bad "out.dev_null_emit: /dev/null is no longer a device"
expect out.full 1 "/dev/full: writing failed: No space left on device" \
  "$BIN/tessera-compile" "$EX/softmax.mlir" --target cpu --emit llvm -o /dev/full
expect out.full_tsp 1 "No space left on device" "$BIN/tessera-compile" "$EX/softmax.mlir" --target cpu -o /dev/full
expect out.run_full 1 "No space left on device" env TESSERA_BACKEND=cpu "$BIN/tessera-run" "$EX/softmax.mlir" \
  --iterations 1 --output /dev/full
cp "$EX/softmax.mlir" "$T/self.mlir"
expect out.over_program 1 "is the program being compiled" "$BIN/tessera-compile" "$T/self.mlir" --target cpu -o "$T/self.mlir"
cp "$EX/softmax.mlir" "$T/k.ll"
expect out.default_over_program 1 "k.ll is the program being compiled" "$BIN/tessera-compile" "$T/k.ll" --target cpu --emit llvm
cmp -s "$EX/softmax.mlir" "$T/k.ll" || bad "out.default_over_program: the program was changed"
expect out.run_save_over_program 1 "--save $T/self.mlir is the program" env TESSERA_BACKEND=cpu "$BIN/tessera-run" \
  "$T/self.mlir" --save "$T/self.mlir"
expect out.run_output_over_program 1 "is the program" env TESSERA_BACKEND=cpu "$BIN/tessera-run" \
  "$T/self.mlir" --output "$T/./self.mlir"
cmp -s "$EX/softmax.mlir" "$T/self.mlir" || bad "out.run_over_program: the program was changed"
expect out.folder 1 "is a folder; give the name of a file in it" "$BIN/tessera-compile" "$EX/softmax.mlir" --target cpu -o "$T"
expect out.no_folder 1 "cannot write into the folder $T/none (does it exist?)" \
  "$BIN/tessera-compile" "$EX/softmax.mlir" --target cpu -o "$T/none/x.tsp"

exit $fail
