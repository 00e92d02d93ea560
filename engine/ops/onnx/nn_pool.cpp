// ONNX's poolings: MaxPool (with its optional Indices output), AveragePool (count_include_pad),
// LpPool, and GlobalAveragePool, GlobalMaxPool, GlobalLpPool; 1 to 3 spatial dimensions. NaN
// propagates through MaxPool, so the NaN watchpoint finds where it began.

#include "ops/onnx/nn_util.h"
#include "ops/onnx/float32_kernel.h"
#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

#include <cmath>
#include <memory>

namespace opscope {

using namespace onnx_ops;

namespace {

enum class Kind { Max, Average, Lp };

struct PoolParams : OnnxParams {
    WindowAttrs w;
    bool global = false;
    bool countIncludePad = false;
    int64_t p = 2;
    int64_t storageOrder = 0;
};

ResolvedWindow windowOf(const PoolParams& p, const Shape& x, const char* op)
{
    if (p.global) {
        WindowAttrs none;
        std::vector<int64_t> kernel;
        for (int d = 2; d < x.ndim(); ++d)
            kernel.push_back(x[d]);
        return resolveWindow(none, x, kernel, false, op);
    }
    if (p.w.kernel.empty()) throw ShapeError(std::string(op) + ": kernel_shape is required");
    return resolveWindow(p.w, x, p.w.kernel, p.w.ceilMode, op);
}

template <class T>
void pool(const PoolParams& p, Kind kind, const Tensor& X, const Tensor& Y, const Tensor* indices, const char* op)
{
    const Shape& xs = X.shape();
    const Shape& ys = Y.shape();
    const ResolvedWindow win = windowOf(p, xs, op);
    const int sp = xs.ndim() - 2;
    const int64_t planes = xs[0] * xs[1];
    const int64_t inSpatial = xs.product(2, xs.ndim()), outSpatial = ys.product(2, ys.ndim());
    const int64_t kSpatial = [&] {
        int64_t k = 1;
        for (int64_t v : win.kernel)
            k *= v;
        return k;
    }();
    const T* x = X.dataAs<T>();
    T* y = Y.dataAs<T>();
    std::vector<int64_t> oIdx(static_cast<size_t>(sp)), kIdx(static_cast<size_t>(sp));
    for (int64_t plane = 0; plane < planes; ++plane)
        for (int64_t o = 0; o < outSpatial; ++o) {
            int64_t rem = o;
            for (int d = sp - 1; d >= 0; --d) {
                oIdx[static_cast<size_t>(d)] = rem % ys[d + 2];
                rem /= ys[d + 2];
            }
            double acc = kind == Kind::Max ? -INFINITY : 0.0;
            int64_t best = -1, counted = 0, inPadded = 0;
            bool nan = false;
            for (int64_t k = 0; k < kSpatial; ++k) {
                int64_t kr = k;
                for (int d = sp - 1; d >= 0; --d) {
                    kIdx[static_cast<size_t>(d)] = kr % win.kernel[static_cast<size_t>(d)];
                    kr /= win.kernel[static_cast<size_t>(d)];
                }
                int64_t off = 0, stride = 1;
                bool inside = true, inPad = true;
                for (int d = sp - 1; d >= 0; --d) {
                    const size_t u = static_cast<size_t>(d);
                    const int64_t i = oIdx[u] * win.strides[u] + kIdx[u] * win.dilations[u] - win.padBegin[u];
                    if (i < -win.padBegin[u] || i >= xs[d + 2] + win.padEnd[u]) inPad = false;
                    if (i < 0 || i >= xs[d + 2]) inside = false;
                    off += i * stride;
                    stride *= xs[d + 2];
                }
                if (inPad) ++inPadded;
                if (!inside) continue;
                const double v = toDouble(x[plane * inSpatial + off]);
                ++counted;
                if (kind == Kind::Max) {
                    if (v != v) {
                        nan = true;
                    } else if (best < 0 || v > acc) {
                        acc = v;
                        best = off;
                    }
                } else if (kind == Kind::Average) {
                    acc += v;
                } else {
                    acc += std::pow(std::fabs(v), static_cast<double>(p.p));
                }
            }
            double result = acc;
            if (kind == Kind::Max && nan) result = NAN;
            if (kind == Kind::Average) result = acc / static_cast<double>(p.countIncludePad ? inPadded : counted);
            if (kind == Kind::Lp) result = std::pow(acc, 1.0 / static_cast<double>(p.p));
            y[plane * outSpatial + o] = fromDouble<T>(result);
            if (indices) {
                int64_t flat = best < 0 ? 0 : best;
                if (p.storageOrder == 1 && sp == 2) { // column-major within the plane
                    const int64_t h = best / xs[3], w = best % xs[3];
                    flat = w * xs[2] + h;
                }
                indices->dataAs<int64_t>()[plane * outSpatial + o] = plane * inSpatial + flat;
            }
        }
}

// A float32 2-D MaxPool or AveragePool without dilations, ceil mode, Indices or asymmetric pads
// runs on the engine's Pooling kernels (oneDNN where it applies); nullptr otherwise.
std::unique_ptr<Kernel> enginePooling(const PoolParams& p, Kind kind, std::span<const Shape> in, std::span<const Shape> out)
{
    if (kind == Kind::Lp || in[0].ndim() != 4 || p.numOutputs > 1 || p.w.ceilMode) return nullptr;
    for (int64_t d : p.w.dilations)
        if (d != 1) return nullptr;
    const ResolvedWindow win = windowOf(p, in[0], "pool");
    if (!win.symmetric()) return nullptr;
    auto tuple = [](const std::vector<int64_t>& v) { return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")"; };
    AttrMap attrs { { "kernel", tuple(win.kernel) }, { "stride", tuple(win.strides) }, { "pad", tuple(win.padBegin) },
        { "pool_type", kind == Kind::Max ? "max" : "avg" }, { "pooling_convention", "valid" },
        { "count_include_pad", p.countIncludePad || p.global ? "True" : "False" } };
    const OpDef& pooling = OpRegistry::instance().get("Pooling");
    const ParamsPtr params = pooling.parse(attrs);
    std::unique_ptr<Kernel> k = pooling.makeKernel(*params, in.first(1), out.first(1), KernelKind::Dnnl);
    return k && std::string(k->backend()) == "dnnl" ? std::move(k) : nullptr;
}

void addPool(OpRegistry& r, const char* name, Kind kind, bool global)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op, kind, global](const AttrMap& attrs) {
        auto p = std::make_shared<PoolParams>();
        OnnxAttrs a(attrs, op);
        a.fillBase(*p, 1, 1, kind == Kind::Max && !global ? 2 : 1);
        p->global = global;
        if (!global) {
            p->w = readWindowAttrs(a);
            if (p->w.kernel.empty()) a.fail("kernel_shape", "is required");
        }
        p->countIncludePad = a.getInt("count_include_pad", 0) != 0;
        p->p = a.getInt("p", 2);
        p->storageOrder = a.getInt("storage_order", 0);
        if (kind == Kind::Max && !p->w.dilations.empty() && p->opset < 10) a.fail("dilations", "needs opset 10");
        return p;
    };
    def.inferShape = [op](const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& p = paramsAs<PoolParams>(params);
        const ResolvedWindow win = windowOf(p, in[0], op.c_str());
        Shape s({ in[0][0], in[0][1] });
        for (int64_t o : win.out)
            s.push_back(o);
        for (Shape& o : out)
            o = s;
    };
    def.inferType = [op](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        constexpr DType kPoolTypes[] = { DType::Float32, DType::Float64, DType::Float16, DType::Int8, DType::UInt8 };
        requireType(in[0], kPoolTypes, op, 0);
        out[0] = in[0];
        if (out.size() > 1) out[1] = DType::Int64;
    };
    def.reference = [op, kind](const OpParams& params, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<PoolParams>(params),
            [op, kind](const PoolParams& p, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!std::is_same_v<T, bool>)
                        pool<T>(p, kind, *in[0], *out[0], out.size() > 1 ? out[1] : nullptr, op.c_str());
                });
            });
    };
    // oneDNN for float32 (another type at run time takes the reference loop).
    def.dnnl = [op, kind, reference = def.reference](const OpParams& params, std::span<const Shape> in,
                   std::span<const Shape> out) -> std::unique_ptr<Kernel> {
        std::unique_ptr<Kernel> fast = enginePooling(paramsAs<PoolParams>(params), kind, in, out);
        if (!fast) return nullptr;
        return std::make_unique<Float32Kernel>(op, std::move(fast), reference(params, in, out), FusedInto::Fast);
    };
    addOnnxOp(r, std::move(def));
}

} // namespace

void registerOnnxPool(OpRegistry& r)
{
    addPool(r, "MaxPool", Kind::Max, false);
    addPool(r, "AveragePool", Kind::Average, false);
    addPool(r, "LpPool", Kind::Lp, false);
    addPool(r, "GlobalMaxPool", Kind::Max, true);
    addPool(r, "GlobalAveragePool", Kind::Average, true);
    addPool(r, "GlobalLpPool", Kind::Lp, true);
}

} // namespace opscope
