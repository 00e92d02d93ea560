#include "gui/graph/graph_node_item.h"

#include "gui/graph/graph_style.h"

#include <QPainter>
#include <QPainterPath>

namespace opscope::gui {

namespace {

QString tooltipFor(const GraphItem& item)
{
    auto esc = [](const QString& s) { return s.toHtmlEscaped(); };
    QString text;
    if (item.kind == GraphItemKind::Block) {
        text = QStringLiteral("<b>%1</b><br>block %2<br>%3<br><i>Double-click to expand</i>")
                   .arg(esc(item.title), esc(item.name), esc(item.shape));
        return text;
    }
    text = QStringLiteral("<b>%1</b>").arg(esc(item.name));
    text += QStringLiteral("<br>%1").arg(esc(item.kind == GraphItemKind::Op ? item.title : item.title.toLower()));
    if (!item.detail.isEmpty()) text += QStringLiteral(" (%1)").arg(esc(item.detail));
    if (!item.shape.isEmpty()) text += QStringLiteral("<br>output %1").arg(esc(item.shape));
    if (!item.blockPath.isEmpty()) text += QStringLiteral("<br>in %1").arg(esc(item.blockPath));
    return text;
}

} // namespace

GraphNodeItem::GraphNodeItem(GraphItem item, const QSizeF& size, GraphModel* model)
    : m_item(std::move(item))
    , m_size(size)
    , m_model(model)
{
    setAcceptedMouseButtons(Qt::NoButton);
    setAcceptHoverEvents(true);
    setToolTip(tooltipFor(m_item));
}

QRectF GraphNodeItem::boundingRect() const
{
    // Room for the shadow, the selection halo and the NaN badge above the top-right corner.
    return QRectF(QPointF(0, 0), m_size).adjusted(-5, -9, 10, 6);
}

QPainterPath GraphNodeItem::shape() const
{
    QPainterPath path;
    path.addRoundedRect(GraphStyle::cardRect(m_item, m_size), GraphStyle::kRadius, GraphStyle::kRadius);
    return path;
}

QRectF GraphNodeItem::sceneCardRect() const
{
    return mapRectToScene(GraphStyle::cardRect(m_item, m_size));
}

bool GraphNodeItem::inGutter(const QPointF& local) const
{
    return m_item.kind == GraphItemKind::Op && local.x() >= 0 && local.x() < GraphStyle::kGutter && local.y() >= 0
        && local.y() <= m_size.height();
}

void GraphNodeItem::setSelected(bool selected)
{
    if (selected == m_selected) return;
    m_selected = selected;
    update();
}

void GraphNodeItem::hoverEnterEvent(QGraphicsSceneHoverEvent*)
{
    m_hovered = true;
    update();
}

void GraphNodeItem::hoverLeaveEvent(QGraphicsSceneHoverEvent*)
{
    m_hovered = false;
    update();
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
{
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setRenderHint(QPainter::TextAntialiasing);
    const NodeMarks marks = m_model ? m_model->marks(m_item.key) : NodeMarks {};
    const QRectF card = GraphStyle::cardRect(m_item, m_size);
    const double r = GraphStyle::kRadius;

    if (m_item.kind == GraphItemKind::Block) {
        // Two cards peeking out behind: a collapsed block holds more.
        for (int k = 2; k >= 1; --k) {
            const QRectF back = card.translated(k * GraphStyle::kStackOffset, k * GraphStyle::kStackOffset);
            painter->setPen(QPen(GraphStyle::borderColor(m_item).lighter(110), 1.0));
            painter->setBrush(GraphStyle::fillColor(m_item).darker(100 + 3 * k));
            painter->drawRoundedRect(back, r, r);
        }
    } else {
        // Soft shadow.
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(0, 0, 0, 14));
        painter->drawRoundedRect(card.translated(0, 2.5).adjusted(-0.5, 0, 0.5, 0.5), r + 1, r + 1);
        painter->setBrush(QColor(0, 0, 0, 18));
        painter->drawRoundedRect(card.translated(0, 1.2), r, r);
    }
    paintCard(painter, card, marks);
    paintMarks(painter, card, marks);
}

void GraphNodeItem::paintCard(QPainter* painter, const QRectF& card, const NodeMarks& marks) const
{
    const double r = GraphStyle::kRadius;
    QPainterPath outline;
    outline.addRoundedRect(card, r, r);
    painter->setPen(Qt::NoPen);
    // A comparison colours ops and blocks by their divergence (variables keep their fill).
    const bool tinted = marks.compared && !m_item.parameter && m_item.kind != GraphItemKind::Variable;
    painter->setBrush(tinted ? GraphStyle::divergenceColor(marks.divergence) : GraphStyle::fillColor(m_item));
    painter->drawPath(outline);

    if (GraphStyle::hasGutter(m_item)) {
        QPainterPath gutter;
        gutter.addRect(QRectF(card.left(), card.top(), GraphStyle::kGutter, card.height()));
        QColor tint = GraphStyle::borderColor(m_item);
        tint.setAlpha(m_hovered && m_item.kind == GraphItemKind::Op ? 70 : 42);
        painter->setBrush(tint);
        painter->drawPath(outline.intersected(gutter));
    }

    for (const GraphStyle::TextLine& line : GraphStyle::textLines(m_item, m_size)) {
        painter->setFont(GraphStyle::font(line.role));
        painter->setPen(GraphStyle::textColor(line.role));
        painter->drawText(line.baseline, line.text);
    }

    if (m_item.kind == GraphItemKind::Block) {
        // A small "+" at the bottom-right says the block opens.
        const QPointF c(card.right() - 10, card.bottom() - 10);
        painter->setPen(QPen(GraphStyle::textColor(GraphStyle::Role::Shape), 1.4, Qt::SolidLine, Qt::RoundCap));
        painter->drawLine(c - QPointF(3.5, 0), c + QPointF(3.5, 0));
        painter->drawLine(c - QPointF(0, 3.5), c + QPointF(0, 3.5));
    }

    // Border: paused beats selected beats executed beats plain.
    QColor border = GraphStyle::borderColor(m_item);
    double width = m_hovered ? 1.6 : 1.0;
    if (marks.executed && !m_item.parameter) border = GraphStyle::executedColor().lighter(115);
    if (m_selected) {
        QColor halo = GraphStyle::selectionColor();
        halo.setAlpha(55);
        painter->setPen(QPen(halo, 5.0));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(card, r, r);
        border = GraphStyle::selectionColor();
        width = 2.0;
    }
    if (marks.firstDivergent) {
        border = GraphStyle::firstDivergentColor();
        width = 3.0;
    }
    if (marks.paused) {
        border = GraphStyle::pausedColor();
        width = 3.0;
    }
    painter->setPen(QPen(border, width));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(card.adjusted(width / 2 - 0.5, width / 2 - 0.5, 0.5 - width / 2, 0.5 - width / 2), r, r);
}

void GraphNodeItem::paintMarks(QPainter* painter, const QRectF& card, const NodeMarks& marks) const
{
    if (!GraphStyle::hasGutter(m_item)) return;
    const QPointF c = GraphStyle::markerCentre(m_item);
    constexpr double kDot = 4.6;
    if (marks.breakpoint == BreakMark::Enabled) {
        painter->setPen(QPen(GraphStyle::breakpointColor().darker(115), 0.8));
        painter->setBrush(GraphStyle::breakpointColor());
        painter->drawEllipse(c, kDot, kDot);
    } else if (marks.breakpoint == BreakMark::Disabled) {
        painter->setPen(QPen(GraphStyle::breakpointColor(), 1.5));
        painter->setBrush(QColor(255, 255, 255, 200));
        painter->drawEllipse(c, kDot - 0.6, kDot - 0.6);
    }
    if (marks.breakpoint != BreakMark::None && marks.conditional) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(GraphStyle::conditionColor());
        painter->drawEllipse(c, 1.9, 1.9);
    }
    if (marks.paused) {
        painter->setPen(QPen(GraphStyle::pausedColor().darker(135), 1.0, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        painter->setBrush(GraphStyle::pausedColor());
        painter->drawPolygon(GraphStyle::pausedArrow(m_item));
    }

    if (marks.nanInf) {
        const QRectF badge = GraphStyle::nanBadgeRect(m_item, m_size);
        painter->setPen(QPen(Qt::white, 1.2));
        painter->setBrush(GraphStyle::nanColor());
        painter->drawRoundedRect(badge, 7, 7);
        painter->setFont(GraphStyle::font(GraphStyle::Role::Badge));
        painter->setPen(GraphStyle::textColor(GraphStyle::Role::Badge));
        painter->drawText(badge, Qt::AlignCenter, QStringLiteral("NaN"));
    } else if (marks.firstDivergent) {
        // Where the compared runs part ways.
        const QRectF badge = GraphStyle::nanBadgeRect(m_item, m_size).adjusted(-4, 0, 0, 0);
        painter->setPen(QPen(Qt::white, 1.2));
        painter->setBrush(GraphStyle::firstDivergentColor());
        painter->drawRoundedRect(badge, 7, 7);
        painter->setFont(GraphStyle::font(GraphStyle::Role::Badge));
        painter->setPen(GraphStyle::textColor(GraphStyle::Role::Badge));
        painter->drawText(badge, Qt::AlignCenter, QStringLiteral("1st"));
    } else if (marks.executed) {
        // A small tick in the space kept free right of the title (NaN/Inf implies executed).
        const QPointF o(card.right() - 15, card.top() + 6);
        QPainterPath tick;
        tick.moveTo(o + QPointF(0, 4));
        tick.lineTo(o + QPointF(3, 7));
        tick.lineTo(o + QPointF(8.5, 0.5));
        painter->setPen(QPen(GraphStyle::executedColor(), 1.8, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(tick);
    }
}

} // namespace opscope::gui
