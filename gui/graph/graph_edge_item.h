#pragma once

#include "gui/graph/graph_layout.h"

#include <QGraphicsItem>

namespace opscope::gui {

/// An edge of the graph scene: a dot spline with an arrowhead and its shape label in small grey text.
class GraphEdgeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 2 };

    explicit GraphEdgeItem(LayoutResult::Edge edge);

    int type() const override { return Type; }
    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    const LayoutResult::Edge& edge() const { return m_edge; }
    /// Drawn in the selection colour (an edge of the selected item).
    void setHighlighted(bool highlighted);
    /// Rect of the label text in scene coordinates (empty without a label).
    QRectF labelRect() const { return m_labelRect; }

private:
    LayoutResult::Edge m_edge;
    QPolygonF m_arrow;
    QRectF m_labelRect;
    QRectF m_bounds;
    bool m_highlighted = false;
};

} // namespace opscope::gui
