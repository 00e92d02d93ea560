#include "gluon/tracer.h"

#include "core/error.h"

#include <cstdint>

namespace opscope::gluon {

const Tensor& Value::tensor() const
{
    if (m_tracer)
        throw UsageError("a symbol has no values while a graph is being traced (use F's operators instead)");
    return m_tensor;
}

Value Tracer::input(const std::string& name)
{
    return Value(this, { m_graph.addVariable(name), 0, 0 });
}

Value Tracer::param(const ParamPtr& p)
{
    auto it = m_paramVars.find(p.get());
    if (it != m_paramVars.end())
        return Value(this, { it->second, 0, 0 });
    if (m_params.count(p->name()))
        throw UsageError("two different parameters are named '" + p->name() + "' in one graph");
    const uint32_t id = m_graph.addVariable(p->name(), p->varAttrs());
    m_paramVars[p.get()] = id;
    m_params[p->name()] = p;
    return Value(this, { id, 0, 0 });
}

void Tracer::pushBlock(const std::string& name, std::shared_ptr<const HookList> hooks)
{
    m_blocks.push_back(name);
    m_hookStack.push_back(std::move(hooks));
    m_newChain = true;
}

void Tracer::popBlock()
{
    m_blocks.pop_back();
    m_hookStack.pop_back();
    m_newChain = true;
}

std::shared_ptr<const BlockHooks> Tracer::blockHooks(const std::vector<uint32_t>& newId) const
{
    auto out = std::make_shared<BlockHooks>();
    out->chains = m_blockHooks.chains;
    for (size_t old = 0; old < m_blockHooks.chainOf.size() && old < newId.size(); ++old) {
        const uint32_t id = newId[old];
        if (id == UINT32_MAX) continue; // dropped: no head depends on it
        if (out->chainOf.size() <= id) out->chainOf.resize(id + 1, -1);
        out->chainOf[id] = m_blockHooks.chainOf[old];
    }
    return out;
}

std::vector<Value> Tracer::addOp(
    const std::string& op, const std::string& name, const AttrMap& attrs, const std::vector<Value>& inputs)
{
    std::vector<NodeEntry> entries;
    entries.reserve(inputs.size());
    for (const Value& v : inputs) {
        if (v.tracer() != this)
            throw UsageError("operator " + op + " (" + name + "): "
                + (v.isSymbol() ? "input comes from another graph" : "cannot mix tensors and symbols"));
        entries.push_back(v.entry());
    }
    std::string path;
    for (const std::string& b : m_blocks)
        path += (path.empty() ? "" : "/") + b;
    const uint32_t id = m_graph.addOp(op, name, attrs, std::move(entries), path);
    if (m_newChain) {
        std::vector<std::shared_ptr<const HookList>> chain;
        for (const auto& list : m_hookStack)
            if (list) chain.push_back(list);
        m_blockHooks.chains.push_back(std::move(chain));
        m_newChain = false;
    }
    m_blockHooks.chainOf.resize(id + 1, -1);
    m_blockHooks.chainOf[id] = static_cast<int32_t>(m_blockHooks.chains.size() - 1);
    const Node& n = m_graph.node(id);
    const int visible = n.def->visibleOutputs(*n.params);
    std::vector<Value> out;
    for (int k = 0; k < visible; ++k)
        out.emplace_back(this, NodeEntry { id, static_cast<uint32_t>(k), 0 });
    return out;
}

} // namespace opscope::gluon
