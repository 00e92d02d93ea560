#include "core/error.h"
#include "graph/graph.h"

#include <gtest/gtest.h>

using namespace opscope;

namespace {
std::string errorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

Node opNode(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs, AttrMap attrs = {})
{
    Node n;
    n.op = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    return n;
}
}

TEST(Graph, OrdersNodesDepthFirstFromHeads)
{
    // Created out of order: the add's right operand first. MXNet's order visits inputs in slot order.
    Graph g;
    const uint32_t x = g.addVariable("x");
    const uint32_t b = g.addOp("Activation", "right", { { "act_type", "tanh" } }, { { x, 0, 0 } });
    const uint32_t a = g.addOp("Activation", "left", { { "act_type", "relu" } }, { { x, 0, 0 } });
    const uint32_t sum = g.addOp("elemwise_add", "sum", {}, { { a, 0, 0 }, { b, 0, 0 } });
    g.addVariable("unused");
    g.setHeads({ { sum, 0, 0 } });
    g.finalize();
    ASSERT_EQ(g.size(), 4u);
    EXPECT_EQ(g.node(0).name, "x");
    EXPECT_EQ(g.node(1).name, "left");
    EXPECT_EQ(g.node(2).name, "right");
    EXPECT_EQ(g.node(3).name, "sum");
    EXPECT_EQ(g.variables(), std::vector<uint32_t> { 0 });
    EXPECT_EQ(g.node(3).inputs[1].node, 2u);
    EXPECT_EQ(g.outputName({ 1, 0, 0 }), "left_output");
    EXPECT_EQ(g.node(1).inputSlots, std::vector<std::string> { "input0" });
}

TEST(Graph, RowPointersCountEveryOutput)
{
    Graph g;
    const uint32_t x = g.addVariable("x");
    const uint32_t s = g.addOp("SliceChannel", "split", { { "num_outputs", "3" } }, { { x, 0, 0 } });
    const uint32_t c = g.addOp("Concat", "cat", { { "num_args", "2" } }, { { s, 2, 0 }, { s, 0, 0 } });
    g.setHeads({ { c, 0, 0 } });
    g.finalize();
    EXPECT_EQ(g.rowPtr(), (std::vector<uint32_t> { 0, 1, 4, 5 }));
    EXPECT_EQ(g.entryId({ 1, 2, 0 }), 3u);
    const auto shapes = g.inferShapes({ Shape({ 2, 6 }) });
    EXPECT_EQ(shapes[1], Shape({ 2, 2 }));
    EXPECT_EQ(shapes[4], Shape({ 2, 4 }));
}

TEST(Graph, CycleIsAnErrorNamingTheNode)
{
    std::vector<Node> nodes;
    nodes.push_back(opNode("null", "x", {}));
    nodes.push_back(opNode("elemwise_add", "a", { { 0, 0, 0 }, { 2, 0, 0 } }));
    nodes.push_back(opNode("Activation", "b", { { 1, 0, 0 } }, { { "act_type", "relu" } }));
    const std::string msg = errorOf([&] { Graph::fromNodes(nodes, { { 2, 0, 0 } }); });
    EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'b'"), std::string::npos) << msg;
}

TEST(Graph, DanglingInputIsAnErrorNamingTheNode)
{
    std::vector<Node> nodes;
    nodes.push_back(opNode("null", "x", {}));
    nodes.push_back(opNode("Activation", "act", { { 7, 0, 0 } }, { { "act_type", "relu" } }));
    std::string msg = errorOf([&] { Graph::fromNodes(nodes, { { 1, 0, 0 } }); });
    EXPECT_NE(msg.find("node 'act' (Activation)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("node 7"), std::string::npos) << msg;
    nodes[1].inputs = { { 0, 3, 0 } };
    msg = errorOf([&] { Graph::fromNodes(nodes, { { 1, 0, 0 } }); });
    EXPECT_NE(msg.find("output 3"), std::string::npos) << msg;
}

TEST(Graph, UnknownOperatorIsAnErrorNamingItAndTheNode)
{
    std::vector<Node> nodes;
    nodes.push_back(opNode("null", "x", {}));
    nodes.push_back(opNode("FancyNewOp", "fancy0", { { 0, 0, 0 } }));
    const std::string msg = errorOf([&] { Graph::fromNodes(nodes, { { 1, 0, 0 } }); });
    EXPECT_NE(msg.find("'FancyNewOp'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'fancy0'"), std::string::npos) << msg;
}

TEST(Graph, BadAttributeNamesNodeAttributeAndValue)
{
    Graph g;
    const uint32_t x = g.addVariable("x");
    const std::string msg
        = errorOf([&] { g.addOp("FullyConnected", "fc1", { { "num_hidden", "ten" } }, { { x, 0, 0 } }); });
    EXPECT_NE(msg.find("'fc1'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("num_hidden"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ten"), std::string::npos) << msg;
}

TEST(Graph, ShapeConflictNamesNodeAndBothShapes)
{
    Graph g;
    const uint32_t a = g.addVariable("a");
    const uint32_t b = g.addVariable("b");
    const uint32_t s = g.addOp("elemwise_add", "plus0", {}, { { a, 0, 0 }, { b, 0, 0 } });
    g.setHeads({ { s, 0, 0 } });
    g.finalize();
    const std::string msg = errorOf([&] { g.inferShapes({ Shape({ 2, 3 }), Shape({ 3, 2 }) }); });
    EXPECT_NE(msg.find("'plus0'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3, 2)"), std::string::npos) << msg;
}

TEST(Graph, InfersParameterShapesFromData)
{
    Graph g;
    const uint32_t x = g.addVariable("data");
    const uint32_t w = g.addVariable("fc_weight", { { "__shape__", "(4, 0)" } });
    const uint32_t bias = g.addVariable("fc_bias");
    const uint32_t fc = g.addOp("FullyConnected", "fc", { { "num_hidden", "4" } }, { { x, 0, 0 }, { w, 0, 0 }, { bias, 0, 0 } });
    g.setHeads({ { fc, 0, 0 } });
    g.finalize();
    const auto shapes = g.inferShapes({ Shape({ 2, 3, 5 }), Shape(), Shape() });
    EXPECT_EQ(shapes[g.entryId(1, 0)], Shape({ 4, 15 }));
    EXPECT_EQ(shapes[g.entryId(2, 0)], Shape({ 4 }));
    EXPECT_EQ(shapes[g.entryId(3, 0)], Shape({ 2, 4 }));
    // A given weight shape that contradicts the data is an error naming the node.
    const std::string msg = errorOf([&] { g.inferShapes({ Shape({ 2, 15 }), Shape({ 4, 14 }), Shape() }); });
    EXPECT_NE(msg.find("'fc'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(4, 14)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(4, 15)"), std::string::npos) << msg;
}
