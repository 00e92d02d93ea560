// opscope-cli through the real executable: exit statuses, the JSONL of --hooks, and .npy files
// that NumPy itself reads.

#include "cli/cli_run.h"
#include "common/test_paths.h"
#include "io/npy.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace opscope;
using namespace opscope::test;
namespace fs = std::filesystem;

TEST(Cli, ListsTheSamples)
{
    Result r = run("list");
    EXPECT_EQ(r.status, 0);
    for (const char* s : { "sample:mlp", "sample:lenet", "sample:fashion", "sample:mini-resnet", "sample:tiny-transformer",
             "sample:nan-demo", "sample:onnx-cnn", "sample:onnx-transformer" })
        EXPECT_NE(r.out.find(s), std::string::npos) << s;
    // Where each sample's weights come from: a third column.
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
        const bool trained = line.rfind("sample:lenet\t", 0) == 0 || line.rfind("sample:fashion\t", 0) == 0;
        const bool onnx = line.rfind("sample:onnx-", 0) == 0;
        EXPECT_NE(line.find(trained ? "\ttrained weights ("
                      : onnx      ? "\tthe file's weights ("
                                  : "\trandom weights (from the seed)"),
            std::string::npos)
            << line;
    }
}

TEST(Cli, InfoOfAnMxnetFile)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    Result r = run("info " + test::shared("models/mnist-symbol.json") + " --input data=1x1x28x28");
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("Convolution 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("hybridsequential9_dense1_tanh_fwd_output (1, 10)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("parameters: 8"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("hybridsequential9_conv1_fwd Convolution (1, 25, 8, 8)"), std::string::npos) << r.out;
}

TEST(Cli, HooksJsonlHasEveryFieldInCallOrder)
{
    const fs::path dir = tempDir("hooks");
    const std::string hooks = (dir / "hooks.jsonl").string();
    Result r = run("run sample:nan-demo --monitor-all --hooks " + hooks + " --dump " + (dir / "dump").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    std::ifstream in(hooks);
    std::string line;
    int seq = 0;
    bool sawNan = false;
    while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line);
        for (const char* k : { "seq", "name", "op", "node", "slot", "phase", "shape", "min", "max", "mean", "std",
                 "nan", "inf", "zeros" })
            EXPECT_TRUE(j.contains(k)) << k << " missing in " << line;
        EXPECT_EQ(j["seq"].get<int>(), seq++);
        EXPECT_EQ(j["name"].get<std::string>(), j["node"].get<std::string>() + "_" + j["slot"].get<std::string>());
        EXPECT_TRUE(j["phase"] == "input" || j["phase"] == "output");
        if (j["name"] == "nandemo0_log0_0") {
            EXPECT_GT(j["nan"].get<int>(), 0);
            sawNan = true;
        }
        // --dump wrote the same tensor.
        Tensor t = readNpy((dir / "dump" / (j["name"].get<std::string>() + ".npy")).string());
        EXPECT_EQ(static_cast<int>(j["shape"].size()), t.ndim());
    }
    EXPECT_TRUE(sawNan);
    EXPECT_EQ(seq, 16); // 5 ops: FC, relu, FC, log, FC: 3 + 1 + 3 + 1 + 3 inputs and one output each
}

TEST(Cli, OutputsAreNpyFilesNumPyReads)
{
    const fs::path dir = tempDir("outputs");
    Result r = run("run sample:lenet --mode static_shape --output " + (dir / "first.npy").string() + " --outputs "
        + (dir / "all").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    const std::string py = "/usr/bin/python3 -c \"import numpy as np; a = np.load('" + (dir / "first.npy").string()
        + "'); b = np.load('" + (dir / "all" / "output0.npy").string()
        + "'); assert a.shape == (1, 10) and a.dtype == np.float32 and (a == b).all(); print('ok')\"";
    FILE* p = popen(py.c_str(), "r");
    char buf[64] = {};
    const size_t n = fread(buf, 1, sizeof buf - 1, p);
    pclose(p);
    EXPECT_EQ(std::string(buf, n), "ok\n");
}

TEST(Cli, InputsFromNpyAndGeneratedShapes)
{
    const fs::path dir = tempDir("inputs");
    writeNpy((dir / "x.npy").string(), Tensor::full(Shape({ 3, 2 }), 0.25f).view());
    Result a = run("run sample:mlp --input data=" + (dir / "x.npy").string() + " --output " + (dir / "a.npy").string());
    ASSERT_EQ(a.status, 0) << lastStderr();
    EXPECT_EQ(readNpy((dir / "a.npy").string()).shape(), Shape({ 3, 3 }));
    Result b = run("run sample:mlp --input data=5x2:normal --seed 3 --output " + (dir / "b.npy").string());
    ASSERT_EQ(b.status, 0) << lastStderr();
    EXPECT_EQ(readNpy((dir / "b.npy").string()).shape(), Shape({ 5, 3 }));
}

// NumPy writes float64 by default: a file of another type than the model's input is converted to
// it, and the run says so; the result equals the float32 file's.
TEST(Cli, AnNpyInputOfAnotherTypeIsConvertedWithANote)
{
    const fs::path dir = tempDir("input_types");
    const Tensor x = Tensor::fromValues(Shape({ 3, 2 }), std::vector<float> { 0.5f, -1, 2, 0.25f, 3, -0.75f });
    writeNpy((dir / "f32.npy").string(), x.view());
    writeNpy((dir / "f64.npy").string(), x.astype(DType::Float64).view());
    ASSERT_EQ(run("run sample:mlp --input data=" + (dir / "f32.npy").string() + " --output " + (dir / "a.npy").string())
                  .status,
        0)
        << lastStderr();
    Result r = run("run sample:mlp --input data=" + (dir / "f64.npy").string() + " --output " + (dir / "b.npy").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(lastStderr().find("holds float64; converted to float32"), std::string::npos) << lastStderr();
    const Tensor a = readNpy((dir / "a.npy").string()), b = readNpy((dir / "b.npy").string());
    EXPECT_EQ(b.dtype(), DType::Float32);
    EXPECT_EQ(a.toVector(), b.toVector());
}

TEST(Cli, ExitStatuses)
{
    EXPECT_EQ(run("").status, 2);
    EXPECT_EQ(run("run").status, 2);
    EXPECT_EQ(run("run sample:mlp --mode turbo").status, 2);
    EXPECT_EQ(run("run sample:mlp --input data=2xx3").status, 2);
    EXPECT_EQ(run("run sample:mlp --input nosuch=2x3").status, 2);

    EXPECT_EQ(run("run sample:no-such-sample").status, 3);
    EXPECT_NE(lastStderr().find("mini-resnet"), std::string::npos);
    EXPECT_EQ(run("run /nonexistent/model-symbol.json").status, 3);
    EXPECT_NE(lastStderr().find("/nonexistent/model-symbol.json"), std::string::npos);
    const fs::path dir = tempDir("status");
    {
        std::ofstream bad(dir / "bad.npy", std::ios::binary);
        bad << "not numpy";
    }
    EXPECT_EQ(run("run sample:mlp --input data=" + (dir / "bad.npy").string()).status, 3);
    EXPECT_NE(lastStderr().find("bad.npy"), std::string::npos) << lastStderr();
}

TEST(Cli, AWrongInputShapeFailsTheRunNamingTheNode)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    const fs::path dir = tempDir("status-shape");
    // A shape the model cannot take fails the run and names the node and both shapes.
    writeNpy((dir / "wrong.npy").string(), Tensor::ones(Shape({ 2, 3 })).view());
    Result r = run(test::shared("models/mnist-symbol.json") + " --input data=" + (dir / "wrong.npy").string());
    EXPECT_EQ(r.status, 2); // "run" missing: usage
    r = run("run " + test::shared("models/mnist-symbol.json") + " --input data=" + (dir / "wrong.npy").string());
    EXPECT_EQ(r.status, 4) << lastStderr();
    EXPECT_NE(lastStderr().find("hybridsequential9_conv0_fwd"), std::string::npos) << lastStderr();
}

TEST(Cli, BreakOnNanStopsAtTheFirstNodeThatMakesNan)
{
    const fs::path dir = tempDir("break");
    Result r = run("run sample:nan-demo --break-on nan --dump " + dir.string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("paused at node nandemo0_log0 (log), after"), std::string::npos) << r.out;
    EXPECT_EQ(readNpy((dir / "nandemo0_log0_0.npy").string()).shape(), Shape({ 2, 4 }));
    EXPECT_TRUE(fs::exists(dir / "nandemo0_log0_input0.npy"));
}

TEST(Cli, BreakOnANodeBeforeItRuns)
{
    Result r = run("run sample:lenet --break hybridsequential0_pool0_fwd:before");
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("paused at node hybridsequential0_pool0_fwd (Pooling), before"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("hybridsequential0_pool0_fwd_data (1, 10, 24, 24)"), std::string::npos) << r.out;
    // No hit: the run ends as without a breakpoint, says so, and exits 1 (scripts ask "was there a NaN").
    Result none = run("run sample:lenet --break-on \"max>1e9\"");
    EXPECT_EQ(none.status, 1);
    EXPECT_EQ(none.out.find("paused"), std::string::npos);
    EXPECT_NE(none.out.find("output0 (1, 10)"), std::string::npos) << none.out;
    EXPECT_NE(none.out.find("no breakpoint hit"), std::string::npos) << none.out;
    EXPECT_EQ(run("run sample:lenet --break-on bogus").status, 2);
}

TEST(Cli, TrainsASampleAndSavesMxnetFiles)
{
    const fs::path dir = tempDir("train");
    const std::string prefix = (dir / "mlp").string();
    Result r = run("train sample:mlp --epochs 3 --batch 16 --lr 0.01 --seed 2 --save " + prefix);
    ASSERT_EQ(r.status, 0) << lastStderr();
    for (const char* line : { "epoch 1: loss ", "epoch 2: loss ", "epoch 3: loss ", "test accuracy", "saved " })
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
    EXPECT_EQ(r.out.find("epoch 4"), std::string::npos);
    ASSERT_TRUE(fs::exists(prefix + "-symbol.json"));
    ASSERT_TRUE(fs::exists(prefix + "-0000.params"));
    // The saved files run as a model of their own.
    Result again = run("run " + prefix + "-symbol.json --input data=4x2");
    EXPECT_EQ(again.status, 0) << lastStderr();
    // Samples without data, and bad numbers, are usage errors.
    EXPECT_EQ(run("train sample:nan-demo").status, 2);
    EXPECT_NE(lastStderr().find("no training data"), std::string::npos) << lastStderr();
    EXPECT_EQ(run("train sample:mlp --epochs 0").status, 2);
    EXPECT_EQ(run("train model-symbol.json").status, 2);
}

TEST(Cli, TrainStopsAtABreakpointInTheBackwardPass)
{
    const fs::path dir = tempDir("train-break");
    Result r = run("train sample:mlp --epochs 1 --batch 16 --break hybridsequential0_dense1_fwd_backward:after --dump "
        + (dir / "dump").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    for (const char* line : { "epoch 1, mini-batch 0 (training step 1)", "update not applied",
             "paused at node hybridsequential0_dense1_fwd_backward (_backward_FullyConnected), after",
             "block: backward/hybridsequential0/hybridsequential0_dense1",
             "output hybridsequential0_dense1_fwd_backward_weight_grad" })
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
    EXPECT_EQ(r.out.find("epoch 1: loss"), std::string::npos) << "the epoch should not finish\n" << r.out;
    const Tensor g = readNpy((dir / "dump" / "hybridsequential0_dense1_fwd_backward_weight_grad.npy").string());
    EXPECT_EQ(g.ndim(), 2);
    EXPECT_EQ(g.shape()[0], 32); // dense1 has 32 units in mlp

    // A gradient watchpoint that never hits lets the training finish.
    Result quiet = run("train sample:mlp --epochs 1 --batch 64 --break-on \"grad naninf\"");
    ASSERT_EQ(quiet.status, 1) << lastStderr();
    EXPECT_NE(quiet.out.find("epoch 1: loss"), std::string::npos) << quiet.out;
    EXPECT_NE(quiet.out.find("no breakpoint hit"), std::string::npos) << quiet.out;
    // "grad norm>T" stops at the first gradient above T.
    Result norm = run("train sample:mlp --epochs 1 --break-on \"grad norm>1\"");
    ASSERT_EQ(norm.status, 0) << lastStderr();
    EXPECT_NE(norm.out.find("watch outputs if grad norm>1"), std::string::npos) << norm.out;
    EXPECT_NE(norm.out.find("_backward ("), std::string::npos) << norm.out;

    // A breakpoint on the very first op of the first step is a hit, not the step's entry.
    Result first = run("train sample:mlp --epochs 1 --break hybridsequential0_dense0_fwd");
    ASSERT_EQ(first.status, 0) << lastStderr();
    EXPECT_NE(first.out.find("training step 1)"), std::string::npos) << first.out;
    EXPECT_NE(first.out.find("reason: breakpoint"), std::string::npos) << first.out;

    EXPECT_EQ(run("train sample:mlp --break nosuch_backward").status, 2);
    EXPECT_NE(lastStderr().find("nosuch_backward"), std::string::npos) << lastStderr();
    EXPECT_EQ(run("train sample:mlp --break-on \"grad bogus\"").status, 2);
}

TEST(Cli, InfoWithoutAParamsFileAndWithOne)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/mnist-0035.params");
    // With the .params beside it: every parameter's shape and size, and an input shape suggested
    // by the first layer's weights when none is given.
    Result r = run("info " + test::shared("models/mnist-symbol.json"));
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("parameters: 8 (14765 values, 59060 bytes)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("hybridsequential9_conv0_weight (10, 1, 5, 5)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("suggests (N, 1, H, W), e.g. --input data=1x1x28x28"), std::string::npos) << r.out;
    // Without one: the structure, and the shapes the file itself records.
    const fs::path dir = tempDir("info-bare");
    fs::copy_file(test::shared("models/mnist-symbol.json"), dir / "mnist-symbol.json");
    r = run("info " + (dir / "mnist-symbol.json").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("params: none found"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Convolution 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("parameters: 8"), std::string::npos) << r.out;
    // And a .npy input gives the shapes.
    writeNpy((dir / "digit.npy").string(), Tensor::ones(Shape({ 1, 1, 28, 28 })).view());
    r = run("info " + (dir / "mnist-symbol.json").string() + " --input data=" + (dir / "digit.npy").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("hybridsequential9_conv1_fwd Convolution (1, 25, 8, 8)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("hybridsequential9_dense0_weight (20, 400)"), std::string::npos) << r.out;
}

TEST(Cli, ALossLabelIsZerosForInference)
{
    OPSCOPE_NEEDS_SHARED("models/legacy-mlp-symbol.json", "models/legacy-mlp-0001.params");
    Result r = run("run " + test::shared("models/legacy-mlp-symbol.json") + " --input data=2x784");
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("output0 (1568, 10)"), std::string::npos) << r.out;
    EXPECT_NE(lastStderr().find("'softmax_label' is only the label of SoftmaxOutput 'softmax'"), std::string::npos)
        << lastStderr();
    r = run("info " + test::shared("models/legacy-mlp-symbol.json"));
    EXPECT_NE(r.out.find("softmax_label (a loss's label"), std::string::npos) << r.out;
    // It may still be given.
    r = run("run " + test::shared("models/legacy-mlp-symbol.json") + " --input data=2x784 --input softmax_label=1568");
    EXPECT_EQ(r.status, 0) << lastStderr();
    EXPECT_EQ(lastStderr().find("softmax_label"), std::string::npos) << lastStderr();
}
