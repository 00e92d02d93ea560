#pragma once

// Graphs of known networks for the benchmarks, built directly from operators, with a FLOP count.

#include "graph/graph.h"
#include "tensor/random.h"

#include <memory>
#include <string>
#include <vector>

namespace opscope::bench {

class NetBuilder {
public:
    NetBuilder() { m_graph = std::make_shared<Graph>(); }
    NodeEntry var(const std::string& name) { return { m_graph->addVariable(name), 0, 0 }; }
    NodeEntry op(const std::string& o, const std::string& name, AttrMap attrs, std::vector<NodeEntry> in)
    {
        return { m_graph->addOp(o, name, std::move(attrs), std::move(in)), 0, 0 };
    }
    NodeEntry conv(const std::string& name, NodeEntry x, int filters, int k, int stride, int pad, bool bias = false)
    {
        AttrMap a { { "kernel", "(" + std::to_string(k) + ", " + std::to_string(k) + ")" },
            { "stride", "(" + std::to_string(stride) + ", " + std::to_string(stride) + ")" },
            { "pad", "(" + std::to_string(pad) + ", " + std::to_string(pad) + ")" },
            { "num_filter", std::to_string(filters) }, { "no_bias", bias ? "False" : "True" } };
        std::vector<NodeEntry> in { x, var(name + "_weight") };
        if (bias)
            in.push_back(var(name + "_bias"));
        return op("Convolution", name, a, in);
    }
    NodeEntry bn(const std::string& name, NodeEntry x)
    {
        return op("BatchNorm", name, { { "fix_gamma", "False" } },
            { x, var(name + "_gamma"), var(name + "_beta"), var(name + "_moving_mean"), var(name + "_moving_var") });
    }
    NodeEntry relu(const std::string& name, NodeEntry x) { return op("Activation", name, { { "act_type", "relu" } }, { x }); }
    NodeEntry fc(const std::string& name, NodeEntry x, int hidden)
    {
        return op("FullyConnected", name, { { "num_hidden", std::to_string(hidden) } },
            { x, var(name + "_weight"), var(name + "_bias") });
    }
    std::shared_ptr<Graph> finish(NodeEntry head)
    {
        m_graph->setHeads({ head });
        m_graph->finalize();
        return m_graph;
    }

private:
    std::shared_ptr<Graph> m_graph;
};

/// 64 × (FullyConnected 16→16 + relu): 128 tiny ops.
inline std::shared_ptr<Graph> tinyChain()
{
    NetBuilder b;
    NodeEntry x = b.var("data");
    for (int i = 0; i < 64; ++i) {
        x = b.fc("fc" + std::to_string(i), x, 16);
        x = b.relu("relu" + std::to_string(i), x);
    }
    return b.finish(x);
}

inline std::shared_ptr<Graph> lenet()
{
    NetBuilder b;
    NodeEntry x = b.var("data");
    x = b.relu("relu0", b.conv("conv0", x, 6, 5, 1, 2, true));
    x = b.op("Pooling", "pool0", { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" } }, { x });
    x = b.relu("relu1", b.conv("conv1", x, 16, 5, 1, 0, true));
    x = b.op("Pooling", "pool1", { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" } }, { x });
    x = b.relu("relu2", b.fc("fc0", x, 120));
    x = b.relu("relu3", b.fc("fc1", x, 84));
    return b.finish(b.fc("fc2", x, 10));
}

/// A ResNet's 7×7 stem and max pooling.
inline NodeEntry resnetStem(NetBuilder& b)
{
    NodeEntry x = b.var("data");
    x = b.relu("relu0", b.bn("bn0", b.conv("conv0", x, 64, 7, 2, 3)));
    return b.op("Pooling", "pool0", { { "kernel", "(3, 3)" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" } }, { x });
}

/// A ResNet's global average pooling and 1000-way classifier.
inline std::shared_ptr<Graph> resnetHead(NetBuilder& b, NodeEntry x)
{
    x = b.op("Pooling", "pool1", { { "global_pool", "True" }, { "kernel", "(7, 7)" }, { "pool_type", "avg" } }, { x });
    x = b.op("Flatten", "flatten0", {}, { x });
    return b.finish(b.fc("fc1", x, 1000));
}

inline std::shared_ptr<Graph> resnet18()
{
    NetBuilder b;
    NodeEntry x = resnetStem(b);
    int channels = 64;
    const int widths[] = { 64, 128, 256, 512 };
    for (int stage = 0; stage < 4; ++stage) {
        for (int block = 0; block < 2; ++block) {
            const std::string p = "stage" + std::to_string(stage + 1) + "_unit" + std::to_string(block + 1);
            const int w = widths[stage];
            const int stride = (block == 0 && stage > 0) ? 2 : 1;
            NodeEntry y = b.relu(p + "_relu1", b.bn(p + "_bn1", b.conv(p + "_conv1", x, w, 3, stride, 1)));
            y = b.bn(p + "_bn2", b.conv(p + "_conv2", y, w, 3, 1, 1));
            NodeEntry shortcut = x;
            if (stride != 1 || channels != w)
                shortcut = b.bn(p + "_sc_bn", b.conv(p + "_sc", x, w, 1, stride, 0));
            x = b.relu(p + "_relu2", b.op("elemwise_add", p + "_add", {}, { y, shortcut }));
            channels = w;
        }
    }
    return resnetHead(b, x);
}

/// ResNet-50 v1: bottleneck units (1×1, 3×3, 1×1 ×4) of 3, 4, 6, 3, stride on the 3×3 (v1.5, as
/// torchvision's), BatchNorm after every convolution.
inline std::shared_ptr<Graph> resnet50()
{
    NetBuilder b;
    NodeEntry x = resnetStem(b);
    int channels = 64;
    const int widths[] = { 64, 128, 256, 512 };
    const int units[] = { 3, 4, 6, 3 };
    for (int stage = 0; stage < 4; ++stage) {
        for (int unit = 0; unit < units[stage]; ++unit) {
            const std::string p = "stage" + std::to_string(stage + 1) + "_unit" + std::to_string(unit + 1);
            const int w = widths[stage], out = 4 * w;
            const int stride = (unit == 0 && stage > 0) ? 2 : 1;
            NodeEntry y = b.relu(p + "_relu1", b.bn(p + "_bn1", b.conv(p + "_conv1", x, w, 1, 1, 0)));
            y = b.relu(p + "_relu2", b.bn(p + "_bn2", b.conv(p + "_conv2", y, w, 3, stride, 1)));
            y = b.bn(p + "_bn3", b.conv(p + "_conv3", y, out, 1, 1, 0));
            NodeEntry shortcut = x;
            if (stride != 1 || channels != out)
                shortcut = b.bn(p + "_sc_bn", b.conv(p + "_sc", x, out, 1, stride, 0));
            x = b.relu(p + "_relu3", b.op("elemwise_add", p + "_add", {}, { y, shortcut }));
            channels = out;
        }
    }
    return resnetHead(b, x);
}

/// Random variables for a graph: data uniform in [0, 1), parameters normal(0, 0.05), moving
/// variances 1. Shapes from inference with the data shape given.
inline std::vector<Tensor> randomVariables(const Graph& g, const Shape& data, uint64_t seed = 1)
{
    Generator gen(seed);
    std::vector<Shape> shapes(g.variables().size());
    shapes[0] = data;
    const auto inferred = g.inferShapes(shapes);
    std::vector<Tensor> vars;
    for (size_t i = 0; i < g.variables().size(); ++i) {
        const uint32_t v = g.variables()[i];
        const Shape& s = inferred[g.entryId(v, 0)];
        const std::string& name = g.node(v).name;
        if (i == 0)
            vars.push_back(Tensor::uniform(s, 0, 1, &gen));
        else if (name.ends_with("_moving_var") || name.ends_with("_gamma"))
            vars.push_back(Tensor::ones(s));
        else if (name.ends_with("_moving_mean") || name.ends_with("_beta"))
            vars.push_back(Tensor::zeros(s));
        else
            vars.push_back(Tensor::normal(s, 0, 0.05f, &gen));
    }
    return vars;
}

/// Multiply-adds ×2 of the Convolution and FullyConnected nodes, from the inferred shapes.
inline double countFlops(const Graph& g, const std::vector<Shape>& entryShapes)
{
    double flops = 0;
    for (uint32_t i = 0; i < g.size(); ++i) {
        const Node& n = g.node(i);
        if (n.op == "Convolution") {
            const Shape& w = entryShapes[g.entryId(n.inputs[1])];
            const Shape& out = entryShapes[g.entryId(i, 0)];
            flops += 2.0 * static_cast<double>(out.size()) * static_cast<double>(w.product(1, w.ndim()));
        } else if (n.op == "FullyConnected") {
            const Shape& w = entryShapes[g.entryId(n.inputs[1])];
            const Shape& out = entryShapes[g.entryId(i, 0)];
            flops += 2.0 * static_cast<double>(out.size()) * static_cast<double>(w[1]);
        }
    }
    return flops;
}

} // namespace opscope::bench
