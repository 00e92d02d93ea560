#pragma once

#include "tensor/tensor.h"

#include <QColor>
#include <QImage>

namespace opscope::gui {

/// The colour of an explanation's value v / max|v| in [-1, 1]: positive from dark red through red
/// to yellow, negative blue (as opscope-cli explain's --png).
QColor heatColor(double t);

/// The input (1, C, H, W) as gray (its channels averaged, stretched to [0, 1]) with `heat` (H, W)
/// over it: each pixel blends towards heatColor by `opacity` (0-1) times |v| / max|v|. An image of
/// H × W pixels (scale it up without smoothing to show). A null image when the shapes disagree.
QImage renderHeatOverlay(const Tensor& input, const Tensor& heat, double opacity);

} // namespace opscope::gui
