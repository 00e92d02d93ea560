#pragma once

// Numeric gradient checks for the operators' gradients (tiny-dnn's way: analytic against central
// differences). The loss is L = Σ w·y over every visible output y with fixed random weights w; the
// analytic gradient is the operator's backward with outGrad = w; the numeric one perturbs each
// checked input element by ±eps and evaluates L in double from the float outputs.

#include "exec/invoke.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <cmath>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace opscope::test {

struct GradCheckOptions {
    double eps = 1e-2; ///< perturbation (inputs should keep this far from kinks: relu at 0, max ties)
    double rtol = 1e-2;
    double atol = 1e-3;
    std::vector<bool> wanted; ///< which inputs to check (empty: all); the rest are not asked for
    int maxChecked = 48; ///< elements checked per input (spread over the tensor); the rest are skipped
    bool training = false; ///< RunContext::training for forward and backward
    uint64_t seed = 7; ///< weights w, and the RNG reset before every forward (Dropout's mask stays the same)
};

namespace detail {
inline std::vector<Tensor> forward(
    const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs, const GradCheckOptions& o)
{
    Generator rng(o.seed * 7919 + 1);
    RunContext ctx;
    ctx.training = o.training;
    ctx.rng = &rng;
    return invokeOp(op, attrs, inputs, KernelKind::Reference, &ctx);
}

inline double loss(const std::vector<Tensor>& outs, const std::vector<Tensor>& w, int visible)
{
    double l = 0;
    for (int k = 0; k < visible; ++k)
        for (int64_t i = 0; i < outs[static_cast<size_t>(k)].size(); ++i)
            l += static_cast<double>(w[static_cast<size_t>(k)].at(i)) * outs[static_cast<size_t>(k)].at(i);
    return l;
}
} // namespace detail

/// Checks every wanted input's gradient; the failure message names the input, the element and both values.
inline ::testing::AssertionResult checkGradient(
    const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs, GradCheckOptions o = {})
{
    const OpDef& def = OpRegistry::instance().get(op);
    const ParamsPtr params = def.parse(attrs);
    const int visible = def.visibleOutputs(*params);
    if (o.wanted.empty()) o.wanted.assign(inputs.size(), true);

    const std::vector<Tensor> outs = detail::forward(op, attrs, inputs, o);
    Generator wg(o.seed);
    std::vector<Tensor> w, outGrads(outs.size());
    for (int k = 0; k < static_cast<int>(outs.size()); ++k) {
        w.push_back(Tensor::uniform(outs[static_cast<size_t>(k)].shape(), -1.0f, 1.0f, &wg));
        if (k < visible) outGrads[static_cast<size_t>(k)] = w.back();
    }
    Generator rng(o.seed * 7919 + 1);
    RunContext ctx;
    ctx.training = o.training;
    ctx.rng = &rng;
    const std::vector<Tensor> grads = invokeBackward(op, attrs, inputs, outs, outGrads, o.wanted, &ctx);

    for (size_t i = 0; i < inputs.size(); ++i) {
        if (!o.wanted[i]) {
            if (grads[i].defined())
                return ::testing::AssertionFailure() << op << ": input " << i << " was not asked for";
            continue;
        }
        if (!grads[i].defined() || grads[i].shape() != inputs[i].shape())
            return ::testing::AssertionFailure() << op << ": no gradient of the input's shape for input " << i;
        const int64_t n = inputs[i].size();
        const int64_t stride = std::max<int64_t>(1, n / o.maxChecked);
        for (int64_t e = 0; e < n; e += stride) {
            std::vector<Tensor> plus = inputs, minus = inputs;
            plus[i] = inputs[i].copy();
            minus[i] = inputs[i].copy();
            plus[i].at(e) += static_cast<float>(o.eps);
            minus[i].at(e) -= static_cast<float>(o.eps);
            const double lp = detail::loss(detail::forward(op, attrs, plus, o), w, visible);
            const double lm = detail::loss(detail::forward(op, attrs, minus, o), w, visible);
            // The perturbation actually applied (float rounding of x ± eps).
            const double h = static_cast<double>(plus[i].at(e)) - static_cast<double>(minus[i].at(e));
            const double numeric = (lp - lm) / h;
            const double analytic = grads[i].at(e);
            if (std::fabs(numeric - analytic) > o.atol + o.rtol * std::fabs(numeric))
                return ::testing::AssertionFailure() << op << ": d loss / d input" << i << "[" << e << "] analytic "
                                                     << analytic << " numeric " << numeric;
        }
    }
    return ::testing::AssertionSuccess();
}

} // namespace opscope::test
