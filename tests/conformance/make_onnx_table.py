#!/usr/bin/env python3
"""Writes the per-operator table of ONNX conformance results into docs/ONNX.md.

    build/bin/onnx_conformance --json build/onnx-conformance.json
    python3 tests/conformance/make_onnx_table.py build/onnx-conformance.json docs/ONNX.md

The table replaces what lies between the markers <!-- conformance-table --> and
<!-- /conformance-table --> in the document.
"""
import json
import re
import sys
from collections import defaultdict


def snake(op):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op).lower()


def operator_of(test):
    name = test["test"][len("test_"):] if test["test"].startswith("test_") else test["test"]
    best = None
    for op in test.get("ops", []):
        s = snake(op)
        if (name == s or name.startswith(s + "_")) and (best is None or len(s) > len(snake(best))):
            best = op
    if best:
        return best
    ops = test.get("ops", [])
    return ops[0] if ops else "(unreadable model)"


def short_reason(detail):
    d = re.sub(r"^\S+model\.onnx: ", "", detail)
    d = re.sub(r"^test_data_set_\d+: ", "", d)
    d = re.sub(r"node '[^']*' \((\w+)\): ", r"\1: ", d)
    return (d[:110] + "…") if len(d) > 110 else d


def main():
    results = json.load(open(sys.argv[1]))
    doc_path = sys.argv[2]
    rows = defaultdict(lambda: {"pass": 0, "FAIL": 0, "unsupported": 0, "reasons": []})
    for t in results["tests"]:
        key = operator_of(t) if t["suite"] == "node" else t["suite"] + " (whole models)"
        r = rows[key]
        r[t["status"]] += 1
        if t["status"] != "pass":
            reason = short_reason(t["detail"])
            if reason not in r["reasons"]:
                r["reasons"].append(reason)
    lines = ["", f"{results['passed']} passed, {results['failed']} failed, {results['skipped']} skipped "
             f"(of {len(results['tests'])}).", "",
             "| Operator (node tests) or suite | passed | failed | skipped | why not passed |",
             "|---|---:|---:|---:|---|"]
    for key in sorted(rows, key=lambda k: (k.endswith("(whole models)"), k.lower())):
        r = rows[key]
        why = "; ".join(r["reasons"][:2]).replace("|", "\\|")
        if len(r["reasons"]) > 2:
            why += f" (and {len(r['reasons']) - 2} more)"
        lines.append(f"| {key} | {r['pass']} | {r['FAIL']} | {r['unsupported']} | {why} |")
    lines.append("")
    table = "\n".join(lines)
    doc = open(doc_path).read()
    start, end = "<!-- conformance-table -->", "<!-- /conformance-table -->"
    i, j = doc.index(start) + len(start), doc.index(end)
    open(doc_path, "w").write(doc[:i] + table + doc[j:])


if __name__ == "__main__":
    main()
