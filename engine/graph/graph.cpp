#include "graph/graph.h"

#include "core/error.h"
#include "tensor/memory_limit.h"
#include "ops/registry.h"

#include <algorithm>
#include <unordered_map>

namespace opscope {

std::string Graph::describe(uint32_t nodeId) const
{
    const Node& n = m_nodes[nodeId];
    return "node '" + n.name + "' (" + (n.isVariable() ? std::string("variable") : n.op) + ")";
}

void Graph::resolve(Node& n) const
{
    if (n.op == "null" || n.op.empty()) {
        n.op = "null";
        n.def = nullptr;
        n.params.reset();
        n.numOutputs = 1;
        n.inputSlots.clear();
        n.outputSlots = { "output" };
        return;
    }
    // An ONNX node (`__domain__` "ai.onnx") resolves to ONNX's operator of that name, apart from MXNet's.
    const auto domain = n.attrs.find("__domain__");
    const bool onnx = domain != n.attrs.end();
    if (onnx && domain->second != "ai.onnx")
        throw GraphError("node '" + n.name + "': operator '" + n.op + "' of domain '" + domain->second
            + "': only ONNX's default domain (ai.onnx) is supported");
    const OpDef* def = OpRegistry::instance().find(onnx ? "onnx::" + n.op : n.op);
    n.onnx = onnx;
    if (!def)
        throw GraphError("node '" + n.name + "': unknown operator '" + n.op + "'" + (onnx ? " (ONNX)" : ""));
    n.def = def;
    try {
        n.params = def->parse(n.attrs);
    } catch (const Error& e) {
        throw AttributeError("node '" + n.name + "' (" + n.op + "): " + e.what());
    }
    n.numOutputs = def->numOutputs(*n.params);
    // Attributes such as num_outputs or num_args size these lists: refuse absurd values.
    constexpr int kMaxSlots = 1 << 16;
    if (n.numOutputs < 0 || n.numOutputs > kMaxSlots || def->numInputs(*n.params) < 0
        || def->numInputs(*n.params) > kMaxSlots)
        throw AttributeError("node '" + n.name + "' (" + n.op + "): " + std::to_string(def->numInputs(*n.params))
            + " inputs and " + std::to_string(n.numOutputs) + " outputs are out of range (at most "
            + std::to_string(kMaxSlots) + ")");
    n.inputSlots = def->inputSlotNames(*n.params);
    n.outputSlots = def->outputSlotNames(*n.params);
}

uint32_t Graph::addVariable(const std::string& name, AttrMap attrs)
{
    Node n;
    n.op = "null";
    n.name = name;
    n.attrs = std::move(attrs);
    resolve(n);
    m_nodes.push_back(std::move(n));
    m_finalized = false;
    return static_cast<uint32_t>(m_nodes.size() - 1);
}

uint32_t Graph::addOp(const std::string& op, const std::string& name, AttrMap attrs, std::vector<NodeEntry> inputs,
    std::string blockPath)
{
    Node n;
    n.op = op;
    n.name = name;
    n.attrs = std::move(attrs);
    n.inputs = std::move(inputs);
    n.blockPath = std::move(blockPath);
    resolve(n);
    m_nodes.push_back(std::move(n));
    m_finalized = false;
    return static_cast<uint32_t>(m_nodes.size() - 1);
}

void Graph::setHeads(std::vector<NodeEntry> heads)
{
    m_heads = std::move(heads);
    m_finalized = false;
}

Graph Graph::fromNodes(std::vector<Node> nodes, std::vector<NodeEntry> heads)
{
    Graph g;
    g.m_nodes = std::move(nodes);
    for (Node& n : g.m_nodes)
        g.resolve(n);
    g.m_heads = std::move(heads);
    g.finalize();
    return g;
}

std::vector<uint32_t> Graph::finalize()
{
    const uint32_t n = static_cast<uint32_t>(m_nodes.size());
    if (m_heads.empty())
        throw GraphError("graph has no outputs (heads)");
    auto checkEntry = [&](const NodeEntry& e, const std::string& where) {
        if (e.node >= n)
            throw GraphError(where + ": input refers to node " + std::to_string(e.node) + ", but the graph has only "
                + std::to_string(n) + " nodes");
        if (e.index >= static_cast<uint32_t>(m_nodes[e.node].numOutputs))
            throw GraphError(where + ": input refers to output " + std::to_string(e.index) + " of "
                + describe(e.node) + ", which has " + std::to_string(m_nodes[e.node].numOutputs) + " output(s)");
    };
    for (uint32_t i = 0; i < n; ++i) {
        const Node& node = m_nodes[i];
        for (const NodeEntry& e : node.inputs)
            checkEntry(e, describe(i));
        if (node.def) {
            const int expected = node.def->numInputs(*node.params);
            if (static_cast<int>(node.inputs.size()) != expected)
                throw GraphError(describe(i) + ": expected " + std::to_string(expected) + " inputs, got "
                    + std::to_string(node.inputs.size()));
        } else if (!node.inputs.empty()) {
            throw GraphError(describe(i) + ": a variable cannot have inputs");
        }
    }
    for (const NodeEntry& h : m_heads)
        checkEntry(h, "graph output");

    // Iterative DFS post-order from the heads, inputs in slot order (nnvm's DFSVisit).
    enum : uint8_t { kWhite, kGray, kBlack };
    std::vector<uint8_t> color(n, kWhite);
    std::vector<uint32_t> order;
    order.reserve(n);
    std::vector<std::pair<uint32_t, size_t>> stack;
    for (const NodeEntry& h : m_heads) {
        if (color[h.node] != kWhite)
            continue;
        stack.emplace_back(h.node, 0);
        color[h.node] = kGray;
        while (!stack.empty()) {
            auto& [id, next] = stack.back();
            const Node& node = m_nodes[id];
            if (next < node.inputs.size()) {
                const uint32_t in = node.inputs[next++].node;
                if (color[in] == kGray)
                    throw GraphError("cycle in graph: " + describe(in) + " depends on itself (through "
                        + describe(id) + ")");
                if (color[in] == kWhite) {
                    color[in] = kGray;
                    stack.emplace_back(in, 0);
                }
            } else {
                color[id] = kBlack;
                order.push_back(id);
                stack.pop_back();
            }
        }
    }

    // Pinned variables stay, first, even when no head depends on them.
    std::vector<uint32_t> pinned;
    for (uint32_t p : m_pinned)
        if (p < n && color[p] == kWhite && m_nodes[p].isVariable()) {
            color[p] = kBlack;
            pinned.push_back(p);
        }
    order.insert(order.begin(), pinned.begin(), pinned.end());

    std::vector<uint32_t> newId(n, UINT32_MAX);
    for (uint32_t i = 0; i < order.size(); ++i)
        newId[order[i]] = i;
    for (uint32_t& p : m_pinned)
        p = p < n ? newId[p] : UINT32_MAX;
    std::vector<Node> sorted;
    sorted.reserve(order.size());
    for (uint32_t old : order) {
        Node node = std::move(m_nodes[old]);
        for (NodeEntry& e : node.inputs)
            e.node = newId[e.node];
        sorted.push_back(std::move(node));
    }
    for (NodeEntry& h : m_heads)
        h.node = newId[h.node];
    m_nodes = std::move(sorted);

    m_rowPtr.assign(m_nodes.size() + 1, 0);
    m_variables.clear();
    m_auxiliary.assign(m_nodes.size(), false);
    for (uint32_t i = 0; i < m_nodes.size(); ++i) {
        m_rowPtr[i + 1] = m_rowPtr[i] + static_cast<uint32_t>(m_nodes[i].numOutputs);
        if (m_nodes[i].isVariable())
            m_variables.push_back(i);
        else if (m_nodes[i].def->auxInputs)
            for (int a : m_nodes[i].def->auxInputs(*m_nodes[i].params))
                m_auxiliary[m_nodes[i].inputs[static_cast<size_t>(a)].node] = true;
    }
    m_finalized = true;
    return newId;
}

bool Graph::isAuxiliary(uint32_t nodeId) const
{
    return nodeId < m_auxiliary.size() && m_auxiliary[nodeId];
}

std::optional<uint32_t> Graph::findNode(const std::string& name) const
{
    for (uint32_t i = 0; i < m_nodes.size(); ++i)
        if (m_nodes[i].name == name)
            return i;
    return std::nullopt;
}

std::optional<std::pair<uint32_t, uint32_t>> Graph::firstReader(uint32_t variable) const
{
    for (uint32_t id = variable + 1; id < m_nodes.size(); ++id) {
        const Node& n = m_nodes[id];
        for (uint32_t k = 0; k < n.inputs.size(); ++k)
            if (n.inputs[k].node == variable) return std::make_pair(id, k);
    }
    return std::nullopt;
}

std::string Graph::outputName(const NodeEntry& e) const
{
    const Node& n = m_nodes[e.node];
    return n.name + "_" + n.outputSlots[e.index];
}

std::string Graph::inputName(uint32_t node, size_t slot) const
{
    const Node& n = m_nodes[node];
    return n.name + "_" + n.inputSlots[slot];
}

std::vector<Shape> Graph::inferShapes(const std::vector<Shape>& variableShapes) const
{
    return inferShapesImpl(variableShapes, false);
}

std::vector<Shape> Graph::inferShapesPartial(const std::vector<Shape>& variableShapes) const
{
    return inferShapesImpl(variableShapes, true);
}

std::vector<Shape> Graph::inferShapesImpl(const std::vector<Shape>& variableShapes, bool partial) const
{
    if (!m_finalized)
        throw UsageError("graph must be finalized before shape inference");
    if (variableShapes.size() != m_variables.size())
        throw UsageError("shape inference: " + std::to_string(m_variables.size()) + " variables, "
            + std::to_string(variableShapes.size()) + " shapes given");
    std::vector<Shape> shapes(numEntries());
    for (size_t v = 0; v < m_variables.size(); ++v) {
        const uint32_t id = m_variables[v];
        Shape s = variableShapes[v];
        if (s.ndim() == 0 && !s.isScalar()) {
            auto it = m_nodes[id].attrs.find("__shape__");
            if (it != m_nodes[id].attrs.end()) {
                try {
                    const auto dims = parseTupleAttr(it->second);
                    s = Shape(std::span<const int64_t>(dims));
                } catch (const std::exception&) {
                    throw AttributeError(describe(id) + ": malformed __shape__ \"" + it->second + "\"");
                }
            }
        }
        shapes[entryId(id, 0)] = s;
    }
    std::vector<Shape> in, out;
    for (uint32_t i = 0; i < m_nodes.size(); ++i) {
        const Node& node = m_nodes[i];
        if (node.isVariable())
            continue;
        in.clear();
        for (const NodeEntry& e : node.inputs)
            in.push_back(shapes[entryId(e)]);
        const std::vector<Shape> given = in;
        out.assign(static_cast<size_t>(node.numOutputs), Shape());
        try {
            node.def->inferShape(*node.params, in, out);
        } catch (const ResourceError& e) {
            throw ResourceError(describe(i) + ": " + e.what());
        } catch (const Error& e) {
            const bool missing = std::any_of(given.begin(), given.end(), [](const Shape& s) { return !s.determined(); });
            if (partial && missing) continue; // not knowable from what is known
            throw ShapeError(describe(i) + ": " + e.what());
        }
        // MXNet's operators read a 0 dimension as unknown (to be completed), ONNX's as empty.
        auto settled = [&](const Shape& s) { return node.def->zeroDimsAreEmpty ? s.determined() : s.known(); };
        for (size_t k = 0; k < in.size(); ++k) {
            const Shape& before = given[k];
            if (settled(before) && before != in[k])
                throw ShapeError(describe(i) + ": input '" + node.inputSlots[k] + "': expected " + in[k].str()
                    + ", got " + before.str());
            if (!settled(in[k]) && !partial)
                throw ShapeError(describe(i) + ": cannot infer the shape of input '" + node.inputSlots[k]
                    + "' (from " + describe(node.inputs[k].node) + "), known so far: " + in[k].str());
            shapes[entryId(node.inputs[k])] = in[k];
        }
        for (size_t k = 0; k < out.size(); ++k) {
            if (partial && !out[k].determined()) continue;
            if (!out[k].determined())
                throw ShapeError(describe(i) + ": output '" + node.outputSlots[k] + "' has unknown shape "
                    + out[k].str());
            // Before anything is allocated: an output the machine cannot hold ends here, named.
            checkTensorFits(out[k], describe(i) + ": output '" + node.outputSlots[k] + "'");
            shapes[entryId(i, static_cast<uint32_t>(k))] = out[k];
        }
    }
    return shapes;
}

DType Graph::declaredType(uint32_t variable) const
{
    const Node& n = m_nodes[variable];
    auto it = n.attrs.find("__dtype__");
    if (it == n.attrs.end()) return DType::Float32;
    try {
        if (auto t = dtypeFromMxnetCode(static_cast<int>(parseIntAttr(it->second)))) return *t;
    } catch (const std::exception&) {
    }
    throw AttributeError(describe(variable) + ": unknown __dtype__ \"" + it->second + "\"");
}

std::vector<DType> Graph::inferTypes(const std::vector<DType>& variableTypes) const
{
    if (!m_finalized) throw UsageError("graph must be finalized before type inference");
    if (!variableTypes.empty() && variableTypes.size() != m_variables.size())
        throw UsageError("type inference: " + std::to_string(m_variables.size()) + " variables, "
            + std::to_string(variableTypes.size()) + " types given");
    std::vector<DType> types(numEntries(), DType::Float32);
    for (size_t v = 0; v < m_variables.size(); ++v)
        types[entryId(m_variables[v], 0)] = variableTypes.empty() ? declaredType(m_variables[v]) : variableTypes[v];
    std::vector<DType> in, out;
    for (uint32_t i = 0; i < m_nodes.size(); ++i) {
        const Node& node = m_nodes[i];
        if (node.isVariable()) continue;
        in.clear();
        for (const NodeEntry& e : node.inputs)
            in.push_back(types[entryId(e)]);
        out.assign(static_cast<size_t>(node.numOutputs), DType::Float32);
        try {
            node.def->inferTypes(*node.params, in, out);
        } catch (const Error& e) {
            throw TypeError(describe(i) + ": " + e.what());
        }
        for (size_t k = 0; k < out.size(); ++k)
            types[entryId(i, static_cast<uint32_t>(k))] = out[k];
    }
    return types;
}

} // namespace opscope
