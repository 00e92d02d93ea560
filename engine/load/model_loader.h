#pragma once

#include "core/error.h"
#include "gluon/block.h"
#include "graph/graph.h"

#include <string>
#include <vector>

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
    std::vector<std::string> inputNames;
    std::vector<Tensor> defaultInputs; ///< samples only
    std::vector<Shape> inputShapeHints; ///< from `__shape__` where the file gives one (else unknown)
    bool fromFile = false;
    std::string paramsFile;
};

/// `sample:NAME` or a path to `<prefix>-symbol.json`; its parameters are `paramsFile` when given,
/// else `<prefix>-<epoch>.params` beside it with the highest epoch. Throws LoadError.
LoadedModel loadModel(const std::string& spec, const std::string& paramsFile, uint64_t seed);

/// The model's inputs in order: from `--input` specs (UsageError for a name the model lacks,
/// LoadError for a bad file), else the sample's default, else ones of the hinted shape.
std::vector<Tensor> gatherInputs(const LoadedModel& m, const std::vector<std::string>& specs, uint64_t seed);

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
