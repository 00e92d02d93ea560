#pragma once

// Which nodes of a graph compute in reduced precision (ops/reduced_precision.h): rules naming a
// node, an operator or every node, resolved against the graph.

#include "graph/graph.h"
#include "ops/reduced_precision.h"

#include <string>
#include <vector>

namespace opscope {

struct PrecisionRule {
    /// A node's name, an operator's name (every node of it: "Convolution", "Conv"), or "all".
    std::string target;
    Precision precision = Precision::Float16;
};

/// Each node's precision (by node id; variables Float32). Later rules override earlier ones, and a
/// node named outright overrides its operator's rule. Throws UsageError for a target that is
/// neither a node nor an operator of the graph.
std::vector<Precision> resolvePrecision(const Graph& graph, const std::vector<PrecisionRule>& rules);

} // namespace opscope
