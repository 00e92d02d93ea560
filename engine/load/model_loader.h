#pragma once

#include "core/error.h"
#include "gluon/block.h"
#include "graph/graph.h"

#include <map>
#include <string>
#include <vector>

namespace opscope {
class OnnxDocument;
}

namespace opscope::load {

/// Failure to load a model, its parameters or an input file (exit status 3).
class LoadError : public Error {
public:
    using Error::Error;
};

/// A model ready to run: a built-in sample or an MXNet `-symbol.json` with its parameters.
struct LoadedModel {
    std::string source;
    std::shared_ptr<gluon::HybridBlock> block;
    /// The inputs a run needs, in the block's order.
    std::vector<std::string> inputNames;
    /// Inputs only a loss reads (SoftmaxOutput's label), after inputNames in the block's order:
    /// inference does not need them, so a run that is not given one fills it with zeros of the shape
    /// inference gives it (withLabels), as MXNet's predictor does.
    std::vector<std::string> labelNames;
    std::vector<Tensor> defaultInputs; ///< samples only
    std::vector<std::string> classNames; ///< what a classifier's outputs mean (samples that name them), by index
    std::vector<Shape> inputShapeHints; ///< from `__shape__` where the file gives one (else unknown)
    /// The element type each of inputNames takes (float32 where the model does not say): a file of
    /// another type is converted to it, with a note (gatherInputs).
    std::vector<DType> inputTypes;
    bool fromFile = false;
    std::string paramsFile;
    std::string format = "mxnet"; ///< "sample", "mxnet" or "onnx"
    std::string description; ///< one line about the file ("ONNX model, opset 13, IR 7, from pytorch 1.13.1")
    std::vector<std::string> notes; ///< what loading assumed (a symbolic dimension taken as 1)
    /// An ONNX model: its document, and the input shapes its block was built for (fitToInputs).
    std::shared_ptr<const OnnxDocument> onnx;
    std::vector<Shape> builtShapes;
    std::map<std::string, Tensor> builtValues; ///< inputs whose values the built graph depends on
    int foldedNodes = 0;
};

/// `sample:NAME` or a path to `<prefix>-symbol.json`; its parameters are `paramsFile` when given,
/// else `<prefix>-<epoch>.params` beside it with the highest epoch. Throws LoadError. Without a
/// parameter file, a model with parameters is an error unless `structureOnly` (then its parameters,
/// told from inputs by their names, have shapes but no values: enough to show it, not to run it).
LoadedModel loadModel(const std::string& spec, const std::string& paramsFile, uint64_t seed, bool structureOnly = false);

/// The model's inputs in order: from `--input` specs (UsageError for a name the model lacks,
/// LoadError for a bad file), else the sample's default, else ones of the hinted shape; then its
/// label inputs, from a spec or else zeros (withLabels; `notes` gets one line per label filled so).
std::vector<Tensor> gatherInputs(const LoadedModel& m, const std::vector<std::string>& specs, uint64_t seed,
    std::vector<std::string>* notes = nullptr);

/// The names the block takes, in order: inputNames, then labelNames.
std::vector<std::string> blockInputNames(const LoadedModel& m);

/// `inputs` (one per inputNames, then optionally one per labelNames, where an undefined tensor
/// means "not given") completed with zeros for every label not given, shaped as shape inference
/// gives it from the other inputs. `notes` gets "input 'softmax_label' is read only by a loss …: zeros
/// of shape (1,)" for each. Throws ShapeError when a label's shape cannot be inferred.
std::vector<Tensor> withLabels(
    const LoadedModel& m, std::vector<Tensor> inputs, std::vector<std::string>* notes = nullptr);

/// A model's graph and, when every input shape is known, the shape of every entry (indexed by
/// Graph::entryId; empty otherwise).
struct ModelGraph {
    std::shared_ptr<const Graph> graph;
    std::vector<Shape> entryShapes;
};

/// Traces the model with `inputShapes` (a SymbolBlock keeps its own graph) and infers the shapes.
/// Throws UsageError when a traced model's input shape is unknown, ShapeError/GraphError from the model.
ModelGraph graphOf(const LoadedModel& m, const std::vector<Shape>& inputShapes);

/// The `.params` file beside a symbol file with the highest epoch ("" when there is none).
std::string findParamsBeside(const std::string& symbolFile);

} // namespace opscope::load
