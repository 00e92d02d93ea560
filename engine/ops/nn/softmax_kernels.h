#pragma once

// Private to the softmax family (softmax.cpp, softmax_output.cpp).

#include "ops/op.h"

#include <memory>

namespace opscope {

class OpRegistry;

/// A softmax over the middle axis of a dense tensor viewed as (outer, n, inner).
struct SoftmaxGeometry {
    int64_t outer = 1;
    int64_t n = 1;
    int64_t inner = 1;
};

/// Reference kernel: out[0] = softmax(in[0] / temperature) over the geometry's middle axis, or
/// log_softmax when `log`. Numerically stable (the maximum is subtracted first).
std::unique_ptr<Kernel> makeSoftmaxReferenceKernel(const SoftmaxGeometry& g, float temperature, bool log);
/// oneDNN softmax_forward / logsoftmax_forward over the same geometry (temperature 1); nullptr
/// unless the softmax axis is innermost (inner == 1), the only case oneDNN 2.6 runs fast.
std::unique_ptr<Kernel> makeSoftmaxDnnlKernel(const SoftmaxGeometry& g, bool log);
bool softmaxDnnlPays(const SoftmaxGeometry& g);

/// MXNet's SoftmaxGrad, the input gradient dx of y = softmax(x / temperature) over the geometry's
/// middle axis given dy: y·(dy − Σ dy·y) / temperature, or for log_softmax (`log`)
/// (dy − exp(y)·Σ dy) / temperature. With `lengths` (one per softmax, as softmax's use_length) only
/// the first clamp(length, 0, n) elements of each softmax take part; the others get 0.
void softmaxBackward(const SoftmaxGeometry& g, float temperature, bool log, const float* y, const float* dy, float* dx,
    const float* lengths = nullptr);

/// SoftmaxOutput and SoftmaxActivation (softmax_output.cpp); registered by registerSoftmax.
void registerSoftmaxOutput(OpRegistry& r);

} // namespace opscope
