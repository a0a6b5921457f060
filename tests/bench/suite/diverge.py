"""Where does a run with the shim first part from one without it? For a result that differs
once in many runs (session 20: mlp-dropout-item under reduce-overhead, watchdog off, one cell
in about seventy), the suite's digest says only that it differs.

    python diverge.py run WORKLOAD VARIANT --chunks N --out F [--core K] [--pause S]
    python diverge.py compare BASE.json OTHER.json [...]

`run` runs a suite workload's task as worker.py does (warm-up, then chunks of the workload's
steps with a sync after each, a pause between chunks, the threads pinned to CPU K during a
chunk as the lockstep pins them) and writes, as JSON, a digest of the task's result after
every chunk and, for a training task, the loss it read at every step. Start it with
LD_PRELOAD and PYGRAPH_* settings for the shim's side; start many at once to hunt.
`compare` names, for each other run, the first chunk and the first step where it differs.
"""
import argparse
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu"))
sys.path.insert(0, HERE)
# Before torch loads cuBLAS, as worker.py does.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def _digest(parts):
    return hashlib.sha1(b"".join(parts)).hexdigest()[:16]


def run(a):
    import harness
    import workloads

    w = workloads.WORKLOADS[a.workload]
    pin = harness.pin_mode()  # a bad BENCH_PIN before the warm-up, not after it
    task = w.builder(a.variant)
    for _ in range(w.warmup):
        task.step()
    task.sync()
    rec = {"workload": a.workload, "variant": a.variant, "chunks": [], "reads": None}
    for _ in range(a.chunks):
        harness.pin_for_chunk(a.core, pin)
        for _ in range(w.steps):
            task.step()
        task.sync()
        rec["chunks"].append(_digest(task.result()))
        harness.pin_all_threads(a.core, on_core=False)
        time.sleep(a.pause)
    if w.train:
        # train_task's result: the parameters, repr(the losses read), the last loss.
        rec["reads"] = task.result()[-2].decode()
    with open(a.out, "w") as f:
        json.dump(rec, f)
    return 0


def first_difference(base, other):
    """(first chunk, first step read) where `other` differs from `base`, None where it does
    not; a run that stopped early differs at its end."""
    def first(xs, ys):
        for i, (x, y) in enumerate(zip(xs, ys)):
            if x != y:
                return i
        return None if len(xs) == len(ys) else min(len(xs), len(ys))

    reads = None
    if base.get("reads") is not None and other.get("reads") is not None:
        import ast
        reads = first(ast.literal_eval(base["reads"]), ast.literal_eval(other["reads"]))
    return first(base["chunks"], other["chunks"]), reads


def _load(path):
    """A run's record, or None after one line on stderr saying why it cannot be read."""
    try:
        with open(path) as f:
            rec = json.load(f)
        if not isinstance(rec, dict) or not isinstance(rec.get("chunks"), list):
            raise ValueError("not a record of diverge.py run")
        return rec
    except (OSError, ValueError) as e:
        print(f"diverge.py: {path}: {e}", file=sys.stderr)
        return None


def compare(a):
    base = _load(a.base)
    if base is None:
        return 2
    differ = unread = 0
    for path in a.others:
        other = _load(path)
        if other is None:
            unread += 1
            continue
        chunk, read = first_difference(base, other)
        same = chunk is None and read is None
        differ += not same
        print(f"{path}: " + ("equal" if same else
                             f"DIFFERS from chunk {chunk}, first read differing at step {read}"))
    print(f"{len(a.others) - differ - unread} of {len(a.others)} equal to {a.base}"
          + (f"; {unread} not read" if unread else ""))
    return 1 if differ else 2 if unread else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("workload")
    r.add_argument("variant")
    r.add_argument("--chunks", type=int, default=24)
    r.add_argument("--out", required=True)
    r.add_argument("--core", type=int, default=-1, help="CPU a chunk runs on (-1: no pinning)")
    r.add_argument("--pause", type=float, default=0.02, help="seconds between chunks")
    c = sub.add_parser("compare")
    c.add_argument("base")
    c.add_argument("others", nargs="+")
    a = p.parse_args()
    return run(a) if a.cmd == "run" else compare(a)


if __name__ == "__main__":
    sys.exit(main())
