"""The side-by-side measurement shared by the GPU check (tests/gpu/check.py) and the benchmark
suite (tests/bench/suite/): processes that take turns chunk by chunk, and what they report.

Why lockstep: step times move by up to 10 % between runs and machines, so configurations are
compared chunk by chunk under the same conditions. A driver (this module's Lockstep) tells one
worker process at a time to run a chunk of iterations and waits until it is done; each worker
times its own chunks. A chunk of one configuration is compared with the neighbouring chunk of
another (the ratio of the pair), and the median of those ratios, with its quartiles, is the
change. The order of the turns rotates by one cell each round (Lockstep.run).

The worker protocol (Python workers use the functions below; tests/bench/suite/cuda_loop.cu
does the same in C++):
  1. build the workload, run the warm-up iterations, synchronize the device;
  2. move every thread off CPU K (the timing core; all configurations time on it, and only the
     one whose turn it is runs there);
  3. write one byte to the done FIFO (ready);
  4. before the first timed chunk (after the warm-up, or after the --warm-chunks N untimed
     chunks), write the shim's stats snapshot PREFIX + "warm.json" (pygraph_write_stats,
     present only when libpygraph.so is preloaded); with untimed chunks, also PREFIX +
     "ready.json" before the first of them (what the shim did during the warm-up);
  5. per chunk, the N untimed ones first: read one byte from the go FIFO, pin every thread to
     CPU K (with BENCH_PIN=main the calling thread alone, every other off it), synchronize, run S iterations, synchronize, move off CPU K, write one byte to the
     done FIFO; keep ms per iteration of the timed ones;
  6. write the snapshot PREFIX + "end.json"; 7. write the result JSON.
Steady-state figures are the end snapshot minus the warm one. With --stats-every-chunk a worker
also writes PREFIX + "chunkK.json" after chunk K (from 0; after its closing synchronize, outside
the timed part): when graphs start, chunk by chunk.
"""
import ctypes
import hashlib
import json
import math
import os
import select
import signal
import statistics
import subprocess
import time


# ---------------------------------------------------------------- worker side

def add_worker_args(parser, steps=None, warmup=10):
    parser.add_argument("--chunks", type=int, default=12)
    parser.add_argument("--steps", type=int, default=steps, required=steps is None,
                        help="iterations per chunk")
    parser.add_argument("--warmup", type=int, default=warmup)
    parser.add_argument("--warm-chunks", type=int, default=0,
                        help="untimed chunks of the timed shape before the timed ones, each on "
                             "the driver's go as a timed one is (one cell at a time)")
    parser.add_argument("--go", help="FIFO: one byte starts a chunk")
    parser.add_argument("--done", help="FIFO: one byte when ready, one after each chunk")
    parser.add_argument("--core", type=int, default=-1, help="CPU to time on (-1: no pinning)")
    parser.add_argument("--stats-prefix", default="", help="stats snapshots PREFIX{warm,end}.json")
    parser.add_argument("--stats-every-chunk", action="store_true",
                        help="also a snapshot PREFIX + chunkK.json after chunk K (from 0)")
    parser.add_argument("--result", help="result JSON")


def write_stats(path):
    """The shim's stats document, now (a snapshot: call it right after a synchronize). False when
    the shim is not preloaded."""
    try:
        fn = ctypes.CDLL(None).pygraph_write_stats
    except AttributeError:
        return False
    fn.argtypes = [ctypes.c_char_p]
    return fn(path.encode()) == 0


def chunk_stats_path(prefix, k):
    """The snapshot written after chunk k (from 0) with --stats-every-chunk."""
    return f"{prefix}chunk{k}.json"


def pin_all_threads(core, on_core=True):
    """sched_setaffinity on every thread of the process (Python's own call moves only the calling
    thread, and the driver's and the shim's threads must move too): onto CPU `core`, or with
    on_core False onto every CPU but it. A worker times its chunks on the timing core and leaves
    it between them, so that the threads of the cells waiting for their turn (compile workers,
    the driver's) never run there."""
    if core < 0:
        return
    cpus = {core} if on_core else set(range(os.cpu_count() or 1)) - {core}
    if not cpus:
        return  # one CPU: nowhere else to go
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass  # a thread that just ended


PIN_MODES = ("all", "main")


def pin_mode():
    """How a worker pins itself while it times (BENCH_PIN): "all" (the default), every thread of
    the process on the timing core, as every run before session 39; "main", only the thread
    that runs the steps, every other thread (the driver's, the shim's watchdog) off it, as a
    program that is not pinned would give them a CPU of their own. A thread the stepping thread
    starts during a chunk begins on the timing core too, until the chunk ends."""
    mode = os.environ.get("BENCH_PIN", "all") or "all"
    if mode not in PIN_MODES:
        raise ValueError(f"BENCH_PIN={mode}: one of {', '.join(PIN_MODES)}")
    return mode


def pin_for_chunk(core, mode="all"):
    """Onto the timing core for a chunk: every thread ("all"), or the calling thread alone with
    every other off it ("main")."""
    if mode == "main":
        pin_all_threads(core, on_core=False)
        if core >= 0:
            try:
                os.sched_setaffinity(0, {core})  # 0: the calling thread alone
            except OSError:
                pass  # a core outside this process's CPUs: as pin_all_threads, not pinned
    else:
        pin_all_threads(core)


def run_chunks(args, step, sync, host_ms=None, read_ms=None, read_s=None):
    """Steps 2-6 of the protocol around `step()` (one iteration) and `sync()` (a device
    synchronize). Returns ms per iteration of each timed chunk. A list `host_ms` gets, per timed
    chunk, the ms per iteration until the last step returned, before the closing synchronize:
    the host's share (where it is close to the chunk's, the GPU waited for the host). Without --go/--done the chunks
    run back to back (a plain run). With --warm-chunks N, N untimed chunks come first, each on a
    go as a timed one: the warm snapshot follows them."""
    warm = getattr(args, "warm_chunks", 0)
    pin = pin_mode()
    pin_all_threads(args.core, on_core=False)
    go = done = None
    if args.go:
        # O_RDWR: opening a FIFO this way never blocks, whoever opens first.
        go, done = os.open(args.go, os.O_RDWR), os.open(args.done, os.O_RDWR)
        os.write(done, b"r")
    every_chunk = args.stats_prefix and getattr(args, "stats_every_chunk", False)
    chunk_ms = []
    for k in range(-warm, args.chunks):
        if k == -warm and warm and args.stats_prefix:
            # After the warm-up beside the other cells: what the shim had learned and weighed
            # before the turns (a sequence weighed there met the other cells on the GPU).
            write_stats(args.stats_prefix + "ready.json")
        if k == 0 and args.stats_prefix:  # after the warm-up's or the last untimed chunk's sync
            write_stats(args.stats_prefix + "warm.json")
        if go is not None:
            os.read(go, 1)
        pin_for_chunk(args.core, pin)
        sync()
        r0 = read_s() if read_s else 0.0
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step()
        t_host = time.perf_counter()
        sync()
        if k >= 0:
            chunk_ms.append((time.perf_counter() - t0) * 1e3 / args.steps)
            if host_ms is not None:
                host_ms.append((t_host - t0) * 1e3 / args.steps)
            if read_s and read_ms is not None:
                read_ms.append((read_s() - r0) * 1e3 / args.steps)
            if every_chunk:
                write_stats(chunk_stats_path(args.stats_prefix, k))
        pin_all_threads(args.core, on_core=False)
        if done is not None:
            os.write(done, b"c")
    if args.stats_prefix:
        write_stats(args.stats_prefix + "end.json")
    return chunk_ms


def digest(chunks):
    """A short hex digest of byte strings (results compared bit for bit)."""
    h = hashlib.sha1()
    for c in chunks:
        h.update(c)
    return h.hexdigest()[:16]


def write_result(args, chunk_ms, result_digest, **extra):
    if args.result:
        with open(args.result, "w") as f:
            json.dump(dict(chunk_ms=chunk_ms, digest=result_digest,
                           iters=args.warmup + args.chunks * args.steps, **extra), f)


# ---------------------------------------------------------------- driver side

class Worker:
    """One process of a lockstep group (a cell may be several processes: torchrun ranks, which
    share the one torchrun process they were started by)."""

    def __init__(self, name, workdir, label=None):
        self.name, self.label = name, label or name
        base = os.path.join(workdir, name.replace("/", "_"))
        self.go, self.done = base + ".go", base + ".done"
        for f in (self.go, self.done):
            if os.path.exists(f):
                os.unlink(f)
            os.mkfifo(f)
        self.log = base + ".log"
        self.go_fd = os.open(self.go, os.O_RDWR)
        self.done_fd = os.open(self.done, os.O_RDWR)
        self.proc = self.logf = None

    def start(self, argv, env):
        self.logf = open(self.log, "w")
        # Its own process group: a hung worker is killed with everything it started.
        self.proc = subprocess.Popen(argv, env=env, stdout=self.logf, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        return self.proc

    def attach(self, other):
        """Share another worker's process and log (the ranks of one torchrun)."""
        self.proc, self.log, self.logf = other.proc, other.log, other.logf

    def tail(self, n=400):
        if self.logf and not self.logf.closed:
            self.logf.flush()
        try:
            with open(self.log, errors="replace") as f:
                text = f.read()
        except OSError:
            return ""
        lines = [l for l in text.strip().splitlines() if l.strip()]
        # The last line that says what went wrong, not a traceback's frame.
        for l in reversed(lines):
            if any(k in l for k in ("Error", "error", "failed", "FAIL", "what()")):
                return l.strip()[-n:]
        return (lines[-1].strip() if lines else "no output")[-n:]

    def wait_byte(self, deadline):
        """Until the worker writes to done, exits, or the deadline passes: True when it wrote."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            r, _, _ = select.select([self.done_fd], [], [], min(left, 0.5))
            if r:
                os.read(self.done_fd, 1)
                return True
            if self.proc.poll() is not None:
                return False

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def close(self):
        self.kill()
        for fd in (self.go_fd, self.done_fd):
            os.close(fd)
        if self.logf and not self.logf.closed:
            self.logf.close()
        for f in (self.go, self.done):
            os.unlink(f)


class Lockstep:
    """Drives groups of workers chunk by chunk: every worker of a group gets its go at once
    (torchrun ranks run a chunk together), then the next group. A group that fails (exits, or
    misses its deadline) is dropped with the reason; the others run on."""

    def __init__(self, groups, ready_timeout=300, chunk_timeout=120):
        self.groups = groups  # {cell name: [Worker, ...]}
        self.ready_timeout, self.chunk_timeout = ready_timeout, chunk_timeout
        self.failed = {}  # cell -> one-line reason

    def _fail(self, cell, why):
        self.failed[cell] = why
        for w in self.groups[cell]:
            w.kill()

    def _wait_group(self, cell, timeout, what, late=None):
        """`late`: why a worker still running at the deadline failed (default: it hung)."""
        deadline = time.monotonic() + timeout
        for w in self.groups[cell]:
            if not w.wait_byte(deadline):
                rc = w.proc.poll()
                if rc is None:
                    why = f"{w.label}: " + (late or f"no {what} within {timeout:.0f} s (hung)")
                else:
                    why = f"{w.label}: exited {rc} before {what}: {w.tail()}"
                self._fail(cell, why)
                return False
        return True

    def live(self):
        return [c for c in self.groups if c not in self.failed]

    def run(self, chunks, progress=None, warm=0):
        # Warm-ups run in parallel (compiles take most of a cell's time); timing is one at a
        # time, and so are the `warm` untimed chunks before it (the workers' --warm-chunks):
        # what the shim learns and weighs there (pauses, the GPU's idle time) it learns as the
        # timed chunks run, not with every other cell's warm-up on the GPU and the CPU.
        start = time.monotonic()
        for cell in list(self.groups):
            left = self.ready_timeout - (time.monotonic() - start)
            # One deadline for every warm-up (they run at once), which a run's budget may set
            # below what a compile takes: a cell past it is slow, or hung; which, is not known.
            self._wait_group(cell, max(left, 1), "ready after warm-up",
                             late=f"not ready {self.ready_timeout:.0f} s after the warm-ups "
                             "began (a hang, or a warm-up longer than the run's budget allows)")
        for k in range(-warm, chunks):
            # Each round starts one cell later than the one before, so that no cell always
            # follows the same one (in a fixed order the shim's cells always followed the cell
            # without it). Off mode, which changes nothing the GPU runs, reads up to +-0.5 %
            # with tight quartiles either way (session 19): that offset is not the order's.
            live = self.live()
            turn = k % max(len(live), 1)
            what = f"end of chunk {k + 1}" if k >= 0 else f"end of untimed chunk {k + warm + 1}"
            for cell in live[turn:] + live[:turn]:
                for w in self.groups[cell]:
                    os.write(w.go_fd, b"g")
                self._wait_group(cell, self.chunk_timeout, what)
            if progress and k >= 0:
                progress(k + 1, chunks)
        for cell in self.live():
            for w in self.groups[cell]:
                try:
                    rc = w.proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    rc = None
                if rc != 0:
                    self._fail(cell, f"{w.label}: exit {rc} after the chunks: {w.tail()}")
                    break


def median_interval(values, confidence=0.95):
    """A distribution-free confidence interval of the median (order statistics under the
    binomial law): (low, high), or None with too few values for it (fewer than 6 at 95 %).
    Quartiles say how far single chunks spread; this says how well the median is known, which
    more chunks narrow even where the host's noise is bimodal (the GPU machine's is, session
    18: chunk pairs of one run spread by +-20 % where the host switched pace between them)."""
    n = len(values)
    xs = sorted(values)
    # The largest k with P(B < k) <= (1 - confidence) / 2 for B ~ Binomial(n, 1/2): the interval
    # [x_k, x_(n-k+1)] (1-based) holds the median with at least `confidence`.
    tail, k, below = (1 - confidence) / 2, 0, 0.0
    while k < n:
        below_next = below + math.comb(n, k) / 2**n
        if below_next > tail:
            break
        below, k = below_next, k + 1
    if k == 0:
        return None
    return xs[k - 1], xs[n - k]


def pair_change(times, base):
    """The change of `times` against `base` chunk by chunk: median ratio - 1, its quartiles and
    the 95 % confidence interval of the median ("lo", "hi"; None with fewer than 6 pairs), in
    percent (negative: faster)."""
    ratios = [t / b for t, b in zip(times, base) if b > 0]
    if not ratios:
        return None
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    ci = median_interval(ratios)
    return {"median": (statistics.median(ratios) - 1) * 100, "q1": (q[0] - 1) * 100,
            "q3": (q[2] - 1) * 100, "pairs": len(ratios),
            "lo": (ci[0] - 1) * 100 if ci else None, "hi": (ci[1] - 1) * 100 if ci else None}


COUNTERS = (("launches", ("seen_by_engine", "recorded", "replayed_in_graphs", "eager")),
            ("graphs", ("instantiated", "replays", "replays_borrowed", "patched_nodes",
                        "mismatches", "variant_switches", "sequences_disabled",
                        "sequences_cut_short", "pause_cuts", "peer_cuts", "restarted_chunks",
                        "early_heads")),
            ("memops", ("seen_by_engine", "replayed_in_graphs", "eager", "staged_bytes",
                        "kind_queries")),
            ("program_graphs", ("replayed_in_graphs", "nodes_replayed")))
BY_REASON = (("flushes", "by_reason"), ("eager_launches_by_reason",), ("memops", "eager_by_reason"))


def _get(doc, path):
    for p in path:
        doc = doc.get(p, {}) if isinstance(doc, dict) else {}
    return doc


def stats_delta(end, warm):
    """Steady-state figures from two stats snapshots (end minus warm; warm may be None: the
    whole run). Coverage, launches and patched nodes per graph replay, reasons."""
    warm = warm or {}
    d = {}
    for section, keys in COUNTERS:
        d[section] = {k: _get(end, (section, k)) or 0 for k in keys}
        for k in keys:
            d[section][k] -= _get(warm, (section, k)) or 0
    for path in BY_REASON:
        e, w = _get(end, path), _get(warm, path)
        diff = {k: v - (w.get(k, 0) if isinstance(w, dict) else 0) for k, v in e.items()}
        d["/".join(path)] = {k: v for k, v in sorted(diff.items(), key=lambda kv: -kv[1]) if v}
    seen = d["launches"]["seen_by_engine"]
    replays = d["graphs"]["replays"]
    d["coverage_percent"] = 100.0 * d["launches"]["replayed_in_graphs"] / seen if seen else 0.0
    d["launches_per_replay"] = d["launches"]["replayed_in_graphs"] / replays if replays else 0.0
    d["patched_per_replay"] = d["graphs"]["patched_nodes"] / replays if replays else 0.0
    # What a replay runs, the program's graphs inside it counted by their nodes: launches a
    # replay counts each of them as nothing (stats-format.md, program_graphs.nodes_replayed).
    work = (d["launches"]["replayed_in_graphs"] + d["memops"]["replayed_in_graphs"] +
            d["program_graphs"]["nodes_replayed"])
    d["nodes_per_replay"] = work / replays if replays else 0.0
    d["flushes_total"] = sum(d["flushes/by_reason"].values())
    # What failed the last time a graph failed (the whole run's: a failure disables its sequence
    # for good, so one during warm-up matters as much).
    failure = _get(end, ("graphs", "last_failure"))
    if isinstance(failure, str) and failure:
        d["last_graph_failure"] = failure
    # Pause places are levels, not counts: the end's (pause_places.h; the stats of session 16 on).
    pauses = {k: _get(end, ("graphs", "pause_" + k))
              for k in ("places", "light", "weighing", "unweighed")}
    if all(isinstance(v, int) for v in pauses.values()):
        splits = _get(end, ("graphs", "tail_splits"))  # a level too (session 23 on)
        if isinstance(splits, int):
            pauses["tail_splits"] = splits
        q = weighed_pauses(end)
        if q:
            r = q["rounds"]
            pauses["round_gpu_us"], pauses["round_idle_us"] = r["gpu_us"], r["idle_us"]
            # Where its chunks are cut at pauses and splits, and its last whole round's chunks
            # (session 40 on) and the whole rounds' before it (session 45 on): why a split
            # sequence replays as many graphs an occurrence as it does.
            for k in ("split", "cuts", "restarts", "restart_sizes", "last_round", "earlier_rounds"):
                if k in q:
                    pauses[k] = q[k]
        d["pauses"] = pauses
    known = _get(end, ("graphs", "sequences_known"))  # a level, not a count: the end's
    if known is not None:
        d["sequences_known"] = known
    # Counted once per graph built, mostly while warming up: the whole run's, not the delta
    # (kernel nodes that dropped programmatic serialization, launch_attributes.h; session 39 on).
    allowed = _get(end, ("graphs", "programmatic_allowed"))
    if isinstance(allowed, int):
        d["programmatic"] = {"allowed": allowed}
    # The signatures of its three sequences with most launches (signature.h: kernel names and
    # block shapes in order, nothing of the process): whether two processes of one cell ran the
    # same kernels (session 41 on).
    seqs = _get(end, ("decisions", "sequences"))
    # A sequence not yet whole has none: null in its place, so that the first is always the
    # main sequence's (report.kernels_text compares that one).
    sigs = [q.get("signature") if isinstance(q, dict) and isinstance(q.get("signature"), str)
            else None for q in (seqs if isinstance(seqs, list) else [])[:3]]
    if any(sigs):
        d["signatures"] = sigs
    return d


def weighed_pauses(stats):
    """The pauses (decisions.sequences[].pauses) of the first sequence of a stats document that
    has a whole weighed round (the most launches first; session 35 on), or None."""
    seqs = _get(stats, ("decisions", "sequences"))
    for q in seqs if isinstance(seqs, list) else []:
        p = (q.get("pauses") or {}) if isinstance(q, dict) else {}
        r = p.get("rounds") or {} if isinstance(p, dict) else {}
        if isinstance(r, dict) and r.get("whole") and "idle_us" in r:
            return p
    return None


def weighed_round(stats):
    """The GPU's time and idle time in a whole weighed round (`whole`, `gpu_us`, `idle_us`) of
    the first sequence that has one (weighed_pauses), or None: whether its GPU waited for the
    host between the chunks of a step."""
    p = weighed_pauses(stats)
    return p["rounds"] if p else None


def gpus():
    """(name, driver version) of each GPU, from nvidia-smi: the machine a table's figures came
    from. Raises where nvidia-smi is missing or answers nothing."""
    q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                       capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
    if not q:
        raise RuntimeError("nvidia-smi named no GPU")
    return [tuple(s.strip() for s in line.split(",", 1)) for line in q]


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
