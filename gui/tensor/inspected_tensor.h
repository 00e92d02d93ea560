#pragma once

#include "tensor/tensor.h"

#include <QString>

namespace opscope::gui {

/// One tensor of a paused node as the inspector lists it.
struct InspectedTensor {
    QString name;
    QString role; ///< "input", "weight", "output", "aux" or "record"
    opscope::Tensor values;
};

} // namespace opscope::gui
