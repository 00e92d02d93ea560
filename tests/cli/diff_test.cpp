// opscope-cli diff: identical runs agree exactly, a perturbed parameter or input is found where it
// first acts, a NaN injected mid-graph is found, kernels compared, a dump folder as run B, exit
// statuses.

#include "cli/cli_run.h"
#include "common/test_paths.h"
#include "io/npy.h"
#include "gluon/export.h"
#include "io/params_file.h"
#include "models/registry.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

using namespace opscope;
using namespace opscope::test;
namespace fs = std::filesystem;

namespace {
// A sample exported as MXNet files, and a copy of its parameters with one array changed.
fs::path exportSample(const fs::path& dir, const std::string& sample, const std::string& param, float delta)
{
    samples::Sample s = samples::makeSample(sample);
    s.block->hybridize();
    s.block->call(s.defaultInputs);
    gluon::export_(*s.block, (dir / sample).string(), 0);
    NamedTensors arrays = loadParams((dir / (sample + "-0000.params")).string());
    bool found = false;
    for (auto& [name, t] : arrays)
        if (stripParamPrefix(name) == param) {
            Tensor c = t.copy();
            c.data()[0] += delta;
            t = c;
            found = true;
        }
    EXPECT_TRUE(found) << param;
    saveParams((dir / "changed.params").string(), arrays);
    return dir / (sample + "-symbol.json");
}
}

TEST(Diff, IdenticalRunsAgreeAndKernelsAreWithinTolerance)
{
    Result same = run("diff sample:mini-resnet");
    EXPECT_EQ(same.status, 0) << lastStderr();
    EXPECT_NE(lastLine(same.out).find("no divergence"), std::string::npos) << same.out;
    Result kernels = run("diff sample:lenet --kernels-b reference --rtol 1e-3 --atol 1e-4");
    EXPECT_EQ(kernels.status, 0) << kernels.out;
    // Eager against hybridized, and static_shape: the same names, the same values.
    for (const char* mode : { "eager", "static_shape" }) {
        Result m = run(std::string("diff sample:lenet --mode-b ") + mode);
        EXPECT_EQ(m.status, 0) << mode << "\n" << m.out;
        EXPECT_NE(lastLine(m.out).find("no divergence: 28 tensors"), std::string::npos) << m.out;
    }
    EXPECT_EQ(run("diff sample:lenet --mode-b eager --half-b all").status, 2) << "precision is emulated hybridized";
}

TEST(Diff, APerturbedParameterIsFoundAtTheLayerThatReadsIt)
{
    const fs::path dir = tempDir("diff_param");
    const fs::path symbol = exportSample(dir, "lenet", "hybridsequential0_conv1_weight", 0.5f);
    const fs::path json = dir / "diff.json";
    Result r = run("diff " + symbol.string() + " --input-a data=1x1x28x28:uniform --params-b "
        + (dir / "changed.params").string() + " --json " + json.string());
    EXPECT_EQ(r.status, 1) << r.out << lastStderr();
    EXPECT_EQ(lastLine(r.out), "first divergent node: hybridsequential0_conv1_fwd") << r.out;
    const auto j = nlohmann::json::parse(std::ifstream(json));
    EXPECT_EQ(j["first_divergent_node"], "hybridsequential0_conv1_fwd");
    // conv0 and what follows it up to conv1 agree exactly.
    for (const auto& t : j["tensors"])
        if (t["name"] == "hybridsequential0_pool0_fwd_output") {
            EXPECT_EQ(t["max_abs"], 0.0);
        }
}

TEST(Diff, APerturbedParameterIsFoundInTheMlpAndTheResidualNetwork)
{
    struct Case {
        const char* sample;
        const char* param;
        const char* input;
        const char* node;
    };
    for (const Case& c : { Case { "mlp", "hybridsequential0_dense1_weight", "data=4x2:uniform", "hybridsequential0_dense1_fwd" },
             Case { "mini-resnet", "hybridsequential0_residualunit1_conv0_weight", "data=1x3x8x8:uniform",
                 "hybridsequential0_residualunit1_conv0_fwd" },
             Case { "mini-resnet", "hybridsequential0_residualunit0_batchnorm1_running_mean", "data=1x3x8x8:uniform",
                 "hybridsequential0_residualunit0_batchnorm1_fwd" } }) {
        const fs::path dir = tempDir(std::string("diff_param_") + c.sample);
        const fs::path symbol = exportSample(dir, c.sample, c.param, 0.5f);
        Result r = run("diff " + symbol.string() + " --input-a " + c.input + " --params-b "
            + (dir / "changed.params").string());
        EXPECT_EQ(r.status, 1) << c.param << "\n" << r.out << lastStderr();
        EXPECT_EQ(lastLine(r.out), std::string("first divergent node: ") + c.node) << r.out;
    }
}

TEST(Diff, AChangedInputIsFoundAtTheFirstOpReadingIt)
{
    Result r = run("diff sample:mlp --input-a data=4x2:ones --input-b data=4x2:zeros");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(lastLine(r.out), "first divergent node: hybridsequential0_dense0_fwd") << r.out;
}

TEST(Diff, ANanInjectedIsFoundWhereItEntersAndSaidToBeOneSided)
{
    const fs::path dir = tempDir("diff_nan");
    Tensor a = Tensor::full(Shape({ 4, 2 }), 0.5f);
    Tensor b = a.copy();
    b.data()[3] = NAN;
    writeNpy((dir / "a.npy").string(), a.view());
    writeNpy((dir / "b.npy").string(), b.view());
    Result r = run("diff sample:mlp --input-a data=" + (dir / "a.npy").string() + " --input-b data="
        + (dir / "b.npy").string());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("NaN/Inf only in B"), std::string::npos) << r.out;
    EXPECT_EQ(lastLine(r.out), "first divergent node: hybridsequential0_dense0_fwd") << r.out;
}

TEST(Diff, AnOnnxModelAgainstItsDumpAndAgainstOtherKernels)
{
    const fs::path dir = tempDir("diff_dump");
    Result dump = run("run sample:onnx-cnn --monitor-all --dump " + (dir / "dump").string());
    ASSERT_EQ(dump.status, 0) << lastStderr();
    Result r = run("diff sample:onnx-cnn --dump-b " + (dir / "dump").string());
    EXPECT_EQ(r.status, 0) << r.out;
    Result k = run("diff sample:onnx-cnn --kernels-b reference --atol 1e-4");
    EXPECT_EQ(k.status, 0) << k.out;
    // Statuses as run's: a missing model 3, both MODEL_B and --dump-b 2.
    EXPECT_EQ(run("diff nowhere.onnx").status, 3);
    EXPECT_EQ(run("diff sample:mlp sample:mlp --dump-b " + dir.string()).status, 2);
}

TEST(Diff, Float16LenetOverflowsWhereItsFloat32ValuesPass65504)
{
    // By hand: lenet's first convolution of a constant image c is c times each filter's sum plus
    // its bias. float16 holds at most 65504 (and 65519.99 rounds to it): every element of A's conv0
    // output of magnitude 65520 or more is Inf in B, nowhere earlier.
    samples::Sample s = samples::makeSample("lenet");
    s.block->hybridize();
    Tensor conv0;
    auto handle = s.block->register_op_hook([&conv0](std::string_view name, std::string_view, const TensorView& t) {
        if (name == "hybridsequential0_conv0_fwd_output") conv0 = Tensor::copyOf(t);
    });
    const Shape shape = s.defaultInputs.at(0).shape();
    float c = 1;
    int64_t overflowing = 0;
    for (; c < 1e9f && overflowing == 0; c *= 2) {
        s.block->call({ Tensor::full(shape, c) });
        for (float v : conv0.values())
            overflowing += std::fabs(v) >= 65520.0f;
    }
    c /= 2;
    ASSERT_GT(overflowing, 0);
    ASSERT_LT(overflowing, conv0.size()) << "some elements stay in range";

    const fs::path dir = tempDir("diff_half");
    writeNpy((dir / "x.npy").string(), Tensor::full(shape, c).view());
    const fs::path json = dir / "diff.json";
    Result r = run("diff sample:lenet --input-a data=" + (dir / "x.npy").string()
        + " --half-b all --rtol 0.05 --atol 1 --json " + json.string());
    EXPECT_EQ(r.status, 1) << r.out << lastStderr();
    EXPECT_EQ(lastLine(r.out), "first divergent node: hybridsequential0_conv0_fwd") << r.out;
    const auto j = nlohmann::json::parse(std::ifstream(json));
    bool seen = false;
    for (const auto& t : j["tensors"])
        if (t["name"] == "hybridsequential0_conv0_fwd_output") {
            EXPECT_EQ(t["nan_only_b"], overflowing);
            EXPECT_EQ(t["nan_only_a"], 0);
            seen = true;
        }
    EXPECT_TRUE(seen);
    // bfloat16 has float's range: the same run in bfloat16 has no Inf anywhere.
    Result bf = run("diff sample:lenet --input-a data=" + (dir / "x.npy").string() + " --bf16-b all --json "
        + json.string());
    const auto k = nlohmann::json::parse(std::ifstream(json));
    for (const auto& t : k["tensors"])
        EXPECT_EQ(t["nan_only_b"], 0) << t["name"];
    // A rule naming nothing in the graph is a usage error.
    EXPECT_EQ(run("diff sample:lenet --half-b no_such_node").status, 2);
}
