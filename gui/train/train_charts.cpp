#include "gui/train/train_charts.h"

#include <algorithm>
#include <cmath>

#include <QHeaderView>
#include <QPainter>
#include <QResizeEvent>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {
const QColor kLossColor(0x1f, 0x77, 0xb4);
const QColor kTrainColor(0xff, 0x7f, 0x0e);
const QColor kTestColor(0x2c, 0xa0, 0x2c);
const QColor kBarColor(0x4c, 0x72, 0xb0);

// The length of the prefix up to a '_' that every name shares ("hybridsequential0_"), 0 for one name.
qsizetype sharedPrefix(const std::vector<GradientInfo>& gradients)
{
    if (gradients.size() < 2) return 0;
    const QString first = QString::fromStdString(gradients.front().name);
    qsizetype prefix = first.lastIndexOf(QLatin1Char('_')) + 1;
    for (const GradientInfo& g : gradients) {
        const QString name = QString::fromStdString(g.name);
        while (prefix > 0 && !name.startsWith(QStringView(first).left(prefix)))
            prefix = prefix >= 2 ? first.lastIndexOf(QLatin1Char('_'), prefix - 2) + 1 : 0;
    }
    return prefix;
}

void styleAxis(QCPAxis* axis)
{
    QFont f = axis->labelFont();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    axis->setLabelFont(f);
    axis->setTickLabelFont(f);
    axis->grid()->setPen(QPen(QColor(0xdd, 0xdd, 0xdd), 0, Qt::DotLine));
    axis->grid()->setZeroLinePen(Qt::NoPen);
}
} // namespace

TrainPlot::TrainPlot(QWidget* parent)
    : QCustomPlot(parent)
{
    setMinimumSize(120, 100);
    setNoAntialiasingOnDrag(true);
    styleAxis(xAxis);
    styleAxis(yAxis);
    styleAxis(yAxis2);
    xAxis->setLabel(tr("epoch"));
    xAxis->ticker()->setTickCount(4);
    yAxis->setLabel(tr("loss"));
    yAxis2->setLabel(tr("accuracy"));
    yAxis2->setVisible(true);
    yAxis2->grid()->setVisible(false);
    yAxis2->setRange(0, 1.02);
    yAxis->setRange(0, 1);

    m_batchLoss = addGraph(xAxis, yAxis);
    m_batchLoss->setName(tr("batches"));
    m_batchLoss->setPen(QPen(kLossColor.lighter(160), 1));
    m_loss = addGraph(xAxis, yAxis);
    m_loss->setName(tr("loss"));
    m_loss->setPen(QPen(kLossColor, 2));
    m_loss->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    m_trainAcc = addGraph(xAxis, yAxis2);
    m_trainAcc->setName(tr("train"));
    m_trainAcc->setPen(QPen(kTrainColor, 2));
    m_trainAcc->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    m_testAcc = addGraph(xAxis, yAxis2);
    m_testAcc->setName(tr("test"));
    m_testAcc->setPen(QPen(kTestColor, 2, Qt::DashLine));
    m_testAcc->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));

    // The legend in a row of its own above the axes, two entries a line.
    legend->setVisible(true);
    QFont lf = legend->font();
    lf.setPointSizeF(lf.pointSizeF() * 0.85);
    legend->setFont(lf);
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
    legend->setRowSpacing(-4);
    legend->setColumnSpacing(10);
    legend->setWrap(2);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst); // rearranges the items already there
    auto* legendRow = new QCPLayoutGrid;
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, legendRow);
    legendRow->addElement(0, 0, legend);
    legendRow->setMargins(QMargins(0, 0, 0, 0));
    plotLayout()->setRowStretchFactor(0, 0.001);
    reset(10);
}

void TrainPlot::reset(int epochs)
{
    for (QCPGraph* g : { m_loss, m_batchLoss, m_trainAcc, m_testAcc })
        g->data()->clear();
    m_maxLoss = 0;
    xAxis->setRange(0, std::max(1, epochs));
    yAxis->setRange(0, 1);
    replot(QCustomPlot::rpQueuedReplot);
}

void TrainPlot::rescaleLoss()
{
    yAxis->setRange(0, m_maxLoss > 0 ? m_maxLoss * 1.08 : 1.0);
}

void TrainPlot::addBatchLoss(double epochPosition, double loss)
{
    if (!std::isfinite(loss)) return;
    m_batchLoss->addData(epochPosition, loss);
    m_maxLoss = std::max(m_maxLoss, loss);
    rescaleLoss();
    replot(QCustomPlot::rpQueuedReplot);
}

void TrainPlot::addEpoch(const samples::EpochReport& r)
{
    m_loss->addData(r.epoch, r.loss);
    m_trainAcc->addData(r.epoch, r.trainAccuracy);
    m_testAcc->addData(r.epoch, r.testAccuracy);
    if (std::isfinite(r.loss)) m_maxLoss = std::max(m_maxLoss, r.loss);
    if (r.epoch > xAxis->range().upper) xAxis->setRange(0, r.epoch);
    rescaleLoss();
    replot(QCustomPlot::rpQueuedReplot);
}

ImageView::ImageView(QWidget* parent)
    : QWidget(parent)
{
    setMinimumSize(90, 90);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void ImageView::setImage(const QImage& image)
{
    m_image = image;
    update();
}

void ImageView::setPlaceholder(const QString& text)
{
    m_placeholder = text;
    update();
}

void ImageView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    if (m_image.isNull()) {
        p.setPen(QColor(0x88, 0x88, 0x88));
        p.drawText(rect().adjusted(6, 6, -6, -6), Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    const QSize s = m_image.size().scaled(size() - QSize(8, 8), Qt::KeepAspectRatio);
    const QRect target(QPoint((width() - s.width()) / 2, (height() - s.height()) / 2), s);
    p.setRenderHint(QPainter::SmoothPixmapTransform);
    p.drawImage(target, m_image);
    p.setPen(QColor(0xbb, 0xbb, 0xbb));
    p.drawRect(target.adjusted(0, 0, -1, -1));
}

GradientView::GradientView(QWidget* parent)
    : QWidget(parent)
    , m_split(new QSplitter(Qt::Vertical, this))
    , m_list(new QTreeWidget(m_split))
    , m_plot(new QCustomPlot(m_split))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_split->setChildrenCollapsible(false);
    layout->addWidget(m_split);
    connect(m_split, &QSplitter::splitterMoved, this, [this] { m_userSized = true; });
    m_list->setColumnCount(3);
    m_list->setHeaderLabels({ tr("Parameter"), tr("Shape"), tr("‖grad‖₂") });
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setAlternatingRowColors(true);
    m_list->header()->setStretchLastSection(false);
    m_list->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_list->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_list->header()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    m_list->setTextElideMode(Qt::ElideMiddle);
    m_list->setMinimumHeight(70);
    m_list->setMinimumWidth(150);
    setMinimumWidth(150);
    m_split->addWidget(m_list);

    styleAxis(m_plot->xAxis);
    styleAxis(m_plot->yAxis);
    m_plot->xAxis->setLabel(tr("gradient"));
    m_plot->yAxis->setLabel(tr("count"));
    m_plot->setMinimumHeight(90);
    m_plot->xAxis->ticker()->setTickCount(3);
    m_plot->xAxis->setNumberFormat(QStringLiteral("g"));
    m_plot->xAxis->setNumberPrecision(2);
    m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setWidthType(QCPBars::wtPlotCoords);
    m_bars->setPen(QPen(kBarColor.darker(115)));
    m_bars->setBrush(kBarColor);
    m_plot->setMinimumWidth(150);
    m_split->addWidget(m_plot);
    m_split->setStretchFactor(0, 1);
    m_split->setStretchFactor(1, 1);
    connect(m_list, &QTreeWidget::currentItemChanged, this, [this] { showHistogram(); });
}

void GradientView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // The list beside the histogram when there is width to spare, above it otherwise.
    const Qt::Orientation wanted = width() > height() * 3 / 2 ? Qt::Horizontal : Qt::Vertical;
    if (wanted == m_split->orientation() && m_userSized) return;
    m_split->setOrientation(wanted);
    fitSplit();
}

void GradientView::fitSplit()
{
    if (m_split->orientation() == Qt::Horizontal) {
        m_split->setSizes({ width() / 2, width() - width() / 2 });
        return;
    }
    // Above the histogram, the list as tall as its rows (at most half).
    const int rows = std::max(4, m_list->topLevelItemCount());
    const int rowHeight = std::max(m_list->fontMetrics().height() + 2, m_list->sizeHintForRow(0));
    const int list
        = std::min(height() / 2, rows * rowHeight + m_list->header()->height() + 2 * m_list->frameWidth() + 4);
    m_split->setSizes({ list, height() - list });
}

int GradientView::selectedIndex() const
{
    return m_list->currentItem() ? m_list->indexOfTopLevelItem(m_list->currentItem()) : -1;
}

void GradientView::clear()
{
    setGradients({});
}

void GradientView::setGradients(std::vector<GradientInfo> gradients)
{
    const QString selected = m_list->currentItem() ? m_list->currentItem()->toolTip(0) : QString();
    m_gradients = std::move(gradients);
    const QSignalBlocker block(m_list);
    const bool sameRows = m_list->topLevelItemCount() == static_cast<int>(m_gradients.size());
    if (!sameRows) m_list->clear();
    int current = m_gradients.empty() ? -1 : 0;
    const qsizetype prefix = sharedPrefix(m_gradients);
    for (size_t i = 0; i < m_gradients.size(); ++i) {
        const GradientInfo& g = m_gradients[i];
        const QString name = QString::fromStdString(g.name);
        const QString shortName = name.mid(prefix);
        QTreeWidgetItem* item = sameRows ? m_list->topLevelItem(static_cast<int>(i)) : new QTreeWidgetItem(m_list);
        item->setText(0, shortName);
        item->setToolTip(0, name);
        item->setText(1, QString::fromStdString(shapeToX(g.shape)));
        item->setText(2, QString::number(g.stats.l2, 'g', 3));
        item->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
        if (name == selected) current = static_cast<int>(i);
    }
    m_list->setCurrentItem(current >= 0 ? m_list->topLevelItem(current) : nullptr);
    if (!sameRows) fitSplit();
    showHistogram();
}

void GradientView::showHistogram()
{
    const int i = selectedIndex();
    QVector<QCPBarsData> data;
    if (i >= 0 && i < static_cast<int>(m_gradients.size())) {
        const debug::Histogram& h = m_gradients[static_cast<size_t>(i)].histogram;
        const size_t n = h.bins.size();
        double lo = h.lo, hi = h.hi;
        if (!(hi > lo)) {
            lo -= 0.5;
            hi += 0.5;
        }
        const double w = (hi - lo) / static_cast<double>(std::max<size_t>(1, n));
        double top = 1;
        for (size_t b = 0; b < n; ++b) {
            data.append(QCPBarsData(lo + (static_cast<double>(b) + 0.5) * w, static_cast<double>(h.bins[b])));
            top = std::max(top, static_cast<double>(h.bins[b]));
        }
        m_bars->setWidth(w);
        m_plot->xAxis->setRange(lo, hi);
        m_plot->yAxis->setRange(0, top * 1.08);
        m_plot->xAxis->setLabel(tr("gradient of %1").arg(m_list->currentItem()->text(0)));
    } else {
        m_plot->xAxis->setLabel(tr("gradient"));
    }
    m_bars->data()->set(data, true);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace opscope::gui
