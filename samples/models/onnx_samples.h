#pragma once

// The built-in ONNX samples: PyTorch exports (samples/onnx/make_onnx_samples.py) built into the
// library, imported as any .onnx file is.

#include "models/registry.h"

namespace opscope::samples {

/// sample:onnx-cnn: two Conv-BatchNormalization-Relu-MaxPool stages and a Gemm, 1x1x28x28 images.
Sample makeOnnxCnn(uint64_t seed);
/// sample:onnx-transformer: two transformer encoder layers (attention with a padding mask, GELU as
/// Erf, LayerNormalization) over 8 tokens of width 32.
Sample makeOnnxTransformer(uint64_t seed);

} // namespace opscope::samples
