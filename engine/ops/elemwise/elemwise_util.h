#pragma once

// Private helpers of the element-wise families (binary, broadcast, scalar, unary).

#include "ops/dnnl/dnnl_common.h"
#include "ops/op.h"

#include <cstdint>
#include <span>
#include <string>

namespace opscope::elemwise {

/// Element counts from which oneDNN's element-wise primitives are worth their call and thread
/// fork/join. Memory-bound ops (add, mul, abs, clip, …) run at the same speed single-threaded in
/// oneDNN and Eigen, so only work large enough for both cores pays (DESIGN.md: under ~1 MFLOP, one
/// thread). Transcendental ops (exp, log, pow) cost ~15 flops an element and oneDNN's JIT code is
/// 3-7x faster than the libm loop even on one thread (measured here).
constexpr int64_t kDnnlMinElements = 1024 * 1024;
constexpr int64_t kDnnlMinElementsTranscendental = 64 * 1024;

/// Whether oneDNN pays for an element-wise op whose first output has at least `minElements`.
bool elementsPay(std::span<const Shape> out, int64_t minElements = kDnnlMinElements);

/// Merges `other` into `merged` dimension by dimension (0 is unknown, an unknown rank takes the
/// other shape). Throws shapeMismatch(what, merged, other) when a known dimension contradicts.
void mergeShape(Shape& merged, const Shape& other, const std::string& what);

/// MXNet's ElemwiseShape<n, 1>: every input and the output share one shape; unknown dimensions of
/// any of them are completed from the others. `names` label the inputs in errors.
void inferSameShape(std::vector<Shape>& in, std::vector<Shape>& out, std::span<const char* const> names);

/// oneDNN binary primitive dst = op(src0, src1) where src1 may have size-1 dimensions that are
/// broadcast (oneDNN 2.6 broadcasts src1 only). Shapes are left-padded with 1s to the output rank.
/// `src0` and `src1` are the shapes as oneDNN sees them: with `swapInputs`, input 1 is fed as src0
/// and input 0 as src1 (a broadcast lhs of a commutative op); `negateResult` adds a post-op that
/// negates dst (lhs - rhs computed as -(rhs - lhs)).
class DnnlBinaryKernel final : public Kernel {
public:
    DnnlBinaryKernel(dnnl::algorithm alg, const Shape& src0, const Shape& src1, const Shape& dst,
        bool swapInputs = false, bool negateResult = false);
    /// dst = op(input 0, constant): src1 is a single value held by the kernel (the scalar ops).
    DnnlBinaryKernel(dnnl::algorithm alg, const Shape& shape, float constant);
    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override;
    const char* backend() const override { return "dnnl"; }

private:
    dnnl::memory::desc m_src0;
    dnnl::memory::desc m_src1;
    dnnl::memory::desc m_dst;
    dnnl::binary m_prim;
    bool m_swap = false;
    bool m_hasConstant = false;
    float m_constant = 0.0f;
};

/// Pads `s` with leading 1s to rank `ndim` (NumPy broadcasting alignment).
Shape padLeft(const Shape& s, int ndim);

} // namespace opscope::elemwise
