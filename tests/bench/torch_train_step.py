#!/usr/bin/python3
"""One training step of the `lenet` and `mlp` samples in PyTorch, the counterpart of
tests/bench/bench_train.cpp: the same layers and shapes, CrossEntropyLoss, plain SGD (lr 0.01).
A step is zero_grad, forward, loss, backward, optimizer step. After a warm-up, steps run until
--min-time seconds have passed (at least --min-steps); prints the median and mean of their wall
times (time.perf_counter) and the median of the calling thread's CPU times (time.thread_time, the
whole step's work with one thread) as JSON.

Usage: /usr/bin/python3 tests/bench/torch_train_step.py [--threads N] [--batch B] [--min-time S]"""
import argparse
import json
import statistics
import time

import torch
from torch import nn


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 10, 5), nn.Tanh(), nn.MaxPool2d(2),
        nn.Conv2d(10, 25, 5), nn.Tanh(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(400, 20), nn.Tanh(), nn.Linear(20, 10), nn.Tanh())


def mlp():
    return nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 3))


NETS = {"lenet": (lenet, (1, 28, 28), 10), "mlp": (mlp, (2,), 3)}


def time_step(name, batch, min_time, min_steps, warmup):
    make, shape, classes = NETS[name]
    gen = torch.Generator().manual_seed(7)
    net = make()
    x = torch.rand((batch,) + shape, generator=gen) * 2 - 1
    y = torch.randint(0, classes, (batch,), generator=gen)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()

    for _ in range(warmup):
        step()
    times, cpu_times = [], []
    start = time.perf_counter()
    while len(times) < min_steps or time.perf_counter() - start < min_time:
        t0, c0 = time.perf_counter(), time.thread_time()
        step()
        cpu_times.append(time.thread_time() - c0)
        times.append(time.perf_counter() - t0)
    return {"batch": batch, "steps": len(times), "median_ms": statistics.median(times) * 1e3,
            "mean_ms": statistics.fmean(times) * 1e3, "median_cpu_ms": statistics.median(cpu_times) * 1e3}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds of timed steps per network")
    ap.add_argument("--min-steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--nets", default="lenet,mlp")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    result = {"torch": torch.__version__, "threads": torch.get_num_threads(), "nets": {}}
    for name in args.nets.split(","):
        result["nets"][name] = time_step(name, args.batch, args.min_time, args.min_steps, args.warmup)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
