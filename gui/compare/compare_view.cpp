#include "gui/compare/compare_view.h"

#include "debug/tensor_stats.h"
#include "gui/compare/divergence_scale.h"
#include "gui/tensor/color_map.h"
#include "gui/tensor/feature_map_render.h"
#include "gui/tensor/value_format.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <QComboBox>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QTableWidget>
#include <QTabWidget>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {
constexpr int kBins = 64;
const QColor kColorA(0x2f, 0x7f, 0xe0), kColorB(0xf0, 0x8a, 0x24), kColorDiff(0x8e, 0x5c, 0xd9);

QCustomPlot* makePlot(QWidget* parent, const QString& xLabel)
{
    auto* plot = new QCustomPlot(parent);
    plot->xAxis->setLabel(xLabel);
    plot->yAxis->setLabel(QObject::tr("count"));
    plot->setMinimumHeight(120);
    plot->xAxis->ticker()->setTickCount(4);
    plot->xAxis->setNumberFormat(QStringLiteral("g"));
    plot->xAxis->setNumberPrecision(3);
    return plot;
}

// Bin counts of the finite values of `t` over [lo, hi].
std::vector<double> countsOf(const Tensor& t, double lo, double hi)
{
    const debug::TensorStats stats = debug::computeStats(t.view());
    const debug::Histogram h = debug::computeHistogram(t.view(), stats, kBins, debug::HistogramScale::Linear, lo, hi);
    return std::vector<double>(h.bins.begin(), h.bins.end());
}

void plotSteps(QCustomPlot* plot, const std::vector<double>& counts, double lo, double hi, const QColor& color,
    const QString& name, bool fill)
{
    QCPGraph* g = plot->addGraph();
    g->setName(name);
    g->setLineStyle(QCPGraph::lsStepLeft);
    QPen pen(color, 1.6);
    g->setPen(pen);
    if (fill) {
        QColor c = color;
        c.setAlpha(60);
        g->setBrush(c);
    }
    QVector<double> x, y;
    const double w = (hi - lo) / kBins;
    for (size_t i = 0; i < counts.size(); ++i) {
        x << lo + static_cast<double>(i) * w;
        y << counts[i];
    }
    x << hi;
    y << (counts.empty() ? 0 : counts.back());
    g->setData(x, y, true);
}

// A tensor's finite range, widened when empty.
std::pair<double, double> finiteRange(const Tensor& t)
{
    const debug::TensorStats s = debug::computeStats(t.view());
    double lo = s.finite ? s.min : 0, hi = s.finite ? s.max : 1;
    if (!(lo < hi)) {
        lo -= 0.5;
        hi += 0.5;
    }
    return { lo, hi };
}
}

CompareView::CompareView(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_title = new QLabel(this);
    m_title->setStyleSheet(QStringLiteral("font-weight: bold;"));
    m_picker = new QComboBox(this);
    m_picker->setToolTip(tr("The node's tensors both runs have: its outputs, then its inputs"));
    layout->addWidget(m_title);
    layout->addWidget(m_picker);
    m_metrics = new QLabel(this);
    m_metrics->setWordWrap(true);
    m_metrics->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_metrics);
    m_message = new QLabel(this);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    layout->addWidget(m_message);

    m_tabs = new QTabWidget(this);
    auto* hist = new QWidget(m_tabs);
    auto* histLayout = new QVBoxLayout(hist);
    m_overlay = makePlot(hist, tr("value (A blue, B orange)"));
    m_overlay->legend->setVisible(true);
    m_diffPlot = makePlot(hist, tr("A − B"));
    histLayout->addWidget(m_overlay, 3);
    histLayout->addWidget(m_diffPlot, 2);
    m_tabs->addTab(hist, tr("Histograms"));

    m_table = new QTableWidget(0, 4, m_tabs);
    m_table->setHorizontalHeaderLabels({ tr("index"), tr("A"), tr("B"), tr("A − B") });
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setToolTip(tr("The %1 elements that differ most, largest |A − B| first").arg(kTopRows));
    m_tabs->addTab(m_table, tr("Values"));

    auto* maps = new QWidget(m_tabs);
    auto* mapsLayout = new QGridLayout(maps);
    auto* channelLabel = new QLabel(tr("Map"), maps);
    m_channel = new QSpinBox(maps);
    mapsLayout->addWidget(channelLabel, 0, 0);
    mapsLayout->addWidget(m_channel, 0, 1, 1, 2, Qt::AlignLeft);
    const QString captions[3] = { tr("A"), tr("B"), tr("|A − B|") };
    for (int i = 0; i < 3; ++i) {
        auto* caption = new QLabel(captions[i], maps);
        caption->setAlignment(Qt::AlignCenter);
        m_mapLabels[i] = new QLabel(maps);
        m_mapLabels[i]->setAlignment(Qt::AlignCenter);
        m_mapLabels[i]->setMinimumSize(96, 96);
        mapsLayout->addWidget(caption, 1, i);
        mapsLayout->addWidget(m_mapLabels[i], 2, i);
    }
    mapsLayout->setRowStretch(3, 1);
    m_tabs->addTab(maps, tr("Maps"));
    layout->addWidget(m_tabs, 1);

    connect(m_picker, &QComboBox::currentIndexChanged, this, [this] { showPair(); });
    connect(m_channel, &QSpinBox::valueChanged, this, [this] { drawMaps(); });
    clear(tr("No comparison. Debug ▸ Compare… runs the model again as B and compares every tensor."));
}

void CompareView::setTensors(const QString& title, const QStringList& tensors, const debug::RecordedRun* a,
    const debug::RecordedRun* b, const debug::Comparison* c)
{
    m_a = a;
    m_b = b;
    m_c = c;
    m_title->setText(title);
    const QSignalBlocker block(m_picker);
    const QString keep = m_picker->currentText();
    m_picker->clear();
    m_picker->addItems(tensors);
    const int i = m_picker->findText(keep);
    m_picker->setCurrentIndex(i >= 0 ? i : 0);
    showPair();
}

bool CompareView::showTensor(const QString& name)
{
    const int i = m_picker->findText(name);
    if (i < 0) return false;
    m_picker->setCurrentIndex(i);
    return true;
}

void CompareView::clear(const QString& message)
{
    m_a = m_b = nullptr;
    m_c = nullptr;
    m_ta.reset();
    m_tb.reset();
    m_diff.reset();
    m_countsA.clear();
    m_countsB.clear();
    m_countsDiff.clear();
    const QSignalBlocker block(m_picker);
    m_picker->clear();
    m_title->clear();
    m_metrics->clear();
    m_message->setText(message);
    m_message->show();
    m_tabs->hide();
}

QString CompareView::currentTensor() const
{
    return m_picker->currentText();
}

QString CompareView::metricsText() const
{
    return m_metrics->text();
}

void CompareView::showPair()
{
    m_ta.reset();
    m_tb.reset();
    m_diff.reset();
    const std::string name = m_picker->currentText().toStdString();
    if (!m_a || !m_b || name.empty()) {
        m_message->setText(tr("Nothing of this node was compared."));
        m_message->show();
        m_tabs->hide();
        return;
    }
    const auto ia = m_a->tensors.find(name), ib = m_b->tensors.find(name);
    if (ia == m_a->tensors.end() || ib == m_b->tensors.end()) {
        m_metrics->clear();
        m_message->setText(ia == m_a->tensors.end() ? tr("%1 is only in run B.").arg(m_picker->currentText())
                                                    : tr("%1 is only in run A: B has no tensor of that name (unmatched).")
                                                          .arg(m_picker->currentText()));
        m_message->show();
        m_tabs->hide();
        return;
    }
    const debug::TensorDiff* d = m_c ? m_c->find(name) : nullptr;
    if (d) {
        QString text = tr("max |A−B| %1 · max rel %2 · rel L2 %3 · cosine %4 · SQNR %5 dB · %6 beyond tolerance")
                           .arg(DivergenceScale::format(d->maxAbs), DivergenceScale::format(d->maxRel),
                               DivergenceScale::format(d->relL2), DivergenceScale::format(d->cosine),
                               DivergenceScale::format(d->sqnrDb), QString::number(100 * d->beyond, 'g', 3) + QLatin1Char('%'));
        if (d->nanOnlyA || d->nanOnlyB)
            text += tr(" · NaN/Inf only in A: %1, only in B: %2").arg(d->nanOnlyA).arg(d->nanOnlyB);
        if (!d->problem.empty()) text = QString::fromStdString(d->problem);
        m_metrics->setText(QStringLiteral("<span style='color:%1'>%2</span>")
                               .arg(d->diverges ? QStringLiteral("#c62828") : QStringLiteral("#2e7d32"), text.toHtmlEscaped()));
        if (!d->problem.empty()) {
            m_message->setText(tr("The two tensors cannot be compared."));
            m_message->show();
            m_tabs->hide();
            return;
        }
    }
    m_message->hide();
    m_tabs->show();
    // Both as float32 values of A's shape (a B of another shape with as many elements is read in
    // order, as the comparison did).
    const Tensor a = ia->second.dtype() == DType::Float32 ? ia->second : ia->second.astype(DType::Float32);
    Tensor b = ib->second.dtype() == DType::Float32 ? ib->second : ib->second.astype(DType::Float32);
    if (b.shape() != a.shape()) b = b.reshape(a.shape());
    Tensor diff(a.shape());
    const float *pa = a.view().data(), *pb = b.view().data();
    float* pd = diff.data();
    for (int64_t i = 0; i < a.size(); ++i)
        pd[i] = pa[i] - pb[i];
    m_ta = a;
    m_tb = b;
    m_diff = diff;
    drawHistograms(a, b, diff);
    fillTable(a, b);
    const FeatureMapLayout layout = FeatureMapLayout::of(a.shape());
    m_channel->setEnabled(layout.valid());
    m_channel->setRange(0, layout.valid() ? static_cast<int>(layout.maps - 1) : 0);
    drawMaps();
}

void CompareView::drawHistograms(const Tensor& a, const Tensor& b, const Tensor& diff)
{
    const auto [loA, hiA] = finiteRange(a);
    const auto [loB, hiB] = finiteRange(b);
    const double lo = std::min(loA, loB), hi = std::max(hiA, hiB);
    m_countsA = countsOf(a, lo, hi);
    m_countsB = countsOf(b, lo, hi);
    m_overlay->clearGraphs();
    plotSteps(m_overlay, m_countsA, lo, hi, kColorA, tr("A"), true);
    plotSteps(m_overlay, m_countsB, lo, hi, kColorB, tr("B"), false);
    m_overlay->xAxis->setRange(lo, hi);
    const double top = std::max(*std::max_element(m_countsA.begin(), m_countsA.end()),
        *std::max_element(m_countsB.begin(), m_countsB.end()));
    m_overlay->yAxis->setRange(0, std::max(1.0, top * 1.08));
    m_overlay->replot();

    const auto [dlo, dhi] = finiteRange(diff);
    m_countsDiff = countsOf(diff, dlo, dhi);
    m_diffPlot->clearGraphs();
    plotSteps(m_diffPlot, m_countsDiff, dlo, dhi, kColorDiff, tr("A − B"), true);
    m_diffPlot->xAxis->setRange(dlo, dhi);
    m_diffPlot->yAxis->setRange(0, std::max(1.0, *std::max_element(m_countsDiff.begin(), m_countsDiff.end()) * 1.08));
    m_diffPlot->replot();
}

void CompareView::fillTable(const Tensor& a, const Tensor& b)
{
    const int64_t n = a.size();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    const float *pa = a.view().data(), *pb = b.view().data();
    // Largest |A − B| first; a NaN or Inf on one side only counts as the largest.
    auto key = [&](int64_t i) {
        const double x = pa[i], y = pb[i];
        if (std::isnan(x) && std::isnan(y)) return 0.0;
        if (x == y) return 0.0;
        const double d = std::fabs(x - y);
        return std::isfinite(d) ? d : std::numeric_limits<double>::infinity();
    };
    const int64_t rows = std::min<int64_t>(n, kTopRows);
    std::partial_sort(order.begin(), order.begin() + rows, order.end(), [&](int64_t i, int64_t j) {
        const double ki = key(i), kj = key(j);
        return ki != kj ? ki > kj : i < j;
    });
    m_table->setRowCount(static_cast<int>(rows));
    std::vector<int64_t> index(static_cast<size_t>(a.shape().ndim()));
    for (int64_t r = 0; r < rows; ++r) {
        int64_t flat = order[static_cast<size_t>(r)];
        for (int axis = a.shape().ndim() - 1; axis >= 0; --axis) {
            index[static_cast<size_t>(axis)] = flat % a.shape()[axis];
            flat /= a.shape()[axis];
        }
        const int64_t i = order[static_cast<size_t>(r)];
        const QString cells[4] = { formatIndex(index), formatValue(pa[i]), formatValue(pb[i]),
            formatValue(static_cast<double>(pa[i]) - pb[i]) };
        for (int c = 0; c < 4; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(static_cast<int>(r), c, item);
        }
    }
    m_table->resizeColumnsToContents();
}

void CompareView::drawMaps()
{
    for (QLabel* l : m_mapLabels)
        l->clear();
    if (!m_ta || !m_tb || !m_diff) return;
    const FeatureMapLayout layout = FeatureMapLayout::of(m_ta->shape());
    if (!layout.valid()) {
        m_mapLabels[1]->setText(tr("%1 cannot be drawn as images").arg(formatShape(m_ta->shape())));
        return;
    }
    Tensor absDiff(m_diff->shape());
    const float* pd = m_diff->view().data();
    float* pabs = absDiff.data();
    for (int64_t i = 0; i < absDiff.size(); ++i)
        pabs[i] = std::fabs(pd[i]);
    const int map = std::clamp(m_channel->value(), 0, static_cast<int>(layout.maps - 1));
    // A and B on A's range, so that equal values have equal colours; |A − B| on its own.
    const RenderedMaps ra = renderFeatureMaps(*m_ta, layout, 0, MapScaling::Shared, false);
    const RenderedMaps rb = renderFeatureMaps(*m_tb, layout, 0, MapScaling::Shared, false);
    const RenderedMaps rd = renderFeatureMaps(absDiff, layout, 0, MapScaling::PerMap, false);
    const RenderedMaps* all[3] = { &ra, &rb, &rd };
    for (int k = 0; k < 3; ++k) {
        if (static_cast<size_t>(map) >= all[k]->images.size()) continue;
        QImage img = all[k]->images[static_cast<size_t>(map)];
        img.setColorTable(colorTable(k == 2 ? ColorMap::Gray : ColorMap::Viridis));
        const int side = 128;
        m_mapLabels[k]->setPixmap(QPixmap::fromImage(img.scaled(side, side, Qt::KeepAspectRatio, Qt::FastTransformation)));
        const auto [lo, hi] = all[k]->ranges[static_cast<size_t>(map)];
        m_mapLabels[k]->setToolTip(tr("%1 … %2").arg(formatValue(lo), formatValue(hi)));
    }
}

} // namespace opscope::gui
