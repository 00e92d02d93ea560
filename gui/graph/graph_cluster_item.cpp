#include "gui/graph/graph_cluster_item.h"

#include "gui/graph/graph_style.h"

#include <QFontMetricsF>
#include <QGraphicsSceneHoverEvent>
#include <QPainter>

namespace opscope::gui {

GraphClusterItem::GraphClusterItem(LayoutResult::Cluster cluster)
    : m_cluster(std::move(cluster))
    , m_labelRect(GraphStyle::clusterLabelRect(m_cluster.rect, m_cluster.label))
{
    setAcceptedMouseButtons(Qt::NoButton);
    setAcceptHoverEvents(true);
    setToolTip(QStringLiteral("<b>%1</b><br>block %2<br><i>Double-click the name to collapse</i>")
                   .arg(m_cluster.label.toHtmlEscaped(), m_cluster.path.toHtmlEscaped()));
}

void GraphClusterItem::hoverMoveEvent(QGraphicsSceneHoverEvent* event)
{
    const bool over = m_labelRect.contains(event->pos());
    if (over == m_labelHovered) return;
    m_labelHovered = over;
    update(m_labelRect);
}

void GraphClusterItem::hoverLeaveEvent(QGraphicsSceneHoverEvent*)
{
    if (!m_labelHovered) return;
    m_labelHovered = false;
    update(m_labelRect);
}

void GraphClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    painter->setRenderHint(QPainter::Antialiasing);
    const double r = GraphStyle::kClusterRadius;
    painter->setPen(QPen(GraphStyle::clusterBorder(), 1.0));
    painter->setBrush(GraphStyle::clusterFill(m_cluster.depth));
    painter->drawRoundedRect(m_cluster.rect.adjusted(0.5, 0.5, -0.5, -0.5), r, r);

    if (m_labelHovered) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(0x6b, 0x7c, 0x93, 40));
        painter->drawRoundedRect(m_labelRect, 4, 4);
    }
    // A small "−" before the name: the frame closes.
    const QPointF c(m_labelRect.left() + 8, m_labelRect.center().y());
    painter->setPen(QPen(GraphStyle::textColor(GraphStyle::Role::Cluster), 1.4, Qt::SolidLine, Qt::RoundCap));
    painter->drawLine(c - QPointF(3.5, 0), c + QPointF(3.5, 0));
    painter->setFont(GraphStyle::font(GraphStyle::Role::Cluster));
    painter->setPen(GraphStyle::textColor(GraphStyle::Role::Cluster));
    const QRectF textRect = m_labelRect.adjusted(16, 0, 0, 0);
    const QString label = QFontMetricsF(painter->font()).elidedText(m_cluster.label, Qt::ElideRight, textRect.width());
    painter->drawText(textRect, Qt::AlignVCenter | Qt::AlignLeft, label);
}

} // namespace opscope::gui
