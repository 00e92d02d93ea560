#include "gui/tensor/feature_map_render.h"

#include "debug/tensor_stats.h"
#include "gui/tensor/color_map.h"

#include <algorithm>
#include <cmath>

namespace opscope::gui {

namespace {
std::pair<double, double> rangeOf(const debug::TensorStats& s, bool symmetric)
{
    if (s.finite == 0) return { 0.0, 0.0 };
    if (!symmetric) return { s.min, s.max };
    const double a = std::max(std::fabs(s.min), std::fabs(s.max));
    return { -a, a };
}

void fillImage(
    QImage& image, const float* p, const FeatureMapLayout& layout, std::pair<double, double> range, RenderedMaps& out)
{
    const double lo = range.first, hi = range.second;
    const bool flat = !(hi > lo);
    const float flo = static_cast<float>(lo);
    const float scale = flat ? 0.0f : static_cast<float>((kColorLevels - 1) / (hi - lo));
    const uchar mid = static_cast<uchar>((kColorLevels - 1) / 2);
    const int64_t w = layout.width;
    for (int64_t y = 0; y < layout.height; ++y) {
        uchar* line = image.scanLine(static_cast<int>(y));
        const int64_t rowStart = y * w;
        const int64_t n = std::clamp<int64_t>(layout.length - rowStart, 0, w);
        const float* row = p + rowStart;
        for (int64_t x = 0; x < n; ++x) {
            const float v = row[x];
            if (std::isfinite(v)) {
                if (flat) {
                    line[x] = mid;
                } else {
                    const float t = (v - flo) * scale + 0.5f;
                    line[x] = static_cast<uchar>(
                        t <= 0.0f ? 0 : (t >= kColorLevels - 1 ? kColorLevels - 1 : static_cast<int>(t)));
                }
            } else if (std::isnan(v)) {
                line[x] = kNanIndex;
                ++out.nan;
            } else if (v > 0) {
                line[x] = kPosInfIndex;
                ++out.posInf;
            } else {
                line[x] = kNegInfIndex;
                ++out.negInf;
            }
        }
        std::fill(line + n, line + w, static_cast<uchar>(kEmptyIndex));
    }
}
} // namespace

FeatureMapLayout FeatureMapLayout::of(const opscope::Shape& shape)
{
    FeatureMapLayout l;
    const int nd = shape.ndim();
    if (nd < 1 || nd > 4 || !shape.known() || shape.size() <= 0) return {};
    l.ndim = nd;
    switch (nd) {
    case 1: {
        const int64_t len = shape[0];
        l.maps = 1;
        l.length = len;
        if (len <= kStripMax) {
            l.height = 1;
            l.width = len;
        } else {
            // Rows of a multiple of 16 elements keep the flat index easy to read off.
            const auto side = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(len))));
            l.width = (side + 15) / 16 * 16;
            l.height = (len + l.width - 1) / l.width;
            l.wrapped = true;
        }
        return l;
    }
    case 2:
        l.maps = 1;
        l.height = shape[0];
        l.width = shape[1];
        break;
    case 3:
        l.maps = shape[0];
        l.height = shape[1];
        l.width = shape[2];
        break;
    default:
        l.batches = shape[0];
        l.maps = shape[1];
        l.height = shape[2];
        l.width = shape[3];
        break;
    }
    l.length = l.height * l.width;
    if (l.maps > kMaxMaps || l.height > kMaxSide || l.width > kMaxSide) return {};
    return l;
}

int64_t FeatureMapLayout::offset(int64_t batch, int64_t map, int64_t y, int64_t x) const
{
    const int64_t inMap = y * width + x;
    if (inMap >= length) return -1;
    return (batch * maps + map) * length + inMap;
}

std::vector<int64_t> FeatureMapLayout::tensorIndex(int64_t batch, int64_t map, int64_t y, int64_t x) const
{
    switch (ndim) {
    case 1:
        return { y * width + x };
    case 2:
        return { y, x };
    case 3:
        return { map, y, x };
    default:
        return { batch, map, y, x };
    }
}

RenderedMaps renderFeatureMaps(
    const opscope::Tensor& tensor, const FeatureMapLayout& layout, int64_t batch, MapScaling scaling, bool symmetric)
{
    RenderedMaps out;
    out.layout = layout;
    out.batch = batch;
    out.scaling = scaling;
    out.symmetric = symmetric;
    if (!layout.valid() || !tensor.defined() || batch < 0 || batch >= layout.batches
        || tensor.size() < layout.batches * layout.maps * layout.length)
        return out;

    // Maps are drawn from float32 values (an integer or bool tensor converted).
    const opscope::Tensor values = tensor.dtype() == opscope::DType::Float32 ? tensor : tensor.astype(opscope::DType::Float32);
    const float* base = values.data();
    const auto shared = rangeOf(debug::computeStats(tensor.view()), symmetric);
    out.sharedLo = shared.first;
    out.sharedHi = shared.second;
    const auto table = colorTable(ColorMap::Viridis);
    out.images.reserve(static_cast<size_t>(layout.maps));
    out.ranges.reserve(static_cast<size_t>(layout.maps));
    for (int64_t m = 0; m < layout.maps; ++m) {
        const float* p = base + (batch * layout.maps + m) * layout.length;
        std::pair<double, double> range = shared;
        if (scaling == MapScaling::PerMap && (layout.maps > 1 || layout.batches > 1))
            range = rangeOf(debug::computeStats(opscope::TensorView(p, opscope::Shape { layout.length })), symmetric);
        QImage image(static_cast<int>(layout.width), static_cast<int>(layout.height), QImage::Format_Indexed8);
        if (image.isNull()) return RenderedMaps {};
        image.setColorTable(table);
        fillImage(image, p, layout, range, out);
        out.images.push_back(std::move(image));
        out.ranges.push_back(range);
    }
    return out;
}

} // namespace opscope::gui
