// softmax and log_softmax (MXNet 1.9 src/operator/nn/softmax.cc, log_softmax.cc, softmax-inl.h),
// and the softmax kernels shared with SoftmaxOutput and SoftmaxActivation.

#include "core/error.h"
#include "ops/dnnl/dnnl_common.h"
#include "ops/nn/softmax_kernels.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

namespace opscope {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class SoftmaxReferenceKernel final : public Kernel {
public:
    SoftmaxReferenceKernel(const SoftmaxGeometry& g, float temperature, bool log)
        : m_geom(g)
        , m_invTemp(1.0f / temperature)
        , m_log(log)
        , m_scratch(static_cast<size_t>(g.inner > 1 ? 2 * g.inner : 0))
    {
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        const auto [outer, n, inner] = m_geom;
        if (inner == 1) {
            // Softmax along contiguous rows.
            const Eigen::Map<const RowMatrix> x(in[0]->data(), outer, n);
            Eigen::Map<RowMatrix> y(out[0]->data(), outer, n);
            for (int64_t r = 0; r < outer; ++r) {
                const auto shifted = (x.row(r).array() - x.row(r).maxCoeff()) * m_invTemp;
                if (m_log) {
                    y.row(r).array() = shifted - std::log(shifted.exp().sum());
                } else {
                    y.row(r).array() = shifted.exp();
                    y.row(r) /= y.row(r).sum();
                }
            }
            return;
        }
        // Softmax down the columns of each (n, inner) block, a contiguous row at a time.
        Eigen::Map<Eigen::ArrayXf> colMax(m_scratch.data(), inner);
        Eigen::Map<Eigen::ArrayXf> colSum(m_scratch.data() + inner, inner);
        for (int64_t o = 0; o < outer; ++o) {
            const float* x = in[0]->data() + o * n * inner;
            float* y = out[0]->data() + o * n * inner;
            auto xRow = [&](int64_t i) { return Eigen::Map<const Eigen::ArrayXf>(x + i * inner, inner); };
            auto yRow = [&](int64_t i) { return Eigen::Map<Eigen::ArrayXf>(y + i * inner, inner); };
            colMax = xRow(0);
            for (int64_t i = 1; i < n; ++i)
                colMax = colMax.max(xRow(i));
            colSum.setZero();
            for (int64_t i = 0; i < n; ++i) {
                if (m_log) {
                    yRow(i) = (xRow(i) - colMax) * m_invTemp;
                    colSum += yRow(i).exp();
                } else {
                    yRow(i) = ((xRow(i) - colMax) * m_invTemp).exp();
                    colSum += yRow(i);
                }
            }
            if (m_log)
                colSum = colSum.log();
            else
                colSum = colSum.inverse();
            for (int64_t i = 0; i < n; ++i) {
                if (m_log)
                    yRow(i) -= colSum;
                else
                    yRow(i) *= colSum;
            }
        }
    }

private:
    SoftmaxGeometry m_geom;
    float m_invTemp;
    bool m_log;
    std::vector<float> m_scratch;
};

// ---- softmax / log_softmax --------------------------------------------------------------------

struct SoftmaxParams : OpParams {
    int64_t axis = -1;
    float temperature = 1.0f;
    bool useLength = false;
};

ParamsPtr parseSoftmaxAttrs(const AttrMap& attrs, const char* op, bool lengthAllowed)
{
    AttrReader r(attrs, op);
    auto p = std::make_shared<SoftmaxParams>();
    p->axis = r.getInt("axis", -1);
    if (const auto t = r.getOptionalFloat("temperature")) {
        if (*t == 0.0) r.fail("temperature", "must not be 0");
        p->temperature = static_cast<float>(*t);
    }
    if (const std::string* v = r.raw("dtype"); v && *v != "None")
        r.getEnum("dtype", { "float16", "float32", "float64" }, "");
    if (const std::string* v = r.raw("use_length"); v && *v != "None") p->useLength = r.getBool("use_length", false);
    if (p->useLength && !lengthAllowed) r.fail("use_length", "log_softmax takes no length input");
    return p;
}

int normalizedAxis(int64_t axis, const Shape& d)
{
    if (axis < -d.ndim() || axis >= d.ndim())
        throw ShapeError("input 'data': axis " + std::to_string(axis) + " is out of range for data " + d.str());
    return static_cast<int>(axis < 0 ? axis + d.ndim() : axis);
}

SoftmaxGeometry axisGeometry(const Shape& d, int axis)
{
    return { d.product(0, axis), d[axis], d.product(axis + 1, d.ndim()) };
}

void inferSoftmax(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<SoftmaxParams>(op);
    const Shape& d = in[0];
    if (!d.known()) return;
    const int axis = normalizedAxis(p.axis, d);
    if (p.useLength) {
        // One length per softmax: the data shape without the softmax axis.
        if (d.ndim() < 2)
            throw ShapeError("input 'data': use_length needs data of 2 or more dimensions, got " + d.str());
        Shape lengths;
        for (int i = 0; i < d.ndim(); ++i)
            if (i != axis) lengths.push_back(d[i]);
        assignShape(in[1], lengths, "input 'length'");
    }
    out[0] = d;
}

// softmax with use_length: each softmax covers only its first `length` elements; the rest are 0.
void softmaxWithLength(
    const SoftmaxGeometry& g, float invTemp, std::span<const Tensor* const> in, std::span<Tensor* const> out)
{
    const float* x = in[0]->data();
    const float* len = in[1]->data();
    float* y = out[0]->data();
    for (int64_t o = 0; o < g.outer; ++o) {
        for (int64_t i = 0; i < g.inner; ++i) {
            const int64_t base = o * g.n * g.inner + i;
            const int64_t l = std::clamp<int64_t>(static_cast<int64_t>(len[o * g.inner + i]), 0, g.n);
            float m = -INFINITY;
            for (int64_t j = 0; j < l; ++j)
                m = std::max(m, x[base + j * g.inner]);
            float sum = 0;
            for (int64_t j = 0; j < l; ++j)
                sum += y[base + j * g.inner] = std::exp((x[base + j * g.inner] - m) * invTemp);
            for (int64_t j = 0; j < g.n; ++j)
                y[base + j * g.inner] = j < l ? y[base + j * g.inner] / sum : 0.0f;
        }
    }
}

// The length input is an index (float-encoded integer): no gradient, zeros when asked for.
void backwardSoftmax(const BackwardArgs& a, bool log)
{
    const auto& p = paramsAs<SoftmaxParams>(a.params);
    if (p.useLength && a.inGrad[1]) a.inGrad[1]->fill(0);
    Tensor* gx = a.inGrad[0];
    if (!gx) return;
    if (!a.outGrad[0]) {
        gx->fill(0);
        return;
    }
    const Shape& d = a.in[0]->shape();
    softmaxBackward(axisGeometry(d, normalizedAxis(p.axis, d)), p.temperature, log, a.out[0]->data(),
        a.outGrad[0]->data(), gx->data(), p.useLength ? a.in[1]->data() : nullptr);
}

OpDef softmaxDef(const char* name, bool log)
{
    OpDef def;
    def.name = name;
    def.parse = [name, log](const AttrMap& a) { return parseSoftmaxAttrs(a, name, !log); };
    def.numInputs = [](const OpParams& op) { return paramsAs<SoftmaxParams>(op).useLength ? 2 : 1; };
    def.numOutputs = [](const OpParams&) { return 1; };
    def.inferShape = inferSoftmax;
    def.reference
        = [log](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        const auto& p = paramsAs<SoftmaxParams>(op);
        const SoftmaxGeometry g = axisGeometry(in[0], normalizedAxis(p.axis, in[0]));
        if (p.useLength)
            return lambdaKernel(p, [g](const SoftmaxParams& params, auto in, auto out, RunContext&) {
                softmaxWithLength(g, 1.0f / params.temperature, in, out);
            });
        return makeSoftmaxReferenceKernel(g, p.temperature, log);
    };
    def.dnnl = [log](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) {
        const auto& p = paramsAs<SoftmaxParams>(op);
        if (p.useLength || p.temperature != 1.0f) return std::unique_ptr<Kernel>();
        return makeSoftmaxDnnlKernel(axisGeometry(in[0], normalizedAxis(p.axis, in[0])), log);
    };
    def.dnnlPays = [](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) {
        return softmaxDnnlPays(axisGeometry(in[0], normalizedAxis(paramsAs<SoftmaxParams>(op).axis, in[0])));
    };
    def.backward = [log](const BackwardArgs& a) { backwardSoftmax(a, log); };
    return def;
}

} // namespace

std::unique_ptr<Kernel> makeSoftmaxReferenceKernel(const SoftmaxGeometry& g, float temperature, bool log)
{
    return std::make_unique<SoftmaxReferenceKernel>(g, temperature, log);
}

std::unique_ptr<Kernel> makeSoftmaxDnnlKernel(const SoftmaxGeometry& g, bool log)
{
    // oneDNN 2.6 has a jit softmax only along the innermost axis; its reference implementation for
    // other axes is ~20x slower than the Eigen kernel here.
    if (g.inner != 1) return nullptr;
    try {
        using namespace dnnlutil;
        const auto desc = plainDesc(Shape({ g.outer, g.n, g.inner }));
        const auto kind = dnnl::prop_kind::forward_inference;
        dnnl::primitive primitive = log
            ? dnnl::primitive(dnnl::logsoftmax_forward(dnnl::logsoftmax_forward::primitive_desc({ kind, desc, 1 }, cpuEngine())))
            : dnnl::primitive(dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc({ kind, desc, 1 }, cpuEngine())));
        return std::make_unique<SrcDstKernel>(std::move(primitive), desc, desc);
    } catch (const dnnl::error&) {
        return nullptr;
    }
}

void softmaxBackward(const SoftmaxGeometry& g, float temperature, bool log, const float* y, const float* dy, float* dx,
    const float* lengths)
{
    const double invTemp = 1.0 / static_cast<double>(temperature);
    for (int64_t o = 0; o < g.outer; ++o) {
        for (int64_t i = 0; i < g.inner; ++i) {
            const int64_t base = o * g.n * g.inner + i;
            const int64_t len
                = lengths ? std::clamp<int64_t>(static_cast<int64_t>(lengths[o * g.inner + i]), 0, g.n) : g.n;
            double sum = 0;
            for (int64_t j = 0; j < len; ++j) {
                const int64_t k = base + j * g.inner;
                sum += log ? static_cast<double>(dy[k]) : static_cast<double>(dy[k]) * y[k];
            }
            for (int64_t j = 0; j < g.n; ++j) {
                const int64_t k = base + j * g.inner;
                if (j >= len) {
                    dx[k] = 0.0f;
                    continue;
                }
                const double v = log ? dy[k] - std::exp(static_cast<double>(y[k])) * sum : y[k] * (dy[k] - sum);
                dx[k] = static_cast<float>(v * invTemp);
            }
        }
    }
}

bool softmaxDnnlPays(const SoftmaxGeometry& g)
{
    // max, subtract, exp, sum, divide: about 5 operations per element (exp counted as several).
    return g.inner == 1 && 8.0 * static_cast<double>(g.outer * g.n) >= dnnlutil::kMinFlops;
}

void registerSoftmax(OpRegistry& r)
{
    OpDef softmax = softmaxDef("softmax", false);
    softmax.nameInputs({ "data", "length" }); // the first numInputs: without use_length, one
    softmax.nameOutputs({ "output" });
    r.add(std::move(softmax));

    // MXNet registers input names for log_softmax but no output names (hence `<node>_0`).
    OpDef logSoftmax = softmaxDef("log_softmax", true);
    logSoftmax.nameInputs({ "data" });
    r.add(std::move(logSoftmax));

    registerSoftmaxOutput(r);
}

} // namespace opscope
