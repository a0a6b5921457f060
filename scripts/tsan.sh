#!/usr/bin/env bash
# The randomized differential programs under ThreadSanitizer: builds the shim, the driver
# stand-in and the three random programs with gcc's -fsanitize=thread into build-tsan/ (apart
# from build/), then runs each over SEEDS seeds (default 200) with the instrumented shim
# preloaded behind TSan's runtime and compares each with a run without the shim. The engine is
# shared by threads there: the stall watchdog checks every millisecond, and random_program's
# iterations end on a second thread of the program's while the first waits (autograd's device
# thread; RANDOM_PROGRAM_THREADS=1), with pauses learned from the real gaps between launches.
# Exits non-zero on a TSan report, a crash or a differing digest.
# Usage: scripts/tsan.sh [SEEDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-200}
# shellcheck source=scripts/sanitized.sh
. scripts/sanitized.sh
sanitized_build build-tsan "-fsanitize=thread -fno-omit-frame-pointer" pygraph standin_cuda \
  random_program random_streams_program random_loop_program

b=$PWD/build-tsan
# TSan's runtime must come first in the initial library list: before the preloaded shim.
tsan_rt=$(gcc -print-file-name=libtsan.so)
export LD_LIBRARY_PATH=$b/standin TSAN_OPTIONS=halt_on_error=0
shared="PYGRAPH_STALL_CHECK_MS=1 PYGRAPH_PAUSE_US=1 PYGRAPH_PAUSE_GPU_US=4"
threads="RANDOM_PROGRAM_THREADS=1 RANDOM_PROGRAM_GRAPHS=1 PYGRAPH_PROGRAM_GRAPH_LAUNCHES=1"
runs=(
  "random_program STANDIN_ASYNC=0 $threads"
  "random_program STANDIN_ASYNC=1 $threads"
  "random_streams_program STANDIN_ASYNC=1 RANDOM_STREAMS_GPU_IDLE=1"
  "random_streams_program STANDIN_ASYNC=1 PYGRAPH_ANSWER_QUERIES=1"
  "random_loop_program STANDIN_ASYNC=1"
)
status=0
for run in "${runs[@]}"; do
  differential tsan "$b" "$tsan_rt" "WARNING: ThreadSanitizer" "${run%% *}" "$seeds" \
    "${run#* } $shared" || status=1
done
exit $status
