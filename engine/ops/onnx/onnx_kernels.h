#pragma once

// Loops shared by ONNX's element-wise operators: the computing type of each element type (float16
// is computed in float), and NumPy-broadcast walks over one, two or three inputs.

#include "ops/onnx/onnx_op.h"
#include "tensor/dtype.h"

#include <type_traits>
#include <vector>

namespace opscope::onnx_ops {

/// The type an element is computed in: float for Half, the type itself otherwise.
template <class T> using Calc = std::conditional_t<std::is_same_v<T, Half>, float, T>;
template <class T> inline Calc<T> load(T v)
{
    if constexpr (std::is_same_v<T, Half>)
        return static_cast<float>(v);
    else
        return v;
}
template <class T, class V> inline T store(V v)
{
    if constexpr (std::is_same_v<T, Half>)
        return Half(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, bool>)
        return static_cast<bool>(v);
    else
        return static_cast<T>(v);
}

/// Advances a multi-index over `shape` by one element, moving each of the offsets by its strides
/// (broadcastStrides); the caller counts the elements.
template <size_t N> inline void advance(std::vector<int64_t>& idx, const Shape& shape,
    const std::vector<int64_t> (&strides)[N], int64_t (&offsets)[N])
{
    for (int d = shape.ndim() - 1; d >= 0; --d) {
        const size_t u = static_cast<size_t>(d);
        ++idx[u];
        for (size_t k = 0; k < N; ++k)
            offsets[k] += strides[k][u];
        if (idx[u] < shape[d]) return;
        for (size_t k = 0; k < N; ++k)
            offsets[k] -= strides[k][u] * shape[d];
        idx[u] = 0;
    }
}

/// o[i] = f(a[ia], b[ib]) over `os`, a and b broadcast to it.
template <class A, class B, class O, class F>
void broadcastBinary(const A* a, const Shape& as, const B* b, const Shape& bs, O* o, const Shape& os, F&& f)
{
    const int64_t n = os.size();
    if (as.size() == n && bs.size() == n) {
        for (int64_t i = 0; i < n; ++i)
            o[i] = f(a[i], b[i]);
        return;
    }
    if (as.size() == n && bs.size() == 1) {
        const B y = b[0];
        for (int64_t i = 0; i < n; ++i)
            o[i] = f(a[i], y);
        return;
    }
    if (as.size() == 1 && bs.size() == n) {
        const A x = a[0];
        for (int64_t i = 0; i < n; ++i)
            o[i] = f(x, b[i]);
        return;
    }
    const std::vector<int64_t> st[2] = { broadcastStrides(as, os), broadcastStrides(bs, os) };
    std::vector<int64_t> idx(static_cast<size_t>(os.ndim()), 0);
    int64_t off[2] = { 0, 0 };
    for (int64_t i = 0; i < n; ++i) {
        o[i] = f(a[off[0]], b[off[1]]);
        advance(idx, os, st, off);
    }
}

/// o[i] = f(a[ia], b[ib], c[ic]) over `os`.
template <class A, class B, class C, class O, class F>
void broadcastTernary(const A* a, const Shape& as, const B* b, const Shape& bs, const C* c, const Shape& cs, O* o,
    const Shape& os, F&& f)
{
    const int64_t n = os.size();
    const std::vector<int64_t> st[3] = { broadcastStrides(as, os), broadcastStrides(bs, os), broadcastStrides(cs, os) };
    std::vector<int64_t> idx(static_cast<size_t>(os.ndim()), 0);
    int64_t off[3] = { 0, 0, 0 };
    for (int64_t i = 0; i < n; ++i) {
        o[i] = f(a[off[0]], b[off[1]], c[off[2]]);
        advance(idx, os, st, off);
    }
}

/// Copies `a` broadcast to `os` into o, converting each element with f.
template <class A, class O, class F> void broadcastUnary(const A* a, const Shape& as, O* o, const Shape& os, F&& f)
{
    const int64_t n = os.size();
    if (as.size() == n) {
        for (int64_t i = 0; i < n; ++i)
            o[i] = f(a[i]);
        return;
    }
    const std::vector<int64_t> st[1] = { broadcastStrides(as, os) };
    std::vector<int64_t> idx(static_cast<size_t>(os.ndim()), 0);
    int64_t off[1] = { 0 };
    for (int64_t i = 0; i < n; ++i) {
        o[i] = f(a[off[0]]);
        advance(idx, os, st, off);
    }
}

} // namespace opscope::onnx_ops
