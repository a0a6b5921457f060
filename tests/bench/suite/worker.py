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
# Before torch loads cuBLAS: deterministic GEMM workspaces (results compared bit for bit), as
# deterministic mode asks; read once, then dropped (workloads.cublas_config_read_once).
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import harness  # noqa: E402
import workloads  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("workload", choices=sorted(n for n, w in workloads.WORKLOADS.items()
                                              if w.builder))
    p.add_argument("variant", choices=workloads.TRAIN_VARIANTS)
    harness.add_worker_args(p)
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
    # Then the untimed chunks (--warm-chunks) and the timed ones, in the lockstep's turns.
    host_ms, read_ms = [], []
    chunk_ms = harness.run_chunks(a, task.step, task.sync, host_ms, read_ms, task.read_s)
    extra = {"host_ms": host_ms}
    if read_ms:
        extra["read_ms"] = read_ms
    if a.workload != "cupy-loop":
        import torch

        extra["torch_peak_reserved_mb"] = torch.cuda.max_memory_reserved() / 2**20
    harness.write_result(a, chunk_ms, harness.digest(task.result()), **extra)
    if not a.result:
        print(" ".join(f"{t:.4f}" for t in chunk_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
