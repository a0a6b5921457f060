#!/usr/bin/env bash
# The benchmark suite, for the GPU machine: builds libpygraph.so and the suite's CUDA C++
# workload there, then runs tests/bench/suite/run.py (every workload in every variant that
# applies, with and without the shim, side by side) and prints a short table last.
#   ./scripts/bench.sh [--parts small,infer,train,ddp] [--workloads a,b] [--chunks N] [--steps N] [--quick]
#                      [--traces] [--budget SECONDS] [--merge FILE.json ...] [--old] [--reruns]
#                      [--repeat N] [--confirm N]
# --old: another commit side by side, in the same lockstep: scripts/old-src.sh COMMIT here
# writes its source into .oldsrc (carry it with .debs); here it is built into build-old and
# each "+shim" cell of --arm-variants (run.py; DDP's always) runs once more with it, as
# "VARIANT+shim:old".
# --confirm N (run.py; default 2): a shim cell that is slower runs again in new processes, up to N
# more, while more could change its verdict (slower in at least half of its processes) and
# --budget lasts.
# Each part takes at most about 9 minutes on an H100/H200 (parts: tests/bench/suite/run.py).
# Results accumulate in /tmp/pygraph-bench/results.json; --merge first adds the results of
# earlier calls (results.json files carried into the tree), so that parts run in separate calls
# end in one file. results.json, table.md, the charts (speedup.png, processes.png, replays.png)
# and the logs (logs.tgz, with table.txt) are copied to $OUT when it is set; with --traces also
# the traces that fit (traces.tgz; the others named in traces-left-out.txt, in logs.tgz), the
# analyzer's summary, sequences and breaks of each (cells/*.analysis.txt in logs.tgz) and its
# simulate against graph mode (simulate.json, tests/bench/suite/simulate_check.py).
# libunwind is not on that machine: carry Debian's libunwind8 and libunwind-dev packages in
# .debs/, as for scripts/gpu-check.sh.
# The results name the commit: from git where the tree has .git, else from BENCH_COMMIT=<sha>.
# BENCH_SHIM_MODE=off (or trace) runs the "+shim" cells in that mode instead of graph mode.
# BENCH_CUBLAS_CONFIG=kept keeps CUBLAS_WORKSPACE_CONFIG set for the whole run, as every run
# before session 37 did (torch 2.11 parses it at every cuBLAS call: workloads.py says why).
# BENCH_PIN=main pins only the thread that runs the steps to the timing core while a cell times,
# every other thread (the driver's, the shim's watchdog) off it; the default, all, pins them all
# there (tests/gpu/harness.py, pin_mode).
set -euo pipefail
cd "$(dirname "$0")/.."
out=/tmp/pygraph-bench
mkdir -p "$out"

args=() merge=()
while (($#)); do
  case $1 in
    --merge) merge+=("$2"); shift 2 ;;
    --old)
      [[ -f .oldsrc/CMakeLists.txt ]] || { echo "bench: --old needs .oldsrc (scripts/old-src.sh)" >&2; exit 2; }
      SRC=.oldsrc ./scripts/gpu-build.sh build-old "$out/build-old.log" -DPYGRAPH_BUILD_TESTS=OFF
      args+=(--arm "old:LD_PRELOAD=build-old/libpygraph.so")
      shift ;;
    *) args+=("$1"); shift ;;
  esac
done

# BENCH_BUILD=build-gpu reuses the GPU check's build in the same call (an incremental build).
if [[ -n ${BENCH_BUILD:-} ]]; then
  build=$BENCH_BUILD
  ./scripts/gpu-build.sh "$build" "$out/build.log"
else
  build="build-bench"
  ./scripts/gpu-build.sh "$build" "$out/build.log" -DPYGRAPH_BUILD_TESTS=OFF
fi
# Built again when its source is newer (a machine kept warm keeps the build folder).
[[ $build/cuda_loop -nt tests/bench/suite/cuda_loop.cu ]] || nvcc -O2 -o "$build"/cuda_loop tests/bench/suite/cuda_loop.cu

if ((${#merge[@]})); then
  python3 tests/bench/suite/report.py "${merge[@]}" --out "$out" >/dev/null
fi
status=0
python3 tests/bench/suite/run.py --build "$build" --out "$out" "${args[@]}" || status=$?
if [[ " ${args[*]} " == *" --traces "* && -x $build/pygraph-analyze ]]; then
  # The analyzer's what-if on each trace against graph mode's coverage (issue 12's target).
  python3 tests/bench/suite/simulate_check.py --out "$out" --analyzer "$build/pygraph-analyze" ||
    true
  # Its reports on each trace, here: the traces together outgrow what comes back from the
  # device (16 MiB a file); the reports travel in logs.tgz.
  # A child's trace (DDP's ranks under torchrun: NAME.trace.<pid>) gets NAME.<pid>.analysis.txt.
  for t in "$out"/cells/*.trace "$out"/cells/*.trace.*; do
    [[ -e $t ]] || continue
    report=${t%.trace}.analysis.txt
    [[ $t == *.trace.* ]] && report=${t%.trace.*}.${t##*.trace.}.analysis.txt
    for cmd in summary sequences breaks; do
      echo "== pygraph-analyze $cmd"
      "$build/pygraph-analyze" "$cmd" "$t" 2>&1 | head -200
    done >"$report"
  done
fi
if [[ -n ${OUT:-} ]]; then
  # The device returns at most 8 files a call: results.json, table.md, the three charts,
  # simulate.json (--traces), logs.tgz and traces.tgz; table.txt and traces-left-out.txt travel
  # inside logs.tgz.
  cp "$out"/results.json "$out"/table.md "$OUT"/ 2>/dev/null || true
  cp "$out"/speedup.png "$out"/processes.png "$out"/replays.png "$out"/simulate.json "$OUT"/ \
    2>/dev/null || true
  # --traces: the trace-mode cells' traces (and children's, .trace.<pid>), for the analyzer,
  # smallest first while the archive stays under the device's 16 MiB a file (compressed about
  # 4:1); the others are named in traces-left-out.txt (their reports are in logs.tgz).
  kept=() left=() total=0
  while read -r size name; do
    if ((total + size / 4 < 15 * 1024 * 1024)); then
      kept+=("$name") total=$((total + size / 4))
    else
      left+=("$name")
    fi
  done < <(cd "$out/cells" 2>/dev/null && stat -c '%s %n' -- *.trace* 2>/dev/null | sort -n)
  ((${#kept[@]})) && { tar czf "$OUT/traces.tgz" -C "$out/cells" "${kept[@]}" || true; }
  rm -f "$out/traces-left-out.txt"
  ((${#left[@]})) && printf '%s\n' "${left[@]}" >"$out/traces-left-out.txt"
  logs=(cells build.log table.txt)
  [[ -e $out/traces-left-out.txt ]] && logs+=(traces-left-out.txt)
  tar czf "$OUT/logs.tgz" -C "$out" --exclude='*.trace*' --exclude='*.go' --exclude='*.done' \
    "${logs[@]}" 2>/dev/null || true
fi
exit $status
