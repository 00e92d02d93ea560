// opscope-cli diff: records run A (and B) with op hooks on every input and output, compares them
// tensor by tensor and names the node where they part ways.

#include "cli/diff_command.h"

#include "cli/commands.h"
#include "cli/diff_sources.h"
#include "debug/compare.h"
#include "debug/compare_match.h"
#include "debug/compare_sources.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

namespace opscope::cli {

namespace {

std::vector<PrecisionRule> precisionRules(const std::vector<std::string>& half, const std::vector<std::string>& bf16)
{
    std::vector<PrecisionRule> rules;
    for (const std::string& t : half)
        rules.push_back({ t, Precision::Float16 });
    for (const std::string& t : bf16)
        rules.push_back({ t, Precision::BFloat16 });
    return rules;
}

std::string num(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// A number JSON can hold: ±inf as the strings "inf" / "-inf".
nlohmann::json finite(double v)
{
    if (std::isfinite(v)) return v;
    return v > 0 ? "inf" : "-inf";
}

nlohmann::json tensorJson(const debug::TensorDiff& d)
{
    return { { "name", d.name }, { "shape", d.shapeA.str() }, { "max_abs", d.maxAbs }, { "max_rel", d.maxRel },
        { "rel_l2", finite(d.relL2) }, { "cosine", d.cosine }, { "sqnr_db", finite(d.sqnrDb) },
        { "beyond", d.beyond }, { "nan_only_a", d.nanOnlyA }, { "nan_only_b", d.nanOnlyB },
        { "diverges", d.diverges }, { "problem", d.problem } };
}

// Google Model Explorer's node data for one graph: `results` by node with a value (and the
// colour of what diverges), `thresholds` colouring the rest by the value.
nlohmann::json overlayJson(const Graph& graph, const debug::Comparison& c, debug::Metric m, double rtol)
{
    nlohmann::json results = nlohmann::json::object();
    for (const debug::NodeDivergence& n : debug::nodeDivergence(graph, c, m)) {
        if (!n.matched) continue;
        // Model Explorer takes numbers only: the infinite ends as the largest doubles.
        const double v = std::isfinite(n.value) ? n.value : (n.value > 0 ? 1e308 : -1e308);
        nlohmann::json r { { "value", v } };
        if (c.firstDivergentNode && *c.firstDivergentNode == n.node)
            r["bgColor"] = "#d500f9";
        else if (n.diverges)
            r["bgColor"] = "#e53935";
        results[n.node] = r;
    }
    nlohmann::json thresholds = nlohmann::json::array();
    if (m == debug::Metric::Sqnr) {
        thresholds = { { { "value", 20 }, { "bgColor", "#e53935" } }, { { "value", 40 }, { "bgColor", "#ffb300" } },
            { { "value", 1e308 }, { "bgColor", "#43a047" } } };
    } else {
        const double good = m == debug::Metric::Beyond ? 0.0 : rtol / 10, fair = m == debug::Metric::Beyond ? 0.01 : rtol;
        thresholds = { { { "value", good }, { "bgColor", "#43a047" } }, { { "value", fair }, { "bgColor", "#ffb300" } },
            { { "value", 1e308 }, { "bgColor", "#e53935" } } };
    }
    return { { "results", results }, { "thresholds", thresholds } };
}

int report(const DiffOptions& o, const Graph& graphA, const debug::Comparison& c,
    const std::map<std::string, std::string>& byPosition)
{
    std::printf("%-48s %-18s %10s %10s %10s %9s %9s %8s  %s\n", "tensor", "shape", "max_abs", "max_rel", "rel_l2",
        "cosine", "sqnr_db", "beyond", "");
    nlohmann::json tensors = nlohmann::json::array();
    for (const debug::TensorDiff& d : c.diffs) {
        const bool first = c.firstDivergentNode && d.name.rfind(*c.firstDivergentNode + "_", 0) == 0;
        std::string mark = d.problem.empty() ? (d.diverges ? "DIVERGES" : "") : d.problem;
        if (d.nanOnlyA || d.nanOnlyB) mark += " (NaN/Inf only in " + std::string(d.nanOnlyB ? "B" : "A") + ")";
        if (first && d.diverges) mark += " <- first divergent node";
        std::printf("%-48s %-18s %10s %10s %10s %9s %9s %7.2f%%  %s\n", d.name.c_str(), d.shapeA.str().c_str(),
            num(d.maxAbs).c_str(), num(d.maxRel).c_str(), num(d.relL2).c_str(), num(d.cosine).c_str(),
            num(d.sqnrDb).c_str(), 100 * d.beyond, mark.c_str());
        tensors.push_back(tensorJson(d));
    }
    for (const std::string& n : c.onlyA)
        std::printf("%-48s only in A\n", n.c_str());
    for (const std::string& n : c.onlyB)
        std::printf("%-48s only in B\n", n.c_str());
    if (!byPosition.empty())
        std::printf("matched by position and operator (names differ): %zu tensors of B\n", byPosition.size());
    if (!c.onlyA.empty() || !c.onlyB.empty())
        std::printf("unmatched: %zu tensors only in A, %zu only in B (not compared)\n", c.onlyA.size(), c.onlyB.size());
    nlohmann::json top1 = nlohmann::json::array();
    for (const debug::HeadAgreement& h : c.top1) {
        std::printf("top-1 agreement of %s: %lld of %lld rows (%.1f%%)\n", h.name.c_str(),
            static_cast<long long>(h.agree), static_cast<long long>(h.rows),
            h.rows ? 100.0 * static_cast<double>(h.agree) / static_cast<double>(h.rows) : 100.0);
        top1.push_back({ { "name", h.name }, { "rows", h.rows }, { "agree", h.agree } });
    }
    if (!o.json.empty()) {
        std::ofstream out(o.json);
        if (!out) return fail(kUsage, o.json + ": cannot open for writing");
        out << nlohmann::json { { "rtol", o.rtol }, { "atol", o.atol }, { "tensors", tensors }, { "only_a", c.onlyA },
                   { "only_b", c.onlyB }, { "top1", top1 }, { "matched_by_position", byPosition },
                   { "first_divergent_node", c.firstDivergentNode ? nlohmann::json(*c.firstDivergentNode) : nlohmann::json() } }
                   .dump(1)
            << "\n";
    }
    if (!o.overlay.empty()) {
        std::ofstream out(o.overlay);
        if (!out) return fail(kUsage, o.overlay + ": cannot open for writing");
        out << overlayJson(graphA, c, *debug::parseMetric(o.metric), o.rtol).dump(1) << "\n";
    }
    if (!c.diverges()) {
        std::printf("no divergence: %zu tensors within rtol %s, atol %s\n", c.diffs.size(), num(o.rtol).c_str(),
            num(o.atol).c_str());
        return kOk;
    }
    if (c.firstDivergentNode)
        std::printf("first divergent node: %s\n", c.firstDivergentNode->c_str());
    else if (c.diffs.empty())
        std::printf("nothing to compare: no tensor of B has the name of a tensor of A (a --map FILE names them)\n");
    else
        std::printf("the runs differ, no single node where they part ways\n");
    return kDiverges;
}

} // namespace

int diffCommand(const DiffOptions& o)
{
    if (!debug::parseMetric(o.metric))
        return fail(kUsage, "diff: --metric " + o.metric + ": one of max_abs, max_rel, rel_l2, cosine, sqnr_db, beyond");
    debug::RecordedRun a, b;
    std::shared_ptr<const Graph> graphA, graphB;
    const LiveRun liveA { o.modelA, o.paramsA, o.inputsA, o.kernelsA, precisionRules(o.halfA, o.bf16A), o.seed, o.modeA };
    if (const int s = recordRun(liveA, a, graphA); s != kOk) return s;
    if (!o.dumpB.empty()) {
        if (const int s = readDumpRun(o.dumpB, a, b); s != kOk) return s;
    } else if (!o.npzB.empty()) {
        if (const int s = readNpzRun(o.npzB, b); s != kOk) return s;
    } else {
        LiveRun liveB { o.modelB.empty() ? o.modelA : o.modelB, o.paramsB, o.inputsB.empty() ? o.inputsA : o.inputsB,
            o.kernelsB, precisionRules(o.halfB, o.bf16B), o.seed, o.modeB };
        if (o.paramsB.empty() && o.modelB.empty()) liveB.params = o.paramsA;
        if (const int s = recordRun(liveB, b, graphB); s != kOk) return s;
    }
    // Another graph: what its names do not meet is matched by position and operator.
    std::map<std::string, std::string> byPosition;
    if (graphB && graphB != graphA) {
        byPosition = debug::matchByPosition(*graphA, a, *graphB, b);
        b = debug::renamed(std::move(b), byPosition);
    }
    if (!o.map.empty())
        if (const int s = applyNameMap(o.map, *graphA, a, b); s != kOk) return s;
    const debug::CompareTolerance tol { o.rtol, o.atol };
    return report(o, *graphA, debug::compareRuns(*graphA, a, b, tol), byPosition);
}

} // namespace opscope::cli
