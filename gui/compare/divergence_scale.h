#pragma once

// How a comparison's metric becomes a colour on the graph: a severity in [0, 1] on a fixed scale
// per metric (logarithmic for the differences, linear for SQNR), the same for every node so that
// colours compare across the graph and across comparisons.

#include "debug/compare.h"

#include <vector>

#include <QString>

namespace opscope::gui {

struct DivergenceScale {
    debug::Metric metric = debug::Metric::RelL2;

    /// 0 where the runs agree exactly (or better than the scale's low end), 1 at its high end and
    /// beyond (NaN/Inf on one side only, a pair that could not be compared).
    double severity(double value) const;
    /// The scale's ends and a few values between, as the legend labels them (severity, text).
    std::vector<std::pair<double, QString>> ticks() const;
    /// "relative L2", "max |A−B|", …
    QString title() const;
    /// A metric value as the window prints it.
    static QString format(double value);

    /// Severity per node id of A's graph (-1 where no output was compared).
    std::vector<float> severities(const Graph& graph, const debug::Comparison& c) const;
};

} // namespace opscope::gui
