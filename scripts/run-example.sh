#!/usr/bin/env bash
# The main command: runs an example workload (scripts/examples/torch_workload.py) without the
# shim and under it in graph mode (the default), prints both step times, what graph mode did
# (PYGRAPH_STATS) and what pygraph-analyze makes of the trace. Needs a GPU with its driver and
# PyTorch; builds pygraph first if build/ has none.
#   ./scripts/run-example.sh [mlp|mlp-compile|mlp-dropout|resnet18|bert|gpt2] [STEPS]
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
stats=build/example-stats.json
echo "run-example: $model, $steps steps, without the shim"
"$python" scripts/examples/torch_workload.py "$model" --steps "$steps" --time | grep median_step_ms
echo "run-example: the same under build/libpygraph.so (trace: $trace, stats: $stats)"
LD_PRELOAD="$PWD/build/libpygraph.so" PYGRAPH_TRACE="$trace" PYGRAPH_STATS="$stats" \
  "$python" scripts/examples/torch_workload.py "$model" --steps "$steps" --time | grep median_step_ms
"$python" - "$stats" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"graph mode: {s['coverage_percent']:.1f} % of {s['launches']['intercepted']} launches "
      f"replayed in {s['graphs']['replays']} graph launches; eager: "
      f"{s['eager_launches_by_reason']}; flushes: {s['flushes']['by_reason']}")
m = s["memops"]
print(f"memsets and copies: {m['replayed_in_graphs']} of {m['seen_by_engine']} inside graphs; "
      f"eager: {m['eager_by_reason']}")
PY
build/pygraph-analyze summary --top 8 "$trace"
