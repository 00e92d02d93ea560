#pragma once

#include "graph/graph.h"

#include <string>
#include <vector>

namespace opscope {

/// A forward graph followed by its backward pass, as one graph the executor runs (MXNet's gradient
/// graph). Every op node on a path from a variable in `wrt` to a head gets a `_backward_<Op>` node
/// named `<node>_backward` in the same block; gradients of an entry used more than once are summed
/// with `elemwise_add` nodes named `<node>_<slot>_grad_sum<k>`.
///
/// Variables: the forward graph's, then one head gradient per forward head, named
/// `<head tensor>_head_grad` (the caller binds ones for a scalar loss, or any gradient it likes).
/// Heads: the forward heads, then the gradient of each variable of `wrt` in that order (a variable no
/// head depends on gets a zero gradient, `<variable>_zero_grad`).
struct GradientGraph {
    Graph graph;
    size_t numForwardHeads = 0;
    std::vector<std::string> headGradNames; ///< the head-gradient variables, by forward head
    std::vector<std::string> wrt;
    /// With `savedForward`: the forward entries the backward nodes read, and the variables that stand
    /// for them (named as the op hook names the tensor, `<node>_<slot>`).
    std::vector<NodeEntry> saved;
    std::vector<std::string> savedNames;
};

/// Builds the gradient graph of `forward` (finalized) for the variables named in `wrt`. Throws
/// GraphError naming the node and its operator when a node on the way has no gradient, or a name of
/// `wrt` that is not a variable of the graph.
///
/// With `savedForward` the result is the backward pass alone: forward op nodes are left out and each
/// forward output a backward node reads becomes a variable (listed in `saved`/`savedNames`), bound to
/// the values a forward run kept (see withExtraHeads); its heads are the gradients only.
GradientGraph buildGradientGraph(const Graph& forward, const std::vector<std::string>& wrt, bool savedForward = false);

/// Whether a node of a gradient graph computes gradients: a `_backward_<Op>` node, a sum of
/// gradients or a zero gradient (marked with the hidden attribute `__grad__`). Its outputs are
/// gradients.
bool isGradientNode(const Node& n);
/// Whether input `k` of `n` is a gradient: an output gradient a `_backward_` node reads (slot
/// `<slot>_grad`), or a term of a gradient sum.
bool isGradientInput(const Node& n, size_t k);

/// The same graph with more heads after its own (e.g. the entries a backward pass reads, so that a
/// forward run keeps them).
Graph withExtraHeads(const Graph& graph, const std::vector<NodeEntry>& extra);

} // namespace opscope
