#!/usr/bin/env bash
# The CPU tests under AddressSanitizer and UBSan: builds everything with gcc and both sanitizers
# into build-asan/ (apart from build/), runs the unit and stand-in tests (the end-to-end tests
# under LD_PRELOAD are not registered in sanitizer builds: tests/e2e/CMakeLists.txt), then the
# three randomized differential programs over SEEDS seeds (default 300) with the instrumented
# shim preloaded behind ASan's runtime, in configurations that drop plans and graphs often and
# weigh pauses everywhere (and split segments), each compared with a run without the shim.
# Exits non-zero on a sanitizer report, a failing test or a differing digest.
# Usage: scripts/asan.sh [SEEDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-300}
# shellcheck source=scripts/sanitized.sh
. scripts/sanitized.sh
sanitized_build build-asan \
  "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

# Leaks: the shim keeps its engine and recorder for good (other libraries' exit handlers may
# still call the driver), and the stand-in never frees what a program leaves.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
# Not here: the tests that preload the shim into Python (an uninstrumented interpreter, where
# ASan's runtime must come first), and the analyzer's golden files (text compared only).
status=0
(cd build-asan &&
  ctest --output-on-failure --no-tests=error -j"$(nproc)" -E 'Python|python|golden|gpu_check') ||
  status=1

b=$PWD/build-asan
# ASan's runtime must come first in the initial library list: before the preloaded shim.
asan_rt=$(gcc -print-file-name=libasan.so)
# RANDOM_PROGRAM_GRAPHS=1: random_program launches graphs of its own too (in both runs).
export LD_LIBRARY_PATH=$b/standin STANDIN_ASYNC=1 RANDOM_PROGRAM_GRAPHS=1
configs=(
  "PYGRAPH_MAX_SEQUENCES=4 PYGRAPH_MEASURE_WINDOWS=3 PYGRAPH_MEASURE_ITERATIONS=2"
  "PYGRAPH_MAX_SEQUENCES=2 PYGRAPH_MAX_GRAPHS=4 PYGRAPH_PAUSE_US=1 PYGRAPH_PAUSE_GPU_US=4"
  "PYGRAPH_ONE_LAUNCH_GRAPHS=1 PYGRAPH_MAX_GRAPHS=8 PYGRAPH_PAUSE_US=1 PYGRAPH_PAUSE_GPU_US=4"
  "PYGRAPH_PROGRAM_GRAPH_LAUNCHES=1 PYGRAPH_MAX_GRAPHS=4 PYGRAPH_FIRST_CHUNK=1"
  # Early heads (on by default; set here all the same), among pauses that cut and split: bodies
  # that begin with a launch and the program's graph (random_program's RANDOM_PROGRAM_HEADS).
  "RANDOM_PROGRAM_HEADS=1 PYGRAPH_PROGRAM_GRAPH_LAUNCHES=1 PYGRAPH_EARLY_HEAD=1 PYGRAPH_PAUSE_US=1 PYGRAPH_PAUSE_GPU_US=4"
  # Programmatic launches (random_program's; the others run as in the first configuration).
  "RANDOM_PROGRAM_PROGRAMMATIC=1 PYGRAPH_MAX_GRAPHS=8"
  # The GPU idles in random_streams_program's steps (its programs change: the run without the
  # shim gets the same RANDOM_* words), so its segments are split.
  "RANDOM_STREAMS_GPU_IDLE=1 PYGRAPH_PAUSE_US=1 PYGRAPH_PAUSE_GPU_US=4"
  # And with restarts (off by default): a chunk the GPU drained for begins small.
  "RANDOM_STREAMS_GPU_IDLE=1 PYGRAPH_RESTART_CHUNKS=1 PYGRAPH_PAUSE_US=1 PYGRAPH_PAUSE_GPU_US=1"
  # Queries of deferred work answered "not ready" (off by default): the programs' query loops.
  "RANDOM_STREAMS_GPU_IDLE=1 PYGRAPH_ANSWER_QUERIES=1 PYGRAPH_PAUSE_US=1 PYGRAPH_PAUSE_GPU_US=4"
  # random_program's iterations end on a second thread, the watchdog flushing every millisecond.
  "RANDOM_PROGRAM_THREADS=1 PYGRAPH_STALL_CHECK_MS=1 PYGRAPH_PAUSE_US=1 PYGRAPH_PAUSE_GPU_US=4"
)
for prog in random_program random_streams_program random_loop_program; do
  for cfg in "${configs[@]}"; do
    differential asan "$b" "$asan_rt" "ERROR: AddressSanitizer\|runtime error:" "$prog" "$seeds" \
      "$cfg" || status=1
  done
done
exit $status
