#pragma once

// Small graphs built node by node for the executor's tests, and what those tests share: nodes by
// name, static flags, an observer that keeps what it sees.

#include "exec/executor.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opscope::test {

/// data -> FC(8) -> relu -> FC(4), parameters as variables.
inline std::shared_ptr<Graph> mlpGraph()
{
    auto g = std::make_shared<Graph>();
    const uint32_t x = g->addVariable("data");
    const uint32_t w1 = g->addVariable("fc1_weight");
    const uint32_t b1 = g->addVariable("fc1_bias");
    const uint32_t fc1
        = g->addOp("FullyConnected", "fc1", { { "num_hidden", "8" } }, { { x, 0, 0 }, { w1, 0, 0 }, { b1, 0, 0 } });
    const uint32_t r = g->addOp("Activation", "relu1", { { "act_type", "relu" } }, { { fc1, 0, 0 } });
    const uint32_t w2 = g->addVariable("fc2_weight");
    const uint32_t b2 = g->addVariable("fc2_bias");
    const uint32_t fc2
        = g->addOp("FullyConnected", "fc2", { { "num_hidden", "4" } }, { { r, 0, 0 }, { w2, 0, 0 }, { b2, 0, 0 } });
    g->setHeads({ { fc2, 0, 0 } });
    g->finalize();
    return g;
}

/// mlpGraph's variables for a batch of `batch` rows.
inline std::vector<Tensor> mlpInputs(int batch)
{
    Generator gen(3);
    return { Tensor::uniform(Shape({ batch, 5 }), -1, 1, &gen), Tensor::uniform(Shape({ 8, 5 }), -1, 1, &gen),
        Tensor::uniform(Shape({ 8 }), -1, 1, &gen), Tensor::uniform(Shape({ 4, 8 }), -1, 1, &gen),
        Tensor::uniform(Shape({ 4 }), -1, 1, &gen) };
}

/// Adds nodes to a graph whose first variable is `data`.
struct GraphBuilder {
    std::shared_ptr<Graph> g = std::make_shared<Graph>();
    uint32_t data = g->addVariable("data");
    /// A 3x3 convolution of 16 filters, padded to keep the size, with NAME_weight and NAME_bias.
    uint32_t conv(const std::string& name, uint32_t in)
    {
        const uint32_t w = g->addVariable(name + "_weight");
        const uint32_t b = g->addVariable(name + "_bias");
        return g->addOp("Convolution", name, { { "kernel", "(3, 3)" }, { "num_filter", "16" }, { "pad", "(1, 1)" } },
            { { in, 0, 0 }, { w, 0, 0 }, { b, 0, 0 } });
    }
    /// A BatchNorm with NAME_gamma, NAME_beta, NAME_moving_mean, NAME_moving_var.
    uint32_t batchNorm(const std::string& name, uint32_t in, AttrMap attrs = { { "fix_gamma", "False" } })
    {
        std::vector<NodeEntry> inputs { { in, 0, 0 } };
        for (const char* p : { "_gamma", "_beta", "_moving_mean", "_moving_var" })
            inputs.push_back({ g->addVariable(name + p), 0, 0 });
        return g->addOp("BatchNorm", name, std::move(attrs), inputs);
    }
    uint32_t op(const std::string& type, const std::string& name, uint32_t in, AttrMap attrs = {})
    {
        return g->addOp(type, name, std::move(attrs), { { in, 0, 0 } });
    }
};

inline uint32_t idOf(const Graph& g, const std::string& name)
{
    for (uint32_t i = 0; i < g.size(); ++i)
        if (g.node(i).name == name) return i;
    ADD_FAILURE() << name;
    return 0;
}

/// The names of the nodes fused into `node` in the executor's plan (Executor::fusedWith).
inline std::vector<std::string> fusedNames(const Executor& e, const Graph& g, const std::string& node)
{
    std::vector<std::string> out;
    for (uint32_t id : e.fusedWith(idOf(g, node)))
        out.push_back(g.node(id).name);
    return out;
}

/// static_alloc + static_shape, fusing or not.
inline ExecFlags staticFlags(bool fuse)
{
    ExecFlags f;
    f.static_alloc = true;
    f.static_shape = true;
    f.fuse = fuse;
    return f;
}

/// Wants the named nodes (After) and keeps a copy of each one's first output.
struct OutputWatcher : ExecutionObserver {
    std::vector<std::string> nodes;
    std::map<std::string, Tensor> seen;
    PhaseMask wants(const Graph& g, uint32_t id) override
    {
        for (const std::string& n : nodes)
            if (g.node(id).name == n) return PhaseMask::After;
        return PhaseMask::None;
    }
    ObserverAction onOp(const OpEvent& ev) override
    {
        seen[ev.node.name] = Tensor::copyOf(ev.outputs[0]);
        return ObserverAction::Continue;
    }
};

} // namespace opscope::test
