# shellcheck shell=bash
# Sourced by scripts/asan.sh and scripts/tsan.sh, the sanitizer passes: their build, and their
# runs of the randomized differential programs.

# sanitized_build BUILD FLAGS [TARGET...]: configures BUILD (apart from build/) with FLAGS for C
# and C++, then builds the targets (all without any).
sanitized_build() {
  local b=$1 flags=$2
  shift 2
  cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_CXX_FLAGS="$flags" -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" >/dev/null
  cmake --build "$b" -j"$(nproc)" ${1:+--target "$@"}
}

# A program run without the shim and with a sanitizer-built shim preloaded behind the
# sanitizer's runtime, compared digest for digest, and the sanitizer's reports looked for in what
# the shim's run printed.
#   differential TAG BUILD RUNTIME REPORT PROGRAM SEEDS CONFIG
# REPORT: a grep pattern of the sanitizer's reports; CONFIG: words of VAR=VALUE, of which the
# RANDOM_* and STANDIN_* ones are the program's own and go to the run without the shim too.
# Prints one line; returns 1 on a report, an exit other than 0 or a differing digest.
differential() {
  local tag=$1 b=$2 rt=$3 report=$4 prog=$5 seeds=$6 cfg=$7 fail=0
  local ref out err
  ref=$(mktemp) out=$(mktemp) err=$(mktemp)
  # shellcheck disable=SC2046,SC2086  # the program's own words of the configuration
  env $(printf '%s\n' $cfg | grep -E '^(RANDOM_|STANDIN_)' || true) "$b/tests/$prog" 0 "$seeds" \
    >"$ref"
  # shellcheck disable=SC2086  # the configuration is words of VAR=VALUE
  env $cfg PYGRAPH_MODE=graph LD_PRELOAD="$rt $b/libpygraph.so" "$b/tests/$prog" 0 "$seeds" \
    >"$out" 2>"$err" || { echo "$tag: $prog [$cfg] exited $?" >&2; fail=1; }
  if grep -q "$report" "$err"; then
    grep -m5 -A30 "$report" "$err" >&2
    fail=1
  fi
  if ! cmp -s "$ref" "$out"; then
    echo "$tag: $prog [$cfg]: digests differ from the run without the shim" >&2
    fail=1
  elif ((!fail)); then
    echo "$tag: $prog [$cfg]: $seeds seeds equal, no report"
  fi
  rm -f "$ref" "$out" "$err"
  return $fail
}
