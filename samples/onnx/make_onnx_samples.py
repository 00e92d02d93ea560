#!/usr/bin/env python3
"""Exports the built-in ONNX samples (sample:onnx-cnn, sample:onnx-transformer) with PyTorch.

Run with Debian's python3-torch: /usr/bin/python3 samples/onnx/make_onnx_samples.py
The .onnx files are committed and built into the samples library (samples/CMakeLists.txt), so the
window shows an ONNX graph on a machine without PyTorch. Weights are PyTorch's initialisation with
torch.manual_seed(0): the samples are for stepping through, not for predicting.
"""
import json
import os

import numpy as np
import onnx
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
# PyTorch's answers for the tests (tests/cli/onnx_models_test.cpp): an input, the outputs, and some
# modules' outputs with the ONNX name scope of the nodes that compute them.
FIXTURES = os.path.join(HERE, "..", "..", "tests", "fixtures", "onnx", "torch")


class SmallCnn(nn.Module):
    """Two Conv-BatchNorm-ReLU-MaxPool stages and a linear classifier, for 1x28x28 images."""

    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
        self.stage2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.stage2(self.stage1(x)), 1))


class TinyEncoder(nn.Module):
    """Two transformer encoder layers (GELU, LayerNorm, 4 heads) over 8 tokens of width 32, with a
    padding mask, then a mean over the tokens."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(32, 4)

    def forward(self, x, padding_mask):
        return self.head(self.encoder(x, src_key_padding_mask=padding_mask).mean(dim=1))


def export(model, args, names, path, opset, training):
    model.eval()
    torch.onnx.export(model, args, path, input_names=names, output_names=["logits"], opset_version=opset,
                      training=training, do_constant_folding=False)
    onnx.checker.check_model(onnx.load(path))
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print(os.path.basename(path), os.path.getsize(path), "bytes, opset", opset, ":", ", ".join(ops))


def scope_of(module, node_names):
    """The name scope PyTorch 1.13 gives a module's nodes: children of a Sequential repeat the
    parent ("/stage1/stage1.0/"), a ModuleList's do not ("/encoder/layers.0/")."""
    parts = module.split(".")
    dotted = "/" + "/".join(".".join(parts[:i + 1]) for i in range(len(parts))) + "/"
    grouped = []
    for p in parts:
        if p.isdigit() and grouped:
            grouped[-1] += "." + p
        else:
            grouped.append(p)
    for scope in (dotted, "/" + "/".join(grouped) + "/"):
        if any(n.startswith(scope) for n in node_names):
            return scope
    raise ValueError(f"no node of module {module} in the exported graph")


def record(model, name, args, input_names, modules):
    """Writes <name>.<input>.npy, <name>.output.npy and <name>.inter.<module>.npy, and <name>.json
    mapping each module to the ONNX name scope its nodes carry ("/stage1/stage1.0/")."""
    os.makedirs(FIXTURES, exist_ok=True)
    model.eval()
    captured = {}
    hooks = [dict(model.named_modules())[m].register_forward_hook(
        lambda mod, inp, out, m=m: captured.__setitem__(m, (out[0] if isinstance(out, tuple) else out).detach().numpy()))
             for m in modules]
    with torch.no_grad():
        out = model(*args)
    for h in hooks:
        h.remove()
    meta = {"inputs": [], "output": f"{name}.output.npy", "intermediates": []}
    for n, a in zip(input_names, args):
        np.save(os.path.join(FIXTURES, f"{name}.{n}.npy"), a.numpy())
        meta["inputs"].append({"name": n, "file": f"{name}.{n}.npy"})
    np.save(os.path.join(FIXTURES, f"{name}.output.npy"), out.numpy())
    names = [n.name for n in onnx.load(os.path.join(HERE, f"{name}.onnx")).graph.node]
    for m in modules:
        scope = scope_of(m, names)
        np.save(os.path.join(FIXTURES, f"{name}.inter.{m}.npy"), captured[m])
        meta["intermediates"].append({"module": m, "scope": scope, "file": f"{name}.inter.{m}.npy"})
    with open(os.path.join(FIXTURES, f"{name}.json"), "w") as f:
        json.dump(meta, f, indent=1)


def main():
    torch.manual_seed(0)
    cnn = SmallCnn()
    # Batch statistics that are not the identity, so BatchNormalization does something visible.
    with torch.no_grad():
        for bn in (cnn.stage1[1], cnn.stage2[1]):
            bn.running_mean.uniform_(-0.2, 0.2)
            bn.running_var.uniform_(0.5, 1.5)
    # TrainingMode.PRESERVE with the model in eval mode keeps BatchNormalization nodes (not folded
    # into the convolutions), with their running statistics.
    export(cnn, (torch.rand(1, 1, 28, 28),), ["image"], os.path.join(HERE, "cnn.onnx"), 13,
           torch.onnx.TrainingMode.PRESERVE)
    record(cnn, "cnn", (torch.rand(1, 1, 28, 28),), ["image"], ["stage1.0", "stage1.2", "stage2.3"])
    torch.manual_seed(0)
    enc = TinyEncoder()
    mask = torch.zeros(1, 8, dtype=torch.bool)
    mask[0, 6:] = True
    # Traced outside torch.no_grad(), so the unfused attention path is exported.
    export(enc, (torch.randn(1, 8, 32), mask), ["tokens", "padding_mask"], os.path.join(HERE, "transformer.onnx"), 17,
           torch.onnx.TrainingMode.EVAL)
    record(enc, "transformer", (torch.randn(1, 8, 32), mask), ["tokens", "padding_mask"],
           ["encoder.layers.0", "encoder.layers.1"])


if __name__ == "__main__":
    main()
