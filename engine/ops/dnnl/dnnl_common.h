#pragma once

// Private to the engine: oneDNN is never exposed by a public header.

#include "tensor/shape.h"
#include "tensor/tensor.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace opscope::dnnlutil {

/// The process-wide CPU engine (created on first use).
dnnl::engine& cpuEngine();
/// A stream for the calling thread (kernels may run on several threads, one kernel per thread).
dnnl::stream& threadStream();

/// Plain row-major f32 memory descriptor for a shape (tag abcd… of the shape's rank).
dnnl::memory::desc plainDesc(const Shape& shape);
dnnl::memory::dims toDims(const Shape& shape);
/// Memory object over a tensor's buffer (no copy).
dnnl::memory wrap(const dnnl::memory::desc& desc, const Tensor& t);

/// Work in floating-point operations above which oneDNN pays off over the Eigen kernel
/// (oneDNN's call cost ~0.5 µs dominates below; see DESIGN.md).
constexpr double kMinFlops = 64.0 * 1024.0;

} // namespace opscope::dnnlutil
