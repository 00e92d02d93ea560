// ONNX's Resize (opsets 10-17: nearest, linear and cubic over every resized dimension, every
// coordinate_transformation_mode, nearest_mode, exclude_outside, extrapolation_value), Upsample
// (opsets 7 and 9), DepthToSpace (DCR and CRD) and SpaceToDepth. Scales and sizes must be known
// before the run. The interpolation follows ONNX's reference: neighbours beyond the edge repeat it.

#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/onnx/shape_util.h"
#include "ops/registry.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace opscope {

using namespace onnx_ops;

namespace {

struct ResizeParams : OnnxParams {
    std::vector<double> scales, roi;
    std::vector<int64_t> sizes;
    std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
    double cubicA = -0.75, extrapolation = 0;
    bool excludeOutside = false;
    int64_t blocksize = 1;
    bool crd = false;
};

Shape resizedShape(const ResizeParams& p, const Shape& in, const char* op)
{
    Shape s = in;
    if (!p.sizes.empty()) {
        if (static_cast<int>(p.sizes.size()) != in.ndim())
            throw ShapeError(std::string(op) + ": " + std::to_string(p.sizes.size()) + " sizes for rank " + std::to_string(in.ndim()));
        for (int d = 0; d < in.ndim(); ++d) {
            const int64_t v = p.sizes[static_cast<size_t>(d)];
            if (v < 0 || v > (int64_t(1) << 40)) throw ShapeError(std::string(op) + ": size " + std::to_string(v) + " is out of range");
            s[d] = v;
        }
        return s;
    }
    if (static_cast<int>(p.scales.size()) != in.ndim())
        throw ShapeError(std::string(op) + ": " + std::to_string(p.scales.size()) + " scales for rank " + std::to_string(in.ndim()));
    for (int d = 0; d < in.ndim(); ++d) {
        const double v = std::floor(static_cast<double>(in[d]) * p.scales[static_cast<size_t>(d)]);
        if (!(v >= 0) || v > 1e12) throw ShapeError(std::string(op) + ": scale " + std::to_string(p.scales[static_cast<size_t>(d)]) + " gives dimension " + std::to_string(v));
        s[d] = static_cast<int64_t>(v);
    }
    return s;
}

struct Tap {
    int64_t index;
    double weight;
};

// Per output coordinate of one dimension: the input elements it reads and their weights (empty:
// the extrapolation value).
std::vector<std::vector<Tap>> taps(const ResizeParams& p, int64_t inLen, int64_t outLen, double scale, int d, int rank)
{
    // ONNX's reference divides by the unrounded output length, scale · input length.
    const double outF = scale * static_cast<double>(inLen);
    std::vector<std::vector<Tap>> out(static_cast<size_t>(outLen));
    const double roiStart = p.roi.size() == static_cast<size_t>(2 * rank) ? p.roi[static_cast<size_t>(d)] : 0.0;
    const double roiEnd = p.roi.size() == static_cast<size_t>(2 * rank) ? p.roi[static_cast<size_t>(d + rank)] : 1.0;
    for (int64_t i = 0; i < outLen; ++i) {
        const double xr = static_cast<double>(i);
        double x;
        const std::string& c = p.coord;
        if (c == "half_pixel") x = (xr + 0.5) / scale - 0.5;
        else if (c == "pytorch_half_pixel") x = outLen > 1 ? (xr + 0.5) / scale - 0.5 : 0.0;
        else if (c == "align_corners") x = outF == 1 ? 0.0 : xr * static_cast<double>(inLen - 1) / (outF - 1);
        else if (c == "tf_half_pixel_for_nearest" || c == "tf_half_pixel_for_nn") x = (xr + 0.5) / scale;
        else if (c == "tf_crop_and_resize")
            x = outF > 1 ? roiStart * static_cast<double>(inLen - 1) + xr * (roiEnd - roiStart) * static_cast<double>(inLen - 1) / (outF - 1)
                         : 0.5 * (roiStart + roiEnd) * static_cast<double>(inLen - 1);
        else x = xr / scale; // asymmetric
        auto& t = out[static_cast<size_t>(i)];
        if (c == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(inLen - 1))) continue;
        auto clampIdx = [&](int64_t k) { return std::clamp<int64_t>(k, 0, inLen - 1); };
        if (p.mode == "nearest") {
            int64_t k;
            const double f = std::floor(x);
            if (p.nearest == "floor") k = static_cast<int64_t>(f);
            else if (p.nearest == "ceil") k = static_cast<int64_t>(std::ceil(x));
            else if (x - f == 0.5) k = static_cast<int64_t>(p.nearest == "round_prefer_ceil" ? f + 1 : f);
            else k = static_cast<int64_t>(std::round(x));
            t.push_back({ clampIdx(k), 1.0 });
            continue;
        }
        const int64_t base = static_cast<int64_t>(std::floor(x));
        const double r = x - static_cast<double>(base);
        std::vector<std::pair<int64_t, double>> raw;
        if (p.mode == "linear") {
            raw = { { base, 1 - r }, { base + 1, r } };
        } else { // cubic
            const double A = p.cubicA;
            auto far = [&](double s) { return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A; }; // 1 < |s| < 2
            auto near = [&](double s) { return ((A + 2) * s - (A + 3)) * s * s + 1; }; // |s| <= 1
            raw = { { base - 1, far(r + 1) }, { base, near(r) }, { base + 1, near(1 - r) }, { base + 2, far(2 - r) } };
        }
        double total = 0;
        for (auto& [k, w] : raw) {
            if (p.excludeOutside && (k < 0 || k >= inLen)) w = 0;
            total += w;
        }
        for (auto& [k, w] : raw)
            t.push_back({ clampIdx(k), p.excludeOutside && total != 0 ? w / total : w });
    }
    return out;
}

template <class T> void resize(const ResizeParams& p, const Tensor& X, const Tensor& Y)
{
    const Shape& xs = X.shape();
    const Shape& ys = Y.shape();
    const int rank = xs.ndim();
    std::vector<std::vector<std::vector<Tap>>> all;
    for (int d = 0; d < rank; ++d) {
        const double scale = p.sizes.empty() ? p.scales[static_cast<size_t>(d)] : static_cast<double>(ys[d]) / static_cast<double>(xs[d]);
        all.push_back(taps(p, xs[d], ys[d], scale, d, rank));
    }
    const std::vector<int64_t> st = stridesOf(xs);
    const T* x = X.dataAs<T>();
    T* y = Y.dataAs<T>();
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    std::vector<size_t> pick(static_cast<size_t>(rank), 0);
    for (int64_t i = 0; i < ys.size(); ++i) {
        bool outside = false;
        for (int d = 0; d < rank && !outside; ++d)
            outside = all[static_cast<size_t>(d)][static_cast<size_t>(idx[static_cast<size_t>(d)])].empty();
        double acc = p.extrapolation;
        if (!outside) {
            acc = 0;
            std::fill(pick.begin(), pick.end(), 0);
            while (true) { // every combination of one tap per dimension
                double w = 1;
                int64_t off = 0;
                for (int d = 0; d < rank; ++d) {
                    const Tap& t = all[static_cast<size_t>(d)][static_cast<size_t>(idx[static_cast<size_t>(d)])][pick[static_cast<size_t>(d)]];
                    w *= t.weight;
                    off += t.index * st[static_cast<size_t>(d)];
                }
                acc += w * toDouble(x[off]);
                int d = rank - 1;
                for (; d >= 0; --d) {
                    const size_t u = static_cast<size_t>(d);
                    if (++pick[u] < all[u][static_cast<size_t>(idx[u])].size()) break;
                    pick[u] = 0;
                }
                if (d < 0) break;
            }
        }
        y[i] = fromDouble<T>(acc);
        for (int d = rank - 1; d >= 0; --d) {
            if (++idx[static_cast<size_t>(d)] < ys[d]) break;
            idx[static_cast<size_t>(d)] = 0;
        }
    }
}

OpDef resizeOp(const char* name)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.inferShape = [op](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) {
        out[0] = resizedShape(paramsAs<ResizeParams>(p), in[0], op.c_str());
    };
    def.inferType = [op](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kNumericTypes, op, 0);
        out[0] = in[0];
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<ResizeParams>(p),
            [](const ResizeParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
                dispatchType(in[0]->dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    if constexpr (!std::is_same_v<T, bool>) resize<T>(q, *in[0], *out[0]);
                });
            });
    };
    return def;
}

void addResize(OpRegistry& r)
{
    OpDef def = resizeOp("Resize");
    def.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<ResizeParams>();
        OnnxAttrs a(attrs, "Resize");
        a.fillBase(*p, 1, 4);
        p->mode = a.getString("mode", "nearest");
        if (p->mode != "nearest" && p->mode != "linear" && p->mode != "cubic") a.fail("mode", "expected nearest, linear or cubic");
        p->coord = a.getString("coordinate_transformation_mode", p->opset < 11 ? "asymmetric" : "half_pixel");
        static const char* const kModes[] = { "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
            "tf_half_pixel_for_nearest", "tf_half_pixel_for_nn", "tf_crop_and_resize" };
        if (std::find(std::begin(kModes), std::end(kModes), p->coord) == std::end(kModes))
            a.fail("coordinate_transformation_mode", "is not one of ONNX's");
        const std::string nm = a.getString("nearest_mode", "round_prefer_floor");
        if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil")
            a.fail("nearest_mode", "expected round_prefer_floor, round_prefer_ceil, floor or ceil");
        p->nearest = a.getString("nearest_mode", p->opset < 11 ? "round_prefer_ceil" : "round_prefer_floor");
        if (p->opset < 11 && p->mode == "nearest") p->nearest = "floor";
        p->cubicA = a.getFloat("cubic_coeff_a", -0.75);
        p->excludeOutside = a.getInt("exclude_outside", 0) != 0;
        p->extrapolation = a.getFloat("extrapolation_value", 0);
        const int scalesSlot = p->opset < 11 ? 1 : 2;
        if (p->hasInput(scalesSlot)) {
            const auto s = a.inputFloats(scalesSlot);
            if (!s) a.requireInputInts(scalesSlot, "scales");
            p->scales = *s;
        }
        if (p->opset >= 11 && p->hasInput(3)) {
            p->sizes = a.requireInputInts(3, "sizes");
            if (!p->sizes.empty()) p->scales.clear();
        }
        if (p->opset >= 11 && p->hasInput(1))
            if (const auto roi = a.inputFloats(1)) p->roi = *roi;
        if (p->scales.empty() && p->sizes.empty()) a.fail("__in2__", "Resize needs scales or sizes");
        return p;
    };
    addOnnxOp(r, std::move(def));

    OpDef up = resizeOp("Upsample");
    up.parse = [](const AttrMap& attrs) {
        auto p = std::make_shared<ResizeParams>();
        OnnxAttrs a(attrs, "Upsample");
        a.fillBase(*p, 1, 2);
        p->mode = a.getString("mode", "nearest");
        if (p->mode != "nearest" && p->mode != "linear") a.fail("mode", "expected nearest or linear");
        p->coord = "asymmetric";
        p->nearest = "floor";
        if (p->opset < 9) {
            p->scales = a.getFloats("scales", {});
        } else {
            const auto s = a.inputFloats(1);
            if (!s) a.requireInputInts(1, "scales");
            p->scales = *s;
        }
        return p;
    };
    addOnnxOp(r, std::move(up));
}

// DepthToSpace (DCR: depth-column-row, CRD: column-row-depth) and SpaceToDepth over (N, C, H, W).
void addDepthSpace(OpRegistry& r)
{
    for (const bool toSpace : { true, false }) {
        const char* name = toSpace ? "DepthToSpace" : "SpaceToDepth";
        OpDef def = onnxOp(name);
        def.parse = [name](const AttrMap& attrs) {
            auto p = std::make_shared<ResizeParams>();
            OnnxAttrs a(attrs, name);
            a.fillBase(*p, 1, 1);
            p->blocksize = a.getInt("blocksize");
            if (p->blocksize < 1 || p->blocksize > 65536) a.fail("blocksize", "must be from 1 to 65536");
            const std::string mode = a.getString("mode", "DCR");
            if (mode != "DCR" && mode != "CRD") a.fail("mode", "expected DCR or CRD");
            p->crd = mode == "CRD";
            return p;
        };
        def.inferShape = [name, toSpace](const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out) {
            const int64_t b = paramsAs<ResizeParams>(params).blocksize;
            const Shape& x = in[0];
            if (x.ndim() != 4) throw ShapeError(std::string(name) + ": input " + x.str() + " must be (N, C, H, W)");
            if (toSpace) {
                if (x[1] % (b * b)) throw ShapeError(std::string(name) + ": " + std::to_string(x[1]) + " channels are not a multiple of " + std::to_string(b * b));
                out[0] = Shape({ x[0], x[1] / (b * b), x[2] * b, x[3] * b });
            } else {
                if (x[2] % b || x[3] % b) throw ShapeError(std::string(name) + ": " + x.str() + " is not divisible by the block " + std::to_string(b));
                out[0] = Shape({ x[0], x[1] * b * b, x[2] / b, x[3] / b });
            }
        };
        def.inferType = [](const OpParams&, std::span<const DType> in, std::span<DType> out) { out[0] = in[0]; };
        def.reference = [toSpace](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
            return lambdaKernel(paramsAs<ResizeParams>(p), [toSpace](const ResizeParams& q, std::span<const Tensor* const> in,
                                                                std::span<Tensor* const> out, RunContext&) {
                // Both as a reshape to 6-D, a transpose and a reshape back.
                const int64_t b = q.blocksize;
                const Shape& x = in[0]->shape();
                Shape six;
                std::vector<int> perm;
                if (toSpace) {
                    const int64_t c = x[1] / (b * b);
                    six = q.crd ? Shape({ x[0], c, b, b, x[2], x[3] }) : Shape({ x[0], b, b, c, x[2], x[3] });
                    perm = q.crd ? std::vector<int> { 0, 1, 4, 2, 5, 3 } : std::vector<int> { 0, 3, 4, 1, 5, 2 };
                } else {
                    six = Shape({ x[0], x[1], x[2] / b, b, x[3] / b, b });
                    perm = { 0, 3, 5, 1, 2, 4 };
                }
                const Tensor src = in[0]->reshape(six);
                const Tensor dst = out[0]->reshape(permuted(six, perm));
                transposeBytes(src, dst, perm);
            });
        };
        addOnnxOp(r, std::move(def));
    }
}

} // namespace

void registerOnnxResize(OpRegistry& r)
{
    addResize(r);
    addDepthSpace(r);
}

} // namespace opscope
