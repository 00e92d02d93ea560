#include "gui/tensor/feature_map_view.h"

#include "gui/tensor/color_bar.h"
#include "gui/tensor/feature_map_canvas.h"
#include "gui/tensor/value_format.h"
#include "gui/widgets/message_stack.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {
constexpr int64_t kAsyncElements = 1 << 20;
constexpr int kMinCell = 8;
constexpr int kMaxCell = 4096;
constexpr int kSliderSteps = 1000;
constexpr int kTargetCell = 64;
constexpr int kMaxDefaultCell = 128;

// The slider is logarithmic in the cell size: each step zooms by the same factor.
int sliderToCell(int v)
{
    const double t = static_cast<double>(v) / kSliderSteps;
    return static_cast<int>(std::lround(kMinCell * std::pow(static_cast<double>(kMaxCell) / kMinCell, t)));
}

int cellToSlider(int px)
{
    const double t = std::log(static_cast<double>(px) / kMinCell) / std::log(static_cast<double>(kMaxCell) / kMinCell);
    return static_cast<int>(std::lround(t * kSliderSteps));
}
} // namespace

QString FeatureMapView::hoverHint()
{
    return tr("Hover a map to read its values; Ctrl+wheel zooms");
}

FeatureMapView::FeatureMapView(QWidget* parent)
    : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    m_stack = messageStack(this, tr("No tensor"), &m_message);
    outer->addWidget(m_stack);

    auto* page = new QWidget(m_stack);
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->setSpacing(4);

    auto* controls = new QHBoxLayout;
    controls->setSpacing(6);
    m_batchLabel = new QLabel(tr("Item"), page);
    m_batchSpin = new QSpinBox(page);
    m_batchSpin->setToolTip(tr("Index along the batch axis (axis 0)"));
    m_batchSpin->setKeyboardTracking(false);
    controls->addWidget(m_batchLabel);
    controls->addWidget(m_batchSpin);
    m_colorCombo = new QComboBox(page);
    m_colorCombo->addItems(colorMapNames());
    m_colorCombo->setToolTip(tr("Colour map"));
    controls->addWidget(m_colorCombo);
    m_scaleCombo = new QComboBox(page);
    m_scaleCombo->addItems({ tr("Per map"), tr("Shared") });
    m_scaleCombo->setToolTip(tr("Spread the colours over each map's own range, or over the whole tensor's"));
    controls->addWidget(m_scaleCombo);
    controls->addStretch(1);
    auto* zoomLabel = new QLabel(tr("Zoom"), page);
    zoomLabel->setForegroundRole(QPalette::PlaceholderText);
    controls->addWidget(zoomLabel);
    m_zoomSlider = new QSlider(Qt::Horizontal, page);
    m_zoomSlider->setRange(0, kSliderSteps);
    m_zoomSlider->setSingleStep(10);
    m_zoomSlider->setPageStep(100);
    m_zoomSlider->setFixedWidth(110);
    m_zoomSlider->setToolTip(tr("Displayed size of each map (Ctrl+wheel over the maps)"));
    controls->addWidget(m_zoomSlider);
    layout->addLayout(controls);

    m_scroll = new QScrollArea(page);
    m_scroll->setWidgetResizable(false);
    m_scroll->setBackgroundRole(QPalette::Base);
    m_scroll->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_canvas = new FeatureMapCanvas;
    m_scroll->setWidget(m_canvas);
    m_scroll->viewport()->installEventFilter(this);
    layout->addWidget(m_scroll, 1);

    m_colorBar = new ColorBar(page);
    layout->addWidget(m_colorBar);
    m_status = new QLabel(hoverHint(), page);
    m_status->setForegroundRole(QPalette::PlaceholderText);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setMinimumWidth(1);
    layout->addWidget(m_status);
    m_stack->addWidget(page);
    m_stack->setCurrentIndex(0);

    m_canvas->setCellSize(kTargetCell);
    m_zoomSlider->setValue(cellToSlider(kTargetCell));

    connect(m_batchSpin, &QSpinBox::valueChanged, this, [this](int v) {
        if (!m_updating) setBatch(v);
    });
    connect(m_colorCombo, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (!m_updating && i >= 0) setColorMap(static_cast<ColorMap>(i));
    });
    connect(m_scaleCombo, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (!m_updating) setSharedScale(i == 1);
    });
    connect(m_zoomSlider, &QSlider::valueChanged, this, [this](int v) {
        if (!m_updating) setCellSize(sliderToCell(v));
    });
    connect(m_canvas, &FeatureMapCanvas::zoomRequested, this, &FeatureMapView::zoomBy);
    connect(m_canvas, &FeatureMapCanvas::clicked, this, &FeatureMapView::elementClicked);
    connect(m_canvas, &FeatureMapCanvas::menuRequested, this, &FeatureMapView::mapMenuRequested);
    connect(m_canvas, &FeatureMapCanvas::hovered, this, [this](const QString& text, qint64 map) {
        if (text.isEmpty()) {
            m_status->setForegroundRole(QPalette::PlaceholderText);
            m_status->setText(m_runner.busy() ? tr("Rendering…") : hoverHint());
        } else {
            m_status->setForegroundRole(QPalette::WindowText);
            m_status->setText(text);
        }
        updateLegend(map);
        emit hovered(text);
    });
    connect(&m_runner, &LatestOnlyRunner::busyChanged, this, [this](bool busy) {
        if (m_status->foregroundRole() == QPalette::PlaceholderText)
            m_status->setText(busy ? tr("Rendering…") : hoverHint());
    });
    updateControls();
}

FeatureMapView::~FeatureMapView()
{
    ++*m_readToken; // a read going on stops at its next window (the runner waits for it)
}

bool FeatureMapView::canShow(const opscope::Shape& shape)
{
    return FeatureMapLayout::of(shape).valid();
}

void FeatureMapView::setTensor(const opscope::Tensor& tensor)
{
    dropSource();
    m_tensor = tensor;
    const FeatureMapLayout layout = tensor.defined() ? FeatureMapLayout::of(tensor.shape()) : FeatureMapLayout {};
    if (!layout.valid()) {
        clear(tensor.defined() ? tr("A tensor of shape %1 cannot be shown as images.\n"
                                    "Images need 1 to 4 axes and at most %2 maps.")
                                     .arg(formatShape(tensor.shape()))
                                     .arg(FeatureMapLayout::kMaxMaps)
                               : QString());
        m_tensor = tensor;
        return;
    }
    const bool sameGeometry = layout.sameGeometry(m_layout);
    m_layout = layout;
    m_batch = std::clamp<int64_t>(m_batch, 0, layout.batches - 1);
    updateControls();
    if (!sameGeometry) setCellSize(defaultCellSize());
    m_canvas->setSource(m_tensor, m_layout, shownBatch());
    m_stack->setCurrentIndex(1);
    m_dirty = true;
    if (isVisible())
        requestRender();
    else
        m_runner.cancel();
}

void FeatureMapView::clear(const QString& message)
{
    dropSource();
    m_runner.cancel();
    m_tensor = {};
    m_layout = {};
    m_dirty = false;
    m_canvas->clear();
    m_colorBar->setRange(0, 0, QString());
    m_colorBar->setSpecialCounts(0, 0, 0);
    m_message->setText(message.isEmpty() ? tr("No tensor") : message);
    m_stack->setCurrentIndex(0);
    updateControls();
}

void FeatureMapView::setColorMap(ColorMap map)
{
    if (map == m_colorMap) return;
    const bool wasSymmetric = m_colorMap == ColorMap::Diverging;
    m_colorMap = map;
    updateControls();
    m_canvas->setColorTable(colorTable(map));
    m_colorBar->setColorMap(map);
    if (wasSymmetric != (map == ColorMap::Diverging) && m_layout.valid()) {
        m_dirty = true;
        if (isVisible()) requestRender();
    }
}

void FeatureMapView::setSharedScale(bool shared)
{
    if (shared == m_shared) return;
    m_shared = shared;
    updateControls();
    if (m_layout.valid()) {
        m_dirty = true;
        if (isVisible()) requestRender();
    }
}

void FeatureMapView::setBatch(int64_t n)
{
    if (!(m_source ? m_sourceLayout : m_layout).valid()) return;
    n = std::clamp<int64_t>(n, 0, (m_source ? m_sourceLayout : m_layout).batches - 1);
    if (n == m_batch) return;
    m_batch = n;
    updateControls();
    if (m_source) { // the item is read there; the maps shown stay until it comes
        if (isVisible())
            readShown();
        else
            m_needRead = true;
        return;
    }
    m_canvas->setSource(m_tensor, m_layout, m_batch);
    m_dirty = true;
    if (isVisible()) requestRender();
}

void FeatureMapView::setCellSize(int px)
{
    px = std::clamp(px, kMinCell, kMaxCell);
    m_canvas->setCellSize(px);
    const QSignalBlocker block(m_zoomSlider);
    m_zoomSlider->setValue(cellToSlider(px));
}

int FeatureMapView::cellSize() const
{
    return m_canvas->cellSize();
}

int FeatureMapView::mapCount() const
{
    return m_layout.valid() ? static_cast<int>(m_layout.maps) : 0;
}

QRect FeatureMapView::mapRect(int map) const
{
    const QRect r = m_canvas->mapRect(map);
    if (r.isEmpty()) return {};
    return r.translated(m_canvas->mapTo(this, QPoint(0, 0)));
}

QString FeatureMapView::valueTextAt(QPoint widgetPos) const
{
    return m_canvas->valueTextAt(m_canvas->mapFrom(this, widgetPos));
}

QImage FeatureMapView::renderImage() const
{
    if (!m_layout.valid()) return {};
    if (!m_dirty && !m_runner.busy() && m_canvas->hasImages()) return m_canvas->gridImage();
    const RenderedMaps maps
        = renderFeatureMaps(m_tensor, m_layout, shownBatch(), scaling(), m_colorMap == ColorMap::Diverging);
    return m_canvas->gridImage(&maps.images);
}

void FeatureMapView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    m_canvas->setAvailableWidth(m_scroll->viewport()->width());
    if (m_source && m_needRead) readShown();
    if (m_dirty && m_layout.valid()) requestRender();
}

bool FeatureMapView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_scroll->viewport() && event->type() == QEvent::Resize)
        m_canvas->setAvailableWidth(m_scroll->viewport()->width());
    return QWidget::eventFilter(watched, event);
}

void FeatureMapView::requestRender()
{
    m_dirty = false;
    LatestOnlyRunner::Work work = [this, tensor = m_tensor, layout = m_layout, batch = shownBatch(), scaling = scaling(),
                                      symmetric = m_colorMap == ColorMap::Diverging]() -> LatestOnlyRunner::Apply {
        auto maps = std::make_shared<RenderedMaps>(renderFeatureMaps(tensor, layout, batch, scaling, symmetric));
        return [this, maps] { applyMaps(std::move(*maps)); };
    };
    if (m_tensor.size() > kAsyncElements)
        m_runner.submit(std::move(work));
    else
        m_runner.runNow(work);
}

void FeatureMapView::applyMaps(RenderedMaps maps)
{
    m_canvas->setMaps(std::move(maps));
    updateLegend(-1);
    emit rendered();
}

void FeatureMapView::updateLegend(int64_t hoverMap)
{
    const RenderedMaps& maps = m_canvas->maps();
    if (!m_canvas->hasImages() || maps.ranges.empty()) {
        m_colorBar->setRange(0, 0, m_layout.valid() ? tr("Rendering…") : QString());
        return;
    }
    m_colorBar->setSpecialCounts(maps.nan, maps.posInf, maps.negInf);
    const bool single = m_layout.maps == 1 && m_layout.batches == 1;
    if (maps.scaling == MapScaling::Shared || single) {
        m_colorBar->setRange(
            maps.ranges.front().first, maps.ranges.front().second, single ? tr("Range") : tr("Shared range"));
        return;
    }
    if (hoverMap >= 0 && hoverMap < static_cast<int64_t>(maps.ranges.size())) {
        const auto& r = maps.ranges[static_cast<size_t>(hoverMap)];
        m_colorBar->setRange(r.first, r.second, tr("Map %1").arg(hoverMap));
        return;
    }
    m_colorBar->setRange(maps.sharedLo, maps.sharedHi, tr("Per-map colours; tensor range shown"));
}

void FeatureMapView::updateControls()
{
    m_updating = true;
    const FeatureMapLayout& whole = m_source ? m_sourceLayout : m_layout; // a remote item: the tensor's batch
    const bool batched = whole.valid() && whole.batches > 1;
    m_batchLabel->setVisible(batched);
    m_batchSpin->setVisible(batched);
    if (whole.valid()) {
        m_batchSpin->setRange(0, static_cast<int>(std::min<int64_t>(whole.batches - 1, INT_MAX)));
        m_batchSpin->setSuffix(QStringLiteral(" / %1").arg(whole.batches));
        m_batchSpin->setValue(static_cast<int>(m_batch));
    }
    m_colorCombo->setCurrentIndex(static_cast<int>(m_colorMap));
    m_scaleCombo->setCurrentIndex(m_shared ? 1 : 0);
    m_scaleCombo->setEnabled(!m_layout.valid() || m_layout.maps > 1 || m_layout.batches > 1);
    m_updating = false;
}

int FeatureMapView::defaultCellSize() const
{
    const int64_t longer = std::max(m_layout.height, m_layout.width);
    if (longer <= 0) return kTargetCell;
    if (m_layout.maps == 1) {
        const int avail = (isVisible() ? m_scroll->viewport()->width() : 420) - 2 * FeatureMapCanvas::kMargin;
        return std::clamp(avail, 48, 1024);
    }
    if (longer > kMaxDefaultCell) return kMaxDefaultCell;
    const int64_t scale = (kTargetCell + longer - 1) / longer;
    return static_cast<int>(std::min<int64_t>(longer * scale, kMaxDefaultCell));
}

void FeatureMapView::zoomBy(int steps)
{
    const double factor = std::pow(1.25, steps);
    int next = static_cast<int>(std::lround(cellSize() * factor));
    if (next == cellSize()) next += steps > 0 ? 1 : -1;
    setCellSize(next);
}

} // namespace opscope::gui
