// The graph's model and view: what is visible, collapse and expand, find, marks, layout and export.

#include "gui/graph/graph_model.h"
#include "gui/graph/graph_panel.h"
#include "gui/graph/graph_view.h"
#include "gui/session/model_info.h"

#include <gtest/gtest.h>

#include <QAction>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLocale>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>

using namespace opscope;
using namespace opscope::gui;

namespace {
constexpr int kWaitMs = 30000;

int opCount(const Graph& g)
{
    int n = 0;
    for (const Node& node : g.nodes())
        n += node.isVariable() ? 0 : 1;
    return n;
}

// A long chain of blocks: a graph of thousands of ops.
std::shared_ptr<Graph> bigGraph(int blocks, int opsPerBlock)
{
    auto g = std::make_shared<Graph>();
    NodeEntry last { g->addVariable("data"), 0, 0 };
    for (int b = 0; b < blocks; ++b)
        for (int i = 0; i < opsPerBlock; ++i) {
            const std::string name = "block" + std::to_string(b) + "_relu" + std::to_string(i);
            last = { g->addOp("relu", name, {}, { last }, "net/block" + std::to_string(b)), 0, 0 };
        }
    g->setHeads({ last });
    g->finalize();
    return g;
}

QAction* toolBarAction(GraphPanel& panel, const QString& text)
{
    for (QAction* a : panel.toolBar()->actions())
        if (a->text() == text) return a;
    return nullptr;
}

/// The panel's visible word about what Expand All did ("" when there is none).
QString panelNotice(GraphPanel& panel)
{
    for (const QLabel* label : panel.findChildren<QLabel*>())
        if (label->isVisible() && label->text().contains(QStringLiteral("expand"), Qt::CaseInsensitive))
            return label->text();
    return {};
}
} // namespace

TEST(GraphModel, ShowsOpsAndInputsAndHidesParametersByDefault)
{
    const ModelInfoPtr m = loadModelInfo(QStringLiteral("sample:lenet"));
    GraphModel model;
    model.setGraph(m->graph, m->entryShapes);
    // lenet is small: fully expanded, every op plus the data input.
    EXPECT_EQ(model.visibleCount(), opCount(*m->graph) + 1);
    const GraphItem* conv = model.findItem(QStringLiteral("hybridsequential0_conv0_fwd"));
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->title, QStringLiteral("Convolution"));
    EXPECT_EQ(conv->shape, QStringLiteral("(1, 10, 24, 24)"));
    EXPECT_EQ(model.findItem(QStringLiteral("hybridsequential0_conv0_weight")), nullptr);
    // Edges carry the shapes of the tensors on them.
    bool labelled = false;
    for (const GraphEdge& e : model.edges())
        labelled = labelled
            || (e.to == QStringLiteral("hybridsequential0_conv0_tanh_fwd")
                && e.label == QStringLiteral("(1, 10, 24, 24)"));
    EXPECT_TRUE(labelled);
    QSignalSpy structure(&model, &GraphModel::structureChanged);
    model.setShowParameters(true);
    EXPECT_EQ(structure.count(), 1);
    EXPECT_EQ(model.visibleCount(), static_cast<int>(m->graph->size()));
    EXPECT_NE(model.findItem(QStringLiteral("hybridsequential0_conv0_weight")), nullptr);
}

TEST(GraphModel, CollapseAndExpandChangeTheVisibleCount)
{
    const ModelInfoPtr m = loadModelInfo(QStringLiteral("sample:mini-resnet"));
    GraphModel model;
    model.setGraph(m->graph, m->entryShapes);
    model.expandToShow(QString::fromStdString(m->graph->nodes().back().name));
    const int before = model.visibleCount();
    // Pick an expanded block with more than one op: collapsing it leaves one item in place of its ops.
    QString block;
    for (const QString& p : model.blockPaths())
        if (model.isExpanded(p) && model.blockOpCount(p) > 1 && p.contains(QLatin1Char('/'))) {
            block = p;
            break;
        }
    ASSERT_FALSE(block.isEmpty());
    const int inside = model.blockOpCount(block);
    // Count what is visible inside the block now (ops, or nested collapsed blocks).
    int visibleInside = 0;
    for (const GraphItem& item : model.items())
        if (item.blockPath == block || item.blockPath.startsWith(block + QLatin1Char('/'))) ++visibleInside;
    ASSERT_GT(inside, 1);
    model.setExpanded(block, false);
    EXPECT_EQ(model.visibleCount(), before - visibleInside + 1);
    const GraphItem* item = model.findItem(QStringLiteral("block:") + block);
    ASSERT_NE(item, nullptr);
    EXPECT_EQ(item->kind, GraphItemKind::Block);
    EXPECT_EQ(item->opCount, inside);
    // A node inside is now shown by the block's item.
    QString inner;
    for (const Node& n : m->graph->nodes())
        if (!n.isVariable() && QString::fromStdString(n.blockPath).startsWith(block)) {
            inner = QString::fromStdString(n.name);
            break;
        }
    ASSERT_FALSE(inner.isEmpty());
    EXPECT_EQ(model.itemKeyForNode(inner), QStringLiteral("block:") + block);
    model.setExpanded(block, true);
    EXPECT_EQ(model.visibleCount(), before);
    EXPECT_EQ(model.itemKeyForNode(inner), inner);
}

TEST(GraphModel, AGraphOfThousandsOfOpsOpensWithAtMost150Items)
{
    auto g = bigGraph(60, 50); // 3,000 ops
    GraphModel model;
    model.setGraph(g);
    EXPECT_LE(model.visibleCount(), GraphModel::kDefaultMaxVisible);
    EXPECT_GE(model.visibleCount(), 2);
    // Expanding to show one node opens only what it takes.
    model.expandToShow(QStringLiteral("block42_relu7"));
    EXPECT_EQ(model.itemKeyForNode(QStringLiteral("block42_relu7")), QStringLiteral("block42_relu7"));
    EXPECT_LT(model.visibleCount(), 300);
}

TEST(GraphModel, MarksAggregateOnCollapsedBlocks)
{
    auto g = bigGraph(3, 4);
    GraphModel model;
    model.setGraph(g);
    model.beginMarkUpdate();
    model.setBreakpointMark(QStringLiteral("block1_relu2"), BreakMark::Enabled, true);
    model.setExecuted(QStringLiteral("block1_relu0"), false);
    model.setExecuted(QStringLiteral("block1_relu1"), true);
    model.endMarkUpdate();
    NodeMarks m = model.marks(QStringLiteral("block1_relu2"));
    EXPECT_EQ(m.breakpoint, BreakMark::Enabled);
    EXPECT_TRUE(m.conditional);
    EXPECT_TRUE(model.marks(QStringLiteral("block1_relu1")).nanInf);
    model.setExpanded(QStringLiteral("net/block1"), false);
    const QString key = model.itemKeyForNode(QStringLiteral("block1_relu2"));
    ASSERT_TRUE(key.startsWith(QStringLiteral("block:")));
    m = model.marks(key);
    EXPECT_EQ(m.breakpoint, BreakMark::Enabled);
    EXPECT_TRUE(m.nanInf);
    model.setPausedNode(QStringLiteral("block1_relu3"));
    EXPECT_EQ(
        model.itemKeyForNode(QStringLiteral("block1_relu3")), QStringLiteral("block1_relu3")); // expanded to show it
    EXPECT_TRUE(model.marks(QStringLiteral("block1_relu3")).paused);
    model.clearRunMarks();
    EXPECT_FALSE(model.marks(QStringLiteral("block1_relu1")).executed);
    EXPECT_EQ(model.pausedNode(), QString());
}

TEST(GraphPanel, FindSelectsTheMatchingNodesInTurn)
{
    const ModelInfoPtr m = loadModelInfo(QStringLiteral("sample:lenet"));
    GraphPanel panel;
    panel.resize(900, 700);
    panel.show();
    QSignalSpy laidOut(panel.view(), &GraphView::layoutFinished);
    panel.model()->setGraph(m->graph, m->entryShapes);
    ASSERT_TRUE(laidOut.wait(kWaitMs));
    EXPECT_TRUE(panel.view()->layoutError().isEmpty()) << panel.view()->layoutError().toStdString();
    panel.showFind();
    ASSERT_TRUE(panel.findNext(QStringLiteral("pooling")));
    EXPECT_EQ(panel.findMatchCount(), 2);
    EXPECT_EQ(panel.currentFindMatch(), QStringLiteral("hybridsequential0_pool0_fwd"));
    EXPECT_EQ(panel.view()->selectedNode(), QStringLiteral("hybridsequential0_pool0_fwd"));
    ASSERT_TRUE(panel.findNext(QStringLiteral("pooling")));
    EXPECT_EQ(panel.view()->selectedNode(), QStringLiteral("hybridsequential0_pool1_fwd"));
    ASSERT_TRUE(panel.findPrevious());
    EXPECT_EQ(panel.view()->selectedNode(), QStringLiteral("hybridsequential0_pool0_fwd"));
    ASSERT_TRUE(panel.findNext(QStringLiteral("conv1_fwd")));
    EXPECT_EQ(panel.view()->selectedNode(), QStringLiteral("hybridsequential0_conv1_fwd"));
    EXPECT_FALSE(panel.findNext(QStringLiteral("no such node")));
    EXPECT_EQ(panel.findMatchCount(), 0);
}

TEST(GraphView, LaysOutEveryVisibleItemAndExportsPngAndSvg)
{
    const ModelInfoPtr m = loadModelInfo(QStringLiteral("sample:mini-resnet"));
    GraphPanel panel;
    panel.resize(1000, 800);
    panel.show();
    QSignalSpy laidOut(panel.view(), &GraphView::layoutFinished);
    panel.model()->setGraph(m->graph, m->entryShapes);
    ASSERT_TRUE(laidOut.wait(kWaitMs));
    for (const GraphItem& item : panel.model()->items())
        EXPECT_TRUE(panel.view()->itemSceneRect(item.key).isValid()) << item.key.toStdString();
    QTemporaryDir dir;
    QString error;
    const QString png = dir.filePath(QStringLiteral("g.png"));
    ASSERT_TRUE(panel.view()->exportPng(png, &error)) << error.toStdString();
    const QImage image(png);
    ASSERT_FALSE(image.isNull());
    EXPECT_GT(image.width(), 100);
    const QString svg = dir.filePath(QStringLiteral("g.svg"));
    ASSERT_TRUE(panel.view()->exportSvg(svg, &error)) << error.toStdString();
    QFile f(svg);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    EXPECT_TRUE(text.startsWith("<?xml") || text.startsWith("<svg"));
    EXPECT_TRUE(text.contains("</svg>"));
    // Every visible op's name is written out.
    for (const GraphItem& item : panel.model()->items()) {
        if (item.kind != GraphItemKind::Op) continue;
        EXPECT_TRUE(text.contains(item.title.toUtf8())) << item.title.toStdString();
    }
    EXPECT_FALSE(panel.view()->exportPng(QStringLiteral("/nonexistent/dir/g.png"), &error));
    EXPECT_FALSE(error.isEmpty());
}

TEST(GraphPanel, ExpandAllOpensEveryBlockOfAThreeThousandOpGraph)
{
    GraphPanel panel;
    panel.resize(1000, 800);
    panel.show();
    QSignalSpy laidOut(panel.view(), &GraphView::layoutFinished);
    panel.model()->setGraph(bigGraph(60, 50)); // 3,000 ops in 60 blocks under one
    ASSERT_TRUE(laidOut.wait(kWaitMs));
    ASSERT_LE(panel.model()->visibleCount(), GraphModel::kDefaultMaxVisible);
    QAction* expandAll = toolBarAction(panel, QStringLiteral("Expand All"));
    ASSERT_NE(expandAll, nullptr);
    laidOut.clear();
    expandAll->trigger();
    // Every op and the input, laid out off the GUI thread.
    EXPECT_EQ(panel.model()->visibleCount(), 3001);
    QStringList closed;
    for (const QString& path : panel.model()->blockPaths())
        if (!panel.model()->isExpanded(path)) closed << path;
    EXPECT_TRUE(closed.isEmpty()) << closed.join(QLatin1Char(' ')).toStdString();
    ASSERT_TRUE(laidOut.wait(120000));
    EXPECT_TRUE(panel.view()->layoutError().isEmpty()) << panel.view()->layoutError().toStdString();
    EXPECT_TRUE(panel.view()->itemSceneRect(QStringLiteral("block59_relu49")).isValid());
    EXPECT_TRUE(panelNotice(panel).contains(QLocale().toString(3000) + QStringLiteral(" ops")))
        << panelNotice(panel).toStdString();
    // Again: nothing left to open, and it says so.
    expandAll->trigger();
    EXPECT_TRUE(panelNotice(panel).contains(QStringLiteral("already"))) << panelNotice(panel).toStdString();
    // Collapse All takes the notice away.
    toolBarAction(panel, QStringLiteral("Collapse All"))->trigger();
    EXPECT_TRUE(panelNotice(panel).isEmpty());
}

TEST(GraphPanel, ExpandAllSaysWhyItStopsOnAGraphTooLargeToLayOut)
{
    GraphPanel panel;
    panel.resize(1000, 800);
    panel.show();
    QSignalSpy laidOut(panel.view(), &GraphView::layoutFinished);
    panel.model()->setGraph(bigGraph(2, GraphPanel::kExpandAllLimit)); // two blocks, too large together
    ASSERT_TRUE(laidOut.wait(kWaitMs));
    const int before = panel.model()->visibleCount();
    toolBarAction(panel, QStringLiteral("Expand All"))->trigger();
    // Whole levels while they fit; what stopped it is said, with the numbers.
    EXPECT_LE(panel.model()->visibleCount(), GraphPanel::kExpandAllLimit);
    EXPECT_GE(panel.model()->visibleCount(), before);
    const QString notice = panelNotice(panel);
    EXPECT_TRUE(notice.contains(QStringLiteral("too large to expand fully"))) << notice.toStdString();
    EXPECT_TRUE(notice.contains(QLocale().toString(2 * GraphPanel::kExpandAllLimit) + QStringLiteral(" ops")))
        << notice.toStdString();
    EXPECT_TRUE(notice.contains(QStringLiteral("double-click a block"))) << notice.toStdString();
}
