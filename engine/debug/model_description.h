#pragma once

#include "graph/graph.h"
#include "tensor/shape.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opscope::debug {

/// What a model is, as `opscope-cli info` shows it: built from a loaded model on this machine, or
/// received from a server (remote/). The graph and its inferred shapes; the lines about the file.
struct ModelDescription {
    std::string source; ///< a file, sample:NAME, or a program's own name for its model
    std::vector<std::string> headerLines; ///< "format: …", "note: …", "params: …"
    struct Input {
        std::string name;
        Shape shape; ///< unknown when not given
        std::string hint; ///< for an unknown shape: "(… suggests …, e.g. --input …)"
    };
    std::vector<Input> inputs;
    std::vector<std::string> labelNames;
    std::vector<std::string> classNames;
    std::shared_ptr<const Graph> graph;
    /// Output shapes by node name (empty when the inputs' shapes are unknown).
    std::map<std::string, std::vector<Shape>> shapes;
    /// Parameters (variables that are not inputs), in graph order, with their shapes where known.
    std::vector<std::pair<std::string, Shape>> parameters;

    /// Output `index` of `node`, or an unknown shape.
    Shape shapeOf(const std::string& node, size_t index) const;
};

/// The description of a session's model from the graph and shapes of its last run (a program that
/// serves its own session has no file to describe). Null graph before the first run.
class Session;
ModelDescription describeSession(const Session& session, const std::string& source);

} // namespace opscope::debug
