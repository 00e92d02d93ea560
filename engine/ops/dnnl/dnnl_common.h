#pragma once

// Private to the engine: oneDNN is never exposed by a public header.

#include "ops/op.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

namespace opscope::dnnlutil {

/// The process-wide CPU engine (created on first use).
dnnl::engine& cpuEngine();
/// A stream for the calling thread (kernels may run on several threads, one kernel per thread).
dnnl::stream& threadStream();

/// Plain row-major f32 memory descriptor for a shape (tag abcd… of the shape's rank).
dnnl::memory::desc plainDesc(const Shape& shape);
dnnl::memory::dims toDims(const Shape& shape);
/// `desc` as a NativeLayout (Kernel::nativeOutput): its dimensions, type, padding and blocking
/// spelled out, so that equal keys mean the same layout. Plain (an empty key) when `desc` is
/// `plain`.
NativeLayout nativeLayout(const dnnl::memory::desc& desc, const dnnl::memory::desc& plain);
/// The descriptor a key of nativeLayout() was made from (every key made in this process is kept),
/// or nullopt for a key it never made.
std::optional<dnnl::memory::desc> layoutDesc(const std::string& key);
/// Memory object over a tensor's buffer (no copy).
dnnl::memory wrap(const dnnl::memory::desc& desc, const Tensor& t);

/// A primitive that reads one tensor and writes one (eltwise, pooling, softmax), made once: run()
/// points its memories at the tensors' buffers, executes and waits; then multiplies the output by
/// `scale` unless it is 1, and with `keepNaN` copies the input's NaNs to the output (oneDNN 2.6 maps
/// NaN to +inf in eltwise_exp and to a bound in eltwise_clip, and the debugger must see NaN
/// propagate).
class SrcDstKernel final : public Kernel {
public:
    SrcDstKernel(dnnl::primitive primitive, const dnnl::memory::desc& src, const dnnl::memory::desc& dst,
        float scale = 1.0f, bool keepNaN = false);
    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override;
    const char* backend() const override { return "dnnl"; }

private:
    dnnl::primitive m_primitive;
    dnnl::memory m_src, m_dst;
    std::unordered_map<int, dnnl::memory> m_args;
    float m_scale;
    bool m_keepNaN;
};

/// eltwise_forward (inference) over a tensor of `shape` seen as one flat run of values:
/// dst = scale · alg(src; alpha, beta). Throws dnnl::error when oneDNN rejects the algorithm.
std::unique_ptr<Kernel> makeEltwise(
    const Shape& shape, dnnl::algorithm alg, float alpha, float beta, float scale = 1.0f, bool keepNaN = false);

/// Work in floating-point operations above which oneDNN pays off over the Eigen kernel
/// (oneDNN's call cost ~0.5 µs dominates below; see DESIGN.md).
constexpr double kMinFlops = 64.0 * 1024.0;

/// Whether `batch` products of an (m×k) by a (k×n) matrix, 2·batch·m·k·n operations, reach kMinFlops.
constexpr bool matrixProductPays(double batch, double m, double k, double n)
{
    return 2.0 * batch * m * k * n >= kMinFlops;
}

} // namespace opscope::dnnlutil
