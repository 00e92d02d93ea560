#include "gui/tensor/histogram_view.h"

#include "gui/tensor/value_format.h"
#include "gui/widgets/message_stack.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedWidget>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace opscope::gui {

namespace {
const QColor kBarColor(76, 120, 168);
const QColor kHoverColor(245, 133, 24);

QLabel* valueLabel(QWidget* parent)
{
    auto* l = new QLabel(QStringLiteral("–"), parent);
    l->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}

QLabel* nameLabel(const QString& text, QWidget* parent)
{
    auto* l = new QLabel(text, parent);
    l->setForegroundRole(QPalette::PlaceholderText);
    return l;
}

void setCount(QLabel* label, uint64_t n, bool alarm)
{
    label->setText(QString::number(n));
    label->setStyleSheet(alarm && n > 0 ? QStringLiteral("color: #d62728; font-weight: bold;") : QString());
}
} // namespace

HistogramView::HistogramView(QWidget* parent)
    : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(4);

    auto* controls = new QHBoxLayout;
    controls->setSpacing(6);
    controls->addWidget(new QLabel(tr("Bins"), this));
    m_binsSpin = new QSpinBox(this);
    m_binsSpin->setRange(kMinBins, kMaxBins);
    m_binsSpin->setValue(kDefaultBins);
    m_binsSpin->setKeyboardTracking(false);
    m_binsSpin->setAccelerated(true);
    m_binsSpin->setToolTip(tr("Number of equal bins over the range"));
    controls->addWidget(m_binsSpin);
    controls->addSpacing(6);
    m_scaleCombo = new QComboBox(this);
    m_scaleCombo->addItems({ tr("Linear"), tr("Log magnitude") });
    m_scaleCombo->setToolTip(tr("Bin the values themselves, or log10 |x| of the non-zero values"));
    controls->addWidget(m_scaleCombo);
    controls->addSpacing(6);
    m_logCount = new QCheckBox(tr("Log count"), this);
    m_logCount->setToolTip(tr("Logarithmic count axis: shows the rare values in the tails"));
    controls->addWidget(m_logCount);
    controls->addStretch(1);
    outer->addLayout(controls);

    auto* range = new QHBoxLayout;
    range->setSpacing(6);
    range->addWidget(new QLabel(tr("Range"), this));
    m_loEdit = new QLineEdit(this);
    m_hiEdit = new QLineEdit(this);
    for (QLineEdit* e : { m_loEdit, m_hiEdit }) {
        e->setClearButtonEnabled(false);
        e->setMinimumWidth(70);
        e->setToolTip(tr("Bounds of the binned range; values outside it are counted in the edge bins. "
                         "Empty: the finite minimum and maximum."));
    }
    range->addWidget(m_loEdit, 1);
    range->addWidget(new QLabel(QStringLiteral("–"), this));
    range->addWidget(m_hiEdit, 1);
    m_autoButton = new QPushButton(tr("Auto"), this);
    m_autoButton->setCheckable(true);
    m_autoButton->setChecked(true);
    m_autoButton->setToolTip(tr("Bin over the finite minimum to maximum"));
    range->addWidget(m_autoButton);
    outer->addLayout(range);

    // The plot, or a message in its place; the counts beside it either way.
    auto* body = new QHBoxLayout;
    body->setContentsMargins(0, 0, 0, 0);
    body->setSpacing(6);
    m_stack = messageStack(this, tr("No histogram"), &m_message);
    m_message->setMinimumWidth(120);
    m_plot = new QCustomPlot(m_stack);
    m_plot->setMinimumSize(200, 150);
    m_plot->setNotAntialiasedElements(QCP::aePlottables | QCP::aeGrid | QCP::aeAxes);
    m_plot->setPlottingHint(QCP::phCacheLabels, true);
    m_plot->installEventFilter(this);
    m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setWidthType(QCPBars::wtPlotCoords);
    m_bars->setAntialiased(false);
    m_bars->setAntialiasedFill(false);
    m_bars->setPen(QPen(kBarColor.darker(115)));
    m_bars->setBrush(kBarColor);
    m_edgeBars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_edgeBars->setWidthType(QCPBars::wtPlotCoords);
    m_edgeBars->setAntialiased(false);
    m_edgeBars->setPen(QPen(kBarColor.darker(130)));
    m_edgeBars->setBrush(QBrush(kBarColor.darker(130), Qt::BDiagPattern));
    m_hoverBar = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_hoverBar->setWidthType(QCPBars::wtPlotCoords);
    m_hoverBar->setAntialiased(false);
    m_hoverBar->setPen(QPen(kHoverColor.darker(115)));
    m_hoverBar->setBrush(kHoverColor);
    m_plot->yAxis->setLabel(tr("count"));
    m_plot->xAxis->setLabel(tr("value"));
    m_stack->addWidget(m_plot);
    body->addWidget(m_stack, 1);
    auto* info = new QGridLayout;
    info->setContentsMargins(0, 4, 0, 0);
    info->setHorizontalSpacing(8);
    info->setVerticalSpacing(3);
    m_totalValue = valueLabel(this);
    m_binnedValue = valueLabel(this);
    m_nanValue = valueLabel(this);
    m_infValue = valueLabel(this);
    m_posInfValue = valueLabel(this);
    m_negInfValue = valueLabel(this);
    m_infLabel = nameLabel(tr("Inf"), this);
    m_posInfLabel = nameLabel(tr("+Inf"), this);
    m_negInfLabel = nameLabel(tr("-Inf"), this);
    m_zerosValue = valueLabel(this);
    m_widthValue = valueLabel(this);
    m_zerosLabel = nameLabel(tr("Zeros"), this);
    int row = 0;
    auto addRow = [&](QLabel* name, QLabel* value) {
        info->addWidget(name, row, 0);
        info->addWidget(value, row, 1);
        ++row;
    };
    addRow(nameLabel(tr("Total"), this), m_totalValue);
    addRow(nameLabel(tr("Binned"), this), m_binnedValue);
    addRow(nameLabel(tr("NaN"), this), m_nanValue);
    addRow(m_infLabel, m_infValue);
    addRow(m_posInfLabel, m_posInfValue);
    addRow(m_negInfLabel, m_negInfValue);
    addRow(m_zerosLabel, m_zerosValue);
    addRow(nameLabel(tr("Bin width"), this), m_widthValue);
    info->setRowStretch(row, 1);
    m_nanValue->setToolTip(tr("Not-a-number values, left out of the bins"));
    m_infValue->setToolTip(tr("+Inf and -Inf values, left out of the bins"));
    m_posInfValue->setToolTip(tr("+Inf values, left out of the bins"));
    m_negInfValue->setToolTip(tr("-Inf values, left out of the bins"));
    body->addLayout(info);
    outer->addLayout(body, 1);

    applyPalette();
    updateAxes();
    updateInfo();
    clear();

    connect(m_binsSpin, &QSpinBox::valueChanged, this, [this] { emitRequest(); });
    connect(m_scaleCombo, &QComboBox::currentIndexChanged, this, [this] {
        // Bounds typed for one scale mean nothing in the other.
        m_manualRange = false;
        updateRangeEdits();
        emitRequest();
    });
    connect(m_logCount, &QCheckBox::toggled, this, [this] {
        updateAxes();
        rebuildPlot();
    });
    connect(m_loEdit, &QLineEdit::editingFinished, this, &HistogramView::applyRangeEdits);
    connect(m_hiEdit, &QLineEdit::editingFinished, this, &HistogramView::applyRangeEdits);
    connect(m_autoButton, &QPushButton::clicked, this, [this] { setRange(0, 0); });
    connect(m_plot, &QCustomPlot::mouseMove, this,
        [this](QMouseEvent* e) { hoverAt(e->position().toPoint(), e->globalPosition().toPoint()); });
}

int HistogramView::bins() const
{
    return m_binsSpin->value();
}

debug::HistogramScale HistogramView::scale() const
{
    return m_scaleCombo->currentIndex() == 1 ? debug::HistogramScale::LogMagnitude : debug::HistogramScale::Linear;
}

bool HistogramView::logCount() const
{
    return m_logCount->isChecked();
}

void HistogramView::setLogCount(bool on)
{
    m_logCount->setChecked(on);
}

void HistogramView::setBins(int bins)
{
    m_binsSpin->setValue(std::clamp(bins, kMinBins, kMaxBins));
}

void HistogramView::setScale(debug::HistogramScale scale)
{
    m_scaleCombo->setCurrentIndex(scale == debug::HistogramScale::LogMagnitude ? 1 : 0);
}

void HistogramView::setRange(double lo, double hi)
{
    const bool manual = std::isfinite(lo) && std::isfinite(hi) && lo < hi;
    const bool changed = manual != m_manualRange || (manual && (lo != m_lo || hi != m_hi));
    m_manualRange = manual;
    if (manual) {
        m_lo = lo;
        m_hi = hi;
    }
    updateRangeEdits();
    if (changed) emitRequest();
}

void HistogramView::emitRequest()
{
    clearHover();
    emit requestChanged(bins(), scale(), rangeLo(), rangeHi());
}

void HistogramView::applyRangeEdits()
{
    const QString loText = m_loEdit->text().trimmed(), hiText = m_hiEdit->text().trimmed();
    if (loText.isEmpty() && hiText.isEmpty()) {
        setRange(0, 0);
        return;
    }
    // An empty side keeps the bound shown as its placeholder.
    bool okLo = true, okHi = true;
    const double lo = loText.isEmpty() ? m_loEdit->placeholderText().toDouble(&okLo) : loText.toDouble(&okLo);
    const double hi = hiText.isEmpty() ? m_hiEdit->placeholderText().toDouble(&okHi) : hiText.toDouble(&okHi);
    const bool loOk = okLo && std::isfinite(lo), hiOk = okHi && std::isfinite(hi);
    const bool valid = loOk && hiOk && lo < hi;
    const QString bad = QStringLiteral("QLineEdit { color: #d62728; }");
    m_loEdit->setStyleSheet(!loOk || (hiOk && !valid) ? bad : QString());
    m_hiEdit->setStyleSheet(!hiOk || (loOk && !valid) ? bad : QString());
    if (!valid) return;
    setRange(lo, hi);
}

void HistogramView::updateRangeEdits()
{
    m_autoButton->setChecked(!m_manualRange);
    m_loEdit->setStyleSheet(QString());
    m_hiEdit->setStyleSheet(QString());
    if (m_manualRange) {
        // The field being typed in keeps its text; an empty one stands for its placeholder.
        if (!m_loEdit->hasFocus()) m_loEdit->setText(formatValue(m_lo));
        if (!m_hiEdit->hasFocus()) m_hiEdit->setText(formatValue(m_hi));
    } else {
        m_loEdit->clear();
        m_hiEdit->clear();
    }
    const bool known = hasHistogram();
    m_loEdit->setPlaceholderText(known ? formatValue(m_histogram.lo) : tr("min"));
    m_hiEdit->setPlaceholderText(known ? formatValue(m_histogram.hi) : tr("max"));
}

QString HistogramView::nothingToPlot() const
{
    const uint64_t binned = std::accumulate(m_histogram.bins.begin(), m_histogram.bins.end(), uint64_t { 0 });
    if (!hasHistogram() || binned > 0) return {};
    const uint64_t total = m_histogram.nan + m_histogram.inf + m_histogram.zeros;
    if (total == 0) return tr("No values to plot");
    const QString all = tr("All %1 values are").arg(total);
    if (m_histogram.zeros > 0) // log magnitude: zeros have none
        return m_histogram.zeros == total ? tr("%1 zero: they have no log magnitude").arg(all)
                                          : tr("No value has a log magnitude: %1 zero, %2 NaN, %3 Inf")
                                                .arg(m_histogram.zeros)
                                                .arg(m_histogram.nan)
                                                .arg(m_histogram.inf);
    if (m_histogram.inf == 0) return tr("%1 NaN").arg(all);
    const bool split = m_hasStats && static_cast<uint64_t>(m_stats.posInf + m_stats.negInf) == m_histogram.inf;
    QStringList parts;
    if (m_histogram.nan > 0) parts << tr("%1 NaN").arg(m_histogram.nan);
    if (split && m_stats.posInf > 0) parts << tr("%1 +Inf").arg(m_stats.posInf);
    if (split && m_stats.negInf > 0) parts << tr("%1 -Inf").arg(m_stats.negInf);
    if (!split) parts << tr("%1 Inf").arg(m_histogram.inf);
    if (parts.size() == 1) // one kind only
        return tr("%1 %2").arg(all, parts.first().section(QLatin1Char(' '), 1));
    return tr("%1 %2: %3")
        .arg(all, m_histogram.nan > 0 ? tr("NaN or Inf") : tr("Inf"), parts.join(QStringLiteral(", ")));
}

bool HistogramView::hasPlot() const
{
    return hasHistogram() && nothingToPlot().isEmpty();
}

void HistogramView::showMessage(const QString& text, bool alarm)
{
    m_message->setText(text);
    m_message->setForegroundRole(alarm ? QPalette::WindowText : QPalette::PlaceholderText);
    m_message->setStyleSheet(alarm ? QStringLiteral("color: #d62728; font-weight: 600;") : QString());
    m_stack->setCurrentIndex(0);
}

void HistogramView::setHistogram(const debug::Histogram& histogram)
{
    m_histogram = histogram;
    if (!hasHistogram()) {
        clear();
        return;
    }
    if (const QString reason = nothingToPlot(); !reason.isEmpty()) {
        // No finite value: empty axes over a made-up range would say nothing.
        clearHover();
        m_bars->data()->clear();
        m_edgeBars->data()->clear();
        showMessage(reason, true);
        updateInfo();
        return;
    }
    m_stack->setCurrentIndex(1);
    if (!m_manualRange) {
        m_loEdit->setPlaceholderText(formatValue(m_histogram.lo));
        m_hiEdit->setPlaceholderText(formatValue(m_histogram.hi));
    }
    clearHover();
    updateAxes();
    rebuildPlot();
    updateInfo();
}

void HistogramView::setStats(const debug::TensorStats& stats)
{
    m_stats = stats;
    m_hasStats = true;
    if (!hasHistogram()) return;
    if (const QString reason = nothingToPlot(); !reason.isEmpty())
        showMessage(reason, true); // the Inf count splits into +Inf and -Inf now
    else
        rebuildPlot();
    updateInfo();
}

void HistogramView::clear(const QString& message)
{
    m_histogram = {};
    m_stats = {};
    m_hasStats = false;
    m_edgeBars->data()->clear();
    clearHover();
    m_bars->data()->clear();
    m_hoverBar->data()->clear();
    showMessage(message.isEmpty() ? tr("No histogram") : message, false);
    updateInfo();
    if (!m_manualRange) {
        m_loEdit->setPlaceholderText(tr("min"));
        m_hiEdit->setPlaceholderText(tr("max"));
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

double HistogramView::binWidth() const
{
    const size_t n = m_histogram.bins.size();
    return n == 0 ? 0.0 : (m_histogram.hi - m_histogram.lo) / static_cast<double>(n);
}

void HistogramView::updateAxes()
{
    const bool log = logCount();
    m_plot->xAxis->setLabel(m_histogram.scale == debug::HistogramScale::LogMagnitude ? tr("log10 |x|") : tr("value"));
    if (log) {
        m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
        auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
        ticker->setLogBase(10);
        ticker->setSubTickCount(8);
        m_plot->yAxis->setTicker(ticker);
        m_plot->yAxis->setNumberFormat(QStringLiteral("eb"));
        m_plot->yAxis->setNumberPrecision(0);
    } else {
        m_plot->yAxis->setScaleType(QCPAxis::stLinear);
        // Counts are whole numbers: ticks only at integer multiples.
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        m_plot->yAxis->setTicker(ticker);
        m_plot->yAxis->setNumberFormat(QStringLiteral("gb"));
        m_plot->yAxis->setNumberPrecision(6);
    }
}

void HistogramView::rebuildPlot()
{
    clearHover();
    const size_t n = m_histogram.bins.size();
    if (n == 0) {
        m_bars->data()->clear();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const double w = binWidth();
    const bool log = logCount();
    // The engine counts values outside a given range in the edge bins; mark those bins.
    const bool linear = m_histogram.scale == debug::HistogramScale::Linear;
    const bool known = linear && m_hasStats && m_stats.finite > 0;
    m_clampedLow = known && m_stats.min < m_histogram.lo;
    m_clampedHigh = known && m_stats.max > m_histogram.hi;
    QVector<QCPBarsData> data, edges;
    data.reserve(static_cast<qsizetype>(n));
    uint64_t peak = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t c = m_histogram.bins[i];
        peak = std::max(peak, c);
        // A log axis has no place for 0; those bins are simply left out.
        if (log && c == 0) continue;
        const QCPBarsData bar(m_histogram.lo + (static_cast<double>(i) + 0.5) * w, static_cast<double>(c));
        const bool edge = (i == 0 && m_clampedLow) || (i + 1 == n && m_clampedHigh);
        (edge ? edges : data).append(bar);
    }
    m_bars->data()->set(data, true);
    m_edgeBars->data()->set(edges, true);
    m_bars->setWidth(w);
    m_edgeBars->setWidth(w);
    m_hoverBar->setWidth(w);
    // A bar narrower than a pixel keeps its outline so it stays visible.
    const double pixelsPerBin = w * m_plot->axisRect()->width() / std::max(1e-300, m_histogram.hi - m_histogram.lo);
    m_bars->setPen(pixelsPerBin < 3 ? QPen(kBarColor) : QPen(kBarColor.darker(115)));

    const double pad = (m_histogram.hi - m_histogram.lo) * 0.02;
    m_plot->xAxis->setRange(m_histogram.lo - pad, m_histogram.hi + pad);
    if (log)
        m_plot->yAxis->setRange(0.5, std::max(10.0, static_cast<double>(peak) * 2.5));
    else
        m_plot->yAxis->setRange(0, peak == 0 ? 1.0 : static_cast<double>(peak) * 1.08);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HistogramView::updateInfo()
{
    const bool known = hasHistogram();
    const bool split = known && m_hasStats;
    m_infLabel->setVisible(!split);
    m_infValue->setVisible(!split);
    m_posInfLabel->setVisible(split);
    m_posInfValue->setVisible(split);
    m_negInfLabel->setVisible(split);
    m_negInfValue->setVisible(split);
    const bool logMag = m_histogram.scale == debug::HistogramScale::LogMagnitude;
    m_zerosValue->setToolTip(logMag ? tr("Exact zeros have no log magnitude and are counted apart")
                                    : tr("Exact zeros (they are in the bins)"));
    if (!known) {
        for (QLabel* l : { m_totalValue, m_binnedValue, m_nanValue, m_infValue, m_zerosValue, m_widthValue }) {
            l->setText(QStringLiteral("–"));
            l->setStyleSheet(QString());
        }
        return;
    }
    const uint64_t binned = std::accumulate(m_histogram.bins.begin(), m_histogram.bins.end(), uint64_t { 0 });
    m_totalValue->setText(QString::number(binned + m_histogram.nan + m_histogram.inf + m_histogram.zeros));
    m_binnedValue->setText(QString::number(binned));
    setCount(m_nanValue, m_histogram.nan, true);
    setCount(m_infValue, m_histogram.inf, true);
    setCount(m_posInfValue, static_cast<uint64_t>(m_stats.posInf), true);
    setCount(m_negInfValue, static_cast<uint64_t>(m_stats.negInf), true);
    const bool zerosKnown = logMag || m_hasStats;
    m_zerosLabel->setVisible(zerosKnown);
    m_zerosValue->setVisible(zerosKnown);
    setCount(m_zerosValue, logMag ? m_histogram.zeros : static_cast<uint64_t>(m_stats.zeros), false);
    m_widthValue->setText(binned > 0 ? formatValue(binWidth()) : QStringLiteral("–"));
}

void HistogramView::hoverAt(const QPoint& pos, const QPoint& globalPos)
{
    const size_t n = m_histogram.bins.size();
    if (n == 0 || !m_plot->axisRect()->rect().contains(pos)) {
        clearHover();
        return;
    }
    const double key = m_plot->xAxis->pixelToCoord(pos.x());
    const double w = binWidth();
    const double f = std::floor((key - m_histogram.lo) / w);
    if (!(f >= 0 && f < static_cast<double>(n))) {
        clearHover();
        return;
    }
    const int bin = static_cast<int>(f);
    const double lo = m_histogram.lo + bin * w;
    const double hi = bin + 1 == static_cast<int>(n) ? m_histogram.hi : lo + w;
    const uint64_t count = m_histogram.bins[static_cast<size_t>(bin)];
    const QString close = bin + 1 == static_cast<int>(n) ? QStringLiteral("]") : QStringLiteral(")");
    QString text = QStringLiteral("[%1, %2%3: %4").arg(formatValue(lo), formatValue(hi), close).arg(count);
    if (m_histogram.scale == debug::HistogramScale::LogMagnitude)
        text += QStringLiteral("\n|x| in [%1, %2%3")
                    .arg(formatValue(std::pow(10.0, lo)), formatValue(std::pow(10.0, hi)), close);
    if (bin == 0 && m_clampedLow)
        text += tr("\nalso holds the values below the range (min %1)").arg(formatValue(m_stats.min));
    if (bin + 1 == static_cast<int>(n) && m_clampedHigh)
        text += tr("\nalso holds the values above the range (max %1)").arg(formatValue(m_stats.max));
    QToolTip::showText(globalPos, text, m_plot);
    if (bin != m_hoverBin) {
        m_hoverBin = bin;
        m_hoverBar->data()->clear();
        if (count > 0) m_hoverBar->addData(lo + w / 2, static_cast<double>(count));
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void HistogramView::clearHover()
{
    if (m_hoverBin < 0) return;
    m_hoverBin = -1;
    m_hoverBar->data()->clear();
    QToolTip::hideText();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool HistogramView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot && event->type() == QEvent::Leave) clearHover();
    return QWidget::eventFilter(watched, event);
}

void HistogramView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) applyPalette();
}

void HistogramView::applyPalette()
{
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    const QColor grid = pal.color(QPalette::Mid);
    m_plot->setBackground(pal.brush(QPalette::Base));
    for (QCPAxis* axis : { m_plot->xAxis, m_plot->yAxis }) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        QColor g = grid;
        g.setAlpha(110);
        axis->grid()->setPen(QPen(g, 0, Qt::DotLine));
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool HistogramView::exportPng(const QString& path, QString* error)
{
    if (!hasPlot()) {
        if (error) *error = tr("There is no histogram to export.");
        return false;
    }
    // A hidden or squeezed plot still exports at a readable size.
    const QSize size = m_plot->width() >= 400 && m_plot->height() >= 250 ? m_plot->size() : QSize(800, 480);
    m_hoverBar->data()->clear();
    if (!m_plot->savePng(path, size.width(), size.height())) {
        if (error) *error = tr("Could not write %1").arg(path);
        return false;
    }
    return true;
}

} // namespace opscope::gui
