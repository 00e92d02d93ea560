#include "gui/tensor/tensor_inspector.h"

#include "core/error.h"
#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/histogram_view.h"
#include "gui/tensor/stats_table.h"
#include "gui/tensor/tensor_source.h"
#include "gui/tensor/tensor_table_model.h"
#include "gui/tensor/value_format.h"
#include "gui/tensor/value_table.h"
#include "gui/widgets/message_stack.h"
#include "io/npy.h"

#include <algorithm>
#include <exception>
#include <memory>

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {
constexpr int64_t kAsyncElements = 1 << 20;
constexpr int kPickerRows = 5;
enum Tab { HistogramTab, ValuesTab, ImageTab };

QColor roleColour(const QString& role)
{
    if (role == QLatin1String("input")) return QColor(31, 119, 180);
    if (role == QLatin1String("weight")) return QColor(148, 103, 189);
    if (role == QLatin1String("output")) return QColor(44, 160, 44);
    if (role == QLatin1String("record")) return QColor(214, 120, 20);
    return QColor(127, 127, 127);
}
} // namespace

TensorInspector::TensorInspector(QWidget* parent)
    : QWidget(parent)
    , m_lastDir(QDir::homePath())
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    m_stack = messageStack(this, tr("Not paused"), &m_message);
    outer->addWidget(m_stack);

    auto* page = new QWidget(m_stack);
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(6);

    m_title = new QLabel(page);
    QFont titleFont = m_title->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
    m_title->setFont(titleFont);
    m_title->setWordWrap(true);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_title);

    m_picker = new QTreeWidget(page);
    m_picker->setColumnCount(3);
    m_picker->setHeaderLabels({ tr("Tensor"), tr("Role"), tr("Shape") });
    m_picker->setHeaderHidden(true);
    m_picker->setRootIsDecorated(false);
    m_picker->setUniformRowHeights(true);
    m_picker->setAllColumnsShowFocus(true);
    m_picker->setSelectionMode(QAbstractItemView::SingleSelection);
    m_picker->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_picker->setTextElideMode(Qt::ElideMiddle); // tensor names differ at their end
    m_picker->header()->setStretchLastSection(false);
    m_picker->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_picker->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_picker->header()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    layout->addWidget(m_picker);

    auto* bar = new QHBoxLayout;
    bar->setSpacing(6);
    m_summary = new QLabel(page);
    m_summary->setForegroundRole(QPalette::PlaceholderText);
    m_summary->setMinimumWidth(1);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bar->addWidget(m_summary, 1);
    m_busy = new QLabel(tr("Computing…"), page);
    m_busy->setForegroundRole(QPalette::PlaceholderText);
    m_busy->hide();
    bar->addWidget(m_busy);
    layout->addLayout(bar);

    m_tabs = new QTabWidget(page);
    m_tabs->setDocumentMode(true);
    m_histogramSplit = new QSplitter(Qt::Vertical, m_tabs);
    m_histogramSplit->setChildrenCollapsible(false);
    m_histogramView = new HistogramView(m_histogramSplit);
    m_statsTable = new StatsTable(m_histogramSplit);
    m_histogramSplit->addWidget(m_histogramView);
    m_histogramSplit->addWidget(m_statsTable);
    m_histogramSplit->setStretchFactor(0, 3);
    m_histogramSplit->setStretchFactor(1, 2);
    m_valueTable = new ValueTable(m_tabs);
    m_featureMapView = new FeatureMapView(m_tabs);
    m_tabs->addTab(m_histogramSplit, tr("Histogram"));
    m_tabs->addTab(m_valueTable, tr("Values"));
    m_tabs->addTab(m_featureMapView, tr("Image"));
    connect(m_featureMapView, &FeatureMapView::elementClicked, this,
        [this](const QList<qint64>& index) { Q_EMIT elementClicked(currentTensorName(), index); });
    connect(m_featureMapView, &FeatureMapView::mapMenuRequested, this,
        [this](qint64 map, const QPoint& at) { Q_EMIT mapMenuRequested(currentTensorName(), map, at); });
    auto* corner = new QWidget(m_tabs);
    auto* cornerLayout = new QHBoxLayout(corner);
    cornerLayout->setContentsMargins(0, 0, 0, 2);
    cornerLayout->setSpacing(2);
    m_exportNpy = new QToolButton(corner);
    m_exportNpy->setText(tr("Export .npy…"));
    m_exportNpy->setToolTip(tr("Save the tensor as a NumPy array"));
    m_fetchWhole = new QToolButton(corner);
    m_fetchWhole->setObjectName(QStringLiteral("fetchWholeTensor"));
    m_fetchWhole->setText(tr("Fetch Whole"));
    m_exportPng = new QToolButton(corner);
    m_exportPng->setObjectName(QStringLiteral("exportHistogramPng"));
    m_exportPng->setText(tr("Export PNG…"));
    m_exportPng->setToolTip(tr("Save the histogram plot as a PNG image"));
    for (QToolButton* b : { m_fetchWhole, m_exportNpy, m_exportPng }) {
        b->setAutoRaise(true);
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
        cornerLayout->addWidget(b);
    }
    m_tabs->setCornerWidget(corner, Qt::TopRightCorner);
    layout->addWidget(m_tabs, 1);
    m_stack->addWidget(page);

    connect(m_picker, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        if (!item) return;
        const int index = m_picker->indexOfTopLevelItem(item);
        if (index < 0 || index == m_current) return;
        m_pickedName = m_tensors[static_cast<size_t>(index)].name;
        showIndex(index);
    });
    connect(m_histogramView, &HistogramView::requestChanged, this, &TensorInspector::requestHistogram);
    connect(m_exportNpy, &QToolButton::clicked, this, &TensorInspector::exportNpyInteractive);
    connect(m_fetchWhole, &QToolButton::clicked, this, [this] {
        if (m_current < 0 || !m_tensors[static_cast<size_t>(m_current)].remote() || !m_fetchingWhole.isEmpty()) return;
        m_fetchingWhole = currentTensorName(); // one at a time: until its values, its failure or a new pause
        updateActions();
        emit fetchWholeRequested(m_fetchingWhole);
    });
    connect(m_exportPng, &QToolButton::clicked, this, &TensorInspector::exportPngInteractive);
    // Only the Histogram tab has a plot to export.
    connect(m_tabs, &QTabWidget::currentChanged, this,
        [this](int index) { m_exportPng->setVisible(index == HistogramTab); });
    connect(&m_analysisRunner, &LatestOnlyRunner::busyChanged, this, &TensorInspector::updateBusy);
    connect(&m_histogramRunner, &LatestOnlyRunner::busyChanged, this, &TensorInspector::updateBusy);

    clear();
}

TensorInspector::~TensorInspector() = default;

QSize TensorInspector::sizeHint() const
{
    return QSize(520, 680);
}

void TensorInspector::setTensors(const QString& title, std::vector<InspectedTensor> tensors, int focus)
{
    if (tensors.empty()) {
        clear(title.isEmpty() ? tr("No tensors at this node") : tr("%1\n\nNo tensors at this node").arg(title));
        return;
    }
    m_tensors = std::move(tensors);
    m_current = -1;
    m_fetchingWhole.clear(); // a fetch still going on is for tensors no longer listed
    m_title->setText(title);
    m_title->setVisible(!title.isEmpty());
    populatePicker();
    int index = -1;
    if (!m_pickedName.isEmpty()) {
        const auto it = std::find_if(
            m_tensors.begin(), m_tensors.end(), [this](const InspectedTensor& t) { return t.name == m_pickedName; });
        if (it != m_tensors.end()) index = static_cast<int>(it - m_tensors.begin());
    }
    if (index < 0) index = std::clamp(focus, 0, static_cast<int>(m_tensors.size()) - 1);
    m_stack->setCurrentIndex(1);
    showIndex(index);
}

bool TensorInspector::showTensor(const QString& name)
{
    for (size_t i = 0; i < m_tensors.size(); ++i) {
        if (m_tensors[i].name == name) {
            m_pickedName = name;
            if (static_cast<int>(i) != m_current) showIndex(static_cast<int>(i));
            return true;
        }
    }
    return false;
}

void TensorInspector::clear(const QString& message)
{
    const bool hadTensor = m_current >= 0;
    m_analysisRunner.cancel();
    m_histogramRunner.cancel();
    ++m_serial;
    m_tensors.clear();
    m_current = -1;
    m_fetchingWhole.clear();
    m_stats = {};
    m_histogram = {};
    m_hasStats = m_hasHistogram = false;
    m_picker->clear();
    m_histogramView->clear();
    m_statsTable->clear();
    m_valueTable->clear();
    m_featureMapView->clear();
    m_message->setText(message.isEmpty() ? tr("Not paused") : message);
    m_stack->setCurrentIndex(0);
    updateActions();
    if (hadTensor) emit currentTensorChanged(QString());
}

QString TensorInspector::currentTensorName() const
{
    return m_current >= 0 ? m_tensors[static_cast<size_t>(m_current)].name : QString();
}

bool TensorInspector::setValues(const QString& name, const opscope::Tensor& values)
{
    for (size_t i = 0; i < m_tensors.size(); ++i) {
        InspectedTensor& t = m_tensors[i];
        if (t.name != name || !t.remote()) continue;
        if (name == m_fetchingWhole) m_fetchingWhole.clear();
        if (!values.defined() || values.shape() != t.shape) {
            updateActions();
            return false;
        }
        t.values = values;
        t.source.reset();
        if (static_cast<int>(i) == m_current) {
            m_current = -1; // shown again, now from the values here
            showIndex(static_cast<int>(i));
        }
        return true;
    }
    return false;
}

void TensorInspector::fetchWholeFailed(const QString& name)
{
    if (name != m_fetchingWhole) return;
    m_fetchingWhole.clear();
    updateActions();
}

const InspectedTensor* TensorInspector::currentInspected() const
{
    return m_current >= 0 ? &m_tensors[static_cast<size_t>(m_current)] : nullptr;
}

std::optional<opscope::Tensor> TensorInspector::currentTensor() const
{
    if (m_current < 0) return std::nullopt;
    return m_tensors[static_cast<size_t>(m_current)].values;
}

bool TensorInspector::isComputing() const
{
    return m_analysisRunner.busy() || m_histogramRunner.busy();
}

void TensorInspector::populatePicker()
{
    const QSignalBlocker block(m_picker);
    m_picker->clear();
    for (const InspectedTensor& t : m_tensors) {
        const QString shape = t.hasValues() ? formatShape(t.shapeOf()) : tr("(no values)");
        auto* item = new QTreeWidgetItem({ t.name, t.role, shape });
        item->setForeground(1, roleColour(t.role));
        item->setToolTip(0, t.name);
        item->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
        m_picker->addTopLevelItem(item);
    }
    const int rows = std::clamp(static_cast<int>(m_tensors.size()), 1, kPickerRows);
    const int hint = m_picker->sizeHintForRow(0);
    const int rowHeight = hint > 0 ? hint : fontMetrics().height() + 4;
    m_picker->setFixedHeight(rows * rowHeight + 2 * m_picker->frameWidth() + 2);
}

void TensorInspector::showIndex(int index)
{
    if (index < 0 || index >= static_cast<int>(m_tensors.size())) return;
    m_current = index;
    ++m_serial;
    {
        const QSignalBlocker block(m_picker);
        m_picker->setCurrentItem(m_picker->topLevelItem(index));
    }
    const InspectedTensor& t = m_tensors[static_cast<size_t>(index)];
    updateSummary();
    if (t.values.defined()) {
        m_valueTable->setTensor(t.values);
        m_featureMapView->setTensor(t.values);
    } else if (t.remote()) {
        m_valueTable->setSource(t.shape, t.dtype, t.source);
        m_featureMapView->setSource(t.shape, t.source); // the item shown is read when the tab is
    } else {
        m_valueTable->clear(tr("The tensor has no values"));
        m_featureMapView->clear(tr("The tensor has no values"));
    }
    const bool image = t.hasValues() && FeatureMapView::canShow(t.shapeOf());
    if (!image && m_tabs->currentIndex() == ImageTab) m_tabs->setCurrentIndex(HistogramTab);
    m_tabs->setTabEnabled(ImageTab, image);
    m_tabs->setTabToolTip(ImageTab, image ? QString() : tr("This shape cannot be shown as images"));
    startAnalysis();
    updateActions();
    emit currentTensorChanged(t.name);
}

void TensorInspector::updateSummary()
{
    if (m_current < 0) {
        m_summary->clear();
        return;
    }
    const InspectedTensor& t = m_tensors[static_cast<size_t>(m_current)];
    if (!t.hasValues()) {
        m_summary->setText(tr("%1 · no values").arg(t.role));
        return;
    }
    if (t.remote()) {
        m_summary->setText(tr("%1 · %2 · %3 values · %4 on %5")
                               .arg(t.role, formatShape(t.shape))
                               .arg(t.shape.size())
                               .arg(formatBytes(t.byteSize()), t.source->where()));
        return;
    }
    const int64_t n = t.values.size();
    m_summary->setText(tr("%1 · %2 · %3 values · %4")
                           .arg(t.role, formatShape(t.values.shape()))
                           .arg(n)
                           .arg(formatBytes(n * static_cast<int64_t>(sizeof(float)))));
}

TensorInspector::HistogramRequest TensorInspector::currentRequest() const
{
    return { m_histogramView->bins(), m_histogramView->scale(), m_histogramView->rangeLo(),
        m_histogramView->rangeHi() };
}

void TensorInspector::startAnalysis()
{
    m_stats = {};
    m_histogram = {};
    m_hasStats = m_hasHistogram = false;
    m_histogramRunner.cancel();
    const InspectedTensor& t = m_tensors[static_cast<size_t>(m_current)];
    if (t.remote()) {
        startRemoteAnalysis(t);
        return;
    }
    const opscope::Tensor values = t.values;
    if (!values.defined()) {
        m_analysisRunner.cancel();
        m_statsTable->clear(tr("no values"));
        m_histogramView->clear(tr("The tensor has no values"));
        // The (empty) histogram pane is final for this tensor; whoever waits for it can go on.
        emit histogramReady();
        return;
    }
    const bool async = values.size() > kAsyncElements;
    if (async) {
        m_statsTable->clear(tr("computing…"));
        m_histogramView->clear(tr("Computing…"));
    }
    LatestOnlyRunner::Work work
        = [this, values, request = currentRequest(), serial = m_serial]() -> LatestOnlyRunner::Apply {
        const debug::TensorStats stats = debug::computeStats(values.view());
        auto histogram = std::make_shared<const debug::Histogram>(
            debug::computeHistogram(values.view(), stats, request.bins, request.scale, request.lo, request.hi));
        return [this, serial, stats, histogram, request] { applyAnalysis(serial, stats, *histogram, request); };
    };
    if (async)
        m_analysisRunner.submit(std::move(work));
    else
        m_analysisRunner.runNow(work);
}

void TensorInspector::applyAnalysis(uint64_t serial, const debug::TensorStats& stats, const debug::Histogram& histogram,
    const HistogramRequest& request)
{
    if (serial != m_serial || m_current < 0) return;
    m_stats = stats;
    m_hasStats = true;
    m_statsTable->setStats(formatShape(m_tensors[static_cast<size_t>(m_current)].shapeOf()), stats);
    m_valueTable->model()->setHeatRange(stats.min, stats.max);
    emit statsReady();
    if (serial != m_serial) return;
    // The controls may have changed while the statistics were computed.
    if (request == currentRequest())
        applyHistogram(serial, histogram);
    else
        requestHistogram();
}

void TensorInspector::requestHistogram()
{
    if (m_current < 0) return;
    const InspectedTensor& t = m_tensors[static_cast<size_t>(m_current)];
    if (!m_hasStats) {
        // A running analysis picks up the new request when it lands; a failed remote one is asked again.
        if (t.remote() && !m_analysisRunner.busy()) startRemoteAnalysis(t);
        return;
    }
    if (t.remote()) {
        requestRemoteHistogram(t);
        return;
    }
    const opscope::Tensor values = t.values;
    if (!values.defined()) return;
    m_hasHistogram = false;
    LatestOnlyRunner::Work work
        = [this, values, stats = m_stats, request = currentRequest(), serial = m_serial]() -> LatestOnlyRunner::Apply {
        auto histogram = std::make_shared<const debug::Histogram>(
            debug::computeHistogram(values.view(), stats, request.bins, request.scale, request.lo, request.hi));
        return [this, serial, histogram] { applyHistogram(serial, *histogram); };
    };
    if (values.size() > kAsyncElements)
        m_histogramRunner.submit(std::move(work));
    else
        m_histogramRunner.runNow(work);
}

void TensorInspector::applyHistogram(uint64_t serial, const debug::Histogram& histogram)
{
    if (serial != m_serial || m_current < 0) return;
    m_histogram = histogram;
    m_hasHistogram = true;
    m_histogramView->setStats(m_stats);
    m_histogramView->setHistogram(histogram);
    updateActions();
    emit histogramReady();
}

void TensorInspector::updateBusy()
{
    m_busy->setVisible(isComputing());
}

void TensorInspector::updateActions()
{
    m_exportNpy->setEnabled(currentTensor().has_value() && currentTensor()->defined());
    const InspectedTensor* t = currentInspected();
    const bool remote = t && t->remote();
    m_fetchWhole->setVisible(remote);
    m_fetchWhole->setEnabled(remote && m_fetchingWhole.isEmpty());
    if (remote)
        m_fetchWhole->setToolTip(tr("Bring the whole tensor (%1) here from %2: to export it, to scan it here")
                                     .arg(formatBytes(t->byteSize()), t->source->where()));
    m_exportNpy->setToolTip(remote ? tr("Fetch the whole tensor first (Fetch Whole)") : tr("Save the tensor as a NumPy array"));
    m_exportPng->setEnabled(m_hasHistogram && m_histogramView->hasPlot());
}

bool TensorInspector::exportNpy(const QString& path, QString* error)
{
    const std::optional<opscope::Tensor> t = currentTensor();
    if (!t || !t->defined()) {
        if (error) *error = tr("There is no tensor to export.");
        return false;
    }
    try {
        opscope::writeNpy(QFile::encodeName(path).toStdString(), t->view());
    } catch (const std::exception& e) {
        if (error) *error = QString::fromLocal8Bit(e.what());
        return false;
    }
    return true;
}

bool TensorInspector::exportHistogramPng(const QString& path, QString* error)
{
    if (!m_hasHistogram || !m_histogramView->hasPlot()) {
        if (error) *error = tr("There is no histogram to export.");
        return false;
    }
    return m_histogramView->exportPng(path, error);
}

QString TensorInspector::suggestedPath(const QString& suffix) const
{
    static const QRegularExpression unsafe(QStringLiteral("[^A-Za-z0-9_.-]+"));
    QString base = currentTensorName();
    base.replace(unsafe, QStringLiteral("_"));
    if (base.isEmpty()) base = QStringLiteral("tensor");
    return QDir(m_lastDir).filePath(base + suffix);
}

void TensorInspector::exportNpyInteractive()
{
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export tensor"), suggestedPath(QStringLiteral(".npy")), tr("NumPy arrays (*.npy)"));
    if (path.isEmpty()) return;
    if (!path.endsWith(QLatin1String(".npy"), Qt::CaseInsensitive)) path += QStringLiteral(".npy");
    m_lastDir = QFileInfo(path).absolutePath();
    QString error;
    if (!exportNpy(path, &error)) QMessageBox::warning(this, tr("Export tensor"), error);
}

void TensorInspector::exportPngInteractive()
{
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export histogram"), suggestedPath(QStringLiteral("_histogram.png")), tr("PNG images (*.png)"));
    if (path.isEmpty()) return;
    if (!path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive)) path += QStringLiteral(".png");
    m_lastDir = QFileInfo(path).absolutePath();
    QString error;
    if (!exportHistogramPng(path, &error)) QMessageBox::warning(this, tr("Export histogram"), error);
}

void TensorInspector::setCurrentTab(Tab tab)
{
    const int index = static_cast<int>(tab);
    if (m_tabs->isTabEnabled(index)) m_tabs->setCurrentIndex(index);
}

TensorInspector::Tab TensorInspector::currentTab() const
{
    return static_cast<Tab>(m_tabs->currentIndex());
}

} // namespace opscope::gui
