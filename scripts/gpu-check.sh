#!/usr/bin/env bash
# The GPU check, for the H200 machine: builds pygraph there, runs the CPU test suite, then the
# GPU checks and benchmarks of tests/gpu/check.py, and prints a short table last.
#   ./scripts/gpu-check.sh [--sections doors,streams,trace,graph,cost,bench,idle,grid,decide]
#                          [--models mlp,...]
# (tests/gpu/check.py says what each section checks; logs in /tmp/pygraph-gpu, the table,
# summaries and stats also in $OUT when set)
# libunwind is not on that machine: carry Debian's libunwind8 and libunwind-dev packages in
# .debs/ (apt-get download them there on the build machine) and they are unpacked here.
set -euo pipefail
cd "$(dirname "$0")/.."
out=/tmp/pygraph-gpu  # traces and logs; the table and summaries are copied to $OUT if set
rm -rf "$out" && mkdir -p "$out"

./scripts/gpu-build.sh build-gpu "$out/cmake.log"
ctest_status=0
(cd build-gpu && ctest -j"$(nproc)" >"$out/ctest.log" 2>&1) || ctest_status=$?
tail -3 "$out/ctest.log"
nvcc -O2 -o build-gpu/cuda_doors tests/gpu/cuda_doors.cu -lcuda -ldl
nvcc -O2 -o build-gpu/packed_args tests/gpu/packed_args.cu -lcuda
nvcc -O2 -o build-gpu/memop_loop tests/gpu/memop_loop.cu
nvcc -O2 -o build-gpu/streams_loop tests/gpu/streams_loop.cu
nvcc -O2 -o build-gpu/break_even tests/gpu/break_even.cu
nvcc -O2 -o build-gpu/launch_cost tests/gpu/launch_cost.cu
nvcc -O2 -o build-gpu/op_cost tests/gpu/op_cost.cu
nvcc -O2 -o build-gpu/child_graph_cost tests/gpu/child_graph_cost.cu
nvcc -O2 -o build-gpu/gpu_idle tests/gpu/gpu_idle.cu

pyinc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
{ cc -I"$pyinc" tests/gpu/python_layout.c -o build-gpu/python_layout && ./build-gpu/python_layout; } || true

# The device stops a call after 600 s: checks that would start too late are skipped (SKIP rows),
# so that the table comes back. GPU_CHECK_LIMIT: seconds for this whole script.
left=$((${GPU_CHECK_LIMIT:-580} - SECONDS))
status=0
python3 tests/gpu/check.py --build build-gpu --out "$out" --ctest-status "$ctest_status" \
  --deadline "$left" "$@" || status=$?
if [[ -n ${OUT:-} ]]; then
  cp "$out"/table.txt "$OUT"/ 2>/dev/null || true
  # Everything but the traces, in one file: few files come back from the device.
  tar czf "$OUT/results.tgz" -C "$out" --exclude='*.trace' . 2>/dev/null || true
  for t in mlp-bitwise mlp-compile-bitwise; do
    [[ -f $out/$t.trace ]] && build-gpu/pygraph-analyze summary --top 6 "$out/$t.trace" >"$OUT/$t.txt"
  done
fi
exit $status
