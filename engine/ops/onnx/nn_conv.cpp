// ONNX's Conv and ConvTranspose (1-D to 3-D; group, dilations, strides, pads, auto_pad,
// output_padding, output_shape). A float32 1-D or 2-D convolution with symmetric pads runs on the
// engine's Convolution kernels (im2col and Eigen, or oneDNN); everything else on a direct loop.

#include "ops/nn/convolution.h"
#include "ops/onnx/float32_kernel.h"
#include "ops/onnx/nn_util.h"
#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

namespace opscope {

using namespace onnx_ops;

namespace {

struct ConvParams : OnnxParams {
    WindowAttrs w;
    int64_t group = 1;
    std::vector<int64_t> outputPadding, outputShape;
};

std::shared_ptr<ConvParams> parseConv(const AttrMap& attrs, const char* op)
{
    auto p = std::make_shared<ConvParams>();
    OnnxAttrs a(attrs, op);
    a.fillBase(*p, 2, 3);
    p->w = readWindowAttrs(a);
    p->group = a.getInt("group", 1);
    if (p->group < 1) a.fail("group", "must be positive");
    p->outputPadding = a.getInts("output_padding", {});
    p->outputShape = a.getInts("output_shape", {});
    return p;
}

// The window of a Conv for these shapes: kernel from W, pads resolved.
ResolvedWindow convWindow(const ConvParams& p, const Shape& x, const Shape& w)
{
    std::vector<int64_t> kernel;
    for (int d = 2; d < w.ndim(); ++d)
        kernel.push_back(w[d]);
    return resolveWindow(p.w, x, kernel, false, "Conv");
}

void inferConv(const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<ConvParams>(params);
    const Shape& x = in[0];
    const Shape& w = in[1];
    if (x.ndim() < 3 || x.ndim() > 5 || w.ndim() != x.ndim())
        throw ShapeError("Conv: input " + x.str() + " and weight " + w.str() + " must both be (N, C, spatial…) of 1 to 3 spatial dimensions");
    if (x[1] != w[1] * p.group)
        throw ShapeError("Conv: input channels " + std::to_string(x[1]) + " but weight " + w.str() + " with group "
            + std::to_string(p.group) + " takes " + std::to_string(w[1] * p.group));
    if (w[0] % p.group != 0) throw ShapeError("Conv: " + std::to_string(w[0]) + " filters do not split into " + std::to_string(p.group) + " groups");
    if (in.size() > 2 && (in[2].ndim() != 1 || in[2][0] != w[0])) shapeMismatch("Conv bias", Shape({ w[0] }), in[2]);
    const ResolvedWindow win = convWindow(p, x, w);
    Shape s({ x[0], w[0] });
    for (int64_t o : win.out)
        s.push_back(o);
    out[0] = s;
}

// Direct convolution for any type and geometry.
template <class T> void convDirect(const ConvParams& p, const Tensor& X, const Tensor& W, const Tensor* B, const Tensor& Y)
{
    const ResolvedWindow win = convWindow(p, X.shape(), W.shape());
    const Shape& xs = X.shape();
    const Shape& ys = Y.shape();
    const int sp = xs.ndim() - 2;
    const int64_t N = xs[0], C = xs[1], M = ys[1], G = p.group, Cg = C / G, Mg = M / G;
    const int64_t inSpatial = xs.product(2, xs.ndim()), outSpatial = ys.product(2, ys.ndim());
    const int64_t kSpatial = W.shape().product(2, W.shape().ndim());
    const T* x = X.dataAs<T>();
    const T* w = W.dataAs<T>();
    T* y = Y.dataAs<T>();
    std::vector<int64_t> oIdx(static_cast<size_t>(sp)), kIdx(static_cast<size_t>(sp));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t m = 0; m < M; ++m) {
            const int64_t g = m / Mg;
            const double bias = B ? toDouble(B->dataAs<T>()[m]) : 0.0;
            for (int64_t o = 0; o < outSpatial; ++o) {
                int64_t rem = o;
                for (int d = sp - 1; d >= 0; --d) {
                    oIdx[static_cast<size_t>(d)] = rem % ys[d + 2];
                    rem /= ys[d + 2];
                }
                double acc = bias;
                for (int64_t c = 0; c < Cg; ++c) {
                    const T* xc = x + (n * C + g * Cg + c) * inSpatial;
                    const T* wc = w + (m * Cg + c) * kSpatial;
                    for (int64_t k = 0; k < kSpatial; ++k) {
                        int64_t kr = k, off = 0;
                        bool inside = true;
                        for (int d = sp - 1; d >= 0; --d) {
                            const int64_t kd = kr % win.kernel[static_cast<size_t>(d)];
                            kr /= win.kernel[static_cast<size_t>(d)];
                            kIdx[static_cast<size_t>(d)] = kd;
                        }
                        int64_t stride = 1;
                        for (int d = sp - 1; d >= 0; --d) {
                            const size_t u = static_cast<size_t>(d);
                            const int64_t i = oIdx[u] * win.strides[u] + kIdx[u] * win.dilations[u] - win.padBegin[u];
                            if (i < 0 || i >= xs[d + 2]) {
                                inside = false;
                                break;
                            }
                            off += i * stride;
                            stride *= xs[d + 2];
                        }
                        if (inside) acc += toDouble(xc[off]) * toDouble(wc[k]);
                    }
                }
                y[(n * M + m) * outSpatial + o] = fromDouble<T>(acc);
            }
        }
}

// Every floating type, directly.
std::unique_ptr<Kernel> directKernel(const ConvParams& p)
{
    return lambdaKernel(p, [](const ConvParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
        dispatchType(in[0]->dtype(), [&](auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_floating_point_v<Calc<T>>) convDirect<T>(q, *in[0], *in[1], in.size() > 2 ? in[2] : nullptr, *out[0]);
        });
    });
}

// Float32 through the engine's Convolution kernel (and any post-op it takes on): 1-D or 2-D with
// symmetric pads; the rest directly.
std::unique_ptr<Kernel> convKernel(const OpParams& params, std::span<const Shape> in, std::span<const Shape> out, bool dnnl)
{
    const auto& p = paramsAs<ConvParams>(params);
    const ResolvedWindow win = convWindow(p, in[0], in[1]);
    const int sp = in[0].ndim() - 2;
    // The engine's Convolution: float32 (checked at run), 1-D or 2-D, symmetric pads.
    if (sp <= 2 && win.symmetric()) {
        ConvolutionParams cp;
        cp.kernel = win.kernel;
        cp.stride = win.strides;
        cp.dilate = win.dilations;
        cp.pad = win.padBegin;
        cp.numFilter = in[1][0];
        cp.numGroup = p.group;
        cp.noBias = in.size() < 3;
        std::unique_ptr<Kernel> fast = dnnl ? makeConvolutionDnnl(cp, in, out) : makeConvolutionReference(cp, in, out);
        if (fast) return std::make_unique<Float32Kernel>("Conv", std::move(fast), directKernel(p), FusedInto::Fast);
    }
    return directKernel(p);
}

// ConvTranspose: the adjoint of Conv, scattering each input element through the kernel.
void inferConvTranspose(const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<ConvParams>(params);
    const Shape& x = in[0];
    const Shape& w = in[1];
    if (x.ndim() < 3 || x.ndim() > 5 || w.ndim() != x.ndim() || w[0] != x[1])
        throw ShapeError("ConvTranspose: input " + x.str() + " and weight " + w.str() + " do not match");
    const int sp = x.ndim() - 2;
    const ResolvedTransposeWindow win = resolveTransposeWindow(p.w, x, w, p.outputPadding, p.outputShape);
    Shape s({ x[0], w[1] * p.group });
    for (int d = 0; d < sp; ++d)
        s.push_back(win.out[static_cast<size_t>(d)]);
    if (in.size() > 2 && (in[2].ndim() != 1 || in[2][0] != s[1])) shapeMismatch("ConvTranspose bias", Shape({ s[1] }), in[2]);
    out[0] = s;
}

template <class T> void convTransposeDirect(const ConvParams& p, const Tensor& X, const Tensor& W, const Tensor* B, const Tensor& Y)
{
    const Shape& xs = X.shape();
    const Shape& ys = Y.shape();
    const ResolvedTransposeWindow win = resolveTransposeWindow(p.w, xs, W.shape(), p.outputPadding, p.outputShape);
    const int sp = xs.ndim() - 2;
    const int64_t N = xs[0], C = xs[1], M = ys[1], G = p.group, Cg = C / G, Mg = M / G;
    const int64_t inSpatial = xs.product(2, xs.ndim()), outSpatial = ys.product(2, ys.ndim());
    const int64_t kSpatial = W.shape().product(2, W.shape().ndim());
    std::vector<double> acc(static_cast<size_t>(N * M * outSpatial), 0.0);
    const T* x = X.dataAs<T>();
    const T* w = W.dataAs<T>();
    std::vector<int64_t> iIdx(static_cast<size_t>(sp));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c) {
            const int64_t g = c / Cg;
            for (int64_t i = 0; i < inSpatial; ++i) {
                int64_t rem = i;
                for (int d = sp - 1; d >= 0; --d) {
                    iIdx[static_cast<size_t>(d)] = rem % xs[d + 2];
                    rem /= xs[d + 2];
                }
                const double xv = toDouble(x[(n * C + c) * inSpatial + i]);
                for (int64_t mg = 0; mg < Mg; ++mg) {
                    const int64_t m = g * Mg + mg;
                    const T* wk = w + (c * Mg + mg) * kSpatial;
                    for (int64_t k = 0; k < kSpatial; ++k) {
                        int64_t kr = k, off = 0, stride = 1;
                        bool inside = true;
                        std::vector<int64_t> kIdx(static_cast<size_t>(sp));
                        for (int d = sp - 1; d >= 0; --d) {
                            kIdx[static_cast<size_t>(d)] = kr % win.kernel[static_cast<size_t>(d)];
                            kr /= win.kernel[static_cast<size_t>(d)];
                        }
                        for (int d = sp - 1; d >= 0; --d) {
                            const size_t u = static_cast<size_t>(d);
                            const int64_t o = iIdx[u] * win.strides[u] + kIdx[u] * win.dilations[u] - win.padBegin[u];
                            if (o < 0 || o >= ys[d + 2]) {
                                inside = false;
                                break;
                            }
                            off += o * stride;
                            stride *= ys[d + 2];
                        }
                        if (inside) acc[static_cast<size_t>((n * M + m) * outSpatial + off)] += xv * toDouble(wk[k]);
                    }
                }
            }
        }
    T* y = Y.dataAs<T>();
    for (int64_t n = 0; n < N; ++n)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t o = 0; o < outSpatial; ++o) {
                const size_t at = static_cast<size_t>((n * M + m) * outSpatial + o);
                y[at] = fromDouble<T>(acc[at] + (B ? toDouble(B->dataAs<T>()[m]) : 0.0));
            }
}

void addConvOps(OpRegistry& r)
{
    OpDef conv = onnxOp("Conv");
    conv.parse = [](const AttrMap& attrs) { return parseConv(attrs, "Conv"); };
    conv.inferShape = inferConv;
    conv.inferType = floatTypesAllSame("Conv");
    conv.reference = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape> out) {
        return convKernel(p, in, out, false);
    };
    conv.dnnl = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape> out) {
        return convKernel(p, in, out, true);
    };
    addOnnxOp(r, std::move(conv));

    OpDef tconv = onnxOp("ConvTranspose");
    tconv.parse = [](const AttrMap& attrs) { return parseConv(attrs, "ConvTranspose"); };
    tconv.inferShape = inferConvTranspose;
    tconv.inferType = floatTypesAllSame("ConvTranspose");
    tconv.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ConvParams>(p),
            [](const ConvParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (std::is_floating_point_v<Calc<T>>)
                        convTransposeDirect<T>(q, *in[0], *in[1], in.size() > 2 ? in[2] : nullptr, *out[0]);
                });
            });
    };
    addOnnxOp(r, std::move(tconv));
}

} // namespace

void registerOnnxConv(OpRegistry& r)
{
    addConvOps(r);
}

} // namespace opscope
