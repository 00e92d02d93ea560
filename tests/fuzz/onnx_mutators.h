#pragma once

// Mutations of ONNX models for the end-to-end fuzzer: byte-level ones, and structure-aware ones made
// on the parsed ModelProto (attributes, operator types, input names, initializer dimensions and data,
// opset versions, declared input shapes, removed nodes), so mutated files get past protobuf's parser
// and ONNX's checker into the importer and the engine.

#include "fuzz/mutators.h"

namespace opscope::fuzz {

/// A mutated copy of a serialized ModelProto. `operators`: ONNX op types to swap in.
std::string mutateOnnx(const std::string& bytes, Rng& rng, const std::vector<std::string>& operators);

} // namespace opscope::fuzz
