#include "models/evaluation.h"

#include "core/error.h"
#include "models/training.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace opscope::samples {

namespace {
// Confidence as a sort key: NaN (a diverged model) last.
float rank(const std::vector<float>& c, int64_t i)
{
    const float v = c[static_cast<size_t>(i)];
    return std::isnan(v) ? -1.0f : v;
}
} // namespace

std::vector<int64_t> Evaluation::cell(const Dataset& data, int64_t t, int64_t p) const
{
    std::vector<int64_t> out;
    for (size_t i = 0; i < predicted.size(); ++i)
        if (static_cast<int64_t>(data.label.at(static_cast<int64_t>(i))) == t && predicted[i] == p)
            out.push_back(static_cast<int64_t>(i));
    std::stable_sort(out.begin(), out.end(), [&](int64_t a, int64_t b) { return rank(confidence, a) > rank(confidence, b); });
    return out;
}

std::vector<int64_t> Evaluation::mistakes(const Dataset& data, size_t limit) const
{
    std::vector<int64_t> out;
    for (size_t i = 0; i < predicted.size(); ++i)
        if (static_cast<int64_t>(data.label.at(static_cast<int64_t>(i))) != predicted[i]) out.push_back(static_cast<int64_t>(i));
    std::stable_sort(out.begin(), out.end(), [&](int64_t a, int64_t b) { return rank(confidence, a) > rank(confidence, b); });
    if (out.size() > limit) out.resize(limit);
    return out;
}

std::optional<Evaluation> evaluate(gluon::HybridBlock& block, const Dataset& data, int64_t batch, const std::function<bool()>& stop)
{
    const int64_t n = data.data.shape()[0];
    std::vector<int64_t> all(static_cast<size_t>(n));
    std::iota(all.begin(), all.end(), 0);
    Evaluation e;
    int64_t right = 0;
    for (int64_t b = 0; b < n; b += std::max<int64_t>(1, batch)) {
        if (stop && stop()) return std::nullopt;
        const auto end = static_cast<size_t>(std::min(n, b + batch));
        const Tensor x = gatherRows(data.data, all, static_cast<size_t>(b), end);
        const Tensor y = block.call(x);
        if (y.ndim() != 2 || y.shape()[0] != static_cast<int64_t>(end) - b)
            throw UsageError("evaluating needs an output (N, classes), not " + y.shape().str());
        const int64_t k = y.shape()[1];
        if (e.classes == 0) {
            e.classes = k;
            e.confusion.assign(static_cast<size_t>(k * k), 0);
        }
        for (int64_t r = 0; r < y.shape()[0]; ++r) {
            const float* row = y.data() + r * k;
            const int64_t best = std::max_element(row, row + k) - row;
            double z = 0;
            for (int64_t c = 0; c < k; ++c)
                z += std::exp(static_cast<double>(row[c] - row[best]));
            e.predicted.push_back(best);
            e.confidence.push_back(static_cast<float>(1.0 / z));
            const auto truth = static_cast<int64_t>(data.label.at(b + r));
            if (truth >= 0 && truth < k) ++e.confusion[static_cast<size_t>(truth * k + best)];
            right += truth == best;
        }
    }
    e.accuracy = n > 0 ? static_cast<double>(right) / static_cast<double>(n) : 0.0;
    return e;
}

} // namespace opscope::samples
