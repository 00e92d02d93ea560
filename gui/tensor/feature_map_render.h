#pragma once

#include "tensor/tensor.h"

#include <cstdint>
#include <utility>
#include <vector>

#include <QImage>

namespace opscope::gui {

/// How a tensor is cut into feature maps: (N, C, H, W) and (C, H, W) give C maps of H x W (one
/// batch item at a time), (H, W) one map, (L) one strip (wrapped into rows when long).
struct FeatureMapLayout {
    static constexpr int64_t kMaxMaps = 4096;
    static constexpr int64_t kMaxSide = 16384;
    static constexpr int64_t kStripMax = 4096; ///< longer 1-D tensors are wrapped into rows

    int ndim = 0;
    int64_t batches = 1;
    int64_t maps = 0;
    int64_t height = 0;
    int64_t width = 0;
    int64_t length = 0; ///< elements per map (less than height * width for a wrapped strip)
    bool wrapped = false;

    /// The layout of `shape`; invalid() when the shape cannot be shown as images.
    static FeatureMapLayout of(const opscope::Shape& shape);
    bool valid() const { return maps > 0; }
    /// Flat offset of a pixel in the tensor, or -1 for the padding of a wrapped strip.
    int64_t offset(int64_t batch, int64_t map, int64_t y, int64_t x) const;
    /// The tensor index of a pixel, one entry per tensor axis.
    std::vector<int64_t> tensorIndex(int64_t batch, int64_t map, int64_t y, int64_t x) const;
    bool sameGeometry(const FeatureMapLayout& o) const
    {
        return ndim == o.ndim && maps == o.maps && height == o.height && width == o.width;
    }
};

/// Scale of the colours: each map over its own finite range, or all maps over the tensor's.
enum class MapScaling { PerMap, Shared };

/// The maps of one batch item as 8-bit indexed images (see color_map.h for the indexes).
struct RenderedMaps {
    FeatureMapLayout layout;
    int64_t batch = 0;
    MapScaling scaling = MapScaling::PerMap;
    bool symmetric = false; ///< ranges centred at zero (diverging colour map)
    std::vector<QImage> images;
    /// The value range spread over the gradient, per map (equal to the shared one when shared).
    std::vector<std::pair<double, double>> ranges;
    double sharedLo = 0; ///< range over the whole tensor
    double sharedHi = 0;
    int64_t nan = 0; ///< special values in the shown batch item
    int64_t posInf = 0;
    int64_t negInf = 0;
};

/// Builds the images; safe to call on a worker thread (reads `tensor` only).
RenderedMaps renderFeatureMaps(
    const opscope::Tensor& tensor, const FeatureMapLayout& layout, int64_t batch, MapScaling scaling, bool symmetric);

} // namespace opscope::gui
