"""DDP training of a small GPT-like transformer: the suite's multi-process workload, where every
step has NCCL all-reduces (DDP's gradient buckets) between the compute kernels.

One rank per GPU, started by torchrun:
  torchrun --nproc-per-node N --master-port P tests/bench/suite/ddp_train.py --chunks C \
      --steps S --warmup W --go DIR/ddp.{rank}.go --done DIR/ddp.{rank}.done --core K \
      --stats-prefix DIR/ddp.{rank}. --result DIR/ddp.{rank}.json
N is 2 on the two-GPU machine, 1 for a smoke run. "{rank}" in --go, --done, --stats-prefix and
--result becomes the rank; rank r times on CPU K + r.
Protocol: warm up, then chunks on the driver's go, results per rank (tests/gpu/harness.py).
The result is bit-for-bit reproducible: its digest (parameters and logged losses) compares a
run with the shim against one without.
"""
import os

# Before torch is imported (NCCL and symmetric memory read these at load or init): NVLink
# multicast stays off on the two-GPU machine, where it can break GPUs that others share.
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
# Deterministic cuBLAS, read once, then dropped (workloads.cublas_config_read_once).
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse
import sys
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu"))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import workloads  # noqa: E402

VOCAB, D_MODEL, HEADS, FF, LAYERS = 8192, 256, 4, 1024, 4
BATCH, SEQ = 16, 128


def build_model(torch, nn, device):
    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Parameter(torch.randn(SEQ, D_MODEL) * 0.02)  # learned positions
            self.layers = nn.ModuleList(
                nn.TransformerEncoderLayer(D_MODEL, HEADS, dim_feedforward=FF, dropout=0.0,
                                           batch_first=True, norm_first=True)
                for _ in range(LAYERS))
            self.norm = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)
            # A plain attribute, not a buffer: DDP would broadcast buffers before every forward.
            # MHA needs the mask with the is_causal hint, then passes is_causal to SDPA instead.
            self.mask = nn.Transformer.generate_square_subsequent_mask(SEQ, device=device)

        def forward(self, idx):
            x = self.tok(idx) + self.pos
            for layer in self.layers:
                x = layer(x, src_mask=self.mask, is_causal=True)
            return self.head(self.norm(x))

    return GPT().to(device)


def run(rank):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.utils.deterministic
    from torch.nn.parallel import DistributedDataParallel as DDP

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    harness.add_worker_args(parser)
    args = parser.parse_args()
    for name in ("go", "done", "stats_prefix", "result"):
        if getattr(args, name):
            setattr(args, name, getattr(args, name).replace("{rank}", str(rank)))
    if args.core >= 0:
        args.core += rank  # ranks run a chunk together: each needs its own core

    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = False  # no extra fill kernels
    torch.backends.cudnn.benchmark = False
    # fp32 attention would take the memory-efficient SDPA kernel, whose backward accumulates
    # with atomics unless warn_only=False (it only warns here): the math backend is exact.
    torch.backends.cuda.enable_flash_sdp(False)
    torch.backends.cuda.enable_mem_efficient_sdp(False)
    torch.backends.cuda.enable_cudnn_sdp(False)

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", timeout=timedelta(seconds=90), device_id=device)
    ws = dist.get_world_size()
    workloads.cublas_config_read_once()  # on this rank's device, now current

    torch.manual_seed(0)  # every rank builds the same model (DDP also broadcasts rank 0's)
    model = DDP(build_model(torch, nn, device), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    # Each rank's own fixed batch, made once; CPU generator so it does not depend on CUDA RNG.
    gen = torch.Generator().manual_seed(1000 + rank)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=gen).to(device)
    inputs, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    losses = []
    it = [0]

    def step():
        opt.zero_grad(set_to_none=True)
        logits = model(inputs)
        loss = F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))
        loss.backward()  # DDP all-reduces the gradient buckets as they fill
        opt.step()
        it[0] += 1
        if it[0] % 10 == 0:  # a logging loop's only sync
            losses.append(loss.item())

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    dist.barrier()  # ranks report ready together, so the first chunk starts in step
    chunk_ms = harness.run_chunks(args, step, torch.cuda.synchronize)

    params = (p.detach().contiguous().view(torch.uint8).cpu().numpy().tobytes()
              for p in model.module.parameters())
    result_digest = harness.digest([*params, repr(losses).encode()])
    harness.write_result(args, chunk_ms, result_digest, rank=rank, world_size=ws,
                         launches_note="", losses_read=len(losses),
                         last_loss=losses[-1] if losses else None,
                         torch_peak_reserved_mb=torch.cuda.max_memory_reserved() / 2**20)
    dist.destroy_process_group()


def main():
    rank = os.environ.get("RANK", "?")
    try:
        run(int(rank))
    except Exception as e:  # noqa: BLE001 - one line that names the rank, for the suite
        lines = [l.strip() for l in str(e).splitlines() if l.strip()]
        print(f"rank {rank}: {type(e).__name__}: {lines[0] if lines else ''}"[:400],
              file=sys.stderr, flush=True)
        sys.stdout.flush()
        # os._exit: a normal exit could wait on NCCL teardown while a peer is stuck.
        os._exit(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
