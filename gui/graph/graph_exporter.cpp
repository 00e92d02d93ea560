#include "gui/graph/graph_exporter.h"

#include "gui/graph/graph_style.h"

#include <algorithm>
#include <cmath>

#include <QFontInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QTextStream>

namespace opscope::gui {

namespace {

constexpr double kMargin = 20.0;
constexpr double kPngScale = 2.0;
constexpr double kPngMaxSide = 16384.0;
constexpr double kPngMaxPixels = 2.0e8;

QString num(double v)
{
    static const QRegularExpression trailingZeros(QStringLiteral("\\.?0+$"));
    return QString::number(v, 'f', 2).remove(trailingZeros);
}

QString escaped(const QString& text)
{
    QString clean;
    clean.reserve(text.size());
    for (QChar c : text)
        if (c.unicode() >= 0x20 || c == QLatin1Char('\t')) clean += c;
    return clean.toHtmlEscaped().replace(QLatin1Char('\''), QStringLiteral("&apos;"));
}

QString fill(const QColor& c)
{
    if (c.alpha() == 0) return QStringLiteral("fill=\"none\"");
    QString out = QStringLiteral("fill=\"%1\"").arg(c.name(QColor::HexRgb));
    if (c.alpha() < 255) out += QStringLiteral(" fill-opacity=\"%1\"").arg(num(c.alphaF()));
    return out;
}

QString stroke(const QColor& c, double width)
{
    QString out = QStringLiteral("stroke=\"%1\" stroke-width=\"%2\"").arg(c.name(QColor::HexRgb), num(width));
    if (c.alpha() < 255) out += QStringLiteral(" stroke-opacity=\"%1\"").arg(num(c.alphaF()));
    return out;
}

QString fontAttrs(GraphStyle::Role role)
{
    const QFont f = GraphStyle::font(role);
    QString family = QFontInfo(f).family();
    return QStringLiteral("font-family=\"%1, Helvetica, Arial, sans-serif\" font-size=\"%2\"%3")
        .arg(escaped(family), num(f.pixelSize()), f.bold() ? QStringLiteral(" font-weight=\"bold\"") : QString());
}

QString pathData(const QPainterPath& path)
{
    QString d;
    for (int i = 0; i < path.elementCount(); ++i) {
        const QPainterPath::Element e = path.elementAt(i);
        switch (e.type) {
        case QPainterPath::MoveToElement:
            d += QStringLiteral("M%1 %2 ").arg(num(e.x), num(e.y));
            break;
        case QPainterPath::LineToElement:
            d += QStringLiteral("L%1 %2 ").arg(num(e.x), num(e.y));
            break;
        case QPainterPath::CurveToElement:
            d += QStringLiteral("C%1 %2 ").arg(num(e.x), num(e.y));
            break;
        case QPainterPath::CurveToDataElement:
            d += QStringLiteral("%1 %2 ").arg(num(e.x), num(e.y));
            break;
        }
    }
    return d.trimmed();
}

QString polygon(const QPolygonF& p, const QString& attrs)
{
    QStringList pts;
    for (const QPointF& pt : p)
        pts << num(pt.x()) + QLatin1Char(',') + num(pt.y());
    return QStringLiteral("<polygon points=\"%1\" %2/>\n").arg(pts.join(QLatin1Char(' ')), attrs);
}

QString rect(const QRectF& r, double radius, const QString& attrs)
{
    return QStringLiteral("<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" rx=\"%5\" %6/>\n")
        .arg(num(r.x()), num(r.y()), num(r.width()), num(r.height()), num(radius), attrs);
}

QString text(const QPointF& at, GraphStyle::Role role, const QString& content, const QString& extra = {})
{
    return QStringLiteral("<text x=\"%1\" y=\"%2\" %3 %4%5>%6</text>\n")
        .arg(num(at.x()), num(at.y()), fontAttrs(role), fill(GraphStyle::textColor(role)), extra, escaped(content));
}

QString node(const GraphItem& item, const QRectF& box, const NodeMarks& marks)
{
    QString out = QStringLiteral("<g transform=\"translate(%1 %2)\">\n").arg(num(box.x()), num(box.y()));
    const QRectF card = GraphStyle::cardRect(item, box.size());
    const double r = GraphStyle::kRadius;
    if (item.kind == GraphItemKind::Block) {
        for (int k = 2; k >= 1; --k)
            out += rect(card.translated(k * GraphStyle::kStackOffset, k * GraphStyle::kStackOffset), r,
                fill(GraphStyle::fillColor(item).darker(100 + 3 * k)) + QLatin1Char(' ')
                    + stroke(GraphStyle::borderColor(item).lighter(110), 1));
    }
    out += rect(card, r, fill(GraphStyle::fillColor(item)));
    if (GraphStyle::hasGutter(item)) {
        QColor tint = GraphStyle::borderColor(item);
        tint.setAlpha(42);
        const double g = GraphStyle::kGutter;
        out += QStringLiteral("<path d=\"M%1 0 H%2 V%3 H%1 A%1 %1 0 0 1 0 %4 V%1 A%1 %1 0 0 1 %1 0 Z\" %5/>\n")
                   .arg(num(r), num(g), num(card.height()), num(card.height() - r), fill(tint));
    }
    for (const GraphStyle::TextLine& line : GraphStyle::textLines(item, box.size()))
        out += text(line.baseline, line.role, line.text);
    if (item.kind == GraphItemKind::Block) {
        const QPointF c(card.right() - 10, card.bottom() - 10);
        out += QStringLiteral("<path d=\"M%1 %2 H%3 M%4 %5 V%6\" fill=\"none\" %7 stroke-linecap=\"round\"/>\n")
                   .arg(num(c.x() - 3.5), num(c.y()), num(c.x() + 3.5), num(c.x()), num(c.y() - 3.5), num(c.y() + 3.5),
                       stroke(GraphStyle::textColor(GraphStyle::Role::Shape), 1.4));
    }
    QColor border = GraphStyle::borderColor(item);
    double width = 1.0;
    if (marks.executed && !item.parameter) border = GraphStyle::executedColor().lighter(115);
    if (marks.paused) {
        border = GraphStyle::pausedColor();
        width = 3.0;
    }
    out += rect(card.adjusted(width / 2, width / 2, -width / 2, -width / 2), r,
        QStringLiteral("fill=\"none\" ") + stroke(border, width));
    if (GraphStyle::hasGutter(item)) {
        const QPointF c = GraphStyle::markerCentre(item);
        if (marks.breakpoint != BreakMark::None) {
            const bool on = marks.breakpoint == BreakMark::Enabled;
            out += QStringLiteral("<circle cx=\"%1\" cy=\"%2\" r=\"%3\" %4 %5/>\n")
                       .arg(num(c.x()), num(c.y()), num(on ? 4.6 : 4.0),
                           on ? fill(GraphStyle::breakpointColor()) : fill(Qt::white),
                           stroke(GraphStyle::breakpointColor(), on ? 0.8 : 1.5));
            if (marks.conditional)
                out += QStringLiteral("<circle cx=\"%1\" cy=\"%2\" r=\"1.9\" %3/>\n")
                           .arg(num(c.x()), num(c.y()), fill(GraphStyle::conditionColor()));
        }
        if (marks.paused) out += polygon(GraphStyle::pausedArrow(item), fill(GraphStyle::pausedColor()));
        if (marks.executed && !marks.nanInf) {
            const QPointF o(card.right() - 15, card.top() + 6);
            out += QStringLiteral("<path d=\"M%1 %2 L%3 %4 L%5 %6\" fill=\"none\" %7 stroke-linecap=\"round\" "
                                  "stroke-linejoin=\"round\"/>\n")
                       .arg(num(o.x()), num(o.y() + 4), num(o.x() + 3), num(o.y() + 7), num(o.x() + 8.5),
                           num(o.y() + 0.5), stroke(GraphStyle::executedColor(), 1.8));
        }
        if (marks.nanInf) {
            const QRectF badge = GraphStyle::nanBadgeRect(item, box.size());
            out += rect(badge, 7, fill(GraphStyle::nanColor()) + QLatin1Char(' ') + stroke(Qt::white, 1.2));
            out += text(QPointF(badge.center().x(), badge.center().y() + 3), GraphStyle::Role::Badge,
                QStringLiteral("NaN"), QStringLiteral(" text-anchor=\"middle\""));
        }
    }
    out += QStringLiteral("</g>\n");
    return out;
}

} // namespace

bool GraphExporter::writePng(QGraphicsScene* scene, const QString& path, QString* error)
{
    if (!scene || scene->items().isEmpty()) {
        if (error) *error = QStringLiteral("There is no graph to export.");
        return false;
    }
    const QRectF source = scene->itemsBoundingRect().adjusted(-kMargin, -kMargin, kMargin, kMargin);
    double scale = std::min({ kPngScale, kPngMaxSide / source.width(), kPngMaxSide / source.height() });
    if (source.width() * source.height() * scale * scale > kPngMaxPixels)
        scale = std::sqrt(kPngMaxPixels / (source.width() * source.height()));
    const QSize size(
        static_cast<int>(std::ceil(source.width() * scale)), static_cast<int>(std::ceil(source.height() * scale)));
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) {
        if (error) *error = QStringLiteral("The graph is too large to export as an image.");
        return false;
    }
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
        scene->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), source, Qt::KeepAspectRatio);
    }
    if (!image.save(path, "PNG")) {
        if (error) *error = QStringLiteral("Cannot write %1.").arg(path);
        return false;
    }
    return true;
}

QString GraphExporter::toSvg(const LayoutResult& layout, const std::vector<GraphItem>& items, const GraphModel* model)
{
    const QRectF view = layout.bounds.adjusted(-kMargin, -kMargin, kMargin, kMargin);
    QString out;
    QTextStream s(&out);
    s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << QStringLiteral(
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%1\" height=\"%2\" viewBox=\"%3 %4 %1 %2\">\n")
             .arg(num(view.width()), num(view.height()), num(view.x()), num(view.y()));
    s << rect(view, 0, QStringLiteral("fill=\"#ffffff\""));
    if (!layout.error.isEmpty()) {
        s << text(QPointF(view.x() + kMargin, view.y() + kMargin + 12), GraphStyle::Role::Name, layout.error);
        s << "</svg>\n";
        return out;
    }
    for (const LayoutResult::Cluster& c : layout.clusters) {
        s << rect(c.rect, GraphStyle::kClusterRadius,
            fill(GraphStyle::clusterFill(c.depth)) + QLatin1Char(' ') + stroke(GraphStyle::clusterBorder(), 1));
        const QRectF tab = GraphStyle::clusterLabelRect(c.rect, c.label);
        const QPointF minus(tab.left() + 8, tab.center().y());
        s << QStringLiteral("<path d=\"M%1 %2 H%3\" %4 stroke-linecap=\"round\"/>\n")
                 .arg(num(minus.x() - 3.5), num(minus.y()), num(minus.x() + 3.5),
                     stroke(GraphStyle::textColor(GraphStyle::Role::Cluster), 1.4));
        s << text(QPointF(tab.left() + 16, tab.center().y() + 4), GraphStyle::Role::Cluster, c.label);
    }
    for (const LayoutResult::Edge& e : layout.edges) {
        s << QStringLiteral("<path d=\"%1\" fill=\"none\" %2/>\n")
                 .arg(pathData(e.path), stroke(GraphStyle::edgeColor(), 1.2));
        if (e.arrow) s << polygon(GraphStyle::arrowHead(e.path), fill(GraphStyle::edgeColor()));
        if (!e.label.isEmpty())
            s << text(e.labelPos + QPointF(0, 3.5), GraphStyle::Role::Edge, e.label,
                QStringLiteral(" text-anchor=\"middle\""));
    }
    for (const GraphItem& item : items) {
        const auto it = layout.nodes.constFind(item.key);
        if (it == layout.nodes.constEnd()) continue;
        s << node(item, it.value(), model ? model->marks(item.key) : NodeMarks {});
    }
    s << "</svg>\n";
    return out;
}

bool GraphExporter::writeSvg(const QString& path, const LayoutResult& layout, const std::vector<GraphItem>& items,
    const GraphModel* model, QString* error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error) *error = QStringLiteral("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    file.write(toSvg(layout, items, model).toUtf8());
    if (!file.commit()) {
        if (error) *error = QStringLiteral("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

} // namespace opscope::gui
