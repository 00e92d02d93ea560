#pragma once

#include "gui/graph/graph_model.h"

#include <QGraphicsItem>
#include <QPointer>

namespace opscope::gui {

/// One box of the graph scene: an op, a variable or a collapsed block. Reads its debugger marks from
/// the model at paint time, so mark changes need only a repaint. Mouse buttons are handled by the
/// view (drag pans everywhere); the item only takes hover.
class GraphNodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };

    GraphNodeItem(GraphItem item, const QSizeF& size, GraphModel* model);

    int type() const override { return Type; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    const GraphItem& item() const { return m_item; }
    QSizeF size() const { return m_size; }
    /// The front card in scene coordinates.
    QRectF sceneCardRect() const;
    /// True when a point (item coordinates) is in the breakpoint gutter of an op.
    bool inGutter(const QPointF& local) const;
    void setSelected(bool selected);
    bool isSelectedNode() const { return m_selected; }

protected:
    void hoverEnterEvent(QGraphicsSceneHoverEvent* event) override;
    void hoverLeaveEvent(QGraphicsSceneHoverEvent* event) override;

private:
    void paintCard(QPainter* painter, const QRectF& card, const NodeMarks& marks) const;
    void paintMarks(QPainter* painter, const QRectF& card, const NodeMarks& marks) const;

    GraphItem m_item;
    QSizeF m_size;
    QPointer<GraphModel> m_model;
    bool m_selected = false;
    bool m_hovered = false;
};

} // namespace opscope::gui
