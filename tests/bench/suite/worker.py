"""One cell of the benchmark suite in one process: a workload in one variant, timed chunk by
chunk under the lockstep protocol of tests/gpu/harness.py.

    python worker.py WORKLOAD VARIANT --steps S [--chunks C --warmup W --warm-chunks N
                     --go F --done F --core K --stats-prefix P --result R]

Run by tests/bench/suite/run.py, with LD_PRELOAD=libpygraph.so for the "+shim" cells (the code is
the same either way). Without --go/--done it runs its chunks back to back and prints the times.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu"))
sys.path.insert(0, HERE)
# Before torch loads cuBLAS: deterministic GEMM workspaces (results compared bit for bit).
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import harness  # noqa: E402
import workloads  # noqa: E402


# Untimed chunks of the timed shape first. A chunk is, to the shim, one segment between two
# syncs: followed from its third occurrence, its pauses learned on two more and weighed on at
# least two whole rounds after them (pause_places.h). With 3, a host whose Python gaps pass
# pause_us learned and weighed in the first timed chunks (session 25: 1,131 pause cuts in
# compiled-b1's timed chunks), and the steady state read as learning.
WARM_CHUNKS = 8


def main():
    p = argparse.ArgumentParser()
    p.add_argument("workload", choices=sorted(n for n, w in workloads.WORKLOADS.items()
                                              if w.builder))
    p.add_argument("variant", choices=workloads.TRAIN_VARIANTS)
    harness.add_worker_args(p)
    p.add_argument("--warm-chunks", type=int, default=WARM_CHUNKS,
                   help="untimed chunks of the timed shape after the warm-up (0: timing starts "
                        "at the first iteration after it)")
    a = p.parse_args()
    w = workloads.WORKLOADS[a.workload]
    if a.variant not in w.variants:
        print(f"{a.workload}: variant {a.variant} does not apply "
              f"({w.na.get(a.variant, 'not in its variants')})", file=sys.stderr)
        return 2
    task = w.builder(a.variant)
    for _ in range(a.warmup):
        task.step()
    task.sync()
    # Then chunks as the timed ones, untimed: a loop that never syncs inside a chunk is, to the
    # shim, a sequence of one chunk's length between two syncs (compiled-b1 under
    # reduce-overhead: 200 launches of the program's graph), followed from its third occurrence.
    for _ in range(a.warm_chunks):
        for _ in range(a.steps):
            task.step()
        task.sync()
    chunk_ms = harness.run_chunks(a, task.step, task.sync)
    extra = {}
    if a.workload != "cupy-loop":
        import torch

        extra["torch_peak_reserved_mb"] = torch.cuda.max_memory_reserved() / 2**20
    harness.write_result(a, chunk_ms, harness.digest(task.result()), **extra)
    if not a.result:
        print(" ".join(f"{t:.4f}" for t in chunk_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
