#pragma once

#include "graph/graph.h"
#include "gui/graph/block_tree.h"
#include "tensor/shape.h"

#include <memory>
#include <vector>

#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>

namespace opscope::gui {

enum class GraphItemKind { Op, Variable, Block };

/// One visible box of the graph view.
struct GraphItem {
    QString key; ///< node name for Op/Variable; "block:" + path for a collapsed block
    GraphItemKind kind = GraphItemKind::Op;
    QString title; ///< operator (Op), "Input"/"Parameter" (Variable), block name (Block)
    QString name; ///< node name or block path
    QString shape; ///< first output's shape text, or "12 ops" for a collapsed block
    QString family;
    int opCount = 0; ///< collapsed block: op nodes inside
    int nodeId = -1; ///< graph node id; -1 for a block
    QString blockPath; ///< the expanded block this item sits in ("" at top level), for clusters
    QString detail; ///< short attribute summary of an op ("relu", "max 2×2", "5×5 /2"), may be empty
    bool parameter = false; ///< a Variable that is a parameter or auxiliary state
};

/// Nodes that run as one kernel when nothing watches them (the executor's fusion), drawn as one
/// frame around their boxes.
struct FusionGroup {
    QStringList nodes; ///< the producer first, then what is folded into it
    QString tip;
};

/// An edge between two visible items (keys), labelled with the shape it carries.
struct GraphEdge {
    QString from;
    QString to;
    QString label;
};

enum class BreakMark { None, Enabled, Disabled };

/// Debugger state shown on one item. For a collapsed block it aggregates the ops inside.
struct NodeMarks {
    BreakMark breakpoint = BreakMark::None;
    bool conditional = false;
    bool executed = false;
    bool nanInf = false;
    bool paused = false;
    /// A comparison is shown (GraphModel::setDivergence): the card is coloured by `divergence`, a
    /// severity in [0, 1] (a block: its worst op), or grey where < 0 (nothing of it compared).
    bool compared = false;
    float divergence = -1;
    bool firstDivergent = false; ///< where the compared runs part ways (a block: it holds that op)
};

/// What the graph view shows, independent of any view (usable headless): which blocks are expanded,
/// the visible items and edges, and the debugger marks (breakpoints, executed, NaN/Inf, paused).
/// Blocks come from BlockTree; a block holding a single op is never shown collapsed. GUI thread only.
class GraphModel : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultMaxVisible = 150;

    explicit GraphModel(QObject* parent = nullptr);
    ~GraphModel() override;

    /// Resets marks and expansion, then expandToFit(). `entryShapes` is indexed by Graph::entryId and may
    /// be empty or hold unknown shapes. Emits graphChanged() then structureChanged().
    void setGraph(std::shared_ptr<const Graph> graph, std::vector<Shape> entryShapes = {});
    /// New shapes for the same graph (after a run); edge and box labels change.
    void setEntryShapes(std::vector<Shape> entryShapes);
    std::shared_ptr<const Graph> graph() const { return m_graph; }
    void clear();

    void setShowParameters(bool show);
    bool showParameters() const { return m_showParameters; }

    /// Every block path and each prefix of it, parents before children, in graph order.
    QStringList blockPaths() const { return m_tree.order(); }
    /// Ops inside a block (all levels); 0 for an unknown path.
    int blockOpCount(const QString& path) const;
    /// True for an expanded block, and for a block holding one op (always shown open).
    bool isExpanded(const QString& path) const;
    void setExpanded(const QString& path, bool expanded);
    void toggleExpanded(const QString& path);
    /// Expands every ancestor block of the node.
    void expandToShow(const QString& nodeName);
    /// Opens block levels breadth-first, as deep as keeps visibleCount() <= maxVisible (whole levels).
    void expandToFit(int maxVisible = kDefaultMaxVisible);
    /// What expandAll() did: `levelsOpened` of `levels` block levels are open; `complete` when every
    /// block is, `fullCount` the boxes that would take; `changed` when anything opened.
    struct ExpandResult {
        bool complete = false;
        bool changed = false;
        int levels = 0;
        int levelsOpened = 0;
        int visible = 0;
        int fullCount = 0;
        int opCount = 0;
    };
    /// Opens every block when that keeps visibleCount() <= maxVisible, else as many whole levels as
    /// do (expandToFit), and says which.
    ExpandResult expandAll(int maxVisible);
    /// Collapses every block; a lone top-level block is opened while that fits kDefaultMaxVisible.
    void collapseAll();

    const std::vector<GraphItem>& items() const { return m_items; }
    const std::vector<GraphEdge>& edges() const { return m_edges; }
    int visibleCount() const { return static_cast<int>(m_items.size()); }
    /// Key of the visible item showing the node: itself or its collapsed ancestor block;
    /// "" for a hidden parameter or an unknown name.
    QString itemKeyForNode(const QString& nodeName) const;
    /// Fusion groups to frame (cleared by setGraph; set after it, before the layout is done).
    void setFusionGroups(std::vector<FusionGroup> groups) { m_fusion = std::move(groups); }
    const std::vector<FusionGroup>& fusionGroups() const { return m_fusion; }
    /// The key of a collapsed block's item: "block:" + path.
    static QString blockKey(const QString& path) { return QStringLiteral("block:") + path; }
    /// The visible item with this key, or nullptr. Valid until the next structureChanged().
    const GraphItem* findItem(const QString& key) const;
    /// Graph node id of a name, -1 when unknown.
    int nodeId(const QString& nodeName) const;
    /// True for a variable that is a parameter or auxiliary state (hidden unless showParameters()).
    bool isParameter(int nodeId) const;

    /// Mark updates between begin and end emit one marksChanged() at the outermost end (if anything
    /// changed). Use it when marking many nodes, e.g. every node a run executed. Calls nest.
    void beginMarkUpdate();
    void endMarkUpdate();
    void setBreakpointMark(const QString& node, BreakMark mark, bool conditional = false);
    void clearBreakpointMarks();
    void setExecuted(const QString& node, bool nanInf = false);
    /// Clears executed, NaN/Inf and paused.
    void clearRunMarks();
    /// "" for none; also expands the blocks around the node so it is visible.
    void setPausedNode(const QString& node);
    QString pausedNode() const;
    /// Marks of a visible item (node name or "block:" key); a block aggregates its ops: any breakpoint,
    /// executed when all are, any NaN/Inf, paused when the paused node is inside.
    NodeMarks marks(const QString& key) const;

    /// Colours the ops by divergence: a severity in [0, 1] per node id (< 0: not compared), and the
    /// first divergent node (-1: none). Cleared by setGraph() and clearDivergence().
    void setDivergence(std::vector<float> severityByNode, int firstDivergent);
    void clearDivergence();
    bool hasDivergence() const { return m_compared; }

    /// Node names (ops and variables) whose name, or operator for ops, contains `text`
    /// (case-insensitive): the ops in graph order, then the variables (inputs, parameters).
    QStringList find(const QString& text) const;

signals:
    /// A different graph was set (or cleared); followed by structureChanged().
    void graphChanged();
    /// Items or edges changed: lay out again.
    void structureChanged();
    /// Marks changed: repaint only.
    void marksChanged();
    void showParametersChanged(bool show);

private:
    struct Visible {
        std::vector<GraphItem> items;
        std::vector<int> nodeItem; ///< item index per node id, -1 hidden
    };

    void buildIndex();
    bool isOpen(const QString& path, const QSet<QString>& expanded) const;
    QString clusterPathOf(const QString& path) const;
    QSet<QString> fitSet(int maxVisible) const;
    QSet<QString> collapsedSet() const;
    Visible computeVisible(const QSet<QString>& expanded) const;
    void rebuild();
    void setExpandedSet(QSet<QString> expanded);
    void emitMarksChanged();
    QString shapeText(uint32_t node, uint32_t index) const;

    std::shared_ptr<const Graph> m_graph;
    std::vector<Shape> m_shapes;
    std::vector<FusionGroup> m_fusion;
    bool m_showParameters = false;

    BlockTree m_tree;
    std::vector<QString> m_keys; ///< item key per node id (the name; made unique on duplicates)
    std::vector<bool> m_parameter;
    QHash<QString, int> m_nameToId;
    QSet<QString> m_expanded;

    std::vector<GraphItem> m_items;
    std::vector<GraphEdge> m_edges;
    QHash<QString, int> m_itemIndex;
    std::vector<int> m_nodeItem;

    std::vector<NodeMarks> m_marks;
    int m_pausedId = -1;
    bool m_compared = false;
    std::vector<float> m_divergence;
    int m_firstDivergent = -1;
    int m_markUpdateDepth = 0;
    bool m_marksDirty = false;
};

} // namespace opscope::gui
