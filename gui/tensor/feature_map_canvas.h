#pragma once

#include "gui/tensor/feature_map_render.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <vector>

#include <QHash>
#include <QImage>
#include <QList>
#include <QPixmap>
#include <QWidget>

namespace opscope::gui {

/// The grid of feature maps inside the feature-map view's scroll area: lays the maps out in rows
/// that fit the available width, paints them scaled with nearest-neighbour sampling, and reports
/// the value under the mouse. The grid (and hover values) exist as soon as the source is set;
/// the images arrive later from the renderer.
class FeatureMapCanvas : public QWidget {
    Q_OBJECT

public:
    static constexpr int kMargin = 8;
    static constexpr int kSpacing = 8;
    static constexpr int kStripThickness = 24;

    explicit FeatureMapCanvas(QWidget* parent = nullptr);

    void setSource(const opscope::Tensor& tensor, const FeatureMapLayout& layout, int64_t batch);
    /// The batch index reported for the maps shown (hover text, clicks) when `tensor` is one item
    /// of a larger tensor held elsewhere; -1: `batch` itself.
    void setReportedBatch(int64_t batch) { m_reportedBatch = batch; }
    void setMaps(RenderedMaps maps);
    const RenderedMaps& maps() const { return m_maps; }
    /// True when the images match the source set last.
    bool hasImages() const;
    void clear();
    void setColorTable(const QList<QRgb>& table);
    /// Displayed length of a map's longer side, in pixels.
    void setCellSize(int px);
    int cellSize() const { return m_cellSize; }
    void setAvailableWidth(int px);
    int mapCount() const { return static_cast<int>(m_layout.maps); }
    const FeatureMapLayout& layoutInfo() const { return m_layout; }
    /// Where map `map` is drawn, in canvas coordinates (empty for no such map).
    QRect mapRect(int64_t map) const;
    /// The map under `pos`, or -1.
    int64_t mapAt(QPoint pos) const;
    /// "(0, 5, 12, 3) = 0.8123" for the value under `pos`; empty outside the maps.
    QString valueTextAt(QPoint pos) const;
    /// The whole grid; `images` replaces the current images (same layout) when given.
    QImage gridImage(const std::vector<QImage>* images = nullptr) const;
    QSize sizeHint() const override;

signals:
    void hovered(const QString& text, qint64 map);
    void zoomRequested(int steps);
    /// The element under a left click: its index in the tensor.
    void clicked(const QList<qint64>& index);
    /// A context menu asked for over map `map` (at `globalPos`).
    void menuRequested(qint64 map, const QPoint& globalPos);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;

private:
    std::vector<int64_t> tensorIndexAt(int64_t map, int64_t y, int64_t x) const;
    struct Hit {
        int64_t map = -1;
        int64_t y = 0;
        int64_t x = 0;
    };

    Hit hitAt(QPoint pos) const;
    bool drawable() const;
    QSize gridSize() const;
    void relayout();
    void paintGrid(QPainter& painter, const QRect& clip, const std::vector<QImage>* images) const;
    QPixmap scaledMap(int64_t map) const;

    opscope::Tensor m_tensor;
    FeatureMapLayout m_layout;
    int64_t m_batch = 0;
    int64_t m_reportedBatch = -1;
    RenderedMaps m_maps;
    bool m_imagesCurrent = false;
    QList<QRgb> m_table;
    int m_cellSize = 96;
    int m_availableWidth = 420;
    int m_columns = 1;
    QSize m_mapSize;
    int m_labelHeight = 0;
    int64_t m_hoverMap = -1;
    mutable QHash<qint64, QPixmap> m_cache;
};

} // namespace opscope::gui
