#include "gui/explain/heat_overlay.h"

#include "debug/explain.h"

namespace opscope::gui {

QColor heatColor(double t)
{
    float rgb[3];
    debug::heatColour(t, rgb);
    return QColor::fromRgbF(rgb[0], rgb[1], rgb[2]);
}

QImage renderHeatOverlay(const Tensor& input, const Tensor& heat, double opacity)
{
    const std::vector<uint8_t> rgb = debug::heatOverlayRgb(input, heat, opacity);
    if (rgb.empty()) return {};
    const int w = static_cast<int>(heat.shape()[1]), h = static_cast<int>(heat.shape()[0]);
    QImage img(w, h, QImage::Format_RGB32);
    for (int y = 0; y < h; ++y) {
        auto* line = reinterpret_cast<QRgb*>(img.scanLine(y));
        for (int x = 0; x < w; ++x) {
            const uint8_t* px = rgb.data() + (static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3;
            line[x] = qRgb(px[0], px[1], px[2]);
        }
    }
    return img;
}

} // namespace opscope::gui
