"""Example PyTorch workloads: the README example (scripts/run-example.sh) and the GPU check.

    python torch_workload.py MODEL --steps N [--warmup W] [--losses FILE] [--profile] [--time]

MODEL (NOTES.md): mlp (7 Linear 512 wide + ReLU, batch 256, SGD momentum), mlp-compile (the
same under torch.compile, default mode), mlp-dropout (with dropout after each ReLU: its RNG
offsets change every step), resnet18 (inference, batch 1), bert (BERT-base inference, batch 1,
sequence 128), gpt2 (GPT-2 small greedy decode with a KV cache, one token per step, the cache
restarted every 64 tokens). Models are built from their configurations with seeded random
weights: nothing is downloaded. Every step ends in torch.cuda.synchronize() so that launches per
step can be told apart. --losses writes one line per step, a digest of its result bytes (the
loss, or the model output), for bitwise comparison, and the GPU memory in use at the end;
--profile prints kernels per steady-state step counted by torch.profiler; --time prints the
median step time in ms (no digests then); --idle prints the median time from the start of a
step (CPU) to the first kernel of that step on the GPU, from torch.profiler's timeline: how
long the GPU waits at the start of each iteration.

--lockstep GO DONE (with --time): after warm-up, run each chunk of steps when a driver says
so, the protocol of tests/gpu/harness.py (the GPU check's benchmark compares configurations
this way, chunk by chunk under the same conditions), and finally print every chunk's step time.
--warm-chunks N (with --lockstep): N untimed chunks of the warm-up on the driver's turns too, so
that what the shim learns and weighs there is not measured beside the other configurations.
"""
import argparse
import hashlib
import os
import statistics
import sys

import torch


def build_inference(model_name):
    torch.manual_seed(0)
    if model_name == "resnet18":
        import torchvision

        model = torchvision.models.resnet18(weights=None).cuda().eval()
        x = torch.randn(1, 3, 224, 224, device="cuda")
        return torch.no_grad()(lambda: model(x))
    if model_name == "bert":
        from transformers import BertConfig, BertModel

        model = BertModel(BertConfig()).cuda().eval()
        ids = torch.randint(0, 30000, (1, 128), device="cuda")
        return torch.no_grad()(lambda: model(input_ids=ids).last_hidden_state)
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config()).cuda().eval()
    prompt = torch.randint(0, 50000, (1, 8), device="cuda")
    state = {"past": None, "tok": prompt, "n": 0}

    @torch.no_grad()
    def step():
        if state["n"] % 64 == 0:  # a new sequence: the prompt again, an empty cache
            state["past"], state["tok"] = None, prompt
        out = model(input_ids=state["tok"], past_key_values=state["past"], use_cache=True)
        state["past"] = out.past_key_values
        state["tok"] = out.logits[:, -1:].argmax(-1)  # greedy, stays on the GPU
        state["n"] += 1
        return out.logits[:, -1]

    return step


def build(model_name):
    if model_name in ("resnet18", "bert", "gpt2"):
        return build_inference(model_name)
    torch.manual_seed(0)
    layers = []
    for _ in range(7):
        layers += [torch.nn.Linear(512, 512), torch.nn.ReLU()]
        if model_name == "mlp-dropout":
            layers.append(torch.nn.Dropout(0.1))
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
    p.add_argument("model", choices=["mlp", "mlp-compile", "mlp-dropout", "resnet18", "bert",
                                      "gpt2"])
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--losses")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--time", action="store_true")
    p.add_argument("--idle", action="store_true")
    p.add_argument("--lockstep", nargs=2, metavar=("GO", "DONE"))
    p.add_argument("--warm-chunks", type=int, default=0)
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
        kinds = {}
        for e in kernels:
            if e.name.startswith(("Memcpy", "Memset")):
                kinds[e.name] = kinds.get(e.name, 0) + 1
        for name, n in sorted(kinds.items()):
            print(f"profiler_memop {name}: {n / a.steps:.3f} per step")
        return 0

    if a.idle:
        from torch.profiler import ProfilerActivity, profile, record_function

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(a.steps):
                with record_function("pygraph_step"):
                    step()
                torch.cuda.synchronize()
        events = prof.events()
        cuda = torch.autograd.DeviceType.CUDA
        # The step range on the CPU; the GPU's kernels and memops (the range's own GPU-side
        # annotation, named like it, left out).
        starts = sorted(e.time_range.start for e in events
                        if e.name == "pygraph_step" and e.device_type != cuda)
        gpu = sorted(e.time_range.start for e in events
                     if e.device_type == cuda and e.name != "pygraph_step")
        idle = []
        for k, s in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else float("inf")
            first = next((g for g in gpu if s <= g < end), None)
            if first is not None:
                idle.append(first - s)
        print(f"gpu_idle_at_step_start_us {statistics.median(idle):.1f} "
              f"(steps {len(idle)} of {len(starts)})")
        return 0

    if a.time:
        # Launch-bound timing: chunks of steps back to back, one synchronize per chunk, so the
        # CPU's launch path (what the shim touches) is what is measured; with --lockstep, chunk
        # by chunk on a driver's turn (the protocol of tests/gpu/harness.py).
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                        "tests", "gpu"))
        import harness

        go, done = a.lockstep or (None, None)
        chunks = argparse.Namespace(chunks=max(1, a.steps // 25), steps=25, go=go, done=done,
                                    core=-1, stats_prefix="", warm_chunks=a.warm_chunks)
        times = harness.run_chunks(chunks, step, torch.cuda.synchronize)
        print(f"median_step_ms {statistics.median(times):.4f}")
        print("chunk_ms " + " ".join(f"{t:.4f}" for t in times))
        return 0

    digests = []
    for _ in range(a.steps):
        result = step()
        torch.cuda.synchronize()
        host = result.detach().contiguous().view(-1).view(torch.uint8).cpu()  # read
        raw = host.numpy().tobytes()
        digests.append(hashlib.sha1(raw).hexdigest()[:16])
    free, total = torch.cuda.mem_get_info()
    print(f"gpu_mem_used_mb {(total - free) / 2**20:.1f}")
    print(f"torch_reserved_mb {torch.cuda.memory_reserved() / 2**20:.1f}")
    if a.losses:
        with open(a.losses, "w") as f:
            f.write("\n".join(digests) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
