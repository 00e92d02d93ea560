// dot and batch_dot (MXNet 1.x src/operator/tensor/dot.cc, dot-inl.h: DotParam, DotShape,
// BatchDotShape). Attributes: transpose_a, transpose_b (False), forward_stype (None; a sparse
// storage hint, accepted and ignored: every tensor here is dense).
//
// dot follows MXNet's N-d rule: 1-D · 1-D is the inner product (shape (1,)); otherwise lhs is
// flattened to a matrix (prod(lhs[:-1]), lhs[-1]) — with transpose_a, (lhs[0], prod(lhs[1:]))
// transposed — and rhs to (rhs[0], prod(rhs[1:])) — with transpose_b, (prod(rhs[:-1]), rhs[-1])
// transposed; the output shape is the lhs's free dimensions followed by the rhs's.
// batch_dot multiplies matching matrices of two N-d (N >= 3) arrays with equal leading dimensions.

#include "core/error.h"
#include "ops/dnnl/dnnl_common.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <Eigen/Core>

namespace opscope {

namespace {
struct DotParams : OpParams {
    bool transposeA = false;
    bool transposeB = false;
    std::string forwardStype = "None";
};

/// One product C(m×n) = op(A) · op(B), `batch` times.
struct Gemm {
    int64_t batch = 1;
    int64_t m = 0, k = 0, n = 0;
};

std::string describe(const char* op, const Shape& l, const Shape& r, const DotParams& p)
{
    return std::string(op) + " of lhs " + l.str() + " and rhs " + r.str() + " (transpose_a=" + boolAttr(p.transposeA)
        + ", transpose_b=" + boolAttr(p.transposeB) + ")";
}

/// MXNet's DotShape. Returns false when a rank is still unknown.
bool dotShape(const DotParams& p, const Shape& l, const Shape& r, Shape& out, Gemm& g)
{
    if (l.ndim() == 0 || r.ndim() == 0) return false;
    if (l.ndim() == 1 && r.ndim() == 1) {
        if (p.transposeA || p.transposeB) throw ShapeError(describe("dot", l, r, p) + ": cannot transpose vectors");
        if (l[0] != 0 && r[0] != 0 && l[0] != r[0])
            throw ShapeError(describe("dot", l, r, p) + ": lengths " + std::to_string(l[0]) + " and "
                + std::to_string(r[0]) + " differ");
        out = Shape({ 1 });
        g = { 1, 1, l[0], 1 };
        return true;
    }
    const bool ta = p.transposeA, tb = p.transposeB;
    const int ln = l.ndim(), rn = r.ndim();
    // Contracted dimension of each side and the free dimensions that reach the output.
    const int64_t kl = ta ? l[0] : l[ln - 1];
    const int64_t kr = tb ? r[rn - 1] : r[0];
    if (kl != 0 && kr != 0 && kl != kr)
        throw ShapeError(describe("dot", l, r, p) + ": contracted dimensions " + std::to_string(kl) + " and "
            + std::to_string(kr) + " differ");
    out = Shape();
    if (ln > 1)
        for (int i = ta ? 1 : 0; i < (ta ? ln : ln - 1); ++i)
            out.push_back(l[i]);
    if (rn > 1)
        for (int i = tb ? 0 : 1; i < (tb ? rn - 1 : rn); ++i)
            out.push_back(r[i]);
    g.batch = 1;
    g.m = ln == 1 ? 1 : (ta ? l.product(1, ln) : l.product(0, ln - 1));
    g.k = kl;
    g.n = rn == 1 ? 1 : (tb ? r.product(0, rn - 1) : r.product(1, rn));
    return true;
}

/// MXNet's BatchDotShape: (B…, M, K) x (B…, K, N) -> (B…, M, N), transposes on the last two axes.
bool batchDotShape(const DotParams& p, const Shape& l, const Shape& r, Shape& out, Gemm& g)
{
    if (l.ndim() == 0 || r.ndim() == 0) return false;
    const int nd = l.ndim();
    if (nd < 3 || r.ndim() != nd)
        throw ShapeError(describe("batch_dot", l, r, p) + ": both inputs must have the same rank, at least 3");
    for (int i = 0; i < nd - 2; ++i)
        if (l[i] != 0 && r[i] != 0 && l[i] != r[i])
            throw ShapeError(describe("batch_dot", l, r, p) + ": leading (batch) dimensions differ");
    const int64_t m = p.transposeA ? l[nd - 1] : l[nd - 2];
    const int64_t kl = p.transposeA ? l[nd - 2] : l[nd - 1];
    const int64_t n = p.transposeB ? r[nd - 2] : r[nd - 1];
    const int64_t kr = p.transposeB ? r[nd - 1] : r[nd - 2];
    if (kl != 0 && kr != 0 && kl != kr)
        throw ShapeError(describe("batch_dot", l, r, p) + ": contracted dimensions " + std::to_string(kl) + " and "
            + std::to_string(kr) + " differ");
    out = Shape();
    for (int i = 0; i < nd - 2; ++i)
        out.push_back(l[i] != 0 ? l[i] : r[i]);
    out.push_back(m);
    out.push_back(n);
    g = { out.product(0, nd - 2), m, kl, n };
    return true;
}

using ShapeFn = bool (*)(const DotParams&, const Shape&, const Shape&, Shape&, Gemm&);

Gemm gemmOf(ShapeFn fn, const DotParams& p, std::span<const Shape> in)
{
    Shape out;
    Gemm g;
    fn(p, in[0], in[1], out, g);
    return g;
}

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void gemmReference(const Gemm& g, bool ta, bool tb, const float* a, const float* b, float* c)
{
    for (int64_t i = 0; i < g.batch; ++i) {
        // Row-major storage: lhs is (m, k), or (k, m) when transposed; rhs (k, n), or (n, k).
        Eigen::Map<const RowMatrix> A(a + i * g.m * g.k, ta ? g.k : g.m, ta ? g.m : g.k);
        Eigen::Map<const RowMatrix> B(b + i * g.k * g.n, tb ? g.n : g.k, tb ? g.k : g.n);
        Eigen::Map<RowMatrix> C(c + i * g.m * g.n, g.m, g.n);
        if (!ta && !tb)
            C.noalias() = A * B;
        else if (ta && !tb)
            C.noalias() = A.transpose() * B;
        else if (!ta && tb)
            C.noalias() = A * B.transpose();
        else
            C.noalias() = A.transpose() * B.transpose();
    }
}

/// Gradients of C = op(A)·op(B) per batch, in the storage layout of each input (MXNet's
/// DotBackward_ / BatchDotBackward_): without transposes dA = dC·Bᵀ and dB = Aᵀ·dC; a transposed
/// operand's gradient is the transpose of that.
void gemmBackward(
    const Gemm& g, bool ta, bool tb, const float* a, const float* b, const float* dc, float* da, float* db)
{
    for (int64_t i = 0; i < g.batch; ++i) {
        Eigen::Map<const RowMatrix> A(a + i * g.m * g.k, ta ? g.k : g.m, ta ? g.m : g.k);
        Eigen::Map<const RowMatrix> B(b + i * g.k * g.n, tb ? g.n : g.k, tb ? g.k : g.n);
        Eigen::Map<const RowMatrix> dC(dc + i * g.m * g.n, g.m, g.n);
        if (da) {
            Eigen::Map<RowMatrix> dA(da + i * g.m * g.k, ta ? g.k : g.m, ta ? g.m : g.k);
            if (!ta && !tb)
                dA.noalias() = dC * B.transpose();
            else if (!ta && tb)
                dA.noalias() = dC * B;
            else if (ta && !tb)
                dA.noalias() = B * dC.transpose();
            else
                dA.noalias() = B.transpose() * dC.transpose();
        }
        if (db) {
            Eigen::Map<RowMatrix> dB(db + i * g.k * g.n, tb ? g.n : g.k, tb ? g.k : g.n);
            if (!ta && !tb)
                dB.noalias() = A.transpose() * dC;
            else if (ta && !tb)
                dB.noalias() = A * dC;
            else if (!ta && tb)
                dB.noalias() = dC.transpose() * A;
            else
                dB.noalias() = dC.transpose() * A.transpose();
        }
    }
}

/// oneDNN matmul on strided plain memory: the transposes are expressed by strides.
class DnnlGemmKernel final : public Kernel {
public:
    DnnlGemmKernel(const Gemm& g, bool ta, bool tb)
    {
        using dims = dnnl::memory::dims;
        const auto f32 = dnnl::memory::data_type::f32;
        m_src = dnnl::memory::desc(
            dims { g.batch, g.m, g.k }, f32, ta ? dims { g.m * g.k, 1, g.m } : dims { g.m * g.k, g.k, 1 });
        m_weights = dnnl::memory::desc(
            dims { g.batch, g.k, g.n }, f32, tb ? dims { g.k * g.n, 1, g.k } : dims { g.k * g.n, g.n, 1 });
        m_dst = dnnl::memory::desc(dims { g.batch, g.m, g.n }, f32, dims { g.m * g.n, g.n, 1 });
        dnnl::matmul::desc desc(m_src, m_weights, m_dst);
        dnnl::matmul::primitive_desc pd(desc, dnnlutil::cpuEngine());
        m_prim = dnnl::matmul(pd);
    }
    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        dnnl::memory src = dnnlutil::wrap(m_src, *in[0]);
        dnnl::memory weights = dnnlutil::wrap(m_weights, *in[1]);
        dnnl::memory dst = dnnlutil::wrap(m_dst, *out[0]);
        dnnl::stream& stream = dnnlutil::threadStream();
        m_prim.execute(stream, { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, weights }, { DNNL_ARG_DST, dst } });
        stream.wait();
    }
    const char* backend() const override { return "dnnl"; }

private:
    dnnl::memory::desc m_src;
    dnnl::memory::desc m_weights;
    dnnl::memory::desc m_dst;
    dnnl::matmul m_prim;
};

OpDef dotOp(const std::string& name, ShapeFn shapeFn)
{
    OpDef d;
    d.name = name;
    d.parse = [name](const AttrMap& attrs) {
        AttrReader reader(attrs, name);
        auto p = std::make_shared<DotParams>();
        p->transposeA = reader.getBool("transpose_a", false);
        p->transposeB = reader.getBool("transpose_b", false);
        p->forwardStype = reader.getEnum("forward_stype", { "None", "default", "row_sparse", "csr" }, "None");
        return p;
    };
    d.numInputs = [](const OpParams&) { return 2; };
    d.numOutputs = [](const OpParams&) { return 1; };
    d.nameInputs({ "lhs", "rhs" });
    d.inferShape = [shapeFn](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        Shape result;
        Gemm g;
        if (shapeFn(paramsAs<DotParams>(p), in[0], in[1], result, g)) assignShape(out[0], result, "output");
    };
    d.reference = [shapeFn](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) {
        const auto& params = paramsAs<DotParams>(p);
        const Gemm g = gemmOf(shapeFn, params, in);
        return lambdaKernel(params,
            [g](const DotParams& params, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                gemmReference(g, params.transposeA, params.transposeB, in[0]->data(), in[1]->data(), out[0]->data());
            });
    };
    d.dnnl
        = [shapeFn](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        const auto& params = paramsAs<DotParams>(p);
        return std::make_unique<DnnlGemmKernel>(gemmOf(shapeFn, params, in), params.transposeA, params.transposeB);
    };
    d.dnnlPays = [shapeFn](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) {
        const Gemm g = gemmOf(shapeFn, paramsAs<DotParams>(p), in);
        return dnnlutil::matrixProductPays(static_cast<double>(g.batch), static_cast<double>(g.m), static_cast<double>(g.k), static_cast<double>(g.n));
    };
    d.backward = [shapeFn](const BackwardArgs& a) {
        const auto& params = paramsAs<DotParams>(a.params);
        Tensor* dl = a.inGrad[0];
        Tensor* dr = a.inGrad[1];
        if (!a.outGrad[0]) {
            if (dl) dl->fill(0);
            if (dr) dr->fill(0);
            return;
        }
        const Shape shapes[] = { a.in[0]->shape(), a.in[1]->shape() };
        const Gemm g = gemmOf(shapeFn, params, shapes);
        gemmBackward(g, params.transposeA, params.transposeB, a.in[0]->data(), a.in[1]->data(), a.outGrad[0]->data(),
            dl ? dl->data() : nullptr, dr ? dr->data() : nullptr);
    };
    return d;
}
} // namespace

void registerDot(OpRegistry& r)
{
    r.add(dotOp("dot", dotShape), { "_sparse_dot" });
    r.add(dotOp("batch_dot", batchDotShape));
}

} // namespace opscope
