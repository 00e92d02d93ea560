#include "gui/compare/divergence_scale.h"

#include <algorithm>
#include <cmath>

namespace opscope::gui {

namespace {
// The scale's ends: log10 of the values at severity 0 and 1 (SQNR: dB at severity 0 and 1).
std::pair<double, double> ends(debug::Metric m)
{
    switch (m) {
    case debug::Metric::MaxAbs:
        return { -7, 0 }; // 1e-7 … 1
    case debug::Metric::Beyond:
        return { -4, 0 }; // 0.01 % … all elements
    case debug::Metric::Sqnr:
        return { 80, 0 }; // 80 dB … 0 dB
    default:
        return { -7, -1 }; // 1e-7 … 0.1
    }
}
}

double DivergenceScale::severity(double value) const
{
    const auto [lo, hi] = ends(metric);
    if (std::isnan(value)) return 1;
    if (metric == debug::Metric::Sqnr) {
        if (std::isinf(value)) return value > 0 ? 0 : 1;
        return std::clamp((lo - value) / (lo - hi), 0.0, 1.0);
    }
    if (value <= 0) return 0;
    if (std::isinf(value)) return 1;
    return std::clamp((std::log10(value) - lo) / (hi - lo), 0.0, 1.0);
}

std::vector<std::pair<double, QString>> DivergenceScale::ticks() const
{
    const auto [lo, hi] = ends(metric);
    std::vector<std::pair<double, QString>> t;
    if (metric == debug::Metric::Sqnr) {
        for (double db = lo; db >= hi; db -= 20)
            t.emplace_back((lo - db) / (lo - hi), QStringLiteral("%1 dB").arg(db));
        return t;
    }
    const int step = hi - lo > 4 ? 2 : 1;
    for (int e = static_cast<int>(lo); e <= static_cast<int>(hi); e += step)
        t.emplace_back((e - lo) / (hi - lo), e == 0 ? QStringLiteral("1") : QStringLiteral("1e%1").arg(e));
    return t;
}

QString DivergenceScale::title() const
{
    switch (metric) {
    case debug::Metric::MaxAbs:
        return QStringLiteral("max |A−B|");
    case debug::Metric::MaxRel:
        return QStringLiteral("max relative |A−B|");
    case debug::Metric::RelL2:
        return QStringLiteral("relative L2 ‖A−B‖/‖A‖");
    case debug::Metric::Cosine:
        return QStringLiteral("1 − cosine similarity");
    case debug::Metric::Sqnr:
        return QStringLiteral("SQNR (dB, higher agrees)");
    case debug::Metric::Beyond:
        return QStringLiteral("share beyond tolerance");
    }
    return {};
}

QString DivergenceScale::format(double value)
{
    if (std::isinf(value)) return value > 0 ? QStringLiteral("∞") : QStringLiteral("−∞");
    if (std::isnan(value)) return QStringLiteral("NaN");
    return QString::number(value, 'g', 4);
}

std::vector<float> DivergenceScale::severities(const Graph& graph, const debug::Comparison& c) const
{
    std::vector<float> out(graph.size(), -1.0f);
    const std::vector<debug::NodeDivergence> nodes = debug::nodeDivergence(graph, c, metric);
    size_t k = 0;
    for (uint32_t id = 0; id < graph.size() && k < nodes.size(); ++id) {
        if (graph.node(id).isVariable()) continue;
        const debug::NodeDivergence& n = nodes[k++];
        if (n.matched) out[id] = static_cast<float>(severity(n.value));
    }
    return out;
}

} // namespace opscope::gui
