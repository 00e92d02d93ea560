#pragma once

#include "ops/op.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opscope {

/// One output of one node: MXNet's (node_id, output_index, version) triple.
struct NodeEntry {
    uint32_t node = 0;
    uint32_t index = 0;
    uint32_t version = 0;
    friend bool operator==(const NodeEntry&, const NodeEntry&) = default;
};

/// A graph node: a variable (op "null": data, parameter or auxiliary state) or an operator call.
struct Node {
    std::string op; ///< MXNet operator name as written ("null" for variables)
    std::string name;
    AttrMap attrs; ///< operator attributes and hidden `__…__` keys, as strings
    std::vector<NodeEntry> inputs;
    std::string blockPath; ///< path of the Gluon block that made it ("" when unknown), '/'-separated
    const OpDef* def = nullptr; ///< null for variables
    ParamsPtr params; ///< parsed attributes; null for variables
    int numOutputs = 1;
    std::vector<std::string> inputSlots; ///< MXNet slot names, fallbacks applied (`input0`)
    std::vector<std::string> outputSlots; ///< (`output`, or `0`, `1`, …)

    bool onnx = false; ///< an ONNX node (`__domain__` ai.onnx): op is its ONNX op type
    bool isVariable() const { return def == nullptr; }
    /// The operator's name as op hooks report it: MXNet's registered name (aliases resolved), or
    /// the ONNX op type.
    const std::string& opName() const { return def && !onnx ? def->name : op; }
};

/// A computation graph in MXNet's sense. Nodes are kept in MXNet's order: a depth-first post-order
/// from the heads visiting inputs in slot order (what an exported `-symbol.json` lists, and the order
/// op hooks report). Build with addVariable/addOp/setHeads, then finalize(); or give a whole node
/// list (from a file) to fromNodes(), which checks it. Immutable once finalized; any thread may read.
class Graph {
public:
    uint32_t addVariable(const std::string& name, AttrMap attrs = {});
    /// Resolves the operator and parses its attributes now; errors name the node.
    uint32_t addOp(const std::string& op, const std::string& name, AttrMap attrs, std::vector<NodeEntry> inputs,
        std::string blockPath = {});
    void setHeads(std::vector<NodeEntry> heads);
    /// Keeps variable `id` through finalize() even when no head depends on it (an ONNX graph input
    /// that only shape computations read: still an input the model takes). Pinned variables come
    /// first in the order.
    void pinVariable(uint32_t id) { m_pinned.push_back(id); }
    /// Checks inputs (dangling ids, output indexes, input counts), detects cycles and sorts nodes
    /// into MXNet's order; nodes not reachable from the heads are dropped. Throws GraphError.
    /// Returns each node's new id by its id before (UINT32_MAX for a dropped one).
    std::vector<uint32_t> finalize();

    /// Builds a graph from a node list whose inputs refer to list positions (as in a JSON file).
    /// Resolves operators (GraphError naming the node for an unknown one) and finalizes.
    static Graph fromNodes(std::vector<Node> nodes, std::vector<NodeEntry> heads);

    const std::vector<Node>& nodes() const { return m_nodes; }
    const Node& node(uint32_t id) const { return m_nodes[id]; }
    const std::vector<NodeEntry>& heads() const { return m_heads; }
    size_t size() const { return m_nodes.size(); }
    bool finalized() const { return m_finalized; }

    /// Variable node ids in graph order (MXNet's list_inputs: arguments and auxiliary states).
    const std::vector<uint32_t>& variables() const { return m_variables; }
    /// Variables that are auxiliary states (BatchNorm moving statistics).
    bool isAuxiliary(uint32_t nodeId) const;
    std::optional<uint32_t> findNode(const std::string& name) const;
    /// The first op node (in graph order, which is execution order) that reads output 0 of
    /// `variable`, and the input slot it reads it on; nothing for a variable no op reads.
    std::optional<std::pair<uint32_t, uint32_t>> firstReader(uint32_t variable) const;
    /// Flat index of an entry: running total of outputs (MXNet's node_row_ptr).
    uint32_t entryId(const NodeEntry& e) const { return m_rowPtr[e.node] + e.index; }
    uint32_t entryId(uint32_t node, uint32_t index) const { return m_rowPtr[node] + index; }
    uint32_t numEntries() const { return m_rowPtr.empty() ? 0 : m_rowPtr.back(); }
    const std::vector<uint32_t>& rowPtr() const { return m_rowPtr; }
    /// "<node>_<slot>" for an output entry (MXNet's op-hook tensor name).
    std::string outputName(const NodeEntry& e) const;
    /// "<node>_<slot>" for input `slot` of an op node (the op-hook name of what it reads).
    std::string inputName(uint32_t node, size_t slot) const;

    /// Infers the shape of every entry from the variables' shapes (by position in variables();
    /// unknown shapes may be completed by operators, e.g. weights). A variable's `__shape__` hint is
    /// used when its given shape is unknown. Throws ShapeError naming the node, its operator and
    /// the expected and actual shapes.
    std::vector<Shape> inferShapes(const std::vector<Shape>& variableShapes) const;
    /// The same, but a node whose inputs stay unknown leaves its outputs unknown instead of being
    /// an error (what can be known from partial information; contradictions still throw).
    std::vector<Shape> inferShapesPartial(const std::vector<Shape>& variableShapes) const;

    /// The element type of every entry, from the variables' types (by position in variables(); an
    /// empty vector: every variable's declaredType()). Throws TypeError naming the node, its
    /// operator, the input and the types it takes.
    std::vector<DType> inferTypes(const std::vector<DType>& variableTypes = {}) const;
    /// A variable's type as the graph declares it: its `__dtype__` attribute (MXNet's codes), else
    /// float32.
    DType declaredType(uint32_t variable) const;

    /// "node 'x' (Op)" for messages.
    std::string describe(uint32_t nodeId) const;

private:
    void resolve(Node& n) const;
    std::vector<Shape> inferShapesImpl(const std::vector<Shape>& variableShapes, bool partial) const;

    std::vector<Node> m_nodes;
    std::vector<NodeEntry> m_heads;
    std::vector<uint32_t> m_rowPtr;
    std::vector<uint32_t> m_variables;
    std::vector<bool> m_auxiliary;
    std::vector<uint32_t> m_pinned;
    bool m_finalized = false;
};

} // namespace opscope
