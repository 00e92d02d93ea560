// PyTorch's exports through opscope-cli against PyTorch's own numbers
// (samples/onnx/make_onnx_samples.py writes the models and tests/fixtures/onnx/torch/): every
// output, and the outputs of chosen modules, found by the ONNX name scope of their nodes in the op
// hooks' record; the output again with nothing watched, fused. Also the CLI's answers to ONNX
// files that are wrong.

#include "cli/cli_run.h"
#include "common/test_paths.h"
#include "io/npy.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>

using namespace opscope;
using namespace opscope::test;
namespace fs = std::filesystem;

namespace {
// Largest |a - b| - (atol + rtol |b|) over the elements; shapes must match.
double excess(const Tensor& a, const Tensor& b, double rtol, double atol)
{
    EXPECT_EQ(a.shape(), b.shape());
    if (a.shape() != b.shape()) return INFINITY;
    const TensorView x = a.view(), y = b.view();
    double worst = -INFINITY;
    for (int64_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::fabs(x.valueAt(i) - y.valueAt(i)) - (atol + rtol * std::fabs(y.valueAt(i))));
    return worst;
}

void compareWithTorch(const std::string& name, const std::string& model, const fs::path& dir = fixture("onnx/torch"))
{
    const auto meta = nlohmann::json::parse(std::ifstream(dir / (name + ".json")));
    const fs::path work = tempDir("onnx_" + name);
    std::string args = "run " + model;
    for (const auto& in : meta["inputs"])
        args += " --input " + in["name"].get<std::string>() + "=" + (dir / in["file"].get<std::string>()).string();
    args += " --output " + (work / "out.npy").string() + " --hooks " + (work / "hooks.jsonl").string() + " --dump "
        + (work / "dump").string();
    Result r = run(args);
    ASSERT_EQ(r.status, 0) << lastStderr();
    // float32 through different summation orders (im2col, Eigen, the attention's matmuls).
    const Tensor torchOut = readNpy((dir / meta["output"].get<std::string>()).string());
    const Tensor watched = readNpy((work / "out.npy").string());
    EXPECT_LE(excess(watched, torchOut, 1e-3, 1e-4), 0) << name << " output";
    // Nothing watched, under static_shape: fused, and tensors between convolutions in oneDNN's
    // layout. The same numbers as with every op watched, and so as PyTorch's.
    std::string fused = "run " + model + " --mode static_shape --output " + (work / "fused.npy").string();
    for (const auto& in : meta["inputs"])
        fused += " --input " + in["name"].get<std::string>() + "=" + (dir / in["file"].get<std::string>()).string();
    r = run(fused);
    ASSERT_EQ(r.status, 0) << lastStderr();
    const Tensor fusedOut = readNpy((work / "fused.npy").string());
    EXPECT_LE(excess(fusedOut, watched, 1e-5, 1e-5), 0) << name << " fused against watched";
    EXPECT_LE(excess(fusedOut, torchOut, 1e-3, 1e-4), 0) << name << " fused output";
    // Each module's output: the last node output (in call order) under its name scope.
    std::vector<nlohmann::json> records;
    std::ifstream hooks(work / "hooks.jsonl");
    for (std::string line; std::getline(hooks, line);)
        records.push_back(nlohmann::json::parse(line));
    for (const auto& inter : meta["intermediates"]) {
        const std::string scope = inter["scope"];
        std::string last;
        for (const auto& j : records)
            if (j["phase"] == "output" && j["node"].get<std::string>().rfind(scope, 0) == 0) last = j["file"];
        ASSERT_FALSE(last.empty()) << "no node under " << scope;
        const Tensor got = readNpy((work / "dump" / last).string());
        const Tensor want = readNpy((dir / inter["file"].get<std::string>()).string());
        EXPECT_LE(excess(got, want, 1e-3, 1e-4), 0) << name << " " << scope << " (" << last << ")";
    }
}
}

TEST(OnnxModels, CnnWithBatchNormalizationMatchesPyTorch)
{
    compareWithTorch("cnn", samplesOnnx("cnn.onnx"));
}

TEST(OnnxModels, TransformerEncoderWithPaddingMaskMatchesPyTorch)
{
    compareWithTorch("transformer", samplesOnnx("transformer.onnx"));
}

TEST(OnnxModels, BidirectionalLstmClassifierMatchesPyTorch)
{
    compareWithTorch("lstm_classifier", fixture("onnx/torch/lstm_classifier.onnx"));
}

TEST(OnnxModels, EncoderDecoderWithConvTransposeAndResizeMatchesPyTorch)
{
    compareWithTorch("encoder_decoder", fixture("onnx/torch/encoder_decoder.onnx"));
}

TEST(OnnxModels, DepthwiseBlockWithHardSwishAndSqueezeExcitationMatchesPyTorch)
{
    compareWithTorch("mobile_block", fixture("onnx/torch/mobile_block.onnx"));
}

// torchvision's resnet18 and squeezenet1_1 (weights=None, seed 0) are 5-45 MB: exported here when
// PyTorch is on the machine (Debian's python3-torch, python3-torchvision and python3-onnx), else
// skipped.
TEST(OnnxModels, TorchvisionResnet18AndSqueezenetMatchPyTorch)
{
    // `import onnx` alone may find a bare namespace folder: ask for what the export script uses.
    if (std::system("/usr/bin/python3 -c 'import torch, torchvision; from onnx import load' >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "python3-torch, python3-torchvision and python3-onnx are not all installed: resnet18 and "
                        "squeezenet1_1 are exported by tests/fixtures/onnx/torch/make_torch_models.py --large";
    const fs::path out = tempDir("torchvision");
    const std::string cmd = "/usr/bin/python3 " + fixture("onnx/torch/make_torch_models.py") + " --large --out "
        + out.string() + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    compareWithTorch("resnet18", (out / "resnet18.onnx").string(), out);
    compareWithTorch("squeezenet1_1", (out / "squeezenet1_1.onnx").string(), out);
}

TEST(OnnxModels, HooksNameOnnxNodesOutputs)
{
    const fs::path work = tempDir("onnx_hooks");
    Result r = run("run sample:onnx-cnn --hooks " + (work / "hooks.jsonl").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    std::ifstream in(work / "hooks.jsonl");
    std::string first;
    std::getline(in, first);
    const auto j = nlohmann::json::parse(first);
    EXPECT_EQ(j["node"], "/stage1/stage1.0/Conv");
    EXPECT_EQ(j["op"], "Conv");
    EXPECT_EQ(j["name"], "/stage1/stage1.0/Conv_output0");
}

TEST(OnnxModels, BadOnnxFilesExitThreeNamingTheFile)
{
    for (const char* file : { "truncated.onnx", "checker_fails.onnx", "opset18.onnx", "external_missing.onnx",
             "unsupported_ops.onnx" }) {
        SCOPED_TRACE(file);
        Result r = run("run " + fixture(std::string("onnx/") + file));
        EXPECT_EQ(r.status, 3);
        EXPECT_NE(lastStderr().find(file), std::string::npos) << lastStderr();
        Result i = run("info " + fixture(std::string("onnx/") + file));
        EXPECT_EQ(i.status, 3);
    }
}

TEST(OnnxModels, SymbolicDimensionsAreAskedForAndInputsChecked)
{
    const std::string model = fixture("onnx/shape_only.onnx"); // input x: (batch, 3, 4)
    Result none = run("run " + model);
    EXPECT_EQ(none.status, 2);
    EXPECT_NE(lastStderr().find("symbolic dimensions (batch, 3, 4)"), std::string::npos) << lastStderr();
    const fs::path work = tempDir("onnx_symbolic");
    Result ok = run("run " + model + " --input x=5x3x4 --outputs " + (work / "out").string());
    ASSERT_EQ(ok.status, 0) << lastStderr();
    const Tensor s = readNpy((work / "out" / "output0.npy").string());
    EXPECT_EQ(s.dtype(), DType::Int64);
    EXPECT_EQ(std::vector<int64_t>(s.dataAs<int64_t>(), s.dataAs<int64_t>() + 3), (std::vector<int64_t> { 5, 3, 4 }));
    Result wrong = run("run " + model + " --input x=5x2x4");
    EXPECT_EQ(wrong.status, 3);
    EXPECT_NE(lastStderr().find("the model declares (batch, 3, 4), given (5, 2, 4)"), std::string::npos) << lastStderr();
    Result info = run("info " + model);
    EXPECT_EQ(info.status, 0) << lastStderr();
    EXPECT_NE(info.out.find("taken as 1"), std::string::npos) << info.out;
}

// A .npy of fractions for an input of integers or truths is refused (exit 3), never truncated; a
// float64 file for a float32 input is converted, with a note.
TEST(OnnxModels, AnInputFileOfAnotherKindOfNumberIsRefused)
{
    const fs::path work = tempDir("onnx_input_types");
    writeNpy((work / "mask.npy").string(), Tensor::zeros(Shape({ 1, 8 })).view());
    Result r = run("run sample:onnx-transformer --input padding_mask=" + (work / "mask.npy").string());
    EXPECT_EQ(r.status, 3);
    EXPECT_NE(lastStderr().find("input 'padding_mask' takes bool, the file holds float32"), std::string::npos)
        << lastStderr();
    writeNpy((work / "tokens.npy").string(), Tensor::zeros(Shape({ 1, 8, 32 }), DType::Float64).view());
    r = run("run sample:onnx-transformer --input tokens=" + (work / "tokens.npy").string());
    EXPECT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(lastStderr().find("holds float64; converted to float32"), std::string::npos) << lastStderr();
}

// A generated zeros or ones fill is exact in any type: a bool mask can be given as a shape; a
// generated fill of fractions for it is refused naming what to give instead (exit 2).
TEST(OnnxModels, AGeneratedZerosOrOnesFillsAnInputOfAnyType)
{
    Result zeros = run("run sample:onnx-transformer --input padding_mask=1x8:zeros");
    EXPECT_EQ(zeros.status, 0) << lastStderr();
    Result uniform = run("run sample:onnx-transformer --input padding_mask=1x8:uniform");
    EXPECT_EQ(uniform.status, 2);
    EXPECT_NE(lastStderr().find("a generated uniform fill makes fractions; give :zeros or :ones"), std::string::npos)
        << lastStderr();
}
