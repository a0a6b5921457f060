"""GPU checks and benchmarks of pygraph (run by scripts/gpu-check.sh on the H200 machine).

Sections (--sections, all by default):
  doors  cuda_doors: launches per door in the trace == launches the program made per door; in
         graph mode its host-checked results stay right. packed_args: launches whose packed
         block is smaller than the kernel's 4 KiB parameter (NCCL's) bitwise equal in graph
         mode and replayed in graphs. memop_loop: kernels, memsets, device
         copies, pageable and pinned host copies per step, bitwise equal in graph mode, memops
         replayed inside graphs.
  streams streams_loop: a loop on two streams ordered by events both ways, with waits and host
         syncs on events recorded inside graphs, one event relayed between the streams (two
         records in one graph, a wait on the latest after it), event queries and single-stream
         syncs: host reads bitwise equal to no shim with PYGRAPH_STREAMS off and on, and on
         with PYGRAPH_ANSWER_QUERIES (some queries answered); the relay's second records inside
         graphs; launches per replay.
  trace  PyTorch MLP training, eager and torch.compile'd: launches per steady-state step seen by
         the shim == kernels per step counted by torch.profiler; losses bitwise equal with and
         without the shim (off and trace mode).
  graph  each workload (--models) in graph mode: every step's result bitwise equal to no shim,
         steady-state coverage, graphs and patches, flushes, GPU memory.
  cost   the shim's CPU cost per launch in one process (stand-in driver), every mode, the
         median of 5 such processes; and on the real driver (launch_cost): the median launch
         call without the shim and in graph mode, where it is a deferred launch (target
         <= 150 ns); break_even: steps of N launches and a sync without the shim and as one
         graph, N from 1 to 64, and the smallest N from which the graph wins (issue 10, graphs
         that pay), and without the shim N launches against one graph of them, every node
         patched (N 1, 2, 4: step and host time);
         op_cost: the driver's answer to the memory-type query graph mode makes per copy
         operand (device, pinned, pageable) and a pageable copy and sync, without the shim and
         in graph mode (info); child_graph_cost: without the shim, an input copy and a program's
         graph of 300 nodes launched as the program does against one graph holding both (its
         copy node patched or not) and against the copy as a graph of its own (GPU time a step);
         child_graph_real: the same for ResNet-50 b64's compiled graph, captured by torch, and
         that graph with its programmatic edges made plain (what dropping programmatic
         dependent launch costs on the GPU), and ResNet-18 b1's launched 2 and 3 times against
         one graph of 2 and 3 children of it.
  idle   GPU idle time at the start of each step and within it: gpu_idle (kernels stamp the
         GPU clock, no profiler), then each workload (torch.profiler timeline, which inflates
         CPU time per op); no shim vs graph mode vs a first chunk of 8.
  grid   GPT-2 decode with grid/shared memory patched (default) against in the token
         (PYGRAPH_PATCH_GRID=0): coverage, and step time in lockstep.
  bench  step times side by side in lockstep: the MLP without the shim / off / trace, and each
         workload without the shim / graph mode.
  decide measured decisions and their cache (issue 11; tests/gpu/decide.py has the rules), on
         the benchmark suite's workloads: GPU-bound resnet50-b64 within 1 % of no shim and its
         sequences decided eager or graphs not slower; launch-bound mlp-train and compiled-b1
         end with verdict "graph"; mlp-train compile-ro never slower with the shim; a second
         run with the same cache measures nothing and graphs no later; two torchrun ranks share
         one cache file without losing an entry. About 3 minutes on an H100.
The table's first row names the machine (CPU, GPU and driver). Prints a table last; exits
non-zero if any check fails.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import decide
import harness

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "..", "..", "scripts", "examples", "torch_workload.py")
WORKLOAD = os.path.normpath(WORKLOAD)
# The bench section's untimed chunks of 25 steps, in turns after two warm-up steps run at once.
BENCH_WARM_CHUNKS = 4
SECTIONS = "doors,streams,trace,graph,cost,bench,idle,grid,decide"  # the default: all


class Check:
    def __init__(self, build, out):
        self.build = os.path.abspath(build)
        self.out = out
        self.shim = os.path.join(self.build, "libpygraph.so")
        self.analyzer = os.path.join(self.build, "pygraph-analyze")
        self.rows = []  # (check, value, expected, ok)
        self.cost = {}  # shim ns per launch, by mode
        self.calls_per_step = {}  # launches and other driver calls per step, by model
        self.coverage = {}

    def run(self, argv, mode=None, trace=None, name="run", env_extra=None):
        # No PYGRAPH_ setting of the caller's: each row runs the defaults and what it names.
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYGRAPH_")}
        env.update(env_extra or {})
        env.pop("LD_PRELOAD", None)
        if mode is not None:
            env["LD_PRELOAD"] = self.shim
            env["PYGRAPH_MODE"] = mode
            if trace:
                env["PYGRAPH_TRACE"] = trace
        p = subprocess.run(argv, env=env, capture_output=True, text=True)
        with open(os.path.join(self.out, name + ".log"), "a") as f:
            f.write(f"$ {' '.join(argv)} (mode={mode})\n{p.stdout}\n{p.stderr}\n")
        if p.returncode != 0:
            raise RuntimeError(f"{name} failed ({p.returncode}): {p.stderr[-2000:]}")
        return p.stdout

    def machine(self):
        """Which machine ran the figures: the CPU and the GPU with its driver (figures such as
        the launch cost differ between machines of one kind; a table says which it came from)."""
        cpu = "?"
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next((line.split(":", 1)[1].strip() for line in f
                            if line.startswith("model name")), "?")
        except OSError:
            pass
        gpu = "?"
        try:
            gpu = ", ".join(harness.gpus()[0])
        except Exception:  # no nvidia-smi, or no answer: the row says "?"
            pass
        self.add(("machine: CPU; GPU, driver", f"{cpu} x{os.cpu_count()}", gpu, "info"))

    def summary(self, trace):
        out = subprocess.run([self.analyzer, "summary", "--json", trace], capture_output=True,
                             text=True, check=True).stdout
        return json.loads(out)

    def add(self, row):
        # Printed at once as well: a run cut short by a time limit still shows what it measured.
        self.rows.append(row)
        print(" | ".join(str(c) for c in row), flush=True)

    def row(self, check, value, expected, ok):
        self.add((check, str(value), str(expected), "PASS" if ok else "FAIL"))

    def doors(self):
        program = os.path.join(self.build, "cuda_doors")
        trace = os.path.join(self.out, "doors.trace")
        expected = json.loads(self.run([program], mode="trace", trace=trace, name="doors"))
        got = self.summary(trace)["launches"]["by_door"]
        for door, n in expected.items():
            self.row(f"cuda_doors launches via {door}", got.get(door, 0), n,
                     got.get(door, 0) == n)
        # Graph mode: the program checks its results on the host and exits non-zero if wrong.
        spath = os.path.join(self.out, "doors-graph-stats.json")
        again = json.loads(self.run([program], mode="graph", name="doors-graph",
                                    env_extra={"PYGRAPH_STATS": spath}))
        replayed = json.load(open(spath))["launches"]["replayed_in_graphs"]
        self.row("cuda_doors in graph mode: host-checked results", "correct", "correct",
                 again == expected)
        # One kernel again and again is a loop of period one from its 33rd launch in a row
        # (sequence_detector.h; sessions 32-35 read 0 of 175, session 36 104).
        self.row("cuda_doors in graph mode: launches replayed in graphs", replayed,
                 f"> 0 of {sum(expected.values())}", replayed > 0)

    def bitwise_steps(self, program, name, steps):
        """`program STEPS`, which prints a line per step, without the shim and in graph mode:
        the row saying whether the outputs are equal, and graph mode's stats."""
        argv = [os.path.join(self.build, program), str(steps)]
        plain = self.run(argv, name=name)
        spath = os.path.join(self.out, f"{name}-graph-stats.json")
        graph = self.run(argv, mode="graph", name=name, env_extra={"PYGRAPH_STATS": spath})
        same = plain == graph and plain.count("\n") == steps
        self.row(f"{program}: {steps} steps bitwise, graph vs no shim",
                 "equal" if same else "DIFFER", "equal", same)
        return json.load(open(spath))

    def packed(self, steps=40):
        """Packed arguments smaller than the kernel's 4 KiB parameter (NCCL's launches):
        bitwise equal in graph mode, and replayed in graphs rather than launched eagerly."""
        st = self.bitwise_steps("packed_args", "packed", steps)
        launches = st["launches"]
        eager = st.get("eager_launches_by_reason", {})
        self.row("packed_args: launches replayed in graphs", launches["replayed_in_graphs"],
                 f"> 0 of {launches['seen_by_engine']}", launches["replayed_in_graphs"] > 0)
        self.row("packed_args: launches eager for their block's size",
                 eager.get("packed_args_size", 0), 0, eager.get("packed_args_size", 0) == 0)
        self.add(("packed_args: coverage %; graph failures", f"{st['coverage_percent']:.1f}",
                  str(st["graphs"].get("last_failure", ""))[:40], "info"))

    def memops(self, steps=50):
        st = self.bitwise_steps("memop_loop", "memops", steps)
        m = st["memops"]
        self.row("memop_loop: memops replayed inside graphs", m["replayed_in_graphs"],
                 f"> 0 of {m['seen_by_engine']}", m["replayed_in_graphs"] > 0)
        self.row("memop_loop: pageable bytes staged", m["staged_bytes"], "> 0",
                 m["staged_bytes"] > 0)
        self.add(("memop_loop: coverage %; memop eager reasons",
                          f"{st['coverage_percent']:.1f}", str(m["eager_by_reason"])[:40],
                          "info"))

    def streams(self, steps=200):
        """Several streams in one graph (PYGRAPH_STREAMS=1) on the real driver: streams_loop's
        host reads bitwise equal to no shim with the option off and on, and with it on, the
        step's launches on both streams replayed together (launches per replay)."""
        program = os.path.join(self.build, "streams_loop")
        plain = self.run([program, str(steps)], name="streams")
        per = {}
        # "queries": answer_queries on, so the step's cudaEventQuery of an event recorded in
        # the pending chunk is answered "not ready" instead of submitting the chunk.
        for cfg, env in (("off", {"PYGRAPH_STREAMS": "0"}), ("on", {"PYGRAPH_STREAMS": "1"}),
                         ("queries", {"PYGRAPH_STREAMS": "1", "PYGRAPH_ANSWER_QUERIES": "1"})):
            spath = os.path.join(self.out, f"streams-{cfg}-stats.json")
            got = self.run([program, str(steps)], mode="graph", name="streams",
                           env_extra=dict(env, PYGRAPH_STATS=spath))
            same = got == plain and plain.count("\n") == 3 * (steps // 10) + 1
            self.row(f"streams_loop: {steps} steps bitwise, streams {cfg} vs no shim",
                     "equal" if same else "DIFFER", "equal", same)
            st = json.load(open(spath))
            per[cfg] = st["graphs"]["launches_per_replay"]
            if cfg == "queries":
                answered = st["flushes"].get("queries_answered", 0)
                self.row("streams_loop: event queries answered without a flush", answered,
                         "> 0", answered > 0)
            if cfg == "on":
                # The relay's second record of its event, in the chunk of the first.
                rerecords = st["streams"].get("rerecords_in_graphs", 0)
                self.row("streams_loop: second records of an event in one graph", rerecords,
                         "> 0", rerecords > 0)
            self.add((f"streams_loop, streams {cfg}: coverage %; launches/replay; flushes",
                      f"{st['coverage_percent']:.1f}; {per[cfg]:.1f}",
                      " ".join(f"{k}={v}" for k, v in sorted(
                          st["flushes"]["by_reason"].items(), key=lambda kv: -kv[1])[:3]),
                      "info"))
        # 9 launches a step on two streams: with streams on, a graph holds whole steps.
        self.row("streams_loop: launches per replay, streams on", f"{per['on']:.1f}",
                 "> 2x off", per["on"] > 2 * per["off"])

    def break_even(self, sizes=(1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64), steps=2000):
        """Issue 10's "graphs that pay": break_even's steps of N launches and a sync, without
        the shim and in graph mode with the step in one graph (PYGRAPH_FIRST_CHUNK=N), two
        rounds taking turns; the smallest N from which the graph wins in both rounds."""
        program = os.path.join(self.build, "break_even")

        def turns(n, arms):
            """Two rounds of break_even's N-launch step taking turns between `arms` (name ->
            (extra argv, shim mode)): per arm, each round's output fields as integers."""
            fields = {arm: [] for arm in arms}
            for _ in range(2):
                for arm, (extra, mode) in arms.items():
                    out = self.run([program, str(n), str(steps)] + extra, mode=mode,
                                   name="break-even", env_extra={"PYGRAPH_FIRST_CHUNK": str(n)})
                    fields[arm].append([int(v) for v in out.split()])
            return fields

        won = []
        for n in sizes:
            runs = turns(n, {"none": ([], None), "graph": ([], "graph")})
            med = {arm: [f[1] for f in rounds] for arm, rounds in runs.items()}
            none_us = statistics.mean(med["none"]) / 1e3
            graph_us = statistics.mean(med["graph"]) / 1e3
            if all(g < e for g, e in zip(med["graph"], med["none"])):
                won.append(n)
            # Graph mode follows no segment of one launch: its N = 1 step is passed through.
            what = "launch + sync (passed through)" if n == 1 else "launches + sync"
            self.add((f"break-even: step of {n} {what}, none / graph (us)",
                      f"{none_us:.1f} / {graph_us:.1f}", f"{100 * (graph_us / none_us - 1):+.1f} %",
                      "info"))
        first = next((n for n in sizes if all(m in won for m in sizes if m >= n)), None)
        self.add(("break-even: graphs win from N launches on (both rounds)", first, "-", "info"))
        # The graph itself, without the shim: what a chunk of N launches costs as one graph whose
        # every node is patched, on the host and to the sync, against the launches (a chunk of
        # one launch goes out eagerly unless one_launch_graphs: this row says what a graph of one
        # costs, chunk_policy.h).
        for n in (1, 2, 4):
            runs = turns(n, {"none": ([], None), "raw": (["raw"], None)})
            step = {arm: [f[1] for f in rounds] for arm, rounds in runs.items()}
            host = {arm: [f[4] for f in rounds] for arm, rounds in runs.items()}
            s_none, s_raw = (statistics.mean(step[c]) / 1e3 for c in ("none", "raw"))
            h_none, h_raw = (statistics.mean(host[c]) / 1e3 for c in ("none", "raw"))
            self.add((f"no shim, {n} launch(es) / one graph patched: step + sync; host (us)",
                      f"{s_none:.1f} / {s_raw:.1f}; {h_none:.1f} / {h_raw:.1f}",
                      f"{100 * (s_raw / s_none - 1):+.1f} %; {100 * (h_raw / h_none - 1):+.1f} %",
                      "info"))

    def hot_path(self):
        """A launch call on the real driver, timed call by call: without the shim (the driver's
        launch) and in graph mode (a deferred launch, at the median)."""
        program = os.path.join(self.build, "launch_cost")
        res = {}
        for api in ("driver", "runtime"):
            for cfg in ("none", "graph"):
                out = self.run([program, api], mode=None if cfg == "none" else "graph",
                               name="launch_cost")
                r = {k: float(v) for k, v in (l.split() for l in out.strip().splitlines())}
                res[api, cfg] = r
                self.add((f"real {api} launch call, {cfg}: median/p90/mean (ns)",
                                  f"{r['median_call_ns']:.0f}/{r['p90_call_ns']:.0f}/"
                                  f"{r['mean_call_ns']:.0f}",
                                  f"phase {r['launch_phase_us']:.1f} us", "info"))
        deferred = res["driver", "graph"]["median_call_ns"] - res["driver", "graph"]["clock_ns"]
        self.row("real driver: deferred cuLaunchKernel, median call - clock (ns)", f"{deferred:.0f}",
                 "<= 150", deferred <= 150)

    def op_cost(self):
        """The calls around a small copy from pageable memory (tests/gpu/op_cost.cu): what the
        driver takes to say what memory an address is, and what graph mode adds to a copy."""
        program = os.path.join(self.build, "op_cost")
        for cfg in ("none", "graph"):
            out = self.run([program], mode=None if cfg == "none" else "graph", name="op_cost")
            r = {k: float(v) for k, v in (l.split() for l in out.strip().splitlines())}
            self.add((f"memory-type query device/pinned/pageable, {cfg} (ns)",
                      f"{r['attr_device_ns']:.0f}/{r['attr_pinned_ns']:.0f}/"
                      f"{r['attr_pageable_ns']:.0f}", "-", "info"))
            self.add((f"pageable 32-byte copy / sync / two of each, {cfg} (ns)",
                      f"{r['copy_pageable_ns']:.0f}/{r['sync_ns']:.0f}/{r['step_ns']:.0f}", "-",
                      "info"))

    def child_graph_cost(self):
        """No shim: a step of an input copy and the program's graph (300 nodes), launched as the
        program does, against one graph of ours holding both, patched or not, and against the
        copy alone as a graph beside the program's launch (tests/gpu/child_graph_cost.cu;
        chunk_policy.h, worth_a_graph)."""
        out = self.run([os.path.join(self.build, "child_graph_cost")], mode=None,
                       name="child_graph_cost")
        r = {f[0]: [float(v) for v in f[1:]] for f in (l.split() for l in out.strip().splitlines())}
        eager = r["eager"][0]
        for way in ("eager", "patched", "fixed", "twice"):
            med, p25, p75, host = r[way]
            self.add((f"no shim, copy + program's graph, {way}: GPU (p25/p75); host (us/step)",
                      f"{med:.1f} ({p25:.1f}/{p75:.1f}); {host:.2f}",
                      f"{100 * (med / eager - 1):+.2f} %", "info"))

    def child_graph_real(self):
        """No shim: ResNet-50 b64's compiled graph (programmatic edges included) launched as the
        program does, as the child of a graph, after its input copy, with that copy in one
        graph, and with its programmatic edges made plain (as graph mode records its kernels);
        ResNet-18 b1's launched two and three times against a graph of two and three children
        of it (tests/gpu/child_graph_real.py; GPU time a step)."""
        for model, pairs in (("resnet50-b64", (("own", "own"), ("child", "own"),
                                                ("copy+own", "copy+own"), ("graph", "copy+own"),
                                                ("plain", "own"))),
                             ("resnet18-b1", (("own", "own"), ("child", "own"),
                                               ("own2", "own2"), ("two", "own2"),
                                               ("own3", "own3"), ("three", "own3")))):
            out = self.run([sys.executable, os.path.join(HERE, "child_graph_real.py"),
                            "--model", model], mode=None, name=f"child_graph_real-{model}")
            r = {f[0]: f[1:] for f in (l.split() for l in out.strip().splitlines())}
            what = f"no shim, {model} compiled graph"
            for way, base in pairs:
                if way not in r:  # plain: the clone failed, plain_edges below says why
                    continue
                med, p25, p75 = (float(v) for v in r[way])
                self.add((f"{what}, {way}: GPU (p25/p75) (us a step)",
                          f"{med:.1f} ({p25:.1f}/{p75:.1f})",
                          f"{100 * (med / float(r[base][0]) - 1):+.2f} %", "info"))
            self.add((f"{what}: node types; edges; edges in a child; edges made plain",
                      f"{' '.join(r['node_types'])}; {' '.join(r['edge_types'])}; "
                      f"{' '.join(r['child_edge_types'])}; {' '.join(r.get('plain_edges', ['-']))}",
                      "1: programmatic", "info"))
            self.row(f"{what}: every way's output equal",
                     "equal" if r["outputs_equal"] == ["1"] else "DIFFERS", "equal",
                     r["outputs_equal"] == ["1"])

    def idle(self, model, steps=40):
        """GPU idle time at the start of a step: without the shim, in graph mode (first chunk of
        2 launches, the default) and with a first chunk of 8."""
        res = {}
        for cfg, env in (("none", {}), ("graph", {}), ("chunk8", {"PYGRAPH_FIRST_CHUNK": "8"})):
            out = self.workload(model, steps, mode=None if cfg == "none" else "graph",
                                extra=["--idle"], name=f"{model}-idle", env_extra=env)
            res[cfg] = float(out.split("gpu_idle_at_step_start_us")[1].split()[0])
        self.add((f"{model}: GPU idle at step start, none/graph/chunk8 (us)",
                          f"{res['none']:.1f}/{res['graph']:.1f}/{res['chunk8']:.1f}",
                          "median of steps", "info"))

    def gpu_idle(self):
        """gpu_idle: GPU idle at the start of a step and within it, stamped by the kernels
        themselves (no profiler): without the shim, graph mode, and a first chunk of 8."""
        program = os.path.join(self.build, "gpu_idle")
        res = {}
        for cfg, env in (("none", {}), ("graph", {}), ("chunk8", {"PYGRAPH_FIRST_CHUNK": "8"})):
            out = self.run([program], mode=None if cfg == "none" else "graph", name="gpu_idle",
                           env_extra=env)
            res[cfg] = {k: float(v) for k, v in (l.split() for l in out.strip().splitlines())}
        for key, what in (("idle_start_us", "idle at step start (100 us host work incl.)"),
                          ("idle_within_us", "idle within a step of 64 x 2 us kernels"),
                          ("step_us", "host time of a step")):
            self.add((f"gpu_idle: {what}, none/graph/chunk8 (us)",
                      "/".join(f"{res[c][key]:.1f}" for c in ("none", "graph", "chunk8")),
                      "median of 270 steps", "info"))

    def grid(self, model="gpt2", steps=60):
        cov = {}
        for cfg, env in (("patched", {}), ("in-token", {"PYGRAPH_PATCH_GRID": "0"})):
            spath = os.path.join(self.out, f"{model}-grid-{cfg}-stats.json")
            env = dict(env, PYGRAPH_STATS=spath)
            self.workload(model, steps, mode="graph", name=f"{model}-grid",
                          extra=["--losses", os.path.join(self.out, "scratch.txt")],
                          env_extra=env)
            st = json.load(open(spath))
            g = st["graphs"]
            cov[cfg] = st["coverage_percent"]
            self.add((f"{model} grid {cfg}: coverage % / graphs / patched per replay",
                              f"{cov[cfg]:.1f}/{g['instantiated']}/"
                              f"{g['patched_nodes_per_replay']:.1f}", "", "info"))
        self.benchmark(400, model, ("none", "graph", "graph-gridtoken"))

    def workload(self, model, steps, mode=None, trace=None, extra=(), name=None, env_extra=None):
        argv = [sys.executable, WORKLOAD, model, "--steps", str(steps)] + list(extra)
        return self.run(argv, mode=mode, trace=trace, name=name or model, env_extra=env_extra)

    def graph_mode(self, model, steps=60):
        """Graph mode against no shim: every step's result bitwise equal, coverage of the steady
        state (a long run minus a short one, from PYGRAPH_STATS), GPU memory in use."""
        digests, mem, reserved, stats = {}, {}, {}, {}
        if "compile" in model:
            # torch.compile's first run in a fresh cache compiles (and keeps what it allocated
            # for that in PyTorch's pool); a short run first warms the on-disk cache so that
            # both measured runs start alike.
            self.workload(model, 2, extra=["--losses", os.path.join(self.out, "scratch.txt")],
                          name=f"{model}-graph")
        for cfg, n in (("none", steps), ("graph", steps), ("graph-short", 10)):
            path = os.path.join(self.out, f"{model}-{cfg}-digests.txt")
            spath = os.path.join(self.out, f"{model}-{cfg}-stats.json")
            out = self.workload(model, n, mode=None if cfg == "none" else "graph",
                                extra=["--losses", path], name=f"{model}-graph",
                                env_extra={"PYGRAPH_STATS": spath})
            digests[cfg] = open(path).read()
            mem[cfg] = float(out.split("gpu_mem_used_mb")[1].split()[0])
            reserved[cfg] = float(out.split("torch_reserved_mb")[1].split()[0])
            if cfg != "none":
                stats[cfg] = json.load(open(spath))
        same = digests["graph"] == digests["none"] and digests["none"].count("\n") == steps
        self.row(f"{model}: {steps} steps bitwise, graph vs no shim", "equal" if same else "DIFFER",
                 "equal", same)
        long, short = stats["graph"]["launches"], stats["graph-short"]["launches"]
        seen = long["seen_by_engine"] - short["seen_by_engine"]
        replayed = long["replayed_in_graphs"] - short["replayed_in_graphs"]
        cov = 100.0 * replayed / seen if seen else 0.0
        self.add((f"{model}: coverage, steady state (%)", f"{cov:.1f}",
                          f"{seen / (steps - 10):.0f} launches/step", "info"))
        g = stats["graph"]["graphs"]
        self.add((f"{model}: graphs built / replays / patched per replay",
                          f"{g['instantiated']}/{g['replays']}/{g['patched_nodes_per_replay']:.1f}",
                          "", "info"))
        top = sorted(stats["graph"]["flushes"]["by_reason"].items(), key=lambda kv: -kv[1])[:3]
        eager = stats["graph"]["eager_launches_by_reason"]
        mo = stats["graph"]["memops"]
        self.add((f"{model}: memops in graphs / seen; stall flushes",
                          f"{mo['replayed_in_graphs']}/{mo['seen_by_engine']}; "
                          f"{stats['graph']['flushes']['by_reason'].get('stall', 0)}", "",
                          "info"))
        self.add((f"{model}: top flushes; eager reasons",
                          " ".join(f"{k}={v}" for k, v in top) + "; " +
                          " ".join(f"{k}={v}" for k, v in eager.items()), "", "info"))
        # Whether the GPU waited for the host between a step's chunks while it was weighed.
        r = harness.weighed_round(stats["graph"])
        if r:
            self.add((f"{model}: GPU idle / busy in a weighed round (us)",
                      f"{r['idle_us']:.0f} / {r['gpu_us']:.0f}", f"{r['whole']} rounds", "info"))
        extra_mb = mem["graph"] - mem["none"]
        self.add((f"{model}: GPU memory in use, graph - none (MB)", f"{extra_mb:+.1f}",
                          f"of {mem['none']:.0f}", "info"))
        self.add((f"{model}: PyTorch reserved, graph - none (MB)",
                          f"{reserved['graph'] - reserved['none']:+.1f}",
                          f"of {reserved['none']:.0f}", "info"))
        self.coverage[model] = cov

    def counts(self, model, long_steps):
        """Launches per step: the trace of the long bitwise run minus a 10-step run."""
        prof = self.workload(model, 10, extra=["--profile"], name=model + "-profile")
        kernels = float(prof.split("profiler_kernels_per_step")[1].split()[0])
        trace = os.path.join(self.out, f"{model}-10.trace")
        self.workload(model, 10, mode="trace", trace=trace,
                      extra=["--losses", os.path.join(self.out, "scratch.txt")])
        short = self.summary(trace)
        s = self.summary(os.path.join(self.out, f"{model}-bitwise.trace"))
        if not (short["complete"] and s["complete"]):
            raise RuntimeError(f"{model}: incomplete trace")
        per_step = (s["launches"]["total"] - short["launches"]["total"]) / (long_steps - 10)
        self.row(f"{model}: launches/step shim vs profiler", f"{per_step:g}", f"{kernels:g}",
                 per_step == kernels)
        total = lambda x: x["launches"]["total"] + sum(o["count"] for o in x["ops"])
        self.calls_per_step[model] = (total(s) - total(short)) / (long_steps - 10)
        with open(os.path.join(self.out, f"{model}-summary.json"), "w") as f:
            json.dump(s, f, indent=1)

    def bitwise(self, model, steps=50):
        files = {}
        for mode in (None, "off", "trace"):
            path = os.path.join(self.out, f"{model}-losses-{mode}.txt")
            trace = os.path.join(self.out, f"{model}-bitwise.trace") if mode == "trace" else None
            self.workload(model, steps, mode=mode, trace=trace, extra=["--losses", path])
            files[mode] = open(path).read()
        for mode in ("off", "trace"):
            same = files[mode] == files[None] and files[None].count("\n") == steps
            self.row(f"{model}: {steps} losses bitwise, {mode} vs no shim",
                     "equal" if same else "DIFFER", "equal", same)
        # The per-step host read (GIL released by PyTorch) must be traced to its Python line.
        s = self.summary(os.path.join(self.out, f"{model}-bitwise.trace"))
        item_line = next(i for i, l in enumerate(open(WORKLOAD), 1) if l.endswith("# read\n"))
        site = f"py:{WORKLOAD}:{item_line}"
        found = any(b["op"] == "cuStreamSynchronize" and any(f.startswith(site) for f in b["frames"])
                    for b in s["boundaries"])
        self.row(f"{model}: host-read sync traced to its Python line", "yes" if found else "no",
                 f"line {item_line}", found)

    def launch_cost(self, rounds=5):
        """The shim's CPU cost per launch on this machine's CPU, measured in one process (the
        stand-in driver's own cuLaunchKernel against the pointer the shim hands out, alternating
        rounds), so that the machine's noise between processes does not enter. The processes
        run `rounds` times, the modes in turns, and the row takes their median: one process
        read 87 ns in session 51 and 149 ns in session 52 (its driver's own launch doubled in
        that process), where the stand-in on one machine moves by about 11 ns between
        processes."""
        program = os.path.join(self.build, "tests", "standin_launch_bench")
        env_extra = {"LD_LIBRARY_PATH": os.path.join(self.build, "standin")}
        cfgs = ("none", "off", "trace", "graph")
        added = {cfg: [] for cfg in cfgs}
        driver = {cfg: [] for cfg in cfgs}
        for _ in range(rounds):
            for cfg in cfgs:
                mode = None if cfg == "none" else cfg
                trace = os.path.join(self.out, "launch.trace") if cfg == "trace" else None
                out = self.run([program], mode=mode, trace=trace, name="launch",
                               env_extra=env_extra)
                v = dict(line.split() for line in out.strip().splitlines())
                added[cfg].append(float(v["added_ns"]))
                driver[cfg].append(float(v["driver_ns"]))
        self.cost = {}
        for cfg in cfgs:
            self.cost[cfg] = statistics.median(added[cfg])
            self.add((f"shim cost per launch, {cfg} (ns, in-process, median of {rounds})",
                      f"{self.cost[cfg]:+.1f}",
                      f"{min(added[cfg]):+.0f}..{max(added[cfg]):+.0f}; driver "
                      f"{statistics.median(driver[cfg]):.0f}", "info"))

    def benchmark(self, steps, model="mlp", cfgs=("none", "off", "trace")):
        """A workload without the shim and in the given modes, side by side: processes pinned to
        one core take turns chunk by chunk (a token passed round a ring of FIFOs), so that each
        chunk of one configuration is compared with the neighbouring chunk of the others, under
        the same machine conditions."""
        cfgs = list(cfgs)
        groups = {}
        for cfg in cfgs:
            env = dict(os.environ)
            env.pop("LD_PRELOAD", None)
            if cfg != "none":
                env.update(LD_PRELOAD=self.shim, PYGRAPH_MODE=cfg.split("-")[0])
            if cfg == "graph-gridtoken":
                env["PYGRAPH_PATCH_GRID"] = "0"
            if cfg == "trace":
                env["PYGRAPH_TRACE"] = os.path.join(self.out, "bench.trace")
            w = harness.Worker(f"bench-{model}-{cfg}", self.out, label=f"{model} {cfg}")
            core = str(min(3, os.cpu_count() - 1))
            # Two warm-up steps (the compiles) beside the other configurations; the rest of the
            # warm-up in turns, as the suite does (tests/bench/suite/workloads.py, warm_split):
            # a sequence weighed beside another process's warm-up misjudges its GPU time.
            w.start(["taskset", "-c", core, sys.executable, WORKLOAD, model, "--steps", str(steps),
                     "--warmup", "2", "--warm-chunks", str(BENCH_WARM_CHUNKS), "--time",
                     "--lockstep", w.go, w.done], env)
            groups[cfg] = [w]
        ls = harness.Lockstep(groups)
        ls.run(max(1, steps // 25), warm=BENCH_WARM_CHUNKS)
        times = {}
        for cfg, (w,) in groups.items():
            w.close()
            if cfg in ls.failed:
                raise RuntimeError(f"benchmark {cfg} failed: {ls.failed[cfg]}")
            with open(w.log) as f:
                times[cfg] = [float(v) for v in f.read().split("chunk_ms")[1].split()]
        base = statistics.median(times["none"])
        self.add((f"{model} step time, no shim (ms, median chunk)", f"{base:.4f}",
                          f"{len(times['none'])} chunks", "info"))
        for cfg in cfgs[1:]:
            limit = {"off": 1.0, "trace": 5.0}.get(cfg, 2.0)
            change = harness.pair_change(times[cfg], times["none"])
            over = change["median"]
            self.add((f"{model} step time, {cfg} mode (ms, median chunk)",
                              f"{statistics.median(times[cfg]):.4f}", "", "info"))
            self.row(f"{model} time change, {cfg} (%, median of chunk pairs)", f"{over:+.2f}",
                     f"<= {limit}", over <= limit)
            self.add((f"{model} time change, {cfg}: chunk-pair quartiles (%)",
                      f"{change['q1']:+.1f}/{change['q3']:+.1f}", "spread", "info"))
            if cfg.startswith("graph"):
                continue
            # Cross-check: driver calls per step times the shim's cost per call.
            per_step = self.calls_per_step.get("mlp", 60)
            bound = per_step * max(self.cost.get(cfg, 0.0), 0.0) / (base * 1e6) * 100
            self.add((f"mlp overhead, {cfg} (%, calls/step x cost per call)",
                              f"{bound:.2f}", "", "info"))
        with open(os.path.join(self.out, f"bench-{model}.json"), "w") as f:
            json.dump(times, f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--ctest-status", type=int, default=0)
    p.add_argument("--sections", default=SECTIONS, help="comma-separated: " +
                   SECTIONS.replace(",", ", "))
    p.add_argument("--models", default="mlp,mlp-compile,mlp-dropout,resnet18,bert,gpt2",
                   help="workloads for the graph section and its benchmark")
    p.add_argument("--deadline", type=float,
                   help="seconds the checks may take (the device's per-call limit less the "
                        "build): a step that would start with less than 40 s left is skipped, "
                        "with a SKIP row, so that the table still comes back")
    a = p.parse_args()
    c = Check(a.build, a.out)
    c.machine()
    c.row("ctest on the GPU machine", a.ctest_status, 0, a.ctest_status == 0)
    sections = a.sections.split(",")
    models = a.models.split(",")
    steps = []  # (name, step)
    if "doors" in sections:
        steps += [("doors", c.doors), ("packed", c.packed), ("memops", c.memops)]
    if "streams" in sections:
        steps.append(("streams", c.streams))
    if "trace" in sections:
        for m in ("mlp", "mlp-compile"):
            steps += [(f"trace {m}", lambda m=m: c.bitwise(m, 50)),
                      (f"counts {m}", lambda m=m: c.counts(m, 50))]
    if "graph" in sections:
        steps += [(f"graph mode {m}", lambda m=m: c.graph_mode(m, 60)) for m in models]
    if "cost" in sections:
        steps += [(f.__name__, f) for f in (c.launch_cost, c.hot_path, c.break_even, c.op_cost,
                                            c.child_graph_cost, c.child_graph_real)]
    if "bench" in sections:
        steps.append(("benchmark", lambda: c.benchmark(steps=1000)))
        steps += [(f"benchmark {m}", lambda m=m: c.benchmark(400, m, ("none", "graph")))
                  for m in models]
    if "idle" in sections:
        steps.append(("gpu_idle", c.gpu_idle))
        steps += [(f"idle {m}", lambda m=m: c.idle(m)) for m in models]
    if "grid" in sections:
        steps.append(("grid", c.grid))
    if "decide" in sections:
        steps += [(getattr(f, "__name__", "decide"), f) for f in decide.Decide(c).parts()]
    t0 = time.monotonic()
    for name, s in steps:
        if a.deadline is not None and time.monotonic() - t0 > a.deadline - 40:
            c.add((f"skipped, past the deadline: {name}", "-", "-", "SKIP"))
            continue
        try:
            s()
        except Exception as e:  # one failed check must not hide the others
            c.row(f"error in {name}", str(e)[:200], "-", False)
    width = max(len(r[0]) for r in c.rows)
    lines = [f"{'check'.ljust(width)}  {'value':>12}  {'expected':>12}  result"]
    lines += [f"{r[0].ljust(width)}  {str(r[1]):>12}  {str(r[2])[:40]:>12}  {r[3]}" for r in c.rows]
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print()
    print("\n".join(lines))
    return 0 if all(r[3] != "FAIL" for r in c.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
