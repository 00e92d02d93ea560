#include "exec/precision_rules.h"

#include "core/error.h"

namespace opscope {

std::vector<Precision> resolvePrecision(const Graph& graph, const std::vector<PrecisionRule>& rules)
{
    std::vector<Precision> byNode(graph.size(), Precision::Float32);
    std::vector<bool> named(graph.size(), false);
    for (const PrecisionRule& r : rules) {
        if (r.target == "all") {
            for (uint32_t id = 0; id < graph.size(); ++id)
                if (!graph.node(id).isVariable() && !named[id]) byNode[id] = r.precision;
            continue;
        }
        if (const auto id = graph.findNode(r.target); id && !graph.node(*id).isVariable()) {
            byNode[*id] = r.precision;
            named[*id] = true;
            continue;
        }
        bool found = false;
        for (uint32_t id = 0; id < graph.size(); ++id) {
            const Node& n = graph.node(id);
            if (n.isVariable() || (n.opName() != r.target && n.op != r.target)) continue;
            found = true;
            if (!named[id]) byNode[id] = r.precision;
        }
        if (!found)
            throw UsageError("'" + r.target + "' (to compute in " + precisionName(r.precision)
                + "): no operator node and no operator of that name in the graph");
    }
    return byNode;
}

} // namespace opscope
