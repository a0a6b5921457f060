"""CPU tests of the GPU check's `decide` section (tests/gpu/decide.py) and what it adds to the
harness (--stats-every-chunk) and to check.py: its rules on made-up figures, the cache-file
comparison, the rank wrapper, and the whole section run on fake programs (a worker that speaks
worker.py's protocol and writes made-up stats snapshots and cache files as the shim would, and a
torchrun that starts one process per rank), passing, and failing where a fake misbehaves; and
check.py's launch-cost row (the median of processes) and machine row. Run by ctest.

    python3 decide_test.py                    # the tests
    python3 decide_test.py --worker W V ...   # (a fake worker, started by the tests)
    python3 decide_test.py --torchrun ...     # (a fake torchrun)
"""
import argparse
import fcntl
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stdout
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check  # noqa: E402
import decide  # noqa: E402
import decide_ranks  # noqa: E402
import harness  # noqa: E402

THIS = os.path.abspath(__file__)
REAL_DECIDE = decide.Decide  # check.main's test replaces decide.Decide

# ---------------------------------------------------------------- fakes

# Sequences the fake shim "finds" per workload and variant: signature, launches per iteration,
# the verdict its measurement reaches.
FAKE_SEQS = {
    ("resnet50-b64", "eager"): [("p-249-00000000000000a1", 249, "eager")],
    ("mlp-train", "eager"): [("p-110-00000000000000b1", 110, "graph"),
                             ("s-12-00000000000000b2", 12, "graph")],
    ("compiled-b1", "eager"): [("p-128-00000000000000c1", 128, "graph"),
                               ("s-3-00000000000000c2", 3, "eager")],
    ("mlp-train", "compile-ro"): [("p-80-00000000000000d1", 80, "eager")],
}
SHIM_FACTOR = {("resnet50-b64", "eager"): 1.0, ("mlp-train", "eager"): 0.9,
               ("compiled-b1", "eager"): 0.95, ("mlp-train", "compile-ro"): 0.995}
GRAPH_FROM, DECIDE_AFTER = 5, 10  # iterations: graphs replayed after, verdicts reached at


class FakeEngine:
    """What the shim would write: stats snapshots with decisions, and the cache file at exit
    (merged under PATH.lock as decision_cache.cpp does; FAKE_LOSE=1: overwritten, unmerged).
    FAKE_IGNORE_CACHE=1 measures whatever the cache holds, FAKE_EAGER=WORKLOAD decides eager,
    FAKE_DRIFT=N measures a cached verdict again (3 windows) from iteration N on."""

    def __init__(self, workload, variant, env):
        self.seqs = FAKE_SEQS[workload, variant]
        self.verdicts = {s: ("eager" if env.get("FAKE_EAGER") == workload else v)
                         for s, _, v in self.seqs}
        self.path = env.get("PYGRAPH_CACHE")
        self.lose = env.get("FAKE_LOSE") == "1"
        self.drift = int(env.get("FAKE_DRIFT") or 0)
        self.cached = set()
        if self.path and env.get("FAKE_IGNORE_CACHE") != "1":
            entries = decide.cache_entries(self.path)
            self.cached = {s for s, _, _ in self.seqs if s in entries}
            for s in self.cached:
                self.verdicts[s] = entries[s]["verdict"]
        self.n = 0

    def step(self):
        self.n += 1

    def decided(self, sig, n=None):
        return sig in self.cached or (self.n if n is None else n) >= DECIDE_AFTER

    def doc(self):
        per_iter = sum(l for _, l, _ in self.seqs)
        seqs, counts = [], {"graph": 0, "eager": 0}
        again = 0
        for sig, l, _ in self.seqs:
            v = self.verdicts[sig] if self.decided(sig) else "measuring"
            source = "cached" if sig in self.cached else "measured"
            why = v
            if source == "cached" and self.drift and self.n >= self.drift:
                v, source, why = "measuring", "measured", "measuring (window 4 of 6; again: drift)"
                again += 3
            gain = 0.0 if source == "cached" else {"graph": 8.0, "eager": 0.4}.get(v, 0.0)
            if source == "measured" and v in counts:
                counts[v] += 1
            seqs.append({"signature": sig, "verdict": v, "source": source, "why": why,
                         "launches": l * self.n, "gain_percent": gain, "eager_us": 100.0,
                         "graph_us": 100.0 - gain})
        replayed = per_iter * max(0, self.n - GRAPH_FROM)
        return {"schema": "pygraph-stats/1", "mode": "graph",
                "launches": {"seen_by_engine": per_iter * self.n, "replayed_in_graphs": replayed,
                             "eager": per_iter * self.n - replayed},
                "graphs": {"instantiated": 2, "replays": max(0, self.n - GRAPH_FROM)},
                "decisions": dict(counts, measurements=len(self.seqs) - len(self.cached),
                                  windows=sum(6 if self.decided(sig) else min(self.n // 8, 5)
                                              for sig, _, _ in self.seqs
                                              if sig not in self.cached) + again,
                                  cached=len(self.cached), config=0, sequences=seqs)}

    def write(self, path):
        with open(path, "w") as f:
            json.dump(self.doc(), f)
        return True

    def save(self):
        mine = {s: {"verdict": self.verdicts[s], "why": "fake", "eager_us": 100.0,
                    "graph_us": 92.0, "windows": 6, "launches": l, "gpu": "Fake GPU",
                    "driver": "13000", "shim": "0.1.0", "updated": int(time.time())}
                for s, l, _ in self.seqs if s not in self.cached and self.decided(s)}
        if not self.path or not mine:
            return
        with open(self.path + ".lock", "a") as lock:
            if not self.lose:
                fcntl.flock(lock, fcntl.LOCK_EX)
            merged = {} if self.lose else dict(decide.cache_entries(self.path))
            merged.update(mine)
            tmp = f"{self.path}.tmp-{os.getpid()}"
            with open(tmp, "w") as f:
                json.dump({"schema": decide.CACHE_SCHEMA, "entries": merged}, f)
            os.rename(tmp, self.path)


def fake_worker(argv):
    """worker.py's command line and protocol (harness.run_chunks), the shim faked when
    PYGRAPH_MODE=graph; chunk times are made up (deterministic): 1 ms per iteration without the
    shim, SHIM_FACTOR times that with it once decided (FAKE_SLOW=WORKLOAD: 5 % slower;
    FAKE_PRELOAD_SLOW=1: a host where any preloaded cell, off mode too, is 3 % slower)."""
    p = argparse.ArgumentParser()
    p.add_argument("workload")
    p.add_argument("variant")
    harness.add_worker_args(p)
    a = p.parse_args(argv)
    engine = None
    if os.environ.get("PYGRAPH_MODE") == "graph":
        if os.environ.get("FAKE_CRASH") == a.workload:
            print("RuntimeError: fake crash in the warm-up", file=sys.stderr)
            return 3
        engine = FakeEngine(a.workload, a.variant, os.environ)
        harness.write_stats = engine.write  # run_chunks writes its snapshots through it
    step = engine.step if engine else (lambda: None)
    for _ in range(a.warmup):
        step()
    harness.run_chunks(a, step, lambda: None)
    times = []
    for k in range(a.chunks):
        wiggle = 1 + 0.001 * (((k + (1 if engine else 0)) * 7) % 5 - 2)
        factor = 1.0
        if engine:
            n = a.warmup + (a.warm_chunks + k + 1) * a.steps
            factor = SHIM_FACTOR[a.workload, a.variant] if all(
                engine.decided(s, n) for s, _, _ in engine.seqs) else 1.0
            if os.environ.get("FAKE_SLOW") == a.workload:
                factor = 1.05
        if os.environ.get("FAKE_PRELOAD_SLOW") == "1" and os.environ.get("PYGRAPH_MODE"):
            factor *= 1.03
        times.append(factor * wiggle)
    harness.write_result(a, times, harness.digest([b"same"]))
    if engine:
        engine.save()
    return 0


def fake_torchrun(argv):
    """torch.distributed.run's --standalone --nproc-per-node N SCRIPT ARGS: N processes of
    SCRIPT with LOCAL_RANK set; the worst exit status."""
    p = argparse.ArgumentParser()
    p.add_argument("--standalone", action="store_true")
    p.add_argument("--nproc-per-node", type=int, required=True)
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    procs = [subprocess.Popen([sys.executable, a.script] + a.args,
                              env=dict(os.environ, LOCAL_RANK=str(r), RANK=str(r),
                                       WORLD_SIZE=str(a.nproc_per_node)))
             for r in range(a.nproc_per_node)]
    return max(p.wait() for p in procs)


SMALL_PLAN = {
    "gpu_bound": {"workload": "resnet50-b64", "variant": "eager", "warmup": 12, "chunks": 8},
    "launch_bound": [
        {"workload": "mlp-train", "variant": "eager", "warmup": 12, "chunks": 6},
        {"workload": "compiled-b1", "variant": "eager", "warmup": 12, "chunks": 6},
    ],
    "reduce_overhead": {"workload": "mlp-train", "variant": "compile-ro", "warmup": 12,
                        "chunks": 8},
    "warm_start": {"workload": "mlp-train", "variant": "eager", "warmup": 0, "warm_chunks": 0,
                   "chunks": 30, "steps": 4, "first": 100},
    "shared_cache": [
        {"workload": "mlp-train", "variant": "eager", "warmup": 12, "chunks": 2},
        {"workload": "compiled-b1", "variant": "eager", "warmup": 12, "chunks": 2},
    ],
}


def fake_decide(c, plan=None):
    d = REAL_DECIDE(c, plan or SMALL_PLAN)
    d.worker_cmd = [THIS, "--worker"]
    d.torchrun = [sys.executable, THIS, "--torchrun"]
    d.ready_timeout, d.run_timeout = 30, 60
    return d


# ---------------------------------------------------------------- tests

def stats(*seqs, **decisions):
    return {"decisions": dict(decisions, sequences=[
        {"signature": s, "verdict": v, "source": src, "launches": n, "gain_percent": g}
        for s, v, src, n, g in seqs])}


class RulesTest(unittest.TestCase):
    def test_gpu_bound_is_at_most_one_percent_slower(self):
        ch = lambda m: {"median": m, "q1": m - 1, "q3": m + 1, "pairs": 8}
        self.assertTrue(decide.gpu_bound_ok(ch(0.99)))
        self.assertTrue(decide.gpu_bound_ok(ch(-3.0)))  # faster is no failure
        self.assertFalse(decide.gpu_bound_ok(ch(1.01)))
        self.assertFalse(decide.gpu_bound_ok(None))

    def test_never_slower_within_noise(self):
        ch = lambda lo, m, hi: {"median": m, "q1": lo - 5, "q3": hi + 5, "pairs": 200,
                                "lo": lo, "hi": hi}
        self.assertTrue(decide.never_slower(ch(-0.5, 0.2, 1.9)))  # wide quartiles: no matter
        self.assertTrue(decide.never_slower(ch(-3.0, -2.0, -1.0)))
        self.assertFalse(decide.never_slower(ch(0.1, 0.5, 0.9)))  # shown slower
        self.assertFalse(decide.never_slower(ch(-0.5, 0.5, 2.0)))  # not shown within 2 %
        self.assertFalse(decide.never_slower(None))
        self.assertFalse(decide.never_slower({"median": 0, "q1": 0, "q3": 0, "pairs": 3,
                                              "lo": None, "hi": None}))  # too few pairs
        # Against harness.pair_change's figures: a bimodal host (a fifth of the pairs 20 %
        # off either way) around no change passes, around +3 % fails.
        base = [1.0] * 200
        noisy = [1.0 + 0.002 * ((k * 37) % 11 - 5) + (0.2 if k % 10 == 3 else 0) -
                 (0.2 if k % 10 == 7 else 0) for k in range(200)]
        self.assertTrue(decide.never_slower(harness.pair_change(noisy, base)))
        self.assertFalse(decide.never_slower(harness.pair_change([x + 0.03 for x in noisy],
                                                                 base)))
        self.assertFalse(decide.never_slower(harness.pair_change([1.03] * 8, [1.0] * 8)))

    def test_settled_share_weighs_launches(self):
        s = stats(("a", "eager", "measured", 700, 0.3), ("b", "graph", "measured", 200, 5.0),
                  ("c", "measuring", "measured", 100, 0.0))
        self.assertAlmostEqual(decide.settled_share(s), 90.0)
        s = stats(("a", "graph", "measured", 100, -1.0), ("b", "graph", "cached", 100, 0.0))
        self.assertAlmostEqual(decide.settled_share(s), 50.0)  # a graph verdict measured slower
        self.assertIsNone(decide.settled_share({}))
        self.assertIsNone(decide.settled_share(stats(("a", "graph", "measured", 0, 1.0))))
        # Measured again at the end: its last verdict, from the cache file, counts.
        s = stats(("big", "measuring", "measured", 900, 0.0), ("c", "measuring", "measured", 100,
                                                                0.0))
        self.assertAlmostEqual(decide.settled_share(s), 0.0)
        cache = {"big": {"verdict": "graph", "eager_us": 200.0, "graph_us": 180.0}}
        self.assertAlmostEqual(decide.settled_share(s, cache), 90.0)
        cache = {"big": {"verdict": "graph", "eager_us": 200.0, "graph_us": 210.0}}  # slower
        self.assertAlmostEqual(decide.settled_share(s, cache), 0.0)

    def test_verdict_counts_and_text(self):
        s = stats(("a", "graph", "measured", 300, 8.0), ("b", "eager", "measured", 100, 0.1),
                  ("c", "graph", "measured", 100, 3.0))
        self.assertEqual(decide.verdict_counts(s), {"graph": (2, 400), "eager": (1, 100)})
        self.assertEqual(decide.verdict_text(s),
                         "graph 2 (80 %), eager 1 (20 %), measuring 0 (0 %)")
        self.assertEqual(decide.verdict_text(None), "no sequences")

    def test_main_verdict_and_the_cache_for_one_measured_again(self):
        s = stats(("small", "eager", "measured", 10, 0.0), ("big", "graph", "measured", 900, 7.5))
        v = decide.main_verdict(s)
        self.assertEqual((v["verdict"], v["signature"], v["from_cache"]), ("graph", "big", False))
        s = stats(("big", "measuring", "measured", 900, 7.5))
        self.assertEqual(decide.main_verdict(s)["verdict"], "measuring")
        cache = {"big": {"verdict": "graph", "eager_us": 200.0, "graph_us": 180.0}}
        v = decide.main_verdict(s, cache)
        self.assertEqual((v["verdict"], v["from_cache"]), ("graph", True))
        self.assertAlmostEqual(v["gain"], 10.0)
        self.assertIsNone(decide.main_verdict({}))

    def test_decide_parts_chooses_parts_and_refuses_unknown_names(self):
        d = REAL_DECIDE(check.Check("build", tempfile.gettempdir()))
        with mock.patch.dict(os.environ, {"DECIDE_PARTS": "warm_start,launch_bound"}):
            self.assertEqual([f.__name__ for f in d.parts()],
                             ["decide_warm_start", "decide_launch_bound"])
        with mock.patch.dict(os.environ, {"DECIDE_PARTS": "launch_bound,warmstart"}):
            with self.assertRaises(SystemExit) as e:
                d.parts()
            self.assertIn("warmstart", str(e.exception))
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("DECIDE_PARTS", None)
            self.assertEqual(len(d.parts()), 5)

    def test_first_graph_chunk_and_first_iterations(self):
        snaps = [None, {"launches": {"replayed_in_graphs": 0}}, {"launches": {}},
                 {"launches": {"replayed_in_graphs": 5}}, {"launches": {"replayed_in_graphs": 9}}]
        self.assertEqual(decide.first_graph_chunk(snaps), 3)
        self.assertIsNone(decide.first_graph_chunk(snaps[:3]))
        self.assertAlmostEqual(decide.first_iterations_ms([1.0, 2.0, 3.0, 4.0], 4, 8), 12.0)
        # 9 iterations: rounded up to whole chunks of 4.
        self.assertAlmostEqual(decide.first_iterations_ms([1.0, 2.0, 3.0], 4, 9), 24.0)
        self.assertIsNone(decide.first_iterations_ms([1.0, 2.0], 4, 100))
        # The snapshot after the chunk that holds iteration 9 (chunks of 4: the third).
        self.assertIs(decide.first_snapshot(snaps, 4, 9), snaps[2])
        self.assertIs(decide.first_snapshot(snaps, 4, 20), snaps[4])
        self.assertIsNone(decide.first_snapshot(snaps, 4, 21))

    def test_decided_signatures_are_measured_verdicts(self):
        s = stats(("a", "graph", "measured", 1, 1.0), ("b", "eager", "measured", 1, 0.0),
                  ("c", "measuring", "measured", 1, 0.0), ("d", "graph", "cached", 1, 0.0),
                  (None, "measuring", "measured", 1, 0.0))
        self.assertEqual(decide.decided_signatures(s), {"a", "b"})

    def test_compare_shared(self):
        a, b = {"s1": {}, "s2": {}}, {"s3": {}}
        cmp = decide.compare_shared([a, b], {"s1": {}, "s2": {}, "s3": {}, "s4": {}}, {"s1", "s4"})
        self.assertEqual((cmp["union"], cmp["joint"], cmp["missing"], cmp["lost"]),
                         (3, 4, [], []))
        cmp = decide.compare_shared([a, b], {"s3": {}}, {"s1", "s3"})
        self.assertEqual(cmp["missing"], ["s1", "s2"])
        self.assertEqual(cmp["lost"], ["s1"])  # s2: not decided in the joint run

    def test_cache_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "d.json")
            self.assertEqual(decide.cache_entries(path), {})
            with open(path, "w") as f:
                json.dump({"schema": "pygraph-decisions/1",
                           "entries": {"p-1-x": {"verdict": "graph"}}}, f)
            self.assertEqual(list(decide.cache_entries(path)), ["p-1-x"])
            for bad in ('{"schema": "other", "entries": {}}', "not json", '{"entries": []}'):
                with open(path, "w") as f:
                    f.write(bad)
                self.assertEqual(decide.cache_entries(path), {})
            for f in (path, path + ".lock", path + ".tmp-12", path + ".bad-34"):
                open(f, "w").close()
            keep = os.path.join(tmp, "d.json.other")
            open(keep, "w").close()
            decide.fresh_cache(path)
            self.assertEqual(os.listdir(tmp), ["d.json.other"])


class HarnessTest(unittest.TestCase):
    def test_stats_every_chunk(self):
        p = argparse.ArgumentParser()
        harness.add_worker_args(p)
        written = []
        with mock.patch.object(harness, "write_stats", written.append):
            a = p.parse_args(["--chunks", "3", "--steps", "2", "--stats-prefix", "/x/w.",
                              "--stats-every-chunk"])
            self.assertEqual(len(harness.run_chunks(a, lambda: None, lambda: None)), 3)
            self.assertEqual(written, ["/x/w.warm.json", "/x/w.chunk0.json", "/x/w.chunk1.json",
                                       "/x/w.chunk2.json", "/x/w.end.json"])
            self.assertEqual(harness.chunk_stats_path("/x/w.", 2), "/x/w.chunk2.json")
            written.clear()
            harness.run_chunks(p.parse_args(["--chunks", "2", "--steps", "1", "--stats-prefix",
                                             "/x/w."]), lambda: None, lambda: None)
            self.assertEqual(written, ["/x/w.warm.json", "/x/w.end.json"])  # without the flag

    def test_gpus_reads_each_line_of_nvidia_smi(self):
        with tempfile.TemporaryDirectory() as tmp:
            smi = os.path.join(tmp, "nvidia-smi")
            with open(smi, "w") as f:
                f.write("#!/bin/sh\n" + "echo 'NVIDIA H200, 580.159.04'\n" * 2)
            os.chmod(smi, 0o755)
            with mock.patch.dict(os.environ, {"PATH": tmp + os.pathsep + os.environ["PATH"]}):
                self.assertEqual(harness.gpus(), [("NVIDIA H200", "580.159.04")] * 2)
            with open(smi, "w") as f:
                f.write("#!/bin/sh\n")  # answers nothing
            with mock.patch.dict(os.environ, {"PATH": tmp + os.pathsep + os.environ["PATH"]}):
                self.assertRaises(RuntimeError, harness.gpus)


class RanksTest(unittest.TestCase):
    def test_rank_argv(self):
        argv = ["a.py", "x", "--n", "1", "::", "b.py", "y"]
        self.assertEqual(decide_ranks.rank_argv(argv, 0), ["a.py", "x", "--n", "1"])
        self.assertEqual(decide_ranks.rank_argv(argv, 1), ["b.py", "y"])
        with self.assertRaises(SystemExit):
            decide_ranks.rank_argv(argv, 2)
        with self.assertRaises(SystemExit):
            decide_ranks.rank_argv(["::", "b.py"], 0)


class CheckTest(unittest.TestCase):
    def test_decide_is_a_default_section(self):
        self.assertIn("decide", check.SECTIONS.split(","))
        out = subprocess.run([sys.executable, os.path.join(HERE, "check.py"), "--help"],
                             capture_output=True, text=True, check=True).stdout
        self.assertIn("decide", out)

    def test_the_plan_names_suite_workloads_and_variants(self):
        plan = decide.PLAN
        specs = [plan["gpu_bound"], plan["reduce_overhead"], plan["warm_start"]] + \
            plan["launch_bound"] + plan["shared_cache"]
        for s in specs:
            w = decide.workloads.WORKLOADS[s["workload"]]
            self.assertIn(s["variant"], w.variants)
            self.assertIsNotNone(w.builder)
        ws = plan["warm_start"]
        self.assertGreaterEqual(ws["chunks"] * ws["steps"], ws["first"])
        self.assertEqual(ws["warmup"], 0)
        self.assertEqual(decide.warm_chunks(ws), 0)  # its first iterations are the run's
        self.assertEqual(decide.warm_chunks(plan["gpu_bound"]), decide.workloads.WARM_CHUNKS)
        self.assertEqual(len(plan["shared_cache"]), 2)
        self.assertTrue(os.path.exists(decide.WORKER) and os.path.exists(decide.RANKS))

    def test_the_launch_cost_is_the_median_of_processes_taken_in_turns(self):
        # One slow process (its stand-in driver at half speed, session 52) must not be the row.
        added = {"none": [0.5, 0.1, 0.3], "off": [0.2, -0.3, 0.0],
                 "trace": [100.0, 104.0, 250.0], "graph": [70.0, 149.0, 66.0]}
        order = []

        def fake_run(_self, argv, mode=None, trace=None, name="run", env_extra=None):
            cfg = mode or "none"
            order.append(cfg)
            i = sum(1 for c in order if c == cfg) - 1
            return f"driver_ns {140 + i}\nhanded_out_ns 0\nadded_ns {added[cfg][i]}\n"

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(check.Check, "run", fake_run), redirect_stdout(io.StringIO()):
            c = check.Check(tmp, tmp)
            c.launch_cost(rounds=3)
        self.assertEqual(order, ["none", "off", "trace", "graph"] * 3)  # the modes in turns
        self.assertEqual(c.cost, {"none": 0.3, "off": 0.0, "trace": 104.0, "graph": 70.0})
        rows = {r[0]: r for r in c.rows}
        graph = rows["shim cost per launch, graph (ns, in-process, median of 3)"]
        self.assertEqual(graph[1:], ("+70.0", "+66..+149; driver 141", "info"))

    def test_the_table_names_the_machine(self):
        with tempfile.TemporaryDirectory() as tmp, redirect_stdout(io.StringIO()):
            c = check.Check(tmp, tmp)
            c.machine()
        (row,) = c.rows
        self.assertEqual(row[0], "machine: CPU; GPU, driver")
        self.assertTrue(row[1].endswith(f" x{os.cpu_count()}"), row[1])
        self.assertTrue(row[2])  # the GPU and driver, or "?" where nvidia-smi is missing


class WorkerArgsTest(unittest.TestCase):
    def test_the_suite_worker_takes_every_command_line_of_the_plan(self):
        """worker.py parses each command line the section gives it and gets as far as building
        the workload, where a stand-in torch stops it (here and on the GPU machine alike)."""
        d = REAL_DECIDE(check.Check("build", tempfile.gettempdir()))
        plan = decide.PLAN
        lines = [d.worker_args(s, "/nonexistent/base", extra) for s, extra in
                 [(plan["gpu_bound"], ["--core", "3", "--go", "/x.go", "--done", "/x.done"]),
                  (plan["reduce_overhead"], ["--core", "0"]),
                  (plan["warm_start"], ["--stats-every-chunk"])] +
                 [(s, []) for s in plan["launch_bound"] + plan["shared_cache"]]]
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "torch"))
            with open(os.path.join(tmp, "torch", "__init__.py"), "w") as f:
                f.write("raise ImportError('stand-in torch: the worker parsed its arguments')\n")
            env = dict(os.environ, PYTHONPATH=tmp)
            for argv in lines:
                self.assertEqual(argv[0], decide.WORKER)
                p = subprocess.run([sys.executable] + argv, env=env, capture_output=True,
                                   text=True)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("the worker parsed its arguments", p.stderr)
                self.assertNotIn("usage:", p.stderr)


@unittest.skipUnless(os.environ.get("DECIDE_TEST_PROGRAM"), "ctest gives the built programs")
class RealShimFilesTest(unittest.TestCase):
    """The section's readers on what the real shim writes (on the stand-in driver, a loop of
    3 kernels and a sync, tests/e2e/decision_program.cpp): stats snapshots and the cache file,
    a second run adopting the first one's verdicts."""

    def run_program(self, cache, stats):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYGRAPH_")}
        env.update(LD_PRELOAD=os.environ["DECIDE_TEST_SHIM"],
                   LD_LIBRARY_PATH=os.environ["DECIDE_TEST_STANDIN_DIR"],
                   PYGRAPH_MEASURE_WINDOWS="1", PYGRAPH_MEASURE_ITERATIONS="2",
                   PYGRAPH_CACHE=cache, PYGRAPH_STATS=stats)
        p = subprocess.run([os.environ["DECIDE_TEST_PROGRAM"]], env=env, capture_output=True,
                           text=True)
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        return harness.read_json(stats)

    def test_readers(self):
        with tempfile.TemporaryDirectory() as tmp:
            cache = os.path.join(tmp, "decisions.json")
            one = self.run_program(cache, os.path.join(tmp, "one.json"))
            entries = decide.cache_entries(cache)
            self.assertEqual(len(entries), 1)
            self.assertEqual(decide.decided_signatures(one), set(entries))
            v = decide.main_verdict(one, entries)
            self.assertIn(v["verdict"], ("graph", "eager"))
            self.assertEqual(v["signature"], next(iter(entries)))
            self.assertEqual(decide.settled_share(one), 100.0)
            self.assertGreater(one["launches"]["replayed_in_graphs"], 0)
            two = self.run_program(cache, os.path.join(tmp, "two.json"))
            d = two["decisions"]
            self.assertEqual((d["measurements"], d["cached"]), (0, 1))
            self.assertEqual(decide.decided_signatures(two), set())  # adopted, not measured
            self.assertEqual(decide.main_verdict(two)["verdict"], v["verdict"])
            cmp = decide.compare_shared([entries], decide.cache_entries(cache),
                                        decide.decided_signatures(one))
            self.assertEqual((cmp["union"], cmp["missing"], cmp["lost"]), (1, [], []))
            decide.fresh_cache(cache)
            self.assertEqual(sorted(os.listdir(tmp)), ["one.json", "two.json"])


class SectionTest(unittest.TestCase):
    """The section on fake programs."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.c = check.Check(os.path.join(self.tmp.name, "build"), self.tmp.name)
        self.c.shim = ""  # LD_PRELOAD stays empty: the fakes act on PYGRAPH_MODE
        self.env = dict(os.environ)

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.env)
        self.tmp.cleanup()

    def run_parts(self, *names, **fake_env):
        os.environ.update(fake_env)
        d = fake_decide(self.c)
        with redirect_stdout(io.StringIO()):
            for part in d.parts():
                if not names or part.__name__ in names:
                    part()
        return {r[0]: r for r in self.c.rows}

    def test_every_row_passes_on_well_behaved_fakes(self):
        rows = self.run_parts()
        warm, shared = "decide warm start mlp-train", "decide shared cache"
        results = {name: r[3] for name, r in rows.items()}
        self.assertFalse([n for n, v in results.items() if v == "FAIL"], rows)
        passed = [n for n, v in results.items() if v == "PASS"]
        self.assertEqual(len(passed), 9, passed)
        r = rows["decide resnet50-b64: launches in sequences decided eager or graph-not-slower (%)"]
        self.assertEqual(r[1], "100.0")
        r = rows["decide mlp-train: verdict of its main sequence (gain)"]
        self.assertEqual(r[1], "graph (+8.0 %)")
        self.assertEqual(
            rows[f"{warm}: run 2 measurement windows in the first 100 iterations / cached"][1],
            "0 / 2")
        # Graphs from the chunk after iteration GRAPH_FROM (chunks of 4): iteration 4, both runs.
        self.assertEqual(rows[f"{warm}: graphs from iteration, run 2 vs run 1"][1], "4 vs 4")
        first = f"{warm} run 1: graphs from iteration / first 100 iterations (ms)"
        # 2 chunks of 4 iterations at 1.0 ms, 23 at 0.9 (each within 0.2 %)
        self.assertAlmostEqual(float(rows[first][1].split(" / ")[1]), 8 * 1.0 + 92 * 0.9,
                               delta=0.5)
        self.assertEqual(rows[f"{shared}: entries of the separate runs in the joint file"][1],
                         "4 of 4")
        joint = os.path.join(self.tmp.name, "decide", "shared.joint.cache.json")
        joint = decide.cache_entries(joint)
        self.assertEqual(len(joint), 4)

    def test_check_main_runs_the_section(self):
        argv = ["check.py", "--build", os.path.join(self.tmp.name, "build"), "--out",
                self.tmp.name, "--sections", "decide"]
        with mock.patch.object(sys, "argv", argv), \
                mock.patch.object(decide, "Decide", lambda c: fake_decide_with_empty_shim(c)), \
                redirect_stdout(io.StringIO()) as out:
            rc = check.main()
        self.assertEqual(rc, 0, out.getvalue()[-3000:])
        with open(os.path.join(self.tmp.name, "table.txt")) as f:
            table = f.read()
        self.assertEqual(table.count("PASS"), 10)  # ctest's row and the section's 9
        self.assertNotIn("FAIL", table)

    def test_steps_past_the_deadline_are_skipped_and_the_table_still_written(self):
        argv = ["check.py", "--build", os.path.join(self.tmp.name, "build"), "--out",
                self.tmp.name, "--sections", "decide", "--deadline", "30"]
        with mock.patch.object(sys, "argv", argv), \
                mock.patch.object(decide, "Decide", lambda c: fake_decide_with_empty_shim(c)), \
                redirect_stdout(io.StringIO()) as out:
            rc = check.main()
        self.assertEqual(rc, 0, out.getvalue()[-3000:])  # skipped is not failed
        with open(os.path.join(self.tmp.name, "table.txt")) as f:
            table = f.read()
        self.assertEqual(table.count("PASS"), 1)  # ctest's row alone: every step started late
        self.assertEqual(table.count("SKIP"), 5)
        self.assertIn("skipped, past the deadline: decide_gpu_bound", table)

    def test_a_gpu_bound_slowdown_fails(self):
        rows = self.run_parts("decide_gpu_bound", FAKE_SLOW="resnet50-b64")
        r = rows["decide resnet50-b64: time change with decisions (%, median of chunk pairs)"]
        self.assertEqual(r[3], "FAIL")
        self.assertTrue(r[1].startswith("+4.") or r[1].startswith("+5."), r)

    def test_the_reduce_overhead_control_tells_a_host_that_slows_any_preload(self):
        ro = "decide mlp-train compile-ro"
        rows = self.run_parts("decide_reduce_overhead")
        self.assertEqual(rows[f"{ro}: shim+decisions vs without (%, median and its 95 % "
                              "interval)"][3], "PASS")
        r = rows[f"{ro}: shim in off mode vs without (%, control)"]
        self.assertEqual((r[1], r[3]), ("+0.0 [+0.0, +0.0]", "info"))
        self.c.rows.clear()
        rows = self.run_parts("decide_reduce_overhead", FAKE_PRELOAD_SLOW="1")
        r = rows[f"{ro}: shim+decisions vs without (%, median and its 95 % interval)"]
        self.assertEqual(r[3], "FAIL")
        r = rows[f"{ro}: shim in off mode vs without (%, control)"]
        self.assertTrue(r[1].startswith("+3.0 ["), r)

    def test_an_eager_verdict_fails_the_launch_bound_row(self):
        rows = self.run_parts("decide_launch_bound", FAKE_EAGER="mlp-train")
        self.assertEqual(rows["decide mlp-train: verdict of its main sequence (gain)"][3], "FAIL")
        self.assertEqual(rows["decide compiled-b1: verdict of its main sequence (gain)"][3], "PASS")

    def test_a_second_run_that_measures_fails(self):
        rows = self.run_parts("decide_warm_start", FAKE_IGNORE_CACHE="1")
        r = rows["decide warm start mlp-train: run 2 measurement windows in the first 100 "
                 "iterations / cached"]
        self.assertEqual(r[3], "FAIL")
        self.assertTrue(int(r[1].split(" / ")[0]) >= 6 and r[1].endswith(" / 0"), r)
        self.assertIn("decide warm start mlp-train: run 2 measured", rows)

    def test_a_drift_after_the_first_iterations_is_shown_not_failed(self):
        rows = self.run_parts("decide_warm_start", FAKE_DRIFT="104")
        warm = "decide warm start mlp-train"
        r = rows[f"{warm}: run 2 measurement windows in the first 100 iterations / cached"]
        self.assertEqual((r[1], r[3]), ("0 / 2", "PASS"))
        r = rows[f"{warm}: run 2 windows by its end (measured again)"]
        self.assertTrue(r[1].startswith("6: measuring (window 4 of 6; again: drift)"), r)

    def test_a_drift_within_the_first_iterations_fails(self):
        rows = self.run_parts("decide_warm_start", FAKE_DRIFT="40")
        r = rows["decide warm start mlp-train: run 2 measurement windows in the first 100 "
                 "iterations / cached"]
        self.assertEqual((r[1], r[3]), ("6 / 2", "FAIL"))

    def test_lost_entries_fail(self):
        rows = self.run_parts("decide_shared_cache", FAKE_LOSE="1")
        shared = "decide shared cache"
        self.assertEqual(rows[f"{shared}: entries of the separate runs in the joint file"][3],
                         "FAIL")
        self.assertEqual(rows[f"{shared}: verdicts the 2 ranks reached, in the joint file"][3],
                         "FAIL")
        self.assertIn("lost", rows[f"{shared}: missing from the joint file"][1])

    def test_a_crash_is_one_error_row_and_the_rest_runs(self):
        rows = self.run_parts("decide_launch_bound", FAKE_CRASH="mlp-train")
        r = rows["error in decide mlp-train"]
        self.assertEqual(r[3], "FAIL")
        self.assertIn("fake crash", r[1])
        self.assertEqual(rows["decide compiled-b1: verdict of its main sequence (gain)"][3], "PASS")
        os.environ["FAKE_CRASH"] = "compiled-b1"
        d = fake_decide(self.c)
        with self.assertRaises(RuntimeError) as e:
            d.decide_shared_cache()
        self.assertIn("separate run of compiled-b1: exit 3", str(e.exception))
        self.assertIn("fake crash", str(e.exception))

    def test_a_worker_that_fails_says_why(self):
        # A suite workload the fake shim knows no sequences of: its cell dies in its warm-up.
        d = fake_decide(self.c, dict(SMALL_PLAN, gpu_bound=dict(SMALL_PLAN["gpu_bound"],
                                                                 workload="bert-b1")))
        with self.assertRaises(RuntimeError) as e, redirect_stdout(io.StringIO()):
            d.decide_gpu_bound()
        self.assertIn("gpu.bert-b1 decide", str(e.exception))
        self.assertIn("KeyError", str(e.exception))


def fake_decide_with_empty_shim(c):
    c.shim = ""
    return fake_decide(c)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.exit(fake_worker(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "--torchrun":
        sys.exit(fake_torchrun(sys.argv[2:]))
    unittest.main()
