#pragma once

#include "load/model_loader.h"

#include <string>

namespace opscope::load {

/// What a model's first layer says about the shape of one of its inputs, for a file that does not
/// record it: the first op reading the input and the shape its weights imply, unknown dimensions 0
/// (a Convolution weight (F, C, 5, 5) implies (0, C·groups, 0, 0): "(N, 1, H, W)").
struct InputShapeHint {
    Shape shape; ///< ndim 0 when nothing suggests a shape
    std::string reader; ///< "Convolution 'conv0'"

    bool empty() const { return shape.ndim() == 0; }
    /// "(N, 1, H, W)": unknown dimensions by their role.
    std::string str() const;
    /// An example shape the user could type: unknown dimensions 1 for N and 28 for spatial ones
    /// ("1x1x28x28").
    std::string example() const;
};

/// The hint for input `index` of `m` (inputNames order), from its parameters' shapes (known once
/// a .params file is loaded).
InputShapeHint inputShapeHint(const LoadedModel& m, size_t index);

/// " (Convolution 'conv0' suggests (N, 1, H, W), e.g. 1x1x28x28)" or "".
std::string shapeSuggestion(const LoadedModel& m, size_t index);

} // namespace opscope::load
