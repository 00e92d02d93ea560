#include "debug/compare.h"

#include <cmath>
#include <limits>
#include <set>

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
    for (int64_t i = 0; i < n; ++i) {
        const double x = a.valueAt(i), y = b.valueAt(i);
        const bool fx = std::isfinite(x), fy = std::isfinite(y);
        if (!fx || !fy) {
            const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
            if (!same) {
                if (!fx && fy) ++d.nanOnlyA;
                else if (fx && !fy) ++d.nanOnlyB;
                ++beyond;
            }
            continue;
        }
        const double diff = std::fabs(x - y);
        d.maxAbs = std::max(d.maxAbs, diff);
        if (x != 0) d.maxRel = std::max(d.maxRel, diff / std::fabs(x));
        if (diff > tol.atol + tol.rtol * std::fabs(x)) ++beyond;
        sumA2 += x * x;
        sumB2 += y * y;
        sumAB += x * y;
        sumD2 += diff * diff;
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
    if (!onlyA.empty() || !onlyB.empty()) return true;
    for (const TensorDiff& d : diffs)
        if (d.diverges) return true;
    return false;
}

Comparison compareRuns(const Graph& graph, const RecordedRun& a, const RecordedRun& b, const CompareTolerance& tol)
{
    Comparison c;
    std::map<std::string, size_t> index;
    for (const std::string& name : a.order) {
        auto it = b.tensors.find(name);
        if (it == b.tensors.end()) {
            c.onlyA.push_back(name);
            continue;
        }
        index[name] = c.diffs.size();
        c.diffs.push_back(compareTensors(name, a.tensors.at(name).view(), it->second.view(), tol));
    }
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
            if (diverged(n.name + "_" + n.inputSlots[k]) || diverged(graph.outputName(n.inputs[k]))) inputsAgree = false;
        }
        if (inputsAgree) c.firstDivergentNode = n.name;
    }
    return c;
}

} // namespace opscope::debug
