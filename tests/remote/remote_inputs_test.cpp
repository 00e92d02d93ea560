// Inputs given by a client: streamed to the served session by position, the server's own for those
// not given (an empty call gives them all back); refused with the reason for a bad index or size,
// during a run, to a watcher, and where the served program feeds its model itself.

#include "remote_test_util.h"

#include <cstring>
#include <grpcpp/grpcpp.h>

namespace opscope::remote::test {

namespace {
    bool sameBytes(const Tensor& a, const Tensor& b)
    {
        return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
    }
}

TEST(RemoteInputs, AClientsInputsRunThereUntilItGivesTheServersOwnBack)
{
    Watchdog dog("remote inputs");
    ServedSample served("lenet");
    const Tensor own = served.session.inputs().at(0);
    EventRecorder events; // outlives the subscription
    Client c(served.connect());
    c.subscribe(&events);
    c.start();
    ASSERT_TRUE(events.waitFinished(1));
    const Tensor ownOutput = c.fetchOutput(0);

    // Zeros of the input's shape; then a batch of 400 (1.25 MB: more than one request's worth, so
    // it streams in chunks).
    const Tensor zeros = Tensor::zeros(own.shape());
    c.setInputs({ zeros });
    EXPECT_TRUE(sameBytes(served.session.inputs().at(0), zeros));
    c.start();
    ASSERT_TRUE(events.waitFinished(2));
    EXPECT_FALSE(sameBytes(c.fetchOutput(0), ownOutput)) << "the run saw the client's input";
    Shape batch = own.shape();
    batch = Shape({ 400, batch[1], batch[2], batch[3] });
    Tensor big = Tensor::ones(batch);
    float* v = static_cast<float*>(big.raw());
    for (int64_t k = 0; k < big.size(); ++k)
        v[k] = static_cast<float>(k % 251) / 251.0f; // the chunks' order shows
    ASSERT_GT(big.bytes(), size_t(1) << 20);
    c.setInputs({ big });
    EXPECT_TRUE(sameBytes(served.session.inputs().at(0), big));
    c.start();
    ASSERT_TRUE(events.waitFinished(3));
    EXPECT_EQ(c.fetchOutput(0).shape()[0], 400);

    // Nothing given: the server's own again, bit for bit.
    c.setInputs({});
    EXPECT_TRUE(sameBytes(served.session.inputs().at(0), own));
    c.start();
    ASSERT_TRUE(events.waitFinished(4));
    EXPECT_TRUE(sameBytes(c.fetchOutput(0), ownOutput));
}

TEST(RemoteInputs, WhatCannotBeAnInputIsRefusedWithTheReason)
{
    Watchdog dog("remote input refusals");
    ServedSample served("lenet");
    const Tensor own = served.session.inputs().at(0);
    Client holder(served.connect("holder"));
    ConnectOptions w = served.connect("watcher");
    w.watchOnly = true;
    Client watcher(w);
    auto refusal = [](const std::function<void()>& f, int* code) {
        try {
            f();
        } catch (const RemoteError& e) {
            *code = e.code();
            return std::string(e.what());
        }
        *code = 0;
        return std::string();
    };
    int code = 0;
    std::string m = refusal([&] { watcher.setInputs({ own }); }, &code);
    EXPECT_EQ(code, grpc::StatusCode::PERMISSION_DENIED) << m;
    m = refusal([&] { holder.setInputs({ own, own, own }); }, &code);
    EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT) << m;
    EXPECT_NE(m.find("input index 1: the model has 1 input"), std::string::npos) << m;
    EXPECT_TRUE(sameBytes(served.session.inputs().at(0), own)) << "a refused call changes nothing";

    // During a run (paused at its entry).
    EventRecorder events;
    Client runner(served.connect("runner"));
    holder.detach();
    runner.subscribe(&events);
    runner.start(debug::StartMode::PauseAtEntry);
    ASSERT_TRUE(events.waitPauses(1));
    m = refusal([&] { runner.setInputs({ Tensor::zeros(own.shape()) }); }, &code);
    EXPECT_EQ(code, grpc::StatusCode::FAILED_PRECONDITION) << m;
    EXPECT_NE(m.find("during a run"), std::string::npos) << m;
    runner.stop();
    ASSERT_TRUE(events.waitFinished(1));

    // A program that feeds its model itself.
    debug::ServeOptions program;
    program.clientsStart = false;
    ServedSample training("mlp", program);
    Client t(training.connect());
    m = refusal([&] { t.setInputs({}); }, &code);
    EXPECT_EQ(code, grpc::StatusCode::FAILED_PRECONDITION) << m;
    EXPECT_NE(m.find("its own inputs"), std::string::npos) << m;
}

} // namespace opscope::remote::test
