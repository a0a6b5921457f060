"""CPU tests of the lockstep harness (tests/gpu/harness.py) and the suite's report, with worker
processes that sleep instead of using a GPU: turns are taken one at a time, a worker that dies
or hangs is dropped with its reason while the others finish, steady-state stats are end minus
warm, and the tables and summary come out of a results document. Run by ctest.

    python3 harness_test.py            # the tests
    python3 harness_test.py --worker MODE ...   # (a fake worker, started by the tests)
"""
import argparse
import json
import os
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu"))
sys.path.insert(0, HERE)

import diverge  # noqa: E402
import harness  # noqa: E402
import report  # noqa: E402


def fake_worker(argv):
    """MODE: ok (each step sleeps 1 ms, the log of turns goes to --result + '.turns'), die (exits
    with an error at its 2nd chunk), hang (never finishes its 2nd chunk), nostart (fails in its
    warm-up), slowstart (warms up for 60 s, then runs as ok)."""
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("mode")
    harness.add_worker_args(p)
    a = p.parse_args(argv)
    if a.mode == "nostart":
        print("RuntimeError: cannot build the model", file=sys.stderr)
        return 1
    if a.mode == "slowstart":
        time.sleep(60)
    state = {"chunk": 0, "read_s": 0.0}
    turns = open(a.result + ".turns", "w")
    with open(a.result + ".env", "w") as f:  # what an --arm set
        f.write(os.environ.get("PYGRAPH_FIRST_CHUNK", "-"))

    def step():
        time.sleep(0.001)
        t0 = time.perf_counter()  # a read on the host, as loss.item() in workloads.train_task
        time.sleep(0.0005)
        state["read_s"] += time.perf_counter() - t0

    def sync():
        # Called twice per chunk, before and after: count chunks on the first call.
        state["chunk"] += 0.5
        turns.write(f"{time.monotonic():.6f}\n")
        turns.flush()
        if state["chunk"] == 1.5:
            if a.mode == "die":
                print("ValueError: broken at chunk 2", file=sys.stderr)
                sys.exit(3)
            if a.mode == "hang":
                time.sleep(3600)

    host_ms, read_ms = [], []
    chunk_ms = harness.run_chunks(a, step, sync, host_ms, read_ms, lambda: state["read_s"])
    harness.write_result(a, chunk_ms, harness.digest([b"same"]), host_ms=host_ms,
                         read_ms=read_ms)
    return 0


class LockstepTest(unittest.TestCase):
    def start(self, tmp, modes, chunks=4, chunk_timeout=5, warm=0, ready_timeout=30):
        groups = {}
        for k, mode in enumerate(modes):
            name = f"cell{k}"
            w = harness.Worker(name, tmp, label=f"{name}:{mode}")
            w.start([sys.executable, os.path.abspath(__file__), "--worker", mode, "--chunks",
                     str(chunks), "--steps", "3", "--warmup", "0", "--warm-chunks", str(warm),
                     "--go", w.go, "--done", w.done, "--result",
                     os.path.join(tmp, name + ".json")], dict(os.environ))
            groups[name] = [w]
        ls = harness.Lockstep(groups, ready_timeout=ready_timeout, chunk_timeout=chunk_timeout)
        ls.run(chunks, warm=warm)
        for g in groups.values():
            for w in g:
                w.close()
        return ls

    def test_turns_are_taken_one_at_a_time(self):
        with tempfile.TemporaryDirectory() as tmp:
            ls = self.start(tmp, ["ok", "ok", "ok"])
            self.assertEqual(ls.failed, {})
            spans = []
            for k in range(3):
                r = harness.read_json(os.path.join(tmp, f"cell{k}.json"))
                self.assertEqual(len(r["chunk_ms"]), 4)
                self.assertTrue(all(t >= 1.0 for t in r["chunk_ms"]))  # 1 ms sleeps
                with open(os.path.join(tmp, f"cell{k}.json.turns")) as f:
                    t = [float(x) for x in f]
                spans += [(t[i], t[i + 1], k) for i in range(0, len(t), 2)]
            spans.sort()
            # No two chunks overlap in time, and the cells take turns, each round starting one
            # cell later.
            for (s0, e0, _), (s1, _, _) in zip(spans, spans[1:]):
                self.assertLessEqual(e0, s1)
            self.assertEqual([k for _, _, k in spans], [0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2])

    def test_untimed_chunks_take_turns_too_and_are_not_timed(self):
        """--warm-chunks 2: each cell runs 6 chunks, one cell at a time, and reports the last 4;
        the ready snapshot comes before the untimed ones, the warm one after them (in a plain
        run too)."""
        with tempfile.TemporaryDirectory() as tmp:
            ls = self.start(tmp, ["ok", "ok"], warm=2)
            self.assertEqual(ls.failed, {})
            spans = []
            for k in range(2):
                r = harness.read_json(os.path.join(tmp, f"cell{k}.json"))
                self.assertEqual(len(r["chunk_ms"]), 4)
                with open(os.path.join(tmp, f"cell{k}.json.turns")) as f:
                    t = [float(x) for x in f]
                self.assertEqual(len(t), 12)  # 6 chunks, a sync before and after each
                spans += [(t[i], t[i + 1], k) for i in range(0, len(t), 2)]
            spans.sort()
            for (s0, e0, _), (s1, _, _) in zip(spans, spans[1:]):
                self.assertLessEqual(e0, s1)
        p = argparse.ArgumentParser()
        harness.add_worker_args(p)
        a = p.parse_args(["--chunks", "2", "--steps", "1", "--warm-chunks", "2",
                          "--stats-prefix", "/x/w."])
        steps, written = [], []
        saved = harness.write_stats
        harness.write_stats = lambda path: written.append((path, len(steps)))
        try:
            self.assertEqual(len(harness.run_chunks(a, lambda: steps.append(1), lambda: None)), 2)
        finally:
            harness.write_stats = saved
        self.assertEqual(written, [("/x/w.ready.json", 0), ("/x/w.warm.json", 2),
                                   ("/x/w.end.json", 4)])

    def test_the_hosts_share_of_a_chunk_ends_before_its_closing_sync(self):
        """A chunk whose closing synchronize waits (a GPU behind the host) has a host share
        well under its time; one whose steps take the time has a share close to it."""
        p = argparse.ArgumentParser()
        harness.add_worker_args(p)
        a = p.parse_args(["--chunks", "3", "--steps", "2"])
        calls = []
        slow_sync = lambda: (calls.append(1), time.sleep(0.02 if len(calls) % 2 == 0 else 0))
        host = []
        chunk = harness.run_chunks(a, lambda: time.sleep(0.001), slow_sync, host)
        self.assertEqual(len(host), 3)
        for h, c in zip(host, chunk):
            self.assertGreaterEqual(h, 1.0)  # ms per step: each step sleeps 1 ms
            self.assertLess(h, c - 5.0)  # the closing sync's 20 ms are not the host's (10 a step)
        host = []
        chunk = harness.run_chunks(a, lambda: time.sleep(0.005), lambda: None, host)
        for h, c in zip(host, chunk):
            self.assertGreater(h, 0.9 * c)

    def test_a_dead_or_hung_worker_is_dropped_and_the_rest_finish(self):
        with tempfile.TemporaryDirectory() as tmp:
            ls = self.start(tmp, ["ok", "die", "hang", "nostart", "ok"], chunk_timeout=2)
            self.assertEqual(set(ls.failed), {"cell1", "cell2", "cell3"})
            self.assertIn("exited 3", ls.failed["cell1"])
            self.assertIn("ValueError: broken at chunk 2", ls.failed["cell1"])
            self.assertIn("hung", ls.failed["cell2"])
            self.assertIn("chunk 2", ls.failed["cell2"])
            self.assertIn("cannot build the model", ls.failed["cell3"])
            for k in (0, 4):
                r = harness.read_json(os.path.join(tmp, f"cell{k}.json"))
                self.assertEqual(len(r["chunk_ms"]), 4)


    def test_a_warm_up_past_its_deadline_says_so_not_hung(self):
        """A cell still warming up when the warm-ups' deadline (set by the run's --budget) runs
        out is dropped with that deadline named: no hang is claimed. (5 s: an ok cell's Python
        start took over 1 s in CI beside the compiles of other tests.)"""
        with tempfile.TemporaryDirectory() as tmp:
            ls = self.start(tmp, ["ok", "slowstart"], ready_timeout=5)
            self.assertEqual(set(ls.failed), {"cell1"})
            self.assertIn("not ready 5 s after the warm-ups began", ls.failed["cell1"])
            self.assertNotIn("hung", ls.failed["cell1"])


class SuiteTest(unittest.TestCase):
    def test_a_workload_runs_all_its_cells_in_lockstep(self):
        """run.py's own path, with a native "program" that is a fake worker: every cell gets its
        FIFOs, reports ready, runs its chunks, and is compared with its twin."""
        import argparse

        import run
        import workloads

        with tempfile.TemporaryDirectory() as tmp:
            build = os.path.join(tmp, "build")
            os.makedirs(build)
            prog = os.path.join(build, "fake_loop")
            with open(prog, "w") as f:
                f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.abspath(__file__)} "
                        f"--worker ok \"$@\"\n")
            os.chmod(prog, 0o755)
            workloads.WORKLOADS["fake"] = workloads.Workload(
                "fake", "a fake loop", None, steps=3, warmup=0, variants=("eager",),
                program="fake_loop", train=True)
            try:
                args = argparse.Namespace(build=build, out=tmp, quick=False, chunks=4, steps=5,
                                          budget=None,
                                          traces=False, ready_timeout=30, ddp_nproc=1,
                                          arm=["big:PYGRAPH_FIRST_CHUNK=64"],
                                          arm_variants="eager", variants=None, reruns=True)
                suite = run.Suite(args)
                res = suite.run_workload("fake")
                suite.process = 1  # --repeat's second process: files of its own
                again = suite.run_workload("fake")
                suite.memory.close()
            finally:
                del workloads.WORKLOADS["fake"]
            cells = res["cells"]
            self.assertEqual(res["steps_per_chunk"], 5)  # --steps, not the workload's 3
            self.assertEqual(set(cells), {"eager", "eager+shim", "eager+shim:big", "eager-rerun"})
            for name, c in cells.items():
                self.assertEqual(c["status"], "ok", f"{name}: {c.get('reason')}")
                self.assertEqual(len(c["chunk_ms"]), 4)
                self.assertEqual(len(c["host_ms"]), 4)  # the host's share, chunk by chunk
                self.assertLessEqual(c["host_ms_per_iter"], c["ms_per_iter"])
                # Of the host's share, the wait in the step's reads: 0.5 of each 1.5 ms step.
                self.assertEqual(len(c["read_ms"]), 4)
                self.assertGreaterEqual(c["read_ms_per_iter"], 0.5)
                self.assertLess(c["read_ms_per_iter"], c["host_ms_per_iter"])
            self.assertTrue(cells["eager+shim"]["bitwise"])
            self.assertEqual(cells["eager+shim"]["vs_without_shim"]["pairs"], 4)
            # The arm's cell ran with its setting, and only it; it is compared like a shim cell.
            env = lambda tag: open(os.path.join(tmp, "cells", f"fake.{tag}.json.env")).read()
            self.assertEqual(env("eager_shim-big"), "64")
            self.assertEqual(env("eager_shim"), "-")
            self.assertTrue(cells["eager+shim:big"]["bitwise"])
            self.assertEqual(cells["eager+shim:big"]["vs_without_shim"]["pairs"], 4)
            self.assertEqual(report.shim_base("compile-ro+shim:big"), "compile-ro")
            self.assertIsNone(report.shim_base("eager+trace"))
            self.assertIsNone(report.shim_base("eager+shimmer"))
            self.assertEqual(res["deterministic"], {"eager": True})
            # The rerun (a training workload's, which --reruns does not run twice) is compared
            # with the first run of its variant.
            self.assertEqual(cells["eager-rerun"]["vs_variant"]["pairs"], 4)
            self.assertEqual(env("eager-rerun"), "-")  # without the shim
            # No shim was preloaded (none is built here): no snapshot, and it says so.
            self.assertIn("shim_error", cells["eager+shim"])
            # The second process kept the first's files and wrote its own; merged, the first's
            # cells are its earlier process.
            self.assertEqual(env("eager_shim.p2"), "-")
            self.assertEqual(env("eager_shim-big.p2"), "64")
            merged = report.merge_workload(res, again)
            self.assertEqual(len(merged["earlier"]["eager+shim"]), 1)
            self.assertEqual(len(report.processes(merged, "eager+shim:big")), 2)


    def test_untimed_chunks_cover_a_segments_weighing(self):
        """Every cell's timed chunks start after the shim has weighed a segment that is one
        chunk: the untimed chunks are at least the occurrences weighing may take
        (pause_places.h, kWeighOccurrences), read from the engine's own header."""
        import re

        import workloads

        header = open(os.path.join(HERE, "..", "..", "..", "shim", "core", "graph",
                                   "pause_places.h")).read()
        rounds = int(re.search(r"kWeighRounds = (\d+);", header).group(1))
        per_round = int(re.search(r"kWeighOccurrences = (\d+) \* kWeighRounds;", header).group(1))
        self.assertGreaterEqual(workloads.WARM_CHUNKS, per_round * rounds)

    def test_warm_up_runs_beside_the_other_cells_only_for_its_compiles(self):
        """The first warm-up steps run beside the other cells' (their compiles overlap), fewer
        than the shim needs to follow a sequence (its third occurrence); the rest in turns, as
        whole untimed chunks before the WARM_CHUNKS, so that every warm-up step still runs."""
        import workloads

        W = workloads.WARM_CHUNKS
        self.assertLess(workloads.PARALLEL_WARMUP, 3)
        self.assertEqual(workloads.warm_split(140, 16), (2, W + 9))  # gpt2-decode: 2 + 144 steps
        self.assertEqual(workloads.warm_split(20, 40), (2, W + 1))
        self.assertEqual(workloads.warm_split(20, 3), (2, W + 6))
        self.assertEqual(workloads.warm_split(2, 40), (2, W))
        self.assertEqual(workloads.warm_split(0, 5), (0, W))
        for warmup, steps in ((140, 16), (20, 40), (20, 3), (21, 19), (1, 1)):
            parallel, warm = workloads.warm_split(warmup, steps)
            self.assertGreaterEqual(parallel + (warm - W) * steps, warmup)
            self.assertLess(parallel + (warm - W - 1) * steps, warmup)

    def test_a_workers_warm_up_and_the_lockstep_agree(self):
        """The worker's --warmup and --warm-chunks are warm_split's: the driver sends that many
        untimed goes (Lockstep.run's warm) before the timed ones."""
        import run
        import workloads

        w = workloads.WORKLOADS["gpt2-decode"]
        suite = run.Suite.__new__(run.Suite)
        suite.build = "/b"
        argv = suite.worker_argv(w, "eager", "/x/w", chunks=4, steps=w.steps)
        parallel, warm = workloads.warm_split(w.warmup, w.steps)
        self.assertEqual(argv[argv.index("--warmup") + 1], str(parallel))
        self.assertEqual(argv[argv.index("--warm-chunks") + 1], str(warm))

    def test_reruns_add_a_second_run_without_the_shim_of_the_arm_variants(self):
        import run
        import workloads

        w = workloads.Workload("w", "", None, steps=3, warmup=0,
                               variants=("eager", "compile", "compile-ro"))
        self.assertEqual(run.cells_of(w, arm_variants=("compile-ro",), reruns=True),
                         ["eager", "eager+shim", "compile", "compile+shim", "compile-ro",
                          "compile-ro+shim", "compile-ro-rerun"])
        self.assertNotIn("compile-ro-rerun", run.cells_of(w, arm_variants=("compile-ro",)))
        t = workloads.Workload("t", "", None, steps=3, warmup=0, variants=("eager",), train=True)
        self.assertEqual(run.cells_of(t, arm_variants=("eager",), reruns=True),
                         ["eager", "eager+shim", "eager-rerun"])

    def test_arms_are_checked(self):
        import run

        self.assertEqual(run.parse_arm("x:PYGRAPH_A=1,PYGRAPH_B=two"),
                         ("x", {"PYGRAPH_A": "1", "PYGRAPH_B": "two"}))
        for bad in ("noenv", "x:A=1", "bad name:PYGRAPH_A=1", "x:PYGRAPH_A",
                    "x:LD_PRELOAD=/no/such/libpygraph.so"):
            with self.assertRaises(ValueError):
                run.parse_arm(bad)
        # Another build in the same lockstep: its path, made absolute (workers start elsewhere).
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "libpygraph.so")
            open(lib, "w").close()
            name, env = run.parse_arm("old:LD_PRELOAD=" + os.path.relpath(lib) + ",PYGRAPH_A=1")
            self.assertEqual((name, env), ("old", {"LD_PRELOAD": lib, "PYGRAPH_A": "1"}))

    def test_arm_env_preloads_only_the_arms(self):
        import run

        base = {"PATH": "/bin", "LD_PRELOAD": "/x/libpygraph.so", "PYGRAPH_MODE": "trace",
                "PYGRAPH_STATS": "s.json"}
        self.assertEqual(run.arm_env(base, None, "lib.so"), {"PATH": "/bin"})
        env = run.arm_env(base, {}, "lib.so")
        self.assertEqual(env, {"PATH": "/bin", "LD_PRELOAD": os.path.abspath("lib.so"),
                               "PYGRAPH_MODE": "graph"})
        env = run.arm_env(base, {"PYGRAPH_MODE": "off", "LD_PRELOAD": "/o/old.so"}, "lib.so")
        self.assertEqual((env["PYGRAPH_MODE"], env["LD_PRELOAD"]), ("off", "/o/old.so"))
        self.assertNotIn("PYGRAPH_STATS", env)


class PinTest(unittest.TestCase):
    def test_main_pins_the_calling_thread_alone_and_all_pins_every_thread(self):
        import threading

        if len(os.sched_getaffinity(0)) < 2 or not os.path.isdir("/proc/self/task"):
            self.skipTest("needs two CPUs and /proc")
        core = min(os.sched_getaffinity(0))
        before = os.sched_getaffinity(0)
        stop, ready, tid = threading.Event(), threading.Event(), []

        def other():
            tid.append(threading.get_native_id())
            ready.set()
            stop.wait()

        th = threading.Thread(target=other)
        th.start()
        ready.wait()
        try:
            harness.pin_for_chunk(core, "main")
            self.assertEqual(os.sched_getaffinity(0), {core})
            self.assertNotIn(core, os.sched_getaffinity(tid[0]))
            harness.pin_for_chunk(core, "all")
            self.assertEqual(os.sched_getaffinity(tid[0]), {core})
        finally:
            stop.set()
            th.join()
            os.sched_setaffinity(0, before)

    def test_the_mode_comes_from_bench_pin_and_a_bad_one_is_refused(self):
        saved = os.environ.pop("BENCH_PIN", None)
        try:
            self.assertEqual(harness.pin_mode(), "all")
            os.environ["BENCH_PIN"] = "main"
            self.assertEqual(harness.pin_mode(), "main")
            os.environ["BENCH_PIN"] = "every"
            with self.assertRaises(ValueError):
                harness.pin_mode()
        finally:
            os.environ.pop("BENCH_PIN", None)
            if saved is not None:
                os.environ["BENCH_PIN"] = saved


class FiguresTest(unittest.TestCase):
    def test_pair_change(self):
        ch = harness.pair_change([0.9, 0.8, 0.9, 1.0], [1.0, 1.0, 1.0, 1.0])
        self.assertAlmostEqual(ch["median"], -10.0)
        self.assertLessEqual(ch["q1"], ch["median"])
        self.assertLessEqual(ch["median"], ch["q3"])
        self.assertIsNone(harness.pair_change([], []))
        self.assertIsNone(ch["lo"])  # 4 pairs: too few for a 95 % interval

    def test_median_interval(self):
        self.assertIsNone(harness.median_interval([1, 2, 3, 4, 5]))
        self.assertEqual(harness.median_interval([6, 1, 5, 2, 4, 3]), (1, 6))  # P = 1/32
        xs = list(range(100))
        lo, hi = harness.median_interval(xs)
        # Binomial(100, 1/2): P(B < 40) = 0.018 <= 0.025 < P(B < 41): [x_40, x_61] (1-based).
        self.assertEqual((lo, hi), (39, 60))
        lo90, hi90 = harness.median_interval(xs, 0.90)
        self.assertTrue(lo < lo90 <= hi90 < hi)

    def test_stats_delta_is_end_minus_warm(self):
        warm = {"launches": {"seen_by_engine": 100, "replayed_in_graphs": 40, "eager": 60},
                "graphs": {"replays": 4, "patched_nodes": 8},
                "flushes": {"by_reason": {"cuStreamSynchronize": 5}},
                "eager_launches_by_reason": {"not_repeating": 60}}
        end = {"launches": {"seen_by_engine": 1100, "replayed_in_graphs": 1000, "eager": 100},
               "graphs": {"replays": 24, "patched_nodes": 48, "sequences_disabled": 1,
                          "last_failure": "cuGraphLaunch failed (CUresult 719)",
                          "programmatic_allowed": 7,
                          "pause_cuts": 30, "pause_places": 3, "pause_light": 2,
                          "pause_weighing": 1, "pause_unweighed": 0},
               "flushes": {"by_reason": {"cuStreamSynchronize": 15, "stall": 2}},
               "eager_launches_by_reason": {"not_repeating": 60, "packed_args": 40},
               "memops": {"replayed_in_graphs": 20},
               "program_graphs": {"replayed_in_graphs": 20, "nodes_replayed": 2000}}
        d = harness.stats_delta(end, warm)
        self.assertAlmostEqual(d["coverage_percent"], 96.0)
        self.assertAlmostEqual(d["launches_per_replay"], 48.0)
        self.assertAlmostEqual(d["patched_per_replay"], 2.0)
        # 960 launches, 20 memops and 2,000 nodes of the program's graphs in 20 replays.
        self.assertAlmostEqual(d["nodes_per_replay"], 149.0)
        self.assertEqual(report.per_replay(d), "48.0 (149 nodes)")
        self.assertEqual(report.per_replay({"launches_per_replay": 48.0}), "48.0")
        self.assertEqual(report.per_replay(d, " launches/replay"),
                         "48.0 launches/replay (149 nodes)")
        self.assertEqual(d["eager_launches_by_reason"], {"packed_args": 40})
        self.assertEqual(d["flushes/by_reason"], {"cuStreamSynchronize": 10, "stall": 2})
        self.assertEqual(d["flushes_total"], 12)
        self.assertEqual(d["graphs"]["sequences_disabled"], 1)
        self.assertEqual(d["last_graph_failure"], "cuGraphLaunch failed (CUresult 719)")
        self.assertNotIn("last_graph_failure", harness.stats_delta(warm, None))
        self.assertEqual(d["graphs"]["pause_cuts"], 30)
        self.assertEqual(d["pauses"], {"places": 3, "light": 2, "weighing": 1, "unweighed": 0})
        self.assertNotIn("pauses", harness.stats_delta(warm, None))  # stats before session 16
        # Counted per graph built, in warm-up too: the end's, as it is.
        self.assertEqual(d["programmatic"], {"allowed": 7})
        self.assertNotIn("programmatic", harness.stats_delta(warm, None))  # before session 39
        # The first sequence with a whole weighed round gives the GPU's time and idle time in
        # one (stats before session 35 have neither).
        rounds = [{"whole": 0, "gpu_us": 0.0, "idle_us": 0.0},
                  {"whole": 2, "gpu_us": 800.0, "idle_us": 120.5},
                  {"whole": 2, "gpu_us": 10.0, "idle_us": 1.0}]
        end["decisions"] = {"sequences": [{"pauses": {"rounds": r}} for r in rounds] + [{}]}
        p = harness.stats_delta(end, warm)["pauses"]
        self.assertEqual((p["round_gpu_us"], p["round_idle_us"]), (800.0, 120.5))
        self.assertNotIn("cuts", p)  # stats before session 40
        # Its cuts and last whole round come along: why it replays as it does.
        chunks = [{"start": 0, "end": 30, "gpu_us": 150.0, "idle_us": None},
                  {"start": 30, "end": 71, "gpu_us": 250.0, "idle_us": 900.0}]
        earlier = [[dict(c, gpu_us=c["gpu_us"] * 3) for c in chunks]]
        sizes = [{"first": 3, "pace": 1.5}]
        end["decisions"]["sequences"][1]["pauses"].update(split=30, cuts=[30], restarts=[30],
                                                          restart_sizes=sizes,
                                                          last_round=chunks,
                                                          earlier_rounds=earlier)
        p = harness.stats_delta(end, warm)["pauses"]
        self.assertEqual((p["split"], p["cuts"], p["restarts"], p["restart_sizes"],
                          p["last_round"], p["earlier_rounds"]),
                         (30, [30], [30], sizes, chunks, earlier))
        for k in ("split", "cuts", "restarts", "restart_sizes", "last_round", "earlier_rounds"):
            del end["decisions"]["sequences"][1]["pauses"][k]
        end["decisions"]["sequences"][1]["pauses"]["rounds"] = {"whole": 2}  # no figures
        p = harness.stats_delta(end, warm)["pauses"]
        self.assertEqual((p["round_gpu_us"], p["round_idle_us"]), (10.0, 1.0))
        del end["decisions"]
        self.assertNotIn("round_idle_us", harness.stats_delta(end, warm)["pauses"])
        self.assertEqual(report.pauses_text(p, 30),
                         "pauses 3 cut (30 cuts), 2 light, 1 weighing, 0 unweighed; "
                         "GPU idle 1 of 11 us a weighed round")
        del p["round_gpu_us"], p["round_idle_us"]
        self.assertEqual(report.pauses_text(p, 30),
                         "pauses 3 cut (30 cuts), 2 light, 1 weighing, 0 unweighed")
        self.assertEqual(report.pauses_text(dict(p, cuts=[30, 62]), 30),
                         "pauses 3 cut (30 cuts), 2 light, 1 weighing, 0 unweighed; cuts before places 30, 62")
        self.assertTrue(report.pauses_text(dict(p, cuts=list(range(10))), 30).endswith(
            "cuts before places 0, 1, 2, 3, 4, 5, 6, 7, …"))


class CublasConfigTest(unittest.TestCase):
    """workloads.cublas_config_read_once with a stand-in torch that records what it is asked."""

    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in ("CUBLAS_WORKSPACE_CONFIG",
                                                     "BENCH_CUBLAS_CONFIG")}
        self.calls = []
        calls = self.calls

        class FakeTorch:
            class cuda:
                @staticmethod
                def synchronize():
                    calls.append("synchronize")

            @staticmethod
            def ones(*shape, device):
                calls.append(("ones", device))
                return object()

            @staticmethod
            def mm(a, b):
                # The deterministic check reads the variable here: it must still be set.
                calls.append(("mm", os.environ.get("CUBLAS_WORKSPACE_CONFIG")))

        self.saved_torch = sys.modules.get("torch")
        sys.modules["torch"] = FakeTorch

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if self.saved_torch is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = self.saved_torch

    def test_read_by_one_gemm_then_dropped(self):
        import workloads

        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        os.environ.pop("BENCH_CUBLAS_CONFIG", None)
        workloads.cublas_config_read_once()
        self.assertEqual(self.calls, [("ones", "cuda"), ("mm", ":4096:8"), "synchronize"])
        self.assertNotIn("CUBLAS_WORKSPACE_CONFIG", os.environ)
        workloads.cublas_config_read_once()  # a second call (train_task's) does nothing
        self.assertEqual(len(self.calls), 3)

    def test_kept_when_asked(self):
        import workloads

        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        os.environ["BENCH_CUBLAS_CONFIG"] = "kept"
        workloads.cublas_config_read_once()
        self.assertEqual(self.calls, [])
        self.assertEqual(os.environ["CUBLAS_WORKSPACE_CONFIG"], ":4096:8")


class DivergeTest(unittest.TestCase):
    def test_first_difference_names_the_chunk_and_the_step(self):
        base = {"chunks": ["a", "b", "c"], "reads": "[1.0, 2.0, 3.0, 4.0]"}
        self.assertEqual(diverge.first_difference(base, dict(base)), (None, None))
        other = {"chunks": ["a", "x", "y"], "reads": "[1.0, 2.0, 3.5, 4.0]"}
        self.assertEqual(diverge.first_difference(base, other), (1, 2))
        # A run that stopped early differs where it stopped; an inference task reads nothing.
        self.assertEqual(diverge.first_difference(base, {"chunks": ["a"], "reads": None}),
                         (1, None))

    def test_compare_exits_non_zero_when_a_run_differs(self):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, chunks in (("base", ["a", "b"]), ("same", ["a", "b"]), ("off", ["a", "z"])):
                paths.append(os.path.join(d, name + ".json"))
                with open(paths[-1], "w") as f:
                    json.dump({"chunks": chunks, "reads": None}, f)
            args = argparse.Namespace(base=paths[0], others=paths[1:2])
            self.assertEqual(diverge.compare(args), 0)
            args.others = paths[1:]
            self.assertEqual(diverge.compare(args), 1)
            # A run that left no record, or a broken one, is named and not counted as equal.
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{")
            args.others = [paths[1], bad, os.path.join(d, "missing.json")]
            self.assertEqual(diverge.compare(args), 2)
            args.base = bad
            self.assertEqual(diverge.compare(args), 2)


class FakeRun:
    """A `run` process of diverge.py's hunt that has already ended (or, with hang, never will
    until killed), each with a pid of its own."""
    pids = iter(range(5000, 10 ** 6))

    def __init__(self, code=0, hang=False):
        self.pid = next(FakeRun.pids)
        self.returncode, self.signals = (None if hang else code), []

    def poll(self):
        return self.returncode

    def wait(self, timeout=None):
        return self.returncode


def fake_stop(p, sig):
    """wait_all's stop for FakeRun: it notes each signal; SIGKILL ends the run."""
    import signal

    p.signals.append(sig)
    if sig == signal.SIGKILL:
        p.returncode = -9


class HuntTest(unittest.TestCase):
    """diverge.py hunt with its processes faked: each writes the record its arm is given."""

    def hunt(self, d, records, arms=(), rounds=2, procs=3, budget=0, clock=None, twin=None,
             timeout=5, wait=None):
        started, procs_made = [], []

        def start(a, settings, stem, core):
            arm = os.path.basename(stem).split("-")[0]
            started.append((arm, settings, core))
            chunks = (twin if twin and stem.endswith("none-2") else records[arm])
            p = FakeRun(hang=chunks == "hang", code=1 if chunks is None else 0)
            procs_made.append(p)
            if settings is not None:  # stats even where the run then fails: never read there
                with open(f"{stem}.stats.{p.pid}.json", "w") as f:
                    json.dump({"launches": {"seen_by_engine": 10, "replayed_in_graphs": 9},
                               "graphs": {"replays": 3}}, f)
            if isinstance(chunks, list):
                with open(stem + ".json", "w") as f:
                    json.dump({"chunks": chunks, "reads": None}, f)
            return p

        lib = os.path.join(d, "libpygraph.so")
        open(lib, "w").close()
        a = argparse.Namespace(workload="mlp-train", variant="eager",
                               dir=os.path.join(d, "runs"), arm=list(arms), procs=procs,
                               rounds=rounds, budget=budget, timeout=timeout, chunks=2, lib=lib,
                               json=os.path.join(d, "h.json"))
        ticks = iter(clock or range(0, 10 ** 6, 10))
        wait = wait or (lambda ps, t: diverge.wait_all(ps, t, now=lambda: next(ticks),
                                                       sleep=lambda s: 0, stop=fake_stop))
        rc = diverge.hunt(a, start=start, wait=wait, cores=[1, 2],
                          now=clock and (lambda: next(ticks)) or time.monotonic)
        doc = None
        if os.path.exists(a.json):
            with open(a.json) as f:
                doc = json.load(f)
        self.procs_made = procs_made
        return rc, started, doc

    def test_arms_take_the_processes_in_turn_and_a_difference_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            records = {"none": ["a", "b"], "x": ["a", "b"], "y": ["a", "z"]}
            rc, started, doc = self.hunt(d, records, arms=("x:PYGRAPH_A=1", "y:PYGRAPH_B=2"))
            self.assertEqual(rc, 1)
            # The base twice without the shim, then rounds of x, y, x on CPUs 1, 2, 1.
            self.assertEqual(started[:2], [("none", None, 1), ("none", None, 2)])
            self.assertEqual(started[2:5], [("x", {"PYGRAPH_A": "1"}, 1),
                                            ("y", {"PYGRAPH_B": "2"}, 2),
                                            ("x", {"PYGRAPH_A": "1"}, 1)])
            self.assertEqual(len(started), 2 + 2 * 3)
            verdicts = [(r["arm"], r["verdict"]) for r in doc["runs"]]
            self.assertEqual(verdicts, [("x", "equal"), ("y", "differs"), ("x", "equal")] * 2)
            self.assertEqual(doc["runs"][1]["why"], "from chunk 1")  # an inference task
            self.assertEqual(doc["runs"][0]["figures"],
                             {"coverage_percent": 90.0, "launches_per_replay": 3.0})
            table = diverge.hunt_table(doc["runs"])
            rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()[1:3]}
            self.assertEqual(rows, {"x": ["4", "4", "0", "0", "90.0", "%"],  # runs, equal, ...
                                    "y": ["2", "0", "2", "0", "90.0", "%"]})
            self.assertIn("y-r1-p2: differs (from chunk 1)", table)

    def test_all_equal_is_zero_and_the_default_arm_is_the_shims_defaults(self):
        with tempfile.TemporaryDirectory() as d:
            rc, started, doc = self.hunt(d, {"none": ["a"], "graph": ["a"]}, rounds=1)
            self.assertEqual(rc, 0)
            self.assertEqual([s[:2] for s in started[2:]], [("graph", {})] * 3)

    def test_a_base_that_differs_from_itself_ends_the_hunt(self):
        with tempfile.TemporaryDirectory() as d:
            rc, started, doc = self.hunt(d, {"none": ["a"], "graph": ["a"]}, twin=["b"])
            self.assertEqual((rc, len(started), doc), (2, 2, None))

    def test_a_failed_or_hung_run_is_no_equal_run_and_has_no_figures(self):
        import signal

        with tempfile.TemporaryDirectory() as d:
            rc, _, doc = self.hunt(d, {"none": ["a"], "x": None, "y": "hang"},
                                   arms=("x:PYGRAPH_A=1", "y:PYGRAPH_A=2"), rounds=1, procs=2)
            self.assertEqual(rc, 2)
            self.assertEqual([(r["verdict"], r["why"], r["figures"]) for r in doc["runs"]],
                             [("failed", "exit status 1", None),
                              ("failed", "still running at the timeout: hung", None)])
            # The hung run was asked for its stacks, then killed; the others were left alone.
            self.assertEqual([p.signals for p in self.procs_made],
                             [[], [], [], [signal.SIGABRT, signal.SIGKILL]])

    def test_no_round_starts_that_would_end_past_the_budget(self):
        # Each reading of the hunt's clock is 10 s on (the waits here read none): a round reads
        # 10 s long, round 2 starts at 40 s, round 3 would at 70: a budget of 60 s has room
        # for two rounds, not three.
        limits = []

        def wait(ps, t):
            limits.append(t)
            return [0] * (len(ps) - 1) + ["hung"] if len(limits) > 1 else [0] * len(ps)

        with tempfile.TemporaryDirectory() as d:
            rc, started, doc = self.hunt(d, {"none": ["a"], "graph": ["a"]}, rounds=5,
                                         procs=2, budget=60, wait=wait,
                                         clock=range(0, 10 ** 6, 10))
            self.assertEqual(rc, 2)
            self.assertEqual(sorted({r["round"] for r in doc["runs"]}), [1, 2])
            self.assertEqual(limits, [5, 5, 5])  # the timeout: the budget lasts longer
        # Each round waits no longer than the budget lasts (a minute at least), and a run
        # stopped then says so.
        limits.clear()
        with tempfile.TemporaryDirectory() as d:
            rc, started, doc = self.hunt(d, {"none": ["a"], "graph": ["a"]}, rounds=2,
                                         procs=2, budget=200, timeout=1000, wait=wait,
                                         clock=range(0, 10 ** 6, 10))
            self.assertEqual(limits, [1000, 190, 160])  # the base's, round 1's, round 2's
            self.assertEqual(doc["runs"][1]["why"], "still running at the budget's end: hung")

    def test_a_round_written_is_kept_when_the_hunt_is_cut_short(self):
        with tempfile.TemporaryDirectory() as d:
            rounds_seen = []

            def wait(ps, t):
                if len(rounds_seen) == 2:
                    raise KeyboardInterrupt  # the device call's limit, say
                rounds_seen.append(t)
                return [0] * len(ps)

            with self.assertRaises(KeyboardInterrupt):
                self.hunt(d, {"none": ["a"], "graph": ["a"]}, rounds=3, wait=wait)
            with open(os.path.join(d, "h.json")) as f:
                self.assertEqual({r["round"] for r in json.load(f)["runs"]}, {1})

    def test_bad_arguments_are_refused_before_any_run(self):
        with tempfile.TemporaryDirectory() as d:
            for arms, procs, rounds in ((("noenv",), 3, 1), (("none:PYGRAPH_A=1",), 3, 1),
                                        (("x:PYGRAPH_A=1", "x:PYGRAPH_A=2"), 3, 1),
                                        ((), 0, 1), ((), 3, 0)):
                rc, started, _ = self.hunt(d, {"none": ["a"]}, arms=arms, procs=procs,
                                           rounds=rounds)
                self.assertEqual((rc, started), (2, []))
        a = argparse.Namespace(arm=[], lib="/no/such/libpygraph.so", workload="mlp-train",
                               variant="eager", procs=1, rounds=1)
        self.assertEqual(diverge.hunt(a), 2)

    def test_only_a_python_task_of_the_suite_is_hunted(self):
        self.assertEqual(diverge.workload_of("mlp-train", "compile-ro").name, "mlp-train")
        for name, variant, why in (("nope", "eager", "no workload"),
                                   ("cuda-loop", "eager", "native program"),
                                   ("host-read", "cuda-graph", "reads the host"),
                                   ("mlp-train", "jit", "one of eager")):
            with self.assertRaisesRegex(ValueError, why):
                diverge.workload_of(name, variant)

    def test_a_run_starts_in_a_session_of_its_own_with_nothing_left_from_before(self):
        with tempfile.TemporaryDirectory() as d:
            stem = os.path.join(d, "graph-r1-p1")
            for old in (".json", ".stats.77.json", ".decisions.json"):
                open(stem + old, "w").close()
            keep = os.path.join(d, "graph-r1-p10.json")  # another run's record
            open(keep, "w").close()
            lib = os.path.join(d, "libpygraph.so")
            calls = []
            a = argparse.Namespace(workload="mlp-train", variant="eager", chunks=7, lib=lib)
            os.environ["PYGRAPH_STATS"] = "elsewhere.json"  # the caller's is not the run's
            try:
                diverge.start_run(a, {"PYGRAPH_A": "1"}, stem, 5,
                                  popen=lambda cmd, **kw: calls.append((cmd, kw)))
            finally:
                del os.environ["PYGRAPH_STATS"]
            self.assertEqual(sorted(os.listdir(d)), ["graph-r1-p1.log", "graph-r1-p10.json"])
            cmd, kw = calls[0]
            self.assertEqual(cmd[2:], ["run", "mlp-train", "eager", "--chunks", "7", "--out",
                                       stem + ".json", "--core", "5"])
            env = kw["env"]
            self.assertTrue(kw["start_new_session"])
            self.assertEqual((env["LD_PRELOAD"], env["PYGRAPH_MODE"], env["PYGRAPH_A"]),
                             (os.path.abspath(lib), "graph", "1"))
            self.assertEqual((env["PYGRAPH_STATS"], env["PYGRAPH_CACHE"]),
                             (stem + ".stats.%p.json", stem + ".decisions.json"))
            self.assertEqual(env["PYTHONFAULTHANDLER"], "1")
            diverge.start_run(a, None, stem, 5, popen=lambda cmd, **kw: calls.append((cmd, kw)))
            self.assertNotIn("LD_PRELOAD", calls[1][1]["env"])
            self.assertNotIn("PYGRAPH_STATS", calls[1][1]["env"])

    def test_wait_all_stops_a_real_hung_process_and_its_children(self):
        import subprocess

        quick = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
        # A parent that leaves a child sleeping in its session: both must go.
        hung = subprocess.Popen(["sh", "-c", "sleep 60 & echo $!; wait"], start_new_session=True,
                                stdout=subprocess.PIPE, text=True)
        child = int(hung.stdout.readline())
        hung.stdout.close()
        old = diverge.STACKS_S
        diverge.STACKS_S = 0.2
        try:
            self.assertEqual(diverge.wait_all([quick, hung], 1.0), [0, "hung"])
        finally:
            diverge.STACKS_S = old
        for _ in range(50):  # the child is reaped by init: gone within moments
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            self.fail("the hung run's child outlived it")


class ReportTest(unittest.TestCase):
    def doc(self):
        ch = lambda m: {"median": m, "q1": m - 1, "q3": m + 1, "pairs": 12}
        ok = lambda ms, **kw: dict(status="ok", ms_per_iter=ms, chunk_ms=[ms], digest="d", **kw)
        shim = {"coverage_percent": 99.0, "launches_per_replay": 50.0, "patched_per_replay": 2.0,
                "launches_per_iter": 55.0, "eager_launches_by_reason": {},
                "flushes/by_reason": {"cuStreamSynchronize": 10}}
        return {"runs": [{"gpu": "H100", "driver": "580", "torch": "2.11", "cuda": "13.0",
                          "commit": "abc", "date": "2026-11-23T00:00:00"}],
                "workloads": {
                    "a": {"cells": {
                        "eager": ok(2.0),
                        "eager+shim": ok(1.6, vs_eager=ch(-20), vs_without_shim=ch(-20),
                                         bitwise=True, shim=shim),
                        "compile": ok(1.0, vs_eager=ch(-50)),
                        "compile+shim": ok(0.8, vs_eager=ch(-60), vs_without_shim=ch(-20),
                                           bitwise=False, shim=shim),
                        "compile-ro": {"status": "failed", "reason": "hung"},
                        "cuda-graph": {"status": "n/a", "reason": "host reads"}}},
                    "b": {"cells": {"eager": ok(1.0),
                                    "eager+shim": ok(1.0, vs_eager=ch(0), vs_without_shim=ch(0),
                                                     bitwise=True, shim=shim)}}}}

    def test_summary_is_the_geomean_of_pairs(self):
        s = report.summary(self.doc())
        v, n = s["eager+shim over eager"]
        self.assertEqual(n, 2)
        self.assertAlmostEqual(v, (1.25 * 1.0) ** 0.5)
        self.assertEqual(s["compile-ro over compile"], (None, 0))

    def test_tables_name_failures_and_differences(self):
        doc = self.doc()
        text = report.table(doc)
        self.assertIn("FAILED", text)
        self.assertIn("DIFFERS", text)
        self.assertIn("n/a", text)
        self.assertIn("-20.0 % (-21.0 / -19.0)", text)
        head, rows = report.variant_rows(doc)
        self.assertEqual(rows[0][head.index("compile")], "2.00×")
        # A run of some variants only: the missing eager cell is not a failure.
        del doc["workloads"]["b"]["cells"]["eager"]
        head, rows = report.variant_rows(doc)
        self.assertEqual(rows[1][head.index("eager ms")], "-")

    def test_targets_list_every_miss_of_a_default_shim_cell(self):
        doc = self.doc()
        cells = doc["workloads"]["b"]["cells"]
        shim = dict(cells["eager+shim"]["shim"])
        worse = lambda **kw: dict(cells["eager+shim"], shim=dict(shim, **kw))
        cells["compile+shim"] = worse(coverage_percent=90.0, launches_per_replay=20.0)
        cells["compile-ro+shim"] = dict(worse(launches_per_iter=40.0, launches_per_replay=2.0),
                                        vs_without_shim={"median": 2, "q1": 0.5, "q3": 3})
        cells["eager+shim:arm"] = worse(coverage_percent=0.0)  # an arm: no target of its own
        cells["cuda-graph+shim"] = {"status": "n/a", "reason": "host reads"}
        cells["graphed-callables+shim"] = {"status": "failed", "reason": "hung"}
        head, rows, line = report.target_rows(doc)
        self.assertEqual(head[2], "target missed")
        got = {(r[0], r[1], r[2].split()[0]) for r in rows}
        self.assertEqual(got, {("a", "compile+shim", "bitwise"),
                               ("b", "compile+shim", "coverage"),
                               ("b", "compile+shim", "launches/replay"),
                               ("b", "compile-ro+shim", "not"),
                               ("b", "graphed-callables+shim", "runs")})
        # 20 launches a replay of 55 a step misses; 2 of 40 a step is under the 50 that count.
        self.assertIn("20.0 of 55 a step", [r[3] for r in rows])
        # Where its main sequence's chunks are cut short, the miss says where.
        cells["compile+shim"]["shim"]["pauses"] = {"split": 30, "cuts": [30, 62, 67, 70]}
        _, rows, _ = report.target_rows(doc)
        self.assertIn("20.0 of 55 a step; cut before 30 (split), 62, 67, 70", [r[3] for r in rows])
        # And where a chunk after a cut begins small (a restart), the split's place included.
        cells["compile+shim"]["shim"]["pauses"]["restarts"] = [30, 67]
        _, rows, _ = report.target_rows(doc)
        self.assertIn("20.0 of 55 a step; cut before 30 (split, restart), 62, 67 (restart), 70",
                      [r[3] for r in rows])
        # With each restart's first size and pace (session 46 on).
        cells["compile+shim"]["shim"]["pauses"]["restart_sizes"] = [
            {"first": 1, "pace": 0.75}, {"first": 41, "pace": 1.90625}]
        _, rows, _ = report.target_rows(doc)
        self.assertIn("20.0 of 55 a step; cut before 30 (split, restart 1 x0.75), 62, "
                      "67 (restart 41 x1.91), 70", [r[3] for r in rows])
        del cells["compile+shim"]["shim"]["pauses"]
        # Where the program's own graphs ran in the replays, the miss names the nodes a replay.
        cells["compile+shim"]["shim"].update(
            program_graphs={"nodes_replayed": 900}, nodes_per_replay=128.0)
        _, rows, line = report.target_rows(doc)
        self.assertIn("20.0 (128 nodes) of 55 a step", [r[3] for r in rows])
        # Counted by their nodes, that cell still misses its coverage: no other count to give.
        self.assertEqual(line, "issue 10's targets: 2 of 6 shim cells meet every one")
        cells["compile+shim"]["shim"]["coverage_percent"] = 100.0
        _, rows, line = report.target_rows(doc)
        self.assertEqual(line, "issue 10's targets: 2 of 6 shim cells meet every one "
                               "(3 with the program's graphs counted by their nodes)")
        self.assertIn(line, report.table(doc))

    def test_a_difference_its_variant_shows_without_the_shim_too_is_no_miss(self):
        doc = self.doc()
        a = doc["workloads"]["a"]
        misses = lambda: {(r[0], r[1], r[2]) for r in report.target_rows(doc)[1]}
        self.assertIn(("a", "compile+shim", "bitwise equal"), misses())
        # Another variant's two runs differing says nothing of this one.
        a["deterministic"] = {"eager": False, "compile": True}
        self.assertIn(("a", "compile+shim", "bitwise equal"), misses())
        # Its own variant computed different bits in two processes without the shim.
        a["deterministic"]["compile"] = False
        self.assertNotIn(("a", "compile+shim", "bitwise equal"), misses())
        self.assertIn("DIFFERS (baseline too)", report.table(doc))
        self.assertIn("  a                 compile run twice without the shim: DIFFERENT results",
                      report.cell_lines("a", a))

    def test_reruns_are_a_table_of_their_own_and_name_the_spread_beside_a_slower_cell(self):
        doc = self.doc()
        cells = doc["workloads"]["b"]["cells"]
        slower = {"median": 0.4, "q1": 0.2, "q3": 0.5, "pairs": 12}
        cells["eager+shim"] = dict(cells["eager+shim"], vs_without_shim=slower)
        cells["eager-rerun"] = dict(cells["eager"], ms_per_iter=1.01,
                                    vs_variant={"median": 0.3, "q1": 0.1, "q3": 0.6, "pairs": 12})
        head, rows = report.rerun_rows(doc)
        self.assertEqual(rows, [["b", "eager-rerun", "1.000 → 1.010", "+0.3 % (+0.1 / +0.6)",
                                 "same"]])
        # Two processes without the shim that computed different bits say so.
        cells["eager-rerun"]["digest"] = "another"
        self.assertEqual(report.rerun_rows(doc)[1][0][-1], "DIFFERENT")
        del cells["eager-rerun"]["digest"]
        self.assertEqual(report.rerun_rows(doc)[1][0][-1], "-")
        text = report.table(doc)
        self.assertIn("cell (no shim, twice)", text)
        _, misses, _ = report.target_rows(doc)
        self.assertIn(["b", "eager+shim",
                       "not slower (lower quartile <= 0 in over half of its processes)",
                       "+0.4 % (+0.2 / +0.5); no shim twice: +0.3 % (+0.1 / +0.6)"], misses)
        self.assertTrue(any("eager-rerun" in l and "vs the first run +0.3 %" in l
                            for l in report.cell_lines("b", doc["workloads"]["b"])))
        # Without reruns, no such table.
        self.assertNotIn("no shim, twice", report.table(self.doc()))

    def test_the_hosts_wait_in_reads_is_tabled_beside_the_variants(self):
        doc = self.doc()
        cells = doc["workloads"]["a"]["cells"]
        self.assertNotIn("in reads", report.table(doc))  # no cell measured it
        cells["eager"]["read_ms_per_iter"] = 0.033
        cells["eager+shim"]["read_ms_per_iter"] = 0.122
        cells["compile+shim"]["read_ms_per_iter"] = 0.040  # its variant measured none
        head, rows = report.read_rows(doc)
        self.assertEqual(rows, [["a", "eager+shim", "2.000 → 1.600", "33.0 → 122.0", "+89.0"]])
        self.assertIn("µs a step in reads without → with", report.table(doc))
        self.assertTrue(any("in reads 0.1220" in l
                            for l in report.cell_lines("a", dict(doc["workloads"]["a"],
                                                                 cells={"eager+shim": dict(
                                                                     cells["eager+shim"],
                                                                     host_ms_per_iter=1.5)}))))

    def test_a_merge_keeps_the_variants_a_later_run_left_out(self):
        ok = lambda ms: dict(status="ok", ms_per_iter=ms, chunk_ms=[ms], digest="d")
        first = {"runs": [{"commit": "a"}], "workloads": {"w": {
            "chunks": 12, "steps_per_chunk": 4, "run": 0, "baseline_deterministic": True,
            "cells": {"eager": ok(2.0), "eager+shim": ok(1.5), "compile": {"status": "failed"},
                      "compile+shim": {"status": "failed"},
                      "cuda-graph": {"status": "n/a", "reason": "host reads"}}}}}
        # --variants compile again, same shape: eager's cells stay, with their run.
        again = {"runs": [{"commit": "a"}], "workloads": {"w": {
            "chunks": 12, "steps_per_chunk": 4, "run": 0,
            "cells": {"compile": ok(1.0), "compile+shim": ok(0.9),
                      "cuda-graph": {"status": "n/a", "reason": "host reads"}}}}}
        # Another shape (--steps 40): it replaces the workload whole.
        other = {"runs": [{"commit": "a"}], "workloads": {"w": {
            "chunks": 12, "steps_per_chunk": 40, "run": 0, "cells": {"compile": ok(1.0)}}}}
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for k, doc in enumerate((first, again, other)):
                paths.append(os.path.join(d, f"{k}.json"))
                with open(paths[-1], "w") as f:
                    json.dump(doc, f)
            w = report.merge(paths[:2])["workloads"]["w"]
            self.assertEqual(list(w["cells"]), ["eager", "eager+shim", "compile", "compile+shim",
                                                "cuda-graph"])
            self.assertEqual(w["cells"]["eager+shim"]["run"], 0)
            self.assertEqual(w["cells"]["compile+shim"]["ms_per_iter"], 0.9)
            self.assertNotIn("run", w["cells"]["compile"])  # the workload's run: 1
            self.assertEqual(w["run"], 1)
            self.assertEqual(w["deterministic"], {"eager": True})  # from the old key
            self.assertEqual(list(report.merge(paths)["workloads"]["w"]["cells"]), ["compile"])
        self.assertEqual(report.variant_of("compile-ro+shim:old"), "compile-ro")
        self.assertEqual(report.variant_of("compile-ro-rerun"), "compile-ro")

    def test_an_arm_a_later_call_did_not_repeat_is_kept_with_its_own_baseline(self):
        ok = lambda ms, **kw: dict(status="ok", ms_per_iter=ms, chunk_ms=[ms], digest="d", **kw)
        ch = {"median": 2.0, "q1": 1.0, "q3": 3.0, "pairs": 12}
        first = {"chunks": 12, "steps_per_chunk": 4, "cells": {
            "compile-ro": ok(1.0), "compile-ro+shim": ok(1.1, vs_without_shim=ch, bitwise=True),
            "compile-ro+shim:arm": ok(1.2, vs_without_shim=ch, bitwise=True)}}
        again = {"chunks": 12, "steps_per_chunk": 4, "cells": {
            "compile-ro": ok(2.0), "compile-ro+shim": ok(2.1, vs_without_shim=ch, bitwise=True)}}
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for k, w in enumerate((first, again)):
                paths.append(os.path.join(d, f"{k}.json"))
                with open(paths[-1], "w") as f:
                    json.dump({"runs": [{"commit": "a"}], "workloads": {"w": w}}, f)
            doc = report.merge(paths)
        w = doc["workloads"]["w"]
        self.assertEqual(w["cells"]["compile-ro+shim:arm"]["ms_per_iter"], 1.2)  # not dropped
        self.assertEqual(w["cells"]["compile-ro+shim:arm"]["run"], 0)
        # Its row names the run without the shim of its own process, not the later one.
        row = next(r for r in report.shim_rows(doc)[1] if r[1] == "compile-ro+shim:arm")
        self.assertEqual(row[3], "1.000 → 1.200")
        row = next(r for r in report.shim_rows(doc)[1] if r[1] == "compile-ro+shim")
        self.assertEqual(row[3], "2.000 → 2.100")

    def test_a_cell_run_in_several_processes_keeps_each_and_tables_them(self):
        ch = lambda m, q1: {"median": m, "q1": q1, "q3": m + 2, "pairs": 12}
        ok = lambda ms, **kw: dict(status="ok", ms_per_iter=ms, chunk_ms=[ms], digest="d", **kw)
        shim = {"coverage_percent": 100.0, "launches_per_replay": 28.0, "patched_per_replay": 0.0,
                "launches_per_iter": 28.0}
        process = lambda m, q1: {"chunks": 12, "steps_per_chunk": 100, "run": 0, "cells": {
            "compile": ok(1.0),
            "compile+shim": ok(1.0, vs_without_shim=ch(m, q1), bitwise=True, shim=shim),
            "compile-ro": {"status": "n/a", "reason": "three modules"}}}
        w = None
        for m, q1 in ((6.8, 0.3), (-4.4, -14.5), (4.4, 0.6)):  # session 36's two-streams
            w = report.merge_workload(w, process(m, q1))
        # The last process is the cell; the two before it are kept, first to last.
        self.assertEqual(w["cells"]["compile+shim"]["vs_without_shim"]["median"], 4.4)
        self.assertEqual([c["vs_without_shim"]["median"] for c in w["earlier"]["compile+shim"]],
                         [6.8, -4.4])
        self.assertNotIn("compile-ro", w["earlier"])  # a cell that did not run is no process
        doc = {"runs": [{"commit": "a"}], "workloads": {"two-streams": w}}
        head, rows = report.process_rows(doc)
        self.assertEqual(rows, [["two-streams", "compile+shim", "+6.8, -4.4, +4.4",
                                 "3 processes: median +4.4 %, slower in 2"]])
        _, misses, _ = report.target_rows(doc)
        self.assertEqual(misses[0][3], "+4.4 % (+0.6 / +6.4); 3 processes: median +4.4 %, "
                                       "slower in 2")
        self.assertIn("change in each process", report.table(doc))
        # Its picture: one row for the cell, each process a point; the verdict over them.
        points = report.process_points(doc)
        self.assertEqual([(label, [c["median"] for c in seq], s) for label, seq, s in points],
                         [("two-streams compile+shim", [6.8, -4.4, 4.4], True)])
        with tempfile.TemporaryDirectory() as d:
            png = os.path.join(d, "processes.png")
            can_draw = report.pyplot("test chart") is not None
            self.assertEqual(report.process_chart(doc, png), can_draw)
            self.assertEqual(os.path.exists(png), can_draw)
            if can_draw:
                with open(png, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            # No cell in several processes: no picture.
            one = {"runs": [{}], "workloads": {"w": process(1.0, -1.0)}}
            self.assertFalse(report.process_chart(one, os.path.join(d, "none.png")))
            self.assertFalse(os.path.exists(os.path.join(d, "none.png")))
        # Through files (report.py --merge): the processes stay, with their runs.
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for k, (m, q1) in enumerate(((1.0, -1.0), (3.0, 1.0))):
                paths.append(os.path.join(d, f"{k}.json"))
                with open(paths[-1], "w") as f:
                    json.dump({"runs": [{"commit": "a"}], "workloads": {"w": process(m, q1)}}, f)
            merged = report.merge(paths)["workloads"]["w"]
            self.assertEqual([c["run"] for c in merged["earlier"]["compile+shim"]], [0])
            self.assertEqual(merged["run"], 1)
            self.assertEqual(report.process_rows({"workloads": {"w": merged}})[1][0][3],
                             "2 processes: median +2.0 %, slower in 1")
            # Files of several processes each (--repeat): none is lost, in the order run.
            for k in (0, 1):
                with open(paths[k]) as f:
                    doc = json.load(f)
                w2 = doc["workloads"]["w"]
                w2["earlier"] = {"compile+shim": [dict(w2["cells"]["compile+shim"],
                                                       run=0, vs_without_shim=ch(-5.0 - k, 0))]}
                with open(paths[k], "w") as f:
                    json.dump(doc, f)
            merged = report.merge(paths)["workloads"]["w"]
            self.assertEqual([(c["run"], c["vs_without_shim"]["median"])
                              for c in merged["earlier"]["compile+shim"]],
                             [(0, -5.0), (0, 1.0), (1, -6.0)])
            self.assertEqual(merged["cells"]["compile+shim"]["vs_without_shim"]["median"], 3.0)
        # Another shape replaces the workload whole: its processes are no processes of this one.
        other = dict(process(1.0, -1.0), steps_per_chunk=40)
        self.assertNotIn("earlier", report.merge_workload(w, other))

    def test_the_replay_chart_puts_each_process_at_its_launches_a_replay(self):
        ch = lambda m: {"median": m, "q1": m - 1, "q3": m + 1, "pairs": 12}
        ok = lambda per, m, step=70: dict(status="ok", ms_per_iter=1.0, chunk_ms=[1.0],
                                          digest="d", vs_without_shim=ch(m),
                                          shim={"launches_per_replay": per,
                                                "launches_per_iter": step})
        w = {"chunks": 12, "steps_per_chunk": 4, "cells": {
            "eager": dict(status="ok", ms_per_iter=1.0, chunk_ms=[1.0], digest="d"),
            "eager+shim": ok(23.0, -10.0), "eager+shim:two": ok(35.0, -2.0),
            "compile-ro+shim": ok(2.0, 0.5, step=4),
            "compile+shim": {"status": "failed", "error": "boom"}},
            "earlier": {"eager+shim": [ok(23.3, -12.0), dict(ok(1.0, 0.0), shim={})]}}
        doc = {"runs": [{}], "workloads": {"w": w}}
        # Earlier processes first; a process without launches a replay, or failed, is left out;
        # the launches-a-replay target applies from 50 launches a step.
        self.assertEqual([(label, per, c["median"], applies) for label, per, c, applies in
                          report.replay_points(doc)],
                         [("w eager+shim", 23.3, -12.0, True), ("w eager+shim", 23.0, -10.0, True),
                          ("w eager+shim:two", 35.0, -2.0, True),
                          ("w compile-ro+shim", 2.0, 0.5, False)])
        with tempfile.TemporaryDirectory() as d:
            png = os.path.join(d, "replays.png")
            can_draw = report.pyplot("test chart") is not None
            self.assertEqual(report.replay_chart(doc, png), can_draw)
            self.assertEqual(os.path.exists(png), can_draw)
            none = {"runs": [{}], "workloads": {"w": {"cells": {"eager": w["cells"]["eager"]}}}}
            self.assertFalse(report.replay_chart(none, os.path.join(d, "none.png")))
            self.assertFalse(os.path.exists(os.path.join(d, "none.png")))

    def test_processes_say_whether_they_ran_the_same_kernels(self):
        ch = {"median": 0.5, "q1": -1.0, "q3": 2.0, "pairs": 12}
        ok = lambda **kw: dict(status="ok", ms_per_iter=1.0, chunk_ms=[1.0], digest="d", **kw)
        shim = lambda sigs: {"coverage_percent": 100.0, "launches_per_replay": 40.0,
                             "patched_per_replay": 0.0, "launches_per_iter": 40.0,
                             **({"signatures": sigs} if sigs else {})}
        def doc_of(*sigs):
            w = None
            for s in sigs:
                w = report.merge_workload(w, {"chunks": 12, "steps_per_chunk": 4, "cells": {
                    "compile": ok(), "compile+shim": ok(vs_without_shim=ch, bitwise=True,
                                                        shim=shim(s))}})
            return {"runs": [{"commit": "a"}], "workloads": {"w": w}}
        together = lambda *sigs: report.process_rows(doc_of(*sigs))[1][0][3]
        self.assertEqual(together(["s-9-a", "p-3-b"], ["s-9-a", "p-3-b"], ["s-9-a", "p-3-b"]),
                         "3 processes: median +0.5 %, slower in 0; same main sequence in each")
        self.assertEqual(together(["s-9-a"], ["s-9-c"], ["s-9-a"], ["s-8-d"]),
                         "4 processes: median +0.5 %, slower in 0; "
                         "another main sequence in process 2, 4")
        # The lesser sequences (warm-up ones, mostly) may differ: the main one decides.
        self.assertEqual(together(["s-9-a", "p-3-b"], ["s-9-a", "p-4-e", "p-3-b"]),
                         "2 processes: median +0.5 %, slower in 0; same main sequence in each")
        # Results before session 41 have no signatures: nothing said.
        self.assertEqual(together(None, None), "2 processes: median +0.5 %, slower in 0")
        self.assertEqual(together(None, ["s-9-a"]), "2 processes: median +0.5 %, slower in 0")
        # Where they come from: the stats' sequences, most launches first, three at most.
        end = {"decisions": {"sequences": [{"signature": "s-9-a"}, {"signature": None},
                                           {"signature": "p-3-b"}, {"signature": "p-2-c"}]}}
        self.assertEqual(harness.stats_delta(end, None)["signatures"], ["s-9-a", None, "p-3-b"])
        self.assertNotIn("signatures", harness.stats_delta({}, None))
        # A main sequence not yet whole has no signature: the lesser ones stand in for nothing.
        end["decisions"]["sequences"][0]["signature"] = None
        sigs = harness.stats_delta(end, None)["signatures"]
        self.assertEqual(sigs, [None, None, "p-3-b"])
        self.assertEqual(together(sigs, ["s-9-a"]), "2 processes: median +0.5 %, slower in 0")

    def test_a_cell_in_several_processes_is_slower_where_most_of_them_are(self):
        ch = lambda q1: {"median": q1 + 1, "q1": q1, "q3": q1 + 2, "pairs": 12}
        self.assertTrue(report.slower([ch(0.5)]))  # one process: its lower quartile
        self.assertFalse(report.slower([ch(0.0)]))
        self.assertFalse(report.slower([]))
        self.assertFalse(report.slower([ch(0.5), ch(-1.0), ch(-2.0)]))
        self.assertTrue(report.slower([ch(0.5), ch(1.0), ch(-2.0)]))
        self.assertTrue(report.slower([ch(0.5), ch(-1.0)]))  # a tie: still slower
        # In the targets: the A/A-sized miss of one process, overruled by two others.
        ok = lambda **kw: dict(status="ok", ms_per_iter=1.0, chunk_ms=[1.0], digest="d", **kw)
        shim = {"coverage_percent": 100.0, "launches_per_replay": 40.0, "patched_per_replay": 0.0,
                "launches_per_iter": 40.0}
        w = None
        for q1 in (1.6, -0.5, -3.0):
            w = report.merge_workload(w, {"chunks": 12, "steps_per_chunk": 4, "cells": {
                "compile": ok(), "compile+shim": ok(vs_without_shim=ch(q1), bitwise=True,
                                                    shim=shim)}})
        doc = {"runs": [{"commit": "a"}], "workloads": {"w": w}}
        self.assertEqual(report.target_rows(doc)[1], [])
        self.assertEqual(report.process_rows(doc)[1][0][3],
                         "3 processes: median +0.5 %, slower in 1")

    def test_launches_a_replay_and_coverage_are_judged_in_every_process(self):
        """A cell run in several processes misses a figure's target where at least half of them
        do (a tie too), whatever its last process read, and the miss lists each process's."""
        ch = {"median": -5.0, "q1": -6.0, "q3": -4.0, "pairs": 12}
        ok = lambda **kw: dict(status="ok", ms_per_iter=1.0, chunk_ms=[1.0], digest="d", **kw)

        def doc_of(per_replay, coverage=None):
            w = None
            for k, lpr in enumerate(per_replay):
                shim = {"coverage_percent": coverage[k] if coverage else 100.0,
                        "launches_per_replay": lpr, "patched_per_replay": 0.0,
                        "launches_per_iter": 136.0}
                w = report.merge_workload(w, {"chunks": 12, "steps_per_chunk": 4, "cells": {
                    "compile": ok(), "compile+shim": ok(vs_without_shim=ch, bitwise=True,
                                                        shim=shim)}})
            return {"runs": [{"commit": "a"}], "workloads": {"w": w}}

        rows = report.target_rows(doc_of([19.7, 34.2]))[1]
        self.assertEqual([(r[1], r[2].split()[0]) for r in rows], [("compile+shim",
                                                                   "launches/replay")])
        self.assertIn("34.2 of 136 a step; 2 processes: 19.7, 34.2", rows[0][3])
        self.assertEqual(report.target_rows(doc_of([19.7, 34.2, 40.0]))[1], [])
        self.assertEqual(len(report.target_rows(doc_of([40.0, 19.7, 20.0]))[1]), 1)
        self.assertEqual(report.target_rows(doc_of([40.0]))[1], [])
        rows = report.target_rows(doc_of([40.0, 40.0], coverage=[90.0, 100.0]))[1]
        self.assertEqual([r[2].split()[0] for r in rows], ["coverage"])
        self.assertIn("100.0 % of 136 a step; 2 processes: 90.0%, 100.0%", rows[0][3])

    def test_weighed_chunks_whose_gpu_time_disagrees_between_rounds_are_tabled(self):
        """A chunk's GPU time in one weighed round at least 3 times and 100 us more than in
        another is something else the GPU ran: tabled per process, first chunk or not."""
        t = lambda a, b, us: {"start": a, "end": b, "gpu_us": us, "idle_us": None}
        pauses = {"earlier_rounds": [[t(0, 2, 160.0), t(2, 6, 20.0), t(6, 14, 38.0)]],
                  "last_round": [t(0, 2, 793.0), t(2, 6, 22.0), t(6, 14, 130.0)]}
        self.assertEqual(report.round_outliers(pauses), [(0, 2, [160.0, 793.0])])
        pauses["last_round"][2]["gpu_us"] = 735.0
        self.assertEqual([o[:2] for o in report.round_outliers(pauses)], [(0, 2), (6, 14)])
        self.assertEqual(report.round_outliers({"last_round": [t(0, 2, 900.0)]}), [])
        self.assertEqual(report.round_outliers({}), [])
        doc = self.doc()
        cell = doc["workloads"]["b"]["cells"]["eager+shim"]
        cell["shim"] = dict(cell["shim"], pauses=pauses)  # the fixture's cells share one dict
        head, rows = report.outlier_rows(doc)
        self.assertEqual(rows, [["b", "eager+shim", "1", "[0, 2)", "160, 793"],
                                ["b", "eager+shim", "1", "[6, 14)", "38, 735"]])
        self.assertIn("GPU µs in each weighed round", report.table(doc))

    def test_confirm_runs_a_slower_cell_again_while_it_counts_as_slower(self):
        import run

        ch = lambda q1: {"median": q1 + 1, "q1": q1, "q3": q1 + 2, "pairs": 12}
        ok = lambda **kw: dict(status="ok", ms_per_iter=1.0, chunk_ms=[1.0], digest="d", **kw)
        shim = {"coverage_percent": 100.0, "launches_per_replay": 40.0, "patched_per_replay": 0.0,
                "launches_per_iter": 40.0}

        def result(q1):
            return {"chunks": 12, "steps_per_chunk": 4, "cells": {
                "eager": ok(), "eager+shim": ok(vs_without_shim=ch(-5.0), bitwise=True, shim=shim),
                "compile": ok(), "compile+shim": ok(vs_without_shim=ch(q1), bitwise=True,
                                                    shim=shim),
                "compile+shim:arm": ok(vs_without_shim=ch(9.0), bitwise=True, shim=shim)}}

        class FakeSuite:
            process = 0
            durations = {"w": 30.0}
            budget_left = None

            def time_left(self):
                return self.budget_left

        # (the changes of later processes, --confirm, processes run again)
        for later, count, expect in (((-1.0, -1.0, 5.0), 3, 2),  # a tie after one; 1 of 3 ends it
                                     ((2.0, 2.0, 2.0), 3, 1),  # 2 of 2: no third can overrule it
                                     ((-1.0,), 1, 0),  # a tie cannot overrule it: not run
                                     ((), 0, 0)):
            slower_at_end = 2 * (1 + later[:expect].count(2.0)) >= 1 + expect
            doc = {"runs": [{}], "workloads": {"w": result(1.0), "fast": result(-1.0)}}
            doc["workloads"]["w"]["run"] = 0
            self.assertEqual(run.to_confirm(doc["workloads"]["w"], 0, 2), ["compile", "eager"])
            self.assertEqual(run.to_confirm(doc["workloads"]["w"], 1, 2), [])  # an earlier run's
            self.assertEqual(run.to_confirm(doc["workloads"]["fast"], 0, 2), [])  # an arm: no cell
            suite, ran, queue = FakeSuite(), [], list(later)

            def run_one(name, only):
                ran.append((name, only, suite.process))
                doc["workloads"][name] = report.merge_workload(doc["workloads"][name],
                                                               dict(result(queue.pop(0)), run=0))

            run.confirm(suite, doc, ["w", "fast"], 1, count, run_one, time.monotonic())
            self.assertEqual(ran, [("w", ["compile", "eager"], p) for p in range(1, 1 + expect)])
            self.assertEqual(len(report.processes(doc["workloads"]["w"], "compile+shim")),
                             expect + 1 if expect else 0)
            self.assertEqual(bool(report.target_rows(doc)[1]), slower_at_end)
        # No process starts that the budget cannot hold as long as the last one took.
        suite, ran = FakeSuite(), []
        suite.budget_left = 80.0  # under the 90 s any process needs (run_turn)
        doc = {"runs": [{}], "workloads": {"w": dict(result(1.0), run=0)}}
        run.confirm(suite, doc, ["w"], 1, 2, lambda name, only: ran.append(name), 0)
        self.assertEqual(ran, [])
        suite.durations = {"w": 150.0}  # a long last process
        suite.budget_left = 130.0
        run.confirm(suite, doc, ["w"], 1, 2, lambda name, only: ran.append(name), 0)
        self.assertEqual(ran, [])
        suite.durations = {"w": 30.0}
        suite.budget_left = 100.0  # (the process is not merged: one alone cannot overrule it)
        run.confirm(suite, doc, ["w"], 1, 2, lambda name, only: ran.append(name), 0)
        self.assertEqual(ran, ["w"])

    def test_a_confirming_process_where_a_cell_failed_is_not_counted(self):
        import run

        ok = lambda **kw: dict(status="ok", ms_per_iter=1.0, chunk_ms=[1.0], digest="d", **kw)
        ch = {"median": 2.0, "q1": 1.0, "q3": 3.0, "pairs": 12}
        first = {"chunks": 12, "steps_per_chunk": 4, "run": 0, "cells": {
            "compile": ok(), "compile+shim": ok(vs_without_shim=ch, bitwise=True)}}
        broken = {"chunks": 12, "steps_per_chunk": 4, "cells": {
            "compile": {"status": "failed", "reason": "warm-up past its deadline"},
            "compile+shim": ok()}}  # no baseline: no change to judge

        class FakeSuite:
            process, durations = 1, {}

            def time_left(self):
                return None

            def run_workload(self, name, only):
                return broken

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results.json")
            doc = {"runs": [{}], "workloads": {"w": first}}
            run.run_turn(FakeSuite(), doc, path, "w", ["compile"], confirming=True)
            self.assertIs(doc["workloads"]["w"], first)  # the measured process stays
            self.assertFalse(os.path.exists(path))
            self.assertTrue(report.target_rows(doc)[1])  # still slower
            run.run_turn(FakeSuite(), doc, path, "w", ["compile"])  # a first process is kept
            self.assertEqual(doc["workloads"]["w"]["cells"]["compile"]["status"], "failed")
            self.assertTrue(os.path.exists(path))

    def test_cell_lines_name_a_graph_failure(self):
        doc = self.doc()
        failed = dict(doc["workloads"]["b"]["cells"]["eager+shim"]["shim"],
                      last_graph_failure="cuGraphInstantiate failed (CUresult 2)")
        doc["workloads"]["b"]["cells"]["eager+shim"]["shim"] = failed
        lines = report.cell_lines("b", doc["workloads"]["b"])
        self.assertTrue(any("GRAPH FAILURE: cuGraphInstantiate failed (CUresult 2)" in l
                            for l in lines), lines)
        self.assertFalse(any("GRAPH FAILURE" in l for l in report.cell_lines("a", doc["workloads"]["a"])))

    def test_cell_lines_tell_the_pauses(self):
        doc = self.doc()
        shim = dict(doc["workloads"]["a"]["cells"]["eager+shim"]["shim"],
                    graphs={"pause_cuts": 40},
                    pauses={"places": 3, "light": 2, "weighing": 1, "unweighed": 0})
        doc["workloads"]["a"]["cells"]["eager+shim"]["shim"] = shim
        lines = report.cell_lines("a", doc["workloads"]["a"])
        self.assertTrue(any("pauses 3 cut (40 cuts), 2 light, 1 weighing, 0 unweighed" in l
                            for l in lines), lines)

    def test_cell_lines_tell_programmatic_nodes_where_there_are_some(self):
        doc = self.doc()
        cells = doc["workloads"]["a"]["cells"]
        cells["eager+shim"]["shim"] = dict(cells["eager+shim"]["shim"],
                                           programmatic={"allowed": 46})
        lines = report.cell_lines("a", doc["workloads"]["a"])
        self.assertTrue(any("programmatic: 46 nodes allow (dropped)" in l for l in lines), lines)
        # Results of sessions 39 to 41 also name edges and refusals: none built, dropped; built
        # (the removed option's arm), said so.
        cells["eager+shim"]["shim"]["programmatic"] = {"allowed": 46, "edges": 0, "refused": 0}
        self.assertTrue(any("programmatic: 46 nodes allow (dropped)" in l
                            for l in report.cell_lines("a", doc["workloads"]["a"])))
        cells["eager+shim"]["shim"]["programmatic"] = {"allowed": 46, "edges": 45, "refused": 0}
        self.assertTrue(any("programmatic: 46 nodes allow, 45 edges, 0 refused" in l
                            for l in report.cell_lines("a", doc["workloads"]["a"])))
        cells["eager+shim"]["shim"]["programmatic"] = {"allowed": 0}
        self.assertFalse(any("programmatic" in l
                             for l in report.cell_lines("a", doc["workloads"]["a"])))


class SimulateCheckTest(unittest.TestCase):
    """simulate_check.py against a fake analyzer that predicts by the trace's name."""

    def test_rows_compare_prediction_with_graph_mode(self):
        import json
        import simulate_check

        with tempfile.TemporaryDirectory() as tmp:
            cells = os.path.join(tmp, "cells")
            os.makedirs(cells)
            for name in ("close", "far", "broken"):
                open(os.path.join(cells, f"{name}.eager_trace.trace"), "w").close()
            # torchrun's launcher writes an empty trace; its ranks write theirs beside it.
            open(os.path.join(cells, "ranks.eager_trace.trace"), "w").close()
            with open(os.path.join(cells, "ranks.eager_trace.trace.77"), "w") as f:
                f.write("launches")
            analyzer = os.path.join(tmp, "analyzer")
            with open(analyzer, "w") as f:
                f.write("#!/bin/sh\ncase $3 in\n"
                        "*close*) echo '{\"coverage_percent\": 93.0}' ;;\n"
                        "*far*) echo '{\"coverage_percent\": 40.0}' ;;\n"
                        "*ranks.eager_trace.trace.77) echo '{\"coverage_percent\": 89.0}' ;;\n"
                        "*) echo 'bad trace' >&2; exit 3 ;;\nesac\n")
            os.chmod(analyzer, 0o755)
            shim = lambda cov: {"cells": {"eager+shim": {"shim_whole_run_coverage": cov}}}
            doc = {"workloads": {"close": shim(90.0), "far": shim(90.0), "broken": shim(90.0),
                                 "ranks": shim(90.0), "untraced": shim(50.0)}}
            rows = {r["workload"]: r for r in simulate_check.rows(doc, cells, analyzer)}
            self.assertEqual(set(rows), {"close", "far", "broken", "ranks"})
            self.assertTrue(rows["ranks"]["ok"])  # the rank's trace, not the launcher's
            self.assertTrue(rows["close"]["ok"])
            self.assertAlmostEqual(rows["close"]["difference"], 3.0)
            self.assertFalse(rows["far"]["ok"])
            self.assertFalse(rows["broken"]["ok"])
            self.assertEqual(rows["broken"]["why"], "bad trace")
            self.assertIn("FAIL: bad trace", simulate_check.table(list(rows.values())))
            json.dumps(list(rows.values()))  # simulate.json is plain JSON


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.exit(fake_worker(sys.argv[2:]))
    unittest.main()
