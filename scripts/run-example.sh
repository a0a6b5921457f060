#!/usr/bin/env bash
# The main command: trains the example MLP (scripts/examples/torch_workload.py) under the shim,
# writes a trace and prints what pygraph-analyze makes of it. Needs a GPU with its driver and
# PyTorch; builds pygraph first if build/ has none.
#   ./scripts/run-example.sh [mlp|mlp-compile] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-mlp}
steps=${2:-100}
python=${PYTHON:-python3}

if ! "$python" -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
  echo "run-example: no CUDA driver (libcuda.so.1) on this machine; the example needs a GPU" >&2
  exit 1
fi
if ! "$python" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "run-example: $python has no PyTorch with CUDA; the example needs it" >&2
  exit 1
fi
if [[ ! -f build/libpygraph.so || ! -f build/pygraph-analyze ]]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPYGRAPH_BUILD_TESTS=OFF >/dev/null
  cmake --build build -j"$(nproc)" >/dev/null
fi
trace=build/example.trace
echo "run-example: $model, $steps steps, under build/libpygraph.so (trace: $trace)"
LD_PRELOAD="$PWD/build/libpygraph.so" PYGRAPH_MODE=trace PYGRAPH_TRACE="$trace" \
  "$python" scripts/examples/torch_workload.py "$model" --steps "$steps" --time
build/pygraph-analyze summary --top 8 "$trace"
