#pragma once

#include "tensor/tensor.h"

#include <string>

namespace opscope::load {

/// `NAME=FILE.npy` or `NAME=SHAPE[:ones|zeros|uniform|normal]` (SHAPE like 1x1x28x28).
struct InputSpec {
    std::string name;
    std::string file; ///< set for a .npy source
    Shape shape; ///< set for a generated source
    std::string fill = "ones";
};

/// Parses a spec; throws UsageError naming the spec and what is wrong.
InputSpec parseInputSpec(const std::string& text);
/// Parses "1x1x28x28"; throws UsageError.
Shape parseShapeX(const std::string& text);
/// The tensor of a spec: reads the file (FileError) or fills the shape from `seed`.
Tensor makeInput(const InputSpec& spec, uint64_t seed);

} // namespace opscope::load
