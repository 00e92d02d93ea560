// Fusion groups in the window: a model's chains (what runs fused outside the window, where nothing
// watches) are found at load and framed in the graph, one frame per group whose nodes are shown.
#include "gui/graph/graph_model.h"
#include "gui/graph/graph_panel.h"
#include "gui/graph/graph_view.h"
#include "gui/session/model_info.h"

#include <gtest/gtest.h>

#include <QSignalSpy>

using namespace opscope;
using namespace opscope::gui;

namespace {
constexpr int kWaitMs = 30000;

std::vector<std::vector<std::string>> groupNames(const ModelInfo& m)
{
    std::vector<std::vector<std::string>> out;
    for (const fusion::Chain& c : m.fusionChains) {
        std::vector<std::string> names { m.graph->node(c.producer).name };
        for (uint32_t id : c.nodes())
            names.push_back(m.graph->node(id).name);
        out.push_back(names);
    }
    return out;
}
}

TEST(FusionFrames, AModelsChainsAreFoundAtLoad)
{
    const ModelInfoPtr m = loadModelInfo(QStringLiteral("sample:mini-resnet"));
    const auto groups = groupNames(*m);
    ASSERT_EQ(groups.size(), 5u);
    const std::string p = "hybridsequential0_";
    EXPECT_EQ(groups[0], (std::vector<std::string> { p + "conv0_fwd", p + "batchnorm0_fwd", p + "relu0_fwd" }));
    const std::string r = p + "residualunit0_";
    EXPECT_EQ(groups[2],
        (std::vector<std::string> { r + "conv1_fwd", r + "batchnorm1_fwd", r + "elemwise_add0", r + "activation1" }));
    EXPECT_EQ(fusion::describe(*m->graph, m->fusionChains[2]), "BatchNorm (a per-channel scale and shift), add (the residual), relu");
    // lenet: each convolution and each dense layer with its tanh.
    const ModelInfoPtr lenet = loadModelInfo(QStringLiteral("sample:lenet"));
    EXPECT_EQ(groupNames(*lenet).size(), 4u);
}

TEST(FusionFrames, EachShownGroupGetsOneFrameNamingTheFusion)
{
    const ModelInfoPtr m = loadModelInfo(QStringLiteral("sample:mini-resnet"));
    GraphPanel panel;
    panel.resize(1000, 900);
    panel.show();
    QSignalSpy laidOut(panel.view(), &GraphView::layoutFinished);
    panel.model()->setGraph(m->graph, m->entryShapes);
    std::vector<FusionGroup> groups;
    for (const auto& names : groupNames(*m)) {
        FusionGroup f;
        for (const std::string& n : names)
            f.nodes << QString::fromStdString(n);
        f.tip = f.nodes.join(QStringLiteral(" + "));
        groups.push_back(f);
    }
    panel.model()->setFusionGroups(groups);
    ASSERT_TRUE(laidOut.wait(kWaitMs));
    // Every group whose nodes are all shown has its frame; none is drawn for a hidden node.
    int shown = 0;
    for (const FusionGroup& f : groups) {
        bool all = true;
        for (const QString& n : f.nodes)
            all = all && panel.model()->itemKeyForNode(n) == n;
        shown += all ? 1 : 0;
    }
    EXPECT_GT(shown, 0);
    EXPECT_EQ(panel.view()->fusionFrameTips().size(), shown);
    EXPECT_TRUE(panel.view()->fusionFrameTips().contains(groups[0].tip));
    // A new graph drops the groups (they belong to the old one).
    panel.model()->setGraph(m->graph, m->entryShapes);
    EXPECT_TRUE(panel.model()->fusionGroups().empty());
    ASSERT_TRUE(laidOut.wait(kWaitMs));
    EXPECT_TRUE(panel.view()->fusionFrameTips().isEmpty());
}
