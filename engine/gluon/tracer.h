#pragma once

#include "gluon/op_hook.h"
#include "gluon/parameter.h"
#include "gluon/value.h"
#include "graph/graph.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opscope::gluon {

/// Records the graph of a HybridBlock's forward (MXNet's symbolic pass): inputs become variables
/// `data` (or `data0`, `data1`, …), parameters become variables with MXNet's attributes, and every
/// F call a node tagged with the path of the blocks that made it.
class Tracer {
public:
    Value input(const std::string& name);
    Value param(const ParamPtr& p);
    std::vector<Value> addOp(const std::string& op, const std::string& name, const AttrMap& attrs,
        const std::vector<Value>& inputs);

    /// Enters a block: its name goes into the nodes' paths, its hooks (when given) into their
    /// BlockHooks.
    void pushBlock(const std::string& name, std::shared_ptr<const HookList> hooks = nullptr);
    void popBlock();

    Graph& graph() { return m_graph; }
    /// The hook lists of the blocks that made each node (HookObserver::setBlockHooks), by the
    /// ids the graph's finalize() gave them (`newId`, what it returned).
    std::shared_ptr<const BlockHooks> blockHooks(const std::vector<uint32_t>& newId) const;
    /// Parameters used, by variable name.
    const std::map<std::string, ParamPtr>& params() const { return m_params; }

private:
    Graph m_graph;
    std::map<const Parameter*, uint32_t> m_paramVars;
    std::map<std::string, ParamPtr> m_params;
    std::vector<std::string> m_blocks;
    std::vector<std::shared_ptr<const HookList>> m_hookStack; // by m_blocks, null for none
    bool m_newChain = true; // m_hookStack moved since the last chain was recorded
    BlockHooks m_blockHooks;
};

} // namespace opscope::gluon
