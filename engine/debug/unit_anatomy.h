#pragma once

// How one value of a convolution's or a fully connected layer's output is computed, term by term,
// from the tensors a pause holds (CNN Explainer's view of a convolution, on any model).

#include "graph/graph.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opscope::debug {

/// One input element times one weight.
struct AnatomyTerm {
    int64_t channel = 0; ///< convolution: the input channel; dense: the input unit
    int64_t ky = 0, kx = 0; ///< convolution: the kernel position
    int64_t iy = 0, ix = 0; ///< convolution: the input position (outside the input: padding, input 0)
    bool padding = false;
    float input = 0;
    float weight = 0;
    double product = 0;
};

struct UnitAnatomy {
    std::string node; ///< the operator node
    std::string op;
    std::vector<int64_t> index; ///< the output element explained: (n, c, y, x) or (n, unit)
    /// Convolution: the input channels it reads (one group's) and the kernel's size; every term, in
    /// channel, row, column order. Dense: every input unit's term, largest |product| first.
    std::vector<int64_t> channels;
    int64_t kernelH = 0, kernelW = 0;
    std::vector<AnatomyTerm> terms;
    double sum = 0; ///< Σ products (in double)
    double bias = 0; ///< 0 without a bias (times beta for a Gemm)
    double scale = 1; ///< Gemm's alpha (1 elsewhere): total = scale · sum + bias
    double total = 0;
    float tensorValue = 0; ///< the output tensor's own value at `index`
    /// The activation that alone reads the output ("tanh", "relu", …) and its value of tensorValue;
    /// empty when none.
    std::string activation;
    double activated = 0;
};

/// The anatomy of output element `index` of node `node` (MXNet Convolution or ONNX Conv, 2-D:
/// index (n, c, y, x); MXNet FullyConnected or ONNX Gemm: index (n, unit)) from its input tensors
/// `inputs` (data, weight, bias if any, as the node reads them) and its output. Throws UsageError
/// for another operator, a 1-D or 3-D convolution, an index outside the output, or tensors whose
/// shapes do not fit the node.
UnitAnatomy unitAnatomy(const Graph& graph, uint32_t node, const std::vector<Tensor>& inputs, const Tensor& output,
    const std::vector<int64_t>& index);

/// Whether unitAnatomy explains this node's operator.
bool hasUnitAnatomy(const Node& node);

/// The activation that alone reads `node`'s first output ("relu", "tanh", "sigmoid", "softrelu",
/// "softsign", "leaky:ALPHA"), or nothing.
std::optional<std::string> soleActivation(const Graph& graph, uint32_t node);
/// That activation of v.
double applyActivation(const std::string& activation, double v);

} // namespace opscope::debug
