#!/usr/bin/env python3
"""The PyTorch peers of the GPU proof (tools/gpu-proof): what the card
reaches through PyTorch, measured on the same card in the same call.

  torch_gpu.py gemm [--size 8192]
      FP32 matrix product of two random N x N matrices (torch.matmul, which
      is cuBLAS's SGEMM), TF32 off and then on: the ceiling that strata's
      cuBLAS SGEMM (bench/programs/gpu_speed) is held against.
  torch_gpu.py train --model mlp:784-4096-4096-4096-10 --batch 1024 --steps 200
      the training that `strata real --device cuda --strategy mirrored` does
      on one GPU (model, initialization, loss, SGD with momentum: as
      bench/peers/torch_mlp.py), TF32 off, samples/s.

Each prints one line of JSON. Timing follows the device method: warm-up
first (cuBLAS picks its kernels, the allocator fills its pools), then CUDA
events around the timed region, the median of --repeats runs. Inputs are
random, never zeros (zeros run faster than real data on these cards).

The peer is given the advantage: the whole synthetic training set lives on
the GPU and a batch is an index into it (what a careful PyTorch user does
with a data set this small), while strata's worker copies each batch from
the host. A strata figure at or above the peer's is therefore not a
data-loading artefact.
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_mlp import make_model  # noqa: E402  (the same model as the CPU peer)


def timed_ms(fn, repeats):
    """The median time of fn() over repeats runs, in milliseconds."""
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def gemm(args):
    n = args.size
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    a = torch.randn(n, n, device="cuda", generator=gen)
    b = torch.randn(n, n, device="cuda", generator=gen)
    c = torch.empty(n, n, device="cuda")
    result = {"size": n, "torch": torch.__version__, "device": torch.cuda.get_device_name()}
    for mode, tf32 in (("fp32", False), ("tf32", True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for _ in range(3):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        reps = 10
        ms = timed_ms(lambda: [torch.matmul(a, b, out=c) for _ in range(reps)], args.repeats)
        result[mode + "_tflops"] = 2.0 * n ** 3 * reps / (ms * 1e-3) / 1e12
    torch.backends.cuda.matmul.allow_tf32 = False
    print(json.dumps(result), flush=True)


def train(args):
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    model, features = make_model(args.model, args.seed)
    classes = int(args.model.rsplit("-", 1)[1])
    model = model.cuda()
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    samples = max(args.batch * 8, 8192)
    x = torch.rand(samples, features, device="cuda", generator=gen)
    y = torch.randint(0, classes, (samples,), device="cuda", generator=gen)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    loss_fn = nn.CrossEntropyLoss()
    batches = samples // args.batch

    def steps(count):
        for s in range(count):
            lo = (s % batches) * args.batch
            opt.zero_grad(set_to_none=False)
            loss = loss_fn(model(x[lo:lo + args.batch]), y[lo:lo + args.batch])
            loss.backward()
            opt.step()
        return loss

    steps(10)   # warm-up: kernels chosen, optimizer state allocated
    torch.cuda.synchronize()
    ms = timed_ms(lambda: steps(args.steps), args.repeats)
    print(json.dumps({"samples_per_s": args.steps * args.batch / (ms * 1e-3),
                      "model": args.model, "batch": args.batch, "steps": args.steps,
                      "tf32": args.tf32, "torch": torch.__version__,
                      "device": torch.cuda.get_device_name()}), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    g = sub.add_parser("gemm", help="FP32 and TF32 SGEMM TFLOP/s on an N x N x N product")
    g.add_argument("--size", type=int, default=8192)
    t = sub.add_parser("train", help="MLP training samples/s on one GPU")
    t.add_argument("--model", default="mlp:784-256-128-10")
    t.add_argument("--batch", type=int, default=1024)
    t.add_argument("--steps", type=int, default=200)
    t.add_argument("--lr", type=float, default=0.02)
    t.add_argument("--momentum", type=float, default=0.9)
    t.add_argument("--tf32", action="store_true")
    for s in (g, t):
        s.add_argument("--seed", type=int, default=1)
        s.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("torch_gpu: PyTorch sees no CUDA device")
    if args.what == "gemm":
        if args.size < 1:
            raise SystemExit(f"torch_gpu: --size {args.size}: must be at least 1")
        gemm(args)
    else:
        if args.batch < 1 or args.steps < 1:
            raise SystemExit("torch_gpu: --batch and --steps must be at least 1")
        train(args)


if __name__ == "__main__":
    main()
