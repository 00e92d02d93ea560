#include "exec/gradient.h"

#include "core/error.h"
#include "ops/registry.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

namespace opscope {

namespace {
std::string mask(const std::vector<bool>& m)
{
    std::string s;
    for (size_t i = 0; i < m.size(); ++i) {
        if (i) s += ',';
        s += m[i] ? '1' : '0';
    }
    return s;
}
} // namespace

namespace {
// Copies the variables (and, with `ops`, the op nodes) of `from` into `g`; ids by `from`'s ids.
std::vector<uint32_t> copyNodes(Graph& g, const Graph& from, bool ops)
{
    const auto& nodes = from.nodes();
    std::vector<uint32_t> id(nodes.size(), 0);
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        const Node& node = nodes[n];
        if (node.isVariable()) {
            id[n] = g.addVariable(node.name, node.attrs);
            continue;
        }
        if (!ops) continue;
        std::vector<NodeEntry> inputs;
        for (const NodeEntry& e : node.inputs)
            inputs.push_back({ id[e.node], e.index, 0 });
        id[n] = g.addOp(node.op, node.name, node.attrs, inputs, node.blockPath);
    }
    return id;
}
} // namespace

Graph withExtraHeads(const Graph& graph, const std::vector<NodeEntry>& extra)
{
    Graph g;
    const std::vector<uint32_t> id = copyNodes(g, graph, true);
    std::vector<NodeEntry> heads;
    for (const NodeEntry& h : graph.heads())
        heads.push_back({ id[h.node], h.index, 0 });
    for (const NodeEntry& h : extra)
        heads.push_back({ id[h.node], h.index, 0 });
    g.setHeads(heads);
    g.finalize();
    return g;
}

GradientGraph buildGradientGraph(const Graph& forward, const std::vector<std::string>& wrt, bool savedForward)
{
    if (!forward.finalized()) throw GraphError("gradient: the forward graph is not finalized");
    GradientGraph out;
    out.wrt = wrt;
    out.numForwardHeads = savedForward ? 0 : forward.heads().size();
    Graph& g = out.graph;
    const auto& nodes = forward.nodes();

    // The forward nodes, same order, same names (or, with savedForward, only the variables).
    const std::vector<uint32_t> id = copyNodes(g, forward, !savedForward);
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> savedVar;
    auto fwd = [&](uint32_t node, uint32_t index) -> NodeEntry {
        if (!savedForward || nodes[node].isVariable()) return { id[node], index, 0 };
        auto [it, added] = savedVar.try_emplace({ node, index }, 0);
        if (added) {
            const NodeEntry e { node, index, 0 };
            out.saved.push_back(e);
            out.savedNames.push_back(forward.outputName(e));
            it->second = g.addVariable(out.savedNames.back());
        }
        return { it->second, 0, 0 };
    };

    // Which nodes carry a gradient: a variable of wrt, or an op with such an input.
    std::unordered_set<std::string> wanted(wrt.begin(), wrt.end());
    std::vector<bool> needs(nodes.size(), false);
    for (const std::string& w : wrt) {
        const auto v = forward.findNode(w);
        if (!v || !nodes[*v].isVariable()) throw GraphError("gradient: '" + w + "' is not a variable of the graph");
    }
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        if (nodes[n].isVariable()) {
            needs[n] = wanted.count(nodes[n].name) != 0;
            continue;
        }
        for (const NodeEntry& e : nodes[n].inputs)
            needs[n] = needs[n] || needs[e.node];
    }

    // Gradients flowing into each forward entry (to be summed), starting from the head gradients.
    std::map<std::pair<uint32_t, uint32_t>, std::vector<NodeEntry>> grads;
    for (size_t h = 0; h < forward.heads().size(); ++h) {
        const NodeEntry& head = forward.heads()[h];
        const std::string name = forward.outputName(head) + "_head_grad";
        out.headGradNames.push_back(name);
        const uint32_t v = g.addVariable(name);
        if (needs[head.node]) grads[{ head.node, head.index }].push_back({ v, 0, 0 });
    }
    auto summed = [&](uint32_t node, uint32_t index, const std::string& prefix) -> std::optional<NodeEntry> {
        auto it = grads.find({ node, index });
        if (it == grads.end() || it->second.empty()) return std::nullopt;
        NodeEntry acc = it->second.front();
        for (size_t k = 1; k < it->second.size(); ++k)
            acc = { g.addOp("elemwise_add", prefix + "_grad_sum" + std::to_string(k), { { "__grad__", "sum" } },
                        { acc, it->second[k] }, nodes[node].blockPath),
                0, 0 };
        return acc;
    };

    for (uint32_t n = static_cast<uint32_t>(nodes.size()); n-- > 0;) {
        const Node& node = nodes[n];
        if (node.isVariable() || !needs[n]) continue;
        std::vector<bool> ograds(static_cast<size_t>(node.numOutputs), false);
        std::vector<NodeEntry> inputs;
        for (uint32_t k = 0; k < static_cast<uint32_t>(node.numOutputs); ++k)
            if (auto e = summed(n, k, node.name + "_" + node.outputSlots[k])) {
                ograds[k] = true;
                inputs.push_back(*e);
            }
        if (std::none_of(ograds.begin(), ograds.end(), [](bool b) { return b; })) continue; // no head depends on it
        if (!node.def->backward) throw GraphError("gradient: " + forward.describe(n) + " has no gradient");
        std::vector<bool> igrads;
        for (const NodeEntry& e : node.inputs)
            igrads.push_back(needs[e.node] && !forward.isAuxiliary(e.node));
        for (const NodeEntry& e : node.inputs)
            inputs.push_back(fwd(e.node, e.index));
        for (uint32_t k = 0; k < static_cast<uint32_t>(node.numOutputs); ++k)
            inputs.push_back(fwd(n, k));
        AttrMap attrs = node.attrs;
        attrs["__ograds__"] = mask(ograds);
        attrs["__igrads__"] = mask(igrads);
        const uint32_t b
            = g.addOp("_backward_" + node.def->name, node.name + "_backward", attrs, inputs, node.blockPath);
        for (size_t i = 0, j = 0; i < node.inputs.size(); ++i)
            if (igrads[i])
                grads[{ node.inputs[i].node, node.inputs[i].index }].push_back({ b, static_cast<uint32_t>(j++), 0 });
    }

    std::vector<NodeEntry> heads;
    if (!savedForward)
        for (const NodeEntry& h : forward.heads())
            heads.push_back({ id[h.node], h.index, 0 });
    for (const std::string& w : wrt) {
        const uint32_t v = *forward.findNode(w);
        if (auto e = summed(v, 0, w))
            heads.push_back(*e);
        else
            heads.push_back(
                { g.addOp("_mul_scalar", w + "_zero_grad", { { "scalar", "0" }, { "__grad__", "zero" } }, { { id[v], 0, 0 } }),
                    0, 0 });
    }
    g.setHeads(heads);
    g.finalize();
    return out;
}

bool isGradientNode(const Node& n)
{
    return !n.isVariable() && (n.op.starts_with("_backward_") || n.attrs.count("__grad__") != 0);
}

bool isGradientInput(const Node& n, size_t k)
{
    if (!isGradientNode(n) || k >= n.inputs.size()) return false;
    if (n.op.starts_with("_backward_")) return k < n.inputSlots.size() && n.inputSlots[k].ends_with("_grad");
    auto it = n.attrs.find("__grad__");
    return it != n.attrs.end() && it->second == "sum";
}

} // namespace opscope
