#include "gui/tensor/color_map.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace opscope::gui {

namespace {
// Matplotlib's viridis sampled at nine even stops; linear interpolation between them stays
// within a few levels of the full table.
constexpr std::array<QRgb, 9> kViridis
    = { 0x440154, 0x472c7a, 0x3b518b, 0x2c718e, 0x21908d, 0x27ad81, 0x5cc863, 0xaadc32, 0xfde725 };
// ColorBrewer RdBu, reversed so negative values are blue.
constexpr std::array<QRgb, 7> kDiverging = { 0x2166ac, 0x67a9cf, 0xd1e5f0, 0xf7f7f7, 0xfddbc7, 0xef8a62, 0xb2182b };

template <size_t N> QColor interpolate(const std::array<QRgb, N>& stops, double t)
{
    const double x = std::clamp(t, 0.0, 1.0) * static_cast<double>(N - 1);
    const size_t i = std::min(static_cast<size_t>(x), N - 2);
    const double f = x - static_cast<double>(i);
    const QRgb a = stops[i], b = stops[i + 1];
    auto mix = [f](int p, int q) { return static_cast<int>(std::lround(p + (q - p) * f)); };
    return QColor(mix(qRed(a), qRed(b)), mix(qGreen(a), qGreen(b)), mix(qBlue(a), qBlue(b)));
}
} // namespace

QStringList colorMapNames()
{
    return { QStringLiteral("Viridis"), QStringLiteral("Gray"), QStringLiteral("Blue-white-red") };
}

QColor colorMapColor(ColorMap map, double t)
{
    switch (map) {
    case ColorMap::Gray: {
        const int v = static_cast<int>(std::lround(std::clamp(t, 0.0, 1.0) * 255));
        return QColor(v, v, v);
    }
    case ColorMap::Diverging:
        return interpolate(kDiverging, t);
    case ColorMap::Viridis:
        break;
    }
    return interpolate(kViridis, t);
}

QList<QRgb> colorTable(ColorMap map)
{
    QList<QRgb> table(256);
    for (int i = 0; i < kColorLevels; ++i)
        table[i] = colorMapColor(map, static_cast<double>(i) / (kColorLevels - 1)).rgba();
    table[kNanIndex] = nanColor().rgba();
    table[kPosInfIndex] = posInfColor().rgba();
    table[kNegInfIndex] = negInfColor().rgba();
    table[kEmptyIndex] = qRgba(0, 0, 0, 0);
    return table;
}

QColor nanColor()
{
    return QColor(255, 0, 255);
}

QColor posInfColor()
{
    return QColor(255, 140, 0);
}

QColor negInfColor()
{
    return QColor(0, 230, 255);
}

} // namespace opscope::gui
