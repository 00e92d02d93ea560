#pragma once

#include "gui/graph/graph_layout.h"

#include <QGraphicsItem>

namespace opscope::gui {

/// The frame of an expanded block: a light rounded rectangle with the block's name in a tab at the
/// top-left; double-clicking the tab collapses the block (handled by the view).
class GraphClusterItem : public QGraphicsItem {
public:
    enum { Type = UserType + 3 };

    explicit GraphClusterItem(LayoutResult::Cluster cluster);

    int type() const override { return Type; }
    QRectF boundingRect() const override { return m_cluster.rect.adjusted(-1, -1, 1, 1); }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    const LayoutResult::Cluster& cluster() const { return m_cluster; }
    /// The name tab in scene coordinates.
    QRectF labelRect() const { return m_labelRect; }

protected:
    void hoverMoveEvent(QGraphicsSceneHoverEvent* event) override;
    void hoverLeaveEvent(QGraphicsSceneHoverEvent* event) override;

private:
    LayoutResult::Cluster m_cluster;
    QRectF m_labelRect;
    bool m_labelHovered = false;
};

} // namespace opscope::gui
