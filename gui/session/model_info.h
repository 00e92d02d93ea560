#pragma once

#include "debug/model_description.h"
#include "exec/fusion_rules.h"
#include "gluon/block.h"
#include "load/model_loader.h"
#include "graph/graph.h"
#include "tensor/tensor.h"

#include <memory>
#include <string>
#include <vector>

#include <QString>

namespace opscope::gui {

/// A model loaded for the window: the block the session runs, its inputs and its traced graph with
/// the shape of every entry. Built off the GUI thread, then handed over whole (immutable after).
struct ModelInfo {
    QString spec; ///< "sample:lenet", the path of a `-symbol.json` or of a `.onnx`
    QString title; ///< "lenet", "mnist-symbol.json"
    QString description;
    QString weights; ///< samples: "trained weights (…)" or "random weights (from the seed)"
    QString paramsFile;
    std::shared_ptr<gluon::HybridBlock> block;
    std::vector<std::string> inputNames; ///< the inputs a run needs (the inputs panel's rows)
    /// Inputs only a loss reads (SoftmaxOutput's label): not asked for, zeros for a forward run.
    std::vector<std::string> labelNames;
    std::vector<Shape> inputShapes;
    std::vector<Tensor> defaultInputs; ///< samples only
    /// What a classifier's outputs mean, by class index, where the model names them (lenet: "0"…,
    /// fashion: Fashion-MNIST's classes); empty otherwise.
    std::vector<std::string> classNames;
    std::vector<DType> inputTypes; ///< per input (float32 where the model does not say)
    /// An ONNX model: its document and the input shapes its block was built for (withInputShapes
    /// builds it again for others).
    std::shared_ptr<const OnnxDocument> onnx;
    std::vector<Shape> builtShapes;
    std::shared_ptr<const Graph> graph;
    std::vector<Shape> entryShapes; ///< by Graph::entryId; empty when an input shape is unknown
    /// What runs fused (exec/fusion_rules.h) when nothing watches these nodes, as outside the
    /// window (the window watches every node, so each runs on its own here). Empty when a shape
    /// or an element type is unknown.
    std::vector<fusion::Chain> fusionChains;
    int opCount = 0;
    int64_t parameterCount = 0;
    /// The address of the server whose engine runs the model (attached), else empty; no block then.
    QString server;
    bool isSample() const { return spec.startsWith(QStringLiteral("sample:")); }
    bool isRemote() const { return !server.isEmpty(); }
    /// A model on a server: its parameters' names (the block's, here).
    std::vector<std::string> parameterNames;
    std::vector<opscope::Shape> parameterShapes; ///< by parameterNames' order (unknown: no dimensions)
    /// Whether `name` is a parameter of the model (its block's, or as the server described it).
    bool isParameter(const std::string& name) const;
    /// A server's parameter's shape as it described it; no dimensions when unknown.
    opscope::Shape parameterShape(const std::string& name) const;
    /// The model as the engine's loader describes it (for load::withLabels, load::blockInputNames).
    load::LoadedModel loaded() const;
};

using ModelInfoPtr = std::shared_ptr<const ModelInfo>;

/// Loads `spec` (sample:NAME or a `-symbol.json`, its `.params` found beside it), traces it and
/// infers its shapes. Throws opscope::Error with a message naming the file and what failed.
ModelInfoPtr loadModelInfo(const QString& spec, uint64_t seed = 0);

/// A model an engine on a server runs, as its description tells it: the graph, every entry's shape,
/// the inputs and the lines about its file; no block (the weights stay on the server).
ModelInfoPtr remoteModelInfo(const debug::ModelDescription& description, const QString& server);

/// The same model with other input shapes: the graph traced again (a traced model) and every entry's
/// shape inferred. Throws opscope::Error (a shape the model cannot take names the node and shapes).
/// Not while a run uses the block.
ModelInfoPtr withInputShapes(const ModelInfo& model, const std::vector<Shape>& inputShapes);

} // namespace opscope::gui
