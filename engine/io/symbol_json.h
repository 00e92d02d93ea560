#pragma once

#include "graph/graph.h"

#include <string>

namespace opscope {

/// MXNet's version stamp written by saveSymbolJson: major×10000 + minor×100 + patch (1.6.0).
constexpr int kSymbolJsonVersion = 10600;

/// Parses an MXNet `-symbol.json` graph, as MXNet 1.x's `LoadLegacyJSON` does, from every version:
/// nnvm files (`attrs`), MXNet 0.9 (`attr`) and MXNet 0.8 (`param` + `attr`, two-element input
/// entries, `backward_source_id`). Like MXNet it turns the legacy attribute keys `ctx_group`,
/// `lr_mult`, `wd_mult`, `force_mirroring`, `mirror_stage` into hidden `__key__` ones (moving an
/// op's `<input>_lr_mult` onto that input variable), and for files older than 0.9 adds the
/// auxiliary inputs the file leaves implicit (BatchNorm's `<node>_moving_mean`, `<node>_moving_var`).
/// `node_row_ptr` and `arg_nodes` are ignored (recomputed). Hidden `__…__` keys stay in Node::attrs.
/// The graph is finalized: nodes unreachable from the heads are dropped and the rest re-sorted into
/// MXNet's depth-first order.
/// Errors name `fileName`, and the node (index in the file and name) where there is one:
/// FileError for malformed JSON (with the byte offset) or a missing/mistyped field, GraphError for
/// an unknown operator, a dangling input, a wrong input count or a cycle, AttributeError for an
/// attribute value the operator cannot parse.
Graph parseSymbolJson(const std::string& text, const std::string& fileName);
/// Reads and parses a `-symbol.json` file (FileError when it cannot be read).
Graph loadSymbolJson(const std::string& path);

/// Writes a finalized graph in MXNet 1.x's own form and layout (dmlc's JSON writer: 2-space
/// indentation, `"key": value, ` separators): `nodes` (op, name, attrs when not empty, inputs as
/// [node, index, version]), `arg_nodes`, `node_row_ptr`, `heads` and
/// `"attrs": {"mxnet_version": ["int", 10600]}`. Operators are written under their canonical names;
/// a node built from an ONNX model under its ONNX op type, with its `__domain__` attribute (parseSymbolJson
/// reads it back as that ONNX operator).
std::string saveSymbolJson(const Graph& graph);

} // namespace opscope
