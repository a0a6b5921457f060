"""Where does a run with the shim first part from one without it? For a result that differs
once in many runs (session 20: mlp-dropout-item under reduce-overhead, watchdog off, one cell
in about seventy), the suite's digest says only that it differs.

    python diverge.py run WORKLOAD VARIANT --chunks N --out F [--core K] [--pause S]
    python diverge.py compare BASE.json OTHER.json [...]
    python diverge.py hunt WORKLOAD VARIANT --dir D [--arm NAME:VAR=VALUE[,...] ...]
                      [--procs 14] [--rounds 3] [--budget S] [--timeout S] [--chunks 24]
                      [--lib build-gpu/libpygraph.so] [--json F]

`run` runs a suite workload's task as worker.py does (warm-up, then chunks of the workload's
steps with a sync after each, a pause between chunks, the threads pinned to CPU K during a
chunk as the lockstep pins them) and writes, as JSON, a digest of the task's result after
every chunk and, for a training task, the loss it read at every step. Start it with
LD_PRELOAD and PYGRAPH_* settings for the shim's side; start many at once to hunt.
`compare` names, for each other run, the first chunk and the first step where it differs.
`hunt` does the hunting: two runs without the shim at once (the base, and whether the program
itself computes the same twice), then rounds of --procs runs at once, each pinned during its
chunks to a CPU of its own (CPU 0 left out, while there are CPUs enough), the arms (the suite's
syntax: tests/bench/suite/run.py; default one arm "graph", the shim's defaults) taking the
processes in turn, each run compared with the base and its
coverage read from its stats. It starts no round that the last one's length would carry past
--budget seconds, stops a run still going after --timeout seconds or at the budget's end (a
hang is a finding too: its log gets its threads' stacks), keeps every record and log in D,
writes --json after every round and prints a table last: exit 1 when a run differed (whatever
else happened), else 2 when the base could not be had or a run failed, else 0.
"""
import argparse
import glob
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu"))
sys.path.insert(0, HERE)
# Before torch loads cuBLAS, as worker.py does.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def _digest(parts):
    return hashlib.sha1(b"".join(parts)).hexdigest()[:16]


def workload_of(name, variant):
    """The suite's workload `name` when `variant` of it is a Python task this script can run,
    else ValueError saying why not."""
    import workloads

    w = workloads.WORKLOADS.get(name)
    if w is None:
        raise ValueError(f"no workload {name!r} (tests/bench/suite/workloads.py)")
    if w.program:
        raise ValueError(f"{name} is a native program ({w.program}), not a Python task")
    if variant not in w.variants or variant in w.na:
        why = w.na.get(variant, "one of " + ", ".join(v for v in w.variants if v not in w.na))
        raise ValueError(f"{name} has no variant {variant!r}: {why}")
    return w


def run(a):
    import harness

    try:
        w = workload_of(a.workload, a.variant)
    except ValueError as e:
        print(f"diverge.py: {e}", file=sys.stderr)
        return 2
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


def where_it_parts(base, other):
    """None where run `other` computed what `base` did, else where it first parts from it:
    "from chunk C[, first read differing at step S]" (first_difference)."""
    chunk, read = first_difference(base, other)
    if chunk is None and read is None:
        return None
    return f"from chunk {chunk}" + (
        f", first read differing at step {read}" if read is not None else "")


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
        parts = where_it_parts(base, other)
        differ += parts is not None
        print(f"{path}: " + ("equal" if parts is None else f"DIFFERS {parts}"))
    print(f"{len(a.others) - differ - unread} of {len(a.others)} equal to {a.base}"
          + (f"; {unread} not read" if unread else ""))
    return 1 if differ else 2 if unread else 0


def plan_round(arms, procs, cores):
    """One round's runs: [(arm, core)], the arms taking the processes in turn, each process on a
    CPU of its own while there are CPUs (then the CPUs again, from the first)."""
    names = list(arms)
    return [(names[i % len(names)], cores[i % len(cores)]) for i in range(procs)]


def hunt_cores():
    """The CPUs a hunt pins its runs' chunks to: every CPU of this process but the lowest (their
    warm-ups and compiles run anywhere), or the one there is."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[1:] or cpus


def start_run(a, settings, stem, core, popen=subprocess.Popen):
    """Starts one `run` of the hunt's workload as a process in a session of its own (so that
    its children, compile workers, can be stopped with it): without the shim for settings
    None, else preloading --lib with the arm's settings, its stats and a decision cache of its
    own next to its record (STEM.json, its log STEM.log). Whatever an earlier hunt left under
    STEM is removed first: a record, stats or verdicts of another run must not pass for this
    one's. faulthandler is on, so that a run stopped as hung writes its threads' stacks to its
    log (wait_all)."""
    from run import arm_env

    for f in glob.glob(glob.escape(stem) + ".*"):
        os.remove(f)
    env = arm_env(dict(os.environ), settings, a.lib)
    env.update(PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1")
    if settings is not None:
        env.update(PYGRAPH_STATS=stem + ".stats.%p.json", PYGRAPH_CACHE=stem + ".decisions.json")
    cmd = [sys.executable, os.path.abspath(__file__), "run", a.workload, a.variant, "--chunks",
           str(a.chunks), "--out", stem + ".json", "--core", str(core)]
    with open(stem + ".log", "w") as log:
        return popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def signal_group(p, sig):
    """`sig` to a run's whole session (start_run), its children with it; one already gone is
    no error."""
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# Seconds a run stopped as hung has to write its stacks (SIGABRT) before it is killed, and then
# to be gone: a process stuck in the driver may not die at all, and the hunt must go on.
STACKS_S, REAP_S = 10.0, 30.0


def wait_all(procs, timeout, now=time.monotonic, sleep=time.sleep, stop=signal_group):
    """Waits for every process; those still running `timeout` seconds on are stopped: SIGABRT
    first (faulthandler writes where each thread is to the run's log), SIGKILL STACKS_S later.
    Returns each one's exit status, "hung" for those stopped, "hung (unkillable)" for one
    still there REAP_S after its SIGKILL."""
    status = [None] * len(procs)

    def poll_until(end):
        while True:
            for i, p in enumerate(procs):
                if status[i] is None and p.poll() is not None:
                    status[i] = p.returncode
            if all(s is not None for s in status) or now() >= end:
                return
            sleep(0.5)

    poll_until(now() + timeout)
    hung = [i for i, st in enumerate(status) if st is None]
    for i in hung:
        stop(procs[i], signal.SIGABRT)
    if hung:
        poll_until(now() + STACKS_S)
    for i in hung:
        stop(procs[i], signal.SIGKILL)
        try:
            procs[i].wait(timeout=REAP_S)
            status[i] = "hung"
        except subprocess.TimeoutExpired:
            status[i] = "hung (unkillable)"
    return status


def run_figures(stem, pid):
    """Coverage and launches a replay of a shim run's whole run, from the stats it wrote at exit
    (None where it wrote none: no shim, or it died)."""
    import harness

    stats = harness.read_json(f"{stem}.stats.{pid}.json")
    if not stats:
        return None
    d = harness.stats_delta(stats, None)
    return {"coverage_percent": round(d["coverage_percent"], 1),
            "launches_per_replay": round(d["launches_per_replay"], 1)}


def hunt_table(runs):
    """One row an arm (report.text): runs, equal, differing, failed, mean coverage; then each
    run that differed or failed."""
    import report

    rows = []
    for arm in dict.fromkeys(r["arm"] for r in runs):
        rs = [r for r in runs if r["arm"] == arm]
        covs = [r["figures"]["coverage_percent"] for r in rs if r.get("figures")]
        rows.append([arm, len(rs)] + [sum(r["verdict"] == v for r in rs)
                                      for v in ("equal", "differs", "failed")] +
                    [f"{sum(covs) / len(covs):.1f} %" if covs else "-"])
    lines = [report.text(["arm", "runs", "equal", "differ", "failed", "coverage"], rows)]
    lines += [f"  {r['stem']}: {r['verdict']} ({r['why']})" for r in runs
              if r["verdict"] != "equal"]
    return "\n".join(lines)


def judge(base, stem, status, limit="the timeout"):
    """A run's verdict against the base: (equal | differs | failed, why). `limit` names what
    stopped a run still going (wait_all's "hung")."""
    if status != 0:
        if isinstance(status, str):
            return "failed", f"still running at {limit}: {status}"
        return "failed", f"exit status {status}"
    rec = _load(stem + ".json")
    if rec is None:
        return "failed", "no record"
    parts = where_it_parts(base, rec)
    return ("equal", "") if parts is None else ("differs", parts)


def hunt_args_error(a):
    """Why the hunt's arguments cannot be run (None when they can), and its arms."""
    from run import parse_arm  # the suite's --arm syntax

    if a.procs < 1 or a.rounds < 1:
        return "--procs and --rounds must be at least 1 (no run with the shim is no hunt)", None
    try:
        parsed = [parse_arm(t) for t in a.arm] or [("graph", {})]
        workload_of(a.workload, a.variant)
    except ValueError as e:
        return str(e), None
    names = [name for name, _ in parsed]
    if "none" in names:
        return "\"none\" is the base's name, not an arm's", None
    if len(set(names)) < len(names):
        return f"an arm's name twice: {', '.join(names)}", None
    if not os.path.isfile(a.lib):
        return f"no library {a.lib!r} (--lib)", None
    return None, dict(parsed)


def write_hunt(a, arms, runs):
    """The hunt's JSON so far (after every round: a hunt cut short keeps what it found)."""
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"workload": a.workload, "variant": a.variant, "chunks": a.chunks,
                       "arms": arms, "runs": runs}, f, indent=1)


def hunt(a, start=start_run, wait=wait_all, cores=None, now=time.monotonic):
    error, arms = hunt_args_error(a)
    if error:
        print(f"diverge.py: {error}", file=sys.stderr)
        return 2
    os.makedirs(a.dir, exist_ok=True)
    cores = cores or hunt_cores()
    if a.procs > len(cores):
        print(f"diverge.py: {a.procs} runs at once on {len(cores)} CPUs: some share one",
              flush=True)
    t0 = now()
    stems = [os.path.join(a.dir, f"none-{i}") for i in (1, 2)]
    print(f"== the base: two runs of {a.workload} {a.variant} without the shim", flush=True)
    status = wait([start(a, None, s, c) for s, c in zip(stems, cores * 2)], a.timeout)
    base = _load(stems[0] + ".json") if status[0] == 0 else None
    if base is None:
        print(f"diverge.py: the base run failed ({status[0]}): {stems[0]}.log", file=sys.stderr)
        return 2
    twin = judge(base, stems[1], status[1])
    if twin[0] != "equal":
        print(f"diverge.py: the second run without the shim {twin[0]} ({twin[1]}): "
              "a difference with the shim would say nothing", file=sys.stderr)
        return 2
    runs, last = [], 0.0
    for r in range(1, a.rounds + 1):
        spent = now() - t0
        if a.budget and r > 1 and spent + last > a.budget:
            print(f"== round {r} not started: {spent:.0f} s spent, a round takes {last:.0f}, "
                  f"--budget {a.budget:.0f}", flush=True)
            break
        # A round started near the budget's end waits no longer than the budget lasts (a
        # minute at least): a device call's limit must not cut the hunt before its table.
        limit, what = a.timeout, "the timeout"
        if a.budget and a.budget - spent < limit:
            limit, what = max(60.0, a.budget - spent), "the budget's end"
        plan = plan_round(arms, a.procs, cores)
        print(f"== round {r} of {a.rounds}: {len(plan)} runs at once ({spent:.0f} s spent)",
              flush=True)
        began = now()
        stems = [os.path.join(a.dir, f"{arm}-r{r}-p{i + 1}") for i, (arm, _) in enumerate(plan)]
        procs = [start(a, arms[arm], stem, core) for (arm, core), stem in zip(plan, stems)]
        status = wait(procs, limit)
        last = now() - began
        for (arm, core), stem, p, st in zip(plan, stems, procs, status):
            verdict, why = judge(base, stem, st, what)
            runs.append({"arm": arm, "round": r, "core": core, "stem": os.path.basename(stem),
                         "verdict": verdict, "why": why,
                         "figures": run_figures(stem, p.pid) if st == 0 else None})
        write_hunt(a, arms, runs)
        done = [x for x in runs if x["round"] == r]
        print(f"   {sum(x['verdict'] == 'equal' for x in done)} of {len(done)} equal in "
              f"{last:.0f} s", flush=True)
    print(hunt_table(runs), flush=True)
    if any(x["verdict"] == "differs" for x in runs):
        return 1
    return 2 if any(x["verdict"] == "failed" for x in runs) else 0

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
    h = sub.add_parser("hunt")
    h.add_argument("workload")
    h.add_argument("variant")
    h.add_argument("--dir", required=True, help="where the runs' records, stats and logs go")
    h.add_argument("--arm", action="append", default=[], help="NAME:VAR=VALUE[,...] (run.py's)")
    h.add_argument("--procs", type=int, default=14, help="runs at once in a round")
    h.add_argument("--rounds", type=int, default=3)
    h.add_argument("--budget", type=float, default=0, help="seconds (0: no bound)")
    h.add_argument("--timeout", type=float, default=600, help="seconds a round may take")
    h.add_argument("--chunks", type=int, default=24)
    h.add_argument("--lib", default="build-gpu/libpygraph.so")
    h.add_argument("--json")
    a = p.parse_args()
    return {"run": run, "compare": compare, "hunt": hunt}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
