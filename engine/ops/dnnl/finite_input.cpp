#include "ops/dnnl/finite_input.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace opscope::dnnlutil {

void FiniteInput::update(const Tensor& weights, const Tensor* bias)
{
    const float* w = weights.view().data(); // only read: data() would count as a write
    const float* b = bias ? bias->view().data() : nullptr;
    const uint64_t wv = weights.version(), bv = bias ? bias->version() : 0;
    bool changed = false;
    if (w != m_weightsFrom || wv != m_weightsVersion) {
        m_weightsFrom = w;
        m_weightsVersion = wv;
        const int64_t rows = weights.ndim() > 0 ? weights.shape()[0] : 1;
        const int64_t row = rows > 0 ? weights.size() / rows : 0;
        m_rowSum = 0;
        m_weightsFinite = true;
        for (int64_t o = 0; o < rows; ++o) {
            double s = 0;
            for (int64_t j = 0; j < row; ++j) {
                const float v = w[o * row + j];
                m_weightsFinite = m_weightsFinite && std::isfinite(v);
                s += std::fabs(static_cast<double>(v));
            }
            m_rowSum = std::max(m_rowSum, s);
        }
        changed = true;
    }
    if (b != m_biasFrom || bv != m_biasVersion) {
        m_biasFrom = b;
        m_biasVersion = bv;
        m_biasMax = 0;
        m_biasFinite = true;
        for (int64_t o = 0; b && o < bias->size(); ++o) {
            m_biasFinite = m_biasFinite && std::isfinite(b[o]);
            m_biasMax = std::max(m_biasMax, std::fabs(static_cast<double>(b[o])));
        }
        changed = true;
    }
    if (!changed) return;
    constexpr double ceiling = std::numeric_limits<float>::max() / 4.0;
    constexpr double largest = std::numeric_limits<float>::max();
    if (!m_weightsFinite || !m_biasFinite || m_biasMax >= ceiling) {
        m_limit = -1.0f;
        return;
    }
    // Inside the largest float, so that an infinite input never passes.
    m_limit = static_cast<float>(m_rowSum > 0 ? std::min(largest, (ceiling - m_biasMax) / m_rowSum) : largest);
}

std::optional<float> FiniteInput::bound(const float* x, int64_t n) const
{
    if (m_limit < 0) return std::nullopt;
    const float limit = m_limit;
    // In blocks, so a failing input stops early and each block vectorises (NaN fails the compare).
    constexpr int64_t block = 4096;
    float largest = 0;
    for (int64_t begin = 0; begin < n; begin += block) {
        const int64_t end = std::min(n, begin + block);
        int outside = 0;
        float m = 0;
        for (int64_t i = begin; i < end; ++i) {
            const float a = std::fabs(x[i]);
            outside |= !(a <= limit);
            m = a > m ? a : m;
        }
        if (outside) return std::nullopt;
        largest = std::max(largest, m);
    }
    return largest;
}

float FiniteInput::outputBound(float inputBound) const
{
    // Each output sums at most max_o Σ_j |w_oj| · inputBound and a bias, plus float rounding: a
    // relative 1e-3 covers it for sums of up to ~16k products. Longer ones may round past it, by
    // far less than the factor 4 that limit() keeps below FLT_MAX, and a bound is only ever
    // compared with a limit.
    const double b = (static_cast<double>(inputBound) * m_rowSum + m_biasMax) * 1.001;
    return static_cast<float>(std::min(b, static_cast<double>(std::numeric_limits<float>::max())));
}

namespace {
    struct Recorded {
        const float* data = nullptr;
        int64_t count = 0;
        uint64_t version = 0;
        float lo = 0, hi = 0;
    };
    // The last few outputs recorded on this thread, oldest overwritten first: a network's next
    // convolution reads what the one before it wrote.
    thread_local std::array<Recorded, 8> recorded;
    thread_local size_t nextRecorded = 0;
}

void recordBounds(const Tensor& t, float lo, float hi)
{
    const float* data = t.view().data();
    for (Recorded& r : recorded)
        if (r.data == data) r = Recorded(); // this start's earlier record
    recorded[nextRecorded] = Recorded { data, t.size(), t.version(), lo, hi };
    nextRecorded = (nextRecorded + 1) % recorded.size();
}

std::optional<std::pair<float, float>> recordedBounds(const Tensor& t)
{
    const float* data = t.view().data();
    if (!data) return std::nullopt;
    for (const Recorded& r : recorded)
        if (r.data == data && t.size() <= r.count && t.version() == r.version) return std::pair(r.lo, r.hi);
    return std::nullopt;
}

} // namespace opscope::dnnlutil
