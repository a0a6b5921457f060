#!/usr/bin/env bash
# The shim's CPU cost per launch on the driver stand-in (no GPU needed): in one process, rounds
# alternate between the driver's own cuLaunchKernel and the pointer the shim hands out, for no
# shim, off mode, trace mode (to a file) and graph mode (launches deferred and replayed as
# graphs). Prints ns per launch added by the shim; then, per iteration of a step of short
# segments (copies, syncs, three launches: the shape next to a program's own graphs), the ns
# the shim adds with few sequences known and with the detector's table full, and per launch
# and sync (a segment of one launch, never followed) (tests/bench/standin_segments_bench.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
bench=$build/tests/standin_launch_bench
trace=$(mktemp /tmp/pygraph-bench-XXXXXX.trace)
printf '%-8s %10s %10s %10s %14s\n' config driver_ns shim_ns added_ns median_call_ns
for cfg in none off trace graph; do
  env=(LD_LIBRARY_PATH="$build/standin")
  [[ $cfg != none ]] && env+=(LD_PRELOAD="$PWD/$build/libpygraph.so" PYGRAPH_MODE="$cfg")
  [[ $cfg == trace ]] && env+=(PYGRAPH_TRACE="$trace")
  env "${env[@]}" "$bench" | awk -v c="$cfg" '{v[$1]=$2} END {printf "%-8s %10s %10s %10s %14s\n", c, v["driver_ns"], v["handed_out_ns"], v["added_ns"], v["median_call_ns"]}'
done
rm -f "$trace"
printf '\n%-8s %20s %22s %22s\n' config launch_and_sync_ns few_sequences_ns full_table_ns
for cfg in off trace graph; do
  env LD_LIBRARY_PATH="$build/standin" LD_PRELOAD="$PWD/$build/libpygraph.so" PYGRAPH_MODE="$cfg" \
    "$build/tests/standin_segments_bench" | awk -v c="$cfg" '{v[$1]=$2} END {printf "%-8s %20s %22s %22s\n", c, v["added_ns_per_launch_and_sync"], v["added_ns_per_iteration_few_sequences"], v["added_ns_per_iteration_full_table"]}'
done
