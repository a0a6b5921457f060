#!/usr/bin/env bash
# The shim's CPU cost per launch, measured on the driver stand-in (no GPU, little noise): runs
# tests/bench/standin_launch_bench without the shim, in off mode and in trace mode (to a file),
# interleaved for several rounds, and prints the medians and the differences.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
bench=$build/tests/standin_launch_bench
trace=$(mktemp /tmp/pygraph-bench-XXXXXX.trace)
declare -A all
for round in 1 2 3 4 5; do
  for cfg in none off trace; do
    env=(LD_LIBRARY_PATH="$build/standin")
    [[ $cfg != none ]] && env+=(LD_PRELOAD="$PWD/$build/libpygraph.so" PYGRAPH_MODE="$cfg")
    [[ $cfg == trace ]] && env+=(PYGRAPH_TRACE="$trace")
    ns=$(env "${env[@]}" "$bench" | awk '{print $2}')
    all[$cfg]+="$ns "
  done
done
rm -f "$trace"
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${all[none]}" | median)
printf '%-8s %10s %10s   %s\n' config median_ns added_ns runs
for cfg in none off trace; do
  m=$(echo "${all[$cfg]}" | median)
  printf '%-8s %10.1f %+10.1f   %s\n' "$cfg" "$m" "$(echo "$m - $base" | bc -l)" "${all[$cfg]}"
done
