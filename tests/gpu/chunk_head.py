"""Where the time of a chunk goes, at its head after a sync: a suite workload's steps run in chunks
of N steps, each closed by a synchronize, under torch.profiler (CUPTI), so that the GPU's own
timestamps say when the first work of each chunk started and when the last ended, against the
host's chunk start and the synchronize's return.

Session 49 asks this: BERT b1 under reduce-overhead read +0.9 and +1.0 % with the shim at 1 step a
chunk (about 20 us a chunk; none at 40), and the weighed rounds of graph mode show the first
chunk after a sync recorded in 25-38 us against 5-15 us for the chunks after it. Run it with and
without the shim (LD_PRELOAD=build/libpygraph.so PYGRAPH_MODE=graph) and compare:
  head      chunk start (host) -> the GPU's first activity of the chunk
  launch    the program's first graph launch call (host, CUPTI's runtime or driver record) -> the
            GPU's first activity after it
  gpu       the GPU's first activity -> its last one's end
  busy      of that span, the time some activity ran (the union of their intervals)
  idle      gpu - busy: the gaps between activities inside the chunk
  first     the GPU time of the chunk's first activity (a reduce-overhead step's input copy)
  tail      the GPU's last end -> the synchronize's return
  chunk     chunk start -> the synchronize's return
each the median over the profiled chunks, in us, per shape (steps a chunk); then the kernels
that took the most GPU time, each with its launches a chunk and its median GPU time (all of them
in --json): a kernel that runs longer in graphs than launched alone shows there; then the
largest median gaps inside a steady chunk, each before which activity (all of them in --json).
  python3 tests/gpu/chunk_head.py [--workload bert-b1] [--variant compile-ro] [--shapes 1,10]
                                  [--chunks 30] [--warm 40] [--json FILE]
                                  [--arm NAME:VAR=VALUE[,...] ... [--rounds 2] [--lib FILE]]
With --arm (the suite's syntax: tests/bench/suite/run.py), it runs one process without the shim
and one for each arm, in turns, --rounds times; an arm's process preloads --lib
(build-gpu/libpygraph.so by default) in graph mode with the arm's PYGRAPH_ settings (`graph:`
alone: the defaults), and no process sees the caller's own PYGRAPH_ settings or preload.
--json then holds every process's figures, and a table of them, one process a row, is printed
last.
The profiler adds its own cost to every call, with and without the shim alike: compare the two
runs, not these figures with the suite's. Its cost on each driver call the shim makes varies
from process to process more than the shim's own effect on the host side: in session 53 the
shim's chunks read 240-365 us longer in one call and 94-136 us shorter in the next (ResNet-50
b64 under reduce-overhead). Read gpu, busy, idle, first, the kernels and the gaps, which the GPU
times; take the host's cost from the suite's lockstep.
"""
import argparse
import collections
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench",
                                "suite"))

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_NAMES = ("cudaGraphLaunch", "cuGraphLaunch")
# Each chunk's figures (the docstring's), in the order they are printed.
FIGURES = ("head", "launch", "gpu", "busy", "idle", "first", "tail", "chunk")


def union_length(intervals):
    """The time covered by (start, end) intervals sorted by start: overlaps count once."""
    total, reach = 0.0, None
    for s, e in intervals:
        if reach is None or s > reach:
            total += e - s
            reach = e
        elif e > reach:
            total += e - reach
            reach = e
    return total


def chunk_activities(trace, marks):
    """Per chunk mark (a user annotation): the mark and the GPU activities that started inside
    it, as (start, end, name), by start."""
    gpu = sorted((e["ts"], e["ts"] + e.get("dur", 0), e.get("name", "?")) for e in trace
                 if e.get("cat") in GPU_CATS)
    return [(m, [g for g in gpu if m["ts"] <= g[0] <= m["ts"] + m["dur"]]) for m in marks]


def chunk_figures(trace, chunks):
    """Per chunk (chunk_activities), the figures above, with the trace's graph launch calls."""
    launches = sorted(e["ts"] for e in trace if e.get("cat") in ("cuda_runtime", "cuda_driver")
                      and any(e.get("name", "").startswith(n) for n in LAUNCH_NAMES))
    rows = []
    for m, inside in chunks:
        if not inside:
            continue
        start, end = m["ts"], m["ts"] + m["dur"]
        first, last = inside[0][0], max(g[1] for g in inside)
        busy = union_length((g[0], g[1]) for g in inside)
        row = {"head": first - start, "gpu": last - first, "busy": busy,
               "idle": last - first - busy, "first": inside[0][1] - inside[0][0],
               "tail": end - last, "chunk": end - start, "activities": len(inside)}
        call = next((t for t in launches if start <= t <= end), None)
        if call is not None:
            after = next((g[0] for g in inside if g[0] >= call), None)
            if after is not None:
                row["launch"] = after - call
        rows.append(row)
    return rows


def kernel_times(chunks):
    """Per GPU activity name, inside the chunks (chunk_activities): how many ran a chunk and
    their median GPU time (us), the names by total GPU time, largest first."""
    durs = {}
    for _, acts in chunks:
        for start, end, name in acts:
            durs.setdefault(name, []).append(end - start)
    n = max(len(chunks), 1)
    rows = [{"name": k, "per_chunk": len(v) / n, "median_us": statistics.median(v),
             "total_us": sum(v) / n} for k, v in durs.items()]
    return sorted(rows, key=lambda r: -r["total_us"])


def gap_places(chunks):
    """Where inside a chunk (chunk_activities) the GPU waits: over the chunks that ran the most
    common number of activities (a steady chunk runs the same ones in the same order), per
    activity after the first, the median gap before it (its start after the latest end before
    it, 0 where they overlap), with its name and index; largest first. Their sum is about the
    chunk's idle."""
    per_chunk = [acts for _, acts in chunks]
    counts = collections.Counter(len(acts) for acts in per_chunk)
    if not counts:
        return []
    n = max(counts, key=lambda c: (counts[c], c))
    steady = [a for a in per_chunk if len(a) == n]
    gaps = {}
    for acts in steady:
        reach = acts[0][1]
        for i in range(1, n):
            gaps.setdefault(i, []).append(max(0.0, acts[i][0] - reach))
            reach = max(reach, acts[i][1])
    rows = [{"index": i, "name": steady[0][i][2], "median_gap": statistics.median(v)}
            for i, v in gaps.items()]
    return sorted(rows, key=lambda r: (-r["median_gap"], r["index"]))


def run_arms(arms, rounds, run_one):
    """Each round, the process without the shim and then each arm's, in turns: `run_one(name,
    settings)` (settings None for "none") returns its figures (the --json of one process).
    Returns [{"arm", "round", "figures"}] in the order run."""
    order = [("none", None)] + list(arms.items())
    runs = []
    for r in range(rounds):
        for name, settings in order:
            print(f"== {name}, round {r + 1} of {rounds}", flush=True)
            runs.append({"arm": name, "round": r + 1, "figures": run_one(name, settings)})
    return runs


def arms_table(runs):
    """One row a process and shape: the medians above and the largest gap's place (gap_places),
    for reading the arms side by side."""
    lines = ["arm        round steps " + " ".join(f"{k:>9}" for k in FIGURES) +
             "  largest gap (us, before #)"]
    for run in runs:
        for steps, fig in sorted((run["figures"] or {}).get("shapes", {}).items(),
                                 key=lambda kv: int(kv[0])):
            gap = (fig.get("gaps") or [None])[0]
            where = f"{gap['median_gap']:.1f} #{gap['index']}" if gap else "-"
            lines.append(f"{run['arm'][:10]:10} {run['round']:5} {int(steps):5} " +
                         " ".join(f"{fig.get(k, float('nan')):9.1f}" for k in FIGURES) +
                         f"  {where}")
        if not run["figures"]:
            lines.append(f"{run['arm'][:10]:10} {run['round']:5}   (no figures: it failed)")
    return "\n".join(lines)


def child_args(argv):
    """This process's arguments less those of the arms and the output (--arm, --rounds, --lib,
    --json, each as "--opt value" or "--opt=value"): what each arm's process is given."""
    child, skip = [], False
    for t in argv:
        if skip:
            skip = False
            continue
        if t.split("=", 1)[0] in ("--arm", "--rounds", "--lib", "--json"):
            skip = "=" not in t
            continue
        child.append(t)
    return child


def main_arms(a, argv):
    """--arm: this script again in one process a run (run_arms), its figures gathered."""
    import subprocess
    from run import arm_env, parse_arm  # the suite's --arm syntax
    try:
        arms = dict(parse_arm(t) for t in a.arm)
    except ValueError as e:
        raise SystemExit(f"chunk_head: {e}")
    if "none" in arms:
        raise SystemExit("chunk_head: the arm without the shim is always run, as \"none\"")
    if not os.path.isfile(a.lib):
        raise SystemExit(f"chunk_head: no library {a.lib!r} (--lib)")
    child = child_args(argv)

    def run_one(name, settings):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            cmd = [sys.executable, os.path.abspath(__file__)] + child + ["--json", f.name]
            r = subprocess.run(cmd, env=arm_env(dict(os.environ), settings, a.lib))
            if r.returncode != 0:
                print(f"chunk_head: {name}'s process exited with {r.returncode}", flush=True)
                return None
            return json.load(open(f.name))

    runs = run_arms(arms, a.rounds, run_one)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"arms": {"none": None, **arms}, "runs": runs}, f, indent=1)
    print(arms_table(runs), flush=True)
    return 0 if all(r["figures"] for r in runs) else 1


def median_of(rows, key):
    vals = [r[key] for r in rows if key in r]
    return statistics.median(vals) if vals else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="bert-b1")
    ap.add_argument("--variant", default="compile-ro")
    ap.add_argument("--shapes", default="1,10", help="steps a chunk, each shape in turn")
    ap.add_argument("--chunks", type=int, default=30, help="profiled chunks a shape")
    ap.add_argument("--warm", type=int, default=40, help="unprofiled chunks a shape first")
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--arm", action="append", default=[],
                    help="NAME:VAR=VALUE[,...]: one process a round with the shim so set")
    ap.add_argument("--rounds", type=int, default=2, help="with --arm: rounds of processes")
    ap.add_argument("--lib", default="build-gpu/libpygraph.so", help="with --arm: the shim")
    a = ap.parse_args()
    if a.arm:
        return main_arms(a, sys.argv[1:])
    import torch  # here, so that the tests import the figures' code without torch
    import workloads
    task = workloads.WORKLOADS[a.workload].builder(a.variant)
    shim = "pygraph" in os.environ.get("LD_PRELOAD", "")
    out = {"workload": a.workload, "variant": a.variant, "shim": shim, "shapes": {}}
    for steps in (int(s) for s in a.shapes.split(",")):
        def chunk():
            for _ in range(steps):
                task.step()
            task.sync()

        for _ in range(a.warm):
            chunk()
        act = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=act) as prof:
            for k in range(a.chunks):
                with torch.profiler.record_function(f"chunk{k}"):
                    chunk()
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            prof.export_chrome_trace(f.name)
            trace = json.load(open(f.name))["traceEvents"]
        marks = [e for e in trace if e.get("cat") == "user_annotation" and
                 e.get("name", "").startswith("chunk")]
        chunks = chunk_activities(trace, marks)
        rows = chunk_figures(trace, chunks)
        fig = {k: median_of(rows, k) for k in FIGURES}
        fig["chunks"] = len(rows)
        fig["activities"] = median_of(rows, "activities")
        kernels = kernel_times(chunks)
        gaps = gap_places(chunks)
        out["shapes"][steps] = dict(fig, kernels=kernels, gaps=gaps)
        print(f"{'shim' if shim else 'none'} steps={steps} " +
              " ".join(f"{k}={v:.1f}" for k, v in fig.items()), flush=True)
        for k in kernels[:8]:
            print(f"  {k['per_chunk']:6.1f} a chunk  median {k['median_us']:9.2f} us  "
                  f"{k['name'][:90]}", flush=True)
        for g in gaps[:8]:
            print(f"  gap {g['median_gap']:7.2f} us before #{g['index']:<4d} {g['name'][:80]}",
                  flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
