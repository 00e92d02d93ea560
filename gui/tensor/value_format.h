#pragma once

#include "tensor/shape.h"

#include <cstdint>
#include <span>

#include <QString>

namespace opscope::gui {

/// Table text of a value: 6 significant digits.
QString formatValue(double v);
/// Short text of a value for narrow columns: 4 significant digits (as PyTorch prints tensors) and a
/// short exponent ("-3.215", "0.0001235", "1.235e-5", "2.5e12", "nan").
QString formatCompact(double v);
/// Shortest text that reads back as the same float ("0.8123", "nan", "-inf").
QString formatExact(float v);
/// A full index spelled like a Python tuple: "(0, 3, 12, 7)", "(5,)", "()".
QString formatIndex(std::span<const int64_t> index);
/// Shape spelled like a Python tuple: "(2, 3)".
QString formatShape(const opscope::Shape& shape);
/// "36.8 KB", "1.2 MB".
QString formatBytes(int64_t bytes);
/// "12 (0.0315%)": a count and its share of `total`.
QString formatCountShare(int64_t count, int64_t total);

} // namespace opscope::gui
