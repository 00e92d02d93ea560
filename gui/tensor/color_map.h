#pragma once

#include <QColor>
#include <QList>
#include <QString>
#include <QStringList>
#include <QtGui/qrgb.h>

namespace opscope::gui {

/// Colour maps of the feature-map view. Diverging is blue-white-red centred at zero.
enum class ColorMap { Viridis, Gray, Diverging, BlueWhiteRed = Diverging };

/// Feature maps are 8-bit indexed images: indexes below kColorLevels are the gradient, the rest
/// mark values that have no place on it.
constexpr int kColorLevels = 252;
constexpr int kNanIndex = 252;
constexpr int kPosInfIndex = 253;
constexpr int kNegInfIndex = 254;
constexpr int kEmptyIndex = 255; ///< a pixel past the end of a wrapped 1-D strip

/// Display names in enum order ("Viridis", "Gray", "Blue-white-red").
QStringList colorMapNames();
/// The gradient colour at t in [0, 1].
QColor colorMapColor(ColorMap map, double t);
/// A 256-entry table for the indexed images (gradient plus NaN, ±Inf and empty colours).
QList<QRgb> colorTable(ColorMap map);
/// Colours of the special values, as drawn and shown in the legend.
QColor nanColor();
QColor posInfColor();
QColor negInfColor();

} // namespace opscope::gui
