#pragma once

#include "gui/tensor/color_map.h"
#include "gui/tensor/feature_map_render.h"
#include "gui/tensor/latest_only_runner.h"
#include "tensor/tensor.h"

#include <atomic>
#include <cstdint>
#include <memory>

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
class TensorSource;

/// A tensor as images: (N, C, H, W) as a grid of its C feature maps for one chosen N, (C, H, W)
/// as C maps, (H, W) as one heat map, (L) as a strip. Colour maps viridis, gray and blue-white-red;
/// colours scaled per map or shared across the tensor; Ctrl+wheel or the slider zooms; hovering
/// reports the exact value and its index. Large tensors are rendered off the GUI thread. A tensor
/// held where its engine runs (setSource) is read one shown batch item at a time, when the view is
/// shown, off the GUI thread; the shared colour scale is then the item's range.
class FeatureMapView : public QWidget {
    Q_OBJECT

public:
    using ColorMap = gui::ColorMap;

    explicit FeatureMapView(QWidget* parent = nullptr);
    ~FeatureMapView() override;

    void setTensor(const opscope::Tensor& tensor);
    /// The values shown: the tensor, or the item read of a remote tensor.
    const opscope::Tensor& tensor() const { return m_tensor; }
    /// A tensor held at `source`: its maps are read (the shown batch item) once the view is shown.
    void setSource(const opscope::Shape& shape, std::shared_ptr<const TensorSource> source);
    bool isRemote() const { return m_source != nullptr; }
    /// True while a remote item is being read.
    bool isReading() const { return m_readRunner.busy(); }
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
    static QString hoverHint();
    void requestRender();
    /// Batch index within m_tensor of the maps drawn (a remote item is the whole of m_tensor).
    int64_t shownBatch() const { return m_source ? 0 : m_batch; }
    void readShown();
    void showItem(const opscope::Tensor& item, int64_t batch);
    void dropSource();
    void applyMaps(RenderedMaps maps);
    void updateLegend(int64_t hoverMap);
    void updateControls();
    int defaultCellSize() const;
    void zoomBy(int steps);
    MapScaling scaling() const { return m_shared ? MapScaling::Shared : MapScaling::PerMap; }

    opscope::Tensor m_tensor;
    FeatureMapLayout m_layout;
    std::shared_ptr<const TensorSource> m_source;
    opscope::Shape m_sourceShape;
    FeatureMapLayout m_sourceLayout; ///< of the whole remote tensor (its batch count)
    bool m_needRead = false;
    std::shared_ptr<std::atomic<uint64_t>> m_readToken = std::make_shared<std::atomic<uint64_t>>(0);
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
    LatestOnlyRunner m_readRunner;
};

} // namespace opscope::gui
