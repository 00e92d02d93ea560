#include "core/error.h"
#include "ops/dnnl/dnnl_common.h"
#include "ops/dnnl/post_ops.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <cstring>

#include <Eigen/Core>
#include <string>
#include <unordered_map>

namespace opscope {

namespace {

struct FullyConnectedParams : OpParams {
    int64_t numHidden = 0;
    bool noBias = false;
    bool flatten = true;
};

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The data seen as a (rows, inUnits) matrix: flatten keeps axis 0 and folds the rest; without
// flatten the last axis is the one transformed and every other axis is a row.
struct MatrixDims {
    int64_t rows;
    int64_t inUnits;
};

MatrixDims matrixDims(const FullyConnectedParams& p, const Shape& data)
{
    if (p.flatten) return { data[0], data.product(1, data.ndim()) };
    return { data.product(0, data.ndim() - 1), data.dim(-1) };
}

ParamsPtr parseFullyConnected(const AttrMap& attrs)
{
    AttrReader r(attrs, "FullyConnected");
    auto p = std::make_shared<FullyConnectedParams>();
    p->numHidden = r.getInt("num_hidden");
    if (p->numHidden < 1) r.fail("num_hidden", "must be at least 1");
    p->noBias = r.getBool("no_bias", false);
    p->flatten = r.getBool("flatten", true);
    return p;
}

void inferFullyConnected(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<FullyConnectedParams>(op);
    const Shape& data = in[0];
    if (data.ndim() == 0) throw ShapeError("input 'data': shape unknown");
    const MatrixDims m = matrixDims(p, data);
    // An unknown dimension among the folded ones leaves in_units unknown (0, a wildcard).
    bool unitsKnown = true;
    for (int i = p.flatten ? 1 : data.ndim() - 1; i < data.ndim(); ++i)
        unitsKnown = unitsKnown && data[i] != 0;
    assignShape(in[1], Shape { p.numHidden, unitsKnown ? m.inUnits : 0 }, "input 'weight'");
    if (!p.noBias) {
        // MXNet also accepts a (num_hidden, 1) bias.
        if (in[2] != Shape { p.numHidden, 1 }) assignShape(in[2], Shape { p.numHidden }, "input 'bias'");
    }
    Shape output = data;
    if (p.flatten)
        output = Shape { data[0], p.numHidden };
    else
        output[data.ndim() - 1] = p.numHidden;
    out[0] = output;
}

// Y = X · Wᵀ + b with X (rows, inUnits), W (numHidden, inUnits), all row-major.
std::unique_ptr<Kernel> makeReference(const OpParams& op, std::span<const Shape> in, std::span<const Shape>)
{
    const auto& p = paramsAs<FullyConnectedParams>(op);
    const MatrixDims m = matrixDims(p, in[0]);
    return lambdaKernel(p, [m](const FullyConnectedParams& params, auto in, auto out, RunContext&) {
        Eigen::Map<const RowMajorMatrix> x(in[0]->data(), m.rows, m.inUnits);
        Eigen::Map<const RowMajorMatrix> w(in[1]->data(), params.numHidden, m.inUnits);
        Eigen::Map<RowMajorMatrix> y(out[0]->data(), m.rows, params.numHidden);
        y.noalias() = x * w.transpose();
        if (!params.noBias) y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(in[2]->data(), params.numHidden);
    });
}

// oneDNN inner product on the plain 2-D views: the (numHidden, inUnits) weights are already
// in the layout its GEMM implementation reads, so no reorder is needed.
class FullyConnectedDnnl final : public Kernel {
public:
    FullyConnectedDnnl(const FullyConnectedParams& p, const MatrixDims& m)
        : m_params(p)
        , m_dims(m)
    {
        build();
    }

    // Post-ops on the (rows, numHidden) output: per-channel operands along the hidden units.
    bool setPostOps(std::span<const PostOp> ops) override
    {
        if (dnnlutil::PostOpList::takes(ops)) {
            m_post.set(ops, 2, m_params.numHidden);
            try {
                build();
                return true;
            } catch (const dnnl::error&) { // no implementation with these post-ops: none
            }
        }
        if (!m_post.empty()) {
            m_post.set({}, 2, m_params.numHidden);
            build();
        }
        return false;
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        m_src.set_data_handle(in[0]->data());
        m_weights.set_data_handle(in[1]->data());
        if (m_bias) m_bias.set_data_handle(in[2]->data());
        m_dst.set_data_handle(out[0]->data());
        // A residual goes into the destination first; the sum post-op adds what it holds.
        const Tensor* residual = m_post.bind(in, m_params.noBias ? 2 : 3);
        if (residual && residual->data() != out[0]->data())
            std::memcpy(out[0]->data(), residual->data(), static_cast<size_t>(residual->size()) * sizeof(float));
        dnnl::stream& s = dnnlutil::threadStream();
        m_primitive.execute(s, m_args);
        s.wait();
        m_post.finish(*out[0]);
    }

    const char* backend() const override { return "dnnl"; }

private:
    void build()
    {
        using dnnl::memory;
        auto& engine = dnnlutil::cpuEngine();
        const FullyConnectedParams& p = m_params;
        const memory::desc src = dnnlutil::plainDesc(Shape { m_dims.rows, m_dims.inUnits });
        const memory::desc weights = dnnlutil::plainDesc(Shape { p.numHidden, m_dims.inUnits });
        const memory::desc bias = dnnlutil::plainDesc(Shape { p.numHidden });
        const memory::desc dst = dnnlutil::plainDesc(Shape { m_dims.rows, p.numHidden });
        const auto kind = dnnl::prop_kind::forward_inference;
        const auto pd = p.noBias
            ? dnnl::inner_product_forward::primitive_desc({ kind, src, weights, dst }, m_post.attr(), engine)
            : dnnl::inner_product_forward::primitive_desc({ kind, src, weights, bias, dst }, m_post.attr(), engine);
        m_primitive = dnnl::inner_product_forward(pd);
        m_src = memory(src, engine, DNNL_MEMORY_NONE);
        m_weights = memory(weights, engine, DNNL_MEMORY_NONE);
        m_dst = memory(dst, engine, DNNL_MEMORY_NONE);
        m_args = { { DNNL_ARG_SRC, m_src }, { DNNL_ARG_WEIGHTS, m_weights }, { DNNL_ARG_DST, m_dst } };
        m_bias = memory();
        if (!p.noBias) {
            m_bias = memory(bias, engine, DNNL_MEMORY_NONE);
            m_args[DNNL_ARG_BIAS] = m_bias;
        }
        m_post.addArgs(m_args);
    }

    FullyConnectedParams m_params;
    MatrixDims m_dims;
    dnnl::inner_product_forward m_primitive;
    dnnl::memory m_src, m_weights, m_bias, m_dst;
    std::unordered_map<int, dnnl::memory> m_args;
    dnnlutil::PostOpList m_post;
};

std::unique_ptr<Kernel> makeDnnl(const OpParams& op, std::span<const Shape> in, std::span<const Shape>)
{
    const auto& p = paramsAs<FullyConnectedParams>(op);
    const MatrixDims m = matrixDims(p, in[0]);
    if (m.rows == 0 || m.inUnits == 0) return nullptr;
    try {
        return std::make_unique<FullyConnectedDnnl>(p, m);
    } catch (const dnnl::error&) {
        return nullptr; // no oneDNN implementation: the reference kernel runs
    }
}

bool dnnlPays(const OpParams& op, std::span<const Shape> in, std::span<const Shape>)
{
    const auto& p = paramsAs<FullyConnectedParams>(op);
    const MatrixDims m = matrixDims(p, in[0]);
    return dnnlutil::matrixProductPays(1, static_cast<double>(m.rows), static_cast<double>(m.inUnits), static_cast<double>(p.numHidden));
}

// y = x·Wᵀ + b:  dx = dy·W,  dW = dyᵀ·x,  db = Σ_rows dy.
void backwardFullyConnected(const BackwardArgs& a)
{
    const auto& p = paramsAs<FullyConnectedParams>(a.params);
    const MatrixDims m = matrixDims(p, a.in[0]->shape());
    const auto rows = static_cast<Eigen::Index>(m.rows), units = static_cast<Eigen::Index>(m.inUnits);
    const auto hidden = static_cast<Eigen::Index>(p.numHidden);
    if (!a.outGrad[0]) {
        for (Tensor* g : a.inGrad)
            if (g) g->fill(0);
        return;
    }
    const Eigen::Map<const RowMajorMatrix> x(a.in[0]->data(), rows, units);
    const Eigen::Map<const RowMajorMatrix> w(a.in[1]->data(), hidden, units);
    const Eigen::Map<const RowMajorMatrix> dy(a.outGrad[0]->data(), rows, hidden);
    if (a.inGrad[0]) Eigen::Map<RowMajorMatrix>(a.inGrad[0]->data(), rows, units).noalias() = dy * w;
    if (a.inGrad[1]) Eigen::Map<RowMajorMatrix>(a.inGrad[1]->data(), hidden, units).noalias() = dy.transpose() * x;
    if (!p.noBias && a.inGrad.size() > 2 && a.inGrad[2])
        Eigen::Map<Eigen::VectorXf>(a.inGrad[2]->data(), hidden) = dy.colwise().sum().transpose();
}

} // namespace

void registerFullyConnected(OpRegistry& r)
{
    OpDef def;
    def.name = "FullyConnected";
    def.parse = parseFullyConnected;
    def.numInputs = [](const OpParams& p) { return paramsAs<FullyConnectedParams>(p).noBias ? 2 : 3; };
    def.numOutputs = [](const OpParams&) { return 1; };
    def.nameInputs({ "data", "weight", "bias" }); // the first numInputs: no bias, two
    def.nameOutputs({ "output" });
    def.inferShape = inferFullyConnected;
    def.reference = makeReference;
    def.dnnl = makeDnnl;
    def.dnnlPays = dnnlPays;
    def.backward = backwardFullyConnected;
    r.add(std::move(def), { "_sparse_FullyConnected", "_npx_fully_connected" });
}

} // namespace opscope
