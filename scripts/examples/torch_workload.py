"""Example PyTorch workloads: the README example (scripts/run-example.sh) and the GPU check.

    python torch_workload.py MODEL --steps N [--warmup W] [--losses FILE] [--profile] [--time]

MODEL: mlp (NOTES.md: 7 Linear 512 wide + ReLU, batch 256, SGD momentum) or mlp-compile (the
same under torch.compile, default mode). Every step ends in torch.cuda.synchronize() so that
launches per step can be told apart. --losses writes each step's loss as the hex of its float
bits (bitwise comparison); --profile prints kernels per steady-state step counted by
torch.profiler; --time prints the median step time in ms (no losses then).

--lockstep IN OUT (with --time): after warm-up, print "ready", then for each chunk of steps
wait for a byte on the FIFO IN, run the chunk, pass the byte on to the FIFO OUT, and finally
print every chunk's step time. Several processes in a ring of FIFOs take turns on the machine
this way, so that a benchmark compares configurations under the same conditions, chunk by chunk.
"""
import argparse
import os
import statistics
import sys
import time

import torch


def build(model_name):
    torch.manual_seed(0)
    layers = []
    for _ in range(7):
        layers += [torch.nn.Linear(512, 512), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(256, 512, device="cuda")
    y = torch.randn(256, 512, device="cuda")
    fwd = torch.compile(model) if model_name == "mlp-compile" else model

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(fwd(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=["mlp", "mlp-compile"])
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--losses")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--time", action="store_true")
    p.add_argument("--lockstep", nargs=2, metavar=("IN", "OUT"))
    a = p.parse_args()

    step = build(a.model)
    for _ in range(a.warmup):
        step()
        torch.cuda.synchronize()

    if a.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(a.steps):
                step()
                torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        launches = [e for e in kernels if not e.name.startswith(("Memcpy", "Memset"))]
        print(f"profiler_kernels_per_step {len(launches) / a.steps:.3f}")
        print(f"profiler_memops_per_step {(len(kernels) - len(launches)) / a.steps:.3f}")
        return 0

    if a.time:
        # Launch-bound timing: chunks of steps back to back, one synchronize per chunk, so the
        # CPU's launch path (what the shim touches) is what is measured.
        chunk, times = 25, []
        if a.lockstep:
            # O_RDWR: opening a FIFO this way never blocks, whatever order the ring starts in.
            fin, fout = (os.open(f, os.O_RDWR) for f in a.lockstep)
            print("ready", flush=True)
        for _ in range(max(1, a.steps // chunk)):
            if a.lockstep:
                os.read(fin, 1)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(chunk):
                step()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) / chunk)
            if a.lockstep:
                os.write(fout, b"x")
        print(f"median_step_ms {statistics.median(times) * 1e3:.4f}")
        print("chunk_ms " + " ".join(f"{t * 1e3:.4f}" for t in times))
        return 0

    losses = []
    for _ in range(a.steps):
        loss = step()
        torch.cuda.synchronize()
        losses.append(loss.detach().float().cpu().view(torch.int32).item())
    if a.losses:
        with open(a.losses, "w") as f:
            f.write("\n".join(f"{v & 0xffffffff:08x}" for v in losses) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
