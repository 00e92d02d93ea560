// SoftmaxOutput (MXNet 1.9 src/operator/softmax_output.cc) and SoftmaxActivation
// (src/operator/nn/softmax_activation.cc). Both are a softmax over an axis chosen by their
// attributes; SoftmaxOutput's label and gradient attributes matter only in backward.

#include "core/error.h"
#include "ops/nn/softmax_kernels.h"
#include "ops/registry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opscope {

namespace {

// ---- SoftmaxOutput ----------------------------------------------------------------------------

struct SoftmaxOutputParams : OpParams {
    float gradScale = 1.0f;
    float ignoreLabel = -1.0f;
    bool multiOutput = false;
    bool useIgnore = false;
    bool preserveShape = false;
    std::string normalization = "null";
    bool outGrad = false;
    float smoothAlpha = 0.0f;
};

ParamsPtr parseSoftmaxOutput(const AttrMap& attrs)
{
    AttrReader r(attrs, "SoftmaxOutput");
    auto p = std::make_shared<SoftmaxOutputParams>();
    p->gradScale = static_cast<float>(r.getFloat("grad_scale", 1.0));
    p->ignoreLabel = static_cast<float>(r.getFloat("ignore_label", -1.0));
    p->multiOutput = r.getBool("multi_output", false);
    p->useIgnore = r.getBool("use_ignore", false);
    p->preserveShape = r.getBool("preserve_shape", false);
    p->normalization = r.getEnum("normalization", { "null", "batch", "valid" }, "null");
    p->outGrad = r.getBool("out_grad", false);
    p->smoothAlpha = static_cast<float>(r.getFloat("smooth_alpha", 0.0));
    if (!(p->smoothAlpha >= 0.0f && p->smoothAlpha <= 1.0f)) r.fail("smooth_alpha", "must be in [0, 1]");
    return p;
}

// MXNet flattens the data to (N, rest) and takes the softmax of each row; multi_output takes it
// over axis 1 of (N, C, rest); preserve_shape over the last axis.
SoftmaxGeometry softmaxOutputGeometry(const SoftmaxOutputParams& p, const Shape& d)
{
    const int64_t size = d.size();
    if (p.multiOutput) return { d[0], d[1], size / (d[0] * d[1]) };
    if (p.preserveShape) return { size / d.dim(-1), d.dim(-1), 1 };
    return { d[0], size / d[0], 1 };
}

void inferSoftmaxOutput(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<SoftmaxOutputParams>(op);
    const Shape& d = in[0];
    if (!d.known()) return;
    if (d.ndim() < 2) throw ShapeError("input 'data': expected 2 or more dimensions (N, C, ...), got " + d.str());
    Shape& label = in[1];
    if (label != d) { // a label of the data's shape holds probabilities
        if (p.multiOutput) {
            // (N, rest), (N, d2, d3, ...) or (N, 1, d2, ...) are all accepted.
            const Shape flat({ d[0], d.size() / (d[0] * d[1]) });
            Shape spatial({ d[0] });
            for (int i = 2; i < d.ndim(); ++i)
                spatial.push_back(d[i]);
            Shape single = d;
            single[1] = 1;
            if (label.ndim() == 0 || !label.known()) {
                assignShape(label, flat, "input 'label'");
            } else if (label != flat && label != spatial && label != single) {
                throw ShapeError(
                    "input 'label': expected " + flat.str() + " or " + spatial.str() + ", got " + label.str());
            }
        } else {
            Shape expected;
            for (int i = 0; i + 1 < d.ndim(); ++i)
                expected.push_back(d[i]);
            assignShape(label, expected, "input 'label'");
        }
    }
    out[0] = d;
}

// A class label as MXNet's SoftmaxGrad reads it: static_cast<int>, truncating toward zero. Values
// no int holds (NaN included) match no class.
int64_t labelClass(float v)
{
    constexpr float kLimit = 2147483648.0f;
    return std::fabs(v) < kLimit ? static_cast<int64_t>(v) : std::numeric_limits<int64_t>::min();
}

// MXNet's SoftmaxOutput backward (softmax_output-inl.h). It ignores the head gradient (null or not)
// and returns the cross-entropy gradient: (softmax − one_hot(label)) · scale, the one-hot
// smoothed by smooth_alpha. A label of the data's shape holds probabilities: (softmax − label) ·
// grad_scale, nothing else applied. Otherwise the labels are class indices, one per softmax (per
// row; for multi_output per (n, position)): an index outside [0, C) subtracts nothing; with
// use_ignore a softmax whose label is ignore_label gets 0. scale is grad_scale divided by the number
// of labels (batch) or of labels other than ignore_label, at least 1 (valid); multi_output also
// divides by the spatial size except with valid, even for null.
void backwardSoftmaxOutput(const BackwardArgs& a)
{
    const auto& p = paramsAs<SoftmaxOutputParams>(a.params);
    if (a.inGrad[1]) a.inGrad[1]->fill(0); // the label gets no gradient
    Tensor* gx = a.inGrad[0];
    if (!gx) return;
    const Tensor& y = *a.out[0];
    const Tensor& label = *a.in[1];
    float* dx = gx->data();
    const int64_t size = y.size();
    if (label.shape() == y.shape()) {
        for (int64_t i = 0; i < size; ++i)
            dx[i] = (y.at(i) - label.at(i)) * p.gradScale;
    } else {
        const SoftmaxGeometry g = softmaxOutputGeometry(p, y.shape());
        const int64_t ignore = labelClass(p.ignoreLabel);
        const float smooth = g.n > 1 ? p.smoothAlpha / static_cast<float>(g.n - 1) : 0.0f;
        // Without multi_output MXNet reads label[row] for each of the `outer` rows (the label may
        // hold more values when the data has more than 2 dimensions; only the first are read).
        for (int64_t o = 0; o < g.outer; ++o) {
            for (int64_t i = 0; i < g.inner; ++i) {
                const int64_t k = labelClass(label.at(o * g.inner + i));
                const int64_t base = o * g.n * g.inner + i;
                const bool ignored = p.useIgnore && k == ignore;
                for (int64_t j = 0; j < g.n; ++j) {
                    const int64_t e = base + j * g.inner;
                    dx[e] = ignored ? 0.0f : y.at(e) - (j == k ? 1.0f - p.smoothAlpha : smooth);
                }
            }
        }
        const int64_t labels = label.size();
        int64_t count = 1;
        if (p.normalization == "batch") {
            // MXNet's label.size(0): the batch for multi_output's (N, positions) view, every label otherwise.
            count = p.multiOutput ? y.shape()[0] : labels;
        } else if (p.normalization == "valid") {
            count = labels;
            for (int64_t i = 0; i < labels; ++i)
                if (labelClass(label.at(i)) == ignore) --count;
            count = std::max<int64_t>(count, 1);
        }
        float scale = p.gradScale;
        if (p.multiOutput && p.normalization != "valid") scale /= static_cast<float>(g.inner);
        scale /= static_cast<float>(count);
        for (int64_t i = 0; i < size; ++i)
            dx[i] *= scale;
    }
    if (p.outGrad) {
        // MXNet 1.x's FGradient hands the backward node only (output, label); with out_grad its
        // SoftmaxOutputGradCompute passes the output where the legacy operator took the head gradient.
        for (int64_t i = 0; i < size; ++i)
            dx[i] *= y.at(i);
    }
}

// ---- SoftmaxActivation ------------------------------------------------------------------------

struct SoftmaxActivationParams : OpParams {
    bool channel = false; // mode: instance (default) or channel
};

ParamsPtr parseSoftmaxActivation(const AttrMap& attrs)
{
    AttrReader r(attrs, "SoftmaxActivation");
    auto p = std::make_shared<SoftmaxActivationParams>();
    p->channel = r.getEnum("mode", { "instance", "channel" }, "instance") == "channel";
    return p;
}

// instance: MXNet's CPU kernel flattens to (size / last, last), a softmax over the last axis
// (one per instance for the usual 2-D data); channel: over axis 1 at every position.
SoftmaxGeometry softmaxActivationGeometry(const SoftmaxActivationParams& p, const Shape& d)
{
    if (p.channel) return { d[0], d[1], d.size() / (d[0] * d[1]) };
    return { d.size() / d.dim(-1), d.dim(-1), 1 };
}

void backwardSoftmaxActivation(const BackwardArgs& a)
{
    Tensor* gx = a.inGrad[0];
    if (!gx) return;
    if (!a.outGrad[0]) {
        gx->fill(0);
        return;
    }
    const SoftmaxGeometry g = softmaxActivationGeometry(paramsAs<SoftmaxActivationParams>(a.params), a.in[0]->shape());
    softmaxBackward(g, 1.0f, false, a.out[0]->data(), a.outGrad[0]->data(), gx->data());
}

template <class P, SoftmaxGeometry (*Geometry)(const P&, const Shape&)> OpDef softmaxLikeDef()
{
    OpDef def;
    def.numOutputs = [](const OpParams&) { return 1; };
    def.nameOutputs({ "output" });
    def.reference = [](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) {
        return makeSoftmaxReferenceKernel(Geometry(paramsAs<P>(op), in[0]), 1.0f, false);
    };
    def.dnnl = [](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) {
        return makeSoftmaxDnnlKernel(Geometry(paramsAs<P>(op), in[0]), false);
    };
    def.dnnlPays = [](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) {
        return softmaxDnnlPays(Geometry(paramsAs<P>(op), in[0]));
    };
    return def;
}

} // namespace

void registerSoftmaxOutput(OpRegistry& r)
{
    OpDef out = softmaxLikeDef<SoftmaxOutputParams, softmaxOutputGeometry>();
    out.name = "SoftmaxOutput";
    out.parse = parseSoftmaxOutput;
    out.numInputs = [](const OpParams&) { return 2; };
    out.nameInputs({ "data", "label" });
    out.labelInputs = [](const OpParams&) { return std::vector<int> { 1 }; };
    out.inferShape = inferSoftmaxOutput;
    out.backward = backwardSoftmaxOutput;
    r.add(std::move(out), { "Softmax" }); // MXNet's deprecated name for it

    // MXNet registers no input names for SoftmaxActivation (hence `<node>_input0`).
    OpDef act = softmaxLikeDef<SoftmaxActivationParams, softmaxActivationGeometry>();
    act.name = "SoftmaxActivation";
    act.parse = parseSoftmaxActivation;
    act.numInputs = [](const OpParams&) { return 1; };
    act.inferShape = [](const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out) {
        const Shape& d = in[0];
        if (!d.known()) return;
        if (paramsAs<SoftmaxActivationParams>(op).channel && d.ndim() < 3)
            throw ShapeError("input 'input0': mode 'channel' needs 3 or more dimensions (N, C, ...), got " + d.str());
        out[0] = d;
    };
    act.backward = backwardSoftmaxActivation;
    r.add(std::move(act));
}

} // namespace opscope
