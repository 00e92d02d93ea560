#pragma once

#include "tensor/tensor.h"

namespace opscope::gui::test {

/// A float32 tensor of small whole values repeating every 97 elements (-40 … 56): every element
/// is exact in any view and neighbours differ.
inline Tensor ramp(const Shape& s)
{
    Tensor t(s);
    for (int64_t i = 0; i < t.size(); ++i)
        t.at(i) = static_cast<float>(i % 97) - 40.0f;
    return t;
}

} // namespace opscope::gui::test
