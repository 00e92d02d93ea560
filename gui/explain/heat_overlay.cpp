#include "gui/explain/heat_overlay.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace opscope::gui {

QColor heatColor(double t)
{
    if (t < 0) return QColor::fromRgbF(0.1f, 0.3f, 1.0f);
    const auto v = static_cast<float>(std::min(1.0, t));
    return QColor::fromRgbF(std::min(1.0f, 0.4f + 1.2f * v), std::clamp(2.0f * v - 0.8f, 0.0f, 1.0f), 0.0f);
}

QImage renderHeatOverlay(const Tensor& input, const Tensor& heat, double opacity)
{
    if (input.ndim() != 4 || heat.ndim() != 2 || input.shape()[2] != heat.shape()[0] || input.shape()[3] != heat.shape()[1]
        || input.dtype() != DType::Float32)
        return {};
    const int64_t c = input.shape()[1], h = input.shape()[2], w = input.shape()[3];
    std::vector<float> gray(static_cast<size_t>(h * w), 0.0f);
    for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < h * w; ++p)
            gray[static_cast<size_t>(p)] += input.data()[ch * h * w + p] / static_cast<float>(c);
    const auto [lo, hi] = std::minmax_element(gray.begin(), gray.end());
    const float glo = *lo, span = *hi > *lo ? *hi - *lo : 1.0f;
    float peak = 0;
    for (float v : heat.values())
        if (std::isfinite(v)) peak = std::max(peak, std::fabs(v));
    if (peak == 0) peak = 1;
    QImage img(static_cast<int>(w), static_cast<int>(h), QImage::Format_RGB32);
    for (int64_t y = 0; y < h; ++y) {
        auto* line = reinterpret_cast<QRgb*>(img.scanLine(static_cast<int>(y)));
        for (int64_t x = 0; x < w; ++x) {
            const float g = (gray[static_cast<size_t>(y * w + x)] - glo) / span;
            const float raw = heat.data()[y * w + x];
            const double v = std::isfinite(raw) ? raw / peak : 0.0;
            const double a = std::min(1.0, std::fabs(v)) * opacity;
            const QColor hc = heatColor(v);
            auto mix = [&](double colour) { return static_cast<int>(std::lround(255 * ((1 - a) * g + a * colour))); };
            line[x] = qRgb(mix(hc.redF()), mix(hc.greenF()), mix(hc.blueF()));
        }
    }
    return img;
}

} // namespace opscope::gui
