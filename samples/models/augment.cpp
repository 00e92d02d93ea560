#include "models/augment.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace opscope::samples {

namespace {

// splitmix64, as the synthetic data sets use: the same numbers on every platform.
struct Rng {
    uint64_t state;
    uint64_t next()
    {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

// Samples `src` (h, w) at the inverse of the affine map (a, b; c, d) about the centre plus a shift.
void warp(const float* src, float* dst, int64_t h, int64_t w, const double m[4], double tx, double ty)
{
    const double cx = (static_cast<double>(w) - 1) / 2, cy = (static_cast<double>(h) - 1) / 2;
    const double det = m[0] * m[3] - m[1] * m[2];
    const double i0 = m[3] / det, i1 = -m[1] / det, i2 = -m[2] / det, i3 = m[0] / det;
    auto at = [&](int64_t y, int64_t x) { return y < 0 || x < 0 || y >= h || x >= w ? 0.0f : src[y * w + x]; };
    for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
            const double dx = static_cast<double>(x) - cx - tx, dy = static_cast<double>(y) - cy - ty;
            const double sx = i0 * dx + i1 * dy + cx, sy = i2 * dx + i3 * dy + cy;
            const auto x0 = static_cast<int64_t>(std::floor(sx)), y0 = static_cast<int64_t>(std::floor(sy));
            const double fx = sx - static_cast<double>(x0), fy = sy - static_cast<double>(y0);
            const double v = (at(y0, x0) * (1 - fx) + at(y0, x0 + 1) * fx) * (1 - fy)
                + (at(y0 + 1, x0) * (1 - fx) + at(y0 + 1, x0 + 1) * fx) * fy;
            dst[y * w + x] = static_cast<float>(v);
        }
}

} // namespace

Dataset augment(const Dataset& d, int copies, uint64_t seed, const AugmentStyle& style)
{
    if (copies <= 0) return d;
    if (d.data.ndim() != 4)
        throw UsageError("augmenting needs images (N, C, H, W), not " + d.data.shape().str());
    const int64_t n = d.data.shape()[0], c = d.data.shape()[1], h = d.data.shape()[2], w = d.data.shape()[3];
    const int64_t image = c * h * w;
    const int64_t total = n * (1 + copies);
    Dataset out { Tensor({ total, c, h, w }), Tensor({ total }) };
    std::copy_n(d.data.data(), n * image, out.data.data());
    std::copy_n(d.label.data(), n, out.label.data());
    Rng rng { seed * 0x2545F4914F6CDD1Dull + 99 };
    for (int k = 1; k <= copies; ++k)
        for (int64_t i = 0; i < n; ++i) {
            const double angle = rng.uniform(-style.maxRotation, style.maxRotation) * std::numbers::pi / 180;
            const double scale = rng.uniform(style.minScale, style.maxScale);
            const double shear = rng.uniform(-style.maxShear, style.maxShear);
            const double tx = rng.uniform(-style.maxShift, style.maxShift);
            const double ty = rng.uniform(-style.maxShift, style.maxShift);
            const double cs = std::cos(angle) * scale, sn = std::sin(angle) * scale;
            const double m[4] = { cs + shear * sn, -sn + shear * cs, sn, cs }; // shear ∘ rotation·scale
            const int64_t row = k * n + i;
            for (int64_t ch = 0; ch < c; ++ch)
                warp(d.data.data() + i * image + ch * h * w, out.data.data() + row * image + ch * h * w, h, w, m, tx, ty);
            out.label.data()[row] = d.label.at(i);
        }
    return out;
}

} // namespace opscope::samples
