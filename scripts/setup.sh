#!/usr/bin/env bash
# Installs what pygraph needs to build and test, from Debian's packages. Idempotent: installs
# only what is missing. Needs root for apt-get; without root it names what is missing instead.
set -euo pipefail

# clang and libclang-rt-dev (libFuzzer, the sanitizers): scripts/fuzz.sh.
packages=(cmake g++ make libunwind-dev nlohmann-json3-dev libgtest-dev python3 clang
          libclang-rt-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${missing[*]} (run as root to install them)" >&2
    exit 1
  fi
fi

cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [[ ! -f $cuda_home/include/cuda.h ]]; then
  echo "setup: no CUDA toolkit headers at $cuda_home/include/cuda.h (set CUDA_HOME)" >&2
  exit 1
fi
