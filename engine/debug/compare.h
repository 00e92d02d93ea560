#pragma once

// Comparing two runs of a network tensor by tensor: the metrics of each pair (max absolute and
// relative difference, relative L2, cosine similarity, SQNR, the share of elements beyond the
// tolerance, NaN/Inf on one side only) and the first divergent node, where the runs part ways: the
// earliest op whose output diverges while every input it takes from another op is within the
// tolerance. Variables are not such inputs: a changed weight, or changed data, shows at the node
// that reads it.

#include "graph/graph.h"
#include "tensor/tensor.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opscope::debug {

struct CompareTolerance {
    double rtol = 1e-3;
    double atol = 1e-5;
};

/// The difference of one pair of tensors (B against A).
struct TensorDiff {
    std::string name;
    Shape shapeA, shapeB;
    DType typeA = DType::Float32, typeB = DType::Float32;
    /// Why the pair could not be compared ("shape (2, 3) against (3, 2)"); empty when it was.
    std::string problem;
    double maxAbs = 0; ///< max |a - b| over the elements finite on both sides
    double maxRel = 0; ///< max |a - b| / |a| (elements where a ≠ 0)
    double relL2 = 0; ///< ||a - b|| / ||a|| (0 when both are zero)
    double cosine = 1; ///< a·b / (||a|| ||b||) (1 when both are zero)
    double sqnrDb = 0; ///< 10 log10(||a||² / ||a - b||²), +inf for identical tensors
    double beyond = 0; ///< share of elements with |a - b| > atol + rtol |a|
    int64_t nanOnlyA = 0, nanOnlyB = 0; ///< elements NaN or ±Inf on one side only
    bool diverges = false; ///< beyond the tolerance somewhere, NaN/Inf on one side only, or not comparable
};

/// Compares `b` with `a` element by element (any element types; as double).
TensorDiff compareTensors(const std::string& name, const TensorView& a, const TensorView& b, const CompareTolerance& tol);

/// One run's tensors by op-hook name, in the order the hooks reported them.
struct RecordedRun {
    std::vector<std::string> order;
    std::map<std::string, Tensor> tensors;
    void add(const std::string& name, const TensorView& view);
};

struct Comparison {
    std::vector<TensorDiff> diffs; ///< every tensor of A that B also has, in A's order
    std::vector<std::string> onlyA, onlyB; ///< tensors one side lacks (listed, never dropped)
    /// The first divergent node of A's graph (its name), when there is one.
    std::optional<std::string> firstDivergentNode;
    bool diverges() const;
};

/// Compares run B with run A of `graph` (A's graph; B's tensors matched by name). Tensors are
/// A's op-hook names (`<node>_<slot>`, inputs recorded with monitor_all).
Comparison compareRuns(const Graph& graph, const RecordedRun& a, const RecordedRun& b, const CompareTolerance& tol);

} // namespace opscope::debug
