// Reads pinned to where a tensor was seen: a pause's tensor is read while that pause lasts, a
// record's while that run's record is the server's; once the session has moved on (the same name
// at another pause, another run's record) the read is refused, never answered with other values.

#include "remote_test_util.h"

#include <grpcpp/grpcpp.h>

namespace opscope::remote::test {

TEST(RemotePin, AReadPinnedToAPauseOrARecordIsRefusedOnceTheSessionMovedOn)
{
    Watchdog dog("remote pins");
    ServedSample served("lenet");
    EventRecorder events; // outlives the subscription
    Client c(served.connect());
    c.subscribe(&events);
    debug::SessionOptions o;
    o.record = debug::RecordLevel::Tensors;
    c.setOptions(o);
    const std::string conv1 = "hybridsequential0_conv1_fwd";
    const std::string out = conv1 + "_output";
    c.addBreakpoint(debug::Breakpoint::onNode(conv1, OpPhase::After));

    const uint64_t run1 = c.start();
    ASSERT_TRUE(events.waitPauses(1));
    const debug::PauseEvent first = events.pause(0).event;
    const debug::TensorPin atFirst { run1, first.sequence };
    EXPECT_NO_THROW(c.slice(out, {}, atFirst));
    EXPECT_NO_THROW(c.summary(out, 16, debug::HistogramScale::Linear, 0, 0, atFirst));
    c.continueRun();
    ASSERT_TRUE(events.waitFinished(1));
    // The run's record holds the same name: a read pinned to the pause is refused all the same.
    try {
        c.slice(out, {}, atFirst);
        ADD_FAILURE() << "a read pinned to an ended pause was answered";
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
        EXPECT_NE(std::string(e.what()).find("has ended"), std::string::npos) << e.what();
    }
    const debug::TensorPin record1 { run1, 0 };
    EXPECT_NO_THROW(c.slice(out, {}, record1)) << "run 1's record is the server's";
    EXPECT_NO_THROW(c.slice(out, {})) << "unpinned: wherever the name is now";

    // Run 2, paused at the same node: run 1's record and pause are both gone from the server.
    const uint64_t run2 = c.start();
    ASSERT_TRUE(events.waitPauses(2));
    EXPECT_EQ(codeOf([&] { c.slice(out, {}, atFirst); }), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NO_THROW(c.slice(out, {}, { run2, events.pause(1).event.sequence }));
    try {
        c.summary(out, 16, debug::HistogramScale::Linear, 0, 0, record1);
        ADD_FAILURE() << "a read pinned to run 1's record was answered during run 2";
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
        EXPECT_NE(std::string(e.what()).find("run 2"), std::string::npos) << e.what();
    }
    // A parameter is read as it is now, whatever the pin.
    EXPECT_NO_THROW(c.slice("hybridsequential0_conv1_weight", {}, record1));
    c.stop();
    ASSERT_TRUE(events.waitFinished(2));
}

} // namespace opscope::remote::test
