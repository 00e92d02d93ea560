#include "ops/onnx/shape_util.h"

#include "core/checked.h"
#include "core/error.h"
#include "ops/onnx/onnx_op.h"

#include <algorithm>
#include <cstring>

namespace opscope::onnx_ops {

Shape shapeOfValues(const std::vector<int64_t>& v, std::string_view op)
{
    if (v.empty()) return Shape::scalar();
    if (v.size() > static_cast<size_t>(Shape::kMaxDims))
        throw ShapeError(std::string(op) + ": a shape of " + std::to_string(v.size()) + " dimensions (at most "
            + std::to_string(Shape::kMaxDims) + ")");
    Shape s;
    for (int64_t d : v) {
        if (d < 0) throw ShapeError(std::string(op) + ": negative dimension " + std::to_string(d));
        s.push_back(d);
    }
    (void)s.size(); // overflow is a ResourceError
    return s;
}

Shape reshapeTarget(const Shape& in, const std::vector<int64_t>& spec, bool allowZero)
{
    if (spec.size() > static_cast<size_t>(Shape::kMaxDims))
        throw ShapeError("Reshape: a shape of " + std::to_string(spec.size()) + " dimensions");
    Shape s;
    int inferred = -1;
    int64_t known = 1;
    for (size_t i = 0; i < spec.size(); ++i) {
        int64_t d = spec[i];
        if (d == 0 && !allowZero) {
            if (static_cast<int>(i) >= in.ndim())
                throw ShapeError("Reshape: 0 at position " + std::to_string(i) + " copies a dimension " + in.str() + " lacks");
            d = in[static_cast<int>(i)];
        }
        if (d == -1) {
            if (inferred >= 0) throw ShapeError("Reshape: more than one -1 in the shape");
            inferred = static_cast<int>(i);
            d = 1;
        } else if (d < 0) {
            throw ShapeError("Reshape: negative dimension " + std::to_string(d));
        } else {
            const auto grown = checkedMul(known, d);
            if (!grown) throw ShapeError("Reshape: the shape's dimensions overflow");
            known = *grown;
        }
        s.push_back(d);
    }
    if (spec.empty()) s = Shape::scalar();
    if (inferred >= 0) {
        if (known == 0 || in.size() % known != 0)
            throw ShapeError("Reshape: cannot reshape " + in.str() + " (" + std::to_string(in.size())
                + " elements) so the known dimensions multiply to " + std::to_string(known));
        s[inferred] = in.size() / known;
    }
    if (s.size() != in.size())
        throw ShapeError("Reshape: cannot reshape " + in.str() + " (" + std::to_string(in.size()) + " elements) into "
            + s.str() + " (" + std::to_string(s.size()) + ")");
    return s;
}

Shape squeezed(const Shape& in, const std::vector<int64_t>& axes, bool given)
{
    std::vector<bool> drop(static_cast<size_t>(in.ndim()), false);
    if (!given || axes.empty()) {
        for (int d = 0; d < in.ndim(); ++d)
            drop[static_cast<size_t>(d)] = in[d] == 1;
    }
    for (int64_t a : axes) {
        const int d = normalizeAxis(a, in.ndim(), "Squeeze");
        if (in[d] != 1)
            throw ShapeError("Squeeze: dimension " + std::to_string(d) + " of " + in.str() + " is not 1");
        drop[static_cast<size_t>(d)] = true;
    }
    Shape s;
    for (int d = 0; d < in.ndim(); ++d)
        if (!drop[static_cast<size_t>(d)]) s.push_back(in[d]);
    return s.ndim() == 0 ? Shape::scalar() : s;
}

Shape unsqueezed(const Shape& in, const std::vector<int64_t>& axes)
{
    const int rank = in.ndim() + static_cast<int>(axes.size());
    if (rank > Shape::kMaxDims) throw ShapeError("Unsqueeze: rank " + std::to_string(rank) + " is above 6");
    std::vector<bool> ins(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
        const int d = normalizeAxis(a, rank, "Unsqueeze");
        if (ins[static_cast<size_t>(d)]) throw ShapeError("Unsqueeze: axis " + std::to_string(a) + " given twice");
        ins[static_cast<size_t>(d)] = true;
    }
    Shape s;
    int k = 0;
    for (int d = 0; d < rank; ++d)
        s.push_back(ins[static_cast<size_t>(d)] ? 1 : in[k++]);
    return s;
}

std::vector<int> permutationOf(const std::vector<int64_t>& perm, bool given, int rank)
{
    std::vector<int> p(static_cast<size_t>(rank));
    if (!given) {
        for (int i = 0; i < rank; ++i)
            p[static_cast<size_t>(i)] = rank - 1 - i;
        return p;
    }
    if (static_cast<int>(perm.size()) != rank)
        throw ShapeError("Transpose: perm has " + std::to_string(perm.size()) + " axes for rank " + std::to_string(rank));
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int i = 0; i < rank; ++i) {
        const int a = normalizeAxis(perm[static_cast<size_t>(i)], rank, "Transpose");
        if (seen[static_cast<size_t>(a)]) throw ShapeError("Transpose: axis " + std::to_string(a) + " repeats in perm");
        seen[static_cast<size_t>(a)] = true;
        p[static_cast<size_t>(i)] = a;
    }
    return p;
}

Shape permuted(const Shape& in, const std::vector<int>& perm)
{
    if (in.ndim() == 0) return in;
    Shape s;
    for (int a : perm)
        s.push_back(in[a]);
    return s;
}

void transposeBytes(const Tensor& in, const Tensor& out, const std::vector<int>& perm)
{
    const Shape& is = in.shape();
    const Shape& os = out.shape();
    const size_t es = dtypeSize(in.dtype());
    const int64_t n = os.size();
    if (n == 0) return;
    const std::vector<int64_t> ist = stridesOf(is);
    std::vector<int64_t> st(static_cast<size_t>(os.ndim()));
    for (int d = 0; d < os.ndim(); ++d)
        st[static_cast<size_t>(d)] = ist[static_cast<size_t>(perm[static_cast<size_t>(d)])];
    std::vector<int64_t> idx(static_cast<size_t>(os.ndim()), 0);
    const char* src = static_cast<const char*>(in.raw());
    char* dst = static_cast<char*>(out.raw());
    int64_t off = 0;
    for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + i * static_cast<int64_t>(es), src + off * static_cast<int64_t>(es), es);
        for (int d = os.ndim() - 1; d >= 0; --d) {
            const size_t u = static_cast<size_t>(d);
            ++idx[u];
            off += st[u];
            if (idx[u] < os[d]) break;
            off -= st[u] * os[d];
            idx[u] = 0;
        }
    }
}

std::vector<int64_t> splitSizes(int64_t length, const std::vector<int64_t>& given, int outputs)
{
    if (!given.empty()) {
        int64_t total = 0;
        for (int64_t s : given) {
            if (s < 0) throw ShapeError("Split: negative size " + std::to_string(s));
            const auto sum = checkedAdd(total, s);
            if (!sum) throw ShapeError("Split: the sizes overflow");
            total = *sum;
        }
        if (total != length)
            throw ShapeError("Split: sizes add up to " + std::to_string(total) + ", the axis has " + std::to_string(length));
        return given;
    }
    const int64_t part = (length + outputs - 1) / outputs;
    std::vector<int64_t> sizes;
    int64_t left = length;
    for (int k = 0; k < outputs; ++k) {
        sizes.push_back(std::min(part, left));
        left -= sizes.back();
    }
    return sizes;
}

namespace {
    // out[i] = in[index mapped by f] for every output element, byte-wise.
    template <class Map> void gatherBytes(const Tensor& in, const Tensor& out, Map map)
    {
        const Shape& os = out.shape();
        const size_t es = dtypeSize(in.dtype());
        const int64_t n = os.size();
        std::vector<int64_t> idx(static_cast<size_t>(os.ndim()), 0);
        const char* src = static_cast<const char*>(in.raw());
        char* dst = static_cast<char*>(out.raw());
        for (int64_t i = 0; i < n; ++i) {
            std::memcpy(dst + i * static_cast<int64_t>(es), src + map(idx) * static_cast<int64_t>(es), es);
            for (int d = os.ndim() - 1; d >= 0; --d) {
                if (++idx[static_cast<size_t>(d)] < os[d]) break;
                idx[static_cast<size_t>(d)] = 0;
            }
        }
    }
}

void expandBytes(const Tensor& in, const Tensor& out)
{
    const std::vector<int64_t> st = broadcastStrides(in.shape(), out.shape());
    gatherBytes(in, out, [&](const std::vector<int64_t>& idx) {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d)
            off += idx[d] * st[d];
        return off;
    });
}

void tileBytes(const Tensor& in, const Tensor& out)
{
    const Shape& is = in.shape();
    const std::vector<int64_t> st = stridesOf(is);
    gatherBytes(in, out, [&](const std::vector<int64_t>& idx) {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d)
            off += (idx[d] % is[static_cast<int>(d)]) * st[d];
        return off;
    });
}

std::pair<int64_t, int64_t> shapeRange(int rank, int64_t start, int64_t end)
{
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    return { start, end };
}

} // namespace opscope::onnx_ops
