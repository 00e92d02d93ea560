#pragma once

#include "gluon/block.h"

namespace opscope::gluon {

/// Runs its children one after another (MXNet's nn.Sequential). Not hybrid: children may be any
/// Block; hooks and hybridize() are passed to them.
class Sequential : public Block {
public:
    explicit Sequential(const std::optional<std::string>& prefix = std::nullopt)
        : Block("sequential", prefix)
    {
    }
    void add(BlockPtr block) { register_child(std::move(block)); }
    template <class... B> void add(BlockPtr first, B... rest)
    {
        add(std::move(first));
        (add(std::move(rest)), ...);
    }
    std::vector<Value> forward(const std::vector<Value>& inputs) override;
};

/// MXNet's nn.HybridSequential: children are HybridBlocks, traced into one graph when hybridized.
class HybridSequential : public HybridBlock {
public:
    explicit HybridSequential(const std::optional<std::string>& prefix = std::nullopt)
        : HybridBlock("hybridsequential", prefix)
    {
    }
    void add(BlockPtr block) { register_child(std::move(block)); }
    template <class... B> void add(BlockPtr first, B... rest)
    {
        add(std::move(first));
        (add(std::move(rest)), ...);
    }
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& inputs) override;
};

} // namespace opscope::gluon
