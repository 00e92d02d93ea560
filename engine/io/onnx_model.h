#pragma once

// ONNX models in the engine: a `.onnx` file read, checked and normalised (OnnxDocument), then,
// once its inputs' shapes are known, turned into the engine's Graph (OnnxDocument::build).
//
// Names (docs/ONNX.md): an ONNX node keeps its name (an unnamed one is `<op_type>_<n>`, n counting
// that op type from 0 in file order) and its op type; its outputs are reported to op hooks as
// `<node>_output<k>` and its inputs as `<node>_input<k>`, k being the ONNX slot. Initializers and
// Constant nodes become variables named as the ONNX value (hidden attribute `__const__`); so does
// each node folded before the run (every input known: shape computations such as Shape → Gather →
// Concat → Reshape), marked with `__folded__` = "<op type> <node name>" as well.

#include "graph/graph.h"
#include "tensor/tensor.h"

#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

namespace opscope {

/// One graph input the user gives (an input without an initializer).
struct OnnxInputInfo {
    std::string name;
    DType dtype = DType::Float32;
    bool rankKnown = false;
    std::vector<int64_t> dims; ///< -1 where the dimension is symbolic or unknown
    std::vector<std::string> symbols; ///< per dimension: its symbolic name ("batch"), or ""
    /// The shape when every dimension is known (else an unknown Shape()).
    Shape staticShape() const;
    /// "(batch, 3, 224, 224)".
    std::string describe() const;
};

/// The engine's form of a model for given input shapes.
struct OnnxGraph {
    Graph graph;
    /// Values of every variable that is not an input: initializers, Constant nodes, folded nodes.
    std::map<std::string, Tensor> constants;
    std::vector<std::string> inputNames; ///< the graph inputs, in the model's order
    std::vector<std::string> outputNames; ///< the ONNX names of the graph outputs, in order
    int foldedNodes = 0; ///< nodes computed while building (every input known)
    /// Inputs whose given values the graph depends on (build's inputValues): other values need
    /// another build.
    std::set<std::string> valueInputs;
};

class OnnxDocument {
public:
    /// Reads `path`, checks it with onnx::checker, upgrades opsets below 7 with ONNX's version
    /// converter and runs ONNX's shape inference. Throws FileError naming the file and what is
    /// wrong: a protobuf parse error, a checker failure, an opset outside 7–17, a domain other than
    /// ONNX's, and every operator the engine lacks with every node that uses it.
    static OnnxDocument read(const std::string& path);
    /// The same for a model held in memory (a built-in sample); `name` stands for the path in
    /// messages. External data is not allowed.
    static OnnxDocument fromBytes(const std::string& bytes, const std::string& name);

    const std::string& path() const;
    int opset() const;
    int64_t irVersion() const;
    std::string producer() const;
    const std::vector<OnnxInputInfo>& inputs() const;
    std::vector<std::string> outputs() const;
    size_t nodeCount() const;

    /// The graph for these input shapes (and types; empty: the declared ones), one per inputs().
    /// `inputValues` (by input name) may give inputs' values where an operator needs them before the
    /// run (a Reshape whose shape is a graph input): they stay inputs, and OnnxGraph::valueInputs
    /// lists those used so. Throws ShapeError naming the input for a shape the model contradicts,
    /// TypeError for another type, GraphError/AttributeError/ShapeError naming the node for a node
    /// that cannot be built.
    OnnxGraph build(const std::vector<Shape>& inputShapes, const std::vector<DType>& inputTypes = {},
        const std::map<std::string, Tensor>& inputValues = {}) const;

    struct Impl;

private:
    static OnnxDocument normalise(std::shared_ptr<Impl> impl, bool fromFile);

    std::shared_ptr<const Impl> m;
};

/// The distinct op types of a model file's nodes in file order, without checking anything (empty
/// when it does not parse): for reports about files the importer refuses.
std::vector<std::string> onnxOpTypes(const std::string& path);

/// True for a path ending in ".onnx" (any case).
bool isOnnxPath(const std::string& path);

} // namespace opscope
