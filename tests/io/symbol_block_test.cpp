// SymbolBlock.imports on the real MXNet models (values against PyTorch, hook names against MXNet's
// rules), parameter loading errors, and export → imports round trips.

#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "gluon/export.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/nn/conv_layers.h"
#include "gluon/sequential.h"
#include "gluon/symbol_block.h"
#include "io/io_test_util.h"
#include "io/npy.h"
#include "io/params_file.h"
#include "io/symbol_json.h"

#include <gtest/gtest.h>

using namespace opscope;
using namespace opscope::gluon;
using namespace opscope::test;

namespace {

std::string model(const std::string& leaf)
{
    return shared("models/" + leaf);
}

std::shared_ptr<SymbolBlock> importMnist()
{
    return SymbolBlock::imports(model("mnist-symbol.json"), { "data" }, model("mnist-0035.params"));
}

struct Recorded {
    std::vector<std::string> names;
    std::vector<std::string> ops;
};

Recorded recordHooks(Block& block, const std::vector<Tensor>& inputs, bool monitorAll)
{
    Recorded r;
    HookHandle h = block.register_op_hook(
        [&](std::string_view name, std::string_view op, const TensorView&) {
            r.names.emplace_back(name);
            r.ops.emplace_back(op);
        },
        monitorAll);
    block.call(inputs);
    h.remove(); // the callback refers to `r`
    return r;
}

// mnist's params with one array replaced (or removed when `value` is undefined), written to `path`.
void writeMnistParamsWith(const std::string& path, const std::string& name, const Tensor& value)
{
    NamedTensors arrays;
    for (auto& [n, t] : loadParams(model("mnist-0035.params"))) {
        if (stripParamPrefix(n) != name)
            arrays.emplace_back(n, t);
        else if (value.defined())
            arrays.emplace_back(n, value);
    }
    saveParams(path, arrays);
}

} // namespace

TEST(SymbolBlockImports, MnistMatchesPyTorch)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    auto net = importMnist();
    EXPECT_EQ(net->collect_params().size(), 8u);
    EXPECT_EQ(net->collect_params().at("hybridsequential9_conv0_weight")->shape(), Shape({ 10, 1, 5, 5 }));
    const Tensor x = readNpy(fixture("io/image_1x1x28x28.npy"));
    const Tensor out = net->call(x);
    EXPECT_TRUE(tensorsNear(out, readNpy(fixture("io/mnist_out.npy")), 1e-5f, 1e-4f));
    // Replayed operator by operator (eager F), it computes the same.
    const auto eager = net->hybrid_forward(F(), { Value(x) });
    ASSERT_EQ(eager.size(), 1u);
    EXPECT_TRUE(tensorsNear(eager[0].tensor(), out, 1e-6f, 1e-6f));
}

TEST(SymbolBlockImports, LenetMatchesPyTorch)
{
    OPSCOPE_NEEDS_SHARED("models/lenet-symbol.json", "models/lenet-0001.params");
    auto net = SymbolBlock::imports(model("lenet-symbol.json"), { "data" }, model("lenet-0001.params"));
    const Tensor out = net->call(readNpy(fixture("io/image_1x1x28x28.npy")));
    EXPECT_TRUE(tensorsNear(out, readNpy(fixture("io/lenet_out.npy")), 1e-4f, 1e-4f));
}

// MXNet 0.9 graph and legacy records: Reshape(-1) → FullyConnected → SoftmaxOutput with its label.
TEST(SymbolBlockImports, LegacyMlpRuns)
{
    OPSCOPE_NEEDS_SHARED("models/legacy-mlp-symbol.json", "models/legacy-mlp-0001.params");
    auto net = SymbolBlock::imports(
        model("legacy-mlp-symbol.json"), { "data", "softmax_label" }, model("legacy-mlp-0001.params"));
    const auto out = net->call({ readNpy(fixture("io/legacy_mlp_in.npy")), Tensor::zeros(Shape({ 4 })) });
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(tensorsNear(out[0], readNpy(fixture("io/legacy_mlp_out.npy")), 1e-6f, 1e-5f));
}

// MXNet 0.8 graph without parameters: shapes inferred from the data shape, implicit aux states added.
TEST(SymbolBlockImports, Version08InfersShapes)
{
    OPSCOPE_NEEDS_SHARED("models/v08-mlp-bn-symbol.json");
    auto net = SymbolBlock::imports(model("v08-mlp-bn-symbol.json"), { "data", "softmax_label" });
    net->infer_shape({ Shape({ 2, 100 }), Shape({ 2 }) });
    const ParameterDict params = net->collect_params();
    EXPECT_EQ(params.at("fc1_weight")->shape(), Shape({ 128, 100 }));
    EXPECT_EQ(params.at("fc2_weight")->shape(), Shape({ 64, 128 }));
    EXPECT_EQ(params.at("batchnorm0_gamma")->shape(), Shape({ 10 }));
    EXPECT_EQ(params.at("batchnorm0_moving_mean")->shape(), Shape({ 10 }));
    EXPECT_EQ(params.at("batchnorm0_moving_var")->grad_req(), "null");
    EXPECT_EQ(params.at("fc1_weight")->grad_req(), "write");
    // With initialised parameters it runs.
    net->initialize();
    const auto out = net->call({ Tensor::ones(Shape({ 2, 100 })), Tensor::zeros(Shape({ 2 })) });
    EXPECT_EQ(out.at(0).shape(), Shape({ 2, 10 }));
}

// Op hooks of an imported model report MXNet's tensor names: <node>_<slot>, whole list.
TEST(SymbolBlockImports, MnistHookNamesFollowMxnet)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    auto net = importMnist();
    const Tensor x = readNpy(fixture("io/image_1x1x28x28.npy"));
    const std::string p = "hybridsequential9_";
    std::vector<std::string> all, outputs, ops;
    auto add = [&](const std::string& node, const std::string& op, const std::vector<std::string>& in,
                   const std::vector<std::string>& out) {
        for (const auto& s : in) {
            all.push_back(p + node + "_" + s);
            ops.push_back(op);
        }
        for (const auto& s : out) {
            all.push_back(p + node + "_" + s);
            outputs.push_back(p + node + "_" + s);
            ops.push_back(op);
        }
    };
    for (const std::string conv : { "conv0", "conv1" }) {
        add(conv + "_fwd", "Convolution", { "data", "weight", "bias" }, { "output" });
        add(conv + "_tanh_fwd", "Activation", { "input0" }, { "output" });
        add(std::string(conv == "conv0" ? "pool0" : "pool1") + "_fwd", "Pooling", { "data" }, { "output" });
    }
    for (const std::string dense : { "dense0", "dense1" }) {
        add(dense + "_fwd", "FullyConnected", { "data", "weight", "bias" }, { "output" });
        add(dense + "_tanh_fwd", "Activation", { "input0" }, { "output" });
    }
    ASSERT_EQ(all.size(), 28u);
    EXPECT_EQ(all[0], "hybridsequential9_conv0_fwd_data");
    EXPECT_EQ(all[4], "hybridsequential9_conv0_tanh_fwd_input0");

    Recorded r = recordHooks(*net, { x }, true);
    EXPECT_EQ(r.names, all);
    EXPECT_EQ(r.ops, ops);
    net->hybridize(true, true); // static_alloc: same names
    EXPECT_EQ(recordHooks(*net, { x }, true).names, all);
    EXPECT_EQ(recordHooks(*net, { x }, false).names, outputs);
}

// A SymbolBlock inside a HybridSequential being hybridized: its nodes keep their exact names.
TEST(SymbolBlockImports, NestedInAHybridizedSequential)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    resetNaming();
    auto imported = importMnist();
    auto net = std::make_shared<HybridSequential>();
    std::shared_ptr<nn::Dense> head;
    {
        auto scope = net->name_scope();
        net->add(imported);
        head = std::make_shared<nn::Dense>(3);
        net->add(head);
    }
    head->initialize();
    const Tensor x = readNpy(fixture("io/image_1x1x28x28.npy"));
    const Tensor eager = net->call(x).copy();
    net->hybridize();
    Recorded r = recordHooks(*net, { x }, false);
    const Tensor hybrid = net->call(x);
    EXPECT_TRUE(tensorsNear(hybrid, eager, 1e-6f, 1e-6f));
    EXPECT_EQ(r.names.front(), "hybridsequential9_conv0_fwd_output");
    EXPECT_EQ(r.names.back(), "hybridsequential0_dense0_fwd_output");
    EXPECT_EQ(r.names.size(), 11u);
    const Graph& g = *net->graph();
    EXPECT_TRUE(g.findNode("hybridsequential9_dense1_tanh_fwd").has_value());
    EXPECT_TRUE(g.findNode("hybridsequential9_conv0_weight").has_value());
    // The composed model's first part computes what the imported model alone does.
    const Tensor expected = head->call(importMnist()->call(x));
    EXPECT_TRUE(tensorsNear(hybrid, expected, 1e-6f, 1e-6f));
}

// ---------------------------------------------------------------------------------------------

TEST(SymbolBlockErrors, MissingParametersAreAllNamed)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-0035.params", "models/mnist-symbol.json");
    const std::string path = tempPath("missing-0000.params");
    NamedTensors arrays;
    for (auto& [n, t] : loadParams(model("mnist-0035.params")))
        if (n.find("dense1") == std::string::npos) arrays.emplace_back(n, t);
    saveParams(path, arrays);
    EXPECT_TRUE(throwsWith<UsageError>([&] { SymbolBlock::imports(model("mnist-symbol.json"), { "data" }, path); },
        { path, "hybridsequential9_dense1_weight", "hybridsequential9_dense1_bias" }));
}

TEST(SymbolBlockErrors, ExtraArraysAreNamed)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-0035.params", "models/mnist-symbol.json");
    const std::string path = tempPath("extra-0000.params");
    NamedTensors arrays = loadParams(model("mnist-0035.params"));
    arrays.emplace_back("arg:stray_weight", Tensor::ones(Shape({ 2 })));
    saveParams(path, arrays);
    EXPECT_TRUE(throwsWith<UsageError>(
        [&] { SymbolBlock::imports(model("mnist-symbol.json"), { "data" }, path); }, { path, "stray_weight" }));
    auto net = SymbolBlock::imports(model("mnist-symbol.json"), { "data" });
    EXPECT_NO_THROW(net->load_parameters(path, false, true));
}

// A shape that contradicts the graph's shape inference: found at the first call (the data's
// shape is not in the file), naming the parameter and both shapes; nothing runs.
TEST(SymbolBlockErrors, ParameterShapeContradictsInference)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json");
    const std::string path = tempPath("wide-0000.params");
    writeMnistParamsWith(path, "hybridsequential9_conv0_weight", Tensor::ones(Shape({ 10, 2, 5, 5 })));
    auto net = SymbolBlock::imports(model("mnist-symbol.json"), { "data" }, path);
    EXPECT_TRUE(throwsWith<ShapeError>(
        [&] {
            net->call(Tensor::ones(Shape({ 1, 1, 28, 28 })));
        },
        { path, "hybridsequential9_conv0_weight", "(10, 2, 5, 5)", "(10, 1, 5, 5)", "(1, 1, 28, 28)" }));
    // Data with 2 channels fits the loaded weight.
    EXPECT_EQ(net->call(Tensor::ones(Shape({ 1, 2, 28, 28 }))).shape(), Shape({ 1, 10 }));
}

// The shapes are checked again whenever an input's shape differs from the last call's, and only
// then (a call with the shapes of the last one compares them in place).
TEST(SymbolBlockErrors, AnInputShapeThatChangesIsCheckedAgain)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    auto net = importMnist();
    for (int call = 0; call < 2; ++call)
        EXPECT_EQ(net->call(Tensor::ones(Shape({ 1, 1, 28, 28 }))).shape(), Shape({ 1, 10 }));
    EXPECT_TRUE(throwsWith<ShapeError>([&] { net->call(Tensor::ones(Shape({ 1, 2, 28, 28 }))); },
        { "hybridsequential9_conv0_weight", "(10, 1, 5, 5)", "(1, 2, 28, 28)" }));
    EXPECT_EQ(net->call(Tensor::ones(Shape({ 3, 1, 28, 28 }))).shape(), Shape({ 3, 10 }));
}

// A shape that contradicts the variable's `__shape__` is found while loading.
TEST(SymbolBlockErrors, ParameterShapeContradictsShapeAttribute)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json");
    const std::string path = tempPath("bias-0000.params");
    writeMnistParamsWith(path, "hybridsequential9_dense0_bias", Tensor::ones(Shape({ 21 })));
    EXPECT_TRUE(throwsWith<ShapeError>([&] { SymbolBlock::imports(model("mnist-symbol.json"), { "data" }, path); },
        { path, "hybridsequential9_dense0_bias", "(20,)", "(21,)" }));
}

// With the data's shape in the file (`__shape__`), inference checks the values while loading.
TEST(SymbolBlockErrors, InferenceAtLoadTimeWhenInputShapeIsKnown)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    std::string json = readBytes(model("mnist-symbol.json"));
    const std::string data = "\"name\": \"data\", ";
    json.replace(json.find(data), data.size(), data + "\"attrs\": {\"__shape__\": \"(1, 1, 28, 28)\"}, ");
    const std::string symbol = tempPath("shaped-symbol.json");
    writeBytes(symbol, json);
    const std::string path = tempPath("shaped-0000.params");
    writeMnistParamsWith(path, "hybridsequential9_dense0_weight", Tensor::ones(Shape({ 20, 300 })));
    EXPECT_TRUE(throwsWith<ShapeError>([&] { SymbolBlock::imports(symbol, { "data" }, path); },
        { path, "hybridsequential9_dense0_weight", "(20, 300)", "(20, 400)" }));
    EXPECT_NO_THROW(SymbolBlock::imports(symbol, { "data" }, model("mnist-0035.params")));
}

TEST(SymbolBlockErrors, MissingOrBrokenParamsFile)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json");
    EXPECT_TRUE(throwsWith<FileError>(
        [&] { SymbolBlock::imports(model("mnist-symbol.json"), { "data" }, "/nonexistent/mnist-0035.params"); },
        { "/nonexistent/mnist-0035.params", "cannot open" }));
    const std::string path = tempPath("sparse-0000.params");
    writeBytes(path, Bytes().u64(0x112).u64(0).u64(1).u32(0xF993fac9).i32(2).str());
    EXPECT_TRUE(throwsWith<FileError>(
        [&] { SymbolBlock::imports(model("mnist-symbol.json"), { "data" }, path); }, { path, "byte 28", "csr" }));
}

TEST(SymbolBlockErrors, BadInputs)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    EXPECT_THROW(SymbolBlock::imports(model("mnist-symbol.json"), { "image" }), UsageError);
    auto net = importMnist();
    EXPECT_THROW(net->call(std::vector<Tensor> { Tensor::ones(Shape({ 1, 1, 28, 28 })), Tensor::ones(Shape({ 1 })) }),
        UsageError);
    // Without a params file the parameters are not initialised.
    auto bare = SymbolBlock::imports(model("mnist-symbol.json"), { "data" });
    EXPECT_THROW(bare->call(Tensor::ones(Shape({ 1, 1, 28, 28 }))), UsageError);
}

// ---------------------------------------------------------------------------------------------

TEST(Export, NeedsAGraph)
{
    resetNaming();
    auto net = std::make_shared<nn::Dense>(2);
    net->initialize();
    net->call(Tensor::ones(Shape({ 1, 3 }))); // not hybridized: no graph
    EXPECT_TRUE(throwsWith<UsageError>([&] { export_(*net, tempPath("none")); },
        { "Please first call block.hybridize() and then run forward with this block at least once before calling "
          "export." }));
}

// Conv2D + BatchNorm + Dense exported, imported back: same outputs, same hook names.
TEST(Export, RoundTripThroughImports)
{
    resetNaming();
    auto net = std::make_shared<HybridSequential>();
    {
        auto scope = net->name_scope();
        net->add(std::make_shared<nn::Conv2D>(4, 3));
        net->add(std::make_shared<nn::BatchNorm>());
        net->add(std::make_shared<nn::Activation>("relu"));
        net->add(std::make_shared<nn::MaxPool2D>(2));
        net->add(std::make_shared<nn::Dense>(5));
    }
    net->initialize();
    const Tensor x = Tensor::uniform(Shape({ 2, 3, 8, 8 }), -1, 1);
    net->hybridize();
    net->call(x);
    // Non-trivial running statistics, so that the auxiliary states matter.
    net->collect_params(".*running_mean").values().at(0)->set_data(Tensor::uniform(Shape({ 4 }), -0.5f, 0.5f));
    net->collect_params(".*running_var").values().at(0)->set_data(Tensor::uniform(Shape({ 4 }), 0.5f, 2.0f));

    const std::string prefix = tempPath("net");
    export_(*net, prefix, 7);
    const NamedTensors saved = loadParams(prefix + "-0007.params");
    std::vector<std::string> names;
    for (const auto& [n, t] : saved)
        names.push_back(n);
    EXPECT_EQ(names,
        (std::vector<std::string> { "arg:hybridsequential0_conv0_weight", "arg:hybridsequential0_conv0_bias",
            "arg:hybridsequential0_batchnorm0_gamma", "arg:hybridsequential0_batchnorm0_beta",
            "aux:hybridsequential0_batchnorm0_running_mean", "aux:hybridsequential0_batchnorm0_running_var",
            "arg:hybridsequential0_dense0_weight", "arg:hybridsequential0_dense0_bias" }));
    EXPECT_TRUE(sameGraph(loadSymbolJson(prefix + "-symbol.json"), *net->graph()));

    auto back = SymbolBlock::imports(prefix + "-symbol.json", { "data" }, prefix + "-0007.params");
    EXPECT_EQ(back->collect_params().at("hybridsequential0_batchnorm0_running_var")->grad_req(), "null");
    const Recorded a = recordHooks(*net, { x }, true);
    const Recorded b = recordHooks(*back, { x }, true);
    EXPECT_EQ(a.names, b.names);
    EXPECT_EQ(a.ops, b.ops);
    EXPECT_EQ(a.names.front(), "hybridsequential0_conv0_fwd_data");
    EXPECT_EQ(a.names.back(), "hybridsequential0_dense0_fwd_output");
    EXPECT_TRUE(tensorsNear(back->call(x), net->call(x), 0.0f, 0.0f));
}

// Exporting an imported MXNet model reproduces both of MXNet's files byte for byte.
TEST(Export, ImportedMnistIsWrittenBackUnchanged)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    auto net = importMnist();
    const std::string prefix = tempPath("mnist");
    export_(*net, prefix, 35);
    EXPECT_EQ(readBytes(prefix + "-symbol.json"), readBytes(model("mnist-symbol.json")));
    EXPECT_EQ(readBytes(prefix + "-0035.params"), readBytes(model("mnist-0035.params")));
}
