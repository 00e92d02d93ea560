#pragma once

#include "exec/observer.h"
#include "gui/graph/graph_layout.h"
#include "gui/graph/graph_model.h"

#include <vector>

#include <QGraphicsView>
#include <QHash>
#include <QPointer>

class QGraphicsPathItem;
class QMenu;

namespace opscope::gui {

class GraphClusterItem;
class GraphEdgeItem;
class GraphNodeItem;

/// Draws a GraphModel: lays it out with Graphviz off the GUI thread whenever its structure changes and
/// rebuilds the scene when the latest layout arrives (layoutFinished()). Marks repaint without a
/// relayout. Wheel zooms around the cursor, dragging pans, F fits, +/- zoom. A click selects, a click
/// in an op's left gutter asks to toggle its breakpoint, a double-click opens a collapsed block, and a
/// double-click on an expanded block's name tab closes it. The model is not owned.
class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);
    ~GraphView() override;

    void setModel(GraphModel* model);
    /// The tooltips of the fusion frames drawn (GraphModel::fusionGroups whose nodes are all shown).
    QStringList fusionFrameTips() const;
    GraphModel* model() const { return m_model; }

    /// Selects a node (expanding its blocks, showing parameters if it is one) and, with `center`,
    /// scrolls it to the middle once laid out. Emits nodeSelected() when the selection changes.
    void selectNode(const QString& nodeName, bool center = true);
    /// Selected node name ("" when none or when a block is selected).
    QString selectedNode() const { return m_selectedNode; }
    QString selectedBlock() const { return m_selectedBlock; }

    void zoomIn();
    void zoomOut();
    void resetZoom();
    void fitToView();
    double zoomFactor() const;
    void setZoomFactor(double factor);

    /// Renders the whole scene at twice its size on white.
    bool exportPng(const QString& path, QString* error = nullptr);
    bool exportSvg(const QString& path, QString* error = nullptr);

    /// True from a structure change until the scene for it is built.
    bool isLayoutPending() const { return m_pendingGeneration != 0; }
    /// The error of the last layout ("" when it succeeded); shown in the view instead of a graph.
    QString layoutError() const { return m_layout.error; }
    /// The laid-out geometry currently shown.
    const LayoutResult& currentLayout() const { return m_layout; }
    /// Scene rect of a shown item's box (front card), empty when not shown.
    QRectF itemSceneRect(const QString& itemKey) const;
    /// Item key under a viewport position ("" when none).
    QString itemKeyAt(const QPoint& viewportPos) const;
    /// The context menu's actions for what is under a viewport position (used by contextMenuEvent).
    void fillContextMenu(QMenu* menu, const QPoint& viewportPos);
    /// The shown item under a viewport position (valid until the next scene rebuild), or nullptr.
    const GraphItem* shownItemAt(const QPoint& viewportPos) const;
    /// Path of the innermost expanded block whose frame is under a viewport position ("" when none).
    QString clusterPathAt(const QPoint& viewportPos) const;
    /// Opens or closes a block, keeping it where it is on screen.
    void expandBlock(const QString& path);
    void collapseBlock(const QString& path);

signals:
    void nodeSelected(const QString& nodeName);
    void blockSelected(const QString& blockPath);
    /// Double-click on an op or variable.
    void nodeActivated(const QString& nodeName);
    void breakpointToggleRequested(const QString& nodeName, opscope::OpPhase phase);
    void breakpointConditionRequested(const QString& nodeName);
    void runToRequested(const QString& nodeName);
    /// Compare the model with itself with `target` (a node or an operator's name) computing in
    /// float16, or bfloat16 when `bf16`.
    void precisionCompareRequested(const QString& target, bool bf16);
    /// A scene was built from a finished layout (also after a failed one).
    void layoutFinished();

protected:
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    struct Anchor {
        bool valid = false;
        QString key; ///< item key to find again
        QString nodeName; ///< a node whose (new) item stands in when the key is gone
        QString blockPath; ///< a block whose frame or box stands in
        QPointF viewportPos;
    };

    void onGraphChanged();
    void onStructureChanged();
    void onMarksChanged();
    void onLayoutReady(const LayoutResult& result);
    void requestLayout();
    void buildScene(const LayoutResult& result);
    void placeViewAfterLayout();
    void showInitialView();
    void applySelection();
    void handleClick(const QPoint& viewportPos);
    void expandBlockAt(const QString& path, const QPointF& anchorScenePos);
    void collapseBlockAt(const QString& path, const QPointF& anchorScenePos);
    void captureDefaultAnchor();
    bool restoreAnchor();
    void reveal(const QString& nodeName, bool forceCenter);
    void scaleBy(double factor);
    GraphNodeItem* nodeItemAt(const QPoint& viewportPos) const;
    GraphClusterItem* clusterAt(const QPoint& viewportPos, bool labelOnly) const;
    void addFusionFrames();

    QPointer<GraphModel> m_model;
    GraphLayouter* m_layouter = nullptr;
    QGraphicsScene* m_scene = nullptr;

    quint64 m_pendingGeneration = 0;
    std::vector<GraphItem> m_requestedItems;
    std::vector<GraphItem> m_items;
    LayoutResult m_layout;
    QHash<QString, GraphNodeItem*> m_nodeItems;
    std::vector<GraphEdgeItem*> m_edgeItems;
    std::vector<GraphClusterItem*> m_clusterItems;
    std::vector<QGraphicsPathItem*> m_fusionFrames;

    QString m_selectedNode;
    QString m_selectedBlock;
    QString m_revealNode; ///< reveal after the pending layout
    bool m_revealCenter = false;
    bool m_initialView = true;
    Anchor m_anchor;
    QString m_lastPaused;
    QPoint m_pressPos;
    bool m_pressed = false;
};

} // namespace opscope::gui
