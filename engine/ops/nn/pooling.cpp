// Pooling (MXNet 1.9 src/operator/nn/pooling.cc, pool.h): max, avg and sum pooling over 1, 2 or 3
// spatial axes in NCW / NCHW / NCDHW layout, with MXNet's output-size conventions.

#include "core/error.h"
#include "ops/dnnl/blocked_pool.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>

namespace opscope {

namespace {

enum class PoolType { Max, Avg, Sum };
enum class PoolConvention { Valid, Full, Same };

struct PoolingParams : OpParams {
    std::vector<int64_t> kernel; // empty only with global_pool
    std::vector<int64_t> stride;
    std::vector<int64_t> pad;
    PoolType poolType = PoolType::Max;
    PoolConvention convention = PoolConvention::Valid;
    bool globalPool = false;
    bool countIncludePad = true;
    std::string layout; // empty: NCW / NCHW / NCDHW by rank
};

ParamsPtr parsePooling(const AttrMap& attrs)
{
    AttrReader r(attrs, "Pooling");
    auto p = std::make_shared<PoolingParams>();
    const std::string type = r.getEnum("pool_type", { "max", "avg", "sum", "lp" }, "max");
    if (type == "lp") r.fail("pool_type", "Lp pooling is not supported");
    p->poolType = type == "max" ? PoolType::Max : type == "avg" ? PoolType::Avg : PoolType::Sum;
    const std::string conv = r.getEnum("pooling_convention", { "full", "valid", "same" }, "valid");
    p->convention = conv == "valid" ? PoolConvention::Valid
        : conv == "full"            ? PoolConvention::Full
                                    : PoolConvention::Same;
    p->globalPool = r.getBool("global_pool", false);
    r.getBool("cudnn_off", false);
    r.getOptionalInt("p_value");
    if (const std::string* v = r.raw("count_include_pad"); v && *v != "None")
        p->countIncludePad = r.getBool("count_include_pad", true);
    if (const std::string* v = r.raw("layout"); v && *v != "None") {
        p->layout = r.getEnum("layout", { "NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC" }, "");
        if (p->layout[1] != 'C') r.fail("layout", "channel-last layouts are not supported (use NCW, NCHW or NCDHW)");
    }

    p->kernel = r.getTuple("kernel", {});
    if (p->kernel.empty() && !p->globalPool) r.fail("kernel", "required unless global_pool is True");
    if (p->kernel.size() > 3) r.fail("kernel", "pooling has 1, 2 or 3 spatial axes");
    for (int64_t k : p->kernel)
        if (k <= 0) r.fail("kernel", "every element must be positive");
    const size_t n = p->kernel.size();
    p->stride = r.getTuple("stride", {});
    p->pad = r.getTuple("pad", {});
    if (p->stride.empty()) p->stride.assign(n, 1);
    if (p->pad.empty()) p->pad.assign(n, 0);
    // global_pool ignores kernel, stride and pad (Gluon's global layers pass placeholders).
    if (p->stride.size() != n && !p->globalPool) r.fail("stride", "must have as many elements as kernel");
    if (p->pad.size() != n && !p->globalPool) r.fail("pad", "must have as many elements as kernel");
    for (int64_t s : p->stride)
        if (s <= 0) r.fail("stride", "every element must be positive");
    for (int64_t v : p->pad) {
        if (v < 0) r.fail("pad", "every element must be non-negative");
        if (v != 0 && p->convention == PoolConvention::Same && !p->globalPool)
            r.fail("pad", "must be 0 with pooling_convention 'same'");
    }
    return p;
}

// One spatial axis of a pooling instance, after global_pool is applied.
struct PoolAxis {
    int64_t in = 1;
    int64_t out = 1;
    int64_t kernel = 1;
    int64_t stride = 1;
    int64_t pad = 0;
};

// Spatial axes padded to three (leading axes of size 1), plus N*C.
struct PoolGeometry {
    int64_t planes = 1;
    std::array<PoolAxis, 3> axes;
};

int64_t pooledSize(int64_t x, int64_t k, int64_t s, int64_t p, PoolConvention c)
{
    switch (c) {
    case PoolConvention::Valid:
        return 1 + (x + 2 * p - k) / s;
    case PoolConvention::Full:
        return 1 + (x + 2 * p - k + s - 1) / s;
    case PoolConvention::Same:
        return (x + 2 * p + s - 1) / s;
    }
    return 1;
}

// Validates the data shape against the attributes (ShapeError) and computes the geometry.
PoolGeometry poolGeometry(const PoolingParams& p, const Shape& d)
{
    if (d.ndim() < 3 || d.ndim() > 5)
        throw ShapeError("input 'data': expected (N, C, W), (N, C, H, W) or (N, C, D, H, W), got " + d.str());
    const int nsp = d.ndim() - 2;
    if (!p.globalPool && static_cast<int>(p.kernel.size()) != nsp)
        throw ShapeError("input 'data': kernel " + tupleAttr(p.kernel) + " needs " + std::to_string(p.kernel.size() + 2)
            + "-D data, got " + d.str());
    if (!p.layout.empty() && static_cast<int>(p.layout.size()) != d.ndim())
        throw ShapeError("input 'data': layout " + p.layout + " needs " + std::to_string(p.layout.size())
            + "-D data, got " + d.str());
    if (!p.globalPool && p.convention == PoolConvention::Same && d.ndim() != 3)
        throw ShapeError("input 'data': pooling_convention 'same' supports 1-D pooling only, got " + d.str());
    PoolGeometry g;
    g.planes = d[0] * d[1];
    for (int i = 0; i < nsp; ++i) {
        PoolAxis& a = g.axes[static_cast<size_t>(3 - nsp + i)];
        a.in = d[2 + i];
        if (p.globalPool) {
            a.kernel = a.in;
            continue;
        }
        a.kernel = p.kernel[static_cast<size_t>(i)];
        a.stride = p.stride[static_cast<size_t>(i)];
        a.pad = p.pad[static_cast<size_t>(i)];
        if (a.kernel > a.in + 2 * a.pad)
            throw ShapeError("input 'data': kernel " + tupleAttr(p.kernel) + " exceeds the data " + d.str()
                + " padded by " + tupleAttr(p.pad));
        a.out = pooledSize(a.in, a.kernel, a.stride, a.pad, p.convention);
    }
    return g;
}

void inferPooling(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<PoolingParams>(op);
    const Shape& d = in[0];
    if (!d.known()) return;
    const PoolGeometry g = poolGeometry(p, d);
    Shape o = d;
    const int nsp = d.ndim() - 2;
    for (int i = 0; i < nsp; ++i)
        o[2 + i] = g.axes[static_cast<size_t>(3 - nsp + i)].out;
    out[0] = o;
}

// ---- Reference kernel -------------------------------------------------------------------------

// The window of one output position along one axis, as MXNet's pool.h computes it: clipped to the
// data, and `padded` = its extent clipped to data + pad (the avg divisor with count_include_pad).
struct WindowRange {
    int64_t begin = 0;
    int64_t end = 0;
    int64_t padded = 0;
};

using PoolWindows = std::array<std::vector<WindowRange>, 3>;

PoolWindows poolWindows(const PoolGeometry& g)
{
    PoolWindows windows;
    for (size_t i = 0; i < 3; ++i) {
        const PoolAxis& a = g.axes[i];
        for (int64_t o = 0; o < a.out; ++o) {
            const int64_t start = o * a.stride - a.pad;
            const int64_t paddedEnd = std::min(start + a.kernel, a.in + a.pad);
            WindowRange w;
            w.begin = std::max<int64_t>(start, 0);
            w.end = std::max(w.begin, std::min(paddedEnd, a.in));
            w.padded = paddedEnd - start;
            windows[i].push_back(w);
        }
    }
    return windows;
}

class PoolingReferenceKernel final : public Kernel {
public:
    PoolingReferenceKernel(const PoolingParams& p, const Shape& data)
        : m_type(p.poolType)
        , m_includePad(p.countIncludePad)
        , m_geom(poolGeometry(p, data))
        , m_windows(poolWindows(m_geom))
    {
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        using Plane = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
        const auto& [ad, ah, aw] = m_geom.axes;
        const int64_t inPlane = ad.in * ah.in * aw.in;
        const int64_t outPlane = ad.out * ah.out * aw.out;
        const float* src = in[0]->data();
        float* dst = out[0]->data();
        for (int64_t c = 0; c < m_geom.planes; ++c, src += inPlane, dst += outPlane) {
            float* y = dst;
            for (const WindowRange& wd : m_windows[0]) {
                for (const WindowRange& wh : m_windows[1]) {
                    for (const WindowRange& ww : m_windows[2]) {
                        const int64_t nd = wd.end - wd.begin, nh = wh.end - wh.begin, nw = ww.end - ww.begin;
                        if (nd == 0 || nh == 0 || nw == 0) {
                            // A window wholly in the padding (possible with 'full'): MXNet's values.
                            *y++ = m_type == PoolType::Max ? -FLT_MAX : 0.0f;
                            continue;
                        }
                        float acc = m_type == PoolType::Max ? -FLT_MAX : 0.0f;
                        for (int64_t d = wd.begin; d < wd.end; ++d) {
                            const Plane image(src + d * ah.in * aw.in, ah.in, aw.in);
                            const auto block = image.block(wh.begin, ww.begin, nh, nw);
                            if (m_type == PoolType::Max) {
                                // A NaN in the window is the maximum (NumPy's max, PyTorch's
                                // max_pool), so a NaN watchpoint finds where it began.
                                const float m = block.template maxCoeff<Eigen::PropagateNaN>();
                                if (std::isnan(m) || m > acc) acc = m;
                                if (std::isnan(acc)) break;
                            } else {
                                acc += block.sum();
                            }
                        }
                        if (m_type == PoolType::Avg)
                            acc /= static_cast<float>(m_includePad ? wd.padded * wh.padded * ww.padded : nd * nh * nw);
                        *y++ = acc;
                    }
                }
            }
        }
    }

private:
    PoolType m_type;
    bool m_includePad;
    PoolGeometry m_geom;
    PoolWindows m_windows;
};

// MXNet's unpool (pool.h): max sends each output's gradient to the first maximum of its window in
// row-major order; avg spreads it over the window's data elements divided by the forward's
// divisor; sum spreads it undivided. Windows wholly in the padding pass nothing back. Overlapping
// windows add up.
void backwardPooling(const BackwardArgs& a)
{
    Tensor* dx = a.inGrad[0];
    if (!dx) return;
    dx->fill(0);
    if (!a.outGrad[0]) return;
    const auto& p = paramsAs<PoolingParams>(a.params);
    const PoolGeometry geom = poolGeometry(p, a.in[0]->shape());
    const PoolWindows windows = poolWindows(geom);
    const auto& [ad, ah, aw] = geom.axes;
    const int64_t inPlane = ad.in * ah.in * aw.in;
    const int64_t outPlane = ad.out * ah.out * aw.out;
    const float* src = a.in[0]->data();
    const float* dy = a.outGrad[0]->data();
    float* dsrc = dx->data();
    auto at = [&](int64_t d, int64_t h, int64_t w) { return (d * ah.in + h) * aw.in + w; };
    if (p.poolType == PoolType::Max && ad.in == 1 && windows[0].size() == 1 && windows[0][0].begin == 0
        && windows[0][0].end == 1) {
        // 1-D and 2-D max pooling (the common case): the same first-maximum rule, in plain loops.
        for (int64_t c = 0; c < geom.planes; ++c, src += inPlane, dsrc += inPlane, dy += outPlane) {
            const float* g = dy;
            for (const WindowRange& wh : windows[1]) {
                for (const WindowRange& ww : windows[2]) {
                    const float grad = *g++;
                    if (wh.begin == wh.end || ww.begin == ww.end) continue;
                    int64_t best = wh.begin * aw.in + ww.begin;
                    float top = src[best];
                    for (int64_t h = wh.begin; h < wh.end; ++h) {
                        const float* row = src + h * aw.in;
                        for (int64_t w = ww.begin; w < ww.end; ++w)
                            if (row[w] > top) {
                                top = row[w];
                                best = h * aw.in + w;
                            }
                    }
                    dsrc[best] += grad;
                }
            }
        }
        return;
    }
    for (int64_t c = 0; c < geom.planes; ++c, src += inPlane, dsrc += inPlane, dy += outPlane) {
        const float* g = dy;
        for (const WindowRange& wd : windows[0]) {
            for (const WindowRange& wh : windows[1]) {
                for (const WindowRange& ww : windows[2]) {
                    const float grad = *g++;
                    const int64_t nd = wd.end - wd.begin, nh = wh.end - wh.begin, nw = ww.end - ww.begin;
                    if (nd == 0 || nh == 0 || nw == 0) continue;
                    if (p.poolType == PoolType::Max) {
                        int64_t best = at(wd.begin, wh.begin, ww.begin);
                        for (int64_t d = wd.begin; d < wd.end; ++d)
                            for (int64_t h = wh.begin; h < wh.end; ++h)
                                for (int64_t w = ww.begin; w < ww.end; ++w)
                                    if (src[at(d, h, w)] > src[best]) best = at(d, h, w);
                        dsrc[best] += grad;
                        continue;
                    }
                    float share = grad;
                    if (p.poolType == PoolType::Avg)
                        share
                            /= static_cast<float>(p.countIncludePad ? wd.padded * wh.padded * ww.padded : nd * nh * nw);
                    for (int64_t d = wd.begin; d < wd.end; ++d)
                        for (int64_t h = wh.begin; h < wh.end; ++h)
                            for (int64_t w = ww.begin; w < ww.end; ++w)
                                dsrc[at(d, h, w)] += share;
                }
            }
        }
    }
}

// ---- oneDNN kernel ----------------------------------------------------------------------------

// pooling_forward (inference), on plain tensors or oneDNN's blocked layout (BlockedPoolKernel);
// Sum is oneDNN's average scaled back by the area. oneDNN's max pooling drops NaN (its max of NaN
// and a number is the number): when the input holds a NaN, the reference kernel, which propagates
// it, computes the output instead; without one, the check costs one read of the input.
std::unique_ptr<Kernel> poolingDnnlKernel(
    const PoolingParams& p, const Shape& data, const Shape& output, dnnl::algorithm alg)
{
    using namespace dnnlutil;
    const PoolGeometry g = poolGeometry(p, data);
    const int nsp = data.ndim() - 2;
    dnnl::memory::dims strides, kernel, padL, padR;
    double area = 1;
    for (int i = 3 - nsp; i < 3; ++i) {
        const PoolAxis& a = g.axes[static_cast<size_t>(i)];
        strides.push_back(a.stride);
        kernel.push_back(a.kernel);
        padL.push_back(a.pad);
        // 'full' and 'same' may need more padding on the right than `pad`.
        padR.push_back(a.pad + std::max<int64_t>(0, (a.out - 1) * a.stride + a.kernel - a.in - 2 * a.pad));
        area *= static_cast<double>(a.kernel);
    }
    auto make = [=](const dnnl::memory::desc& src, const dnnl::memory::desc& dst) -> dnnl::primitive {
        const dnnl::pooling_forward::desc desc(
            dnnl::prop_kind::forward_inference, alg, src, dst, strides, kernel, padL, padR);
        return dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(desc, cpuEngine()));
    };
    std::unique_ptr<Kernel> nanFallback;
    if (alg == dnnl::algorithm::pooling_max) nanFallback = std::make_unique<PoolingReferenceKernel>(p, data);
    return std::make_unique<BlockedPoolKernel>(
        make, data, output, p.poolType == PoolType::Sum ? static_cast<float>(area) : 1.0f, std::move(nanFallback));
}

std::unique_ptr<Kernel> makePoolingDnnl(const OpParams& op, std::span<const Shape> in, std::span<const Shape> out)
{
    const auto& p = paramsAs<PoolingParams>(op);
    const PoolGeometry g = poolGeometry(p, in[0]);
    bool anyPad = false, extraRightPad = false;
    for (const PoolAxis& a : g.axes) {
        anyPad = anyPad || a.pad > 0;
        extraRightPad = extraRightPad || (a.out - 1) * a.stride + a.kernel > a.in + 2 * a.pad;
    }
    dnnl::algorithm alg = dnnl::algorithm::pooling_max;
    if (p.poolType == PoolType::Sum) {
        // avg over the whole kernel area, scaled back by the area afterwards.
        alg = dnnl::algorithm::pooling_avg_include_padding;
    } else if (p.poolType == PoolType::Avg) {
        if (!p.countIncludePad || !anyPad) {
            // Without padding MXNet divides by the clipped window, which is oneDNN's exclude_padding.
            alg = dnnl::algorithm::pooling_avg_exclude_padding;
        } else if (extraRightPad) {
            // MXNet's divisor stops at data + pad; oneDNN would count the extra right padding.
            return nullptr;
        } else {
            alg = dnnl::algorithm::pooling_avg_include_padding;
        }
    }
    try {
        return poolingDnnlKernel(p, in[0], out[0], alg);
    } catch (const dnnl::error&) {
        return nullptr; // a geometry this oneDNN build rejects: the reference kernel runs instead
    }
}

bool poolingDnnlPays(const OpParams& op, std::span<const Shape> in, std::span<const Shape> out)
{
    const auto& p = paramsAs<PoolingParams>(op);
    double window = 1;
    if (p.globalPool) {
        window = static_cast<double>(in[0].product(2, in[0].ndim()));
    } else {
        for (int64_t k : p.kernel)
            window *= static_cast<double>(k);
    }
    return static_cast<double>(out[0].size()) * window >= dnnlutil::kMinFlops;
}

} // namespace

void registerPooling(OpRegistry& r)
{
    OpDef def;
    def.name = "Pooling";
    def.parse = parsePooling;
    def.numInputs = [](const OpParams&) { return 1; };
    def.numOutputs = [](const OpParams&) { return 1; };
    def.nameInputs({ "data" });
    def.nameOutputs({ "output" });
    def.inferShape = inferPooling;
    def.reference
        = [](const OpParams& op, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        return std::make_unique<PoolingReferenceKernel>(paramsAs<PoolingParams>(op), in[0]);
    };
    def.dnnl = makePoolingDnnl;
    def.dnnlPays = poolingDnnlPays;
    def.backward = backwardPooling;
    r.add(std::move(def));
}

} // namespace opscope
