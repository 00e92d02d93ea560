#pragma once

// Reference kernels shared by elemwise_* and broadcast_*: the functors of MXNet's mshadow ops and
// a broadcasting loop whose innermost contiguous run is an Eigen array expression.

#include "tensor/shape.h"

#include <Eigen/Core>
#include <array>
#include <cstdint>

namespace opscope::elemwise {

using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;

// Each functor gives the result for arrays of equal length (vv), an array and a scalar (vs), a
// scalar and an array (sv), and the gradients dL/dlhs and dL/drhs of one element from the output's
// gradient g and the inputs a, b (MXNet's _backward_<op> functors, as g * f'(a, b)).
struct AddOp {
    template <class A, class B> static auto vv(const A& a, const B& b) { return a + b; }
    template <class A> static auto vs(const A& a, float b) { return a + b; }
    template <class B> static auto sv(float a, const B& b) { return a + b; }
    static float gradLhs(float g, float, float) { return g; }
    static float gradRhs(float g, float, float) { return g; }
};
struct SubOp {
    template <class A, class B> static auto vv(const A& a, const B& b) { return a - b; }
    template <class A> static auto vs(const A& a, float b) { return a - b; }
    template <class B> static auto sv(float a, const B& b) { return a - b; }
    static float gradLhs(float g, float, float) { return g; }
    static float gradRhs(float g, float, float) { return -g; }
};
struct MulOp {
    template <class A, class B> static auto vv(const A& a, const B& b) { return a * b; }
    template <class A> static auto vs(const A& a, float b) { return a * b; }
    template <class B> static auto sv(float a, const B& b) { return a * b; }
    static float gradLhs(float g, float, float b) { return g * b; }
    static float gradRhs(float g, float a, float) { return g * a; }
};
struct DivOp {
    template <class A, class B> static auto vv(const A& a, const B& b) { return a / b; }
    template <class A> static auto vs(const A& a, float b) { return a / b; }
    template <class B> static auto sv(float a, const B& b) { return a / b; }
    // mshadow_op::div_grad and div_rgrad.
    static float gradLhs(float g, float, float b) { return g * (1.0f / b); }
    static float gradRhs(float g, float a, float b) { return g * (-a / (b * b)); }
};
// mshadow_op::maximum / minimum: a > b ? a : b (a NaN in lhs yields rhs, as in MXNet).
struct MaxOp {
    template <class A, class B> static auto vv(const A& a, const B& b) { return (a > b).select(a, b); }
    template <class A> static auto vs(const A& a, float b) { return (a > b).select(a, b); }
    template <class B> static auto sv(float a, const B& b) { return (b < a).select(a, b); }
    // mshadow_op::ge and lt: a tie goes to lhs; where either is NaN, neither side gets a gradient.
    static float gradLhs(float g, float a, float b) { return g * (a >= b ? 1.0f : 0.0f); }
    static float gradRhs(float g, float a, float b) { return g * (a < b ? 1.0f : 0.0f); }
};
struct MinOp {
    template <class A, class B> static auto vv(const A& a, const B& b) { return (a < b).select(a, b); }
    template <class A> static auto vs(const A& a, float b) { return (a < b).select(a, b); }
    template <class B> static auto sv(float a, const B& b) { return (b > a).select(a, b); }
    // mshadow_op::le and gt: a tie goes to lhs.
    static float gradLhs(float g, float a, float b) { return g * (a <= b ? 1.0f : 0.0f); }
    static float gradRhs(float g, float a, float b) { return g * (a > b ? 1.0f : 0.0f); }
};

/// out = Op(lhs, rhs) with NumPy/MXNet broadcasting: shapes are aligned on the right, and a
/// dimension of 1 (or a missing leading one) is repeated. Shapes must be broadcast-compatible
/// with `os` (checked by shape inference).
template <class Op>
void broadcastApply(const float* a, const Shape& as, const float* b, const Shape& bs, float* o, const Shape& os)
{
    const int nd = os.ndim();
    // Per output dimension: extent and element strides of a and b (0 where broadcast).
    std::array<int64_t, Shape::kMaxDims> ext {}, sa {}, sb {};
    int n = 0;
    int64_t strideA = 1, strideB = 1;
    std::array<int64_t, Shape::kMaxDims> fa {}, fb {};
    for (int i = nd - 1; i >= 0; --i) {
        const int ia = i - (nd - as.ndim()), ib = i - (nd - bs.ndim());
        const int64_t da = ia >= 0 ? as[ia] : 1, db = ib >= 0 ? bs[ib] : 1;
        fa[i] = (da == 1 && os[i] != 1) ? 0 : strideA;
        fb[i] = (db == 1 && os[i] != 1) ? 0 : strideB;
        strideA *= da;
        strideB *= db;
    }
    // Merge neighbouring dimensions that both operands walk the same way (MXNet's
    // BinaryBroadcastShapeCompact), innermost last; size-1 output dimensions are dropped.
    for (int i = 0; i < nd; ++i) {
        if (os[i] == 1) continue;
        if (n > 0) {
            const int j = n - 1;
            const bool contA = (sa[j] == 0 && fa[i] == 0) || (sa[j] != 0 && fa[i] != 0 && sa[j] == fa[i] * os[i]);
            const bool contB = (sb[j] == 0 && fb[i] == 0) || (sb[j] != 0 && fb[i] != 0 && sb[j] == fb[i] * os[i]);
            if (contA && contB) {
                ext[j] *= os[i];
                sa[j] = fa[i];
                sb[j] = fb[i];
                continue;
            }
        }
        ext[n] = os[i];
        sa[n] = fa[i];
        sb[n] = fb[i];
        ++n;
    }
    if (n == 0) { // every dimension is 1: a single element
        ext[0] = 1;
        sa[0] = sb[0] = 1;
        n = 1;
    }
    const int64_t len = ext[n - 1];
    const bool va = sa[n - 1] != 0, vb = sb[n - 1] != 0;
    std::array<int64_t, Shape::kMaxDims> idx {};
    int64_t offA = 0, offB = 0;
    const int64_t rows = os.size() / len;
    for (int64_t r = 0; r < rows; ++r) {
        ArrayMap dst(o + r * len, len);
        if (va && vb)
            dst = Op::vv(ConstArrayMap(a + offA, len), ConstArrayMap(b + offB, len));
        else if (va)
            dst = Op::vs(ConstArrayMap(a + offA, len), b[offB]);
        else // the innermost run always walks at least one operand
            dst = Op::sv(a[offA], ConstArrayMap(b + offB, len));
        // Advance the odometer over the outer dimensions.
        for (int d = n - 2; d >= 0; --d) {
            offA += sa[d];
            offB += sb[d];
            if (++idx[d] < ext[d]) break;
            offA -= sa[d] * ext[d];
            offB -= sb[d] * ext[d];
            idx[d] = 0;
        }
    }
}

/// Calls fn(o, ia, ib) for every element o of the broadcast output `os` with the offsets of the
/// elements of a (shape `as`) and b (shape `bs`) it is computed from.
template <class F> void forEachBroadcastIndex(const Shape& as, const Shape& bs, const Shape& os, F fn)
{
    const int nd = os.ndim();
    std::array<int64_t, Shape::kMaxDims> fa {}, fb {}, idx {};
    int64_t strideA = 1, strideB = 1;
    for (int i = nd - 1; i >= 0; --i) {
        const int ia = i - (nd - as.ndim()), ib = i - (nd - bs.ndim());
        const int64_t da = ia >= 0 ? as[ia] : 1, db = ib >= 0 ? bs[ib] : 1;
        fa[i] = da == 1 ? 0 : strideA;
        fb[i] = db == 1 ? 0 : strideB;
        strideA *= da;
        strideB *= db;
    }
    const int64_t n = os.size();
    int64_t offA = 0, offB = 0;
    for (int64_t o = 0; o < n; ++o) {
        fn(o, offA, offB);
        for (int d = nd - 1; d >= 0; --d) {
            offA += fa[d];
            offB += fb[d];
            if (++idx[d] < os[d]) break;
            offA -= fa[d] * os[d];
            offB -= fb[d] * os[d];
            idx[d] = 0;
        }
    }
}

} // namespace opscope::elemwise
