// The breakpoint table over an engine on a server: it shows the server's breakpoints, and an edit
// the server refuses (control held by another client) or cannot answer (the server is gone) is
// reported and changes nothing, never an exception out of the model.

#include "debug/local_engine.h"
#include "debug/session.h"
#include "gui/panels/breakpoint_model.h"
#include "models/registry.h"
#include "remote/remote_engine.h"
#include "remote/server.h"

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>

using namespace opscope;
using namespace opscope::gui;
using debug::Breakpoint;

TEST(BreakpointModel, OverARemoteEngineRefusalsAndAGoneServerAreReportedNotThrown)
{
    samples::Sample sample = samples::makeSample("lenet");
    sample.block->hybridize();
    debug::Session session;
    session.load(sample.block, sample.inputNames);
    session.setInputs(sample.defaultInputs);
    const int existing = session.addBreakpoint(Breakpoint::onNode("hybridsequential0_conv1_fwd", OpPhase::After));
    std::unique_ptr<debug::Server> server = debug::serve(session, {});

    remote::ConnectOptions o;
    o.address = server->address();
    o.clientName = "holder";
    remote::RemoteEngine holder(o);
    o.clientName = "watcher";
    remote::RemoteEngine watcher(o);

    BreakpointModel model(&holder);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    ASSERT_EQ(model.rowCount(), 1) << "the server's breakpoint is shown";
    EXPECT_EQ(model.breakpoints()[0].id, existing);
    const int added = model.add(Breakpoint::onNode("hybridsequential0_pool0_fwd"));
    EXPECT_GT(added, 0);
    EXPECT_EQ(session.breakpoints().size(), 2u);

    // The watcher does not hold control: its edits are refused, with the holder named.
    BreakpointModel watching(&watcher);
    QSignalSpy refused(&watching, &BreakpointModel::engineRefused);
    EXPECT_EQ(watching.rowCount(), 2);
    EXPECT_EQ(watching.add(Breakpoint::onNode("hybridsequential0_conv0_fwd")), 0);
    EXPECT_FALSE(watching.remove(existing));
    EXPECT_FALSE(watching.setEnabled(existing, false));
    EXPECT_EQ(refused.count(), 3);
    EXPECT_NE(watching.lastError().indexOf(QStringLiteral("holder")), -1) << watching.lastError().toStdString();
    EXPECT_EQ(session.breakpoints().size(), 2u);

    // The server goes: the table keeps what it showed, every edit says why it failed.
    server.reset();
    QSignalSpy gone(&model, &BreakpointModel::engineRefused);
    EXPECT_EQ(model.add(Breakpoint::onNode("hybridsequential0_conv0_fwd")), 0);
    model.refresh();
    EXPECT_EQ(model.rowCount(), 2);
    QString error;
    EXPECT_FALSE(model.setCondition(added, QStringLiteral("max>3"), &error));
    EXPECT_FALSE(error.isEmpty());
    model.clear();
    EXPECT_EQ(model.rowCount(), 2);
    EXPECT_GE(gone.count(), 3);

    // Back to an engine in this process: its breakpoints are shown.
    debug::Session local;
    debug::LocalEngine here(local);
    model.setEngine(&here);
    EXPECT_EQ(model.rowCount(), 0);
    EXPECT_GT(model.add(Breakpoint::onNode("x")), 0);
    EXPECT_EQ(local.breakpoints().size(), 1u);
}
