#!/usr/bin/env bash
# The benchmark suite, for the GPU machine: builds libpygraph.so and the suite's CUDA C++
# workload there, then runs tests/bench/suite/run.py (every workload in every variant that
# applies, with and without the shim, side by side) and prints a short table last.
#   ./scripts/bench.sh [--parts small,infer,train,ddp] [--workloads a,b] [--chunks N] [--quick]
#                      [--traces] [--budget SECONDS] [--merge FILE.json ...]
# Each part takes at most about 9 minutes on an H100/H200 (parts: tests/bench/suite/run.py).
# Results accumulate in /tmp/pygraph-bench/results.json; --merge first adds the results of
# earlier calls (results.json files carried into the tree), so that parts run in separate calls
# end in one file. results.json, the chart speedup.png, table.md/txt and the logs (logs.tgz)
# are copied to $OUT when it is set; with --traces also the traces (traces.tgz) and the
# analyzer's simulate against graph mode (simulate.json, tests/bench/suite/simulate_check.py).
# libunwind is not on that machine: carry Debian's libunwind8 and libunwind-dev packages in
# .debs/, as for scripts/gpu-check.sh.
# The results name the commit: from git where the tree has .git, else from BENCH_COMMIT=<sha>.
set -euo pipefail
cd "$(dirname "$0")/.."
out=/tmp/pygraph-bench
mkdir -p "$out"

args=() merge=()
while (($#)); do
  case $1 in
    --merge) merge+=("$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

# BENCH_BUILD=build-gpu reuses the GPU check's build in the same call (an incremental build).
if [[ -n ${BENCH_BUILD:-} ]]; then
  build=$BENCH_BUILD
  ./scripts/gpu-build.sh "$build" "$out/build.log"
else
  build=build-bench
  ./scripts/gpu-build.sh "$build" "$out/build.log" -DPYGRAPH_BUILD_TESTS=OFF
fi
[[ -x $build/cuda_loop ]] || nvcc -O2 -o "$build"/cuda_loop tests/bench/suite/cuda_loop.cu

if ((${#merge[@]})); then
  python3 tests/bench/suite/report.py "${merge[@]}" --out "$out" >/dev/null
fi
status=0
python3 tests/bench/suite/run.py --build "$build" --out "$out" "${args[@]}" || status=$?
if [[ " ${args[*]} " == *" --traces "* && -x $build/pygraph-analyze ]]; then
  # The analyzer's what-if on each trace against graph mode's coverage (issue 12's target).
  python3 tests/bench/suite/simulate_check.py --out "$out" --analyzer "$build/pygraph-analyze" ||
    true
fi
if [[ -n ${OUT:-} ]]; then
  cp "$out"/results.json "$out"/table.md "$out"/table.txt "$OUT"/ 2>/dev/null || true
  cp "$out"/speedup.png "$out"/simulate.json "$OUT"/ 2>/dev/null || true
  tar czf "$OUT/logs.tgz" -C "$out" --exclude='*.trace*' --exclude='*.go' --exclude='*.done' \
    cells build.log 2>/dev/null || true
  # --traces: the trace-mode cells' traces (and children's, .trace.<pid>), for the analyzer.
  traces=("$out"/cells/*.trace*)
  if [[ -e ${traces[0]} ]]; then
    tar czf "$OUT/traces.tgz" -C "$out/cells" "${traces[@]##*/}" || true
  fi
fi
exit $status
