#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds into build/ and runs every
# CPU test (unit tests, the driver stand-in, end-to-end tests under LD_PRELOAD), then fuzzes the
# parsers for FUZZ_SECONDS (default 60; 0: no fuzzing) in a clang build of their own
# (scripts/fuzz.sh), then runs the tests and the randomized differential programs under ASan and
# UBSan in a build of their own (scripts/asan.sh; ASAN_SEEDS, default 300; ASAN=0 skips it),
# then the randomized differential programs under ThreadSanitizer, the engine shared by the
# program's threads and the stall watchdog (scripts/tsan.sh; TSAN_SEEDS, default 200; TSAN=0
# skips it). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" >/dev/null
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure --no-tests=error -j"$(nproc)"
cd ..
if [[ ${FUZZ_SECONDS:-60} != 0 ]]; then
  ./scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
fi
if [[ ${ASAN:-1} != 0 ]]; then
  ./scripts/asan.sh "${ASAN_SEEDS:-300}"
fi
if [[ ${TSAN:-1} != 0 ]]; then
  ./scripts/tsan.sh "${TSAN_SEEDS:-200}"
fi
