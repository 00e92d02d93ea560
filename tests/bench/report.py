#!/usr/bin/python3
"""Runs the benchmark programs once and writes docs/BENCHMARKS.md from their JSON output.

Every figure is a ratio or a difference between benchmarks of the same run, so a noisy machine
moves all of them together. Usage: tests/bench/report.py [BUILD_DIR] (default: build)."""
import datetime
import json
import os
import platform
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
bindir = os.path.join(build, "bin")


def run(name, extra=()):
    exe = os.path.join(bindir, name)
    if not os.path.exists(exe):
        return None
    out = subprocess.run([exe, "--benchmark_format=json", *extra], check=True, capture_output=True, text=True)
    result = {}
    for b in json.loads(out.stdout)["benchmarks"]:
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":  # repeated benchmarks: their median
                name = "/".join(p for p in b["run_name"].split("/")
                                if not p.startswith(("min_time:", "repeats:")))
                result[name] = b
        else:
            result[b["name"]] = b
    return result


def ns(b, clock="real_time"):
    unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
    return b[clock] * unit


def cpu(b):
    """CPU time of the benchmark's thread: steadier than wall time on a shared machine."""
    return ns(b, "cpu_time")


lines = ["# Benchmarks", "",
         "Measured by `tests/bench/report.py` (Google Benchmark programs under tests/bench/) on %s, %s, %d cores, %s." % (
             platform.processor() or platform.machine(), datetime.date.today().isoformat(), os.cpu_count(),
             "Release build"),
         "Figures are ratios or differences within one run; absolute times move with the machine.", ""]

ex = run("bench_executor")
if ex:
    k = ex["BM_Chain_KernelsOnly"]
    lines += ["## Executor cost per op", "",
              "A chain of 128 tiny ops (64 × FullyConnected 16→16 + relu, batch 2). *Kernels only* calls the same "
              "prepared kernels in a plain loop; the executor adds scheduling, observers and (dynamic mode) allocation.",
              "", "| mode | observer | ns per op | vs kernels only | vs no observer |", "|---|---|---|---|---|",
              "| kernels only | — | %.1f | — | — |" % (k["ns_per_op"] * 1e9)]
    for sa in (0, 1):
        base = ex["BM_Chain_Executor/observer:0/static_alloc:%d" % sa]["ns_per_op"] * 1e9
        for obs, label in ((0, "none"), (1, "wants nothing"), (2, "no-op on every op")):
            v = ex["BM_Chain_Executor/observer:%d/static_alloc:%d" % (obs, sa)]["ns_per_op"] * 1e9
            lines.append("| %s | %s | %.1f | %+.1f %% | %s |" % (
                "static_alloc" if sa else "dynamic", label, v, 100 * (v / (k["ns_per_op"] * 1e9) - 1),
                "—" if obs == 0 else "%+.2f %% (%+.1f ns/op)" % (100 * (v / base - 1), v - base)))
    lines += ["", "A no-op observer is called twice per op (before and after).", ""]
    lines += ["## Networks", "", "Forward pass with `static_alloc`; GFLOP/s counts Convolution and FullyConnected "
              "multiply-adds × 2.", "", "| network | batch | kernels | ms per pass | GFLOP/s |", "|---|---|---|---|---|"]
    nets = {}
    for name, b in ex.items():
        if name.startswith("BM_Network/"):
            parts = dict(p.split(":") for p in name.split("/")[1:] if ":" in p)
            key = ("ResNet-18 224×224" if parts["resnet"] == "1" else "LeNet 28×28", int(parts["batch"]),
                   "reference (Eigen)" if parts["reference"] == "1" else "oneDNN")
            nets[key] = b
            lines.append("| %s | %d | %s | %.2f | %.1f |" % (key[0], key[1], key[2], ns(b) / 1e6, b["GFLOPs"]))
    for net in ("LeNet 28×28", "ResNet-18 224×224"):
        for batch in (1, 8):
            a, r = nets.get((net, batch, "oneDNN")), nets.get((net, batch, "reference (Eigen)"))
            if a and r:
                lines.append("")
                lines.append("%s batch %d: oneDNN kernels are %.1f× the reference kernels." % (net, batch, ns(r) / ns(a)))
    lines.append("")

cv = run("bench_conv_vs_onednn")
if cv:
    lines += ["## ResNet-18 convolutions against oneDNN alone", "",
              "Our Convolution kernel (plain NCHW tensors in and out, as the executor uses it) against the same "
              "oneDNN primitive run alone on inputs already in its preferred layout.", "",
              "| shape | batch | ours GFLOP/s | oneDNN alone GFLOP/s | ratio |", "|---|---|---|---|---|"]
    tot = {1: [0, 0], 8: [0, 0]}
    for name, b in cv.items():
        if not name.startswith("BM_Conv_Opscope/"):
            continue
        alone = cv[name.replace("Opscope", "OneDnnAlone")]
        parts = dict(p.split(":") for p in name.split("/")[1:] if ":" in p)
        batch = int(parts["batch"])
        tot[batch][0] += ns(b)
        tot[batch][1] += ns(alone)
        lines.append("| %s | %d | %.1f | %.1f | %.0f %% |" % (parts["shape"], batch, b["GFLOPs"],
                                                           alone["GFLOPs"], 100 * alone["real_time"] / b["real_time"]))
    for batch, (ours, alone) in tot.items():
        if ours:
            lines.append("")
            lines.append("All distinct ResNet-18 convolutions, batch %d: ours reach %.0f %% of oneDNN alone." % (
                batch, 100 * alone / ours))
    lines.append("")

hk = run("bench_hooks")
if hk:
    models = {0: "seed model × 64 Dense(16)", 1: "lenet", 2: "mlp"}
    lines += ["## Op hooks", "", "Median of 3 repetitions, CPU time of the calling thread (the hooks run on it); "
              "ns per hook call = (time with hook − time without) / hook calls.", "",
              "| model | mode | hook | µs per call | hook calls | ns per hook call |",
              "|---|---|---|---|---|---|"]
    for m, mname in models.items():
        for h in (0, 1):
            base = hk["BM_Hooks/model:%d/hybrid:%d/hook:0" % (m, h)]
            for k, kname in ((0, "none"), (1, "no-op"), (2, "no-op, monitor_all")):
                b = hk["BM_Hooks/model:%d/hybrid:%d/hook:%d" % (m, h, k)]
                calls = b.get("hook_calls_per_iter", 0)
                per = (cpu(b) - cpu(base)) / calls if calls else float("nan")
                lines.append("| %s | %s | %s | %.2f | %d | %s |" % (mname, "hybridized" if h else "eager", kname,
                                                                  cpu(b) / 1e3, calls, "—" if k == 0 else "%.1f" % per))
        e = hk["BM_Hooks/model:%d/hybrid:0/hook:0" % m]
        hb = hk["BM_Hooks/model:%d/hybrid:1/hook:0" % m]
        lines.append("| %s | hybridized vs eager | | %.2f× faster | | |" % (mname, cpu(e) / cpu(hb)))
    lines.append("")

db = run("bench_debug")
if db:
    plain, stats = db["BM_PlainSum/real_time"], db["BM_StatsAndHistogram/real_time"]
    lines += ["## Debugger", "", "Statistics (min, max, mean, std, L2, NaN/Inf/zero counts) and a 64-bin histogram of 100 M "
              "floats, against one plain summing pass (Eigen, one thread) over the same memory:", "",
              "| pass | ms | GB/s |", "|---|---|---|",
              "| plain sum | %.1f | %.1f |" % (ns(plain) / 1e6, plain["bytes_per_second"] / 1e9),
              "| statistics + histogram | %.1f | %.1f |" % (ns(stats) / 1e6, stats["bytes_per_second"] / 1e9), "",
              "Statistics + histogram take %.2f× the plain sum." % (ns(stats) / ns(plain)), "",
              "A debug session running `lenet` (start to idle, worker thread hand-off included):", "",
              "| breakpoints | µs per run | vs none |", "|---|---|---|"]
    base = db["BM_LenetSession/0/real_time"]
    for arg, label in ((0, "none"), (1, "node breakpoint, condition never true"), (2, "NaN/Inf watchpoint on every op")):
        b = db["BM_LenetSession/%d/real_time" % arg]
        lines.append("| %s | %.1f | %+.1f %% |" % (label, ns(b) / 1e3, 100 * (ns(b) / ns(base) - 1)))
    lines.append("")

gl = run("bench_graph_layout")
if gl:
    lines += ["## Graph layout", "",
              "Graphviz `dot` on what the graph view lays out (item sizes as the view measures them; a chain of "
              "blocks of 50 relu ops with a skip connection each). A graph of 3,000 ops opens with its blocks "
              "collapsed (GraphModel::expandToFit, at most ~150 items); expanding everything costs this much more:", "",
              "| view | items | ms |", "|---|---|---|"]
    for key, label in (("BM_LayoutOpened3000Ops/real_time", "3,000 ops, as opened"),
                       ("BM_LayoutExpanded150Ops/real_time", "150 ops, expanded"),
                       ("BM_LayoutExpanded450Ops/iterations:3/real_time", "450 ops, expanded"),
                       ("BM_LayoutExpanded3000Ops/iterations:1/real_time", "3,000 ops, expanded")):
        b = gl[key]
        lines.append("| %s | %d | %.1f |" % (label, b["items"], ns(b) / 1e6))
    opened, full = gl["BM_LayoutOpened3000Ops/real_time"], gl["BM_LayoutExpanded3000Ops/iterations:1/real_time"]
    lines += ["", "Opening the 3,000-op graph lays out %.0f× faster than expanding it whole; layouts run off the GUI "
              "thread either way." % (ns(full) / ns(opened)), ""]

out = os.path.join(root, "docs", "BENCHMARKS.md")
os.makedirs(os.path.dirname(out), exist_ok=True)
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
print("wrote", out)
