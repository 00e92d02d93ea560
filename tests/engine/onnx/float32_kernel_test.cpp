// Float32Kernel: an ONNX op's float32 case on one of the engine's kernels, every other type on the
// op's own loop, chosen at each call; post-ops and layout questions go where float32 runs.

#include "core/error.h"
#include "ops/onnx/float32_kernel.h"
#include "tensor/tensor.h"

#include <gtest/gtest.h>

using namespace opscope;

namespace {
// Counts its runs, takes post-ops when told to, and answers layout questions with its name.
class Probe final : public Kernel {
public:
    Probe(const char* name, bool takesPostOps, int& runs)
        : m_name(name)
        , m_takes(takesPostOps)
        , m_runs(runs)
    {
    }
    void run(std::span<const Tensor* const>, std::span<Tensor* const>, RunContext&) override { ++m_runs; }
    const char* backend() const override { return m_name; }
    bool setPostOps(std::span<const PostOp> ops) override { return m_takes || ops.empty(); }
    NativeLayout nativeOutput() const override { return { std::string(m_name) + ":out", 1 }; }
    NativeLayout nativeInput(size_t) const override { return { std::string(m_name) + ":in", 1 }; }
    void chooseNative(int input, int) override { chosen = input; }
    bool outputIn(const NativeLayout&) override { return m_takes; }

    int chosen = -1;

private:
    const char* m_name;
    bool m_takes;
    int& m_runs;
};

struct Pair {
    int fastRuns = 0, slowRuns = 0;
    Probe* fast = nullptr;
    Probe* slow = nullptr;
    std::unique_ptr<Float32Kernel> kernel;

    Pair(FusedInto into, bool fastTakes, bool slowTakes)
    {
        auto f = std::make_unique<Probe>("fast", fastTakes, fastRuns);
        auto s = std::make_unique<Probe>("slow", slowTakes, slowRuns);
        fast = f.get();
        slow = s.get();
        kernel = std::make_unique<Float32Kernel>("Conv", std::move(f), std::move(s), into);
    }
    void run(DType type)
    {
        Tensor x(Shape({ 2 }), type), y(Shape({ 2 }), type);
        const Tensor* in[] = { &x };
        Tensor* out[] = { &y };
        RunContext ctx;
        kernel->run(in, out, ctx);
    }
};

const PostOp kRelu { PostOp::Kind::Relu };
} // namespace

TEST(Float32Kernel, Float32RunsOnTheFastKernelAndEveryOtherTypeOnTheSlowOne)
{
    Pair p(FusedInto::Fast, true, false);
    p.run(DType::Float32);
    p.run(DType::Float32);
    p.run(DType::Float64);
    EXPECT_EQ(p.fastRuns, 2);
    EXPECT_EQ(p.slowRuns, 1);
    EXPECT_STREQ(p.kernel->backend(), "fast");
    EXPECT_EQ(p.kernel->nativeOutput().key, "fast:out");
    EXPECT_EQ(p.kernel->nativeInput(0).key, "fast:in");
    p.kernel->chooseNative(1, 0);
    EXPECT_EQ(p.fast->chosen, 1);
    EXPECT_EQ(p.slow->chosen, -1);
}

TEST(Float32Kernel, PostOpsFusedIntoTheFastKernelRefuseAnotherTypeByName)
{
    Pair p(FusedInto::Fast, true, true);
    ASSERT_TRUE(p.kernel->setPostOps(std::span(&kRelu, 1)));
    p.run(DType::Float32);
    EXPECT_EQ(p.fastRuns, 1);
    try {
        p.run(DType::Float16);
        FAIL() << "a fused float16 run should have been refused";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("Conv fused with the ops after it runs on float32 only, not float16"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(p.slowRuns, 0);
}

TEST(Float32Kernel, PostOpsFusedIntoTheSlowKernelTakeEveryTypeThere)
{
    Pair p(FusedInto::Slow, false, true);
    EXPECT_STREQ(p.kernel->backend(), "fast");
    ASSERT_TRUE(p.kernel->setPostOps(std::span(&kRelu, 1)));
    p.run(DType::Float32);
    p.run(DType::Float64);
    EXPECT_EQ(p.fastRuns, 0);
    EXPECT_EQ(p.slowRuns, 2);
    EXPECT_STREQ(p.kernel->backend(), "slow");
    EXPECT_EQ(p.kernel->nativeOutput().key, "slow:out"); // layouts follow the kernel float32 runs on
    EXPECT_TRUE(p.kernel->outputIn(NativeLayout { "x", 1 }));
}

TEST(Float32Kernel, PostOpsThatTheKernelRefusesLeaveTheOpUnfused)
{
    Pair p(FusedInto::Fast, false, true);
    EXPECT_FALSE(p.kernel->setPostOps(std::span(&kRelu, 1)));
    p.run(DType::Float16);
    EXPECT_EQ(p.slowRuns, 1);
    EXPECT_TRUE(p.kernel->setPostOps({})); // none: always taken, nothing fused
    p.run(DType::Float32);
    EXPECT_EQ(p.fastRuns, 1);
}
