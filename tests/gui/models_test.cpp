// The window's item models under QAbstractItemModelTester, and what they show.

#include "debug/local_engine.h"
#include "debug/session.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/panels/run_record_model.h"

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>

using namespace opscope;
using namespace opscope::gui;
using debug::Breakpoint;
using debug::Condition;

TEST(BreakpointModel, MirrorsTheSessionAndPassesTheModelTester)
{
    debug::Session session;
    debug::LocalEngine engine(session);
    BreakpointModel model(&engine);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy changed(&model, &BreakpointModel::breakpointsChanged);

    const int a = model.add(Breakpoint::onNode("conv0", OpPhase::After));
    const int b = model.toggleNode(QStringLiteral("pool0"), OpPhase::Before);
    EXPECT_GT(b, 0);
    EXPECT_EQ(model.rowCount(), 2);
    EXPECT_EQ(session.breakpoints().size(), 2u);
    EXPECT_EQ(model.index(0, BreakpointModel::Location).data().toString(), QStringLiteral("conv0"));
    EXPECT_EQ(model.index(0, BreakpointModel::Phase).data().toString(), QStringLiteral("after"));
    EXPECT_EQ(model.index(0, BreakpointModel::Enabled).data(Qt::CheckStateRole).toInt(), Qt::Checked);

    // Editing through the model edits the session's breakpoint.
    EXPECT_TRUE(model.setData(model.index(0, BreakpointModel::Enabled), Qt::Unchecked, Qt::CheckStateRole));
    EXPECT_FALSE(session.breakpoint(a)->enabled);
    EXPECT_TRUE(model.setData(model.index(0, BreakpointModel::ConditionColumn), QStringLiteral("max>3"), Qt::EditRole));
    EXPECT_EQ(session.breakpoint(a)->condition, Condition::of(Condition::Kind::MaxAbove, 3));
    QString error;
    EXPECT_FALSE(model.setCondition(a, QStringLiteral("max>>"), &error));
    EXPECT_FALSE(error.isEmpty());
    EXPECT_TRUE(model.setData(model.index(0, BreakpointModel::Ignore), 2, Qt::EditRole));
    EXPECT_EQ(session.breakpoint(a)->ignoreCount, 2);

    // Toggling an existing node breakpoint removes it.
    EXPECT_EQ(model.toggleNode(QStringLiteral("pool0"), OpPhase::Before), 0);
    EXPECT_EQ(model.rowCount(), 1);
    model.setBreakOnNanInf(true);
    EXPECT_TRUE(model.breakOnNanInf());
    EXPECT_EQ(model.index(1, BreakpointModel::Location).data().toString(), QStringLiteral("every op"));

    // Saved and restored: same breakpoints, new ids.
    const QStringList saved = model.save();
    model.clear();
    EXPECT_EQ(model.rowCount(), 0);
    EXPECT_EQ(model.restore(saved), 2);
    ASSERT_EQ(model.rowCount(), 2);
    const Breakpoint r = model.breakpoints()[0];
    EXPECT_EQ(r.location, "conv0");
    EXPECT_EQ(r.phase, OpPhase::After);
    EXPECT_FALSE(r.enabled);
    EXPECT_EQ(r.ignoreCount, 2);
    EXPECT_EQ(r.condition, Condition::of(Condition::Kind::MaxAbove, 3));
    EXPECT_TRUE(model.breakOnNanInf());
    EXPECT_GE(changed.count(), 8);
    // A bad line is skipped.
    EXPECT_EQ(model.restore({ QStringLiteral("node\tx\tafter\tnot a condition\t1\t0"), QStringLiteral("garbage") }), 0);
}

TEST(RunRecordModel, ShowsEveryOpAndFiltersAndPassesTheModelTester)
{
    auto record = std::make_shared<debug::RunRecord>();
    for (int i = 0; i < 5; ++i) {
        debug::OpRecord op;
        op.node = "node" + std::to_string(i);
        op.op = i % 2 ? "Pooling" : "Convolution";
        op.timeNs = 1000 * (5 - i);
        op.outputNames = { op.node + "_output" };
        op.outputShapes = { Shape { 1, i + 1 } };
        debug::TensorStats s;
        s.count = i + 1;
        s.min = -i;
        s.max = i;
        s.mean = 0.5 * i;
        s.nan = i == 3 ? 1 : 0;
        op.outputStats = { s };
        record->ops.push_back(op);
    }
    RunRecordModel model;
    RunRecordFilter filter;
    filter.setSourceModel(&model);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester proxyTester(&filter, QAbstractItemModelTester::FailureReportingMode::Fatal);
    EXPECT_EQ(model.rowCount(), 0);
    model.setRecord(record);
    ASSERT_EQ(model.rowCount(), 5);
    EXPECT_EQ(model.index(2, RunRecordModel::Node).data().toString(), QStringLiteral("node2"));
    EXPECT_EQ(model.index(2, RunRecordModel::Shape).data().toString(), QStringLiteral("(1, 3)"));
    EXPECT_EQ(model.index(3, RunRecordModel::NanInf).data().toString(), QStringLiteral("NaN/Inf"));
    EXPECT_EQ(model.index(2, RunRecordModel::NanInf).data().toString(), QString());
    EXPECT_EQ(model.index(1, RunRecordModel::Time).data().toString(), QStringLiteral("4.0"));

    filter.setText(QStringLiteral("pool"));
    EXPECT_EQ(filter.rowCount(), 2);
    filter.setText({});
    filter.setOnlyNanInf(true);
    ASSERT_EQ(filter.rowCount(), 1);
    EXPECT_EQ(filter.index(0, RunRecordModel::Node).data().toString(), QStringLiteral("node3"));
    filter.setOnlyNanInf(false);
    // Sorting by time puts the fastest op first.
    filter.sort(RunRecordModel::Time, Qt::AscendingOrder);
    EXPECT_EQ(filter.index(0, RunRecordModel::Node).data().toString(), QStringLiteral("node4"));
    model.clear();
    EXPECT_EQ(filter.rowCount(), 0);
}
