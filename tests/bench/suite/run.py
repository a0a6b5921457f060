"""The benchmark suite: every workload of workloads.py in every variant that applies, with and
without the shim, side by side (run by scripts/bench.sh on the GPU machine).

    python run.py --build BUILD --out DIR [--parts small,infer,train,ddp] [--workloads a,b]
                  [--chunks N] [--quick] [--traces] [--ddp-nproc N] [--budget S] [--repeat N]
                  [--confirm N]

Per workload, all its cells (variant, with and without the shim) start together (the first
warm-up steps and their compiles run in parallel), then take turns chunk by chunk on one CPU core
(the lockstep of tests/gpu/harness.py): first the untimed chunks (the rest of the warm-up and
workloads.WARM_CHUNKS more: workloads.warm_split), then the timed ones. Per cell: time per
iteration (median chunk) and its change against eager and against the same variant without the
shim (median of chunk pairs, with quartiles), the host's share of each chunk (harness.run_chunks;
Python workers), peak GPU memory of the process, for "+shim" cells the shim's steady-state
figures (stats after the untimed chunks to the end) and whether the result is bit for bit equal
to the same variant without the shim. A cell that fails says why in one line; the rest runs
on. Writes DIR/results.json (merged into it when it exists, so parts run in separate calls end
in one file), then the chart and the table (report.py).
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
sys.path.insert(0, HERE)

import harness  # noqa: E402
import report  # noqa: E402
import workloads  # noqa: E402
from report import shim_base  # noqa: E402

# Parts sized to end within about 9 minutes each on an H100 (torch.compile's warm-ups take most
# of a workload's time); each can run in a call of its own.
PARTS = {
    "small": ("mlp-train", "mlp-dropout-item", "mlp-item10", "compiled-b1", "host-read",
              "two-streams", "host-tensors", "cupy-loop", "cuda-loop", "cuda-one-kernel"),
    "infer": ("resnet18-b1", "resnet50-b1", "resnet50-b64", "bert-b1", "timm-b8", "gpt2-decode"),
    "train": ("bert-train", "gpt2-train"),
    "ddp": ("ddp",),
}
SHIM_PAIRED = ("eager", "compile", "compile-ro")
# DDP's step syncs every 10 steps (ddp_train.py), so each chunk is one occurrence of its
# 10-step segment, and a warm-up of 10 steps left learning and weighing it to the timed chunks
# (session 26: its main sequence was first followed there). Its untimed chunks, as every
# workload's, are as many segments as weighing may take (workloads.WARM_CHUNKS): about 3.5 s a
# cell.


def parse_arm(text):
    """--arm NAME:VAR=VALUE[,VAR=VALUE...] -> (NAME, {VAR: VALUE}). VAR is a PYGRAPH_ setting,
    or LD_PRELOAD: another build of the library (a commit against another, in one lockstep; the
    file must exist)."""
    name, sep, assigns = text.partition(":")
    if not sep or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"--arm {text!r}: expected NAME:VAR=VALUE[,VAR=VALUE...]")
    env = {}
    for a in filter(None, assigns.split(",")):
        var, eq, value = a.partition("=")
        if not eq or not (var.startswith("PYGRAPH_") or var == "LD_PRELOAD"):
            raise ValueError(f"--arm {text!r}: {a!r} is no PYGRAPH_VAR=VALUE or LD_PRELOAD=FILE")
        if var == "LD_PRELOAD":
            if not os.path.isfile(value):
                raise ValueError(f"--arm {text!r}: no library {value!r}")
            value = os.path.abspath(value)
        env[var] = value
    return name, env


def arm_env(base, arm, lib):
    """The environment of an arm's process outside the lockstep (chunk_head.py, diverge.py
    hunt): `base` without any preload or PYGRAPH_ setting for the run without the shim (arm
    None), else preloading `lib` in graph mode with the arm's settings (parse_arm) over both."""
    env = {k: v for k, v in base.items() if k != "LD_PRELOAD" and not k.startswith("PYGRAPH_")}
    if arm is not None:
        env.update({"LD_PRELOAD": os.path.abspath(lib), "PYGRAPH_MODE": "graph"})
        env.update(arm)
    return env


TIMING_CORE = 3
# Under --budget, the least time left in which a workload's process starts (a device call's
# limit is near: a process needs its warm-up and a minute of timed chunks).
MIN_PROCESS_S = 90
DDP_WHAT = "DDP training of a small transformer under torchrun, one GPU per rank"


def cells_of(w, traces=False, arms=(), arm_variants=(), only=(), reruns=False):
    """Cell names of a workload: each variant, its "+shim" twin, and for training workloads a
    second run of eager without the shim, which says whether the baseline itself is
    deterministic (a bitwise difference that it shows too is no fault of the shim). With
    `traces`, "eager+trace" too: eager under the shim in trace mode, for the analyzer (its
    trace, whose time is no figure of graph mode). Each arm (--arm NAME:...) adds
    "VARIANT+shim:NAME" for the variants in `arm_variants`: the shim with other settings, in the
    same lockstep, compared with the same variant without the shim. With `reruns` (--reruns),
    "VARIANT-rerun" for those variants too: a second process without the shim, compared with
    the first like a shim cell is (an A/A pair: what two processes of the same program differ
    by in one lockstep). `only`: these variants alone (--variants)."""
    cells = []
    for v in w.variants:
        if only and v not in only:
            continue
        cells.append(v)
        if v in SHIM_PAIRED:
            cells.append(v + "+shim")
            if v in arm_variants:
                cells += [f"{v}+shim:{name}" for name in arms]
                if reruns:
                    cells.append(v + "-rerun")
    if w.train and "eager" in cells and "eager-rerun" not in cells:
        cells.append("eager-rerun")
    if traces and "eager" in cells:
        cells.append("eager+trace")
    return cells


class MemoryWatch:
    """Peak device memory per process, sampled from NVML (includes the CUDA context and any
    graphs the shim built, which PyTorch's allocator does not see)."""

    def __init__(self):
        self.peak, self.stop = {}, threading.Event()
        try:
            import pynvml

            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i)
                            for i in range(pynvml.nvmlDeviceGetCount())]
        except Exception:  # no NVML: the figure is left out
            self.nvml = None
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while self.nvml and not self.stop.wait(0.25):
            for h in self.handles:
                try:
                    procs = self.nvml.nvmlDeviceGetComputeRunningProcesses(h)
                except Exception:
                    continue
                for p in procs:
                    if p.usedGpuMemory:
                        mb = p.usedGpuMemory / 2**20
                        self.peak[p.pid] = max(self.peak.get(p.pid, 0), mb)

    def close(self):
        self.stop.set()


class Suite:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build)
        self.shim = os.path.join(self.build, "libpygraph.so")
        self.out = os.path.abspath(a.out)
        self.work = os.path.join(self.out, "cells")
        os.makedirs(self.work, exist_ok=True)
        self.memory = MemoryWatch()
        self.t0 = time.monotonic()
        self.arms = dict(parse_arm(t) for t in a.arm or ())
        self.process = 0  # which of --repeat's processes of a workload runs: its files' suffix
        self.durations = {}  # seconds each workload's last process took (--confirm's budget)

    def cell_tag(self, cell):
        """A cell's name in file names; a repeated workload's later processes keep their own."""
        tag = cell.replace("+", "_").replace(":", "-")
        return tag + (f".p{self.process + 1}" if self.process else "")

    def time_left(self):
        """Seconds left of --budget (None: no budget)."""
        if not self.a.budget:
            return None
        return self.a.budget - (time.monotonic() - self.t0)

    def ready_timeout(self):
        # Under a budget, warm-ups may not run past it (the untimed and timed chunks, in turns,
        # need about a minute).
        left = self.time_left()
        return self.a.ready_timeout if left is None else max(30, min(self.a.ready_timeout, left - 60))

    def env(self, shim, stats_exit=None, trace=None, arm=None):
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        env["PYTHONUNBUFFERED"] = "1"
        if shim:
            # BENCH_SHIM_MODE=off or trace: the "+shim" cells in that mode, to tell the cost of
            # the interposition itself from graph mode's (their coverage is then 0).
            mode = os.environ.get("BENCH_SHIM_MODE", "graph")
            env.update(LD_PRELOAD=self.shim, PYGRAPH_MODE=mode, PYGRAPH_STATS=stats_exit)
            # A decision cache of the cell's own, new each run: verdicts of another cell, or of
            # an earlier run on this machine, would be adopted without measuring (a warm start).
            env["PYGRAPH_CACHE"] = stats_exit.replace(".exit.%p.json", ".decisions.json")
            env.update(self.arms.get(arm, {}))
        if trace:
            env.update(LD_PRELOAD=self.shim, PYGRAPH_MODE="trace", PYGRAPH_TRACE=trace)
        return env

    def worker_argv(self, w, variant, base, chunks, steps):
        parallel, warm = workloads.warm_split(w.warmup, steps)
        tail = ["--chunks", str(chunks), "--steps", str(steps), "--warmup", str(parallel),
                "--warm-chunks", str(warm),
                "--core", str(TIMING_CORE), "--stats-prefix", base + ".",
                "--result", base + ".json"]
        if w.program:
            return [os.path.join(self.build, w.program), *w.program_args] + tail
        return [sys.executable, os.path.join(HERE, "worker.py"), w.name, variant] + tail

    def run_workload(self, name, only=None):
        """All cells of workload `name` in one lockstep; `only`: these variants alone (else
        --variants, else all)."""
        a = self.a
        if name == "ddp":
            return self.run_ddp()
        w = workloads.WORKLOADS[name]
        # --quick times fewer chunks, never fewer iterations per chunk: the iterations between
        # two syncs are part of the workload's shape (a chunk of 1 iteration is another program
        # than one of 40 for graph mode).
        # --steps changes that shape on purpose: whether a cost falls on each chunk's start
        # (after its sync) or on every iteration (session 31, ResNet-50 b64 under
        # reduce-overhead).
        steps = a.steps if a.steps is not None else w.steps
        chunks = max(4, a.chunks // 2) if a.quick else a.chunks
        groups, meta = {}, {}
        arm_variants = SHIM_PAIRED if a.arm_variants == "all" else a.arm_variants.split(",")
        only = only or (a.variants.split(",") if a.variants else ())
        for cell in cells_of(w, a.traces, self.arms, arm_variants, only, a.reruns):
            variant = cell.split("+")[0].replace("-rerun", "")
            shim, arm = shim_base(cell) is not None, cell.partition("+shim:")[2] or None
            tag = self.cell_tag(cell)
            base = os.path.join(self.work, f"{name}.{tag}")
            for f in glob.glob(glob.escape(base) + ".*json"):
                os.unlink(f)
            wk = harness.Worker(f"{name}.{tag}", self.work, label=cell)
            argv = self.worker_argv(w, variant, base, chunks, steps) + ["--go", wk.go, "--done",
                                                                       wk.done]
            # %p: child processes that inherit the shim (compile workers) write files of their own.
            trace = base + ".trace" if cell.endswith("+trace") else None
            wk.start(argv, self.env(shim, base + ".exit.%p.json", trace, arm))
            groups[cell], meta[cell] = [wk], (variant, shim, base)
        t0 = time.monotonic()
        ls = harness.Lockstep(groups, ready_timeout=self.ready_timeout(), chunk_timeout=120)
        print(f"[{name}] {len(groups)} cells warming up", flush=True)
        warm = workloads.warm_split(w.warmup, steps)[1]
        ls.run(chunks, progress=None, warm=warm)
        print(f"[{name}] done in {time.monotonic() - t0:.0f} s", flush=True)
        cells = {}
        for cell, (variant, shim, base) in meta.items():
            cells[cell] = self.cell_result(cell, base, groups[cell], ls.failed.get(cell),
                                           chunks * steps)
        for v, why in w.na.items():
            cells[v] = {"status": "n/a", "reason": why}
        for g in groups.values():
            for wk in g:
                wk.close()
        return self.compare({"what": w.what, "steps_per_chunk": steps, "chunks": chunks,
                             "warm_chunks": warm,
                             "cells": cells})

    def cell_result(self, cell, base, workers, failed, iters):
        if failed:
            return {"status": "failed", "reason": failed}
        r = harness.read_json(base + ".json")
        if not r:
            return {"status": "failed", "reason": "no result file: " + workers[0].tail()}
        c = {"status": "ok", "chunk_ms": r["chunk_ms"], "digest": r["digest"],
             "ms_per_iter": statistics.median(r["chunk_ms"])}
        if r.get("host_ms"):  # the host's share of each chunk (harness.run_chunks)
            c["host_ms"] = r["host_ms"]
            c["host_ms_per_iter"] = statistics.median(r["host_ms"])
        if r.get("read_ms"):  # the host's wait in the step's reads (loss.item())
            c["read_ms"] = r["read_ms"]
            c["read_ms_per_iter"] = statistics.median(r["read_ms"])
        if "torch_peak_reserved_mb" in r:
            c["torch_peak_reserved_mb"] = round(r["torch_peak_reserved_mb"], 1)
        mem = [self.memory.peak.get(wk.proc.pid) for wk in workers]
        if all(mem):
            c["peak_gpu_mb"] = round(sum(mem), 1)
        if shim_base(cell) is not None:
            end, warm = harness.read_json(base + ".end.json"), harness.read_json(base + ".warm.json")
            if end:
                d = harness.stats_delta(end, warm)
                d["launches_per_iter"] = d["launches"]["seen_by_engine"] / iters
                d["memops_per_iter"] = d["memops"]["seen_by_engine"] / iters
                c["shim"] = d
            else:
                c["shim_error"] = "no stats snapshot (pygraph_write_stats missing?)"
            whole = harness.read_json(f"{base}.exit.{workers[0].proc.pid}.json")
            if whole:
                c["shim_whole_run_coverage"] = whole.get("coverage_percent")
        return c

    def compare(self, res):
        cells = res["cells"]
        ok = lambda c: c in cells and cells[c].get("status") == "ok"
        for name, c in cells.items():
            if c.get("status") != "ok":
                continue
            if ok("eager") and name != "eager":
                c["vs_eager"] = harness.pair_change(c["chunk_ms"], cells["eager"]["chunk_ms"])
            if name.endswith("-rerun") and ok(name[:-len("-rerun")]):
                c["vs_variant"] = harness.pair_change(c["chunk_ms"],
                                                      cells[name[:-len("-rerun")]]["chunk_ms"])
            base = shim_base(name)
            if base is not None:
                if ok(base):
                    c["vs_without_shim"] = harness.pair_change(c["chunk_ms"],
                                                               cells[base]["chunk_ms"])
                    c["bitwise"] = c["digest"] == cells[base]["digest"]
        # Each variant run twice without the shim (eager for training, those of --reruns):
        # whether it computes the same in two processes. A shim cell's difference that the
        # second run shows too is no fault of the shim.
        det = {n[:-len("-rerun")]: c["digest"] == cells[n[:-len("-rerun")]]["digest"]
               for n, c in cells.items() if n.endswith("-rerun") and ok(n)
               and ok(n[:-len("-rerun")])}
        if det:
            res["deterministic"] = det
        return res

    def run_ddp(self):
        a = self.a
        n = a.ddp_nproc
        groups, meta = {}, {}
        # Arms (--arm) run beside the shim cell as in the other workloads, whatever
        # --arm-variants says: DDP has the eager variant only.
        cells_run = ("eager", "eager+shim") + tuple(f"eager+shim:{n}" for n in self.arms)
        # --traces: the ranks in trace mode too; the first rank to use CUDA writes
        # DDP.eager_trace.trace, the other .trace.<pid> beside it.
        cells_run += ("eager+trace",) if a.traces else ()
        for k, cell in enumerate(cells_run):
            tag = self.cell_tag(cell)
            base = os.path.join(self.work, f"ddp.{tag}")
            ranks = [harness.Worker(f"ddp.{tag}.{r}", self.work, label=f"{cell} rank {r}")
                     for r in range(n)]
            argv = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(n),
                    "--master-port", str(29400 + k), os.path.join(HERE, "ddp_train.py"),
                    "--chunks", str(a.chunks), "--steps", "10", "--warmup", "10",
                    "--warm-chunks", str(workloads.WARM_CHUNKS),
                    "--go", os.path.join(self.work, f"ddp.{tag}.{{rank}}.go"),
                    "--done", os.path.join(self.work, f"ddp.{tag}.{{rank}}.done"),
                    "--core", str(TIMING_CORE), "--stats-prefix", f"{base}.{{rank}}.",
                    "--result", f"{base}.{{rank}}.json"]
            trace = base + ".trace" if cell.endswith("+trace") else None
            env = self.env(shim_base(cell) is not None, f"{base}.exit.%p.json", trace,
                           arm=cell.partition("+shim:")[2] or None)
            env.update(NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1",
                       NVSHMEM_DISABLE_NVLS="1")
            ranks[0].start(argv, env)
            for r in ranks[1:]:
                r.attach(ranks[0])
            groups[cell], meta[cell] = ranks, base
        ls = harness.Lockstep(groups, ready_timeout=self.ready_timeout(), chunk_timeout=120)
        print(f"[ddp] {n} ranks per cell, warming up", flush=True)
        ls.run(a.chunks, warm=workloads.WARM_CHUNKS)
        cells = {}
        for cell, base in meta.items():
            if cell in ls.failed:
                cells[cell] = {"status": "failed", "reason": ls.failed[cell]}
                continue
            ranks = []
            for r in range(n):
                wk = groups[cell][r]
                rb = f"{base}.{r}"
                rank_cell = self.cell_result(cell, rb, [wk], None, a.chunks * 10)
                ranks.append(rank_cell)
            bad = [r for r in ranks if r["status"] != "ok"]
            if bad:
                cells[cell] = {"status": "failed", "reason": bad[0]["reason"]}
                continue
            # The cell's time is the slowest rank's chunk (a step ends when every rank is done).
            chunk_ms = [max(r["chunk_ms"][k] for r in ranks) for k in range(a.chunks)]
            cells[cell] = {"status": "ok", "chunk_ms": chunk_ms,
                           "ms_per_iter": statistics.median(chunk_ms),
                           "digest": ",".join(r["digest"] for r in ranks), "ranks": ranks}
            if shim_base(cell) is not None:
                cells[cell]["shim"] = ranks[0].get("shim")
                # The ranks' whole-run stats, each named by its pid (torchrun itself uses no CUDA
                # and writes none): their mean coverage.
                wholes = [harness.read_json(f) for f in
                          sorted(glob.glob(glob.escape(base) + ".exit.*.json"))]
                covs = [w["coverage_percent"] for w in wholes if w and "coverage_percent" in w]
                if covs:
                    cells[cell]["shim_whole_run_coverage"] = sum(covs) / len(covs)
        for g in groups.values():
            for wk in g:
                wk.close()
        res = self.compare({"what": DDP_WHAT, "nproc": n, "chunks": a.chunks,
                            "warm_chunks": workloads.WARM_CHUNKS,
                            "steps_per_chunk": 10, "cells": cells})
        for cell in cells_run[1:]:
            if res["cells"].get(cell, {}).get("status") == "ok" and \
                    res["cells"].get("eager", {}).get("status") == "ok":
                ranks_eq = [x["digest"] == y["digest"] for x, y in
                            zip(res["cells"]["eager"]["ranks"], res["cells"][cell]["ranks"])]
                res["cells"][cell]["bitwise_per_rank"] = ranks_eq
        return res


def machine_info():
    info = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "commit": os.environ.get("BENCH_COMMIT", ""),
            "shim_mode": os.environ.get("BENCH_SHIM_MODE", "graph"),
            # CUBLAS_WORKSPACE_CONFIG for the whole run, or read once (workloads.py)
            "cublas_config": os.environ.get("BENCH_CUBLAS_CONFIG", "read once"),
            # how a worker pins itself while it times (harness.pin_mode)
            "pin": harness.pin_mode()}
    if not info["commit"] and shutil.which("git"):
        info["commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
        # A tree that differs from its HEAD is not that commit: the device's copy of the tree
        # can carry the .git of the session's first commit (sessions 33 and 43 stamped results
        # so). BENCH_COMMIT names it.
        if info["commit"] and subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD", "--"],
                                             capture_output=True).returncode == 1:
            info["commit"] += "+changes"
    try:
        q = harness.gpus()
        info["gpu"], info["driver"] = q[0]
        info["gpus"] = len(q)
    except Exception as e:
        info["gpu"] = f"unknown ({e})"
    try:
        import torch

        info["torch"], info["cuda"] = torch.__version__, torch.version.cuda
    except ImportError:
        pass
    return info


def run_turn(suite, doc, path, name, only=None, confirming=False):
    """One process of workload `name` (`only`: these variants), merged into `doc` and written
    to `path` at once, so that a run cut short keeps what it measured. `confirming` (--confirm):
    a process in which a cell failed, or the workload broke, is not merged: the processes
    before it stay as they were (a failed cell would replace a measured one, and a shim cell
    without its baseline would count as not slower)."""
    left = suite.time_left()
    if left is not None and left < MIN_PROCESS_S:
        print(f"[{name}] not run: {left:.0f} s left of the --budget", flush=True)
        return  # a workload of an earlier run keeps its results in the merged file
    t0 = time.monotonic()
    try:
        res = suite.run_workload(name, only)
    except Exception as e:  # one broken workload must not stop the others
        res = {"what": name, "error": f"{type(e).__name__}: {e}"[:300], "cells": {}}
    suite.durations[name] = time.monotonic() - t0
    res["run"] = len(doc["runs"]) - 1
    for line in report.cell_lines(name, res):
        print(line, flush=True)
    if confirming and (res.get("error") or any(report.status(c) == "FAILED"
                                               for c in res["cells"].values())):
        print(f"[{name}] this process is not counted: a cell failed", flush=True)
        return
    doc["workloads"][name] = report.merge_workload(doc["workloads"].get(name), res)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def to_confirm(res, run, left):
    """The variants of workload result `res` (with eager, for the speedups over it) whose shim
    cell at the default settings, measured in run `run` (not kept from an earlier call), counts
    as slower (report.slower) and would not with `left` more processes that are not slower."""
    if not res:
        return []
    out = set()
    for cell, c in res.get("cells", {}).items():
        if shim_base(cell) is None or ":" in cell or report.status(c) or \
                c.get("run", res.get("run")) != run:
            continue
        seq = report.changes(res, cell)
        if report.slower(seq) and 2 * report.slower_in(seq) < len(seq) + left:
            # `left` more processes that are not slower could overrule it
            out.add(report.variant_of(cell))
    if out and "eager" in res["cells"]:
        out.add("eager")
    return sorted(out)


def confirm(suite, doc, names, first, count, run_one, t0):
    """--confirm: a default shim cell that counts as slower runs again in a new process (its
    variant's cells, arms and reruns included, and eager's), up to `count` more processes,
    while more processes could still change its verdict and the budget holds a process of the
    workload as long as its last one took. Two processes of one program can differ by a few
    percent (the A/A reruns: up to +4.1 % with the lower quartile above 0), and the targets
    judge the cell by all its processes (report.slower; a tie counts as slower, so one more
    process alone never changes a verdict)."""
    run = len(doc["runs"]) - 1
    for r in range(first, first + count):
        for name in names:
            only = to_confirm(doc["workloads"].get(name), run, first + count - r)
            if not only:
                continue
            left, took = suite.time_left(), suite.durations.get(name, 0)
            # What run_turn needs to start any process, or the last one's length if longer.
            if left is not None and left < max(MIN_PROCESS_S, took):
                print(f"[{name}] not confirmed: {left:.0f} s left of the --budget, its last "
                      f"process took {took:.0f} s", flush=True)
                continue
            suite.process = r
            print(f"== confirm {name} ({', '.join(only)}): process {r + 1} "
                  f"({time.monotonic() - t0:.0f} s so far)", flush=True)
            run_one(name, only)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True, help="build folder with libpygraph.so")
    p.add_argument("--out", required=True)
    p.add_argument("--parts", default="small,infer,train", help=",".join(PARTS))
    p.add_argument("--workloads", help="comma-separated, instead of --parts")
    p.add_argument("--chunks", type=int, default=12)
    p.add_argument("--steps", type=int, help="iterations per chunk (between two syncs) for "
                   "every workload but DDP, instead of each one's own")
    p.add_argument("--quick", action="store_true",
                   help="half the chunks (at least 4), the same iterations per chunk")
    p.add_argument("--traces", action="store_true",
                   help="also run eager in trace mode: DIR/cells/WORKLOAD.eager_trace.trace")
    p.add_argument("--ready-timeout", type=float, default=480,
                   help="seconds a workload's cells may take to build and warm up")
    p.add_argument("--ddp-nproc", type=int, default=2)
    p.add_argument("--variants", help="comma-separated: only these variants (and their shim "
                                      "cells), e.g. compile-ro")
    p.add_argument("--arm", action="append", metavar="NAME:VAR=VALUE[,...]",
                   help="another shim cell per variant of --arm-variants, with these PYGRAPH_ "
                        "settings or another build (repeatable): e.g. --arm "
                        "nodefer:PYGRAPH_MIN_REPEATS=1000, "
                        "--arm old:LD_PRELOAD=build-old/libpygraph.so")
    p.add_argument("--arm-variants", default="compile-ro",
                   help="variants that get the --arm cells (comma-separated, or all)")
    p.add_argument("--reruns", action="store_true",
                   help="also each variant of --arm-variants once more without the shim, in the "
                        "same lockstep (VARIANT-rerun): the change two processes of the same "
                        "program show, beside the shim's")
    p.add_argument("--repeat", type=int, default=1,
                   help="run every workload this many times, round after round, each time in new "
                        "processes: every cell's change in each process is kept and tabled "
                        "(report.process_rows), since processes of one program differ")
    p.add_argument("--confirm", type=int, default=2,
                   help="a shim cell at the default settings that is slower (lower quartile "
                        "above 0) runs again in new processes, up to this many, while more could "
                        "change its verdict and the budget lasts: the targets judge a cell run "
                        "in several processes by all of them; a tie counts as slower, so it "
                        "takes 2 to change a verdict (0: never)")
    p.add_argument("--budget", type=float,
                   help=f"seconds for the whole run: no workload starts with less than "
                        f"{MIN_PROCESS_S} s left, and warm-ups end a minute before it (the "
                        "device's per-call limit)")
    a = p.parse_args()
    if a.steps is not None and a.steps < 1:
        p.error(f"--steps {a.steps}: at least 1 iteration per chunk")
    if a.repeat < 1:
        p.error(f"--repeat {a.repeat}: at least 1")
    if a.confirm < 0:
        p.error(f"--confirm {a.confirm}: at least 0")
    try:
        harness.pin_mode()
    except ValueError as e:
        p.error(str(e))
    for t in a.arm or ():
        try:
            parse_arm(t)
        except ValueError as e:
            p.error(str(e))
    names = a.workloads.split(",") if a.workloads else \
        [n for part in a.parts.split(",") for n in PARTS[part]]
    unknown = [n for n in names if n != "ddp" and n not in workloads.WORKLOADS]
    if unknown:
        p.error(f"unknown workloads: {', '.join(unknown)}")
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "results.json")
    doc = harness.read_json(path) or {"schema": "pygraph-bench/1", "workloads": {}}
    doc.setdefault("runs", []).append(dict(machine_info(), workloads=names))
    suite = Suite(a)
    t0 = time.monotonic()
    # --repeat: round after round of every workload, so that a budget cut leaves each
    # workload the processes of the rounds that got to it.
    turns = [(name, r) for r in range(a.repeat) for name in names]
    for k, (name, r) in enumerate(turns):
        suite.process = r
        again = f", process {r + 1} of {a.repeat}" if a.repeat > 1 else ""
        print(f"== {k + 1}/{len(turns)} {name}{again} ({time.monotonic() - t0:.0f} s so far)",
              flush=True)
        run_turn(suite, doc, path, name)
    confirm(suite, doc, names, a.repeat, a.confirm,
            lambda name, only: run_turn(suite, doc, path, name, only, confirming=True), t0)
    suite.memory.close()
    report.write_all(doc, a.out)
    print()
    print(report.table(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
