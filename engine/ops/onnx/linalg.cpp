// ONNX's matrix products: MatMul (NumPy's matmul: 1-D operands promoted, batch dimensions
// broadcast) and Gemm (alpha, beta, transA, transB, an optional C broadcast to the result). float32
// and float64 go through Eigen's GEMM (a float32 Gemm shaped as a FullyConnected layer through
// oneDNN's inner product); the other types through a plain loop. Both take the post-ops
// the executor fuses after them (MatrixEpilogue).

#include "ops/dnnl/dnnl_common.h"
#include "ops/onnx/matrix_epilogue.h"
#include "ops/onnx/float32_kernel.h"
#include "ops/onnx/nn_util.h"
#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

#include <Eigen/Core>

namespace opscope {

using namespace onnx_ops;

namespace {

struct GemmParams : OnnxParams {
    double alpha = 1, beta = 1;
    bool transA = false, transB = false;
};

// C (m×n) = A (m×k) · B (k×n), row-major, with leading dimensions lda, ldb.
template <class T> void matmulRows(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n, bool ta, bool tb)
{
    using Row = Eigen::Matrix<Calc<T>, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        using Map = Eigen::Map<const Row>;
        Eigen::Map<Row> C(c, m, n);
        const Map A(a, ta ? k : m, ta ? m : k), B(b, tb ? n : k, tb ? k : n);
        if (ta && tb) C.noalias() = A.transpose() * B.transpose();
        else if (ta) C.noalias() = A.transpose() * B;
        else if (tb) C.noalias() = A * B.transpose();
        else C.noalias() = A * B;
    } else {
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                Calc<T> acc = 0;
                for (int64_t p = 0; p < k; ++p)
                    acc += load(a[ta ? p * m + i : i * k + p]) * load(b[tb ? j * k + p : p * n + j]);
                c[i * n + j] = store<T>(acc);
            }
    }
}

// A matrix product's kernel: `fn` writes the product from the kernel's own inputs, then the
// post-ops fused after it (a bias, a residual, an activation: MatrixEpilogue) run on the output.
template <class F> std::unique_ptr<Kernel> productKernel(const GemmParams& params, F fn)
{
    struct K final : Kernel {
        K(const GemmParams& p, F f)
            : params(p)
            , fn(std::move(f))
        {
        }
        void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override
        {
            const size_t own = in.size() - epilogue.extraInputs();
            const std::span<const Tensor* const> extra = epilogue.apart(*out[0], in.subspan(own));
            fn(params, in.first(own), out, ctx);
            epilogue.apply(*out[0], extra);
        }
        bool setPostOps(std::span<const PostOp> ops) override { return epilogue.set(ops); }
        GemmParams params;
        F fn;
        MatrixEpilogue epilogue;
    };
    return std::make_unique<K>(params, std::move(fn));
}

struct MatMulGeometry {
    Shape a, b; // promoted to at least 2-D
    Shape batch;
    int64_t m = 0, k = 0, n = 0;
    Shape out;
};

MatMulGeometry matmulGeometry(const Shape& as, const Shape& bs)
{
    if (as.ndim() == 0 || bs.ndim() == 0 || as.isScalar() || bs.isScalar())
        throw ShapeError("MatMul: operands " + as.str() + " and " + bs.str() + " must have at least one dimension");
    MatMulGeometry g;
    g.a = as.ndim() == 1 ? Shape({ 1, as[0] }) : as;
    g.b = bs.ndim() == 1 ? Shape({ bs[0], 1 }) : bs;
    g.m = g.a[g.a.ndim() - 2];
    g.k = g.a[g.a.ndim() - 1];
    g.n = g.b[g.b.ndim() - 1];
    if (g.b[g.b.ndim() - 2] != g.k)
        throw ShapeError("MatMul: " + as.str() + " times " + bs.str() + ": inner dimensions " + std::to_string(g.k)
            + " and " + std::to_string(g.b[g.b.ndim() - 2]) + " differ");
    Shape ba, bb;
    for (int d = 0; d < g.a.ndim() - 2; ++d)
        ba.push_back(g.a[d]);
    for (int d = 0; d < g.b.ndim() - 2; ++d)
        bb.push_back(g.b[d]);
    g.batch = broadcastShapes(ba.ndim() ? ba : Shape::scalar(), bb.ndim() ? bb : Shape::scalar());
    Shape out;
    for (int d = 0; d < g.batch.ndim(); ++d)
        out.push_back(g.batch[d]);
    if (as.ndim() > 1) out.push_back(g.m);
    if (bs.ndim() > 1) out.push_back(g.n);
    g.out = out.ndim() ? out : Shape::scalar();
    return g;
}

void addMatMul(OpRegistry& r)
{
    OpDef def = onnxOp("MatMul");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<GemmParams>();
        OnnxAttrs(attrs, "MatMul").fillBase(*p, 2, 2);
        return p;
    };
    def.inferShape = [](const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out) {
        out[0] = matmulGeometry(in[0], in[1]).out;
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        constexpr DType kTypes[] = { DType::Float32, DType::Float64, DType::Float16, DType::Int64, DType::Int32 };
        requireType(in[0], kTypes, "MatMul", 0);
        requireSameType(in, 0, 1, "MatMul");
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return productKernel(paramsAs<GemmParams>(p),
            [](const GemmParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const MatMulGeometry g = matmulGeometry(in[0]->shape(), in[1]->shape());
                const int64_t batches = g.batch.size();
                Shape ba, bb;
                for (int d = 0; d < g.a.ndim() - 2; ++d)
                    ba.push_back(g.a[d]);
                for (int d = 0; d < g.b.ndim() - 2; ++d)
                    bb.push_back(g.b[d]);
                const std::vector<int64_t> sa = broadcastStrides(ba, g.batch), sb = broadcastStrides(bb, g.batch);
                const std::vector<int64_t> bst = stridesOf(g.batch);
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!std::is_same_v<T, bool>) {
                        const T* a = in[0]->view().dataAs<T>();
                        const T* b = in[1]->view().dataAs<T>();
                        T* c = out[0]->dataAs<T>();
                        for (int64_t i = 0; i < batches; ++i) {
                            int64_t oa = 0, ob = 0, rem = i;
                            for (int d = 0; d < g.batch.ndim(); ++d) {
                                const int64_t idx = rem / bst[static_cast<size_t>(d)];
                                rem %= bst[static_cast<size_t>(d)];
                                oa += idx * sa[static_cast<size_t>(d)];
                                ob += idx * sb[static_cast<size_t>(d)];
                            }
                            matmulRows(a + oa * g.m * g.k, b + ob * g.k * g.n, c + i * g.m * g.n, g.m, g.k, g.n, false, false);
                        }
                    }
                });
            });
    };
    addOnnxOp(r, std::move(def));
}

// A float32 Gemm that is a FullyConnected layer (alpha 1, A as given, B transposed: (N, K) like a
// FullyConnected weight; C absent, or one row (N) or (1, N) with beta 1), as exported CNNs end,
// runs on the engine's FullyConnected oneDNN kernel (an inner product). Other types, and a Gemm
// the executor fuses post-ops into (MatrixEpilogue's), take the reference kernel.
std::unique_ptr<Kernel> gemmAsFullyConnected(const GemmParams& p, std::span<const Shape> in, std::span<const Shape> out)
{
    const bool hasC = in.size() > 2;
    const int64_t n = out[0][1];
    if (p.alpha != 1 || p.transA || !p.transB || n < 1) return nullptr; // (a layer of no units: the reference kernel)
    if (hasC && (p.beta != 1 || (in[2] != Shape({ n }) && in[2] != Shape({ 1, n })))) return nullptr;
    const OpDef& fc = OpRegistry::instance().get("FullyConnected");
    const ParamsPtr params = fc.parse(AttrMap { { "num_hidden", std::to_string(n) }, { "no_bias", hasC ? "False" : "True" },
        { "flatten", "True" } });
    const Shape shapes[] = { in[0], in[1], Shape({ n }) };
    std::unique_ptr<Kernel> k = fc.makeKernel(*params, std::span<const Shape>(shapes, hasC ? 3 : 2), out, KernelKind::Dnnl);
    return k && std::string(k->backend()) == "dnnl" ? std::move(k) : nullptr;
}

void addGemm(OpRegistry& r)
{
    OpDef def = onnxOp("Gemm");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<GemmParams>();
        OnnxAttrs a(attrs, "Gemm");
        a.fillBase(*p, 2, 3);
        p->alpha = a.getFloat("alpha", 1);
        p->beta = a.getFloat("beta", 1);
        p->transA = a.getInt("transA", 0) != 0;
        p->transB = a.getInt("transB", 0) != 0;
        return p;
    };
    def.inferShape = [](const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& p = paramsAs<GemmParams>(params);
        if (in[0].ndim() != 2 || in[1].ndim() != 2)
            throw ShapeError("Gemm: A " + in[0].str() + " and B " + in[1].str() + " must be matrices");
        const int64_t m = p.transA ? in[0][1] : in[0][0], k = p.transA ? in[0][0] : in[0][1];
        const int64_t kb = p.transB ? in[1][1] : in[1][0], n = p.transB ? in[1][0] : in[1][1];
        if (k != kb) throw ShapeError("Gemm: A " + in[0].str() + " and B " + in[1].str() + " do not multiply (transA " + std::to_string(p.transA) + ", transB " + std::to_string(p.transB) + ")");
        out[0] = Shape({ m, n });
        if (in.size() > 2 && broadcastShapes(in[2], out[0]) != out[0])
            throw ShapeError("Gemm: C " + in[2].str() + " does not broadcast to " + out[0].str());
    };
    def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        constexpr DType kTypes[] = { DType::Float32, DType::Float64, DType::Float16, DType::Int64, DType::Int32 };
        requireType(in[0], kTypes, "Gemm", 0);
        for (size_t k = 1; k < in.size(); ++k)
            requireSameType(in, 0, static_cast<int>(k), "Gemm");
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return productKernel(paramsAs<GemmParams>(p),
            [](const GemmParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                const Shape& os = out[0]->shape();
                const int64_t m = os[0], n = os[1], k = q.transA ? in[0]->shape()[0] : in[0]->shape()[1];
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!std::is_same_v<T, bool>) {
                        T* c = out[0]->dataAs<T>();
                        matmulRows(in[0]->view().dataAs<T>(), in[1]->view().dataAs<T>(), c, m, k, n, q.transA, q.transB);
                        std::vector<T> bias;
                        const bool hasC = in.size() > 2 && q.beta != 0;
                        if (hasC) {
                            bias.resize(static_cast<size_t>(m * n));
                            broadcastUnary(in[2]->view().dataAs<T>(), in[2]->shape(), bias.data(), os, [](T v) { return v; });
                        }
                        for (int64_t i = 0; i < m * n; ++i) {
                            double v = q.alpha * static_cast<double>(load(c[i]));
                            if (hasC) v += q.beta * static_cast<double>(load(bias[static_cast<size_t>(i)]));
                            c[i] = std::is_integral_v<T> ? fromDouble<T>(v) : store<T>(static_cast<Calc<T>>(v));
                        }
                    }
                });
            });
    };
    def.dnnl = [reference = def.reference](const OpParams& params, std::span<const Shape> in,
                   std::span<const Shape> out) -> std::unique_ptr<Kernel> {
        std::unique_ptr<Kernel> fast = gemmAsFullyConnected(paramsAs<GemmParams>(params), in, out);
        if (!fast) return nullptr;
        return std::make_unique<Float32Kernel>("Gemm", std::move(fast), reference(params, in, out), FusedInto::Slow);
    };
    def.dnnlPays = [](const OpParams&, std::span<const Shape> in, std::span<const Shape> out) {
        const int64_t m = out[0][0], n = out[0][1], k = m > 0 ? in[0].size() / m : 0; // A holds m·k either way round
        return dnnlutil::matrixProductPays(1, static_cast<double>(m), static_cast<double>(k), static_cast<double>(n));
    };
    addOnnxOp(r, std::move(def));
}

} // namespace

void registerOnnxLinalg(OpRegistry& r)
{
    addMatMul(r);
    addGemm(r);
}

} // namespace opscope
