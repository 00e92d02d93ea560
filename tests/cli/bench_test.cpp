// opscope-cli bench: every op of the model timed once per pass, figures in the table, the JSON and
// the trace agree with each other and with the graph; watching is timed apart; ONNX models and
// threads; refusals with their exit statuses. Behaviour only: no test depends on a timing.

#include "cli/cli_run.h"
#include "models/registry.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>

using namespace opscope;
using namespace opscope::test;
namespace fs = std::filesystem;

namespace {
nlohmann::json readJson(const fs::path& p)
{
    std::ifstream in(p);
    return nlohmann::json::parse(in);
}

// The op nodes of a built-in sample's graph, by name.
std::map<std::string, std::string> sampleOps(const std::string& name)
{
    samples::Sample s = samples::makeSample(name);
    s.block->hybridize();
    s.block->call(s.defaultInputs);
    std::map<std::string, std::string> ops;
    for (const Node& n : s.block->graph()->nodes())
        if (!n.isVariable()) ops[n.name] = n.opName();
    return ops;
}

struct Slice {
    std::string name, cat;
    double ts, dur;
    nlohmann::json args;
};

std::vector<Slice> slices(const nlohmann::json& trace)
{
    std::vector<Slice> out;
    for (const auto& e : trace.at("traceEvents"))
        if (e.at("ph") == "X")
            out.push_back({ e.at("name"), e.at("cat"), e.at("ts"), e.at("dur"), e.value("args", nlohmann::json::object()) });
    return out;
}
}

TEST(Bench, TimesEveryOpOfLenetOncePerPassSlowestFirst)
{
    const fs::path dir = tempDir("bench_lenet");
    // Unfused, so that every node is an op of its own (fused, each tanh runs inside its convolution).
    Result r = run("bench sample:lenet --no-fuse --repeat 5 --warmup 2 --json " + (dir / "f.json").string()
        + " --trace " + (dir / "t.json").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    EXPECT_NE(r.out.find("pass: median"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("first call:"), std::string::npos) << r.out;

    const nlohmann::json f = readJson(dir / "f.json");
    EXPECT_EQ(f.at("mode"), "static_shape");
    EXPECT_EQ(f.at("repeat"), 5);
    EXPECT_EQ(f.at("warmup"), 2);
    EXPECT_FALSE(f.at("hooked").get<bool>());
    ASSERT_EQ(f.at("passes_ms").size(), 5u);
    const double median = f.at("median_ms"), lo = f.at("min_ms"), hi = f.at("max_ms");
    EXPECT_LE(lo, median);
    EXPECT_LE(median, hi);
    for (double p : f.at("passes_ms"))
        EXPECT_TRUE(p >= lo && p <= hi);
    // The op figures come from passes with every op timed, run after each of those.
    const double profiled = f.at("profiled_median_ms");
    EXPECT_GT(profiled, 0);

    const auto expected = sampleOps("lenet");
    std::map<std::string, std::string> seen;
    double previous = 1e300;
    for (const auto& op : f.at("ops")) {
        const std::string node = op.at("node");
        EXPECT_TRUE(seen.emplace(node, op.at("op")).second) << node << " listed twice";
        const double self = op.at("self_ms");
        EXPECT_LE(self, previous) << "ops are sorted slowest first";
        previous = self;
        EXPECT_LE(op.at("min_ms").get<double>(), self);
        EXPECT_GE(op.at("max_ms").get<double>(), self);
        EXPECT_NEAR(op.at("share").get<double>(), self / profiled, 1e-9);
        // Products have their FLOPs (and GFLOP/s), other ops none.
        const std::string kind = op.at("op");
        const bool products = kind == "Convolution" || kind == "FullyConnected";
        EXPECT_EQ(!op.at("flops").is_null(), products) << node;
        if (products) {
            EXPECT_GT(op.at("flops").get<int64_t>(), 0);
            EXPECT_NEAR(op.at("gflops").get<double>(), op.at("flops").get<double>() / (self * 1e6),
                1e-6 * op.at("gflops").get<double>());
        }
        EXPECT_NE(r.out.find(node), std::string::npos) << "the table names " << node;
    }
    EXPECT_EQ(seen, expected);

    // The trace: one slice per op per run (first call, warm-ups, passes), each inside its pass's
    // slice, one after the other; no observer slices when nothing watches.
    const std::vector<Slice> all = slices(readJson(dir / "t.json"));
    std::vector<Slice> passes;
    std::map<std::string, std::vector<Slice>> opsByPass;
    for (const Slice& s : all) {
        if (s.cat == "pass") passes.push_back(s);
        if (s.cat == "op") opsByPass[s.args.at("pass")].push_back(s);
        EXPECT_NE(s.cat, "observer");
    }
    ASSERT_EQ(passes.size(), 1u + 2u + 5u);
    EXPECT_EQ(passes.front().name, "first call");
    EXPECT_EQ(passes.back().name, "pass 5");
    for (const Slice& p : passes) {
        const auto& ops = opsByPass[p.name];
        ASSERT_EQ(ops.size(), expected.size()) << p.name;
        double end = p.ts;
        for (const Slice& o : ops) {
            EXPECT_GE(o.ts + 1e-3, end) << o.name << " in " << p.name;
            end = o.ts + o.dur;
            EXPECT_EQ(o.args.at("first_call").get<bool>(), p.name == "first call") << o.name;
        }
        EXPECT_LE(end, p.ts + p.dur + 1e-3) << p.name;
    }
}

TEST(Bench, AHookOnEveryOpIsTimedApartFromTheKernels)
{
    const fs::path dir = tempDir("bench_hook");
    Result r = run("bench sample:mlp --hook --repeat 3 --warmup 0 --mode hybrid --json " + (dir / "f.json").string()
        + " --trace " + (dir / "t.json").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    const nlohmann::json f = readJson(dir / "f.json");
    EXPECT_TRUE(f.at("hooked").get<bool>());
    EXPECT_EQ(f.at("mode"), "hybrid");
    const std::vector<Slice> all = slices(readJson(dir / "t.json"));
    std::map<std::string, int> opSlices, observerSlices;
    for (const Slice& s : all) {
        if (s.cat == "op") ++opSlices[s.name];
        if (s.cat == "observer") ++observerSlices[s.name];
    }
    ASSERT_FALSE(opSlices.empty());
    for (const auto& [node, n] : opSlices) {
        EXPECT_EQ(n, 4) << node; // first call and 3 passes
        // An op hook reports outputs (no monitor_all): one slice after each op.
        EXPECT_EQ(observerSlices[node + " (observers after)"], 4) << node;
        EXPECT_EQ(observerSlices.count(node + " (observers before)"), 0u) << node;
    }
    for (const auto& op : f.at("ops"))
        EXPECT_GT(op.at("observers_ms").get<double>(), 0) << op.at("node");
}

TEST(Bench, RunsAnOnnxModelWithTheThreadsAsked)
{
    const fs::path dir = tempDir("bench_onnx");
    Result r = run("bench sample:onnx-cnn --threads 2 --repeat 2 --warmup 1 --kernels reference --json "
        + (dir / "f.json").string());
    ASSERT_EQ(r.status, 0) << lastStderr();
    const nlohmann::json f = readJson(dir / "f.json");
    EXPECT_EQ(f.at("threads"), 2);
    EXPECT_EQ(f.at("kernels"), "reference");
    std::set<std::string> ops;
    for (const auto& op : f.at("ops")) {
        ops.insert(op.at("op").get<std::string>());
        if (op.at("op") == "Conv" || op.at("op") == "Gemm" || op.at("op") == "MatMul") {
            EXPECT_GT(op.at("flops").get<int64_t>(), 0) << op.at("node");
        }
        EXPECT_EQ(op.at("backend"), "reference") << op.at("node");
    }
    EXPECT_TRUE(ops.count("Conv")) << r.out;
}

TEST(Bench, RefusesWhatItCannotTimeWithItsStatus)
{
    EXPECT_EQ(run("bench /nonexistent/model-symbol.json").status, 3);
    EXPECT_NE(lastStderr().find("/nonexistent/model-symbol.json"), std::string::npos) << lastStderr();
    EXPECT_EQ(run("bench sample:mlp --mode eager").status, 2);
    EXPECT_EQ(run("bench sample:mlp --repeat 0").status, 2);
    EXPECT_EQ(run("bench sample:mlp --input data=1x3").status, 4) << lastStderr();
    EXPECT_EQ(run("bench sample:mlp --json /nonexistent/dir/f.json").status, 2);
    EXPECT_NE(lastStderr().find("/nonexistent/dir/f.json"), std::string::npos) << lastStderr();
}
