#!/usr/bin/env python3
"""The PyTorch peer of bench/programs/real_speed: the training that
`strata real --strategy mirrored` does, in PyTorch, for a samples/s figure
measured the same way on the same machine.

Same as strata: the data (Fashion-MNIST's IDX files, pixels byte/255), the
model (mlp:IN-H...-C: dense layers, ReLU after all but the last; weights
normal with std sqrt(2/in), sqrt(1/in) for the last, biases 0), the loss
(softmax cross-entropy), the optimizer (SGD, momentum, no weight decay), the
global batch (split evenly over the ranks), the seed, one thread per process
and each process pinned to its own core (strata binds each MPI rank to one).
Two or more ranks run DistributedDataParallel over gloo, as PyTorch's CPU
data parallelism does: gradients all-reduced in buckets during backward.
The random draws differ (torch's generator, not GSL's): the same
distributions, not the same numbers.

Timed: the training steps only, from a barrier before the first to a
barrier after the last (data loading and model set-up excluded, as strata's
per-step times exclude them). Prints one line of JSON on rank 0:
  {"samples_per_s": x, "steps": s, "batch": b, "ranks": r, "torch": "1.13.1"}

  python3 bench/peers/torch_mlp.py --model mlp:784-256-128-10 --batch 64 \\
      --steps 937 --ranks 2 [--lr 0.02 --momentum 0.9 --seed 1 --data DIR]

With --gemm it trains nothing and prints PyTorch's own one-core GEMM rate
(a 2048^3 torch.mm, as real_speed times strata's peak) and the BLAS it
calls, so a ratio of samples/s can be read against the two libraries':
  {"gemm_gflops": x, "blas": "OpenBLAS 0.3.21 ... core Haswell", "torch": "1.13.1"}
Debian's PyTorch calls OpenBLAS, whose kernel is chosen from the CPU's
model (or OPENBLAS_CORETYPE): on a processor it does not know it falls back
to an old one (Prescott, SSE3), at a fraction of the machine's speed.
"""
import argparse
import gzip
import json
import os
import socket
import struct
import time

# One thread per process, set before the libraries load: torch.set_num_threads
# bounds torch's own threads only, and the OpenBLAS that Debian's PyTorch
# calls for its matrix products starts a thread per core when it loads
# (openblas_get_num_threads() was 2 after torch.set_num_threads(1) on this
# 2-core machine, and a 2048^3 torch.mm ran at 263 GFLOP/s against 137 with
# OPENBLAS_NUM_THREADS=1): the peer's figures used both cores.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402 (after the thread counts above)
import torch  # noqa: E402
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def read_idx(path):
    """An IDX file (plain or .gz) as a numpy array of its shape."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise SystemExit(f"torch_mlp: {path} is not an IDX file of bytes")
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_train(data_dir):
    def find(name):
        for suffix in ("", ".gz"):
            p = os.path.join(data_dir, name + suffix)
            if os.path.exists(p):
                return p
        raise SystemExit(f"torch_mlp: no {name}[.gz] in {data_dir}")
    x = read_idx(find("train-images-idx3-ubyte"))
    y = read_idx(find("train-labels-idx1-ubyte"))
    x = torch.from_numpy(x.reshape(x.shape[0], -1).astype(np.float32) / 255.0)
    return x, torch.from_numpy(y.astype(np.int64))


def make_model(spec, seed):
    sizes = [int(s) for s in spec.split(":", 1)[1].split("-")]
    torch.manual_seed(seed)
    layers = []
    for i in range(len(sizes) - 1):
        lin = nn.Linear(sizes[i], sizes[i + 1])
        is_last = i == len(sizes) - 2
        with torch.no_grad():
            lin.weight.normal_(0.0, (1.0 if is_last else 2.0) ** 0.5 / sizes[i] ** 0.5)
            lin.bias.zero_()
        layers.append(lin)
        if not is_last:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers), sizes[0]


def train(rank, args, port, out):
    torch.set_num_threads(1)
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[rank % len(cores)]})
    if args.ranks > 1:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    x, y = load_train(args.data)
    model, features = make_model(args.model, args.seed)
    if x.shape[1] != features:
        raise SystemExit(f"torch_mlp: {args.model} takes {features} features, the data has {x.shape[1]}")
    if args.ranks > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    loss_fn = nn.CrossEntropyLoss()
    per_rank = args.batch // args.ranks
    gen = torch.Generator().manual_seed(args.seed)
    order = torch.randperm(x.shape[0], generator=gen)
    at = 0
    if args.ranks > 1:
        dist.barrier()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        if at + args.batch > x.shape[0]:   # a new epoch: a new shuffle
            order = torch.randperm(x.shape[0], generator=gen)
            at = 0
        idx = order[at + rank * per_rank: at + (rank + 1) * per_rank]
        at += args.batch
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
    if args.ranks > 1:
        dist.barrier()
    elapsed = time.perf_counter() - t0
    if rank == 0:
        out.put({"samples_per_s": args.steps * per_rank * args.ranks / elapsed,
                 "steps": args.steps, "batch": per_rank * args.ranks, "ranks": args.ranks,
                 "loss": float(loss), "torch": torch.__version__})
    if args.ranks > 1:
        dist.destroy_process_group()


def blas_name():
    """The OpenBLAS build and kernel PyTorch's process has loaded, or what
    torch says of its BLAS when that is not OpenBLAS."""
    import ctypes
    for name in ("libopenblas.so.0", "libblas.so.3"):
        try:
            lib = ctypes.CDLL(name)
            core, config = lib.openblas_get_corename, lib.openblas_get_config
        except (OSError, AttributeError):
            continue
        core.restype = config.restype = ctypes.c_char_p
        words = config().decode().split()
        return f"{' '.join(words[:2])}, core {core().decode()}, {lib.openblas_get_num_threads()} thread(s)"
    return "BLAS: " + next((line.strip() for line in torch.__config__.show().splitlines()
                            if "BLAS" in line), "unknown")


def gemm_rate(n=2048, repeats=5):
    """One thread's torch.mm on n x n x n, the best of repeats, in GFLOP/s."""
    torch.set_num_threads(1)
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    a, b = torch.rand(n, n), torch.rand(n, n)
    torch.mm(a, b)   # the first call sets the library up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best / 1e9


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="mlp:784-256-128-10")
    p.add_argument("--batch", type=int, default=64, help="global batch, split over the ranks")
    p.add_argument("--steps", type=int, default=937)
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--gemm", action="store_true",
                   help="print the one-core GEMM rate and the BLAS, train nothing")
    args = p.parse_args()
    if args.gemm:
        print(json.dumps({"gemm_gflops": gemm_rate(), "blas": blas_name(),
                          "torch": torch.__version__}), flush=True)
        return
    if args.ranks < 1 or args.batch % args.ranks:
        raise SystemExit("torch_mlp: --batch must divide evenly over --ranks")
    ctx = mp.get_context("spawn")
    out = ctx.SimpleQueue()
    if args.ranks == 1:
        train(0, args, 0, out)
    else:
        mp.start_processes(train, args=(args, free_port(), out), nprocs=args.ranks,
                           start_method="spawn")
    print(json.dumps(out.get()), flush=True)


if __name__ == "__main__":
    main()
