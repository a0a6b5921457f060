"""Section `decide` of tests/gpu/check.py: the GPU truth of issue 11, measured decisions per
sequence and the decision cache (PYGRAPH_MEASURE_WINDOWS=3, measure_iterations and
min_gain_percent at their defaults, 8 and 2 %, and a fresh PYGRAPH_CACHE file per run unless
said otherwise).

The workloads are the benchmark suite's (tests/bench/suite/workloads.py, run by its worker.py);
the side-by-side timing is the suite's too (tests/gpu/harness.py: cells take turns chunk by
chunk on one core, the change is the median of the chunk pairs' ratios with its quartiles). In
the lockstep parts the cell with decisions warms up long enough to reach its verdicts (its
sequences are measured in its warm-up), the cell without the shim for the suite's warm-up, so
that the measuring windows run while the other cell already waits; the timed chunks come after.

  1. GPU-bound: resnet50-b64 eager, no shim against the shim with decisions, in lockstep.
     PASS if the median of the chunk pairs is at most +1.0 % (not more than 1 % slower; faster
     is no failure), and PASS if at least 90 % of the launches of the sequences in the stats'
     decisions.sequences are in sequences that ended "eager", or "graph" with graphs measured
     not slower (gain >= 0; one being measured again at the end counts by its last verdict,
     from the cache file); info: verdicts, quartiles.
  2. Launch-bound: mlp-train eager and compiled-b1 eager, the same way. PASS if the sequence
     with the most launches ends with verdict "graph" (one being measured again at the end
     counts by its last verdict, from the cache file); info: the time change.
  3. Reduce-overhead: mlp-train compile-ro without the shim and with it and decisions, in
     lockstep, 200 chunk pairs. "Never slower", within the noise: PASS if the 95 % confidence
     interval of the chunk pairs' median change (harness.median_interval) reaches down to 0 or
     below (the pairs do not show it slower) and stays below +2 % (they show it at most that
     much slower); info: the quartiles. (Until session 18 the rule was on the quartiles, with 24
     pairs: on a host whose pace switches between the two chunks of a pair they spread by +-5
     to +-20 % in any cell, off mode and longer chunks included, so no cell could pass it.)
  4. Warm start: mlp-train eager run twice in plain mode (no lockstep), chunks of 4 iterations
     from iteration 0 without warm-up, a stats snapshot after every chunk (--stats-every-chunk),
     one cache file (fresh before the first run). Info per run: the iteration at which graphs
     start (first chunk with launches replayed in graphs) and the time of the first 100
     iterations. PASS if the second run completed no measurement window in those first 100
     iterations (decisions.windows == 0 in the snapshot after them) and took verdicts from the
     cache (decisions.cached > 0), and PASS if it starts graphing no later than the first.
     (Sequences begun but never long enough to fill a window, such as set-up before the loop,
     are listed as info, and so are the windows of the whole run: a cached verdict is measured
     again later when its graph iterations drift, as a measured one is. Until session 19 the
     row counted the whole run's windows, and a host whose pace switched by 37 % after
     iteration 60 failed it.)
  5. Shared cache: two torchrun ranks (tests/gpu/decide_ranks.py; no process group) on the same
     GPU with one PYGRAPH_CACHE, rank 0 mlp-train eager, rank 1 compiled-b1 eager; before, the
     same two runs at the same time but each with a cache file of its own. PASS if every
     signature of the separate files is in the joint file, and PASS if every verdict the ranks
     themselves reached in the joint run (measured "graph"/"eager" in their end snapshots) is in
     it. A failure of the first with the second passing means the runs decided different
     sequences (timing), not a lost entry; the info row lists what is missing and whether the
     joint run's ranks decided it.

DECIDE_PARTS=launch_bound,... runs only those parts (names as in parts()).
Run time on an H100: about 3 minutes (1: 25 s, 2: 40 s, 3: 80-110 s, most of it compile-ro's
cold compile, 200 chunk pairs about 20 s, 4: 25 s, 5: 30 s; the processes of each part start torch, about 5-10 s). Files
in OUT/decide/: per run the worker's result, its stats snapshots and exit stats, its cache file
and log.
"""
import copy
import glob
import os
import signal
import statistics
import subprocess
import sys

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.normpath(os.path.join(HERE, "..", "bench", "suite"))
if SUITE not in sys.path:
    sys.path.append(SUITE)
import workloads  # noqa: E402  (the suite's registry; imports no torch)

WORKER = os.path.join(SUITE, "worker.py")
RANKS = os.path.join(HERE, "decide_ranks.py")
CACHE_SCHEMA = "pygraph-decisions/1"  # shim/core/decisions/decision_cache.cpp
MEASURE_WINDOWS = 3

GPU_BOUND_LIMIT = 1.0  # %: the GPU-bound workload's median change at most this
SETTLED_SHARE = 90.0  # %: of its launches in sequences decided eager or graph-not-slower
RO_LIMIT = 2.0  # %: the reduce-overhead variant's median change known to be below this

def warm_chunks(spec):
    """Untimed chunks of the timed shape after the warm-up, in the lockstep's turns."""
    return spec.get("warm_chunks", workloads.WARM_CHUNKS)


# What each part runs (worker.py's arguments); steps left out are the suite's. "warmup" is the
# cell with decisions: long enough to measure its sequences, 3 pairs of windows of 8
# occurrences, where a loop's occurrence is its period unrolled up to 128 launches (by its
# launches per iteration: about 2 iterations of mlp-train, 8 of compiled-b1 and of mlp-train
# compile-ro, 1 of resnet50-b64), with room for the loop to be found and for interruptions.
PLAN = {
    "gpu_bound": {"workload": "resnet50-b64", "variant": "eager", "warmup": 300, "chunks": 24},
    "launch_bound": [
        {"workload": "mlp-train", "variant": "eager", "warmup": 400, "chunks": 16},
        {"workload": "compiled-b1", "variant": "eager", "warmup": 1000, "chunks": 16},
    ],
    # Many short chunks: the median's confidence interval narrows with their number.
    "reduce_overhead": {"workload": "mlp-train", "variant": "compile-ro", "warmup": 1000,
                        "chunks": 200},
    # From the first iteration: no warm-up, no untimed chunks (the others run the suite's
    # workloads.WARM_CHUNKS, in the lockstep's turns).
    "warm_start": {"workload": "mlp-train", "variant": "eager", "warmup": 0, "warm_chunks": 0,
                   "chunks": 120, "steps": 4, "first": 100},
    "shared_cache": [
        {"workload": "mlp-train", "variant": "eager", "warmup": 400, "chunks": 4},
        {"workload": "compiled-b1", "variant": "eager", "warmup": 1000, "chunks": 4},
    ],
}


# ---------------------------------------------------------------- rules and figures (pure)

def sequences(stats):
    """decisions.sequences of a stats document ([] without one)."""
    return ((stats or {}).get("decisions") or {}).get("sequences") or []


def verdict_counts(stats):
    """{verdict: (sequences, launches)}."""
    out = {}
    for s in sequences(stats):
        n, launches = out.get(s.get("verdict"), (0, 0))
        out[s.get("verdict")] = (n + 1, launches + (s.get("launches") or 0))
    return out


def verdict_text(stats):
    """e.g. "graph 2 (95 %), eager 1 (5 %), measuring 0 (0 %)": sequences and share of
    launches per verdict."""
    c = verdict_counts(stats)
    total = sum(l for _, l in c.values())
    if not sequences(stats):
        return "no sequences"
    return ", ".join(f"{v} {c.get(v, (0, 0))[0]} ({100.0 * c.get(v, (0, 0))[1] / total:.0f} %)"
                     if total else f"{v} {c.get(v, (0, 0))[0]}"
                     for v in ("graph", "eager", "measuring"))


def last_verdict(seq, cache=None):
    """(verdict, gain) of a decisions.sequences entry; one being measured again at the end
    ("measuring") counts by its last verdict, the cache file's entry for its signature, when
    there is one (a drift can start a measurement late in the run: ResNet-50 b64's, session
    18)."""
    entry = (cache or {}).get(seq.get("signature") or "")
    if seq.get("verdict") == "measuring" and entry:
        return entry.get("verdict"), cache_gain(entry)
    return seq.get("verdict"), seq.get("gain_percent") or 0.0


def settled_share(stats, cache=None):
    """Percent of the launches of decisions.sequences in sequences that ended "eager", or
    "graph" with graphs measured not slower (gain >= 0), by their last verdict (last_verdict);
    None without sequences or launches."""
    seqs = sequences(stats)
    total = sum(s.get("launches") or 0 for s in seqs)
    if not total:
        return None
    settled = 0
    for s in seqs:
        verdict, gain = last_verdict(s, cache)
        if verdict == "eager" or (verdict == "graph" and gain >= 0):
            settled += s.get("launches") or 0
    return 100.0 * settled / total


def cache_gain(entry):
    e, g = entry.get("eager_us") or 0, entry.get("graph_us") or 0
    return 100.0 * (1 - g / e) if e > 0 else 0.0


def main_verdict(stats, cache=None):
    """The sequence with the most launches: {"verdict", "gain", "signature", "from_cache"}, or
    None without sequences. One being measured again at the end ("measuring") counts by its last
    verdict, the cache file's entry for its signature, when there is one."""
    seqs = sequences(stats)
    if not seqs:
        return None
    top = max(seqs, key=lambda s: s.get("launches") or 0)
    verdict, gain = last_verdict(top, cache)
    return {"verdict": verdict, "gain": gain, "signature": top.get("signature"),
            "from_cache": verdict != top.get("verdict")}


def gpu_bound_ok(change):
    return change is not None and change["median"] <= GPU_BOUND_LIMIT


def never_slower(change):
    """The median change's 95 % confidence interval reaches 0 or below (not shown slower) and
    ends below RO_LIMIT (shown at most that much slower)."""
    return (change is not None and change.get("lo") is not None and change["lo"] <= 0 and
            change["hi"] < RO_LIMIT)


def interval_text(change):
    """The median change with its 95 % interval, as the never-slower rows give it."""
    if not change or change.get("lo") is None:
        return "too few pairs"
    return f"{change['median']:+.1f} [{change['lo']:+.1f}, {change['hi']:+.1f}]"


def change_text(change):
    if change is None:
        return "no pairs"
    return f"{change['median']:+.2f} ({change['q1']:+.1f}/{change['q3']:+.1f})"


def first_graph_chunk(snapshots):
    """Index of the first snapshot (one after each chunk) with launches replayed in graphs;
    None if none has."""
    for k, s in enumerate(snapshots):
        if s and ((s.get("launches") or {}).get("replayed_in_graphs") or 0) > 0:
            return k
    return None


def chunks_for(n, steps):
    """Whole chunks of `steps` iterations that hold the first n iterations."""
    return -(-n // steps)


def first_snapshot(snapshots, steps, n):
    """The stats snapshot taken after the first n iterations (whole chunks); None if the run
    had fewer or that snapshot is missing."""
    k = chunks_for(n, steps)
    return snapshots[k - 1] if 0 < k <= len(snapshots) else None


def first_iterations_ms(chunk_ms, steps, n):
    """Time of the first n iterations (whole chunks), from per-chunk ms per iteration; None if
    the run had fewer."""
    k = chunks_for(n, steps)
    if len(chunk_ms) < k:
        return None
    return sum(chunk_ms[:k]) * steps


def cache_entries(path):
    """The entries of a decision cache file, by signature ({} when missing or not a cache)."""
    doc = harness.read_json(path)
    if not isinstance(doc, dict) or doc.get("schema") != CACHE_SCHEMA or \
            not isinstance(doc.get("entries"), dict):
        return {}
    return doc["entries"]


def decided_signatures(stats):
    """Signatures whose verdict the process measured itself (and so recorded in its cache)."""
    return {s["signature"] for s in sequences(stats)
            if s.get("signature") and s.get("source") == "measured" and
            s.get("verdict") in ("graph", "eager")}


def compare_shared(separate, joint, ranks_decided):
    """separate: entries of each separate run's cache; joint: entries of the joint run's;
    ranks_decided: signatures the joint run's ranks decided. "missing": of the separate runs'
    union, not in the joint file; "lost": decided by a joint rank, not in the joint file."""
    union = set()
    for entries in separate:
        union |= set(entries)
    return {"union": len(union), "joint": len(joint),
            "missing": sorted(union - set(joint)),
            "lost": sorted(set(ranks_decided) - set(joint)),
            "decided": len(ranks_decided)}


def fresh_cache(path):
    """Removes a cache file and what its saves leave beside it."""
    for f in [path, path + ".lock"] + glob.glob(glob.escape(path) + ".tmp-*") + \
            glob.glob(glob.escape(path) + ".bad-*"):
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass


def log_tail(path, n=300):
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f if l.strip()]
    except OSError:
        return "no log"
    for l in reversed(lines):
        if any(k in l for k in ("Error", "error", "failed", "FAIL", "what()")):
            return l[-n:]
    return (lines[-1] if lines else "no output")[-n:]


# ---------------------------------------------------------------- the section

class Decide:
    """The parts of the section, each a step of check.py (rows through check.row / check.add).
    worker_cmd and torchrun are attributes so that the CPU test can run it on fake programs."""

    def __init__(self, check, plan=None):
        self.c = check
        self.out = os.path.join(check.out, "decide")
        os.makedirs(self.out, exist_ok=True)
        self.plan = copy.deepcopy(plan or PLAN)
        self.worker_cmd = [WORKER]  # run with sys.executable, then WORKLOAD VARIANT ARGS
        self.torchrun = [sys.executable, "-m", "torch.distributed.run"]
        self.core = max(0, min(3, (os.cpu_count() or 1) - 1))
        self.ready_timeout, self.run_timeout = 300, 300

    def parts(self):
        parts = [self.decide_gpu_bound, self.decide_launch_bound, self.decide_reduce_overhead,
                 self.decide_warm_start, self.decide_shared_cache]
        # DECIDE_PARTS=launch_bound,warm_start: only these (a short device call re-checks one).
        only = os.environ.get("DECIDE_PARTS")
        if only:
            names = {f.__name__.removeprefix("decide_"): f for f in parts}
            unknown = [n for n in only.split(",") if n not in names]
            if unknown:
                raise SystemExit(f"decide: DECIDE_PARTS names no part: {', '.join(unknown)} "
                                 f"(parts: {', '.join(names)})")
            parts = [names[n] for n in only.split(",")]
        return parts

    # -------------------------------------------------------- helpers

    def env(self, mode, cache=None, stats_exit=None):
        """A cell's environment: without the shim (mode None), or with it in `mode`."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("PYGRAPH_") and k != "LD_PRELOAD"}
        env["PYTHONUNBUFFERED"] = "1"
        if mode:
            env.update(LD_PRELOAD=self.c.shim, PYGRAPH_MODE=mode,
                       PYGRAPH_MEASURE_WINDOWS=str(MEASURE_WINDOWS), PYGRAPH_CACHE=cache)
            if stats_exit:
                env["PYGRAPH_STATS"] = stats_exit  # %p: compile workers inherit the shim
        return env

    def steps(self, spec):
        return spec.get("steps") or workloads.WORKLOADS[spec["workload"]].steps

    def worker_args(self, spec, base, extra=()):
        """worker.py's command line after the interpreter (script first)."""
        warm = ["--warm-chunks", str(warm_chunks(spec))]
        return self.worker_cmd + [
            spec["workload"], spec["variant"], "--chunks", str(spec["chunks"]),
            "--steps", str(self.steps(spec)), "--warmup", str(spec["warmup"]),
            "--stats-prefix", base + ".", "--result", base + ".json"] + warm + list(extra)

    def clean(self, base):
        for f in glob.glob(glob.escape(base) + ".*"):
            if not os.path.isdir(f):
                os.unlink(f)

    def lockstep(self, tag, spec, off=False):
        """The workload without the shim (the suite's warm-up) and with the shim and decisions
        (spec's warm-up), in lockstep; with off, also the shim in off mode (the suite's warm-up):
        the cost of the interposition alone on this host. Returns {cell: {"chunk_ms", "warm",
        "end", "cache"}}."""
        w = workloads.WORKLOADS[spec["workload"]]
        cells = {"none": (dict(spec, warmup=w.warmup), None), "decide": (spec, "graph")}
        if off:
            cells["off"] = (dict(spec, warmup=w.warmup), "off")
        groups, bases = {}, {}
        try:
            for cell, (cspec, mode) in cells.items():
                name = f"{tag}.{cell}"
                base = os.path.join(self.out, name)
                self.clean(base)
                cache = base + ".cache.json"
                fresh_cache(cache)
                wk = harness.Worker(name, self.out, label=f"{tag} {cell}")
                argv = [sys.executable] + self.worker_args(
                    cspec, base, ["--core", str(self.core), "--go", wk.go, "--done", wk.done])
                wk.start(argv, self.env(mode, cache, base + ".exit.%p.json"))
                groups[cell] = [wk]
                bases[cell] = (base, cache)
            ls = harness.Lockstep(groups, ready_timeout=self.ready_timeout, chunk_timeout=120)
            ls.run(spec["chunks"], warm=warm_chunks(spec))
        finally:
            for g in groups.values():
                for wk in g:
                    wk.close()
        if ls.failed:
            raise RuntimeError("; ".join(f"{tag} {c}: {why}" for c, why in ls.failed.items()))
        res = {}
        for cell, (base, cache) in bases.items():
            r = harness.read_json(base + ".json")
            if not r:
                raise RuntimeError(f"{tag} {cell}: no result file")
            res[cell] = {"chunk_ms": r["chunk_ms"], "warm": harness.read_json(base + ".warm.json"),
                         "end": harness.read_json(base + ".end.json"),
                         "cache": cache_entries(cache)}
        return res

    def start(self, argv, env, log):
        f = open(log, "w")
        f.write("$ " + " ".join(argv) + "\n")
        f.flush()
        # Its own process group: a hung run is killed with its children (torchrun's ranks).
        p = subprocess.Popen(argv, env=env, stdout=f, stderr=subprocess.STDOUT,
                             start_new_session=True)
        f.close()
        return p

    def wait(self, p, log, what):
        try:
            rc = p.wait(timeout=self.run_timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            raise RuntimeError(f"{what}: no end within {self.run_timeout} s (killed)")
        if rc != 0:
            raise RuntimeError(f"{what}: exit {rc}: {log_tail(log)}")

    def shim_rows(self, name, spec, res, change):
        """Info rows common to the lockstep parts."""
        none, dec = res["none"], res["decide"]
        self.c.add((f"decide {name}: ms/iteration, no shim / decisions (median chunk)",
                    f"{statistics.median(none['chunk_ms']):.3f}/"
                    f"{statistics.median(dec['chunk_ms']):.3f}",
                    f"{spec['chunks']} x {self.steps(spec)}", "info"))
        end, warm = dec["end"], dec["warm"]
        d = (end or {}).get("decisions") or {}
        cov = harness.stats_delta(end, warm)["coverage_percent"] if end else 0.0
        self.c.add((f"decide {name}: verdicts at the end (sequences, % of launches)",
                    verdict_text(end),
                    f"measured {d.get('measurements', 0)}; coverage {cov:.0f} %", "info"))
        self.c.add((f"decide {name}: still measuring after warm-up (sequences)",
                    verdict_counts(warm).get("measuring", (0, 0))[0],
                    f"warm-up {spec['warmup']}", "info"))

    # -------------------------------------------------------- the parts

    def decide_gpu_bound(self):
        spec = self.plan["gpu_bound"]
        name = spec["workload"]
        res = self.lockstep(f"gpu.{name}", spec)
        change = harness.pair_change(res["decide"]["chunk_ms"], res["none"]["chunk_ms"])
        self.c.row(f"decide {name}: time change with decisions (%, median of chunk pairs)",
                   f"{change['median']:+.2f}" if change else "no pairs",
                   f"<= +{GPU_BOUND_LIMIT:.1f}", gpu_bound_ok(change))
        self.c.add((f"decide {name}: chunk-pair quartiles (%)",
                    f"{change['q1']:+.1f}/{change['q3']:+.1f}" if change else "-", "spread",
                    "info"))
        share = settled_share(res["decide"]["end"], res["decide"]["cache"])
        self.c.row(f"decide {name}: launches in sequences decided eager or graph-not-slower (%)",
                   "no stats" if share is None else f"{share:.1f}", f">= {SETTLED_SHARE:.0f}",
                   share is not None and share >= SETTLED_SHARE)
        self.shim_rows(name, spec, res, change)

    def decide_launch_bound(self):
        for spec in self.plan["launch_bound"]:
            try:
                self.launch_bound(spec)
            except Exception as e:  # the next workload still runs
                self.c.row(f"error in decide {spec['workload']}", str(e)[:200], "-", False)

    def launch_bound(self, spec):
        name = spec["workload"]
        res = self.lockstep(f"launch.{name}", spec)
        change = harness.pair_change(res["decide"]["chunk_ms"], res["none"]["chunk_ms"])
        v = main_verdict(res["decide"]["end"], res["decide"]["cache"])
        if v is None:
            value = "no sequences"
        else:
            value = f"{v['verdict']} ({v['gain']:+.1f} %)" + \
                (" (cache: measuring again)" if v["from_cache"] else "")
        self.c.row(f"decide {name}: verdict of its main sequence (gain)", value, "graph",
                   v is not None and v["verdict"] == "graph")
        self.c.add((f"decide {name}: time change with decisions (%, median (q1/q3))",
                    change_text(change), "chunk pairs", "info"))
        self.shim_rows(name, spec, res, change)

    def decide_reduce_overhead(self):
        spec = self.plan["reduce_overhead"]
        name = f"{spec['workload']} {spec['variant']}"
        res = self.lockstep(f"ro.{spec['workload']}", spec, off=True)
        change = harness.pair_change(res["decide"]["chunk_ms"], res["none"]["chunk_ms"])
        self.c.row(f"decide {name}: shim+decisions vs without (%, median and its 95 % interval)",
                   interval_text(change), f"low <= 0, high < +{RO_LIMIT:.0f}",
                   never_slower(change))
        # The control (session 21): this row moved between -3.4 and +2.9 % from host to host
        # with the engine unchanged, each time with a narrow interval. Off mode in the same
        # lockstep tells a host that slows any preloaded library from a cost of graph mode.
        off = harness.pair_change(res["off"]["chunk_ms"], res["none"]["chunk_ms"])
        self.c.add((f"decide {name}: shim in off mode vs without (%, control)",
                    interval_text(off), "the interposition alone", "info"))
        self.shim_rows(name, spec, res, change)

    def decide_warm_start(self):
        spec = self.plan["warm_start"]
        name, steps, first = spec["workload"], self.steps(spec), spec["first"]
        cache = os.path.join(self.out, "warm.cache.json")
        fresh_cache(cache)
        runs = []
        for k in (1, 2):
            base = os.path.join(self.out, f"warm.run{k}")
            self.clean(base)
            log = base + ".log"
            argv = [sys.executable] + self.worker_args(spec, base, ["--stats-every-chunk"])
            p = self.start(argv, self.env("graph", cache, base + ".exit.%p.json"), log)
            self.wait(p, log, f"warm start run {k}")
            r = harness.read_json(base + ".json")
            if not r:
                raise RuntimeError(f"warm start run {k}: no result file: {log_tail(log)}")
            snaps = [harness.read_json(harness.chunk_stats_path(base + ".", i))
                     for i in range(len(r["chunk_ms"]))]
            end = harness.read_json(base + ".end.json") or {}
            run = {"start": first_graph_chunk(snaps),
                   "early": first_snapshot(snaps, steps, first),
                   "first_ms": first_iterations_ms(r["chunk_ms"], steps, first),
                   "decisions": end.get("decisions") or {}, "end": end,
                   "snapshots": sum(1 for s in snaps if s)}
            runs.append(run)
            start = "never" if run["start"] is None else str(run["start"] * steps)
            self.c.add((f"decide warm start {name} run {k}: graphs from iteration / "
                        f"first {first} iterations (ms)",
                        f"{start} / " + ("-" if run["first_ms"] is None
                                         else f"{run['first_ms']:.1f}"),
                        f"chunks of {steps}; {run['snapshots']} snapshots", "info"))
            d = run["decisions"]
            self.c.add((f"decide warm start {name} run {k}: measurements/windows/cached/graph/eager",
                        f"{d.get('measurements', 0)}/{d.get('windows', 0)}/{d.get('cached', 0)}/"
                        f"{d.get('graph', 0)}/{d.get('eager', 0)}",
                        f"cache: {len(cache_entries(cache))} entries", "info"))
        one, two = runs
        d = two["decisions"]
        # A measurement window is what a warm start saves; a sequence met only once or twice
        # (model set-up before the loop) begins a measurement that never fills a window, cached
        # or not: no time spent eagerly. The row judges the first iterations, which the issue
        # times: later, a cached verdict is measured again when its graph iterations drift, as
        # any verdict is (session 19: a second run's host slowed by 37 % after iteration 60).
        early = two["early"]
        early_windows = None if early is None else (early.get("decisions") or {}).get("windows", 0)
        measured, cached = d.get("measurements", 0), d.get("cached", 0)
        self.c.row(f"decide warm start {name}: run 2 measurement windows in the first {first} "
                   "iterations / cached",
                   f"{'-' if early_windows is None else early_windows} / {cached}", "0 / > 0",
                   early_windows == 0 and cached > 0)
        if measured:
            again = [f"{s.get('signature')} {s.get('verdict')}" for s in sequences(two["end"])
                     if s.get("source") == "measured"]
            self.c.add((f"decide warm start {name}: run 2 measured", "; ".join(again)[:200] or
                        "-", "not in the cache", "info"))
        # What started a measurement again ("again: …" while measuring, "measured again: …"
        # after a verdict): the whole line, or from there on where it is too long to show.
        drifted = [w if len(w) <= 150 else w[w.index("again: "):]
                   for w in (s.get("why", "") for s in sequences(two["end"])) if "again: " in w]
        self.c.add((f"decide warm start {name}: run 2 windows by its end (measured again)",
                    f"{d.get('windows', 0)}" + (f": {drifted[0][:150]}" if drifted else ""),
                    "drift or a recheck", "info"))
        s1, s2 = one["start"], two["start"]
        fmt = lambda s: "never" if s is None else str(s * steps)
        self.c.row(f"decide warm start {name}: graphs from iteration, run 2 vs run 1",
                   f"{fmt(s2)} vs {fmt(s1)}", "run 2 <= run 1",
                   s2 is not None and (s1 is None or s2 <= s1))
        if one["first_ms"] and two["first_ms"]:
            self.c.add((f"decide warm start {name}: first {first} iterations, run 2 vs run 1 (%)",
                        f"{100.0 * (two['first_ms'] / one['first_ms'] - 1):+.1f}",
                        "one run each: noisy", "info"))

    def decide_shared_cache(self):
        specs = self.plan["shared_cache"]
        names = [s["workload"] for s in specs]
        # Separate: each workload with a cache file of its own, both at once (the GPU shared as
        # in the joint run, so that the same sequences are measured under the same conditions).
        procs, separate = [], []
        for i, spec in enumerate(specs):
            base = os.path.join(self.out, f"shared.sep{i}")
            self.clean(base)
            cache = base + ".cache.json"
            fresh_cache(cache)
            argv = [sys.executable] + self.worker_args(spec, base)
            log = base + ".log"
            procs.append((self.start(argv, self.env("graph", cache, base + ".exit.%p.json"), log),
                          log, f"separate run of {spec['workload']}", cache))
        errors = []
        for p, log, what, cache in procs:
            try:
                self.wait(p, log, what)
            except RuntimeError as e:  # the other run is still waited for
                errors.append(str(e))
            separate.append(cache_entries(cache))
        if errors:
            raise RuntimeError("; ".join(errors))
        # Joint: torchrun's ranks, one cache file.
        cache = os.path.join(self.out, "shared.joint.cache.json")
        fresh_cache(cache)
        commands, bases = [], []
        for i, spec in enumerate(specs):
            base = os.path.join(self.out, f"shared.joint{i}")
            self.clean(base)
            bases.append(base)
            if commands:
                commands.append("::")
            commands += self.worker_args(spec, base)
        argv = self.torchrun + ["--standalone", "--nproc-per-node", str(len(specs)), RANKS] + \
            commands
        log = os.path.join(self.out, "shared.joint.log")
        env = self.env("graph", cache, os.path.join(self.out, "shared.joint.exit.%p.json"))
        self.wait(self.start(argv, env, log), log, "torchrun of the joint run")
        joint = cache_entries(cache)
        decided = set()
        for base in bases:
            end = harness.read_json(base + ".end.json")
            if end is None:
                raise RuntimeError(f"joint run: no end snapshot {base}.end.json")
            decided |= decided_signatures(end)
        cmp = compare_shared(separate, joint, decided)
        bad = glob.glob(glob.escape(cache) + ".bad-*")
        self.c.add((f"decide shared cache: entries, {' / '.join(names)} alone / joint",
                    " / ".join(str(len(e)) for e in separate) + f" / {cmp['joint']}",
                    f"{len(bad)} files set aside", "info"))
        self.c.row("decide shared cache: entries of the separate runs in the joint file",
                   f"{cmp['union'] - len(cmp['missing'])} of {cmp['union']}", "all, > 0",
                   cmp["union"] > 0 and not cmp["missing"])
        self.c.row("decide shared cache: verdicts the 2 ranks reached, in the joint file",
                   f"{cmp['decided'] - len(cmp['lost'])} of {cmp['decided']}", "all, > 0",
                   cmp["decided"] > 0 and not cmp["lost"])
        if cmp["missing"]:
            why = [f"{s} ({'decided by a rank: lost' if s in decided else 'not decided jointly'})"
                   for s in cmp["missing"]]
            self.c.add(("decide shared cache: missing from the joint file", "; ".join(why)[:200],
                        "", "info"))
