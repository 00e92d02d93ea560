#include "debug/compare.h"

#include "debug/compare_kernel.h"

#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <set>
#include <thread>

namespace opscope::debug {

TensorDiff compareTensors(const std::string& name, const TensorView& a, const TensorView& b, const CompareTolerance& tol)
{
    TensorDiff d;
    d.name = name;
    d.shapeA = a.shape();
    d.shapeB = b.shape();
    d.typeA = a.dtype();
    d.typeB = b.dtype();
    if (a.shape() != b.shape() && a.size() != b.size()) {
        d.problem = "shape " + a.shape().str() + " against " + b.shape().str();
        d.diverges = true;
        return d;
    }
    double sumA2 = 0, sumB2 = 0, sumAB = 0, sumD2 = 0;
    int64_t beyond = 0;
    const int64_t n = a.size();
    // One pass over both tensors; float32 pairs read their floats directly (the common case, and
    // the one that must keep up with a recorded run).
    auto visit = [&](double x, double y) {
        const bool fx = std::isfinite(x), fy = std::isfinite(y);
        if (!fx || !fy) [[unlikely]] {
            const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
            if (!same) {
                if (!fx && fy) ++d.nanOnlyA;
                else if (fx && !fy) ++d.nanOnlyB;
                ++beyond;
            }
            return;
        }
        const double diff = std::fabs(x - y);
        d.maxAbs = std::max(d.maxAbs, diff);
        if (x != 0) d.maxRel = std::max(d.maxRel, diff / std::fabs(x));
        if (diff > tol.atol + tol.rtol * std::fabs(x)) ++beyond;
        sumA2 += x * x;
        sumB2 += y * y;
        sumAB += x * y;
        sumD2 += diff * diff;
    };
    PairSums fast;
    if (a.dtype() == DType::Float32 && b.dtype() == DType::Float32
        && finitePairSums(a.data(), b.data(), n, tol.atol, tol.rtol, fast)) {
        sumA2 = fast.sumA2;
        sumB2 = fast.sumB2;
        sumAB = fast.sumAB;
        sumD2 = fast.sumD2;
        d.maxAbs = fast.maxAbs;
        d.maxRel = fast.maxRel;
        beyond = fast.beyond;
    } else if (a.dtype() == DType::Float32 && b.dtype() == DType::Float32) {
        const float* pa = a.data();
        const float* pb = b.data();
        for (int64_t i = 0; i < n; ++i)
            visit(pa[i], pb[i]);
    } else {
        for (int64_t i = 0; i < n; ++i)
            visit(a.valueAt(i), b.valueAt(i));
    }
    d.relL2 = sumA2 > 0 ? std::sqrt(sumD2 / sumA2) : (sumD2 > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    d.cosine = sumA2 > 0 && sumB2 > 0 ? sumAB / std::sqrt(sumA2 * sumB2) : (sumA2 == sumB2 ? 1.0 : 0.0);
    d.sqnrDb = sumD2 > 0 ? 10 * std::log10(sumA2 / sumD2) : std::numeric_limits<double>::infinity();
    d.beyond = n ? static_cast<double>(beyond) / static_cast<double>(n) : 0.0;
    d.diverges = beyond > 0;
    return d;
}

void RecordedRun::add(const std::string& name, const TensorView& view)
{
    if (!tensors.count(name)) order.push_back(name);
    tensors[name] = Tensor::copyOf(view);
}

bool Comparison::diverges() const
{
    if (diffs.empty()) return true; // nothing matched: nothing shows the runs agree
    for (const TensorDiff& d : diffs)
        if (d.diverges) return true;
    for (const HeadAgreement& h : top1)
        if (h.agree != h.rows) return true;
    return false;
}

const TensorDiff* Comparison::find(const std::string& tensor) const
{
    for (const TensorDiff& d : diffs)
        if (d.name == tensor) return &d;
    return nullptr;
}

double metricOf(const TensorDiff& d, Metric m)
{
    if (!d.problem.empty()) // not comparable: the worst value
        return m == Metric::Sqnr ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    switch (m) {
    case Metric::MaxAbs:
        return d.nanOnlyA || d.nanOnlyB ? std::numeric_limits<double>::infinity() : d.maxAbs;
    case Metric::MaxRel:
        return d.nanOnlyA || d.nanOnlyB ? std::numeric_limits<double>::infinity() : d.maxRel;
    case Metric::RelL2:
        return d.nanOnlyA || d.nanOnlyB ? std::numeric_limits<double>::infinity() : d.relL2;
    case Metric::Cosine:
        return d.nanOnlyA || d.nanOnlyB ? 1.0 : 1.0 - d.cosine; // 0 for identical, as the others
    case Metric::Sqnr:
        return d.nanOnlyA || d.nanOnlyB ? -std::numeric_limits<double>::infinity() : d.sqnrDb;
    case Metric::Beyond:
        return d.beyond;
    }
    return d.relL2;
}

const char* metricName(Metric m)
{
    switch (m) {
    case Metric::MaxAbs:
        return "max_abs";
    case Metric::MaxRel:
        return "max_rel";
    case Metric::RelL2:
        return "rel_l2";
    case Metric::Cosine:
        return "cosine";
    case Metric::Sqnr:
        return "sqnr_db";
    case Metric::Beyond:
        return "beyond";
    }
    return "rel_l2";
}

std::optional<Metric> parseMetric(const std::string& name)
{
    for (Metric m : { Metric::MaxAbs, Metric::MaxRel, Metric::RelL2, Metric::Cosine, Metric::Sqnr, Metric::Beyond })
        if (name == metricName(m)) return m;
    return std::nullopt;
}

std::vector<NodeDivergence> nodeDivergence(const Graph& graph, const Comparison& c, Metric m)
{
    std::vector<NodeDivergence> out;
    for (uint32_t id = 0; id < graph.size(); ++id) {
        const Node& n = graph.node(id);
        if (n.isVariable()) continue;
        NodeDivergence nd;
        nd.node = n.name;
        for (int k = 0; k < n.numOutputs; ++k) {
            const TensorDiff* d = c.find(graph.outputName({ id, static_cast<uint32_t>(k), 0 }));
            if (!d) continue;
            const double v = metricOf(*d, m);
            // The worst output: for SQNR the lowest, for the others the highest.
            if (!nd.matched || (m == Metric::Sqnr ? v < nd.value : v > nd.value)) nd.value = v;
            nd.matched = true;
            nd.diverges = nd.diverges || d->diverges;
        }
        out.push_back(nd);
    }
    return out;
}

std::vector<HeadAgreement> topOneAgreement(const Graph& graph, const RecordedRun& a, const RecordedRun& b)
{
    std::vector<HeadAgreement> out;
    for (const NodeEntry& h : graph.heads()) {
        const std::string name = graph.outputName(h);
        const auto ia = a.tensors.find(name), ib = b.tensors.find(name);
        if (ia == a.tensors.end() || ib == b.tensors.end()) continue;
        const Tensor &ta = ia->second, &tb = ib->second;
        // A classifier's head: (batch, classes) scores, at least two classes.
        if (ta.shape().ndim() != 2 || ta.shape() != tb.shape() || ta.shape()[1] < 2) continue;
        const TensorView va = ta.view(), vb = tb.view();
        HeadAgreement g;
        g.name = name;
        g.rows = ta.shape()[0];
        const int64_t classes = ta.shape()[1];
        auto argmax = [classes](const TensorView& v, int64_t row) {
            int64_t best = 0;
            double bestValue = -std::numeric_limits<double>::infinity();
            for (int64_t k = 0; k < classes; ++k) {
                const double x = v.valueAt(row * classes + k);
                if (x > bestValue) { // NaN never wins
                    bestValue = x;
                    best = k;
                }
            }
            return best;
        };
        for (int64_t r = 0; r < g.rows; ++r)
            g.agree += argmax(va, r) == argmax(vb, r);
        out.push_back(g);
    }
    return out;
}

Comparison compareRuns(const Graph& graph, const RecordedRun& a, const RecordedRun& b, const CompareTolerance& tol)
{
    Comparison c;
    std::map<std::string, size_t> index;
    struct Pair {
        const std::string* name;
        const Tensor *a, *b;
    };
    std::vector<Pair> pairs;
    int64_t elements = 0;
    for (const std::string& name : a.order) {
        auto it = b.tensors.find(name);
        if (it == b.tensors.end()) {
            c.onlyA.push_back(name);
            continue;
        }
        index[name] = pairs.size();
        pairs.push_back({ &name, &a.tensors.at(name), &it->second });
        elements += it->second.size();
    }
    // The pairs are independent: both cores take them in turn when there is enough to share.
    c.diffs.resize(pairs.size());
    std::atomic<size_t> next { 0 };
    std::exception_ptr failed[2];
    auto work = [&](int worker) {
        try {
            for (size_t i = next++; i < pairs.size(); i = next++)
                c.diffs[i] = compareTensors(*pairs[i].name, pairs[i].a->view(), pairs[i].b->view(), tol);
        } catch (...) {
            failed[worker] = std::current_exception();
            next = pairs.size(); // the other stops too
        }
    };
    if (elements >= (1 << 20) && std::thread::hardware_concurrency() > 1) {
        std::thread helper(work, 1);
        work(0);
        helper.join();
    } else {
        work(0);
    }
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
    for (const std::string& name : b.order)
        if (!a.tensors.count(name)) c.onlyB.push_back(name);
    auto diverged = [&](const std::string& name) {
        auto it = index.find(name);
        return it != index.end() && c.diffs[it->second].diverges;
    };
    for (uint32_t id = 0; id < graph.size() && !c.firstDivergentNode; ++id) {
        const Node& n = graph.node(id);
        if (n.isVariable()) continue;
        bool out = false;
        for (int k = 0; k < n.numOutputs; ++k)
            out = out || diverged(graph.outputName({ id, static_cast<uint32_t>(k), 0 }));
        if (!out) continue;
        // Every input another op made must agree for this node to be where the runs part ways;
        // variables (parameters and the data) are this node's own business.
        bool inputsAgree = true;
        for (size_t k = 0; k < n.inputs.size() && inputsAgree; ++k) {
            if (graph.node(n.inputs[k].node).isVariable()) continue;
            if (diverged(graph.inputName(id, k)) || diverged(graph.outputName(n.inputs[k]))) inputsAgree = false;
        }
        if (inputsAgree) c.firstDivergentNode = n.name;
    }
    c.top1 = topOneAgreement(graph, a, b);
    return c;
}

} // namespace opscope::debug
