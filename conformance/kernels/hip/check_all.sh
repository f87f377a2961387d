#!/usr/bin/env bash
# ctest conformance.hsaco_kernels: every hsaco conformance module is a code
# object for its arch with all nine kernels, and the spin kernels read the
# constant-rate clock where the GPU has one (gfx9, gfx10: s_memrealtime)
# and bound their loops by a count where it has none (gfx11).
#   usage: check_all.sh KERNELS_DIR READELF OBJDUMP ARCH...
set -u
DIR=$1 READELF=$2 OBJDUMP=$3
shift 3
fail=0
for arch in "$@"; do
  f=$DIR/hip/basic-$arch.hsaco
  notes=$("$READELF" --notes "$f" 2>&1) || { echo "FAIL $arch: $notes"; fail=1; continue; }
  grep -Eq "amdhsa.target: +amdgcn-amd-amdhsa--$arch" <<<"$notes" || { echo "FAIL $arch: target"; fail=1; }
  for k in fill_u32 mul_add_u32 saxpy copy_u32 count gate delayed_store handshake log_stream; do
    grep -Eq "\.name: +$k\$" <<<"$notes" || { echo "FAIL $arch: no kernel $k"; fail=1; }
  done
  clock=$("$OBJDUMP" -d --mcpu="$arch" "$f" | grep -c s_memrealtime)
  case $arch in
    gfx11*) want_clock=0 ;;
    *) want_clock=1 ;;
  esac
  if [[ $want_clock -eq 1 && $clock -eq 0 ]] || [[ $want_clock -eq 0 && $clock -ne 0 ]]; then
    echo "FAIL $arch: s_memrealtime used $clock times"; fail=1
  else
    echo "ok   $arch: 9 kernels, clock reads $clock"
  fi
done
exit $fail
