#pragma once

#include "gui/tensor/color_map.h"
#include "gui/tensor/feature_map_render.h"
#include "gui/tensor/latest_only_runner.h"
#include "tensor/tensor.h"

#include <cstdint>

#include <QImage>
#include <QWidget>

class QComboBox;
class QLabel;
class QScrollArea;
class QSlider;
class QSpinBox;
class QStackedWidget;

namespace opscope::gui {

class ColorBar;
class FeatureMapCanvas;

/// A tensor as images: (N, C, H, W) as a grid of its C feature maps for one chosen N, (C, H, W)
/// as C maps, (H, W) as one heat map, (L) as a strip. Colour maps viridis, gray and blue-white-red;
/// colours scaled per map or shared across the tensor; Ctrl+wheel or the slider zooms; hovering
/// reports the exact value and its index. Large tensors are rendered off the GUI thread.
class FeatureMapView : public QWidget {
    Q_OBJECT

public:
    using ColorMap = gui::ColorMap;

    explicit FeatureMapView(QWidget* parent = nullptr);
    ~FeatureMapView() override;

    void setTensor(const opscope::Tensor& tensor);
    const opscope::Tensor& tensor() const { return m_tensor; }
    void clear(const QString& message = {});
    static bool canShow(const opscope::Shape& shape);

    void setColorMap(ColorMap map);
    ColorMap colorMap() const { return m_colorMap; }
    void setSharedScale(bool shared);
    bool sharedScale() const { return m_shared; }
    /// The batch item shown for a 4-D tensor.
    void setBatch(int64_t n);
    int64_t batch() const { return m_batch; }
    /// Displayed length of a map's longer side, in pixels (zoom).
    void setCellSize(int px);
    int cellSize() const;

    int mapCount() const;
    /// Where map `map` is drawn, in this widget's coordinates.
    QRect mapRect(int map) const;
    /// "(0, 5, 12, 3) = 0.8123" for the value under `widgetPos` (this widget's coordinates).
    QString valueTextAt(QPoint widgetPos) const;
    /// The whole grid as one image (rendered at once if the view has not rendered it yet).
    QImage renderImage() const;
    /// True while images are being built in the background.
    bool isRendering() const { return m_runner.busy(); }

signals:
    void hovered(const QString& text);
    /// A left click on an element: its index in the tensor.
    void elementClicked(const QList<qint64>& index);
    /// A context menu asked for over map `map` (a channel of an (N, C, H, W) tensor).
    void mapMenuRequested(qint64 map, const QPoint& globalPos);
    /// The images for the current tensor and options are on screen.
    void rendered();

protected:
    void showEvent(QShowEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void requestRender();
    void applyMaps(RenderedMaps maps);
    void updateLegend(int64_t hoverMap);
    void updateControls();
    int defaultCellSize() const;
    void zoomBy(int steps);
    MapScaling scaling() const { return m_shared ? MapScaling::Shared : MapScaling::PerMap; }

    opscope::Tensor m_tensor;
    FeatureMapLayout m_layout;
    int64_t m_batch = 0;
    ColorMap m_colorMap = ColorMap::Viridis;
    bool m_shared = false;
    bool m_dirty = false;
    bool m_updating = false;

    QStackedWidget* m_stack = nullptr;
    QLabel* m_message = nullptr;
    QLabel* m_batchLabel = nullptr;
    QSpinBox* m_batchSpin = nullptr;
    QComboBox* m_colorCombo = nullptr;
    QComboBox* m_scaleCombo = nullptr;
    QSlider* m_zoomSlider = nullptr;
    QScrollArea* m_scroll = nullptr;
    FeatureMapCanvas* m_canvas = nullptr;
    ColorBar* m_colorBar = nullptr;
    QLabel* m_status = nullptr;
    LatestOnlyRunner m_runner;
};

} // namespace opscope::gui
