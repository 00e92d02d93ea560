// A training step as a debug-session run: the same update as autograd + Trainer, breakpoints and
// watchpoints in the backward nodes, gradient conditions, stepping across forward and backward, and
// a stopped step that leaves the parameters alone.

#include "core/error.h"
#include "debug/session_test_util.h"
#include "exec/gradient.h"
#include "gluon/autograd.h"
#include "gluon/loss.h"
#include "gluon/trainer.h"
#include "models/datasets.h"
#include "models/registry.h"
#include "models/training.h"
#include "tensor/random.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>

using namespace opscope;
using namespace opscope::debug;
using namespace opscope::debug::test;

namespace {

const std::string kD1 = "hybridsequential0_dense1_fwd";

std::map<std::string, Tensor> weightsOf(gluon::HybridBlock& block)
{
    std::map<std::string, Tensor> out;
    for (const gluon::ParamPtr& p : block.collect_params().values())
        out[p->name()] = p->data().copy();
    return out;
}

float maxAbsDiff(const Tensor& a, const Tensor& b)
{
    EXPECT_EQ(a.shape(), b.shape());
    float d = 0;
    for (int64_t i = 0; i < a.size() && i < b.size(); ++i)
        d = std::max(d, std::fabs(a.at(i) - b.at(i)));
    return d;
}

// A copy of `of`'s sample with the same weights (hybridized).
samples::Sample sameWeights(const std::string& name, gluon::HybridBlock& of, const Tensor& x)
{
    samples::Sample s = samples::makeSample(name, 0);
    s.block->hybridize();
    s.block->call(x); // shapes inferred, parameters initialised
    const gluon::ParameterDict from = of.collect_params();
    for (const gluon::ParamPtr& p : s.block->collect_params().values())
        p->set_data(from.at(p->name())->data().copy());
    return s;
}

// A sample set up for training steps in a session: its first `batch` rows of training data.
struct TrainFixture {
    Recorder listener;
    Session session { &listener };
    samples::Sample sample;
    std::shared_ptr<gluon::SoftmaxCrossEntropyLoss> loss = std::make_shared<gluon::SoftmaxCrossEntropyLoss>();
    std::shared_ptr<gluon::Trainer> trainer;
    Tensor x, y;

    explicit TrainFixture(const std::string& name = "mlp", int64_t batch = 16, const std::string& optimizer = "sgd")
        : sample(samples::makeSample(name, 0))
    {
        const samples::Dataset d = name == "lenet" ? samples::digits(batch, 5) : samples::spirals(batch, 3, 0.15, 5);
        x = d.data;
        y = d.label;
        sample.block->call(x); // parameters of deferred shape initialised
        std::map<std::string, double> settings { { "learning_rate", 0.1 } };
        if (optimizer == "sgd") settings["momentum"] = 0.9;
        trainer = std::make_shared<gluon::Trainer>(sample.block->collect_params(), optimizer, settings);
        session.load(sample.block, sample.inputNames);
        session.setInputs({ x });
        session.setLabel(y);
        session.setTraining(loss, trainer);
    }

    // One step to its end (continuing at every pause).
    void stepToEnd(size_t runsSoFar)
    {
        session.startTrainStep();
        ASSERT_TRUE(listener.waitEnded(runsSoFar + 1));
    }
};

} // namespace

TEST(TrainStep, SameUpdateAsAutogradAndTrainer)
{
    Watchdog dog("SameUpdateAsAutogradAndTrainer");
    for (const std::string name : { "mlp", "lenet" }) {
        SCOPED_TRACE(name);
        TrainFixture f(name, name == "lenet" ? 8 : 32, name == "lenet" ? "adam" : "sgd");
        // The reference: the same weights trained by autograd::record + backward + Trainer.step.
        samples::Sample ref = sameWeights(name, *f.sample.block, f.x);
        gluon::SoftmaxCrossEntropyLoss refLoss;
        refLoss.hybridize();
        std::map<std::string, double> settings { { "learning_rate", 0.1 } };
        if (name == "mlp") settings["momentum"] = 0.9;
        gluon::Trainer refTrainer(ref.block->collect_params(), name == "lenet" ? "adam" : "sgd", settings);
        for (size_t step = 0; step < 2; ++step) {
            f.stepToEnd(step);
            const auto result = f.session.lastTrainStep();
            ASSERT_TRUE(result);
            EXPECT_TRUE(result->completed) << result->error;
            EXPECT_TRUE(result->updated);
            EXPECT_EQ(result->batch, f.x.shape()[0]);
            const double refSum = samples::trainBatch(*ref.block, refLoss, refTrainer, f.x, f.y);
            EXPECT_NEAR(result->lossSum, refSum, 1e-4 * std::fabs(refSum));
            const auto got = weightsOf(*f.sample.block), want = weightsOf(*ref.block);
            for (const auto& [pname, w] : want)
                EXPECT_LE(maxAbsDiff(got.at(pname), w), 1e-5f) << pname << " after step " << step + 1;
        }
        // The run's outputs: the loss per sample, then every parameter's gradient (named by lastTrainStep).
        std::lock_guard lock(f.listener.m_mutex);
        const auto result = f.session.lastTrainStep();
        ASSERT_EQ(f.listener.m_outputs.size(), 1 + result->parameters.size());
        EXPECT_EQ(f.listener.m_outputs[0].shape(), Shape({ f.x.shape()[0] }));
        const gluon::ParameterDict params = f.sample.block->collect_params();
        for (size_t k = 0; k < result->parameters.size(); ++k)
            EXPECT_EQ(f.listener.m_outputs[1 + k].shape(), params.at(result->parameters[k])->shape());
    }
}

TEST(TrainStep, BreakpointInABackwardNode)
{
    Watchdog dog("BreakpointInABackwardNode");
    TrainFixture f;
    // The gradient the step must compute, by autograd on a copy of the same weights.
    samples::Sample ref = sameWeights("mlp", *f.sample.block, f.x);
    gluon::SoftmaxCrossEntropyLoss refLoss;
    Tensor l;
    {
        auto r = autograd::record();
        l = refLoss.call({ ref.block->call(f.x), f.y }).at(0);
    }
    autograd::backward(l);
    const Tensor weightGrad = ref.block->collect_params().at(kD1.substr(0, kD1.size() - 4) + "_weight")->grad().copy();

    f.session.setOptions({ RecordLevel::Ops });
    f.session.addBreakpoint(Breakpoint::onNode(kD1 + "_backward", OpPhase::After));
    const auto before = weightsOf(*f.sample.block);
    f.session.startTrainStep();
    const PauseEvent e = f.listener.waitPause(1);
    EXPECT_EQ(e.node, kD1 + "_backward");
    EXPECT_EQ(e.op, "_backward_FullyConnected");
    EXPECT_EQ(e.reason, PauseReason::Breakpoint);
    EXPECT_EQ(e.blockPath, "backward/hybridsequential0/hybridsequential0_dense1");
    const PausedTensor* g = e.find(kD1 + "_backward_weight_grad");
    ASSERT_NE(g, nullptr);
    EXPECT_LE(maxAbsDiff(g->values, weightGrad), 1e-5f);
    EXPECT_NE(e.find(kD1 + "_backward_output_grad"), nullptr); // the gradient it reads
    // Paused in the backward pass: nothing is updated yet.
    for (const auto& [name, w] : weightsOf(*f.sample.block))
        EXPECT_EQ(maxAbsDiff(w, before.at(name)), 0.0f) << name;
    EXPECT_TRUE(f.session.continueRun());
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_TRUE(f.session.lastTrainStep()->updated);

    // The record: the forward nodes, the loss's, then the backward nodes, each once.
    std::lock_guard lock(f.listener.m_mutex);
    const auto graph = f.session.graph();
    ASSERT_TRUE(graph);
    EXPECT_TRUE(graph->findNode("label")) << "the label variable";
    bool inBackward = false;
    size_t forward = 0, backward = 0;
    for (const OpRecord& r : f.listener.m_record.ops) {
        const bool grad = isGradientNode(graph->node(r.nodeId));
        EXPECT_TRUE(grad || !inBackward) << r.node << " (a forward node) after the backward pass began";
        inBackward = inBackward || grad;
        (grad ? backward : forward)++;
    }
    EXPECT_GE(forward, 5u + 1u); // the model's five ops and the loss's
    EXPECT_GE(backward, 5u);
    EXPECT_EQ(f.listener.m_record.ops.size(), graph->size() - graph->variables().size());
    // The shapes the run inferred, by entry: dense1's weight gradient is (32, 32).
    const std::vector<Shape> shapes = f.session.graphShapes();
    ASSERT_EQ(shapes.size(), graph->numEntries());
    EXPECT_EQ(shapes[graph->entryId(*graph->findNode(kD1 + "_backward"), 1)], Shape({ 32, 32 }));
}

TEST(TrainStep, NanInAGradientStopsInTheBackwardPassAndStopUpdatesNothing)
{
    Watchdog dog("NanInAGradient");
    // The reference: every op's outputs of the same step, to find the first gradient with a NaN.
    TrainFixture ref;
    ref.x.at(3) = std::nanf("");
    ref.session.setInputs({ ref.x });
    ref.session.setOptions({ RecordLevel::Stats });
    ref.stepToEnd(0);
    std::string expected;
    {
        std::lock_guard lock(ref.listener.m_mutex);
        const auto graph = ref.session.graph();
        for (const OpRecord& r : ref.listener.m_record.ops) {
            const bool nan = std::any_of(
                r.outputStats.begin(), r.outputStats.end(), [](const TensorStats& s) { return s.nan > 0; });
            if (nan && isGradientNode(graph->node(r.nodeId))) {
                expected = r.node;
                break;
            }
        }
    }
    ASSERT_FALSE(expected.empty()) << "the reference step has no NaN gradient";

    TrainFixture f;
    f.x.at(3) = std::nanf("");
    f.session.setInputs({ f.x });
    const int id = f.session.addBreakpoint(Breakpoint::watch(Condition::parse("grad naninf")));
    const auto before = weightsOf(*f.sample.block);
    f.session.startTrainStep();
    const PauseEvent e = f.listener.waitPause(1);
    EXPECT_EQ(e.node, expected); // not a forward node, though the forward pass has NaN from the start
    EXPECT_EQ(e.reason, PauseReason::Watchpoint);
    EXPECT_EQ(e.breakpointIds, std::vector<int> { id });
    ASSERT_NE(e.focusTensor(), nullptr);
    EXPECT_FALSE(e.focusTensor()->isInput);
    EXPECT_GT(e.focusStats.nan, 0u);
    EXPECT_TRUE(f.session.stop());
    ASSERT_TRUE(f.listener.waitEnded());
    const auto result = f.session.lastTrainStep();
    ASSERT_TRUE(result);
    EXPECT_FALSE(result->completed);
    EXPECT_FALSE(result->updated);
    for (const auto& [name, w] : weightsOf(*f.sample.block))
        EXPECT_EQ(maxAbsDiff(w, before.at(name)), 0.0f) << name << " changed by a stopped step";

    // A plain NaN watchpoint stops at the first forward op instead.
    f.session.clearBreakpoints();
    f.session.addBreakpoint(Breakpoint::watch(Condition::parse("naninf")));
    f.listener.runsExpected = 2;
    f.session.startTrainStep();
    EXPECT_EQ(f.listener.waitPause(2).node, "hybridsequential0_dense0_fwd");
    f.session.stop();
    ASSERT_TRUE(f.listener.waitEnded(2));
}

TEST(TrainStep, GradientNormAboveThreshold)
{
    Watchdog dog("GradientNormAboveThreshold");
    TrainFixture ref;
    ref.session.setOptions({ RecordLevel::Stats });
    ref.stepToEnd(0);
    // Every gradient's norm in run order; the threshold is their median.
    std::vector<std::pair<std::string, double>> norms;
    {
        std::lock_guard lock(ref.listener.m_mutex);
        const auto graph = ref.session.graph();
        for (const OpRecord& r : ref.listener.m_record.ops)
            if (isGradientNode(graph->node(r.nodeId))) {
                double most = 0;
                for (const TensorStats& s : r.outputStats)
                    most = std::max(most, s.l2);
                norms.emplace_back(r.node, most);
            }
    }
    ASSERT_GE(norms.size(), 4u);
    std::vector<double> sorted;
    for (const auto& n : norms)
        sorted.push_back(n.second);
    std::sort(sorted.begin(), sorted.end());
    const double threshold = sorted[sorted.size() / 2];
    std::vector<std::string> expected;
    for (const auto& [node, norm] : norms)
        if (norm > threshold) expected.push_back(node);
    ASSERT_FALSE(expected.empty());

    TrainFixture f;
    f.session.addBreakpoint(Breakpoint::watch(Condition::onGradients(Condition::Kind::NormAbove, threshold)));
    f.session.startTrainStep();
    std::vector<std::string> seen;
    for (size_t n = 1; n <= expected.size(); ++n) {
        const PauseEvent e = f.listener.waitPause(n);
        seen.push_back(e.node);
        EXPECT_GT(e.focusStats.l2, threshold) << e.node;
        f.session.continueRun();
    }
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_EQ(seen, expected);
    EXPECT_EQ(f.listener.pauseCount(), expected.size());
}

TEST(TrainStep, RunToAndStepOutAcrossTheBackwardPass)
{
    Watchdog dog("RunToAndStepOut");
    TrainFixture f;
    f.session.startTrainStep(StartMode::PauseAtEntry);
    EXPECT_EQ(f.listener.waitPause(1).node, "hybridsequential0_dense0_fwd");
    EXPECT_TRUE(f.session.runTo(kD1 + "_backward"));
    const PauseEvent at = f.listener.waitPause(2);
    EXPECT_EQ(at.node, kD1 + "_backward");
    EXPECT_EQ(at.reason, PauseReason::RunTo);
    // Out of dense1's backward block: the next node is dense1's relu's or dense0's backward.
    EXPECT_TRUE(f.session.stepOut());
    const PauseEvent out = f.listener.waitPause(3);
    EXPECT_TRUE(out.blockPath.rfind("backward/", 0) == 0) << out.blockPath;
    EXPECT_NE(out.blockPath, at.blockPath);
    f.session.continueRun();
    ASSERT_TRUE(f.listener.waitEnded());
    EXPECT_TRUE(f.session.lastTrainStep()->updated);
}

TEST(TrainStep, ForwardRunsStillWorkAndBadSetupsAreNamed)
{
    Watchdog dog("ForwardRunsStillWork");
    TrainFixture f;
    f.stepToEnd(0);
    const auto trainGraph = f.session.graph();
    f.session.start();
    ASSERT_TRUE(f.listener.waitEnded(2));
    {
        std::lock_guard lock(f.listener.m_mutex);
        ASSERT_EQ(f.listener.m_outputs.size(), 1u);
        EXPECT_EQ(f.listener.m_outputs[0].shape(), Shape({ f.x.shape()[0], 3 }));
    }
    EXPECT_NE(f.session.graph(), trainGraph);
    EXPECT_FALSE(f.session.graph()->findNode(kD1 + "_backward"));

    // A label whose batch differs names both shapes.
    f.session.setLabel(Tensor::zeros({ 5 }));
    try {
        f.session.startTrainStep();
        FAIL() << "expected a UsageError";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("(16, 2)"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("(5,)"), std::string::npos) << e.what();
    }
    // Loading a model forgets the training.
    f.session.load(f.sample.block, f.sample.inputNames);
    f.session.setInputs({ f.x });
    EXPECT_THROW(f.session.startTrainStep(), UsageError);
    EXPECT_FALSE(f.session.isRunning());
}

TEST(TrainStep, BatchNormAndResidualsTrainAsAutogradDoes)
{
    // mini-resnet: BatchNorm in training mode (batch statistics, running statistics updated), a
    // residual add (gradients summed), global pooling. Random images and labels.
    Watchdog dog("BatchNormAndResiduals");
    Recorder listener;
    Session session(&listener);
    samples::Sample s = samples::makeSample("mini-resnet", 0);
    Generator gen(11);
    Tensor x = Tensor::uniform({ 4, 3, 32, 32 }, -1, 1, &gen);
    Tensor y(Shape { 4 });
    for (int64_t i = 0; i < 4; ++i)
        y.at(i) = static_cast<float>((i * 7) % 10);
    s.block->call(x); // parameters initialised
    samples::Sample ref = sameWeights("mini-resnet", *s.block, x);
    auto loss = std::make_shared<gluon::SoftmaxCrossEntropyLoss>();
    auto trainer = std::make_shared<gluon::Trainer>(s.block->collect_params(), "sgd",
        std::map<std::string, double> { { "learning_rate", 0.05 }, { "momentum", 0.9 } });
    session.load(s.block, s.inputNames);
    session.setInputs({ x });
    session.setLabel(y);
    session.setTraining(loss, trainer);
    session.start(); // a forward run first (inference mode): nothing changes
    ASSERT_TRUE(listener.waitEnded(1));
    // A step stopped in its backward pass changes nothing, running statistics included (the
    // forward pass in training mode has computed new ones by then).
    const auto before = weightsOf(*s.block);
    const int bp = session.addBreakpoint(Breakpoint::watch(Condition::parse("grad")));
    listener.runsExpected = 2;
    session.startTrainStep();
    EXPECT_TRUE(listener.waitPause(1).op.starts_with("_backward_"));
    session.stop();
    ASSERT_TRUE(listener.waitEnded(2));
    EXPECT_FALSE(session.lastTrainStep()->updated);
    for (const auto& [name, w] : weightsOf(*s.block))
        EXPECT_EQ(maxAbsDiff(w, before.at(name)), 0.0f) << name << " changed by a stopped step";
    session.removeBreakpoint(bp);
    session.startTrainStep();
    ASSERT_TRUE(listener.waitEnded(3));
    const auto result = session.lastTrainStep();
    ASSERT_TRUE(result && result->updated) << (result ? result->error : "no result");

    gluon::SoftmaxCrossEntropyLoss refLoss;
    refLoss.hybridize();
    gluon::Trainer refTrainer(ref.block->collect_params(), "sgd", { { "learning_rate", 0.05 }, { "momentum", 0.9 } });
    const double refSum = samples::trainBatch(*ref.block, refLoss, refTrainer, x, y);
    EXPECT_NEAR(result->lossSum, refSum, 1e-4 * std::fabs(refSum));
    const auto got = weightsOf(*s.block), want = weightsOf(*ref.block);
    size_t moved = 0;
    for (const auto& [name, w] : want) {
        EXPECT_LE(maxAbsDiff(got.at(name), w), 2e-5f) << name; // weights and running statistics alike
        moved += name.find("running") != std::string::npos ? 0 : 1;
    }
    EXPECT_GT(moved, 10u);
}

TEST(TrainStep, StaticAllocAndStaticShapeModelsTrainAlike)
{
    Watchdog dog("StaticAllocAndStaticShape");
    for (const bool staticShape : { false, true }) {
        SCOPED_TRACE(staticShape ? "static_shape" : "static_alloc");
        TrainFixture f("mlp", 16);
        f.sample.block->hybridize(true, true, staticShape);
        samples::Sample ref = sameWeights("mlp", *f.sample.block, f.x);
        gluon::SoftmaxCrossEntropyLoss refLoss;
        refLoss.hybridize();
        gluon::Trainer refTrainer(
            ref.block->collect_params(), "sgd", { { "learning_rate", 0.1 }, { "momentum", 0.9 } });
        for (size_t step = 0; step < 3; ++step) {
            f.stepToEnd(step);
            const auto result = f.session.lastTrainStep();
            ASSERT_TRUE(result && result->updated) << (result ? result->error : "");
            const double refSum = samples::trainBatch(*ref.block, refLoss, refTrainer, f.x, f.y);
            EXPECT_NEAR(result->lossSum, refSum, 1e-4 * std::fabs(refSum));
        }
        const auto got = weightsOf(*f.sample.block), want = weightsOf(*ref.block);
        for (const auto& [name, w] : want)
            EXPECT_LE(maxAbsDiff(got.at(name), w), 1e-5f) << name;
        // The outputs of each step are the step's own (copied out of the kept buffers).
        std::lock_guard lock(f.listener.m_mutex);
        EXPECT_EQ(f.listener.m_outputs.size(), 1 + f.session.lastTrainStep()->parameters.size());
    }
}
