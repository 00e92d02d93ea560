#pragma once

// Private to the Activation / LeakyReLU family (activation.cpp, leaky_relu.cpp).

#include "ops/dnnl/dnnl_common.h"
#include "ops/op.h"

#include <memory>

namespace opscope {

class OpRegistry;

/// A oneDNN eltwise forward kernel over a whole tensor of `shape`:
/// dst = outScale * alg(src; alpha, beta). Returns nullptr when oneDNN rejects the algorithm.
std::unique_ptr<Kernel> makeDnnlEltwiseKernel(
    const Shape& shape, dnnl::algorithm alg, float alpha = 0.0f, float beta = 0.0f, float outScale = 1.0f);

/// Whether an elementwise op over `elements` values, `flopsPerElement` each, is worth oneDNN's call.
bool eltwiseDnnlPays(int64_t elements, double flopsPerElement);

/// LeakyReLU (leaky_relu.cpp); registered by registerActivation.
void registerLeakyReLU(OpRegistry& r);

} // namespace opscope
