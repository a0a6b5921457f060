"""The benchmark suite's workloads: what each stands for, and how each variant of it is built.

Every model is built from a configuration with seeded random weights (nothing is downloaded).
A builder returns a Task: `step()` runs one iteration the way a user's loop would, `result()`
returns the bytes compared bit for bit between a run with the shim and one without (losses and
parameters after training, the last outputs after inference). torch, torchvision, transformers,
timm and cupy are imported inside the builders, so that the registry can be read without them.

Variants (where they apply): eager; cuda-graph (torch.cuda.graph capturing the whole step with
static inputs, as in PyTorch's documentation); graphed-callables (torch.cuda.make_graphed_callables
on the model, training only); compile (torch.compile, default mode); compile-ro
(mode="reduce-overhead"). The shim is a matter of the environment only, so "+shim" cells run the
same code.
"""
import contextlib
import os
import time

TORCH_VARIANTS = ("eager", "cuda-graph", "compile", "compile-ro")
TRAIN_VARIANTS = ("eager", "cuda-graph", "graphed-callables", "compile", "compile-ro")


# Warm-up steps before timing (every workload but gpt2-decode): past both warm-ups of a
# reduce-overhead cell with the shim. torch.compile records a step's CUDA graph at its second or
# third call, and the shim takes the program's graph into its chunks from its 16th launch
# (program_graph_launches). With 5-10 steps, the timed chunks of the inference cells began
# before that (coverage 62-98 % at d1b4173); with 6, those of the training cells met the step
# with the program's graphs in it as a new sequence (gpt2-train: 84.6 % and +3.7 % at 27e2943).
WARMUP = 20

# Then untimed chunks of the timed shape, in the lockstep's turns like the timed ones
# (harness.run_chunks --warm-chunks). A chunk is, to the shim, one segment between two syncs
# (where a step reads nothing back): followed from its third occurrence, its pauses learned, and
# every such segment weighed on whole rounds, which may take up to kWeighOccurrences (24)
# occurrences (pause_places.h). With 3, a host whose Python gaps pass pause_us learned and
# weighed in the first timed chunks (session 25: 1,131 pause cuts in compiled-b1's timed
# chunks), and the steady state read as learning. With 8 (sessions 25-38), the main segment of
# 15 shim cells was still being weighed when the timed chunks began (session 38: ResNet-50 b64
# compiled chose its split there). 24 untimed chunks cost about 105 s over the whole suite
# (session 38's step times). In turns, not beside every other cell's warm-up: what is learned
# there (a gap on the host, the GPU's idle time) is then what the timed chunks meet (session
# 26: DDP's two shim cells, learning by the same code, learned 4 and 16 pause places in one
# sequence).
WARM_CHUNKS = 24

# Of a workload's warm-up steps, this many run beside every other cell's warm-up, where
# torch.compile's compiles overlap (a step's first call compiles it, a shape's second call
# recompiles it as dynamic); the rest run in the lockstep's turns, as untimed chunks of the timed
# shape before the WARM_CHUNKS. A workload that syncs every step is a segment a step to the
# shim: with all its warm-up beside the others, its main segment was followed, learned and
# weighed there, with nine other processes on the GPU (session 47: mlp-dropout-item's from its
# 3rd step of 20, gpt2-decode's from its 26th of 140, host-read's four a step likewise). Its
# rounds' first chunks then read 150-790 us of GPU time for 2 launches of about 20 (the GPU
# most likely served other processes when the step began), one such round could decide the
# split, and gpt2-decode compiled replayed 19.7 launches a graph in one process and 34.2 in
# another. Two steps are fewer than the shim needs to follow a sequence (its third occurrence).
PARALLEL_WARMUP = 2


def warm_split(warmup, steps):
    """A workload's warm-up of `warmup` steps at `steps` a chunk: (the steps beside the other
    cells, the untimed chunks in turns: WARM_CHUNKS and enough for the rest of the warm-up)."""
    parallel = min(warmup, PARALLEL_WARMUP)
    return parallel, WARM_CHUNKS + -(-(warmup - parallel) // steps)


class Workload:
    def __init__(self, name, what, builder, steps, warmup=WARMUP, variants=TORCH_VARIANTS, na=None,
                 train=False, program=None, program_args=()):
        self.name, self.what, self.builder = name, what, builder
        self.steps, self.warmup, self.variants = steps, warmup, variants
        self.na = na or {}  # variant -> why it does not apply
        self.train = train
        self.program = program  # a native program instead of a Python builder
        self.program_args = tuple(program_args)  # before the worker protocol's flags


class Task:
    def __init__(self, step, result, sync, read_s=None):
        self.step, self.result, self.sync = step, result, sync
        # Seconds spent so far in the step's reads on the host (loss.item()), or None: the time
        # the host waited there for the GPU, where a chunk held back until the read shows.
        self.read_s = read_s


def _torch_sync():
    import torch

    torch.cuda.synchronize()


def _bytes(t):
    import torch

    return t.detach().contiguous().view(-1).view(torch.uint8).cpu().numpy().tobytes()


def _deterministic():
    """Training workloads: deterministic kernels (no atomics in backward where PyTorch has an
    alternative), so that a run is comparable bit for bit with another; no fill kernels."""
    import torch
    import torch.utils.deterministic

    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = False
    cublas_config_read_once()


def cublas_config_read_once():
    """Deterministic mode asks for CUBLAS_WORKSPACE_CONFIG (the workers set it before torch
    loads), but torch 2.11 parses it with a std::regex each time a cuBLAS call looks up its
    workspace size (at::cuda::getChosenWorkspaceSize, not cached there, several times a
    Linear). On the H200, deterministic mode set up so took an eager step of three
    small MLPs from 0.45 to 1.6-2.3 ms of host time (session 37, tests/gpu/two_streams_probe.py;
    the variable and the mode not yet measured apart): a tax on every cuBLAS call that the shim
    cannot remove, which users who do not set the variable never pay. The
    deterministic check reads the variable once per process and keeps its answer, so one GEMM
    with it set, then it goes: the workspace takes its default size, on sm90 the same 32 MiB
    (:4096:8). BENCH_CUBLAS_CONFIG=kept keeps it, as the suite ran before session 37."""
    if "CUBLAS_WORKSPACE_CONFIG" not in os.environ or \
            os.environ.get("BENCH_CUBLAS_CONFIG") == "kept":
        return
    import torch

    a = torch.ones(8, 8, device="cuda")
    torch.mm(a, a)  # at::Context::alertCuBLASConfigNotDeterministic: its answer is kept
    torch.cuda.synchronize()
    del os.environ["CUBLAS_WORKSPACE_CONFIG"]


def _compiled(module, variant):
    import torch

    if variant == "compile":
        return torch.compile(module)
    if variant == "compile-ro":
        return torch.compile(module, mode="reduce-overhead")
    return module


def _capture(body, warm=3):
    """torch.cuda.graph of body(), after warm-up iterations on a side stream (PyTorch's
    documented recipe). Returns (graph, static output)."""
    import torch

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warm):
            body()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = body()
    return g, out


def train_task(model, batch, loss_of, make_opt, variant, read_every=0, amp=False):
    """A training loop: zero_grad, forward (model(*batch)), loss_of(output), backward, optimizer
    step; every `read_every`-th step reads the loss on the host (loss.item())."""
    import torch

    _deterministic()
    graphed = variant in ("cuda-graph", "graphed-callables")
    # Graph capture under autocast needs its weight cache off (PyTorch's documentation).
    amp_ctx = (lambda: torch.autocast("cuda", torch.bfloat16, cache_enabled=not graphed)) if amp \
        else contextlib.nullcontext
    if variant == "graphed-callables":
        # Captured under the same autocast as the loop: the graphs replay what was captured, so
        # a capture outside autocast would train in fp32 while the other variants run bf16.
        with amp_ctx():
            fwd = torch.cuda.make_graphed_callables(model, batch)
    else:
        fwd = _compiled(model, variant)
    opt = make_opt(model.parameters(), variant == "cuda-graph")
    reads, state = [], {"n": 0, "loss": None, "read_s": 0.0}

    def body():
        with amp_ctx():
            loss = loss_of(fwd(*batch))
        loss.backward()
        opt.step()
        return loss

    def after(loss):
        state["n"] += 1
        state["loss"] = loss
        if read_every and state["n"] % read_every == 0:
            t0 = time.perf_counter()
            reads.append(loss.item())
            state["read_s"] += time.perf_counter() - t0

    if variant == "cuda-graph":
        def warm_body():
            opt.zero_grad(set_to_none=True)
            return body()

        # Gradients set to None before capture: backward allocates them from the graph's pool.
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                warm_body()
        torch.cuda.current_stream().wait_stream(s)
        opt.zero_grad(set_to_none=True)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_loss = body()

        def step():
            g.replay()
            after(static_loss)
    else:
        def step():
            opt.zero_grad(set_to_none=True)
            after(body())

    def result():
        parts = [_bytes(p) for p in model.parameters()]
        parts.append(repr(reads).encode())
        parts.append(_bytes(state["loss"]))
        return parts

    return Task(step, result, _torch_sync, (lambda: state["read_s"]) if read_every else None)


def output_task(run, variant):
    """A loop of `run()` whose last output is the result: as it is, or captured whole with
    torch.cuda.graph (static inputs) for the cuda-graph variant."""
    state = {"out": None}
    if variant == "cuda-graph":
        g, static = _capture(run)

        def step():
            g.replay()
            state["out"] = static
    else:
        def step():
            state["out"] = run()

    return Task(step, lambda: [_bytes(state["out"])], _torch_sync)


def infer_task(model, inputs, variant, out_of=lambda o: o):
    """An inference loop whose outputs stay on the GPU: model(*inputs) under no_grad."""
    import torch

    model.eval()
    fwd = _compiled(model, variant)

    @torch.no_grad()
    def run():
        return out_of(fwd(*inputs))

    return output_task(run, variant)


# ---------------------------------------------------------------- models

def _seed():
    import torch

    torch.manual_seed(0)
    # Inference too: without deterministic mode Inductor picks among several reduction configs
    # by timing them (torch/_inductor/runtime/triton_heuristics.py: disable_pointwise_autotuning,
    # filter_reduction_configs_for_determinism; use_deterministic_algorithms also sets
    # torch._inductor.config.deterministic, test/inductor/test_deterministic.py), so "compile"
    # and "compile+shim" could run different kernels, their digests differing for reasons that
    # are not the shim's.
    _deterministic()


def _mlp(width=512, depth=7, dropout=0.0):
    import torch

    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
        if dropout:
            layers.append(torch.nn.Dropout(dropout))
    return torch.nn.Sequential(*layers).cuda()


def _sgd(params, capturable):
    import torch

    return torch.optim.SGD(params, lr=0.01, momentum=0.9)


def _adamw(lr):
    def make(params, capturable):
        import torch

        return torch.optim.AdamW(params, lr=lr, capturable=capturable)

    return make


def mlp_train(variant, dropout=0.0, read_every=0):
    import torch

    _seed()
    model = _mlp(dropout=dropout)
    x = torch.randn(256, 512, device="cuda")
    y = torch.randn(256, 512, device="cuda")
    loss_of = lambda out: torch.nn.functional.mse_loss(out, y)
    return train_task(model, (x,), loss_of, _sgd, variant, read_every=read_every)


# The inference models and their inputs, on the GPU (tests/gpu/child_graph_real.py captures
# the same ones).
def vision_model(name, batch):
    import torch
    import torchvision

    model = getattr(torchvision.models, name)(weights=None).cuda()
    return model, torch.randn(batch, 3, 224, 224, device="cuda")


def timm_model():
    import timm
    import torch

    model = timm.create_model("efficientnet_b0", pretrained=False).cuda()
    return model, torch.randn(8, 3, 224, 224, device="cuda")


def bert_model():
    import torch
    from transformers import BertConfig, BertModel

    model = _Logits.wrap(BertModel(BertConfig()))
    return model, torch.randint(0, 30000, (1, 128), device="cuda")


def vision_infer(variant, name, batch):
    _seed()
    model, x = vision_model(name, batch)
    return infer_task(model, (x,), variant)


def timm_infer(variant):
    _seed()
    model, x = timm_model()
    return infer_task(model, (x,), variant)


class _Logits:
    """A Hugging Face model as a module that returns a tensor (make_graphed_callables and the
    losses below take tensors, not ModelOutput objects)."""

    @staticmethod
    def wrap(hf_model):
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = hf_model

            def forward(self, ids):
                out = self.m(input_ids=ids)
                return out.logits if hasattr(out, "logits") else out.last_hidden_state

        return Wrapped().cuda()


def bert_infer(variant):
    _seed()
    model, ids = bert_model()
    return infer_task(model, (ids,), variant)


def bert_train(variant):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    _seed()
    model = _Logits.wrap(BertForSequenceClassification(BertConfig(num_labels=2)))
    model.train()
    ids = torch.randint(0, 30000, (8, 128), device="cuda")
    labels = torch.randint(0, 2, (8,), device="cuda")
    loss_of = lambda logits: torch.nn.functional.cross_entropy(logits, labels)
    return train_task(model, (ids,), loss_of, _adamw(2e-5), variant)


def gpt2_train(variant):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    _seed()
    hf = GPT2LMHeadModel(GPT2Config(attn_implementation="sdpa"))
    model = _Logits.wrap(hf)
    model.train()
    ids = torch.randint(0, 50000, (8, 128), device="cuda")

    def loss_of(logits):
        return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                                                 ids[:, 1:].reshape(-1))

    return train_task(model, (ids,), loss_of, _adamw(1e-4), variant, amp=True)


def gpt2_decode(variant):
    """Greedy decode with a KV cache; the next token is read back on the host every step (as a
    chat server streams it); the cache restarts every 64 tokens."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    _seed()
    model = GPT2LMHeadModel(GPT2Config()).cuda().eval()
    fwd = _compiled(model, variant)
    prompt = torch.randint(0, 50000, (1, 8), device="cuda")
    state = {"past": None, "tok": prompt, "n": 0, "logits": None}
    tokens = []

    @torch.no_grad()
    def step():
        if state["n"] % 64 == 0:
            state["past"], state["tok"] = None, prompt
        out = fwd(input_ids=state["tok"], past_key_values=state["past"], use_cache=True)
        state["past"] = out.past_key_values
        if variant == "compile-ro":
            # The KV cache is an output of this call's CUDA graph and the next call's input;
            # CUDA graph trees start a new generation at every call in inference and overwrite
            # (poison) the previous outputs: "accessing tensor output of CUDAGraphs that has
            # been overwritten by a subsequent run". The fix its message prescribes: clone the
            # tensors outside torch.compile (24 small copies per token, compile-ro only).
            _own_tensors(state["past"])
        nxt = out.logits[:, -1:].argmax(-1)
        tokens.append(nxt.item())  # the token goes to the host
        state["tok"] = nxt
        state["logits"] = out.logits[:, -1]
        state["n"] += 1

    return Task(step, lambda: [repr(tokens).encode(), _bytes(state["logits"])], _torch_sync)


def _own_tensors(cache):
    """Replace every tensor held by a transformers Cache and its layers (DynamicLayer.keys,
    .values, ...) with a clone outside the CUDA graph pool."""
    import torch

    for obj in (cache, *getattr(cache, "layers", ())):
        for name, value in list(vars(obj).items()):
            if isinstance(value, torch.Tensor):
                setattr(obj, name, value.clone())


def branchy_infer(variant):
    """A forward that reads a value on the host to choose its branch (data-dependent control
    flow: `if h.mean().item() > 0`), four times per call."""
    import torch

    _seed()

    class Branchy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = torch.nn.ModuleList(torch.nn.Linear(256, 256) for _ in range(4))
            self.a = torch.nn.ModuleList(torch.nn.Linear(256, 256) for _ in range(4))
            self.b = torch.nn.ModuleList(torch.nn.Linear(256, 256) for _ in range(4))

        def forward(self, x):
            h = x
            for inner, a, b in zip(self.inner, self.a, self.b):
                h = torch.relu(inner(h))
                h = a(h) if h.mean().item() > 0.05 else torch.tanh(b(h))
            return h

    model = Branchy().cuda()
    x = torch.randn(4, 256, device="cuda")
    return infer_task(model, (x,), variant)


def two_streams(variant):
    """One step on two streams: the side stream waits for the main stream's first layer, both
    compute a branch, the main stream waits for the side stream and joins (wait_stream both
    ways)."""
    import torch

    _seed()
    first, main_branch, side_branch = (_mlp(256, 3) for _ in range(3))
    if variant in ("compile", "compile-ro"):
        first, main_branch, side_branch = (_compiled(m, variant)
                                           for m in (first, main_branch, side_branch))
    side = torch.cuda.Stream()
    x = torch.randn(32, 256, device="cuda")

    @torch.no_grad()
    def run():
        main = torch.cuda.current_stream()
        h = first(x)
        side.wait_stream(main)
        with torch.cuda.stream(side):
            b = side_branch(h)
        a = main_branch(h)
        main.wait_stream(side)
        if not torch.cuda.is_current_stream_capturing():
            # b was allocated on the side stream and is used on the main one (a captured graph
            # keeps its memory in its own pool).
            b.record_stream(main)
        return a + b

    return output_task(run, variant)


def host_tensors(variant):
    """A step that builds small tensors on the host every iteration (indices and weights with
    torch.tensor([...], device="cuda")), then gathers rows and runs a small MLP on them."""
    import torch

    _seed()
    table = torch.randn(64, 256, device="cuda")
    mlp = _compiled(_mlp(256, 3), variant)
    state = {"n": 0, "out": None}

    @torch.no_grad()
    def step():
        i = state["n"] % 16
        idx = torch.tensor([i, (i + 3) % 64, (i + 7) % 64, (i + 11) % 64], device="cuda")
        w = torch.tensor([1.0, 0.5, 0.25, 0.125 + i / 64], device="cuda")
        state["out"] = mlp(table[idx] * w[:, None])
        state["n"] += 1

    return Task(step, lambda: [_bytes(state["out"])], _torch_sync)


def compiled_b1(variant):
    """MLP inference at batch 1 (8 Linear 512 + GELU), outputs stay on the GPU, no sync."""
    import torch

    _seed()
    layers = []
    for _ in range(8):
        layers += [torch.nn.Linear(512, 512), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).cuda()
    x = torch.randn(1, 512, device="cuda")
    return infer_task(model, (x,), variant)


def cupy_loop(variant):
    """CuPy: 5 small elementwise kernels per iteration (4096 floats), no sync."""
    import cupy as cp

    x = cp.sin(cp.arange(4096, dtype=cp.float32))
    y = cp.cos(cp.arange(4096, dtype=cp.float32))
    state = {"x": x, "y": y}

    def step():
        x, y = state["x"], state["y"]
        z = x * y  # one kernel per operation: 5 per iteration
        y = cp.sin(z)
        x = cp.tanh(x + 0.01)
        state["x"], state["y"] = x, cp.maximum(x, y)

    return Task(step, lambda: [cp.asnumpy(state["x"]).tobytes(), cp.asnumpy(state["y"]).tobytes()],
                lambda: cp.cuda.runtime.deviceSynchronize())


NO_GRAPH_HOST = "reads the host inside the step: no capture can hold it"
WORKLOADS = {w.name: w for w in (
    Workload("mlp-train", "MLP training (7 Linear 512 + ReLU, batch 256, SGD): a loop that never "
             "syncs", mlp_train, steps=40, variants=TRAIN_VARIANTS, train=True),
    Workload("mlp-dropout-item", "the same with dropout and loss.item() every step",
             lambda v: mlp_train(v, dropout=0.1, read_every=1), steps=40,
             variants=TRAIN_VARIANTS, train=True),
    Workload("mlp-item10", "MLP training, loss.item() every 10th step (a loop that syncs rarely)",
             lambda v: mlp_train(v, read_every=10), steps=40, variants=TRAIN_VARIANTS,
             train=True),
    Workload("resnet18-b1", "ResNet-18 inference, batch 1 (launch-bound)",
             lambda v: vision_infer(v, "resnet18", 1), steps=40),
    Workload("resnet50-b1", "ResNet-50 inference, batch 1 (launch-bound)",
             lambda v: vision_infer(v, "resnet50", 1), steps=20),
    Workload("resnet50-b64", "ResNet-50 inference, batch 64 (GPU-bound: the shim must cost "
             "nothing)", lambda v: vision_infer(v, "resnet50", 64), steps=4),
    Workload("bert-b1", "BERT-base inference, batch 1, sequence 128", bert_infer, steps=10),
    Workload("bert-train", "BERT-base training, batch 8, sequence 128, AdamW", bert_train,
             steps=4, variants=TRAIN_VARIANTS, train=True),
    # warmup: two full 64-token cycles before timing. Every KV length is a shape of its own:
    # compile-ro warms a CUDA graph up on its first sight of a length and records it on the
    # second, and the shim too meets each length's launch sequence once per cycle; with 10
    # warm-up steps most timed chunks would measure recordings, not steady state.
    Workload("gpt2-decode", "GPT-2 small greedy decode, batch 1, KV cache, next token read back "
             "each step", gpt2_decode, steps=16, warmup=140,
             variants=("eager", "compile", "compile-ro"),
             na={"cuda-graph": "the KV cache grows: shapes change every token"}),
    Workload("gpt2-train", "GPT-2 small training, batch 8, sequence 128, bf16 autocast, SDPA",
             gpt2_train, steps=3, variants=TRAIN_VARIANTS, train=True),
    Workload("timm-b8", "timm efficientnet_b0 inference, batch 8", timm_infer, steps=12),
    Workload("compiled-b1", "MLP inference at batch 1 (8 Linear 512 + GELU), loop never syncs",
             compiled_b1, steps=200),
    Workload("host-read", "a forward that reads .item() in a branch, 4 times per call",
             branchy_infer, steps=50, variants=("eager", "compile", "compile-ro"),
             na={"cuda-graph": NO_GRAPH_HOST}),
    Workload("two-streams", "a step on two streams ordered by events (wait_stream both ways)",
             two_streams, steps=100, variants=("eager", "cuda-graph", "compile"),
             na={"compile-ro": "three compiled modules per step: CUDA graph trees start a new "
                 "generation at each call (the next call's input, an output of the previous one, "
                 "is overwritten) and replay on the calling stream from one pool kept in one "
                 "stream order (graphs replayed at once on two streams can share temporaries)"}),
    Workload("host-tensors", "a step that builds small tensors on the host "
             "(torch.tensor([...], device='cuda'))", host_tensors, steps=100,
             variants=("eager", "compile", "compile-ro"),
             na={"cuda-graph": "copies from pageable host memory each step: not capturable"}),
    Workload("cupy-loop", "a CuPy loop of 5 small elementwise kernels per iteration, without syncs", cupy_loop,
             steps=2000, variants=("eager",)),
    Workload("cuda-loop", "a CUDA C++ program (runtime API): 12 launches of 4 small kernels per "
             "iteration, no syncs", None, steps=1000, variants=("eager",), program="cuda_loop"),
    Workload("cuda-one-kernel", "a CUDA C++ program (runtime API): one small kernel launched again "
             "and again, its counter an argument, no syncs", None, steps=4000, variants=("eager",),
             program="cuda_loop", program_args=("--shape", "one")),
)}
