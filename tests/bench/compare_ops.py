#!/usr/bin/python3
"""opscope's time per op against ONNX Runtime's on one .onnx file, as a Markdown table.

Runs opscope-cli bench --json (static_shape, fused) and tests/bench/ort_bench.js --ops (ONNX
Runtime's profiler, graph optimisations all) on MODEL, then matches the nodes: ONNX Runtime names
each node after the tensor it writes (`<node>_output_0`, `_nchwc` when it stays in its blocked
layout), opscope reports a fused group under its first node with the rest listed in "fused"; a group
is matched by every one of its nodes whose output ONNX Runtime writes, their times summed (one node
when ONNX Runtime fuses the same ones, two for a 1x1 and a depthwise convolution opscope computes in
one primitive). Rows are sorted by how much longer opscope takes.

Usage: /usr/bin/python3 tests/bench/compare_ops.py --ort DIR MODEL.onnx --input input=1x3x224x224
       [--threads 1] [--repeat 30] [--build build]
Every figure comes from one run of each: compare ratios, not absolute times."""
import argparse
import json
import os
import subprocess
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("model")
ap.add_argument("--ort", required=True, help="folder with node_modules/onnxruntime-node")
ap.add_argument("--input", action="append", required=True)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--repeat", type=int, default=30)
ap.add_argument("--build", default=os.path.join(root, "build"))
args = ap.parse_args()


def written_by(name):
    for suffix in ("_nchwc", "_output_0"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


with tempfile.TemporaryDirectory() as tmp:
    ours_json, theirs_json = os.path.join(tmp, "opscope.json"), os.path.join(tmp, "ort.json")
    inputs = [a for i in args.input for a in ("--input", i)]
    subprocess.run([os.path.join(args.build, "bin", "opscope-cli"), "bench", args.model, "--threads", str(args.threads),
                    "--repeat", str(args.repeat), "--json", ours_json] + inputs, check=True, stdout=subprocess.DEVNULL)
    ort = json.loads(subprocess.run(["node", os.path.join(root, "tests", "bench", "ort_bench.js"), "--ort", args.ort,
                                     args.model, "--threads", str(args.threads), "--repeat", str(args.repeat),
                                     "--ops", theirs_json] + inputs, check=True, capture_output=True, text=True).stdout)
    ours = json.load(open(ours_json))
    theirs = json.load(open(theirs_json))["ops"]

by_output = {written_by(o["node"]): o for o in theirs}
rows, matched = [], set()
for o in ours["ops"]:
    # Every node of the group whose output ONNX Runtime writes (a 1x1 convolution and the
    # depthwise one fused into it are two of its nodes): their times summed.
    names = [o["node"]] + (o.get("fused") or [])
    ts = [by_output[n] for n in names if n in by_output]
    matched.update(t["node"] for t in ts)
    label = "+".join([o["op"]] + o.get("fused_ops", []))
    rows.append((o["self_ms"], sum(t["self_ms"] for t in ts) if ts else None, label, names[-1]))
print(f"{os.path.basename(args.model)}, {args.threads} thread(s): whole pass opscope {ours['median_ms']:.2f} ms, "
      f"ONNX Runtime {ort['median_ms']:.2f} ms ({ours['median_ms'] / ort['median_ms']:.2f}×); "
      f"sum of ops {sum(r[0] for r in rows):.2f} and {sum(t['self_ms'] for t in theirs):.2f} ms\n")
print("| opscope ms | ONNX Runtime ms | ratio | opscope's op | writes |")
print("|---|---|---|---|---|")
for a, b, label, node in sorted(rows, key=lambda r: -(r[0] - (r[1] or 0))):
    print(f"| {a:.3f} | {'-' if b is None else f'{b:.3f}'} | {'-' if not b else f'{a / b:.2f}'} | {label} | `{node}` |")
for t in theirs:
    if t["node"] not in matched:
        print(f"| - | {t['self_ms']:.3f} | - | (ONNX Runtime's {t['op']}) | `{t['node']}` |")
