#include "models/datasets.h"

#include "tensor/random.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <numbers>
#include <vector>

namespace opscope::samples {

namespace {

constexpr double kPi = std::numbers::pi;
constexpr int kSide = 28; // output field
constexpr double kBox = 20.0; // long side of the fitted digit
constexpr int kInkThreshold = 32; // gray level above which a pixel counts for the bounding box

// splitmix64: small, fast and the same on every platform (unlike std:: distributions).
class Rng {
public:
    explicit Rng(uint64_t seed)
        : m_state(seed)
    {
    }
    uint64_t next()
    {
        uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    double normal()
    {
        const double u = 1.0 - uniform(), v = uniform();
        return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * kPi * v);
    }
    bool chance(double p) { return uniform() < p; }
    int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

private:
    uint64_t m_state;
};

template <typename T> void shuffle(std::vector<T>& v, Rng& rng)
{
    for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i)
        std::swap(v[static_cast<size_t>(i)], v[static_cast<size_t>(rng.below(i + 1))]);
}

struct Pt {
    double x, y;
};
using Stroke = std::vector<Pt>;

// Builds a digit's strokes in a unit box (x right, y down), jittering every control value.
// Angles are in degrees; with y down, increasing angles turn clockwise on screen.
class Sketch {
public:
    Sketch(Rng& rng, double jitter)
        : m_rng(rng)
        , m_jitter(jitter)
    {
    }

    /// Starts a new stroke (the pen is lifted).
    void begin() { strokes.emplace_back(); }
    /// A straight line from the current point (or a start point) to about (x, y).
    void to(double x, double y) { add(jittered(x, y)); }
    /// An elliptic arc; a line joins it to the current point.
    void arc(double cx, double cy, double rx, double ry, double a0, double a1)
    {
        cx += j(0.03);
        cy += j(0.03);
        rx *= 1.0 + j(0.09);
        ry *= 1.0 + j(0.09);
        a0 += j(8.0);
        a1 += j(8.0);
        const int steps = std::max(2, static_cast<int>(std::ceil(std::abs(a1 - a0) / 18.0)));
        for (int i = 0; i <= steps; ++i) {
            const double a = (a0 + (a1 - a0) * i / steps) * kPi / 180.0;
            add({ cx + rx * std::cos(a), cy + ry * std::sin(a) });
        }
    }
    /// A smooth (Catmull-Rom) curve from the current point through about each of `pts`.
    void curve(std::initializer_list<Pt> pts)
    {
        std::vector<Pt> p;
        if (!strokes.back().empty()) p.push_back(strokes.back().back());
        for (const Pt& q : pts)
            p.push_back(jittered(q.x, q.y));
        if (p.size() < 2) {
            for (const Pt& q : p)
                add(q);
            return;
        }
        for (size_t i = 0; i + 1 < p.size(); ++i) {
            const Pt p0 = p[i == 0 ? 0 : i - 1], p1 = p[i], p2 = p[i + 1];
            const Pt p3 = p[std::min(i + 2, p.size() - 1)];
            const int steps = std::max(2, static_cast<int>(std::hypot(p2.x - p1.x, p2.y - p1.y) / 0.1) + 1);
            for (int s = (i == 0 ? 0 : 1); s <= steps; ++s) {
                const double t = static_cast<double>(s) / steps, t2 = t * t, t3 = t2 * t;
                auto cr = [&](double a, double b, double c, double d) {
                    return 0.5
                        * (2 * b + (-a + c) * t + (2 * a - 5 * b + 4 * c - d) * t2 + (-a + 3 * b - 3 * c + d) * t3);
                };
                add({ cr(p0.x, p1.x, p2.x, p3.x), cr(p0.y, p1.y, p2.y, p3.y) });
            }
        }
    }
    /// A random value in [lo, hi) (a shape parameter, not jittered further).
    double u(double lo, double hi) { return m_rng.uniform(lo, hi); }
    bool chance(double p) { return m_rng.chance(p); }

    std::vector<Stroke> strokes;

private:
    double j(double sigma) { return sigma * m_jitter * m_rng.normal(); }
    Pt jittered(double x, double y)
    {
        const double dx = j(0.045);
        return { x + dx, y + j(0.045) };
    }
    // Appends a point, splitting long lines so that the later warp bends them.
    void add(Pt p)
    {
        Stroke& s = strokes.back();
        if (!s.empty()) {
            const Pt a = s.back();
            const int parts = static_cast<int>(std::hypot(p.x - a.x, p.y - a.y) / 0.15);
            for (int i = 1; i <= parts; ++i) {
                const double t = static_cast<double>(i) / (parts + 1);
                s.push_back({ a.x + (p.x - a.x) * t, a.y + (p.y - a.y) * t });
            }
        }
        s.push_back(p);
    }

    Rng& m_rng;
    double m_jitter;
};

// The stroke skeleton of digit `d`, one of a few common ways to write it.
void sketchDigit(int d, Sketch& s)
{
    s.begin();
    switch (d) {
    case 0: {
        const double rx = s.u(0.25, 0.45), a0 = s.u(-130, -50);
        s.arc(0.5, 0.5, rx, 0.48, a0, a0 - s.u(335, 395));
        break;
    }
    case 1: {
        const double x = s.u(0.45, 0.55), lean = s.u(-0.02, 0.1) / 2; // most lean right
        const double kind = s.u(0, 1);
        if (kind < 0.45) { // a plain bar
            s.to(x + lean, 0.0);
        } else { // with a flag, sometimes a base
            const double len = s.u(0.1, 0.25);
            s.to(x + lean - len, len * s.u(0.9, 1.5));
            s.to(x + lean, 0.0);
        }
        s.to(x - lean, 1.0);
        if (kind > 0.8) {
            s.begin();
            const double w = s.u(0.2, 0.3);
            s.to(x - w, 1.0);
            s.to(x + w, 1.0);
        }
        break;
    }
    case 2: {
        const double kind = s.u(0, 1);
        if (kind < 0.1) { // angular, like a Z
            s.to(0.1, 0.08);
            s.to(0.45, 0.0);
            s.to(0.85, 0.12);
            s.to(0.1, 1.0);
            s.to(s.u(0.8, 0.95), 1.0);
            break;
        }
        const double ry = s.u(0.22, 0.3);
        s.arc(0.5, ry, s.u(0.3, 0.4), ry, s.u(190, 215), s.u(355, 385));
        if (kind < 0.5) { // straight diagonal
            s.to(0.1, 1.0);
        } else if (kind < 0.75) { // a loop at the bottom left
            s.curve({ { 0.45, 0.64 }, { 0.12, 0.92 }, { 0.04, 0.8 }, { 0.15, 0.72 }, { 0.3, 0.82 }, { 0.36, 0.97 } });
        } else { // a concave swan neck
            s.curve({ { 0.55, 0.62 }, { 0.25, 0.85 }, { 0.08, 1.0 } });
        }
        s.to(s.u(0.8, 0.95), s.u(0.95, 1.02));
        break;
    }
    case 3: {
        if (s.chance(0.2)) { // flat top
            s.to(0.15, 0.0);
            s.to(0.8, 0.0);
            s.to(0.42, 0.4);
            s.arc(0.47, 0.69, s.u(0.33, 0.42), 0.31, -110, s.u(125, 155));
        } else {
            const double ry = s.u(0.21, 0.27);
            s.arc(0.47, ry, s.u(0.28, 0.36), ry, s.u(200, 225), s.u(445, 475));
            const double ry2 = s.u(0.25, 0.3);
            s.arc(0.47, 1.0 - ry2, s.u(0.33, 0.42), ry2, s.u(-115, -85), s.u(125, 155));
        }
        break;
    }
    case 4: {
        const double bx = s.u(0.62, 0.72), by = s.u(0.6, 0.72);
        if (s.chance(0.45)) { // closed: the diagonal meets the upright at its top
            s.to(bx, 0.0);
            s.to(0.06, by);
            s.to(0.95, by);
            s.begin();
            s.to(bx, 0.0);
            s.to(bx, 1.0);
        } else { // open
            const double lx = s.u(0.12, 0.45);
            s.to(lx, 0.0);
            s.to(std::min(lx, 0.15) - 0.03, by);
            s.to(0.95, by);
            s.begin();
            s.to(bx, s.u(0.0, 0.25));
            s.to(bx, 1.0);
        }
        break;
    }
    case 5: {
        const bool oneStroke = s.chance(0.4);
        const double rx = s.u(0.28, 0.42), ry = s.u(0.22, 0.34);
        if (oneStroke) s.to(0.85, 0.0);
        s.to(0.25, 0.02);
        s.to(0.2, 0.45);
        s.arc(0.45, 1.0 - ry, rx, ry, s.u(-150, -120), s.u(120, 155));
        if (!oneStroke) {
            s.begin();
            s.to(0.25, 0.02);
            s.to(s.u(0.75, 0.9), 0.0);
        }
        break;
    }
    case 6: {
        const double ry = s.u(0.18, 0.3), rx = s.u(0.22, 0.36), rxBig = s.u(0.55, 0.75);
        const double cy = 1.0 - ry, left = s.u(0.12, 0.2);
        s.arc(left + rxBig, cy, rxBig, cy, s.u(255, 280), 180);
        s.arc(left + rx, cy, rx, ry, 180, s.u(-195, -140));
        break;
    }
    case 7: {
        const double stemX = s.u(0.25, 0.55);
        if (s.chance(0.12)) s.to(0.08, 0.15);
        s.to(0.08, 0.02);
        s.to(0.9, 0.0);
        if (s.chance(0.4))
            s.curve({ { 0.62, 0.5 }, { stemX, 1.0 } });
        else
            s.to(stemX, 1.0);
        if (s.chance(0.25)) { // crossed
            s.begin();
            const double mid = (0.9 + stemX) / 2;
            s.to(mid - s.u(0.2, 0.3), 0.52);
            s.to(mid + s.u(0.15, 0.25), 0.5);
        }
        break;
    }
    case 8: {
        const double kind = s.u(0, 1);
        if (kind < 0.55) { // one S-shaped stroke and back
            s.curve({ { 0.78, 0.12 }, { 0.5, 0.0 }, { 0.22, 0.14 }, { 0.3, 0.38 }, { 0.5, 0.5 }, { 0.75, 0.66 },
                { 0.78, 0.88 }, { 0.5, 1.0 }, { 0.2, 0.88 }, { 0.25, 0.66 }, { 0.5, 0.5 }, { 0.72, 0.34 },
                { 0.78, 0.12 } });
        } else if (kind < 0.75) { // the same, started the other way
            s.curve({ { 0.22, 0.12 }, { 0.5, 0.0 }, { 0.78, 0.14 }, { 0.7, 0.38 }, { 0.5, 0.5 }, { 0.25, 0.66 },
                { 0.22, 0.88 }, { 0.5, 1.0 }, { 0.8, 0.88 }, { 0.75, 0.66 }, { 0.5, 0.5 }, { 0.28, 0.34 },
                { 0.22, 0.12 } });
        } else { // two loops
            const double r1 = s.u(0.21, 0.25);
            s.arc(0.5, r1, s.u(0.22, 0.3), r1, 90, 450);
            s.begin();
            const double r2 = (1.0 - 2 * r1) / 2;
            s.arc(0.5, 1.0 - r2, s.u(0.28, 0.36), r2, -90, 270);
        }
        break;
    }
    default: { // 9
        const double ry = s.u(0.18, 0.32), rx = s.u(0.25, 0.4);
        const double a0 = s.u(-50, 25); // where the loop starts and the tail leaves it
        s.arc(0.45, ry, rx, ry, a0, a0 - s.u(350, 390));
        const double x = 0.45 + rx * std::cos(a0 * kPi / 180.0);
        if (s.chance(0.6))
            s.to(x - s.u(0.0, 0.12), 1.0);
        else
            s.curve({ { x - 0.02, 0.62 }, { x - 0.12, 0.92 }, { x - 0.35, 1.0 } });
        break;
    }
    }
}

// A segment of a stroke with the pen radius at each end (canvas pixels).
struct Segment {
    float ax, ay, bx, by, ra, rb;
};

// A rectangle of canvas pixels, bounds inclusive.
struct Rect {
    int left, top, right, bottom;
};

// Max-composites round-capped segments, antialiased over one pixel, into a size×size canvas.
// Returns the rectangle the segments can have touched.
Rect rasterise(const std::vector<Segment>& segs, std::vector<float>& canvas, int size)
{
    Rect touched { size, size, -1, -1 };
    for (const Segment& s : segs) {
        const float r = std::max(s.ra, s.rb) + 1.0f;
        const int x0 = std::max(0, static_cast<int>(std::floor(std::min(s.ax, s.bx) - r)));
        const int x1 = std::min(size - 1, static_cast<int>(std::ceil(std::max(s.ax, s.bx) + r)));
        const int y0 = std::max(0, static_cast<int>(std::floor(std::min(s.ay, s.by) - r)));
        const int y1 = std::min(size - 1, static_cast<int>(std::ceil(std::max(s.ay, s.by) + r)));
        touched = { std::min(touched.left, x0), std::min(touched.top, y0), std::max(touched.right, x1),
            std::max(touched.bottom, y1) };
        const float dx = s.bx - s.ax, dy = s.by - s.ay, len2 = dx * dx + dy * dy;
        const float inv = len2 > 0 ? 1.0f / len2 : 0.0f;
        for (int y = y0; y <= y1; ++y) {
            const float py = y + 0.5f - s.ay;
            float* row = canvas.data() + static_cast<size_t>(y) * size;
            for (int x = x0; x <= x1; ++x) {
                const float px = x + 0.5f - s.ax;
                const float t = std::clamp((px * dx + py * dy) * inv, 0.0f, 1.0f);
                const float ex = px - t * dx, ey = py - t * dy;
                const float v = s.ra + (s.rb - s.ra) * t + 0.5f - std::sqrt(ex * ex + ey * ey);
                row[x] = std::max(row[x], std::min(v, 1.0f));
            }
        }
    }
    return touched;
}

// Area-averaging resize of a w×h gray image to ow×oh (the smooth downscale image libraries use).
std::vector<float> resizeArea(const std::vector<float>& in, int w, int h, int ow, int oh)
{
    auto weights = [](int n, int on) {
        // For each output index, the (input index, weight) pairs covering it, weights summing to 1.
        std::vector<std::vector<std::pair<int, float>>> wt(static_cast<size_t>(on));
        const double step = static_cast<double>(n) / on;
        for (int o = 0; o < on; ++o) {
            const double lo = o * step, hi = (o + 1) * step;
            for (int i = static_cast<int>(std::floor(lo)); i < std::min(n, static_cast<int>(std::ceil(hi))); ++i) {
                const double cover = std::min(hi, i + 1.0) - std::max(lo, static_cast<double>(i));
                if (cover > 0) wt[static_cast<size_t>(o)].emplace_back(i, static_cast<float>(cover / step));
            }
        }
        return wt;
    };
    const auto wx = weights(w, ow), wy = weights(h, oh);
    std::vector<float> tmp(static_cast<size_t>(ow) * h, 0.0f), out(static_cast<size_t>(ow) * oh, 0.0f);
    for (int y = 0; y < h; ++y)
        for (int o = 0; o < ow; ++o)
            for (const auto& [i, k] : wx[static_cast<size_t>(o)])
                tmp[static_cast<size_t>(y) * ow + o] += k * in[static_cast<size_t>(y) * w + i];
    for (int o = 0; o < oh; ++o)
        for (const auto& [i, k] : wy[static_cast<size_t>(o)])
            for (int x = 0; x < ow; ++x)
                out[static_cast<size_t>(o) * ow + x] += k * tmp[static_cast<size_t>(i) * ow + x];
    return out;
}

float quantise(float v)
{
    return static_cast<float>(static_cast<int>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f));
}

// The drawing pad's MNIST-style fit: 8-bit gray, ink bounding box scaled to 20 pixels on its long
// side, placed so that its centre of mass is at the centre of the 28×28 field. Writes gray levels
// 0..255 into `out` (28×28, zeroed by the caller).
void fitLikeMnist(const std::vector<float>& canvas, int size, const Rect& inked, float* out)
{
    int left = size, top = size, right = -1, bottom = -1;
    std::vector<float> gray(canvas.size());
    for (int y = std::max(inked.top, 0); y <= inked.bottom; ++y) {
        for (int x = std::max(inked.left, 0); x <= inked.right; ++x) {
            const float g = quantise(canvas[static_cast<size_t>(y) * size + x]);
            gray[static_cast<size_t>(y) * size + x] = g;
            if (g <= kInkThreshold) continue;
            left = std::min(left, x);
            right = std::max(right, x);
            top = std::min(top, y);
            bottom = std::max(bottom, y);
        }
    }
    if (right < 0) return;
    const int bw = right - left + 1, bh = bottom - top + 1;
    std::vector<float> crop(static_cast<size_t>(bw) * bh);
    for (int y = 0; y < bh; ++y)
        std::copy_n(gray.begin() + (top + y) * size + left, bw, crop.begin() + static_cast<ptrdiff_t>(y) * bw);
    const double scale = std::min(kBox / bw, kBox / bh);
    const int sw = std::clamp(static_cast<int>(std::lround(bw * scale)), 1, kSide);
    const int sh = std::clamp(static_cast<int>(std::lround(bh * scale)), 1, kSide);
    std::vector<float> digit = resizeArea(crop, bw, bh, sw, sh);
    double mass = 0, mx = 0, my = 0;
    for (int y = 0; y < sh; ++y) {
        for (int x = 0; x < sw; ++x) {
            float& g = digit[static_cast<size_t>(y) * sw + x];
            g = static_cast<float>(static_cast<int>(g + 0.5f));
            mass += g;
            mx += g * (x + 0.5);
            my += g * (y + 0.5);
        }
    }
    const double cx = mass > 0 ? mx / mass : sw / 2.0, cy = mass > 0 ? my / mass : sh / 2.0;
    const int ox = std::clamp(static_cast<int>(std::lround(kSide / 2.0 - cx)), 0, kSide - sw);
    const int oy = std::clamp(static_cast<int>(std::lround(kSide / 2.0 - cy)), 0, kSide - sh);
    for (int y = 0; y < sh; ++y)
        std::copy_n(digit.begin() + static_cast<ptrdiff_t>(y) * sw, sw, out + (oy + y) * kSide + ox);
}

// Draws one digit of class `d` into `out` (28×28 values in [0, 1]).
void drawDigit(int d, Rng& rng, const DigitStyle& style, float* out)
{
    Sketch sketch(rng, style.jitter);
    sketchDigit(d, sketch);

    // Uneven proportions (middle higher or lower, top narrower or wider), a smooth random warp
    // (a hand's wobble), then aspect, slant and rotation about the centre.
    const double gamma = std::exp(rng.uniform(-0.25, 0.25)), taper = rng.uniform(-0.3, 0.3);
    const double amp = rng.uniform(0.0, 0.03) * style.jitter;
    const double fx = rng.uniform(0.5, 1.5) * 2 * kPi, fy = rng.uniform(0.5, 1.5) * 2 * kPi;
    const double px = rng.uniform(0, 2 * kPi), py = rng.uniform(0, 2 * kPi);
    const double aspect = rng.uniform(style.minAspect, style.maxAspect);
    const double shear = (rng.uniform(-0.6, 1.0) + rng.uniform(-0.6, 1.0)) / 2 * style.maxShear;
    const double angle = (rng.uniform(-1.0, 1.0) + rng.uniform(-1.0, 1.0)) / 2 * style.maxRotation * kPi / 180.0;
    const double ca = std::cos(angle), sa = std::sin(angle);
    double minX = 1e9, minY = 1e9, maxX = -1e9, maxY = -1e9;
    for (Stroke& s : sketch.strokes) {
        for (Pt& p : s) {
            const double y = p.y > 0 ? std::pow(p.y, gamma) : p.y;
            const double x = 0.5 + (p.x - 0.5) * (1.0 + taper * (y - 0.5));
            const double wx = x + amp * std::sin(fx * y + px) - 0.5;
            const double wy = y + amp * std::sin(fy * x + py) - 0.5;
            const double sx = wx * aspect - shear * wy;
            p = { sx * ca - wy * sa, sx * sa + wy * ca };
            minX = std::min(minX, p.x);
            maxX = std::max(maxX, p.x);
            minY = std::min(minY, p.y);
            maxY = std::max(maxY, p.y);
        }
    }

    // Size on the canvas and pen width, chosen so that the pen is `stroke` pixels wide once the
    // ink's long side is scaled to 20 pixels.
    const int size = std::max(style.canvas, kSide);
    const double stroke = std::clamp(
        (rng.uniform(style.minStroke, style.maxStroke) + rng.uniform(style.minStroke, style.maxStroke)) / 2, 0.5, 12.0);
    const double longSide = std::max({ maxX - minX, maxY - minY, 1e-3 });
    const double skeleton = std::min(rng.uniform(0.45, 0.8) * size, (size - 4.0) * (kBox - stroke) / kBox);
    const double k = skeleton / longSide;
    const double width = skeleton * stroke / (kBox - stroke);
    const double ox = size / 2.0 - k * (minX + maxX) / 2, oy = size / 2.0 - k * (minY + maxY) / 2;

    // Pen: slight pressure variation along strokes, or a font-like contrast with thinner
    // horizontal strokes.
    const double pressure = rng.uniform(0.0, 0.12);
    const double phase = rng.uniform(0, 2 * kPi), freq = rng.uniform(1.0, 3.0);
    const double contrast = rng.chance(0.15) ? rng.uniform(0.2, 0.5) : 0.0;
    std::vector<Segment> segs;
    for (const Stroke& s : sketch.strokes) {
        double along = 0;
        auto radius = [&](double at) { return width / 2 * (1.0 + pressure * std::sin(phase + freq * at)); };
        if (s.size() == 1) {
            const float x = static_cast<float>(ox + k * s[0].x), y = static_cast<float>(oy + k * s[0].y);
            const float r = static_cast<float>(radius(0));
            segs.push_back({ x, y, x, y, r, r });
        }
        for (size_t i = 0; i + 1 < s.size(); ++i) {
            const double dx = s[i + 1].x - s[i].x, dy = s[i + 1].y - s[i].y, len = std::hypot(dx, dy);
            double ra = radius(along), rb = radius(along + len);
            if (contrast > 0 && len > 0) {
                const double c = 1.0 - contrast * (dx * dx) / (len * len);
                ra *= c;
                rb *= c;
            }
            along += len;
            segs.push_back({ static_cast<float>(ox + k * s[i].x), static_cast<float>(oy + k * s[i].y),
                static_cast<float>(ox + k * s[i + 1].x), static_cast<float>(oy + k * s[i + 1].y),
                static_cast<float>(ra), static_cast<float>(rb) });
        }
    }
    std::vector<float> canvas(static_cast<size_t>(size) * size, 0.0f);
    const Rect inked = rasterise(segs, canvas, size);

    std::fill(out, out + kSide * kSide, 0.0f);
    fitLikeMnist(canvas, size, inked, out);

    // Ink texture, an optional slight blur, back to [0, 1].
    const double sigma = rng.uniform(0.0, style.noise) * 255.0;
    for (int i = 0; i < kSide * kSide; ++i)
        if (out[i] > 0 && sigma > 0)
            out[i] = std::clamp(static_cast<float>(out[i] + sigma * rng.normal()), 1.0f, 255.0f);
    if (rng.chance(style.blurProbability)) {
        const float a = static_cast<float>(rng.uniform(0.05, 0.12)), c = 1.0f - 2.0f * a;
        float tmp[kSide * kSide];
        for (int y = 0; y < kSide; ++y)
            for (int x = 0; x < kSide; ++x) {
                const float* r = out + y * kSide;
                tmp[y * kSide + x] = c * r[x] + a * ((x > 0 ? r[x - 1] : 0) + (x + 1 < kSide ? r[x + 1] : 0));
            }
        for (int y = 0; y < kSide; ++y)
            for (int x = 0; x < kSide; ++x) {
                const float up = y > 0 ? tmp[(y - 1) * kSide + x] : 0;
                const float down = y + 1 < kSide ? tmp[(y + 1) * kSide + x] : 0;
                out[y * kSide + x] = c * tmp[y * kSide + x] + a * (up + down);
            }
    }
    for (int i = 0; i < kSide * kSide; ++i)
        out[i] = std::clamp(out[i] / 255.0f, 0.0f, 1.0f);
}

} // namespace

Dataset spirals(int64_t n, int classes, double noise, uint64_t seed)
{
    classes = std::max(classes, 1);
    Generator gen(seed);
    Dataset d { Tensor(Shape({ n, 2 })), Tensor(Shape({ n })) };
    const float step = static_cast<float>(2 * kPi / classes);
    for (int64_t i = 0; i < n; ++i) {
        const int cls = static_cast<int>(i % classes);
        const float r = gen.uniform(0.05f, 1.0f);
        const float theta = r * 3.5f + cls * step + gen.normal(0.0f, static_cast<float>(noise));
        d.data.at(2 * i) = r * std::cos(theta);
        d.data.at(2 * i + 1) = r * std::sin(theta);
        d.label.at(i) = static_cast<float>(cls);
    }
    return d;
}

Dataset moons(int64_t n, double noise, uint64_t seed)
{
    Rng rng(seed);
    const int64_t outer = n / 2, inner = n - outer;
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        order[static_cast<size_t>(i)] = i;
    shuffle(order, rng);
    Dataset d { Tensor(Shape({ n, 2 })), Tensor(Shape({ n })) };
    for (int64_t i = 0; i < n; ++i) {
        const bool isOuter = i < outer;
        const int64_t k = isOuter ? i : i - outer, count = isOuter ? outer : inner;
        const double t = count > 1 ? kPi * static_cast<double>(k) / static_cast<double>(count - 1) : 0.0;
        const double x = isOuter ? std::cos(t) : 1.0 - std::cos(t);
        const double y = isOuter ? std::sin(t) : 0.5 - std::sin(t);
        const int64_t row = order[static_cast<size_t>(i)];
        d.data.at(2 * row) = static_cast<float>(x + noise * rng.normal());
        d.data.at(2 * row + 1) = static_cast<float>(y + noise * rng.normal());
        d.label.at(row) = isOuter ? 0.0f : 1.0f;
    }
    return d;
}

Dataset digits(int64_t n, uint64_t seed, const DigitStyle& style)
{
    Dataset d { Tensor(Shape({ n, 1, kSide, kSide })), Tensor(Shape({ n })) };
    std::vector<int> labels(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        labels[static_cast<size_t>(i)] = static_cast<int>(i % 10);
    Rng order(seed);
    shuffle(labels, order);
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(Rng(seed ^ (static_cast<uint64_t>(i + 1) * 0xD1B54A32D192ED03ull)).next());
        const int label = labels[static_cast<size_t>(i)];
        drawDigit(label, rng, style, d.data.data() + i * kSide * kSide);
        d.label.at(i) = static_cast<float>(label);
    }
    return d;
}

} // namespace opscope::samples
