"""One torchrun rank, one command: the shared-cache check of the `decide` section
(tests/gpu/decide.py) starts two processes that share one GPU and one decision cache.

    python -m torch.distributed.run --standalone --nproc-per-node N decide_ranks.py \
        SCRIPT0 ARGS0... :: SCRIPT1 ARGS1... [:: ...]

Rank r (LOCAL_RANK, as torchrun sets it) becomes `python SCRIPTr ARGSr...` (exec: same process,
same environment). No process group is made: the ranks only share the GPU and the files.
"""
import os
import sys

SEPARATOR = "::"


def rank_argv(argv, rank):
    """The command of `rank` among the SEPARATOR-separated commands of argv."""
    parts, part = [], []
    for a in argv:
        if a == SEPARATOR:
            parts.append(part)
            part = []
        else:
            part.append(a)
    parts.append(part)
    if not 0 <= rank < len(parts) or not parts[rank]:
        raise SystemExit(f"decide_ranks: no command for rank {rank} in {len(parts)} given")
    return parts[rank]


def main():
    rank = int(os.environ.get("LOCAL_RANK", "0"))
    argv = rank_argv(sys.argv[1:], rank)
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable] + argv)


if __name__ == "__main__":
    main()
