// LayerNorm, as MXNet 1.x (src/operator/nn/layer_norm.cc): normalises over one axis (default the
// last) with the biased variance, out = (x - mean) / sqrt(var + eps) * gamma + beta, where gamma
// and beta have shape (data.shape[axis],). Outputs `mean` and `std` (std = sqrt(var + eps)) have the
// data's shape with the axis set to 1; they are hidden unless output_mean_var.

#include "ops/dnnl/dnnl_common.h"
#include "ops/nn/norm_util.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <Eigen/Core>
#include <cmath>
#include <unordered_map>
#include <vector>

namespace opscope {

namespace {

using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

struct LayerNormParams : OpParams {
    int64_t axis = -1;
    float eps = 1e-5f;
    bool outputMeanVar = false;
};

ParamsPtr parseLayerNorm(const AttrMap& attrs)
{
    AttrReader r(attrs, "LayerNorm");
    auto p = std::make_shared<LayerNormParams>();
    p->axis = r.getInt("axis", -1);
    p->eps = static_cast<float>(r.getFloat("eps", 1e-5));
    p->outputMeanVar = r.getBool("output_mean_var", false);
    return p;
}

void inferLayerNorm(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<LayerNormParams>(op);
    if (in[0].ndim() == 0) return; // the moments' shape needs the data's rank
    Shape& data = in[0];
    const int axis = normutil::normalizeAxis(p.axis, data, "axis");
    if (data[axis] == 0)
        for (int i = 1; i < 3; ++i)
            if (in[static_cast<size_t>(i)].ndim() == 1) data[axis] = in[static_cast<size_t>(i)][0];
    assignShape(in[1], Shape { data[axis] }, "input 'gamma'");
    assignShape(in[2], Shape { data[axis] }, "input 'beta'");
    Shape moments = data;
    moments[axis] = 1;
    out[0] = data;
    out[1] = moments;
    out[2] = moments;
}

class LayerNormReference final : public Kernel {
public:
    LayerNormReference(const LayerNormParams& p, const Shape& data)
        : m_eps(p.eps)
        , m_split(normutil::splitAt(data, normutil::normalizeAxis(p.axis, data, "axis")))
        , m_acc(m_split.inner > 1 ? m_split.inner : 0)
        , m_invStd(m_split.inner > 1 ? m_split.inner : 0)
    {
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        const auto [outer, channels, inner] = m_split;
        const float* x = in[0]->data();
        float* y = out[0]->data();
        const ConstArrayMap gamma(in[1]->data(), channels);
        const ConstArrayMap beta(in[2]->data(), channels);
        float* meanOut = out[1]->data();
        float* stdOut = out[2]->data();
        for (int64_t o = 0; o < outer; ++o) {
            const float* xb = x + o * channels * inner;
            float* yb = y + o * channels * inner;
            if (inner == 1) {
                // Contiguous channels (the usual last axis): one row at a time.
                const ConstArrayMap row(xb, channels);
                const float mean = row.mean();
                const float stdev = std::sqrt((row - mean).square().mean() + m_eps);
                ArrayMap(yb, channels) = (row - mean) * (1.0f / stdev) * gamma + beta;
                meanOut[o] = mean;
                stdOut[o] = stdev;
                continue;
            }
            // Channels strided by `inner`: statistics for `inner` columns at once.
            ArrayMap mean(meanOut + o * inner, inner);
            ArrayMap stdev(stdOut + o * inner, inner);
            mean.setZero();
            for (int64_t c = 0; c < channels; ++c)
                mean += ConstArrayMap(xb + c * inner, inner);
            mean /= static_cast<float>(channels);
            m_acc.setZero();
            for (int64_t c = 0; c < channels; ++c)
                m_acc += (ConstArrayMap(xb + c * inner, inner) - mean).square();
            stdev = (m_acc / static_cast<float>(channels) + m_eps).sqrt();
            m_invStd = stdev.inverse();
            for (int64_t c = 0; c < channels; ++c)
                ArrayMap(yb + c * inner, inner)
                    = (ConstArrayMap(xb + c * inner, inner) - mean) * m_invStd * gamma[c] + beta[c];
        }
    }

private:
    float m_eps;
    normutil::AxisSplit m_split;
    Eigen::ArrayXf m_acc;
    Eigen::ArrayXf m_invStd;
};

/// oneDNN layer_normalization_forward; oneDNN normalises over the last dimension, so this
/// kernel applies only when the axis is the last one. The data is seen as (outer, C).
class LayerNormDnnl final : public Kernel {
public:
    LayerNormDnnl(const LayerNormParams& p, const Shape& data)
        : m_eps(p.eps)
    {
        using namespace dnnl;
        const auto split = normutil::splitAt(data, data.ndim() - 1);
        m_rows = split.outer;
        const memory::desc dataDesc = dnnlutil::plainDesc(Shape { split.outer, split.channels });
        const memory::desc statDesc = dnnlutil::plainDesc(Shape { split.outer });
        const memory::desc paramDesc = dnnlutil::plainDesc(Shape { split.channels });
        engine& eng = dnnlutil::cpuEngine();
        // forward_training: the only kind that returns the mean and variance it computes.
        const layer_normalization_forward::desc desc(prop_kind::forward_training, dataDesc, statDesc, p.eps,
            normalization_flags::use_scale | normalization_flags::use_shift);
        m_primitive = layer_normalization_forward(layer_normalization_forward::primitive_desc(desc, eng));
        m_src = memory(dataDesc, eng, DNNL_MEMORY_NONE);
        m_dst = memory(dataDesc, eng, DNNL_MEMORY_NONE);
        m_scale = memory(paramDesc, eng, DNNL_MEMORY_NONE);
        m_shift = memory(paramDesc, eng, DNNL_MEMORY_NONE);
        m_mean = memory(statDesc, eng, DNNL_MEMORY_NONE);
        m_var = memory(statDesc, eng, DNNL_MEMORY_NONE);
        m_args = { { DNNL_ARG_SRC, m_src }, { DNNL_ARG_DST, m_dst }, { DNNL_ARG_SCALE, m_scale },
            { DNNL_ARG_SHIFT, m_shift }, { DNNL_ARG_MEAN, m_mean }, { DNNL_ARG_VARIANCE, m_var } };
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        m_src.set_data_handle(in[0]->data());
        m_dst.set_data_handle(out[0]->data());
        m_scale.set_data_handle(in[1]->data());
        m_shift.set_data_handle(in[2]->data());
        m_mean.set_data_handle(out[1]->data());
        m_var.set_data_handle(out[2]->data());
        dnnl::stream& stream = dnnlutil::threadStream();
        m_primitive.execute(stream, m_args);
        stream.wait();
        // oneDNN returns the variance; MXNet outputs sqrt(var + eps).
        ArrayMap stdev(out[2]->data(), m_rows);
        stdev = (stdev + m_eps).sqrt();
    }

    const char* backend() const override { return "dnnl"; }

private:
    float m_eps;
    int64_t m_rows = 0;
    dnnl::layer_normalization_forward m_primitive;
    dnnl::memory m_src, m_dst, m_scale, m_shift, m_mean, m_var;
    std::unordered_map<int, dnnl::memory> m_args;
};

// MXNet's LayerNormGradCompute from the saved mean and std (outputs 1 and 2; the gradients of those
// two outputs are blocked). Per normalised row, with x̂ = (x - mean) / std and g = dy · gamma:
//   dx = (g - mean(g) - x̂ · mean(g · x̂)) / std,  dgamma = Σ_rows dy · x̂,  dbeta = Σ_rows dy.
void backwardLayerNorm(const BackwardArgs& a)
{
    const auto& p = paramsAs<LayerNormParams>(a.params);
    for (Tensor* g : a.inGrad)
        if (g) g->fill(0);
    if (!a.outGrad[0]) return;
    const Shape& shape = a.in[0]->shape();
    const auto [outer, channels, inner] = normutil::splitAt(shape, normutil::normalizeAxis(p.axis, shape, "axis"));
    const float* x = a.in[0]->data();
    const float* gamma = a.in[1]->data();
    const float* dy = a.outGrad[0]->data();
    float* dx = a.inGrad[0] ? a.inGrad[0]->data() : nullptr;
    std::vector<double> dgamma(static_cast<size_t>(channels)), dbeta(static_cast<size_t>(channels));
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
            const int64_t row = o * inner + i;
            const int64_t base = o * channels * inner + i;
            const double mean = a.out[1]->data()[row];
            const double invStd = 1.0 / a.out[2]->data()[row];
            double sumG = 0, sumGx = 0;
            for (int64_t c = 0; c < channels; ++c) {
                const int64_t at = base + c * inner;
                const double xhat = (x[at] - mean) * invStd;
                const double g = static_cast<double>(dy[at]) * gamma[c];
                sumG += g;
                sumGx += g * xhat;
                dgamma[static_cast<size_t>(c)] += dy[at] * xhat;
                dbeta[static_cast<size_t>(c)] += dy[at];
            }
            if (!dx) continue;
            const double meanG = sumG / static_cast<double>(channels);
            const double meanGx = sumGx / static_cast<double>(channels);
            for (int64_t c = 0; c < channels; ++c) {
                const int64_t at = base + c * inner;
                const double xhat = (x[at] - mean) * invStd;
                dx[at] = static_cast<float>((static_cast<double>(dy[at]) * gamma[c] - meanG - xhat * meanGx) * invStd);
            }
        }
    }
    for (int64_t c = 0; c < channels; ++c) {
        if (a.inGrad[1]) a.inGrad[1]->data()[c] = static_cast<float>(dgamma[static_cast<size_t>(c)]);
        if (a.inGrad[2]) a.inGrad[2]->data()[c] = static_cast<float>(dbeta[static_cast<size_t>(c)]);
    }
}

} // namespace

void registerLayerNorm(OpRegistry& r)
{
    OpDef d;
    d.name = "LayerNorm";
    d.parse = parseLayerNorm;
    d.numInputs = [](const OpParams&) { return 3; };
    d.numOutputs = [](const OpParams&) { return 3; };
    d.numVisibleOutputs = [](const OpParams& p) { return paramsAs<LayerNormParams>(p).outputMeanVar ? 3 : 1; };
    d.nameInputs({ "data", "gamma", "beta" });
    d.nameOutputs({ "output", "mean", "std" });
    d.inferShape = inferLayerNorm;
    d.reference = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        return std::make_unique<LayerNormReference>(paramsAs<LayerNormParams>(p), in[0]);
    };
    d.dnnl = [](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        const auto& p = paramsAs<LayerNormParams>(op);
        if (normutil::normalizeAxis(p.axis, in[0], "axis") != in[0].ndim() - 1) return nullptr;
        try {
            return std::make_unique<LayerNormDnnl>(p, in[0]);
        } catch (const dnnl::error&) {
            return nullptr; // a configuration oneDNN does not implement: the reference kernel runs
        }
    };
    d.dnnlPays = [](const OpParams&, std::span<const Shape> in, std::span<const Shape>) {
        // About five operations per element (two moments, scale and shift).
        return 5.0 * static_cast<double>(in[0].size()) >= dnnlutil::kMinFlops;
    };
    d.backward = backwardLayerNorm;
    r.add(std::move(d), { "_npx_layer_norm" });
}

} // namespace opscope
