#pragma once

// Window geometry of ONNX's convolutions and poolings: kernel_shape, strides, dilations, pads and
// auto_pad resolved for an input shape as ONNX Runtime resolves them.

#include "ops/onnx/onnx_op.h"

#include <span>
#include <string>
#include <vector>

namespace opscope::onnx_ops {

struct WindowAttrs {
    std::string autoPad = "NOTSET"; ///< NOTSET, SAME_UPPER, SAME_LOWER, VALID
    std::vector<int64_t> kernel, strides, dilations, pads;
    bool ceilMode = false;
};
WindowAttrs readWindowAttrs(const OnnxAttrs& a);

struct ResolvedWindow {
    std::vector<int64_t> kernel, strides, dilations, padBegin, padEnd, out;
    bool symmetric() const { return padBegin == padEnd; }
};
/// For input (N, C, spatial…): `kernel` per spatial dimension (Conv's from its weight, a pool's
/// kernel_shape). ShapeError naming `op` for attributes of the wrong length or an empty output.
ResolvedWindow resolveWindow(const WindowAttrs& a, const Shape& x, const std::vector<int64_t>& kernel, bool ceilMode,
    const char* op);

struct ResolvedTransposeWindow {
    std::vector<int64_t> kernel, strides, dilations, padBegin, out;
};
ResolvedTransposeWindow resolveTransposeWindow(const WindowAttrs& a, const Shape& x, const Shape& w,
    const std::vector<int64_t>& outputPadding, const std::vector<int64_t>& outputShape);

/// inferType for an operator whose inputs are all of one floating-point type.
std::function<void(const OpParams&, std::span<const DType>, std::span<DType>)> floatTypesAllSame(const char* op);

} // namespace opscope::onnx_ops
