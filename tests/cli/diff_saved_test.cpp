// opscope-cli diff against saved runs and other models: an .npz archive with PyTorch-style names
// met through a name map, unmatched tensors listed, a perturbed ONNX initializer found where it is
// read, the top-1 agreement of a classifier, Model Explorer node data, and a model whose names
// differ matched by position and operator.

#include "cli/cli_run.h"
#include "debug/compare_match.h"
#include "gluon/export.h"
#include "io/params_file.h"
#include "models/registry.h"
#include "io/npy.h"
#include "io/npz.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>

using namespace opscope;
using namespace opscope::test;
namespace fs = std::filesystem;

namespace {
const std::string kConv2 = "/stage2/stage2.0/Conv";

// onnx-cnn's tensors from `run --monitor-all --dump`, by the names the dump lists.
std::map<std::string, Tensor> dumpOnnxCnn(const fs::path& dir)
{
    Result r = run("run sample:onnx-cnn --monitor-all --dump " + (dir / "dump").string());
    EXPECT_EQ(r.status, 0) << lastStderr();
    std::map<std::string, Tensor> out;
    for (const auto& e : fs::directory_iterator(dir / "dump"))
        if (e.path().extension() == ".npy") out[e.path().stem().string()] = readNpy(e.path().string());
    return out;
}
}

TEST(DiffSaved, AnNpzWithItsOwnNamesMeetsRunAThroughAMap)
{
    const fs::path dir = tempDir("diff_npz");
    const auto dumped = dumpOnnxCnn(dir);
    // The dump names files by tensor; find the second convolution's output among them.
    std::string conv2Out;
    for (const auto& [name, t] : dumped)
        if (name.find("stage2.0") != std::string::npos && name.find("Conv") != std::string::npos
            && name.find("output") != std::string::npos)
            conv2Out = name;
    ASSERT_FALSE(conv2Out.empty());

    // What a PyTorch script would save: module outputs under its own names, one of them off.
    Tensor conv2 = dumped.at(conv2Out).copy();
    conv2.data()[5] += 0.25f;
    Tensor relu1;
    for (const auto& [name, t] : dumped)
        if (name.find("stage1.2") != std::string::npos && name.find("output") != std::string::npos) relu1 = t;
    ASSERT_TRUE(relu1.defined());
    writeNpz((dir / "torch.npz").string(),
        { { "stage1.2", relu1.view() }, { "stage2.0", conv2.view() }, { "stage2.weight_unknown", conv2.view() } });
    std::ofstream((dir / "map.json").string())
        << nlohmann::json { { "stage1.2", "/stage1/stage1.2/Relu" }, { "stage2.0", kConv2 } }.dump();

    const fs::path json = dir / "diff.json";
    Result r = run("diff sample:onnx-cnn --npz-b " + (dir / "torch.npz").string() + " --map "
        + (dir / "map.json").string() + " --json " + json.string());
    EXPECT_EQ(r.status, 1) << r.out << lastStderr();
    EXPECT_EQ(lastLine(r.out), "first divergent node: " + kConv2) << r.out;
    // What stays unmatched is listed: B's unknown array, and A's tensors B lacks.
    EXPECT_NE(r.out.find("stage2.weight_unknown"), std::string::npos);
    EXPECT_NE(r.out.find("only in B"), std::string::npos);
    EXPECT_NE(r.out.find("unmatched: "), std::string::npos);
    const auto j = nlohmann::json::parse(std::ifstream(json));
    EXPECT_EQ(j["tensors"].size(), 2u) << "the two mapped tensors, compared";
    EXPECT_EQ(j["only_b"], nlohmann::json::array({ "stage2.weight_unknown" }));

    // Without the perturbed array the mapped tensors agree: exit 0 though most of A is unmatched.
    writeNpz((dir / "same.npz").string(), { { "stage1.2", relu1.view() } });
    Result same = run("diff sample:onnx-cnn --npz-b " + (dir / "same.npz").string() + " --map " + (dir / "map.json").string());
    EXPECT_EQ(same.status, 0) << same.out;
    // Nothing matched at all is not agreement.
    Result none = run("diff sample:onnx-cnn --npz-b " + (dir / "same.npz").string());
    EXPECT_EQ(none.status, 1) << none.out;
    EXPECT_NE(lastLine(none.out).find("nothing to compare"), std::string::npos) << none.out;
    // A map naming what A lacks is a usage error; a damaged archive a bad file.
    std::ofstream((dir / "bad_map.json").string()) << R"({"x": "no_such_tensor"})";
    EXPECT_EQ(run("diff sample:onnx-cnn --npz-b " + (dir / "same.npz").string() + " --map " + (dir / "bad_map.json").string())
                  .status,
        2);
    std::ofstream((dir / "broken.npz").string()) << "PK not really";
    Result broken = run("diff sample:onnx-cnn --npz-b " + (dir / "broken.npz").string());
    EXPECT_EQ(broken.status, 3);
    EXPECT_NE(lastStderr().find("broken.npz"), std::string::npos) << lastStderr();
}

TEST(DiffSaved, APerturbedOnnxInitializerIsFoundAtTheNodeReadingIt)
{
    const fs::path dir = tempDir("diff_onnx_param");
    const std::string original = samplesOnnx("cnn.onnx");
    onnx::ModelProto m;
    {
        std::ifstream in(original, std::ios::binary);
        ASSERT_TRUE(m.ParseFromIstream(&in));
    }
    bool changed = false;
    for (auto& init : *m.mutable_graph()->mutable_initializer()) {
        if (init.name() != "stage2.0.weight") continue;
        if (!init.raw_data().empty()) {
            std::string raw = init.raw_data();
            float v;
            std::memcpy(&v, raw.data(), 4);
            v += 0.5f;
            std::memcpy(raw.data(), &v, 4);
            init.set_raw_data(raw);
        } else {
            init.set_float_data(0, init.float_data(0) + 0.5f);
        }
        changed = true;
    }
    ASSERT_TRUE(changed);
    {
        std::ofstream out((dir / "changed.onnx").string(), std::ios::binary);
        ASSERT_TRUE(m.SerializeToOstream(&out));
    }
    const fs::path overlay = dir / "overlay.json";
    Result r = run("diff " + original + " " + (dir / "changed.onnx").string() + " --overlay " + overlay.string());
    EXPECT_EQ(r.status, 1) << r.out << lastStderr();
    EXPECT_EQ(lastLine(r.out), "first divergent node: " + kConv2) << r.out;
    // Model Explorer node data: every op node with a value; the first divergent one marked; what
    // came before agrees exactly.
    const auto o = nlohmann::json::parse(std::ifstream(overlay));
    ASSERT_TRUE(o.contains("results") && o.contains("thresholds"));
    EXPECT_EQ(o["results"].size(), 10u) << o.dump();
    EXPECT_EQ(o["results"]["/stage1/stage1.0/Conv"]["value"], 0.0);
    EXPECT_GT(o["results"][kConv2]["value"].get<double>(), 0.0);
    EXPECT_TRUE(o["results"][kConv2].contains("bgColor"));
    EXPECT_FALSE(o["results"]["/stage1/stage1.0/Conv"].contains("bgColor"));
    EXPECT_GE(o["thresholds"].size(), 2u);
}

TEST(DiffSaved, TheTopOneAgreementOfAClassifierIsCounted)
{
    // lenet's ten scores for one digit: the same class in both runs whatever the kernels.
    Result same = run("diff sample:lenet --kernels-b reference --rtol 1e-3 --atol 1e-4");
    EXPECT_NE(same.out.find("top-1 agreement of hybridsequential0_dense1_tanh_fwd_output: 1 of 1 rows"), std::string::npos)
        << same.out;
    // A batch of 8 random points through the mlp against zero input: the argmax of zero input's
    // rows is one class for all rows; the agreement is the share of A's rows in that class.
    const fs::path dir = tempDir("diff_top1");
    const fs::path json = dir / "d.json";
    Result r = run("diff sample:mlp --input-a data=64x2:normal --input-b data=64x2:zeros --json " + json.string());
    EXPECT_EQ(r.status, 1);
    const auto j = nlohmann::json::parse(std::ifstream(json));
    ASSERT_EQ(j["top1"].size(), 1u);
    EXPECT_EQ(j["top1"][0]["rows"], 64);
    EXPECT_LT(j["top1"][0]["agree"].get<int>(), 64) << "random points fall in more than one class";
}

TEST(DiffSaved, AModelWhoseNamesDifferIsMatchedByPositionAndOperator)
{
    // lenet exported, and the same network with every name changed (another framework's export).
    const fs::path dir = tempDir("diff_position");
    samples::Sample s = samples::makeSample("lenet");
    s.block->hybridize();
    s.block->call(s.defaultInputs);
    gluon::export_(*s.block, (dir / "lenet").string(), 0);
    std::string symbol;
    {
        std::ifstream in(dir / "lenet-symbol.json");
        symbol.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto rename = [](std::string text) {
        for (size_t at = 0; (at = text.find("hybridsequential0_", at)) != std::string::npos;)
            text.replace(at, 18, "other_");
        return text;
    };
    std::ofstream(dir / "other-symbol.json") << rename(symbol);
    NamedTensors arrays = loadParams((dir / "lenet-0000.params").string());
    NamedTensors renamedArrays, changed;
    for (auto& [name, t] : arrays) {
        renamedArrays.emplace_back(rename(name), t);
        Tensor c = t.copy();
        if (name.find("conv1_weight") != std::string::npos) c.data()[0] += 0.5f;
        changed.emplace_back(rename(name), c);
    }
    saveParams((dir / "other-0000.params").string(), renamedArrays);
    saveParams((dir / "changed.params").string(), changed);

    const std::string a = (dir / "lenet-symbol.json").string(), b = (dir / "other-symbol.json").string();
    const fs::path json = dir / "d.json";
    Result same = run("diff " + a + " " + b + " --input-a data=1x1x28x28:uniform --json " + json.string());
    EXPECT_EQ(same.status, 0) << same.out << lastStderr();
    EXPECT_NE(same.out.find("matched by position and operator"), std::string::npos) << same.out;
    const auto j = nlohmann::json::parse(std::ifstream(json));
    EXPECT_EQ(j["matched_by_position"]["other_conv1_fwd_output"], "hybridsequential0_conv1_fwd_output");
    EXPECT_TRUE(j["only_a"].empty()) << j["only_a"].dump();
    // One weight changed in B: found at A's node of that place.
    Result r = run("diff " + a + " " + b + " --input-a data=1x1x28x28:uniform --params-b " + (dir / "changed.params").string());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(lastLine(r.out), "first divergent node: hybridsequential0_conv1_fwd") << r.out;
}

TEST(DiffSaved, OperatorsOfBothFormatsFallInOneFamily)
{
    Graph g;
    const uint32_t x = g.addVariable("x");
    const auto family = [&](const std::string& op, AttrMap attrs = {}) {
        return debug::opFamily(g.node(g.addOp(op, op + std::to_string(g.size()), std::move(attrs), { { x, 0, 0 } })));
    };
    EXPECT_EQ(family("Activation", { { "act_type", "relu" } }), "relu");
    EXPECT_EQ(family("relu"), "relu");
    EXPECT_EQ(family("Activation", { { "act_type", "tanh" } }), "tanh");
    EXPECT_EQ(family("Flatten"), "flatten");
    EXPECT_EQ(family("softmax"), "softmax");
    EXPECT_EQ(family("SoftmaxActivation"), "softmax");
}

TEST(DiffSaved, ADiffWatchpointStopsARunWhereItLeavesItsReference)
{
    const fs::path dir = tempDir("diff_watch");
    ASSERT_EQ(run("run sample:lenet --monitor-all --dump " + (dir / "ref").string()).status, 0) << lastStderr();
    // Other input: the first op already leaves the reference.
    Result other = run("run sample:lenet --input data=1x1x28x28:uniform --break-on \"diff>1e-3\" --reference "
        + (dir / "ref").string());
    EXPECT_EQ(other.status, 0) << other.out << lastStderr();
    EXPECT_NE(other.out.find("paused at node hybridsequential0_conv0_fwd"), std::string::npos) << other.out;
    // The same run: nothing leaves it (exit 1: no breakpoint hit).
    Result same = run("run sample:lenet --break-on \"diff>1e-3\" --reference " + (dir / "ref").string());
    EXPECT_EQ(same.status, 1) << same.out << lastStderr();
    // Without a reference the condition cannot hold: refused, not silently never hit.
    EXPECT_EQ(run("run sample:lenet --break-on \"diff>1e-3\"").status, 2);
    EXPECT_NE(lastStderr().find("--reference"), std::string::npos);
    EXPECT_EQ(run("run sample:lenet --break-on \"diff>1e-3\" --reference " + (dir / "none.npz").string()).status, 3);
}
