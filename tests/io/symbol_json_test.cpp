// -symbol.json reading (every MXNet version in ../shared/models), writing, and bad files.

#include "common/test_paths.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/nn/conv_layers.h"
#include "gluon/sequential.h"
#include "io/io_test_util.h"
#include "io/symbol_json.h"

#include <gtest/gtest.h>
#include <map>

using namespace opscope;
using namespace opscope::test;

namespace {

const std::string kSymbolFiles[]
    = { "mnist-symbol.json", "lenet-symbol.json", "legacy-mlp-symbol.json", "v08-mlp-bn-symbol.json" };

Graph loadShared(const std::string& leaf)
{
    return loadSymbolJson(shared("models/" + leaf));
}

const Node& nodeNamed(const Graph& g, const std::string& name)
{
    auto id = g.findNode(name);
    if (!id) throw std::runtime_error("no node " + name);
    return g.node(*id);
}

std::vector<std::string> names(const Graph& g)
{
    std::vector<std::string> out;
    for (const Node& n : g.nodes())
        out.push_back(n.name);
    return out;
}

// Shapes by variable name; the others unknown.
std::vector<Shape> variableShapes(const Graph& g, const std::map<std::string, Shape>& known)
{
    std::vector<Shape> out;
    for (uint32_t id : g.variables()) {
        auto it = known.find(g.node(id).name);
        out.push_back(it == known.end() ? Shape() : it->second);
    }
    return out;
}

Shape shapeOf(const Graph& g, const std::vector<Shape>& shapes, const std::string& name)
{
    return shapes[g.entryId(*g.findNode(name), 0)];
}

// A tiny nnvm file: data → FullyConnected(fc) → Activation(relu); `fcAttrs` and `extra` patch it.
std::string tinyJson(const std::string& fcInputs = "[[0, 0, 0], [1, 0, 0], [2, 0, 0]]",
    const std::string& fcAttrs = R"({"num_hidden": "4"})", const std::string& reluOp = "Activation",
    const std::string& heads = "[[4, 0, 0]]")
{
    return R"({"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "fc_weight", "inputs": []},
        {"op": "null", "name": "fc_bias", "inputs": []},
        {"op": "FullyConnected", "name": "fc", "attrs": )"
        + fcAttrs + R"(, "inputs": )" + fcInputs + R"(},
        {"op": ")"
        + reluOp + R"(", "name": "relu", "attrs": {"act_type": "relu"}, "inputs": [[3, 0, 0]]}],
      "arg_nodes": [0, 1, 2], "heads": )"
        + heads + R"(, "attrs": {"mxnet_version": ["int", 10600]}})";
}

} // namespace

TEST(SymbolJson, EveryModelFileLoads)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/lenet-symbol.json", "models/legacy-mlp-symbol.json", "models/v08-mlp-bn-symbol.json");
    for (const std::string& f : kSymbolFiles) {
        SCOPED_TRACE(f);
        Graph g = loadShared(f);
        EXPECT_TRUE(g.finalized());
        EXPECT_GE(g.size(), 5u);
        EXPECT_EQ(g.heads().size(), 1u);
    }
}

TEST(SymbolJson, MnistNodesInFileOrderWithHiddenAttributes)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json");
    Graph g = loadShared("mnist-symbol.json");
    ASSERT_EQ(g.size(), 19u);
    EXPECT_EQ(g.node(0).name, "data");
    EXPECT_EQ(g.node(3).name, "hybridsequential9_conv0_fwd");
    EXPECT_EQ(g.node(3).op, "Convolution");
    EXPECT_EQ(g.node(3).attrs.at("kernel"), "(5, 5)");
    EXPECT_EQ(g.node(18).name, "hybridsequential9_dense1_tanh_fwd");
    EXPECT_EQ(g.node(1).attrs.at("__shape__"), "(10, 0, 5, 5)");
    EXPECT_EQ(g.node(2).attrs.at("__init__"), "zeros");
    EXPECT_EQ(g.variables(), (std::vector<uint32_t> { 0, 1, 2, 6, 7, 11, 12, 15, 16 }));
    EXPECT_EQ(g.heads(), (std::vector<NodeEntry> { { 18, 0, 0 } }));
    EXPECT_EQ(g.outputName(g.heads()[0]), "hybridsequential9_dense1_tanh_fwd_output");
}

// lenet's node_row_ptr came from an MKLDNN build (Pooling with 2 outputs): it is recomputed.
TEST(SymbolJson, LenetRowPtrIsRecomputed)
{
    OPSCOPE_NEEDS_SHARED("models/lenet-symbol.json");
    Graph g = loadShared("lenet-symbol.json");
    ASSERT_EQ(g.size(), 19u);
    for (uint32_t i = 0; i <= g.size(); ++i)
        EXPECT_EQ(g.rowPtr()[i], i);
    const auto shapes = g.inferShapes(variableShapes(g, { { "data", Shape({ 1, 1, 28, 28 }) } }));
    EXPECT_EQ(shapeOf(g, shapes, "hybridsequential0_flatten0_flatten0"), Shape({ 1, 80 }));
    EXPECT_EQ(shapeOf(g, shapes, "hybridsequential0_dense1_fwd"), Shape({ 1, 10 }));
    EXPECT_EQ(shapeOf(g, shapes, "hybridsequential0_conv0_weight"), Shape({ 5, 1, 5, 5 }));
}

// MXNet 0.9.4: `attr` instead of `attrs`; softmax_label is an input of SoftmaxOutput.
TEST(SymbolJson, LegacyMlpVersion09)
{
    OPSCOPE_NEEDS_SHARED("models/legacy-mlp-symbol.json");
    Graph g = loadShared("legacy-mlp-symbol.json");
    EXPECT_EQ(names(g),
        (std::vector<std::string> {
            "data", "reshape0", "pred_weight", "pred_bias", "pred", "softmax_label", "reshape1", "softmax" }));
    EXPECT_EQ(nodeNamed(g, "reshape0").attrs.at("shape"), "(-1)");
    EXPECT_EQ(nodeNamed(g, "pred").attrs.at("num_hidden"), "10");
    EXPECT_EQ(nodeNamed(g, "pred_weight").attrs.at("num_hidden"), "10"); // kept on the variable, as MXNet does
    const Node& softmax = nodeNamed(g, "softmax");
    EXPECT_EQ(softmax.op, "SoftmaxOutput");
    EXPECT_EQ(softmax.inputSlots, (std::vector<std::string> { "data", "label" }));
    const auto shapes
        = g.inferShapes(variableShapes(g, { { "data", Shape({ 4, 1 }) }, { "softmax_label", Shape({ 4 }) } }));
    EXPECT_EQ(shapeOf(g, shapes, "pred_weight"), Shape({ 10, 1 }));
    EXPECT_EQ(shapeOf(g, shapes, "softmax"), Shape({ 4, 10 }));
}

// MXNet 0.8: `param` + `attr`, two-element inputs, no version stamp, and BatchNorm's auxiliary
// states left implicit: the loader adds `batchnorm0_moving_mean` and `batchnorm0_moving_var` with
// the node's attributes (UpgradeJSON_000800_000900), and turns the legacy attribute keys into
// hidden ones (UpgradeJSON_FixParsing).
TEST(SymbolJson, Version08UpgradedLikeMxnet)
{
    OPSCOPE_NEEDS_SHARED("models/v08-mlp-bn-symbol.json");
    Graph g = loadShared("v08-mlp-bn-symbol.json");
    const Node& bn = nodeNamed(g, "batchnorm0");
    ASSERT_EQ(bn.inputs.size(), 5u);
    EXPECT_EQ(g.node(bn.inputs[3].node).name, "batchnorm0_moving_mean");
    EXPECT_EQ(g.node(bn.inputs[4].node).name, "batchnorm0_moving_var");
    EXPECT_TRUE(g.isAuxiliary(bn.inputs[3].node));
    EXPECT_TRUE(g.isAuxiliary(bn.inputs[4].node));
    EXPECT_FALSE(g.isAuxiliary(bn.inputs[1].node));
    const Node& mean = g.node(bn.inputs[3].node);
    EXPECT_EQ(mean.attrs.at("eps"), "0.001");
    EXPECT_EQ(mean.attrs.at("__ctx_group__"), "stage2");
    EXPECT_EQ(bn.attrs.at("fix_gamma"), "True");
    // Operator parameters from `param`, hidden keys from `attr`.
    const Node& fc1 = nodeNamed(g, "fc1");
    EXPECT_EQ(fc1.attrs.at("num_hidden"), "128");
    EXPECT_EQ(fc1.attrs.at("__ctx_group__"), "stage1");
    EXPECT_EQ(fc1.attrs.at("__wd_mult__"), "0.3");
    EXPECT_EQ(fc1.attrs.count("weight_lr_mult"), 0u); // moved to the weight variable
    EXPECT_EQ(nodeNamed(g, "fc1_weight").attrs.at("__lr_mult__"), "1.2");
    EXPECT_EQ(nodeNamed(g, "fc1_weight").attrs.at("weight_lr_mult"), "1.2"); // a variable keeps it
    EXPECT_EQ(nodeNamed(g, "data").attrs.at("__lr_mult__"), "0.2");
    EXPECT_EQ(nodeNamed(g, "data").attrs.count("lr_mult"), 0u);
    EXPECT_EQ(nodeNamed(g, "fc2_bias").attrs.at("__lr_mult__"), "0.01");
    // DFS order from the head: the added variables come right after beta.
    EXPECT_EQ(names(g),
        (std::vector<std::string> { "data", "fc1_weight", "fc1_bias", "fc1", "relu1", "fc2_weight", "fc2_bias", "fc2",
            "relu2", "fc3_weight", "fc3_bias", "fc3", "batchnorm0_gamma", "batchnorm0_beta", "batchnorm0_moving_mean",
            "batchnorm0_moving_var", "batchnorm0", "softmax_label", "softmax" }));

    const auto shapes
        = g.inferShapes(variableShapes(g, { { "data", Shape({ 2, 100 }) }, { "softmax_label", Shape({ 2 }) } }));
    EXPECT_EQ(shapeOf(g, shapes, "fc1_weight"), Shape({ 128, 100 }));
    EXPECT_EQ(shapeOf(g, shapes, "fc3_bias"), Shape({ 10 }));
    EXPECT_EQ(shapeOf(g, shapes, "batchnorm0_moving_var"), Shape({ 10 }));
    EXPECT_EQ(shapeOf(g, shapes, "softmax"), Shape({ 2, 10 }));
}

// Written back, an MXNet 1.6 export is the same file, byte for byte.
TEST(SymbolJson, SaveReproducesMxnetExportByteForByte)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json");
    const std::string original = readBytes(shared("models/mnist-symbol.json"));
    EXPECT_EQ(saveSymbolJson(parseSymbolJson(original, "mnist-symbol.json")), original);
}

TEST(SymbolJson, SaveThenParseGivesTheSameGraph)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/lenet-symbol.json", "models/legacy-mlp-symbol.json", "models/v08-mlp-bn-symbol.json");
    for (const std::string& f : kSymbolFiles) {
        SCOPED_TRACE(f);
        Graph g = loadShared(f);
        const std::string text = saveSymbolJson(g);
        Graph back = parseSymbolJson(text, "saved-" + f);
        EXPECT_TRUE(sameGraph(g, back));
        EXPECT_EQ(saveSymbolJson(back), text);
    }
}

TEST(SymbolJson, SaveThenParseAGluonTrace)
{
    gluon::resetNaming();
    auto net = std::make_shared<gluon::HybridSequential>();
    {
        auto scope = net->name_scope();
        net->add(std::make_shared<gluon::nn::Conv2D>(4, 3));
        net->add(std::make_shared<gluon::nn::BatchNorm>());
        net->add(std::make_shared<gluon::nn::Activation>("relu"));
        net->add(std::make_shared<gluon::nn::Flatten>());
        net->add(std::make_shared<gluon::nn::Dense>(3));
    }
    net->initialize();
    auto traced = net->trace({ Shape({ 2, 1, 6, 6 }) });
    const std::string text = saveSymbolJson(*traced);
    Graph back = parseSymbolJson(text, "trace.json");
    EXPECT_TRUE(sameGraph(*traced, back));
    const Node& bn = nodeNamed(back, "hybridsequential0_batchnorm0_fwd");
    EXPECT_TRUE(back.isAuxiliary(bn.inputs[3].node));
    EXPECT_EQ(back.node(bn.inputs[3].node).name, "hybridsequential0_batchnorm0_running_mean");
    // The layout of MXNet's writer.
    EXPECT_NE(text.find("{\n  \"nodes\": [\n    {\n      \"op\": \"null\", \n      \"name\": \"data\", \n"),
        std::string::npos);
    EXPECT_NE(text.find("\"attrs\": {\"act_type\": \"relu\"}"), std::string::npos);
    EXPECT_NE(text.find("\"attrs\": {\"mxnet_version\": [\"int\", 10600]}\n}"), std::string::npos);
}

TEST(SymbolJson, MultiOutputEntriesAndVersionsSurvive)
{
    // A head on BatchNorm's second output, and an aux input written with version 1.
    const std::string text = R"({"nodes": [
        {"op": "null", "name": "x", "inputs": []},
        {"op": "null", "name": "g", "inputs": []},
        {"op": "null", "name": "b", "inputs": []},
        {"op": "null", "name": "m", "inputs": []},
        {"op": "null", "name": "v", "inputs": []},
        {"op": "BatchNorm", "name": "bn", "attrs": {"output_mean_var": "True"},
         "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]}],
      "arg_nodes": [0, 1, 2, 3, 4], "heads": [[5, 0, 0], [5, 1, 0]]})";
    Graph g = parseSymbolJson(text, "bn.json");
    EXPECT_EQ(g.heads(), (std::vector<NodeEntry> { { 5, 0, 0 }, { 5, 1, 0 } }));
    EXPECT_EQ(g.node(5).inputs[3], (NodeEntry { 3, 0, 1 }));
    EXPECT_TRUE(sameGraph(g, parseSymbolJson(saveSymbolJson(g), "again.json")));
}

TEST(SymbolJson, UnreachableNodesAreDropped)
{
    const std::string text = R"({"nodes": [
        {"op": "null", "name": "x", "inputs": []},
        {"op": "Activation", "name": "unused", "attrs": {"act_type": "tanh"}, "inputs": [[0, 0]]},
        {"op": "Activation", "name": "out", "attrs": {"act_type": "relu"}, "inputs": [[0, 0]]}],
      "arg_nodes": [0], "heads": [[2, 0]]})";
    Graph g = parseSymbolJson(text, "t.json");
    EXPECT_EQ(names(g), (std::vector<std::string> { "x", "out" }));
}

// ---------------------------------------------------------------------------------------------
// Bad files: the right error type, naming the file and the node (index and name).

TEST(SymbolJsonErrors, MalformedJsonGivesTheByteOffset)
{
    std::string text = tinyJson();
    text.resize(40);
    EXPECT_TRUE(throwsWith<FileError>([&] { parseSymbolJson(text, "cut.json"); }, { "cut.json", "byte 41", "JSON" }));
    EXPECT_TRUE(throwsWith<FileError>([&] { parseSymbolJson("{\"nodes\": [}", "x.json"); }, { "x.json", "byte 12" }));
    EXPECT_TRUE(throwsWith<FileError>([&] { parseSymbolJson("", "empty.json"); }, { "empty.json", "byte" }));
}

TEST(SymbolJsonErrors, MissingNodesOrHeads)
{
    EXPECT_TRUE(throwsWith<FileError>(
        [&] { parseSymbolJson(R"({"heads": [[0, 0, 0]]})", "a.json"); }, { "a.json", "missing \"nodes\"" }));
    EXPECT_TRUE(throwsWith<FileError>(
        [&] { parseSymbolJson(R"({"nodes": [{"op": "null", "name": "x", "inputs": []}]})", "b.json"); },
        { "b.json", "missing \"heads\"" }));
    EXPECT_TRUE(throwsWith<FileError>([&] { parseSymbolJson("[1, 2]", "c.json"); }, { "c.json", "top level" }));
    EXPECT_TRUE(throwsWith<FileError>(
        [&] {
            parseSymbolJson(
                tinyJson("[[0, 0, 0], [1, 0, 0], [2, 0, 0]]", R"({"num_hidden": "4"})", "Activation", "[]"), "d.json");
        },
        { "d.json", "no outputs" }));
}

TEST(SymbolJsonErrors, MistypedFieldsNameTheNode)
{
    EXPECT_TRUE(
        throwsWith<FileError>([&] { parseSymbolJson(tinyJson("[[0, 0, 0], [1, 0, 0], [2, \"x\", 0]]"), "t.json"); },
            { "t.json", "node 3 'fc'", "input 2" }));
    EXPECT_TRUE(
        throwsWith<FileError>([&] { parseSymbolJson(tinyJson("[[0, 0, 0], [1, 0, 0], [-2, 0, 0]]"), "t.json"); },
            { "t.json", "node 3 'fc'", "non-negative" }));
    EXPECT_TRUE(throwsWith<FileError>(
        [&] { parseSymbolJson(tinyJson("[[0, 0, 0], [1, 0, 0], [2, 0, 0]]", R"({"num_hidden": 4})"), "t.json"); },
        { "t.json", "node 3 'fc'", "num_hidden", "must be a string" }));
    EXPECT_TRUE(throwsWith<FileError>(
        [&] { parseSymbolJson(tinyJson("{}"), "t.json"); }, { "t.json", "node 3 'fc'", "inputs" }));
}

TEST(SymbolJsonErrors, UnknownOperator)
{
    EXPECT_TRUE(throwsWith<GraphError>(
        [&] {
            parseSymbolJson(
                tinyJson("[[0, 0, 0], [1, 0, 0], [2, 0, 0]]", R"({"num_hidden": "4"})", "FancyOp"), "u.json");
        },
        { "u.json", "node 4 'relu'", "unknown operator 'FancyOp'" }));
}

TEST(SymbolJsonErrors, NonNumericAttribute)
{
    EXPECT_TRUE(throwsWith<AttributeError>(
        [&] { parseSymbolJson(tinyJson("[[0, 0, 0], [1, 0, 0], [2, 0, 0]]", R"({"num_hidden": "ten"})"), "n.json"); },
        { "n.json", "node 3 'fc'", "FullyConnected", "num_hidden", "ten" }));
}

TEST(SymbolJsonErrors, DanglingInput)
{
    EXPECT_TRUE(
        throwsWith<GraphError>([&] { parseSymbolJson(tinyJson("[[0, 0, 0], [1, 0, 0], [7, 0, 0]]"), "d.json"); },
            { "d.json", "node 3 'fc'", "input 2", "node 7", "only 5 nodes" }));
    EXPECT_TRUE(
        throwsWith<GraphError>([&] { parseSymbolJson(tinyJson("[[0, 0, 0], [1, 0, 0], [2, 3, 0]]"), "d.json"); },
            { "d.json", "node 3 'fc'", "output 3", "node 2 'fc_bias'" }));
    EXPECT_TRUE(throwsWith<GraphError>(
        [&] {
            parseSymbolJson(
                tinyJson("[[0, 0, 0], [1, 0, 0], [2, 0, 0]]", R"({"num_hidden": "4"})", "Activation", "[[9, 0, 0]]"),
                "d.json");
        },
        { "d.json", "head 0", "node 9" }));
}

TEST(SymbolJsonErrors, WrongInputCount)
{
    EXPECT_TRUE(throwsWith<GraphError>([&] { parseSymbolJson(tinyJson("[[0, 0, 0], [1, 0, 0]]"), "c.json"); },
        { "c.json", "node 3 'fc'", "expected 3 inputs, got 2" }));
}

TEST(SymbolJsonErrors, Cycle)
{
    const std::string text = R"({"nodes": [
        {"op": "null", "name": "x", "inputs": []},
        {"op": "elemwise_add", "name": "a", "inputs": [[0, 0, 0], [2, 0, 0]]},
        {"op": "Activation", "name": "b", "attrs": {"act_type": "relu"}, "inputs": [[1, 0, 0]]}],
      "arg_nodes": [0], "heads": [[2, 0, 0]], "attrs": {"mxnet_version": ["int", 10600]}})";
    EXPECT_TRUE(
        throwsWith<GraphError>([&] { parseSymbolJson(text, "cycle.json"); }, { "cycle.json", "cycle", "node 1 'a'" }));
    const std::string self = R"({"nodes": [
        {"op": "null", "name": "x", "inputs": []},
        {"op": "elemwise_add", "name": "s", "inputs": [[0, 0, 0], [1, 0, 0]]}],
      "arg_nodes": [0], "heads": [[1, 0, 0]]})";
    EXPECT_TRUE(
        throwsWith<GraphError>([&] { parseSymbolJson(self, "self.json"); }, { "self.json", "cycle", "node 1 's'" }));
}

TEST(SymbolJsonErrors, MissingFile)
{
    EXPECT_TRUE(throwsWith<FileError>([&] { loadSymbolJson("/nonexistent/dir/x-symbol.json"); },
        { "/nonexistent/dir/x-symbol.json", "cannot open" }));
}
