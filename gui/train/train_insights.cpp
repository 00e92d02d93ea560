#include "gui/train/train_insights.h"

#include "gui/tensor/color_map.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMouseEvent>
#include <QPainter>
#include <QRadioButton>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace opscope::gui {

namespace {
constexpr size_t kGallery = 60; // misclassified examples shown
constexpr int kThumb = 56; // 28×28 at twice the size

QIcon thumbnail(const samples::Dataset& d, int64_t i)
{
    const Shape& s = d.data.shape();
    if (s.ndim() != 4) return {};
    const int64_t c = s[1], h = s[2], w = s[3];
    QImage img(static_cast<int>(w), static_cast<int>(h), QImage::Format_Grayscale8);
    const float* base = d.data.data() + i * c * h * w;
    for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
            float v = 0;
            for (int64_t ch = 0; ch < c; ++ch)
                v += base[ch * h * w + y * w + x] / static_cast<float>(c);
            img.scanLine(static_cast<int>(y))[x] = static_cast<uchar>(std::clamp(static_cast<int>(v * 255), 0, 255));
        }
    return QIcon(QPixmap::fromImage(img.scaled(kThumb, kThumb, Qt::KeepAspectRatio, Qt::FastTransformation)));
}
} // namespace

/// The confusion matrix as a QCustomPlot colour map: true class down, predicted across, each cell's
/// share of its row blue on the diagonal and red off it (mistakes stand out from a few per cent),
/// its count written on it; a click picks a cell.
class ConfusionView : public QCustomPlot {
    Q_OBJECT
public:
    explicit ConfusionView(QWidget* parent)
        : QCustomPlot(parent)
        , m_map(new QCPColorMap(xAxis, yAxis))
    {
        setMinimumSize(240, 240);
        QCPColorGradient g;
        g.setColorStopAt(0.0, QColor(205, 50, 40));
        g.setColorStopAt(0.5, QColor(255, 255, 255));
        g.setColorStopAt(1.0, QColor(40, 100, 190));
        m_map->setGradient(g);
        m_map->setDataRange(QCPRange(-1, 1));
        m_map->setInterpolate(false);
        m_map->setTightBoundary(false); // cells centred on 0 … K-1, edges half a cell beyond
        yAxis->setRangeReversed(true);
        xAxis->setLabel(tr("predicted"));
        yAxis->setLabel(tr("true class"));
        xAxis->setTickLabelRotation(45);
        xAxis->grid()->setVisible(false);
        yAxis->grid()->setVisible(false);
        connect(this, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
            const auto [t, q] = cellAt(e->position().toPoint());
            if (t >= 0) Q_EMIT cellClicked(t, q);
        });
        setEvaluation(nullptr, {});
    }
    void setEvaluation(const samples::Evaluation* e, const std::vector<QString>& names)
    {
        m_e = e;
        clearItems();
        const int64_t k = e ? e->classes : 0;
        m_map->setVisible(k > 0);
        if (k == 0) {
            auto* hint = new QCPItemText(this);
            hint->position->setType(QCPItemPosition::ptAxisRectRatio);
            hint->position->setCoords(0.5, 0.5);
            hint->setText(tr("The confusion matrix of the held-out set\nshows here after each epoch"));
            replot();
            return;
        }
        m_map->data()->setSize(static_cast<int>(k), static_cast<int>(k));
        m_map->data()->setRange(QCPRange(0, static_cast<double>(k - 1)), QCPRange(0, static_cast<double>(k - 1)));
        QSharedPointer<QCPAxisTickerText> ticks(new QCPAxisTickerText);
        QFont small = font();
        small.setPointSizeF(std::max(6.0, font().pointSizeF() * (k > 12 ? 0.7 : 0.85)));
        for (int64_t t = 0; t < k; ++t) {
            ticks->addTick(static_cast<double>(t), t < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(t)] : QString::number(t));
            int64_t row = 0;
            for (int64_t q = 0; q < k; ++q)
                row += e->count(t, q);
            for (int64_t q = 0; q < k; ++q) {
                const int64_t n = e->count(t, q);
                const double share = row > 0 ? static_cast<double>(n) / static_cast<double>(row) : 0.0;
                const double v = t == q ? share : -std::min(1.0, 4 * share);
                m_map->data()->setCell(static_cast<int>(q), static_cast<int>(t), v);
                if (n == 0) continue;
                auto* label = new QCPItemText(this);
                label->position->setCoords(static_cast<double>(q), static_cast<double>(t));
                label->setText(QString::number(n));
                label->setFont(small);
                label->setColor(std::fabs(v) > 0.55 ? Qt::white : Qt::black);
                label->setClipToAxisRect(true);
            }
        }
        xAxis->setTicker(ticks);
        yAxis->setTicker(ticks);
        xAxis->setRange(-0.5, static_cast<double>(k) - 0.5);
        yAxis->setRange(-0.5, static_cast<double>(k) - 0.5);
        replot();
    }
    /// The cell (true, predicted) at a point of the widget, or (-1, -1).
    std::pair<int64_t, int64_t> cellAt(QPoint p) const
    {
        if (!m_e || m_e->classes == 0 || !axisRect()->rect().contains(p)) return { -1, -1 };
        const auto q = static_cast<int64_t>(std::lround(xAxis->pixelToCoord(p.x())));
        const auto t = static_cast<int64_t>(std::lround(yAxis->pixelToCoord(p.y())));
        if (t < 0 || q < 0 || t >= m_e->classes || q >= m_e->classes) return { -1, -1 };
        return { t, q };
    }
    /// Where cell (true, predicted) is drawn, in widget coordinates.
    QPoint cellCentre(int64_t t, int64_t q) const
    {
        return { static_cast<int>(xAxis->coordToPixel(static_cast<double>(q))),
            static_cast<int>(yAxis->coordToPixel(static_cast<double>(t))) };
    }

Q_SIGNALS:
    void cellClicked(qint64 trueClass, qint64 predictedClass);

private:
    const samples::Evaluation* m_e = nullptr;
    QCPColorMap* m_map;
};

TrainInsights::TrainInsights(QWidget* gradients, QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    layout->addWidget(m_tabs);
    m_tabs->addTab(gradients, tr("Gradients"));

    m_confusion = new ConfusionView(m_tabs);
    m_confusion->setToolTip(tr("Held-out set: rows are the true classes, columns the predicted ones; click a cell "
                               "to see its examples"));
    m_confusion->setObjectName(QStringLiteral("confusionMatrix"));
    m_tabs->addTab(m_confusion, tr("Confusion"));

    auto* gallery = new QWidget(m_tabs);
    auto* g = new QVBoxLayout(gallery);
    g->setContentsMargins(2, 2, 2, 2);
    m_galleryTitle = new QLabel(gallery);
    m_gallery = new QListWidget(gallery);
    m_gallery->setViewMode(QListView::IconMode);
    m_gallery->setIconSize(QSize(kThumb, kThumb));
    m_gallery->setGridSize(QSize(kThumb + 66, kThumb + 54));
    m_gallery->setResizeMode(QListView::Adjust);
    m_gallery->setMovement(QListView::Static);
    m_gallery->setWordWrap(true);
    g->addWidget(m_galleryTitle);
    g->addWidget(m_gallery, 1);
    m_tabs->addTab(gallery, tr("Mistakes"));

    auto* ridge = new QWidget(m_tabs);
    auto* r = new QVBoxLayout(ridge);
    r->setContentsMargins(2, 2, 2, 2);
    auto* bar = new QHBoxLayout;
    m_parameter = new QComboBox(ridge);
    m_showWeights = new QRadioButton(tr("Values"), ridge);
    auto* showGradients = new QRadioButton(tr("Gradients"), ridge);
    m_showWeights->setChecked(true);
    bar->addWidget(m_parameter, 1);
    bar->addWidget(m_showWeights);
    bar->addWidget(showGradients);
    r->addLayout(bar);
    m_ridge = new QCustomPlot(ridge);
    m_ridge->yAxis->setLabel(tr("epoch"));
    r->addWidget(m_ridge, 1);
    m_tabs->addTab(ridge, tr("Over Time"));

    connect(m_confusion, &ConfusionView::cellClicked, this, [this](qint64 t, qint64 p) { showCell(t, p); });
    connect(m_parameter, &QComboBox::currentIndexChanged, this, [this] { drawRidge(); });
    connect(m_showWeights, &QRadioButton::toggled, this, [this] { drawRidge(); });
}

QWidget* TrainInsights::confusionWidget() const
{
    return m_confusion;
}

QPoint TrainInsights::confusionCellCentre(int64_t t, int64_t p) const
{
    return m_confusion->cellCentre(t, p);
}

QString TrainInsights::className(int64_t k) const
{
    return k >= 0 && static_cast<size_t>(k) < m_classNames.size() ? QString::fromStdString(m_classNames[static_cast<size_t>(k)])
                                                                  : QString::number(k);
}

void TrainInsights::addEpoch(const EpochResult& result)
{
    m_test = result.test;
    m_testSet = result.testSet;
    m_classNames = result.classNames;
    std::vector<QString> names;
    for (int64_t k = 0; k < m_test.classes; ++k)
        names.push_back(className(k));
    m_confusion->setEvaluation(&m_test, names);
    showMistakes();
    m_history.push_back({ result.report.epoch, result.weights, result.gradients });
    const QString chosen = m_parameter->currentText();
    {
        QSignalBlocker block(m_parameter);
        m_parameter->clear();
        for (const GradientInfo& w : result.weights)
            m_parameter->addItem(QString::fromStdString(w.name));
        const int i = m_parameter->findText(chosen);
        m_parameter->setCurrentIndex(i >= 0 ? i : 0);
    }
    drawRidge();
}

void TrainInsights::clear()
{
    m_test = {};
    m_testSet.reset();
    m_history.clear();
    m_confusion->setEvaluation(nullptr, {});
    m_gallery->clear();
    m_galleryTitle->clear();
    m_parameter->clear();
    m_ridge->clearGraphs();
    m_ridge->replot();
}

void TrainInsights::setCurrentTab(Tab tab)
{
    m_tabs->setCurrentIndex(static_cast<int>(tab));
}

void TrainInsights::showMistakes()
{
    if (!m_testSet) return;
    const auto wrong = m_test.mistakes(*m_testSet, kGallery);
    fillGallery(wrong, tr("The %1 most confident of %2 mistakes on the held-out set")
                           .arg(wrong.size())
                           .arg(m_test.predicted.size() - static_cast<size_t>(std::llround(m_test.accuracy * static_cast<double>(m_test.predicted.size())))));
}

void TrainInsights::showCell(int64_t t, int64_t p)
{
    if (!m_testSet || t < 0 || p < 0 || t >= m_test.classes || p >= m_test.classes) return;
    std::vector<int64_t> cell = m_test.cell(*m_testSet, t, p);
    const size_t total = cell.size();
    if (cell.size() > kGallery) cell.resize(kGallery);
    fillGallery(cell, tr("True %1, predicted %2: %3 example(s)%4")
                          .arg(className(t), className(p))
                          .arg(total)
                          .arg(total > kGallery ? tr(", the %1 most confident shown").arg(kGallery) : QString()));
    setCurrentTab(Tab::Mistakes);
}

void TrainInsights::fillGallery(const std::vector<int64_t>& samples, const QString& title)
{
    m_gallery->clear();
    m_galleryTitle->setText(title);
    for (int64_t i : samples) {
        const auto truth = static_cast<int64_t>(m_testSet->label.at(i));
        const int64_t pred = m_test.predicted[static_cast<size_t>(i)];
        auto* item = new QListWidgetItem(thumbnail(*m_testSet, i),
            tr("%1\ntrue %2\n%3 %").arg(className(pred), className(truth)).arg(100.0 * m_test.confidence[static_cast<size_t>(i)], 0, 'f', 0));
        item->setToolTip(tr("held-out example %1: predicted %2 with %3 %, truly %4")
                             .arg(i)
                             .arg(className(pred))
                             .arg(100.0 * m_test.confidence[static_cast<size_t>(i)], 0, 'f', 1)
                             .arg(className(truth)));
        if (pred != truth) item->setForeground(QColor(180, 30, 30));
        m_gallery->addItem(item);
    }
}

QStringList TrainInsights::galleryCaptions() const
{
    QStringList out;
    for (int i = 0; i < m_gallery->count(); ++i)
        out << m_gallery->item(i)->text();
    return out;
}

void TrainInsights::drawRidge()
{
    m_ridge->clearGraphs();
    const std::string name = m_parameter->currentText().toStdString();
    const bool values = m_showWeights->isChecked();
    // Each epoch's histogram as a filled curve lifted by its epoch: later epochs lower and darker.
    double lo = 0, hi = 0;
    bool any = false;
    for (const EpochHistograms& e : m_history)
        for (const GradientInfo& g : values ? e.weights : e.gradients)
            if (g.name == name && !g.histogram.bins.empty()) {
                lo = any ? std::min(lo, g.histogram.lo) : g.histogram.lo;
                hi = any ? std::max(hi, g.histogram.hi) : g.histogram.hi;
                any = true;
            }
    const auto epochs = static_cast<int>(m_history.size());
    for (int k = epochs - 1; k >= 0; --k) { // the front (latest) drawn last
        const EpochHistograms& e = m_history[static_cast<size_t>(k)];
        for (const GradientInfo& g : values ? e.weights : e.gradients) {
            if (g.name != name || g.histogram.bins.empty()) continue;
            const auto& bins = g.histogram.bins;
            const double peak = static_cast<double>(*std::max_element(bins.begin(), bins.end()));
            const double width = (g.histogram.hi - g.histogram.lo) / static_cast<double>(bins.size());
            const double base = static_cast<double>(epochs - k); // the latest epoch at the bottom
            QVector<double> x, y, floor;
            x << g.histogram.lo;
            y << base;
            for (size_t b = 0; b < bins.size(); ++b) {
                x << g.histogram.lo + (static_cast<double>(b) + 0.5) * width;
                y << base + (peak > 0 ? 1.6 * static_cast<double>(bins[b]) / peak : 0.0);
            }
            x << g.histogram.hi;
            y << base;
            floor.fill(base, x.size());
            QCPGraph* baseline = m_ridge->addGraph();
            baseline->setData(x, floor, true);
            baseline->setPen(Qt::NoPen);
            QCPGraph* curve = m_ridge->addGraph();
            curve->setData(x, y, true);
            const double t = epochs > 1 ? static_cast<double>(k) / (epochs - 1) : 1.0;
            const QColor c = QColor::fromHsvF(0.58, 0.35 + 0.5 * t, 0.95 - 0.35 * t);
            curve->setPen(QPen(c.darker(130), 1.2));
            QColor fill = c;
            fill.setAlphaF(0.85);
            curve->setBrush(fill);
            curve->setChannelFillGraph(baseline);
        }
    }
    QSharedPointer<QCPAxisTickerText> ticks(new QCPAxisTickerText);
    for (int k = 0; k < epochs; ++k)
        ticks->addTick(static_cast<double>(epochs - k), QString::number(m_history[static_cast<size_t>(k)].epoch));
    m_ridge->yAxis->setTicker(ticks);
    m_ridge->yAxis->setRange(0.5, epochs + 2.0);
    if (any) m_ridge->xAxis->setRange(lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo));
    m_ridge->xAxis->setLabel(values ? tr("%1: values").arg(QString::fromStdString(name))
                                    : tr("%1: gradient").arg(QString::fromStdString(name)));
    m_ridge->replot();
}

} // namespace opscope::gui

#include "train_insights.moc"
