// The Model panel's inputs while attached: each input offers the server's own as its default, any
// other source (zeros, a file, the drawing pad) is sent with the run and runs there; Default gives
// the server its own back. A served training loop takes none.

#include "gui/gui_test_util.h"
#include "gui/inputs/input_panel.h"
#include "remote/remote_test_util.h"

#include <cstring>

using namespace opscope;
using namespace opscope::gui;
using namespace opscope::gui::test;
using State = SessionController::State;

namespace {
ServerEntry entryOf(const remote::test::ServedSample& served)
{
    return { QString::fromStdString(served.server->address()), {}, {} };
}

bool sameBytes(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}
}

TEST(WindowAttachInputs, ThePanelsInputsRunOnTheServerAndDefaultIsTheServersOwn)
{
    remote::test::Watchdog dog("WindowAttachInputs", std::chrono::seconds(240));
    remote::test::ServedSample served("lenet", {}, true);
    const Tensor own = served.session.inputs().at(0);
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    InputPanel* inputs = w->inputPanel();
    ASSERT_EQ(inputs->sources().size(), 1u);
    EXPECT_EQ(inputs->sources()[0].kind, InputSource::Kind::Default);

    // Zeros from the panel: the server's run takes them.
    InputSource zeros;
    zeros.kind = InputSource::Kind::Zeros;
    inputs->setSource(0, zeros);
    w->action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(waitState(*w, State::Finished)) << w->lastMessage().toStdString();
    const Tensor sent = served.session.inputs().at(0);
    EXPECT_EQ(sent.shape(), own.shape());
    EXPECT_TRUE(sameBytes(sent, Tensor::zeros(own.shape())));

    // Default again: the server's own input, bit for bit.
    InputSource byDefault;
    inputs->setSource(0, byDefault);
    w->action(MainWindow::Action::Run)->trigger();
    ASSERT_TRUE(waitState(*w, State::Finished)) << w->lastMessage().toStdString();
    EXPECT_TRUE(sameBytes(served.session.inputs().at(0), own));
}

TEST(WindowAttachInputs, AServedTrainingLoopTakesNoInputsFromTheWindow)
{
    remote::test::Watchdog dog("WindowAttachInputs training", std::chrono::seconds(240));
    debug::ServeOptions program;
    program.clientsStart = false;
    remote::test::ServedSample served("mlp", program, true);
    auto w = makeWindow();
    ASSERT_TRUE(w->attachToServer(entryOf(served))) << w->lastMessage().toStdString();
    EXPECT_TRUE(w->inputPanel()->sources().empty()) << "the program feeds its model itself";
}
