#!/usr/bin/python3
"""Runs the benchmark programs once and writes docs/BENCHMARKS.md from their JSON output.

Every figure is a ratio or a difference between benchmarks of the same run, so a noisy machine
moves all of them together. Usage: tests/bench/report.py [BUILD_DIR] [--only SECTION] (BUILD_DIR
default: build). With --only train (or compare, conv, hooks, executor), only the "Training step" (or
"Comparing two runs", "ResNet-18 convolutions against oneDNN alone", "Op hooks", "Executor cost per
op") section is measured and replaced in place in docs/BENCHMARKS.md (appended when missing); the other
sections are left as they are."""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("build", nargs="?", default=os.path.join(root, "build"), help="build directory (default: build)")
ap.add_argument("--only", choices=["train", "compare", "conv", "hooks", "executor"],
                help="measure and replace only this section (executor: the cost per op, not the networks)")
args = ap.parse_args()
bindir = os.path.join(args.build, "bin")
TRAIN_THREADS = (1, 2)  # OMP_NUM_THREADS for bench_train and torch.set_num_threads for PyTorch


def want(section):
    return args.only is None or args.only == section


def threads_env(n):
    return dict(os.environ, OMP_NUM_THREADS=str(n))


def run(name, extra=(), env=None, aggregate="median"):
    exe = os.path.join(bindir, name)
    if not os.path.exists(exe):
        return None
    out = subprocess.run([exe, "--benchmark_format=json", *extra], check=True, capture_output=True, text=True,
                         env=env)
    result = {}
    for b in json.loads(out.stdout)["benchmarks"]:
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == aggregate:  # repeated benchmarks: their median (or min)
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

ex = run("bench_executor", ["--benchmark_filter=BM_Chain"] if args.only == "executor" else []) if want("executor") else None
executor = []
if ex:
    k = ex["BM_Chain_KernelsOnly"]
    executor = ["## Executor cost per op", "",
              "A chain of 128 tiny ops (64 × FullyConnected 16→16 + relu, batch 2). *Kernels only* calls the same "
              "prepared kernels in a plain loop; the executor adds scheduling, observers and (dynamic mode) allocation. "
              "Under static_alloc, with nothing watched and no profile, the executor runs a table of the plan's "
              "kernels with what each reads and writes (made with the plan), without the step loop's checks for "
              "observers, timings and allocation.",
              "", "| mode | observer | ns per op | vs kernels only | vs no observer |", "|---|---|---|---|---|",
              "| kernels only | — | %.1f | — | — |" % (k["ns_per_op"] * 1e9)]
    for sa in (0, 1):
        base = ex["BM_Chain_Executor/observer:0/static_alloc:%d" % sa]["ns_per_op"] * 1e9
        for obs, label in ((0, "none"), (1, "wants nothing"), (2, "no-op on every op")):
            v = ex["BM_Chain_Executor/observer:%d/static_alloc:%d" % (obs, sa)]["ns_per_op"] * 1e9
            executor.append("| %s | %s | %.1f | %+.1f %% | %s |" % (
                "static_alloc" if sa else "dynamic", label, v, 100 * (v / (k["ns_per_op"] * 1e9) - 1),
                "—" if obs == 0 else "%+.2f %% (%+.1f ns/op)" % (100 * (v / base - 1), v - base)))
    executor += ["", "A no-op observer is called twice per op (before and after).", ""]
    paired = [(f, ex.get("BM_Chain_Paired/fuse:%d" % f)) for f in (0, 1)]
    if all(b for _, b in paired):
        executor += ["Paired (`BM_Chain_Paired`, median of 5 repetitions): each iteration runs the bare kernels and "
                     "the executor (static_alloc, no observer) over the same chain in alternating order, each timed; "
                     "both halves of a pair run in the same moment of the machine, so other work on it slows both "
                     "alike (the table above runs them apart, with fuse on, and moved by ±10 points between runs "
                     "here). The executor's cost is the median over the repetitions of each one's ratio.", "",
                     "| fuse | nodes fused | kernels only ns per op | executor ns per op | executor's cost |",
                     "|---|---|---|---|---|"]
        for f, b in paired:
            executor.append("| %s | %d | %.1f | %.1f | %+.1f %% |" % (
                "on" if f else "off", b["fused_nodes"], b["kernels_ns_per_op"], b["executor_ns_per_op"],
                b["overhead_pct"]))
        executor.append("")
    lines += executor
if ex and args.only is None:
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

def conv_section():
    cv = run("bench_conv_vs_onednn")
    if not cv:
        return []
    out = ["## ResNet-18 convolutions against oneDNN alone", "",
           "Our Convolution kernel against the same oneDNN primitive run alone on inputs already in its "
           "preferred layout. *Plain*: NCHW tensors in and out, converted around the primitive, as the executor "
           "runs a convolution whose tensors someone sees (a graph input or output, a watched node, a tensor "
           "another kind of kernel reads). *Between convolutions*: input and output in oneDNN's layout, as the "
           "executor keeps a tensor only unwatched convolutions write and read (`Executor::nativeLayout`). Both "
           "keep the weights in oneDNN's layout from run to run and reorder them again only when written since "
           "(`Tensor::version`, a number, not a read of the weights).", "",
           "| shape | batch | plain GFLOP/s | between convolutions GFLOP/s | oneDNN alone GFLOP/s | plain | between |",
           "|---|---|---|---|---|---|---|"]
    tot = {1: [0, 0, 0], 8: [0, 0, 0]}
    for name, b in cv.items():
        if not name.startswith("BM_Conv_Opscope/"):
            continue
        alone = cv[name.replace("Opscope", "OneDnnAlone")]
        native = cv[name.replace("Opscope", "OpscopeNative")]
        parts = dict(p.split(":") for p in name.split("/")[1:] if ":" in p)
        batch = int(parts["batch"])
        tot[batch][0] += ns(b)
        tot[batch][1] += ns(native)
        tot[batch][2] += ns(alone)
        out.append("| %s | %d | %.1f | %.1f | %.1f | %.0f %% | %.0f %% |" % (
            alone.get("label") or parts["shape"], batch, b["GFLOPs"], native["GFLOPs"], alone["GFLOPs"],
            100 * alone["real_time"] / b["real_time"], 100 * alone["real_time"] / native["real_time"]))
    for batch, (plain, between, alone) in tot.items():
        if plain:
            out.append("")
            out.append("All distinct ResNet-18 convolutions, batch %d: ours reach %.0f %% of oneDNN alone plain, "
                       "%.0f %% between convolutions." % (batch, 100 * alone / plain, 100 * alone / between))
    out.append("")
    return out


conv = conv_section() if want("conv") else []
if args.only is None:
    lines += conv

def hooks_section():
    # Interleaved: whatever runs first in a process runs slower (allocator, caches, frequency), which
    # in registration order always hit the same configurations.
    hk = run("bench_hooks", ["--benchmark_enable_random_interleaving=true", "--benchmark_filter=BM_Hooks/"], aggregate="min")
    paired = run("bench_hooks", ["--benchmark_filter=BM_HookPaired/"])
    if not hk:
        return []
    models = {0: "seed model × 64 Dense(16)", 1: "lenet", 2: "mlp"}
    out = ["## Op hooks", "", "Fastest of 9 repetitions (other work on the machine only ever slows one down; "
           "medians moved by a third between runs here), the repetitions of all configurations run interleaved in "
           "random order; "
           "CPU time of the calling thread (the hooks run on it); "
           "ns per hook call = (time with hook − time without) / hook calls. Hybridized means static_alloc; "
           "there a hook on every op leaves nothing to fuse, so its cost per call is taken against the same "
           "plan without a hook (*none, unfused*: `fuse` off); *none* is the default, fused. A few "
           "hook calls against a pass of convolutions (lenet) are below this machine's run-to-run scatter; "
           "the seed model (64 tiny ops) measures the hook's own cost.", "",
           "| model | mode | hook | µs per call | hook calls | ns per hook call |",
           "|---|---|---|---|---|---|"]
    for m, mname in models.items():
        for h in (0, 1):
            base = hk["BM_Hooks/model:%d/hybrid:%d/hook:%d" % (m, h, 3 if h else 0)]
            kinds = ((0, "none"), (3, "none, unfused"), (1, "no-op"), (2, "no-op, monitor_all"))
            for k, kname in kinds if h else kinds[:1] + kinds[2:]:
                b = hk["BM_Hooks/model:%d/hybrid:%d/hook:%d" % (m, h, k)]
                calls = b.get("hook_calls_per_iter", 0)
                per = (cpu(b) - cpu(base)) / calls if calls else float("nan")
                shown = "—" if k in (0, 3) else "%.1f" % per if per >= 0 else "< 0 (noise)"
                out.append("| %s | %s | %s | %.2f | %d | %s |" % (mname, "hybridized" if h else "eager", kname,
                                                                cpu(b) / 1e3, calls, shown))
        e = hk["BM_Hooks/model:%d/hybrid:0/hook:0" % m]
        hb = hk["BM_Hooks/model:%d/hybrid:1/hook:0" % m]
        out.append("| %s | hybridized vs eager | | %.2f× faster | | |" % (mname, cpu(e) / cpu(hb)))
    out.append("")
    if paired:
        out += ["Paired (`BM_HookPaired`, median of 5 repetitions): each iteration runs the model with the no-op hook "
                "and a copy of it without, in alternating order, each call timed; both halves of a pair run in the same "
                "moment of the machine, so other work on it slows both alike. Hybridized: static_alloc, both unfused "
                "(the plan a hook on every op runs).", "",
                "| model | mode | hook | µs with hook | µs without | ns per hook call |",
                "|---|---|---|---|---|---|"]
        for m, mname in models.items():
            for h in (0, 1):
                for a, aname in ((0, "no-op"), (1, "no-op, monitor_all")):
                    b = paired.get("BM_HookPaired/model:%d/hybrid:%d/monitor_all:%d" % (m, h, a))
                    if b:
                        per = b["ns_per_hook_call"]
                        out.append("| %s | %s | %s | %.2f | %.2f | %s |" % (mname, "hybridized" if h else "eager", aname,
                                   b["us_with_hook"], b["us_without"], "%.1f" % per if per >= 0 else "< 0 (noise)"))
        out.append("")
        one = paired.get("BM_HookPaired/model:0/hybrid:1/monitor_all:0")
        every = paired.get("BM_HookPaired/model:0/hybrid:1/monitor_all:1")
        if one and every and one["hook_calls_per_iter"] and every["hook_calls_per_iter"] > one["hook_calls_per_iter"]:
            # Per watched node: the table's checks and the observer's call (L) and h per hook call.
            k = every["hook_calls_per_iter"] / one["hook_calls_per_iter"]
            a, b = one["ns_per_hook_call"], every["ns_per_hook_call"]
            h = (k * b - a) / (k - 1)
            out += ["Without a hook a hybridized block runs its kernels from the plan's table, without the step loop "
                    "(see *Executor cost per op*); a hook's calls join that table beside the kernels of the nodes it "
                    "watches (`Executor::runWatched`, which calls each hook's callback itself: `ExecutionObserver::tensorCalls`), so the "
                    "hybridized figures include the table's checks. On the seed model, where a no-op hook makes one "
                    "call a node and monitor_all %.0f, the two rows split the cost of a watched node into about %.1f ns "
                    "for those checks and the observer's call (L) and %.1f ns for each hook call (h): (one call: %.1f ns) = L + h, "
                    "(%.0f calls: %.0f × %.1f ns) = L + %.0f h." % (k, a - h, h, a, k, k, b, k), ""]
    return out


hooks = hooks_section() if want("hooks") else []
if args.only is None:
    lines += hooks

db = run("bench_debug") if want("debug") else None
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

gl = run("bench_graph_layout") if want("layout") else None
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



def torch_step(threads):
    """tests/bench/torch_train_step.py's JSON, or None when PyTorch is not installed."""
    script = os.path.join(root, "tests", "bench", "torch_train_step.py")
    out = subprocess.run(["/usr/bin/python3", script, "--threads", str(threads)], capture_output=True, text=True,
                         env=threads_env(threads))
    if out.returncode != 0:
        print("torch_train_step.py failed:", out.stderr.strip().splitlines()[-1:], file=sys.stderr)
        return None
    return json.loads(out.stdout)


def train_section():
    load = os.getloadavg()[0]
    runs = {}
    for t in TRAIN_THREADS:
        flt = ".*" if t == 1 else "BM_TrainStep/(lenet|mlp)/"
        tr = run("bench_train", ["--benchmark_filter=" + flt], env=threads_env(t))
        if tr is None:
            return []
        runs[t] = (tr, torch_step(t))
    tr1, th1 = runs[1]
    version = th1["torch"] if th1 else "not installed"
    sec = ["## Training step", "",
           "One training step, batch 64: forward under `autograd::record`, softmax cross-entropy, backward, "
           "`Trainer::step` with plain SGD (lr 0.01) on the hybridized `lenet` and `mlp` samples "
           "(tests/bench/bench_train.cpp), against the same layers and shapes in PyTorch %s (Debian python3-torch; "
           "CrossEntropyLoss, SGD lr 0.01, zero_grad included; tests/bench/torch_train_step.py), run one after the "
           "other. Threads: OMP_NUM_THREADS for opscope, `torch.set_num_threads` (same number) for PyTorch. "
           "Times are medians over the steps: with one thread, of the calling thread's CPU time (all the step's "
           "work runs on it; time spent descheduled by other processes is left out), with two, of wall time. "
           "Ratio = opscope / PyTorch (above 1: opscope is slower). "
           "Load average when the run started: %.1f on %d cores; with another process on a core, two threads "
           "mostly wait for each other and their figures say little." % (version, load, os.cpu_count()), "",
           "| network | batch | threads | clock | opscope ms/step | PyTorch ms/step | ratio |",
           "|---|---|---|---|---|---|---|"]
    for net in ("lenet", "mlp"):
        for t in TRAIN_THREADS:
            tr, th = runs[t]
            key = "median_cpu_ms" if t == 1 else "median_ms"
            ours = tr["BM_TrainStep/%s/min_time:1.000/real_time" % net][key]
            theirs = th["nets"][net][key] if th else None
            sec.append("| %s | 64 | %d | %s | %.3f | %s | %s |" % (
                net, t, "thread CPU" if t == 1 else "wall", ours, "%.3f" % theirs if theirs else "—",
                "%.2f" % (ours / theirs) if theirs else "—"))
    sec.append("")
    eager = ["%s %.2f×" % (net, tr1["BM_TrainStep/%s_eager/min_time:1.000/real_time" % net]["median_cpu_ms"]
                           / tr1["BM_TrainStep/%s/min_time:1.000/real_time" % net]["median_cpu_ms"])
             for net in ("lenet", "mlp")]
    sec += ["Eager (not hybridized) against hybridized opscope, one thread: %s the time per step." % ", ".join(eager),
            ""]
    base = {net: tr1["BM_TrainStep/%s/min_time:1.000/real_time" % net]["median_cpu_ms"] for net in ("lenet", "mlp")}
    dbg = []
    for net, what, label in (("lenet", "plain", "no breakpoint"), ("lenet", "watch", "a `grad naninf` watchpoint"),
                             ("lenet", "record", "recording every output tensor (the window's default)"),
                             ("mlp", "plain", "no breakpoint"), ("mlp", "watch", "a `grad naninf` watchpoint")):
        row = tr1.get("BM_TrainStepSession/%s_%s/min_time:1.000/real_time" % (net, what))
        if row:
            dbg.append("%s with %s %.3f ms (%.2f×)" % (net, label, row["median_cpu_ms"],
                                                       row["median_cpu_ms"] / base[net]))
    if dbg:
        sec += ["The same step as a debug-session run (`Session::startTrainStep`: forward, loss and backward as one "
                "graph on the session's worker, then the update; BM_TrainStepSession; one thread, medians of the "
                "process's CPU time per step, against the autograd step's above): %s. The mlp step is so short "
                "(%.0f µs) that handing it to the worker thread and back weighs as much as the step itself."
                % ("; ".join(dbg), 1000 * base["mlp"]), ""]
    ph = tr1["BM_TrainPhases/lenet/min_time:1.000/real_time"]
    total = ph["forward_ms"] + ph["backward_ms"] + ph["update_ms"]
    sec += ["Where the opscope `lenet` step goes (one thread; medians, ms): forward + loss %.2f (%.0f %%), backward "
            "%.2f (%.0f %%), update %.3f (%.1f %%). By layer (an op hook charging the time between one op's output "
            "and the next to that op, BM_TrainOps; the largest five):" % (
                ph["forward_ms"], 100 * ph["forward_ms"] / total, ph["backward_ms"], 100 * ph["backward_ms"] / total,
                ph["update_ms"], 100 * ph["update_ms"] / total), "",
            "| layer, pass | ms per step | share |", "|---|---|---|"]
    ops = tr1["BM_TrainOps/lenet/min_time:1.000/real_time"]
    layers = {k: v for k, v in ops.items() if k.endswith((" forward", " backward"))}
    layer_total = sum(layers.values())
    for k, v in sorted(layers.items(), key=lambda kv: -kv[1])[:5]:
        sec.append("| %s | %.2f | %.0f %% |" % (k, v, 100 * v / layer_total))
    sec.append("")
    return sec


def compare_section():
    cb = run("bench_compare", env=threads_env(1))
    if not cb:
        return []
    rec, cmp, job = (cb["BM_RecordedRun/min_time:3.000/real_time"], cb["BM_CompareRecordedRuns/min_time:3.000/real_time"],
                     cb["BM_CompareJob/min_time:3.000/real_time"])
    one = cb["BM_CompareTensors/real_time"]
    return ["## Comparing two runs", "",
            "ResNet-50 v1 at batch 1 (tests/bench/bench_compare.cpp, one kernel thread, at least 3 s each): a run with every "
            "op's inputs and outputs recorded (what `diff` and Debug ▸ Compare… run for A and for B), the comparison of "
            "two such runs with every tensor matched (%d tensors, %.0f M elements: the metrics are one vectorised pass "
            "over both tensors, the tensors shared between both cores), and the window's whole job (A and B recorded at "
            "the same time on two threads, then compared):" % (cmp["tensors"], cmp["Melements"]), "",
            "| | ms | vs one recorded run |", "|---|---|---|",
            "| one recorded run | %.1f | 1.00× |" % (ns(rec) / 1e6),
            "| comparing two recorded runs | %.1f | %.2f× |" % (ns(cmp) / 1e6, ns(cmp) / ns(rec)),
            "| the whole job: A and B recorded at once, then compared | %.1f | %.2f× |" % (ns(job) / 1e6, ns(job) / ns(rec)),
            "",
            "The metrics of one pair of 16 M-float tensors take %.1f ms (%.1f GB/s of both tensors read)." % (
                ns(one) / 1e6, one["bytes_per_second"] / 1e9), ""]


out = os.path.join(root, "docs", "BENCHMARKS.md")
os.makedirs(os.path.dirname(out), exist_ok=True)
train = train_section() if want("train") else []
compare = compare_section() if want("compare") else []
# Sections other scripts write (tests/bench/compare_ort.py) are kept as they are.
KEPT = ("## Against ONNX Runtime", "## Where the time goes: ResNet-50", "## The op hook's path in instructions")


def kept_sections(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        doc = f.read().split("\n")
    keep = []
    for heading in KEPT:
        if heading in doc:
            start = doc.index(heading)
            end = next((i for i in range(start + 1, len(doc)) if doc[i].startswith("## ")), len(doc))
            keep += doc[start:end]
    return keep


if args.only is None:
    lines += train
    lines += compare
    lines += kept_sections(out)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
elif train or compare or conv or hooks or executor:
    # Replace the section (up to the next "## " heading) in place, or append it.
    with open(out) as f:
        doc = f.read().split("\n")
    section = train or compare or conv or hooks or executor
    heading = section[0]
    if heading in doc:
        start = doc.index(heading)
        end = next((i for i in range(start + 1, len(doc)) if doc[i].startswith("## ")), len(doc))
        doc[start:end] = section
    else:
        while doc and doc[-1] == "":
            doc.pop()
        doc += [""] + section
    with open(out, "w") as f:
        f.write("\n".join(doc).rstrip("\n") + "\n")
else:
    sys.exit("bench_%s not found in %s" % (args.only, bindir))
print("wrote", out)
