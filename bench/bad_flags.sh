#!/usr/bin/env bash
# tessera-bench flags that ran for ever (--benchmark_min_time=inf) or wrote
# no file with exit 0 (an unknown --benchmark_out_format): refused, exit 1,
# naming the flag.   usage: bad_flags.sh TESSERA_BENCH
set -u
fail=0
expect() {  # want-substring args...
  local want=$1 out rc
  shift
  out=$(timeout 60 "$BENCH" "$@" 2>&1); rc=$?
  if [[ $rc -ne 1 || "$out" != *"$want"* ]]; then echo "FAIL $*: exit $rc"; echo "$out" | tail -3; fail=1
  else echo "ok   $*: $out"; fi
}
BENCH=$1
expect "want a number of seconds above 0 and at most 3600" --benchmark_min_time=inf
expect "want a number of seconds above 0 and at most 3600" --benchmark_min_time=abc
expect "--benchmark_out_format=bogus: want console, json or csv" --benchmark_out=/dev/null --benchmark_out_format=bogus
expect "--benchmark_format=xml: want console, json or csv" --benchmark_format=xml
exit $fail
