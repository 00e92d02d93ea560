#pragma once

#include "gluon/parameter.h"
#include "gluon/value.h"
#include "graph/graph.h"

#include <map>
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

    void pushBlock(const std::string& name) { m_blocks.push_back(name); }
    void popBlock() { m_blocks.pop_back(); }

    Graph& graph() { return m_graph; }
    /// Parameters used, by variable name.
    const std::map<std::string, ParamPtr>& params() const { return m_params; }

private:
    Graph m_graph;
    std::map<const Parameter*, uint32_t> m_paramVars;
    std::map<std::string, ParamPtr> m_params;
    std::vector<std::string> m_blocks;
};

} // namespace opscope::gluon
