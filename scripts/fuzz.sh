#!/usr/bin/env bash
# Coverage-guided fuzzing of pygraph's parsers (tests/fuzz): builds the libFuzzer targets with
# clang, AddressSanitizer and UBSan into build-fuzz/ (apart from the gcc build), runs each for
# its share of SECONDS (default 60, all targets together) from its seeds, and prints how many
# inputs each ran. Exits non-zero if one crashed or broke an invariant; the input that did is in
# build-fuzz/tests/fuzz/findings/. Inputs that found new coverage stay in
# build-fuzz/tests/fuzz/corpus/ for the next run.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
  clang++ -x c++ -fsanitize=fuzzer,address - -o /dev/null 2>/dev/null; then
  echo "fuzz: clang++ with libFuzzer is needed (Debian: clang libclang-rt-dev; scripts/setup.sh)" >&2
  exit 1
fi

cmake -S . -B build-fuzz -DPYGRAPH_FUZZ=ON -DPYGRAPH_FUZZ_SECONDS="$seconds" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_targets
log=build-fuzz/fuzz.log
status=0
ctest --test-dir build-fuzz -V >"$log" 2>&1 || status=$?
# libFuzzer's final stats, per ctest test number: "N: stat::number_of_executed_units: RUNS".
awk '
  /^[0-9]+: Test command: / { n = $1; sub(":", "", n); name[n] = $4; sub(".*/", "", name[n]) }
  /stat::number_of_executed_units:/ { n = $1; sub(":", "", n); runs[n] = $NF }
  /stat::new_units_added:/ { n = $1; sub(":", "", n); added[n] = $NF }
  END { for (n in name) printf "fuzz: %s: %s inputs run, %s new in the corpus\n", name[n], runs[n] ? runs[n] : "?", added[n] ? added[n] : 0 }
' "$log" | sort
if ((status != 0)); then
  grep -E "ERROR: |invariant broken|SUMMARY: |Test artifact|artifact_prefix|crash-" "$log" | head -20 >&2
  echo "fuzz: FAILED (log: $log)" >&2
  exit 1
fi
echo "fuzz: no crash in ${seconds} s"
