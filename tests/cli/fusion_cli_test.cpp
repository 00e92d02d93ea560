// Fusion seen from the command line: on every built-in sample and on exported ONNX models, a
// static_shape run fused (the default) and one with --no-fuse give the same outputs (within 1e-5
// relative), and with an op hook on every op the hook's report is identical (nothing is fused
// away when everything is watched). bench names the fused groups.

#include "cli/cli_run.h"
#include "common/tensor_match.h"
#include "io/npy.h"
#include "models/registry.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>

using namespace opscope;
using namespace opscope::test;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> models()
{
    std::vector<std::string> m;
    for (const std::string& s : samples::sampleNames())
        m.push_back("sample:" + s);
    for (const char* f : { "encoder_decoder", "mobile_block", "lstm_classifier" })
        m.push_back(fixture(std::string("onnx/torch/") + f + ".onnx"));
    m.push_back(fixture("onnx/conv_bn_chain.onnx"));
    m.push_back(fixture("onnx/conv_clip_chain.onnx"));
    m.push_back(fixture("onnx/matmul_chain.onnx"));
    m.push_back(fixture("onnx/matmul_gelu.onnx"));
    m.push_back(samplesOnnx("transformer.onnx"));
    return m;
}

std::string readAll(const fs::path& p)
{
    std::ifstream in(p);
    return { std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>() };
}

nlohmann::json readJson(const fs::path& p)
{
    std::ifstream in(p);
    return nlohmann::json::parse(in);
}

/// bench --json's ops by node: the names of the nodes fused into each.
std::map<std::string, std::vector<std::string>> fusedGroups(const nlohmann::json& bench)
{
    std::map<std::string, std::vector<std::string>> groups;
    for (const auto& op : bench.at("ops"))
        groups[op.at("node")] = op.at("fused").get<std::vector<std::string>>();
    return groups;
}
}

TEST(FusionCli, FusedAndUnfusedRunsAgreeOnEveryModel)
{
    const fs::path dir = tempDir("fusion_cli");
    for (const std::string& model : models()) {
        SCOPED_TRACE(model);
        const fs::path fused = dir / "fused", plain = dir / "plain";
        fs::remove_all(fused);
        fs::remove_all(plain);
        Result a = run("run " + model + " --mode static_shape --outputs " + fused.string());
        ASSERT_EQ(a.status, 0) << lastStderr();
        Result b = run("run " + model + " --mode static_shape --no-fuse --outputs " + plain.string());
        ASSERT_EQ(b.status, 0) << lastStderr();
        size_t compared = 0;
        for (const auto& e : fs::directory_iterator(plain)) {
            const Tensor x = readNpy(e.path().string());
            const Tensor y = readNpy((fused / e.path().filename()).string());
            EXPECT_TRUE(tensorsNear(y, x, 1e-6f, 1e-5f)) << e.path().filename();
            ++compared;
        }
        EXPECT_GT(compared, 0u);

        const fs::path hooksFused = dir / "hooks_fused.jsonl", hooksPlain = dir / "hooks_plain.jsonl";
        ASSERT_EQ(run("run " + model + " --mode static_shape --hooks " + hooksFused.string()).status, 0) << lastStderr();
        ASSERT_EQ(run("run " + model + " --mode static_shape --no-fuse --hooks " + hooksPlain.string()).status, 0);
        const std::string h = readAll(hooksFused);
        EXPECT_FALSE(h.empty());
        EXPECT_EQ(h, readAll(hooksPlain)) << "an op hook on every op leaves nothing to fuse";
    }
}

TEST(FusionCli, BenchNamesTheFusedGroups)
{
    const fs::path dir = tempDir("fusion_bench");
    const std::string model = fixture("onnx/torch/encoder_decoder.onnx");
    Result r = run("bench " + model + " --repeat 1 --warmup 0 --json " + (dir / "f.json").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    const nlohmann::json f = readJson(dir / "f.json");
    EXPECT_TRUE(f.at("fuse").get<bool>());
    // Tensors nobody watches share buffers whatever the kernels: fewer bytes than one buffer each.
    EXPECT_GT(f.at("shared_tensors").get<int>(), f.at("shared_buffers").get<int>()) << f.dump();
    EXPECT_GT(f.at("shared_buffer_bytes").get<int64_t>(), 0);
    EXPECT_LT(f.at("shared_buffer_bytes").get<int64_t>(), f.at("unshared_bytes").get<int64_t>());
    EXPECT_NE(r.out.find(" tensors nobody watches share "), std::string::npos) << r.out;
    std::set<std::string> nodes;
    bool anyFused = false;
    for (const auto& op : f.at("ops")) {
        nodes.insert(op.at("node").get<std::string>());
        for (const auto& n : op.at("fused")) {
            anyFused = true;
            EXPECT_EQ(op.at("backend"), "dnnl");
            EXPECT_NE(r.out.find(op.at("node").get<std::string>() + " + " + n.get<std::string>()), std::string::npos)
                << r.out;
        }
    }
    // oneDNN fuses /down/down.1/Relu into /down/down.0/Conv on machines where it runs the Conv.
    if (!anyFused) GTEST_SKIP() << "no convolution ran on oneDNN here: nothing fused";
    EXPECT_FALSE(nodes.count("/down/down.1/Relu")) << "a fused node is timed inside its group";

    Result plain = run("bench " + model + " --repeat 1 --warmup 0 --no-fuse --json " + (dir / "p.json").string());
    ASSERT_EQ(plain.status, 0) << lastStderr();
    const nlohmann::json p = readJson(dir / "p.json");
    EXPECT_FALSE(p.at("fuse").get<bool>());
    EXPECT_EQ(p.at("shared_tensors"), 0) << "without fusion every tensor has a buffer of its own";
    EXPECT_EQ(p.at("shared_buffer_bytes"), 0);
    EXPECT_EQ(p.at("ops").size(), f.at("ops").size() + 1) << "the relu runs on its own";
}

TEST(FusionCli, TheTransformersLinearLayersTakeTheirBiasAndExportedGelu)
{
    const fs::path dir = tempDir("fusion_gelu");
    Result r = run("bench " + samplesOnnx("transformer.onnx") + " --repeat 1 --warmup 0 --json " + (dir / "f.json").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    auto groups = fusedGroups(readJson(dir / "f.json"));
    using V = std::vector<std::string>;
    for (const std::string layer : { "/encoder/layers.0", "/encoder/layers.1" }) {
        EXPECT_EQ(groups[layer + "/linear1/MatMul"],
            (V { layer + "/linear1/Add", layer + "/Div", layer + "/Erf", layer + "/Add_1", layer + "/Mul", layer + "/Mul_1" }));
        EXPECT_FALSE(groups.count(layer + "/Erf")) << "a fused node is timed inside its group";
    }
    EXPECT_NE(r.out.find("MatMul+Add+Div+Erf+Add+Mul+Mul"), std::string::npos) << r.out;
}

TEST(FusionCli, BatchNormalizationAndActivationsFoldIntoTheirConvolutions)
{
    const fs::path dir = tempDir("fusion_bn");
    Result r = run("bench " + fixture("onnx/conv_bn_chain.onnx") + " --repeat 1 --warmup 0 --json " + (dir / "f.json").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    const nlohmann::json f = readJson(dir / "f.json");
    auto groups = fusedGroups(f);
    if (groups.size() == 9) GTEST_SKIP() << "no convolution ran on oneDNN here: nothing fused";
    using V = std::vector<std::string>;
    EXPECT_EQ(groups.size(), 3u) << f.dump();
    EXPECT_EQ(groups["conv1"], (V { "bn1", "sig1" }));
    EXPECT_EQ(groups["conv2"], (V { "bn2", "add2", "relu2" }));
    EXPECT_EQ(groups["conv3"], (V { "tanh3" }));
    // sig1 feeds conv2 and its fused add, relu2 feeds conv3: both stay in oneDNN's layout; conv3's
    // tanh3 is the model's output.
    std::map<std::string, bool> native;
    for (const auto& op : f.at("ops"))
        native[op.at("node")] = op.at("native_output").get<bool>();
    EXPECT_EQ(f.at("native_tensors"), 2) << f.dump();
    EXPECT_TRUE(native["conv1"] && native["conv2"]);
    EXPECT_FALSE(native["conv3"]);
    EXPECT_NE(r.out.find("2 tensors stay in oneDNN's blocked layout"), std::string::npos) << r.out;
}

// ONNX's Clip with its bounds as inputs (both, the lower only, the upper only), as exporters write
// ReLU6: each fused into its convolution and applied after the store, so that NaN and infinities
// in the input come out exactly as unfused.
TEST(FusionCli, ClipWithBoundsAsInputsFoldsIntoItsConvolutionKeepingNaN)
{
    const fs::path dir = tempDir("fusion_clip");
    const std::string model = fixture("onnx/conv_clip_chain.onnx");
    Result r = run("bench " + model + " --repeat 1 --warmup 0 --json " + (dir / "f.json").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    const nlohmann::json f = readJson(dir / "f.json");
    auto groups = fusedGroups(f);
    if (groups.size() == 6) GTEST_SKIP() << "no convolution ran on oneDNN here: nothing fused";
    using V = std::vector<std::string>;
    EXPECT_EQ(groups.size(), 3u) << f.dump();
    EXPECT_EQ(groups["conv1"], (V { "clip1" }));
    EXPECT_EQ(groups["dwconv2"], (V { "clip2" }));
    EXPECT_EQ(groups["conv3"], (V { "clip3" }));

    Tensor x = Tensor::uniform(Shape({ 1, 8, 12, 12 }), -20, 20); // large: every clip bites
    x.at(5) = std::numeric_limits<float>::quiet_NaN();
    x.at(300) = std::numeric_limits<float>::infinity();
    x.at(900) = -std::numeric_limits<float>::infinity();
    writeNpy((dir / "x.npy").string(), x.view());
    const std::string args = "run " + model + " --mode static_shape --input x=" + (dir / "x.npy").string() + " --output ";
    ASSERT_EQ(run(args + (dir / "fused.npy").string()).status, 0) << lastStderr();
    ASSERT_EQ(run(args + (dir / "plain.npy").string() + " --no-fuse").status, 0) << lastStderr();
    const Tensor fused = readNpy((dir / "fused.npy").string()), plain = readNpy((dir / "plain.npy").string());
    int nans = 0, bounds = 0;
    for (float v : plain.view().values()) {
        nans += std::isnan(v) ? 1 : 0;
        bounds += v == 6.0f ? 1 : 0;
    }
    EXPECT_GT(nans, 0) << "the NaN reached the output unfused";
    EXPECT_GT(bounds, 0) << "clip3 bounded some values";
    EXPECT_TRUE(tensorsNear(fused, plain, 1e-6f, 1e-5f));
}
