#!/usr/bin/env bash
# Builds pygraph on the GPU machine (Release, into the folder given), for gpu-check.sh and
# bench.sh. libunwind is not on that machine: Debian's libunwind8 and libunwind-dev packages
# carried in .debs/ are unpacked into /tmp/pygraph-debs and found there (the libraries built
# hold that path). Not into .debs: a later call that carries .debs replaces the folder there,
# and the libraries built in an earlier call, still in place, lost their libunwind (session 26,
# twice). SRC=DIR builds another source tree (scripts/old-src.sh's .oldsrc).
#   [SRC=DIR] ./scripts/gpu-build.sh BUILD_DIR LOG [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 log=$2
shift 2
prefix=()
if ! ldconfig -p | grep -q 'libunwind.so.8 '; then
  root=/tmp/pygraph-debs
  mkdir -p "$root"
  for f in .debs/*.deb; do dpkg -x "$f" "$root"; done
  prefix=(-DCMAKE_PREFIX_PATH="$root/usr")
fi
cmake -S "${SRC:-.}" -B "$build" -DCMAKE_BUILD_TYPE=Release "${prefix[@]}" "$@" >"$log" 2>&1 ||
  { tail -20 "$log"; exit 1; }
cmake --build "$build" -j"$(nproc)" >>"$log" 2>&1 || { tail -40 "$log"; exit 1; }
