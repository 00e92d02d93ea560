#include "debug/training_graph.h"

#include "core/error.h"
#include "exec/gradient.h"

namespace opscope::debug {

namespace {
// `g` with every gradient node moved under the block "backward".
Graph withBackwardBlock(const Graph& g)
{
    Graph out;
    const auto& nodes = g.nodes();
    std::vector<uint32_t> id(nodes.size(), 0);
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        const Node& node = nodes[n];
        if (node.isVariable()) {
            id[n] = out.addVariable(node.name, node.attrs);
            continue;
        }
        std::vector<NodeEntry> inputs;
        for (const NodeEntry& e : node.inputs)
            inputs.push_back({ id[e.node], e.index, 0 });
        std::string path = node.blockPath;
        if (isGradientNode(node)) path = path.empty() ? "backward" : "backward/" + path;
        id[n] = out.addOp(node.op, node.name, node.attrs, inputs, path);
    }
    std::vector<NodeEntry> heads;
    for (const NodeEntry& h : g.heads())
        heads.push_back({ id[h.node], h.index, 0 });
    out.setHeads(heads);
    out.finalize();
    return out;
}
} // namespace

TrainingGraph buildTrainingGraph(const Graph& model, const Graph& loss, const std::vector<std::string>& wrt)
{
    if (!model.finalized() || !loss.finalized()) throw GraphError("training step: the graphs are not finalized");
    if (model.heads().empty()) throw GraphError("training step: the model has no output");
    if (loss.variables().size() < 2)
        throw GraphError("training step: the loss takes " + std::to_string(loss.variables().size())
            + " inputs; expected two (prediction, label)");

    TrainingGraph out;
    out.label = model.findNode("label") ? "loss_label" : "label";
    if (model.findNode(out.label)) throw GraphError("training step: the model has variables 'label' and 'loss_label'");

    // The model, then the loss with its prediction bound to the model's first output.
    Graph g;
    const auto& mnodes = model.nodes();
    std::vector<uint32_t> mid(mnodes.size(), 0);
    for (uint32_t n = 0; n < mnodes.size(); ++n) {
        const Node& node = mnodes[n];
        if (node.isVariable()) {
            mid[n] = g.addVariable(node.name, node.attrs);
            continue;
        }
        std::vector<NodeEntry> inputs;
        for (const NodeEntry& e : node.inputs)
            inputs.push_back({ mid[e.node], e.index, 0 });
        mid[n] = g.addOp(node.op, node.name, node.attrs, inputs, node.blockPath);
    }
    const NodeEntry prediction { mid[model.heads()[0].node], model.heads()[0].index, 0 };
    const auto& lnodes = loss.nodes();
    std::vector<NodeEntry> lid(lnodes.size());
    const uint32_t predVar = loss.variables()[0], labelVar = loss.variables()[1];
    for (uint32_t n = 0; n < lnodes.size(); ++n) {
        const Node& node = lnodes[n];
        if (n == predVar) {
            lid[n] = prediction;
        } else if (n == labelVar) {
            lid[n] = { g.addVariable(out.label), 0, 0 };
        } else if (node.isVariable()) {
            if (model.findNode(node.name))
                throw GraphError("training step: the loss's variable '" + node.name + "' is also the model's");
            lid[n] = { g.addVariable(node.name, node.attrs), 0, 0 };
        } else {
            if (model.findNode(node.name))
                throw GraphError("training step: the loss's node '" + node.name + "' is also the model's");
            std::vector<NodeEntry> inputs;
            for (const NodeEntry& e : node.inputs)
                inputs.push_back({ lid[e.node].node, lid[e.node].index + e.index, 0 });
            lid[n] = { g.addOp(node.op, node.name, node.attrs, inputs, node.blockPath), 0, 0 };
        }
    }
    std::vector<NodeEntry> heads;
    for (const NodeEntry& h : loss.heads())
        heads.push_back({ lid[h.node].node, lid[h.node].index + h.index, 0 });
    g.setHeads({ heads.front() });
    g.finalize();

    GradientGraph grad = buildGradientGraph(g, wrt, false);
    out.headGrad = grad.headGradNames.front();
    out.wrt = wrt;
    out.graph = std::make_shared<const Graph>(withBackwardBlock(grad.graph));
    return out;
}

} // namespace opscope::debug
