#include "gui/tensor/feature_map_canvas.h"

#include "gui/tensor/color_map.h"
#include "gui/tensor/value_format.h"

#include <algorithm>
#include <cmath>

#include <QContextMenuEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QWheelEvent>

namespace opscope::gui {

namespace {
constexpr int kMaxCachedMaps = 4096;
}

FeatureMapCanvas::FeatureMapCanvas(QWidget* parent)
    : QWidget(parent)
    , m_table(colorTable(ColorMap::Viridis))
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent, false);
    relayout();
}

void FeatureMapCanvas::setSource(const opscope::Tensor& tensor, const FeatureMapLayout& layout, int64_t batch)
{
    m_tensor = tensor;
    m_layout = layout;
    m_batch = batch;
    m_hoverMap = -1;
    // Older images of the same geometry stay on screen until the new ones arrive.
    m_imagesCurrent = false;
    m_cache.clear();
    relayout();
    update();
}

void FeatureMapCanvas::setMaps(RenderedMaps maps)
{
    m_maps = std::move(maps);
    m_imagesCurrent = true;
    for (QImage& image : m_maps.images)
        image.setColorTable(m_table);
    m_cache.clear();
    update();
}

bool FeatureMapCanvas::hasImages() const
{
    return m_imagesCurrent && drawable();
}

bool FeatureMapCanvas::drawable() const
{
    return m_maps.images.size() == static_cast<size_t>(m_layout.maps) && m_maps.layout.sameGeometry(m_layout);
}

void FeatureMapCanvas::clear()
{
    m_tensor = {};
    m_layout = {};
    m_maps = {};
    m_imagesCurrent = false;
    m_cache.clear();
    m_hoverMap = -1;
    relayout();
    update();
}

void FeatureMapCanvas::setColorTable(const QList<QRgb>& table)
{
    m_table = table;
    for (QImage& image : m_maps.images)
        image.setColorTable(m_table);
    m_cache.clear();
    update();
}

void FeatureMapCanvas::setCellSize(int px)
{
    if (px == m_cellSize) return;
    m_cellSize = px;
    m_cache.clear();
    relayout();
    update();
}

void FeatureMapCanvas::setAvailableWidth(int px)
{
    if (px == m_availableWidth) return;
    m_availableWidth = px;
    relayout();
    update();
}

void FeatureMapCanvas::relayout()
{
    if (!m_layout.valid()) {
        m_mapSize = {};
        m_columns = 1;
        m_labelHeight = 0;
        resize(QSize(std::max(1, m_availableWidth), 1));
        return;
    }
    const double longer = static_cast<double>(std::max(m_layout.height, m_layout.width));
    const double s = m_cellSize / longer;
    int w = std::max(1, static_cast<int>(std::lround(static_cast<double>(m_layout.width) * s)));
    int h = std::max(1, static_cast<int>(std::lround(static_cast<double>(m_layout.height) * s)));
    if (m_layout.height == 1) h = std::max(h, kStripThickness);
    if (m_layout.width == 1) w = std::max(w, kStripThickness);
    m_mapSize = QSize(w, h);
    m_labelHeight = m_layout.maps > 1 ? fontMetrics().height() + 2 : 0;
    const int fit = (m_availableWidth - 2 * kMargin + kSpacing) / (w + kSpacing);
    m_columns = static_cast<int>(std::clamp<int64_t>(fit, 1, m_layout.maps));
    resize(gridSize());
    updateGeometry();
}

QSize FeatureMapCanvas::gridSize() const
{
    if (!m_layout.valid()) return QSize(1, 1);
    const int64_t rows = (m_layout.maps + m_columns - 1) / m_columns;
    const int64_t w = 2 * kMargin + m_columns * m_mapSize.width() + (m_columns - 1) * kSpacing;
    const int64_t h = 2 * kMargin + rows * (m_mapSize.height() + m_labelHeight) + (rows - 1) * kSpacing;
    // Widget sizes are int; a grid this tall is beyond any sensible zoom anyway.
    return QSize(static_cast<int>(std::min<int64_t>(w, QWIDGETSIZE_MAX)),
        static_cast<int>(std::min<int64_t>(h, QWIDGETSIZE_MAX)));
}

QSize FeatureMapCanvas::sizeHint() const
{
    return gridSize();
}

QRect FeatureMapCanvas::mapRect(int64_t map) const
{
    if (!m_layout.valid() || map < 0 || map >= m_layout.maps) return {};
    const int64_t col = map % m_columns, row = map / m_columns;
    const int64_t x = kMargin + col * (m_mapSize.width() + kSpacing);
    const int64_t y = kMargin + row * (m_mapSize.height() + m_labelHeight + kSpacing);
    return QRect(static_cast<int>(x), static_cast<int>(y), m_mapSize.width(), m_mapSize.height());
}

FeatureMapCanvas::Hit FeatureMapCanvas::hitAt(QPoint pos) const
{
    Hit hit;
    if (!m_layout.valid() || pos.x() < kMargin || pos.y() < kMargin) return hit;
    const int pitchX = m_mapSize.width() + kSpacing;
    const int pitchY = m_mapSize.height() + m_labelHeight + kSpacing;
    const int64_t col = (pos.x() - kMargin) / pitchX, row = (pos.y() - kMargin) / pitchY;
    if (col >= m_columns) return hit;
    const int64_t map = row * m_columns + col;
    const QRect r = mapRect(map);
    if (r.isEmpty() || !r.contains(pos)) return hit;
    hit.map = map;
    hit.x = std::min<int64_t>(m_layout.width - 1, (pos.x() - r.x()) * m_layout.width / r.width());
    hit.y = std::min<int64_t>(m_layout.height - 1, (pos.y() - r.y()) * m_layout.height / r.height());
    return hit;
}

int64_t FeatureMapCanvas::mapAt(QPoint pos) const
{
    return hitAt(pos).map;
}

QString FeatureMapCanvas::valueTextAt(QPoint pos) const
{
    const Hit hit = hitAt(pos);
    if (hit.map < 0 || !m_tensor.defined()) return {};
    const int64_t offset = m_layout.offset(m_batch, hit.map, hit.y, hit.x);
    if (offset < 0 || offset >= m_tensor.size()) return {};
    const auto index = tensorIndexAt(hit.map, hit.y, hit.x);
    return QStringLiteral("%1 = %2").arg(formatIndex(index), formatExact(m_tensor.view().data()[offset]));
}

QPixmap FeatureMapCanvas::scaledMap(int64_t map) const
{
    auto it = m_cache.constFind(map);
    if (it != m_cache.constEnd()) return *it;
    if (m_cache.size() >= kMaxCachedMaps) m_cache.clear();
    const QImage& image = m_maps.images[static_cast<size_t>(map)];
    QPixmap pixmap = QPixmap::fromImage(image.scaled(m_mapSize, Qt::IgnoreAspectRatio, Qt::FastTransformation));
    m_cache.insert(map, pixmap);
    return pixmap;
}

void FeatureMapCanvas::paintGrid(QPainter& painter, const QRect& clip, const std::vector<QImage>* images) const
{
    if (!m_layout.valid()) return;
    const bool own = images == nullptr;
    const bool haveImages = own ? drawable() : images->size() == static_cast<size_t>(m_layout.maps);
    const int pitchY = m_mapSize.height() + m_labelHeight + kSpacing;
    const int64_t rows = (m_layout.maps + m_columns - 1) / m_columns;
    const int64_t firstRow = std::clamp<int64_t>((clip.top() - kMargin) / pitchY, 0, rows);
    const int64_t lastRow = std::clamp<int64_t>((clip.bottom() - kMargin) / pitchY + 1, 0, rows);
    const QColor frame = palette().color(QPalette::Mid);
    const QColor labelColor = palette().color(QPalette::PlaceholderText);
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.85));
    painter.setFont(small);
    for (int64_t row = firstRow; row < lastRow; ++row) {
        for (int64_t col = 0; col < m_columns; ++col) {
            const int64_t map = row * m_columns + col;
            if (map >= m_layout.maps) break;
            const QRect r = mapRect(map);
            if (!r.adjusted(-2, -2, 2, 2 + m_labelHeight).intersects(clip)) continue;
            if (!haveImages) {
                painter.fillRect(r, palette().color(QPalette::AlternateBase));
            } else if (own) {
                painter.drawPixmap(r.topLeft(), scaledMap(map));
            } else {
                QImage image = (*images)[static_cast<size_t>(map)];
                image.setColorTable(m_table);
                painter.drawImage(r.topLeft(), image.scaled(r.size(), Qt::IgnoreAspectRatio, Qt::FastTransformation));
            }
            painter.setBrush(Qt::NoBrush);
            if (map == m_hoverMap && own) {
                painter.setPen(QPen(palette().color(QPalette::Highlight), 2));
                painter.drawRect(r.adjusted(-1, -1, 1, 1));
            } else {
                painter.setPen(frame);
                painter.drawRect(r.adjusted(-1, -1, 0, 0));
            }
            if (m_labelHeight > 0) {
                painter.setPen(labelColor);
                painter.drawText(QRect(r.left() - kSpacing / 2, r.bottom() + 1, r.width() + kSpacing, m_labelHeight),
                    Qt::AlignHCenter | Qt::AlignTop, QString::number(map));
            }
        }
    }
}

QImage FeatureMapCanvas::gridImage(const std::vector<QImage>* images) const
{
    if (!m_layout.valid()) return {};
    QImage out(gridSize(), QImage::Format_ARGB32_Premultiplied);
    if (out.isNull()) return {};
    out.fill(palette().color(QPalette::Base));
    QPainter painter(&out);
    paintGrid(painter, out.rect(), images ? images : &m_maps.images);
    return out;
}

void FeatureMapCanvas::paintEvent(QPaintEvent* event)
{
    QPainter painter(this);
    painter.fillRect(event->rect(), palette().color(QPalette::Base));
    paintGrid(painter, event->rect(), nullptr);
}

std::vector<int64_t> FeatureMapCanvas::tensorIndexAt(int64_t map, int64_t y, int64_t x) const
{
    std::vector<int64_t> index = m_layout.tensorIndex(m_batch, map, y, x);
    if (m_reportedBatch >= 0 && m_layout.ndim == 4 && !index.empty()) index.front() = m_reportedBatch;
    return index;
}

void FeatureMapCanvas::mousePressEvent(QMouseEvent* event)
{
    const Hit hit = hitAt(event->position().toPoint());
    if (event->button() != Qt::LeftButton || hit.map < 0 || !m_tensor.defined()) return QWidget::mousePressEvent(event);
    const int64_t offset = m_layout.offset(m_batch, hit.map, hit.y, hit.x);
    if (offset < 0 || offset >= m_tensor.size()) return;
    QList<qint64> index;
    for (int64_t v : tensorIndexAt(hit.map, hit.y, hit.x))
        index.push_back(v);
    emit clicked(index);
}

void FeatureMapCanvas::contextMenuEvent(QContextMenuEvent* event)
{
    const Hit hit = hitAt(event->pos());
    if (hit.map < 0) return QWidget::contextMenuEvent(event);
    emit menuRequested(hit.map, event->globalPos());
}

void FeatureMapCanvas::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint pos = event->position().toPoint();
    const int64_t map = mapAt(pos);
    if (map != m_hoverMap) {
        const QRect old = mapRect(m_hoverMap), now = mapRect(map);
        m_hoverMap = map;
        update(old.adjusted(-2, -2, 2, 2));
        update(now.adjusted(-2, -2, 2, 2));
    }
    emit hovered(valueTextAt(pos), map);
}

void FeatureMapCanvas::leaveEvent(QEvent* event)
{
    if (m_hoverMap >= 0) {
        update(mapRect(m_hoverMap).adjusted(-2, -2, 2, 2));
        m_hoverMap = -1;
    }
    emit hovered(QString(), -1);
    QWidget::leaveEvent(event);
}

void FeatureMapCanvas::wheelEvent(QWheelEvent* event)
{
    if (!(event->modifiers() & Qt::ControlModifier)) {
        event->ignore();
        return;
    }
    const int steps = event->angleDelta().y() / 120;
    if (steps != 0) emit zoomRequested(steps);
    event->accept();
}

} // namespace opscope::gui
