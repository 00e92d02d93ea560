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

/// A classifier's head compared: the rows whose highest score is the same class in both runs.
struct HeadAgreement {
    std::string name; ///< the head's tensor
    int64_t rows = 0, agree = 0;
};

struct Comparison {
    std::vector<TensorDiff> diffs; ///< every tensor of A that B also has, in A's order
    std::vector<std::string> onlyA, onlyB; ///< tensors one side lacks (listed, never dropped)
    /// The first divergent node of A's graph (its name), when there is one.
    std::optional<std::string> firstDivergentNode;
    /// Top-1 agreement of every head of shape (batch, classes) both runs have.
    std::vector<HeadAgreement> top1;
    /// Some matched tensor diverges, a head's top-1 class differs, or nothing matched at all.
    /// Tensors one side lacks are listed, not counted: a saved run often holds only some.
    bool diverges() const;
    const TensorDiff* find(const std::string& tensor) const;
};

/// What colours a node: one number per matched tensor, 0 for identical tensors (SQNR: +inf).
enum class Metric { MaxAbs, MaxRel, RelL2, Cosine, Sqnr, Beyond };
/// The metric of a pair; NaN/Inf on one side only, or a pair that could not be compared, is the
/// worst value (+inf; for SQNR -inf; for cosine 1 - cosine, 1).
double metricOf(const TensorDiff& d, Metric m);
/// "max_abs", "max_rel", "rel_l2", "cosine" (as 1 - cosine), "sqnr_db", "beyond".
const char* metricName(Metric m);
std::optional<Metric> parseMetric(const std::string& name);

/// A node's divergence: the worst metric over its outputs that both runs have.
struct NodeDivergence {
    std::string node;
    bool matched = false; ///< some output of it was compared (else: unmatched, shown grey)
    double value = 0;
    bool diverges = false;
};
/// Every op node of A's graph in graph order.
std::vector<NodeDivergence> nodeDivergence(const Graph& graph, const Comparison& c, Metric m);

/// The top-1 agreement of A's heads (compareRuns fills Comparison::top1 with it).
std::vector<HeadAgreement> topOneAgreement(const Graph& graph, const RecordedRun& a, const RecordedRun& b);

/// Compares run B with run A of `graph` (A's graph; B's tensors matched by name). Tensors are
/// A's op-hook names (`<node>_<slot>`, inputs recorded with monitor_all).
Comparison compareRuns(const Graph& graph, const RecordedRun& a, const RecordedRun& b, const CompareTolerance& tol);

} // namespace opscope::debug
