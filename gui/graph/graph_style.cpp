#include "gui/graph/graph_style.h"

#include "gui/graph/op_family.h"

#include <algorithm>
#include <cmath>

#include <QFontMetricsF>

namespace opscope::gui {

namespace {

constexpr double kPadLeft = 8.0;
constexpr double kPadRight = 10.0;
constexpr double kPadTop = 6.0;
constexpr double kPadBottom = 6.0;
constexpr double kDetailGap = 6.0;
constexpr double kMarkSpace = 14.0; // right of the title: the executed tick
constexpr double kMinWidth = 110.0;
constexpr double kMaxWidth = 300.0;
constexpr double kParamMinWidth = 70.0;
constexpr double kParamMaxWidth = 240.0;
constexpr double kArrowLength = 8.0;
constexpr double kArrowHalfWidth = 3.6;

double lineHeight(GraphStyle::Role role)
{
    return std::ceil(QFontMetricsF(GraphStyle::font(role)).lineSpacing());
}

double textWidth(GraphStyle::Role role, const QString& text)
{
    return text.isEmpty() ? 0.0 : QFontMetricsF(GraphStyle::font(role)).horizontalAdvance(text);
}

QString elide(GraphStyle::Role role, const QString& text, double width, Qt::TextElideMode mode = Qt::ElideRight)
{
    return QFontMetricsF(GraphStyle::font(role)).elidedText(text, mode, std::max(0.0, width));
}

double textLeft(const GraphItem& item)
{
    return (GraphStyle::hasGutter(item) ? GraphStyle::kGutter : 0.0) + kPadLeft;
}

struct Lines {
    GraphStyle::Role nameRole;
    GraphStyle::Role shapeRole;
    QString name;
    QString shape;
};

Lines linesOf(const GraphItem& item)
{
    if (item.parameter)
        return { GraphStyle::Role::ParamName, GraphStyle::Role::ParamShape, GraphStyle::displayName(item), item.shape };
    if (item.kind == GraphItemKind::Block) return { GraphStyle::Role::Name, GraphStyle::Role::Shape, {}, item.shape };
    return { GraphStyle::Role::Name, GraphStyle::Role::Shape, GraphStyle::displayName(item), item.shape };
}

} // namespace

QFont GraphStyle::font(Role role)
{
    QFont f;
    switch (role) {
    case Role::Title:
        f.setPixelSize(12);
        f.setBold(true);
        break;
    case Role::Detail:
    case Role::Name:
        f.setPixelSize(11);
        break;
    case Role::Shape:
    case Role::ParamName:
    case Role::Edge:
        f.setPixelSize(10);
        break;
    case Role::ParamShape:
        f.setPixelSize(9);
        break;
    case Role::Cluster:
        f.setPixelSize(11);
        f.setBold(true);
        break;
    case Role::Badge:
        f.setPixelSize(9);
        f.setBold(true);
        break;
    }
    return f;
}

QColor GraphStyle::textColor(Role role)
{
    switch (role) {
    case Role::Title:
        return QColor(0x1f, 0x23, 0x28);
    case Role::Name:
        return QColor(0x3a, 0x3f, 0x46);
    case Role::Detail:
    case Role::Shape:
        return QColor(0x78, 0x7e, 0x87);
    case Role::ParamName:
        return QColor(0x5f, 0x64, 0x6b);
    case Role::ParamShape:
    case Role::Edge:
        return QColor(0x86, 0x8c, 0x95);
    case Role::Cluster:
        return QColor(0x55, 0x5d, 0x69);
    case Role::Badge:
        return Qt::white;
    }
    return Qt::black;
}

QColor GraphStyle::clusterFill(int depth)
{
    // Nested frames get slightly darker so the nesting reads without heavy borders.
    const int alpha = std::min(10 + 7 * std::max(0, depth - 1), 40);
    return QColor(0x6b, 0x7c, 0x93, alpha);
}

QColor GraphStyle::borderColor(const GraphItem& item)
{
    if (item.parameter) return QColor(0xc4, 0xc8, 0xcd);
    return familyColor(item.family).lighter(115);
}

QColor GraphStyle::divergenceColor(double severity)
{
    if (!(severity >= 0)) return QColor(0xd0, 0xd3, 0xd8);
    const double t = std::min(severity, 1.0);
    // Two straight segments: green -> yellow -> red, light enough for the card's text.
    const QColor green(0x9b, 0xd7, 0x9e), yellow(0xff, 0xe0, 0x82), red(0xef, 0x7a, 0x72);
    const QColor& from = t < 0.5 ? green : yellow;
    const QColor& to = t < 0.5 ? yellow : red;
    const double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    return QColor::fromRgbF(static_cast<float>(from.redF() + (to.redF() - from.redF()) * u),
        static_cast<float>(from.greenF() + (to.greenF() - from.greenF()) * u),
        static_cast<float>(from.blueF() + (to.blueF() - from.blueF()) * u));
}

QColor GraphStyle::fillColor(const GraphItem& item)
{
    if (item.parameter) return QColor(0xf4, 0xf5, 0xf6);
    if (item.kind == GraphItemKind::Block) return QColor(0xf7, 0xf5, 0xef);
    return familyFill(item.family);
}

QSizeF GraphStyle::itemSize(const GraphItem& item)
{
    const Lines lines = linesOf(item);
    if (item.parameter) {
        const double w = std::max(textWidth(lines.nameRole, lines.name), textWidth(lines.shapeRole, lines.shape));
        const double h = kPadTop + lineHeight(lines.nameRole)
            + (lines.shape.isEmpty() ? 0 : lineHeight(lines.shapeRole)) + kPadBottom - 2;
        return QSizeF(std::clamp(std::ceil(w + kPadLeft + kPadRight), kParamMinWidth, kParamMaxWidth), std::ceil(h));
    }
    double titleW = textWidth(Role::Title, item.title) + kMarkSpace;
    if (!item.detail.isEmpty()) titleW += kDetailGap + textWidth(Role::Detail, item.detail);
    const double w
        = std::max({ titleW, textWidth(lines.nameRole, lines.name), textWidth(lines.shapeRole, lines.shape) });
    double h = kPadTop + lineHeight(Role::Title) + kPadBottom;
    if (!lines.name.isEmpty()) h += lineHeight(lines.nameRole);
    if (!lines.shape.isEmpty()) h += lineHeight(lines.shapeRole);
    QSizeF size(std::clamp(std::ceil(w + textLeft(item) + kPadRight), kMinWidth, kMaxWidth), std::ceil(h));
    if (item.kind == GraphItemKind::Block) size += QSizeF(2 * kStackOffset, 2 * kStackOffset);
    return size;
}

QRectF GraphStyle::cardRect(const GraphItem& item, const QSizeF& size)
{
    if (item.kind == GraphItemKind::Block)
        return QRectF(0, 0, size.width() - 2 * kStackOffset, size.height() - 2 * kStackOffset);
    return QRectF(QPointF(0, 0), size);
}

QString GraphStyle::displayName(const GraphItem& item)
{
    if (item.kind == GraphItemKind::Block) return item.title;
    return nodeDisplayName(item.name, item.blockPath);
}

std::vector<GraphStyle::TextLine> GraphStyle::textLines(const GraphItem& item, const QSizeF& size)
{
    std::vector<TextLine> out;
    const Lines lines = linesOf(item);
    const QRectF card = cardRect(item, size);
    const double left = item.parameter ? kPadLeft : textLeft(item);
    const double avail = card.width() - left - kPadRight + 2;
    double top = kPadTop;
    auto place = [&](Role role, const QString& text, double x, double maxWidth, Qt::TextElideMode mode) {
        const QFontMetricsF fm(font(role));
        const QString shown = elide(role, text, maxWidth, mode);
        out.push_back({ shown, role, QPointF(x, top + fm.ascent()) });
        return fm.horizontalAdvance(shown);
    };
    if (!item.parameter) {
        const double titleAvail = avail - kMarkSpace;
        const double titleW = place(Role::Title, item.title, left, titleAvail, Qt::ElideRight);
        if (!item.detail.isEmpty() && titleW + kDetailGap < titleAvail) {
            // Detail shares the title's baseline.
            const double titleAscent = QFontMetricsF(font(Role::Title)).ascent();
            const QString detail = elide(Role::Detail, item.detail, titleAvail - titleW - kDetailGap);
            out.push_back({ detail, Role::Detail, QPointF(left + titleW + kDetailGap, top + titleAscent) });
        }
        top += lineHeight(Role::Title);
    }
    if (!lines.name.isEmpty()) {
        place(lines.nameRole, lines.name, left, avail, Qt::ElideMiddle);
        top += lineHeight(lines.nameRole);
    }
    if (!lines.shape.isEmpty()) place(lines.shapeRole, lines.shape, left, avail, Qt::ElideRight);
    return out;
}

QPointF GraphStyle::markerCentre(const GraphItem& item)
{
    return QPointF(kGutter / 2.0 + 0.5, kPadTop + lineHeight(Role::Title) / 2.0);
}

QPolygonF GraphStyle::pausedArrow(const GraphItem& item)
{
    const QPointF c = markerCentre(item);
    return QPolygonF({ c + QPointF(-4.5, -5.5), c + QPointF(5.0, 0.0), c + QPointF(-4.5, 5.5) });
}

QRectF GraphStyle::nanBadgeRect(const GraphItem& item, const QSizeF& size)
{
    const QRectF card = cardRect(item, size);
    const double w = QFontMetricsF(font(Role::Badge)).horizontalAdvance(QStringLiteral("NaN")) + 10;
    return QRectF(card.right() - w + 6, card.top() - 7, w, 14);
}

QPolygonF GraphStyle::arrowHead(const QPainterPath& path)
{
    if (path.elementCount() < 2) return {};
    const QPointF tip = path.pointAtPercent(1.0);
    // Direction from a point one arrow length back along the path.
    const double length = path.length();
    const double t = length > kArrowLength ? path.percentAtLength(length - kArrowLength) : 0.0;
    QPointF dir = tip - path.pointAtPercent(t);
    const double norm = std::hypot(dir.x(), dir.y());
    if (norm < 1e-6) return {};
    dir /= norm;
    const QPointF normal(-dir.y(), dir.x());
    const QPointF base = tip - dir * kArrowLength;
    return QPolygonF({ tip, base + normal * kArrowHalfWidth, base - normal * kArrowHalfWidth });
}

QRectF GraphStyle::clusterLabelRect(const QRectF& clusterRect, const QString& label)
{
    const double w = textWidth(Role::Cluster, label) + 22;
    return QRectF(
        clusterRect.left() + 6, clusterRect.top() + 2, std::min(w, clusterRect.width() - 12), kClusterLabelHeight);
}

} // namespace opscope::gui
