// Lifecycle of a debug session under concurrency, part three: a session destroyed in a training
// step's backward pass, repeated kReps times with the seed test * 1000 + repetition.

#include "debug/session_lifecycle_util.h"

#include <gtest/gtest.h>

using namespace opscope;
using namespace opscope::debug;
using namespace opscope::debug::test;
using namespace opscope::debug::test::lifecycle;

namespace {

// A sample, its mini-batch, a loss and a trainer of its own.
struct TrainSetup {
    samples::Sample sample;
    Tensor x, y;
    std::shared_ptr<gluon::SoftmaxCrossEntropyLoss> loss = std::make_shared<gluon::SoftmaxCrossEntropyLoss>();
    std::shared_ptr<gluon::Trainer> trainer;

    // With the weights of `from` when given, else the sample's own.
    explicit TrainSetup(const std::string& name, const TrainSetup* from = nullptr)
        : sample(samples::makeSample(name, 0))
    {
        if (from) {
            x = from->x;
            y = from->y;
        } else if (name == "mini-resnet") {
            Generator gen(11);
            x = Tensor::uniform({ 4, 3, 32, 32 }, -1, 1, &gen);
            y = Tensor(Shape { 4 });
            for (int64_t i = 0; i < 4; ++i)
                y.at(i) = static_cast<float>((i * 7) % 10);
        } else {
            const samples::Dataset d = name == "lenet" ? samples::digits(8, 5) : samples::spirals(16, 3, 0.15, 5);
            x = d.data;
            y = d.label;
        }
        sample.block->call(x); // parameters of deferred shape initialised
        if (from) {
            const gluon::ParameterDict params = from->sample.block->collect_params();
            for (const gluon::ParamPtr& p : sample.block->collect_params().values())
                p->set_data(params.at(p->name())->data().copy());
        }
        trainer = std::make_shared<gluon::Trainer>(sample.block->collect_params(), "sgd",
            std::map<std::string, double> { { "learning_rate", 0.1 }, { "momentum", 0.9 } });
    }
    void attach(Session& session)
    {
        session.load(sample.block, sample.inputNames);
        session.setInputs({ x });
        session.setLabel(y);
        session.setTraining(loss, trainer);
    }
    // Every parameter's values and gradient, copied.
    std::map<std::string, Tensor> values() const
    {
        std::map<std::string, Tensor> out;
        for (const gluon::ParamPtr& p : sample.block->collect_params().values()) {
            out[p->name()] = p->data().copy();
            if (p->grad_req() != "null") out[p->name() + " grad"] = p->grad().copy();
        }
        return out;
    }
    // One complete step in a session of its own.
    void fullStep()
    {
        Log log;
        Session session(&log);
        attach(session);
        session.startTrainStep();
        ASSERT_TRUE(log.waitEnds(1));
        const auto result = session.lastTrainStep();
        ASSERT_TRUE(result);
        EXPECT_TRUE(result->updated) << result->error;
    }
};

// The names of the values that differ between two snapshots.
std::vector<std::string> differing(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b)
{
    std::vector<std::string> out;
    for (const auto& [name, t] : a)
        if (!b.count(name) || !sameBits(t, b.at(name))) out.push_back(name);
    return out;
}

} // namespace

// A training step whose session is destroyed in its backward pass (paused there, or running on
// from there) applies no update: every parameter, running statistic and gradient keeps its bits,
// and the trainer's state too (a later step gives the same weights as a copy that never took the
// destroyed step). A step the destructor came too late for is complete: it updated.
TEST(SessionLifecycle, TrainingStepDestroyedInItsBackwardPass)
{
    Watchdog dog("TrainingStepDestroyedInBackward", std::chrono::seconds(600));
    // From the first backward pause to the end of a step continued by its listener, per model.
    std::map<std::string, Clock::duration> backwardTime;
    auto modelOf = [](int rep) { return rep % 5 == 3 ? "mini-resnet" : rep % 5 == 1 ? "lenet" : "mlp"; };
    for (const char* name : { "mlp", "lenet", "mini-resnet" }) {
        TrainSetup t(name);
        Log log;
        Session session(&log);
        t.attach(session);
        session.addBreakpoint(Breakpoint::watch(Condition::parse("grad")));
        Clock::time_point first;
        log.onPaused = [&](const PauseEvent& e) {
            if (e.sequence == 1) first = Clock::now();
            session.continueRun();
        };
        session.startTrainStep();
        ASSERT_TRUE(log.waitEnds(1));
        backwardTime[name] = Clock::now() - first;
        ASSERT_TRUE(session.lastTrainStep() && session.lastTrainStep()->updated);
    }

    int stoppedPaused = 0, stoppedRunning = 0, completed = 0;
    for (int rep = 0; rep < kReps; ++rep) {
        const std::string name = modelOf(rep);
        SCOPED_TRACE("repetition " + std::to_string(rep) + ", " + name);
        std::mt19937 rng = rngFor(7, rep);
        TrainSetup a(name);
        TrainSetup b(name, &a); // the same weights, never in a destroyed step
        const std::map<std::string, Tensor> before = a.values();
        ASSERT_TRUE(differing(before, b.values()).empty());

        Log log;
        auto session = std::make_unique<Session>(&log);
        a.attach(*session);
        session->setOptions({ RecordLevel::Ops });
        Breakpoint bp = Breakpoint::watch(Condition::parse("grad"));
        bp.ignoreCount = rng() % 3;
        session->addBreakpoint(bp);
        const bool staysPaused = rep % 2 == 0;
        Session* sp = session.get();
        if (!staysPaused) log.onPaused = [sp](const PauseEvent&) { sp->continueRun(); };
        session->startTrainStep();
        const PauseEvent e = log.waitPause(1);
        const std::shared_ptr<const Graph> graph = session->graph();
        ASSERT_TRUE(graph);
        ASSERT_LT(e.nodeId, graph->size());
        EXPECT_TRUE(isGradientNode(graph->node(e.nodeId))) << e.node << " is not in the backward pass";
        if (staysPaused)
            yields(static_cast<int>(rng() % 100));
        else
            spinFor(upTo(rng, backwardTime.at(name) * 6 / 10));
        EXPECT_LT(destroy(session, "destroying a session in a training step's backward pass"), kDestroyBound);

        const std::vector<RunLog> runs = log.snapshot();
        ASSERT_EQ(runs.size(), 1u);
        expectConsistentRuns(runs, nullptr);
        const RunLog& r = runs[0];
        const std::map<std::string, Tensor> after = a.values();
        if (r.status == RunStatus::Stopped) {
            (staysPaused ? stoppedPaused : stoppedRunning)++;
            EXPECT_EQ(differing(before, after), std::vector<std::string> {}) << "changed by a destroyed step";
            size_t backward = 0;
            for (const OpRecord& op : r.record.ops)
                backward += isGradientNode(graph->node(op.nodeId)) ? 1 : 0;
            EXPECT_GT(backward, static_cast<size_t>(bp.ignoreCount)) << "destroyed before its backward pass";
        } else {
            ++completed;
            EXPECT_FALSE(staysPaused) << "a paused step completed";
            EXPECT_FALSE(differing(before, after).empty()) << "a completed step changed nothing";
            EXPECT_GT(r.outputs.size(), 1u); // the loss and the gradients
            b.fullStep(); // the step `a` took
        }
        // The trainer took no step either: one more step gives `a` the weights `b` gets.
        a.fullStep();
        b.fullStep();
        EXPECT_EQ(differing(a.values(), b.values()), std::vector<std::string> {});
    }
    std::printf("training steps destroyed in the backward pass: %d while paused, %d while running, %d completed "
                "first\n",
        stoppedPaused, stoppedRunning, completed);
}
