// BatchNorm, with MXNet 1.x's CPU semantics (src/operator/nn/batch_norm.cc and the MKLDNN kernel):
// - Inference (not training, or use_global_stats): normalise with moving_mean and moving_var.
// - Training (RunContext::training && !use_global_stats): normalise with the batch mean and the
//   biased batch variance, and update the auxiliary states in place:
//       moving_mean = moving_mean * momentum + batch_mean * (1 - momentum)
//       moving_var  = moving_var  * momentum + batch_var  * (1 - momentum)   (biased batch_var)
//   MXNet does this update in the backward pass (from the saved inverse std); here the forward pass
//   does it, with the same formula (a training forward need not be followed by a backward), and
//   the gradient does not update them again.
// - Output `mean` is the mean used (batch or moving); output `var` is, as in MXNet 1.x, the
//   *inverse standard deviation* 1/sqrt(var + eps) of the variance used (batch or moving), not the
//   variance itself. MXNet's special case is kept: a zero batch variance with eps == 0 gives 0.
// - fix_gamma: gamma is read as 1. (MXNet also overwrites the gamma array with ones; the input is
//   left untouched here.)
// - Any channel axis, negative allowed; the data is seen as (outer, channels, inner).

#include "ops/dnnl/dnnl_common.h"
#include "ops/nn/norm_util.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <Eigen/Core>
#include <cmath>
#include <unordered_map>

namespace opscope {

namespace {

using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

struct BatchNormParams : OpParams {
    double eps = 1e-3;
    float momentum = 0.9f;
    bool fixGamma = true;
    bool useGlobalStats = false;
    bool outputMeanVar = false;
    int64_t axis = 1;
};

ParamsPtr parseBatchNorm(const AttrMap& attrs)
{
    AttrReader r(attrs, "BatchNorm");
    auto p = std::make_shared<BatchNormParams>();
    p->eps = r.getFloat("eps", 1e-3);
    p->momentum = static_cast<float>(r.getFloat("momentum", 0.9));
    p->fixGamma = r.getBool("fix_gamma", true);
    p->useGlobalStats = r.getBool("use_global_stats", false);
    p->outputMeanVar = r.getBool("output_mean_var", false);
    p->axis = r.getInt("axis", 1);
    // Validated like MXNet, without effect on this engine (no cuDNN, no quantization).
    (void)r.getBool("cudnn_off", false);
    (void)r.getOptionalFloat("min_calib_range");
    (void)r.getOptionalFloat("max_calib_range");
    return p;
}

void inferBatchNorm(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<BatchNormParams>(op);
    static const char* const kParamNames[] = { "gamma", "beta", "moving_mean", "moving_var" };
    if (in[0].ndim() == 0) {
        // Data unknown: the per-channel outputs are still known from any known parameter.
        for (int i = 1; i < 5; ++i) {
            if (in[static_cast<size_t>(i)].ndim() != 0) {
                out[1] = out[2] = in[static_cast<size_t>(i)];
                break;
            }
        }
        return;
    }
    Shape& data = in[0];
    const int axis = normutil::normalizeAxis(p.axis, data, "axis");
    int64_t channels = data[axis];
    for (int i = 1; i < 5 && channels == 0; ++i)
        if (in[static_cast<size_t>(i)].ndim() == 1) channels = in[static_cast<size_t>(i)][0];
    data[axis] = channels;
    for (int i = 1; i < 5; ++i)
        assignShape(in[static_cast<size_t>(i)], Shape { channels }, std::string("input '") + kParamNames[i - 1] + "'");
    out[0] = data;
    out[1] = Shape { channels };
    out[2] = Shape { channels };
}

double inverseStd(double variance, double eps)
{
    // MXNet: "Nobody likes to divide by zero".
    if (variance == 0.0 && eps == 0.0) return 0.0;
    return 1.0 / std::sqrt(variance + eps);
}

/// Moving-statistics update and conversion of the batch variance in `var` (in place) to the
/// inverse std that MXNet outputs. `mean` and `var` hold the batch statistics.
void finishTrainingStats(
    const BatchNormParams& p, const float* mean, float* var, float* movingMean, float* movingVar, int64_t channels)
{
    const float m = p.momentum;
    for (int64_t c = 0; c < channels; ++c) {
        movingMean[c] = movingMean[c] * m + mean[c] * (1.0f - m);
        movingVar[c] = movingVar[c] * m + var[c] * (1.0f - m);
        var[c] = static_cast<float>(inverseStd(var[c], p.eps));
    }
}

class BatchNormReference final : public Kernel {
public:
    BatchNormReference(const BatchNormParams& p, const Shape& data)
        : m_p(p)
        , m_split(normutil::splitAt(data, normutil::normalizeAxis(p.axis, data, "axis")))
        , m_sum(m_split.channels)
        , m_scale(m_split.channels)
        , m_shift(m_split.channels)
    {
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override
    {
        const int64_t channels = m_split.channels;
        const float* x = in[0]->data();
        ArrayMap mean(out[1]->data(), channels);
        ArrayMap invStd(out[2]->data(), channels);
        if (ctx.training && !m_p.useGlobalStats) {
            batchStatistics(x, mean, invStd);
            finishTrainingStats(m_p, mean.data(), invStd.data(), in[3]->data(), in[4]->data(), channels);
        } else {
            mean = ConstArrayMap(in[3]->data(), channels);
            const ConstArrayMap movingVar(in[4]->data(), channels);
            for (int64_t c = 0; c < channels; ++c)
                invStd[c] = static_cast<float>(inverseStd(movingVar[c], m_p.eps));
        }
        // out = (x - mean) * invStd * gamma + beta = x * scale + shift
        if (m_p.fixGamma)
            m_scale = invStd;
        else
            m_scale = invStd * ConstArrayMap(in[1]->data(), channels);
        m_shift = ConstArrayMap(in[2]->data(), channels) - mean * m_scale;
        normalize(x, out[0]->data());
    }

private:
    /// Batch mean into `mean`, biased batch variance into `var` (both per channel).
    void batchStatistics(const float* x, ArrayMap& mean, ArrayMap& var)
    {
        const auto [outer, channels, inner] = m_split;
        const double count = static_cast<double>(outer * inner);
        m_sum.setZero();
        for (int64_t o = 0; o < outer; ++o) {
            const float* block = x + o * channels * inner;
            if (inner == 1)
                m_sum += ConstArrayMap(block, channels).cast<double>();
            else
                for (int64_t c = 0; c < channels; ++c)
                    m_sum[c] += ConstArrayMap(block + c * inner, inner).sum();
        }
        mean = (m_sum / count).cast<float>();
        m_sum.setZero();
        for (int64_t o = 0; o < outer; ++o) {
            const float* block = x + o * channels * inner;
            if (inner == 1)
                m_sum += (ConstArrayMap(block, channels) - mean).square().cast<double>();
            else
                for (int64_t c = 0; c < channels; ++c)
                    m_sum[c] += (ConstArrayMap(block + c * inner, inner) - mean[c]).square().sum();
        }
        var = (m_sum / count).cast<float>();
    }

    void normalize(const float* x, float* y) const
    {
        const auto [outer, channels, inner] = m_split;
        for (int64_t o = 0; o < outer; ++o) {
            const int64_t offset = o * channels * inner;
            if (inner == 1) {
                ArrayMap(y + offset, channels) = ConstArrayMap(x + offset, channels) * m_scale + m_shift;
                continue;
            }
            for (int64_t c = 0; c < channels; ++c)
                ArrayMap(y + offset + c * inner, inner)
                    = ConstArrayMap(x + offset + c * inner, inner) * m_scale[c] + m_shift[c];
        }
    }

    BatchNormParams m_p;
    normutil::AxisSplit m_split;
    Eigen::ArrayXd m_sum;
    Eigen::ArrayXf m_scale;
    Eigen::ArrayXf m_shift;
};

/// oneDNN batch_normalization_forward over the data seen as NCHW (outer, C, inner, 1), which is
/// exactly oneDNN's per-channel normalisation for any MXNet axis. When the channel is innermost
/// (inner == 1) the same memory is described as NHWC, for which oneDNN has a JIT kernel.
class BatchNormDnnl final : public Kernel {
public:
    BatchNormDnnl(const BatchNormParams& p, const Shape& data)
        : m_p(p)
    {
        using namespace dnnl;
        const auto split = normutil::splitAt(data, normutil::normalizeAxis(p.axis, data, "axis"));
        m_channels = split.channels;
        const memory::dims view { split.outer, split.channels, split.inner, 1 };
        const memory::desc dataDesc(
            view, memory::data_type::f32, split.inner == 1 ? memory::format_tag::acdb : memory::format_tag::abcd);
        const memory::desc statDesc = dnnlutil::plainDesc(Shape { split.channels });
        engine& eng = dnnlutil::cpuEngine();

        normalization_flags flags = normalization_flags::use_shift;
        if (!p.fixGamma) flags |= normalization_flags::use_scale;
        const auto eps = static_cast<float>(p.eps);
        const batch_normalization_forward::desc inferDesc(
            prop_kind::forward_inference, dataDesc, eps, flags | normalization_flags::use_global_stats);
        m_inference = batch_normalization_forward(batch_normalization_forward::primitive_desc(inferDesc, eng));
        if (!p.useGlobalStats) {
            const batch_normalization_forward::desc trainDesc(prop_kind::forward_training, dataDesc, eps, flags);
            m_training = batch_normalization_forward(batch_normalization_forward::primitive_desc(trainDesc, eng));
        }

        m_src = memory(dataDesc, eng, DNNL_MEMORY_NONE);
        m_dst = memory(dataDesc, eng, DNNL_MEMORY_NONE);
        m_scale = memory(statDesc, eng, DNNL_MEMORY_NONE);
        m_shift = memory(statDesc, eng, DNNL_MEMORY_NONE);
        m_mean = memory(statDesc, eng, DNNL_MEMORY_NONE);
        m_var = memory(statDesc, eng, DNNL_MEMORY_NONE);
        m_args = { { DNNL_ARG_SRC, m_src }, { DNNL_ARG_DST, m_dst }, { DNNL_ARG_SHIFT, m_shift },
            { DNNL_ARG_MEAN, m_mean }, { DNNL_ARG_VARIANCE, m_var } };
        if (!p.fixGamma) m_args.emplace(DNNL_ARG_SCALE, m_scale);
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override
    {
        m_src.set_data_handle(in[0]->data());
        m_dst.set_data_handle(out[0]->data());
        m_scale.set_data_handle(in[1]->data());
        m_shift.set_data_handle(in[2]->data());
        dnnl::stream& stream = dnnlutil::threadStream();
        float* mean = out[1]->data();
        float* var = out[2]->data();
        if (ctx.training && !m_p.useGlobalStats) {
            // oneDNN writes the batch mean and biased variance straight into the outputs.
            m_mean.set_data_handle(mean);
            m_var.set_data_handle(var);
            m_training.execute(stream, m_args);
            stream.wait();
            finishTrainingStats(m_p, mean, var, in[3]->data(), in[4]->data(), m_channels);
            return;
        }
        m_mean.set_data_handle(in[3]->data());
        m_var.set_data_handle(in[4]->data());
        m_inference.execute(stream, m_args);
        stream.wait();
        const float* movingMean = in[3]->data();
        const float* movingVar = in[4]->data();
        for (int64_t c = 0; c < m_channels; ++c) {
            mean[c] = movingMean[c];
            var[c] = static_cast<float>(inverseStd(movingVar[c], m_p.eps));
        }
    }

    const char* backend() const override { return "dnnl"; }

private:
    BatchNormParams m_p;
    int64_t m_channels = 0;
    dnnl::batch_normalization_forward m_inference;
    dnnl::batch_normalization_forward m_training;
    dnnl::memory m_src, m_dst, m_scale, m_shift, m_mean, m_var;
    std::unordered_map<int, dnnl::memory> m_args;
};

// MXNet's BatchNormBackwardImpl, per channel with x̂ = (x - mean) · invstd:
// - training without use_global_stats: mean and invstd are the batch statistics the forward saved
//   in outputs 1 and 2, and dx = (dy - mean(dy) - x̂ · mean(dy · x̂)) · invstd · gamma;
// - otherwise they come from the moving statistics and dx = dy · invstd · gamma.
// dgamma = Σ dy · x̂ (0 with fix_gamma), dbeta = Σ dy. The gradients of the mean and var outputs are
// blocked (MXNet passes only the output's gradient back), and the moving statistics, auxiliary
// states, get none (zeros when asked). The moving statistics were updated by the forward.
void backwardBatchNorm(const BackwardArgs& a)
{
    const auto& p = paramsAs<BatchNormParams>(a.params);
    for (Tensor* g : a.inGrad)
        if (g) g->fill(0);
    if (!a.outGrad[0]) return;
    const Shape& shape = a.in[0]->shape();
    const auto [outer, channels, inner] = normutil::splitAt(shape, normutil::normalizeAxis(p.axis, shape, "axis"));
    const bool batchStats = a.ctx.training && !p.useGlobalStats;
    const float* x = a.in[0]->data();
    const float* dy = a.outGrad[0]->data();
    float* dx = a.inGrad[0] ? a.inGrad[0]->data() : nullptr;
    float* dgamma = a.inGrad[1] ? a.inGrad[1]->data() : nullptr;
    float* dbeta = a.inGrad[2] ? a.inGrad[2]->data() : nullptr;
    const double count = static_cast<double>(outer * inner);
    for (int64_t c = 0; c < channels; ++c) {
        const double mean = batchStats ? a.out[1]->data()[c] : a.in[3]->data()[c];
        const double invStd = batchStats ? a.out[2]->data()[c] : inverseStd(a.in[4]->data()[c], p.eps);
        const double gamma = p.fixGamma ? 1.0 : a.in[1]->data()[c];
        double sumDy = 0, dot = 0;
        for (int64_t o = 0; o < outer; ++o) {
            const int64_t base = (o * channels + c) * inner;
            for (int64_t i = 0; i < inner; ++i) {
                sumDy += dy[base + i];
                dot += (x[base + i] - mean) * dy[base + i];
            }
        }
        if (dx) {
            const double k = batchStats ? dot * invStd * invStd / count : 0.0;
            const double meanDy = batchStats ? sumDy / count : 0.0;
            const double scale = invStd * gamma;
            for (int64_t o = 0; o < outer; ++o) {
                const int64_t base = (o * channels + c) * inner;
                for (int64_t i = 0; i < inner; ++i)
                    dx[base + i] = static_cast<float>((dy[base + i] - meanDy - (x[base + i] - mean) * k) * scale);
            }
        }
        if (dgamma) dgamma[c] = p.fixGamma ? 0.0f : static_cast<float>(dot * invStd);
        if (dbeta) dbeta[c] = static_cast<float>(sumDy);
    }
}

} // namespace

void registerBatchNorm(OpRegistry& r)
{
    OpDef d;
    d.name = "BatchNorm";
    d.parse = parseBatchNorm;
    d.numInputs = [](const OpParams&) { return 5; };
    d.numOutputs = [](const OpParams&) { return 3; };
    d.numVisibleOutputs = [](const OpParams& p) { return paramsAs<BatchNormParams>(p).outputMeanVar ? 3 : 1; };
    d.nameInputs({ "data", "gamma", "beta", "moving_mean", "moving_var" });
    d.nameOutputs({ "output", "mean", "var" });
    d.auxInputs = [](const OpParams&) { return std::vector<int> { 3, 4 }; };
    d.inferShape = inferBatchNorm;
    d.reference = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        return std::make_unique<BatchNormReference>(paramsAs<BatchNormParams>(p), in[0]);
    };
    d.dnnl = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        try {
            return std::make_unique<BatchNormDnnl>(paramsAs<BatchNormParams>(p), in[0]);
        } catch (const dnnl::error&) {
            return nullptr; // a configuration oneDNN does not implement: the reference kernel runs
        }
    };
    d.dnnlPays = [](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) {
        // oneDNN 2.6 has JIT batch norm only for channel-last (and blocked) layouts; on a plain
        // layout with the channel not innermost (NCHW) it runs its generic ncsp kernel, measured
        // about 9x slower than the Eigen kernel. About four operations per element otherwise.
        const auto& p = paramsAs<BatchNormParams>(op);
        const auto split = normutil::splitAt(in[0], normutil::normalizeAxis(p.axis, in[0], "axis"));
        return split.inner == 1 && 4.0 * static_cast<double>(in[0].size()) >= dnnlutil::kMinFlops;
    };
    d.backward = backwardBatchNorm;
    r.add(std::move(d), { "_npx_batch_norm" });
}

} // namespace opscope
