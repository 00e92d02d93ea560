#pragma once

#include "ops/op.h"

#include <string_view>
#include <unordered_map>
#include <vector>

namespace opscope {

/// All operators by MXNet name (and MXNet's aliases). Filled once, on first use, by the operator
/// families' registration functions; read-only afterwards, so any thread may look up.
class OpRegistry {
public:
    static const OpRegistry& instance();

    /// nullptr when unknown.
    const OpDef* find(std::string_view name) const;
    /// Throws GraphError "unknown operator 'X'" when unknown.
    const OpDef& get(std::string_view name) const;
    std::vector<std::string> names() const;
    /// Every operator (not its aliases), in registration order.
    std::vector<const OpDef*> defs() const;

    void add(OpDef def, std::vector<std::string> aliases = {});

private:
    OpRegistry() = default;
    std::vector<std::unique_ptr<OpDef>> m_ops;
    std::unordered_map<std::string, const OpDef*> m_byName;
};

} // namespace opscope
