#include "ops/onnx/index_util.h"

#include "core/checked.h"
#include "core/error.h"
#include "ops/onnx/onnx_kernels.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace opscope::onnx_ops {

namespace {
    using Idx = std::vector<int64_t>;

    // Calls f(index) for every multi-index of `s` in row-major order.
    template <class F> void forEachIndex(const Shape& s, F&& f)
    {
        const int64_t n = s.size();
        Idx idx(static_cast<size_t>(s.ndim()), 0);
        for (int64_t i = 0; i < n; ++i) {
            f(i, idx);
            for (int d = s.ndim() - 1; d >= 0; --d) {
                if (++idx[static_cast<size_t>(d)] < s[d]) break;
                idx[static_cast<size_t>(d)] = 0;
            }
        }
    }

    int64_t offsetOf(const Idx& idx, const std::vector<int64_t>& strides)
    {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d)
            off += idx[d] * strides[d];
        return off;
    }

    void copyElement(char* dst, int64_t di, const char* src, int64_t si, size_t es)
    {
        std::memcpy(dst + di * static_cast<int64_t>(es), src + si * static_cast<int64_t>(es), es);
    }

    // dst[di] = reduce(dst[di], src[si]) in the element type.
    void combine(const Tensor& dst, int64_t di, const Tensor& src, int64_t si, const std::string& reduction)
    {
        if (reduction == "none") {
            copyElement(static_cast<char*>(dst.raw()), di, static_cast<const char*>(src.raw()), si, dtypeSize(dst.dtype()));
            return;
        }
        dispatchType(dst.dtype(), [&](auto tag) {
            using T = decltype(tag);
            T* d = dst.dataAs<T>();
            const T* s = src.dataAs<T>();
            if constexpr (!std::is_same_v<T, bool>)
                d[di] = store<T>(reduction == "add" ? load(d[di]) + load(s[si]) : load(d[di]) * load(s[si]));
        });
    }
}

int64_t indexAt(const Tensor& indices, int64_t i, int64_t bound, const char* what)
{
    const int64_t v = indices.dtype() == DType::Int32 ? indices.dataAs<int32_t>()[i] : indices.dataAs<int64_t>()[i];
    if (v < -bound || v >= bound)
        throw ShapeError(std::string(what) + ": index " + std::to_string(v) + " is outside [" + std::to_string(-bound)
            + ", " + std::to_string(bound) + ")");
    return v < 0 ? v + bound : v;
}

void gatherAxis(const Tensor& data, const Tensor& indices, const Tensor& out, int axis)
{
    const Shape& ds = data.shape();
    const size_t es = dtypeSize(data.dtype());
    const int64_t outer = ds.product(0, axis), inner = ds.product(axis + 1, ds.ndim()), dim = ds[axis];
    const int64_t n = indices.size();
    const char* src = static_cast<const char*>(data.raw());
    char* dst = static_cast<char*>(out.raw());
    const size_t chunk = static_cast<size_t>(inner) * es;
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < n; ++j) {
            const int64_t k = indexAt(indices, j, dim, "Gather");
            std::memcpy(dst + (o * n + j) * static_cast<int64_t>(chunk), src + (o * dim + k) * static_cast<int64_t>(chunk), chunk);
        }
}

void gatherElements(const Tensor& data, const Tensor& indices, const Tensor& out, int axis)
{
    const std::vector<int64_t> st = stridesOf(data.shape());
    const size_t es = dtypeSize(data.dtype());
    const int64_t dim = data.shape()[axis];
    forEachIndex(indices.shape(), [&](int64_t i, const Idx& idx) {
        Idx at = idx;
        at[static_cast<size_t>(axis)] = indexAt(indices, i, dim, "GatherElements");
        copyElement(static_cast<char*>(out.raw()), i, static_cast<const char*>(data.raw()), offsetOf(at, st), es);
    });
}

Shape gatherNDShape(const Shape& data, const Shape& indices, int64_t b)
{
    const int64_t q = indices.ndim(), r = data.ndim();
    if (q < 1 || b < 0 || b >= std::min(q, r)) throw ShapeError("GatherND: batch_dims " + std::to_string(b) + " for ranks " + std::to_string(r) + " and " + std::to_string(q));
    const int64_t last = indices[static_cast<int>(q - 1)];
    if (last < 1 || last > r - b)
        throw ShapeError("GatherND: indices' last dimension " + std::to_string(last) + " for data " + data.str());
    Shape s;
    for (int d = 0; d < q - 1; ++d)
        s.push_back(indices[d]);
    for (int64_t d = b + last; d < r; ++d)
        s.push_back(data[static_cast<int>(d)]);
    if (s.ndim() > Shape::kMaxDims) throw ShapeError("GatherND: result of rank " + std::to_string(s.ndim()));
    return s.ndim() == 0 ? Shape::scalar() : s;
}

void gatherND(const Tensor& data, const Tensor& indices, const Tensor& out, int64_t b)
{
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    const int q = is.ndim();
    const int64_t last = is[q - 1];
    const std::vector<int64_t> st = stridesOf(ds);
    const int64_t inner = ds.product(static_cast<int>(b + last), ds.ndim());
    const int64_t tuples = is.product(0, q - 1);
    const int64_t perBatch = is.product(static_cast<int>(b), q - 1);
    const size_t es = dtypeSize(data.dtype());
    const int64_t batchStride = b > 0 ? st[static_cast<size_t>(b - 1)] : 0;
    for (int64_t t = 0; t < tuples; ++t) {
        int64_t off = b > 0 ? (t / perBatch) * batchStride : 0;
        for (int64_t j = 0; j < last; ++j) {
            const int d = static_cast<int>(b + j);
            off += indexAt(indices, t * last + j, ds[d], "GatherND") * st[static_cast<size_t>(d)];
        }
        std::memcpy(static_cast<char*>(out.raw()) + t * inner * static_cast<int64_t>(es),
            static_cast<const char*>(data.raw()) + off * static_cast<int64_t>(es), static_cast<size_t>(inner) * es);
    }
}

void scatterElements(const Tensor& data, const Tensor& indices, const Tensor& updates, const Tensor& out, int axis,
    const std::string& reduction)
{
    if (indices.shape() != updates.shape()) shapeMismatch("ScatterElements updates", indices.shape(), updates.shape());
    if (data.bytes()) std::memcpy(out.raw(), data.raw(), data.bytes());
    const std::vector<int64_t> st = stridesOf(data.shape());
    const int64_t dim = data.shape()[axis];
    forEachIndex(indices.shape(), [&](int64_t i, const Idx& idx) {
        Idx at = idx;
        at[static_cast<size_t>(axis)] = indexAt(indices, i, dim, "ScatterElements");
        combine(out, offsetOf(at, st), updates, i, reduction);
    });
}

void scatterND(const Tensor& data, const Tensor& indices, const Tensor& updates, const Tensor& out,
    const std::string& reduction)
{
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    const int q = is.ndim();
    const int64_t last = is[q - 1];
    if (last > ds.ndim()) throw ShapeError("ScatterND: indices' last dimension " + std::to_string(last) + " for data " + ds.str());
    if (data.bytes()) std::memcpy(out.raw(), data.raw(), data.bytes());
    const std::vector<int64_t> st = stridesOf(ds);
    const int64_t inner = ds.product(static_cast<int>(last), ds.ndim());
    const int64_t tuples = is.product(0, q - 1);
    if (updates.size() != tuples * inner)
        throw ShapeError("ScatterND: updates " + updates.shape().str() + " do not match indices " + is.str() + " and data " + ds.str());
    for (int64_t t = 0; t < tuples; ++t) {
        int64_t off = 0;
        for (int64_t j = 0; j < last; ++j)
            off += indexAt(indices, t * last + j, ds[static_cast<int>(j)], "ScatterND") * st[static_cast<size_t>(j)];
        for (int64_t e = 0; e < inner; ++e)
            combine(out, off + e, updates, t * inner + e, reduction);
    }
}

ResolvedSlice resolveSlice(const SliceSpec& spec, const Shape& in)
{
    const int rank = in.ndim();
    ResolvedSlice r;
    r.start.assign(static_cast<size_t>(rank), 0);
    r.step.assign(static_cast<size_t>(rank), 1);
    r.shape = in;
    const size_t n = spec.starts.size();
    if (spec.ends.size() != n || (!spec.axes.empty() && spec.axes.size() != n) || (!spec.steps.empty() && spec.steps.size() != n))
        throw ShapeError("Slice: starts, ends, axes and steps differ in length");
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t i = 0; i < n; ++i) {
        const int axis = normalizeAxis(spec.axes.empty() ? static_cast<int64_t>(i) : spec.axes[i], rank, "Slice");
        if (seen[static_cast<size_t>(axis)]) throw ShapeError("Slice: axis " + std::to_string(axis) + " repeats");
        seen[static_cast<size_t>(axis)] = true;
        const int64_t dim = in[axis];
        const int64_t step = spec.steps.empty() ? 1 : spec.steps[i];
        if (step == 0 || step == std::numeric_limits<int64_t>::min()) throw ShapeError("Slice: step " + std::to_string(step));
        int64_t start = spec.starts[i], end = spec.ends[i];
        if (start < 0) start = start < -dim ? -1 : start + dim; // keep huge negatives from overflowing
        if (end < 0) end = end < -dim ? -1 : end + dim;
        if (step > 0) {
            start = std::clamp<int64_t>(start, 0, dim);
            end = std::clamp<int64_t>(end, 0, dim);
        } else {
            start = std::clamp<int64_t>(start, -1, dim - 1);
            end = std::clamp<int64_t>(end, -1, dim - 1);
        }
        const int64_t count = step > 0 ? (end > start ? (end - start - 1) / step + 1 : 0)
                                       : (start > end ? (start - end - 1) / (-step) + 1 : 0);
        r.start[static_cast<size_t>(axis)] = count ? start : 0;
        r.step[static_cast<size_t>(axis)] = step;
        r.shape[axis] = count;
    }
    return r;
}

void sliceBytes(const Tensor& in, const Tensor& out, const ResolvedSlice& s)
{
    const std::vector<int64_t> st = stridesOf(in.shape());
    const size_t es = dtypeSize(in.dtype());
    forEachIndex(out.shape(), [&](int64_t i, const Idx& idx) {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d)
            off += (s.start[d] + idx[d] * s.step[d]) * st[d];
        copyElement(static_cast<char*>(out.raw()), i, static_cast<const char*>(in.raw()), off, es);
    });
}

std::vector<int64_t> padsFor(const std::vector<int64_t>& pads, const std::vector<int64_t>& axes, int rank)
{
    std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
    const size_t n = axes.empty() ? static_cast<size_t>(rank) : axes.size();
    if (pads.size() != 2 * n)
        throw ShapeError("Pad: " + std::to_string(pads.size()) + " pads for " + std::to_string(n) + " axes");
    for (size_t i = 0; i < n; ++i) {
        const int a = axes.empty() ? static_cast<int>(i) : normalizeAxis(axes[i], rank, "Pad");
        full[static_cast<size_t>(a)] = pads[i];
        full[static_cast<size_t>(a + rank)] = pads[i + n];
    }
    return full;
}

Shape paddedShape(const Shape& in, const std::vector<int64_t>& pads)
{
    Shape s = in;
    const int rank = in.ndim();
    for (int d = 0; d < rank; ++d) {
        const auto a = checkedAdd(in[d], pads[static_cast<size_t>(d)]);
        const auto b = a ? checkedAdd(*a, pads[static_cast<size_t>(d + rank)]) : std::nullopt;
        if (!b) throw ShapeError("Pad: dimension " + std::to_string(d) + " of " + in.str() + " with its pads overflows");
        const int64_t v = *b;
        if (v < 0) throw ShapeError("Pad: dimension " + std::to_string(d) + " of " + in.str() + " would be " + std::to_string(v));
        s[d] = v;
    }
    return s;
}

void padTensor(const Tensor& in, const Tensor& out, const std::vector<int64_t>& pads, const std::string& mode, double value)
{
    const Shape& is = in.shape();
    const int rank = is.ndim();
    const std::vector<int64_t> st = stridesOf(is);
    const size_t es = dtypeSize(in.dtype());
    Tensor fill(Shape({ 1 }), in.dtype());
    fill.fillWith(value);
    if (mode != "constant")
        for (int d = 0; d < rank; ++d)
            if (is[d] == 0 && (pads[static_cast<size_t>(d)] > 0 || pads[static_cast<size_t>(d + rank)] > 0))
                throw ShapeError("Pad: " + mode + " padding of an empty dimension");
    forEachIndex(out.shape(), [&](int64_t i, const Idx& idx) {
        int64_t off = 0;
        bool outside = false;
        for (int d = 0; d < rank; ++d) {
            int64_t k = idx[static_cast<size_t>(d)] - pads[static_cast<size_t>(d)];
            const int64_t n = is[d];
            if (k < 0 || k >= n) {
                if (mode == "constant") {
                    outside = true;
                    break;
                }
                if (mode == "edge") {
                    k = std::clamp<int64_t>(k, 0, n - 1);
                } else { // reflect, without repeating the edge
                    const int64_t period = n > 1 ? 2 * (n - 1) : 1;
                    k = ((k % period) + period) % period;
                    if (k >= n) k = period - k;
                }
            }
            off += k * st[static_cast<size_t>(d)];
        }
        if (outside)
            copyElement(static_cast<char*>(out.raw()), i, static_cast<const char*>(fill.raw()), 0, es);
        else
            copyElement(static_cast<char*>(out.raw()), i, static_cast<const char*>(in.raw()), off, es);
    });
}

void oneHot(const Tensor& indices, const Tensor& values, const Tensor& out, int axis, int64_t depth)
{
    if (values.size() != 2) throw ShapeError("OneHot: values must hold 2 elements (off, on), got " + values.shape().str());
    const size_t es = dtypeSize(out.dtype());
    const char* v = static_cast<const char*>(values.raw());
    const TensorView iv = indices.view();
    const Shape& os = out.shape();
    const int64_t inner = os.product(axis + 1, os.ndim());
    forEachIndex(os, [&](int64_t i, const Idx& idx) {
        const int64_t k = idx[static_cast<size_t>(axis)];
        const int64_t outer = i / (depth * inner);
        const int64_t at = outer * inner + i % inner;
        double raw = iv.valueAt(at);
        if (raw < 0) raw += static_cast<double>(depth);
        const bool on = raw == static_cast<double>(k);
        copyElement(static_cast<char*>(out.raw()), i, v, on ? 1 : 0, es);
    });
}

void trilu(const Tensor& in, const Tensor& out, int64_t k, bool upper)
{
    const Shape& s = in.shape();
    const int64_t rows = s[s.ndim() - 2], cols = s[s.ndim() - 1];
    const size_t es = dtypeSize(in.dtype());
    Tensor zero(Shape({ 1 }), in.dtype());
    zero.fillWith(0);
    forEachIndex(s, [&](int64_t i, const Idx& idx) {
        (void)rows;
        const int64_t r = idx[static_cast<size_t>(s.ndim() - 2)], c = idx[static_cast<size_t>(s.ndim() - 1)];
        const bool keep = upper ? c - r >= k : c - r <= k;
        (void)cols;
        if (keep)
            copyElement(static_cast<char*>(out.raw()), i, static_cast<const char*>(in.raw()), i, es);
        else
            copyElement(static_cast<char*>(out.raw()), i, static_cast<const char*>(zero.raw()), 0, es);
    });
}

} // namespace opscope::onnx_ops
