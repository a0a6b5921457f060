"""Why the suite's two-streams step gained nothing from the shim (session 37).

The suite's two-streams workload read about as fast with the shim as without (eager +0.3 %,
compiled -2 to +6 % over seven processes), where one-stream steps of as many launches gain
5-13 %. This runs the step in forms that each take one of its features away, each form in its
own process, with and without the shim, alternating, and prints host-bound ms a step. What it
found: the shim takes 21-30 % off the step as users run it; the suite's workers ran it at 3.5-5
times the host time, in deterministic mode as they set it up (by PyTorch's source,
CUBLAS_WORKSPACE_CONFIG parsed at every cuBLAS call: workloads.cublas_config_read_once; the
two not yet measured apart). Forms:
  full        the suite's step: wait_stream both ways (an event created, recorded, waited for
              and destroyed each way each step), the side branch's output kept alive on the main
              stream by record_stream (the allocator then queries an event each step);
  no-record   the same without record_stream;
  reuse       two events made once, recorded and waited for each step (no create or destroy);
  one-stream  the same kernels on one stream, no event.
--deterministic kept|dropped: deterministic mode as the suite's workers set it, with
CUBLAS_WORKSPACE_CONFIG kept for the whole run (the suite up to session 37) or dropped after
the deterministic check read it (workloads.cublas_config_read_once).
--pin: as the suite's lockstep pins its workers ("all": every thread of the process on one
CPU while it times), only the main thread there ("main"), or not at all ("none").
Usage: two_streams_probe.py --form FORM [--pin P] [--steps N] [--chunks N]   (one process)
       two_streams_probe.py --lib build/libpygraph.so [--forms F,..] [--pin P,..] [--rounds N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "bench", "suite"))
import harness  # noqa: E402
import workloads  # noqa: E402

FORMS = ("full", "no-record", "reuse", "one-stream")


def pin(mode, core=3):
    """"all": every thread on CPU `core`, as the suite's lockstep pins a worker while it times
    (harness.pin_all_threads); "main": only the calling thread there, every other off it."""
    if mode in harness.PIN_MODES:
        harness.pin_for_chunk(core, mode)


def thread_times():
    """CPU seconds of each thread of the process, by name, the busiest first."""
    tick = os.sysconf("SC_CLK_TCK")
    out = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out.append(((int(fields[11]) + int(fields[12])) / tick, name, tid))
    return sorted(out, reverse=True)


def run_form(form, steps, chunks, pin_mode, deterministic):
    if deterministic:  # as the suite's workers run (worker.py, workloads._deterministic)
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        if deterministic == "kept":
            os.environ["BENCH_CUBLAS_CONFIG"] = "kept"
    import torch

    torch.manual_seed(0)
    if deterministic:
        workloads._deterministic()

    def mlp():
        layers = []
        for _ in range(3):
            layers += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
        return torch.nn.Sequential(*layers).cuda()

    first, main_branch, side_branch = mlp(), mlp(), mlp()
    side = torch.cuda.Stream() if form != "one-stream" else torch.cuda.current_stream()
    x = torch.randn(32, 256, device="cuda")
    forked, joined = torch.cuda.Event(), torch.cuda.Event()

    def order(waiting, on, event):
        # wait_stream makes, records and drops a new event each time; "reuse" keeps its own.
        if form == "reuse":
            event.record(on)
            waiting.wait_event(event)
        elif form != "one-stream":
            waiting.wait_stream(on)

    @torch.no_grad()
    def step():
        main = torch.cuda.current_stream()
        h = first(x)
        order(side, main, forked)
        with torch.cuda.stream(side):
            b = side_branch(h)
        a = main_branch(h)
        order(main, side, joined)
        if form in ("full", "reuse"):
            b.record_stream(main)
        return a + b

    for _ in range(300):
        step()
    torch.cuda.synchronize()
    before = {tid: t for t, _, tid in thread_times()}
    pin(pin_mode)
    per_step = []
    for _ in range(chunks):
        t0 = time.perf_counter()
        for _ in range(steps):
            out = step()
        torch.cuda.synchronize()
        per_step.append((time.perf_counter() - t0) * 1e3 / steps)
    spent = sorted(((t - before.get(tid, 0), n) for t, n, tid in thread_times()), reverse=True)
    busy = ", ".join(f"{n} {t:.2f}s" for t, n in spent[:4])
    print(f"{statistics.median(per_step):.4f} {float(out.float().sum()):.6e} [{busy}]")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--form", choices=FORMS)
    p.add_argument("--lib", help="libpygraph.so: run every form with and without it")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--pin", default="none", help="none, all or main (comma-separated: each)")
    p.add_argument("--forms", default=",".join(FORMS))
    p.add_argument("--deterministic", choices=("kept", "dropped"),
                   help="deterministic algorithms and cuBLAS workspace config, the config kept "
                   "(as the suite ran up to session 37) or dropped after its one check (since)")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--chunks", type=int, default=12)
    args = p.parse_args()
    if args.form:
        run_form(args.form, args.steps, args.chunks, args.pin, args.deterministic)
        return
    forms = [(f, p) for f in args.forms.split(",") for p in args.pin.split(",")]
    times = {(f, w): [] for f in forms for w in ("none", "shim")}
    for r in range(args.rounds):
        for form, pin_mode in forms:
            for way in ("none", "shim"):
                env = dict(os.environ)
                env.pop("LD_PRELOAD", None)
                if way == "shim":
                    env["LD_PRELOAD"] = os.path.abspath(args.lib)
                    if os.environ.get("OUT"):  # the shim's stats of each process come back
                        env["PYGRAPH_STATS"] = (f"{os.environ['OUT']}/probe-{form}-{pin_mode}-"
                                                f"{r + 1}.json")
                cmd = [sys.executable, __file__, "--form", form, "--steps", str(args.steps),
                       "--chunks", str(args.chunks), "--pin", pin_mode]
                cmd += ["--deterministic", args.deterministic] if args.deterministic else []
                out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
                ms = float(out.stdout.split()[0])
                times[((form, pin_mode), way)].append(ms)
                busy = out.stdout[out.stdout.index("["):].strip()
                print(f"round {r + 1}: {form:10} pin {pin_mode:4} {way:4} {ms:.4f} ms a step "
                      f"{busy}", flush=True)
    print(f"\n{'form':10}  {'pin':4}  {'none ms':>8}  {'shim ms':>8}  change (each round)")
    for form, pin_mode in forms:
        n, s = times[((form, pin_mode), "none")], times[((form, pin_mode), "shim")]
        each = ", ".join(f"{(b / a - 1) * 100:+.1f}" for a, b in zip(n, s))
        print(f"{form:10}  {pin_mode:4}  {statistics.median(n):8.4f}  {statistics.median(s):8.4f}  "
              f"{each}")


if __name__ == "__main__":
    main()
