#include "gui/graph/graph_edge_item.h"

#include "gui/graph/graph_style.h"

#include <QFontMetricsF>
#include <QPainter>

namespace opscope::gui {

GraphEdgeItem::GraphEdgeItem(LayoutResult::Edge edge)
    : m_edge(std::move(edge))
{
    setAcceptedMouseButtons(Qt::NoButton);
    if (m_edge.arrow) m_arrow = GraphStyle::arrowHead(m_edge.path);
    if (!m_edge.label.isEmpty()) {
        const QFontMetricsF fm(GraphStyle::font(GraphStyle::Role::Edge));
        const QSizeF size(fm.horizontalAdvance(m_edge.label), fm.height());
        m_labelRect = QRectF(m_edge.labelPos - QPointF(size.width() / 2, size.height() / 2), size);
    }
    m_bounds = m_edge.path.boundingRect().united(m_arrow.boundingRect()).united(m_labelRect).adjusted(-3, -3, 3, 3);
}

void GraphEdgeItem::setHighlighted(bool highlighted)
{
    if (highlighted == m_highlighted) return;
    m_highlighted = highlighted;
    setZValue(highlighted ? 0.5 : 0.0);
    update();
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    painter->setRenderHint(QPainter::Antialiasing);
    const QColor color = m_highlighted ? GraphStyle::selectionColor() : GraphStyle::edgeColor();
    painter->setPen(QPen(color, m_highlighted ? 1.8 : 1.2, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(m_edge.path);
    if (!m_arrow.isEmpty()) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(color);
        painter->drawPolygon(m_arrow);
    }
    if (!m_labelRect.isEmpty()) {
        painter->setFont(GraphStyle::font(GraphStyle::Role::Edge));
        painter->setPen(m_highlighted ? color : GraphStyle::textColor(GraphStyle::Role::Edge));
        painter->drawText(m_labelRect, Qt::AlignCenter, m_edge.label);
    }
}

} // namespace opscope::gui
