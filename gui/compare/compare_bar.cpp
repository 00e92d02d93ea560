#include "gui/compare/compare_bar.h"

#include "gui/graph/graph_style.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QToolButton>

namespace opscope::gui {

namespace {
constexpr debug::Metric kMetrics[] = { debug::Metric::RelL2, debug::Metric::MaxAbs, debug::Metric::MaxRel,
    debug::Metric::Cosine, debug::Metric::Sqnr, debug::Metric::Beyond };
}

DivergenceLegend::DivergenceLegend(QWidget* parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

void DivergenceLegend::setScale(const DivergenceScale& scale)
{
    m_scale = scale;
    setToolTip(m_scale.title());
    update();
}

QSize DivergenceLegend::sizeHint() const
{
    return { 300, 30 };
}

void DivergenceLegend::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QRectF ramp(6, 3, 190, 10);
    QLinearGradient g(ramp.topLeft(), ramp.topRight());
    for (int i = 0; i <= 10; ++i)
        g.setColorAt(i / 10.0, GraphStyle::divergenceColor(i / 10.0));
    p.setPen(QPen(QColor(0x9a, 0xa0, 0xa8), 0.8));
    p.setBrush(g);
    p.drawRect(ramp);
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 0.8);
    p.setFont(f);
    p.setPen(palette().color(QPalette::WindowText));
    const QFontMetrics fm(f);
    for (const auto& [t, label] : m_scale.ticks()) {
        const double x = ramp.left() + t * ramp.width();
        p.drawLine(QPointF(x, ramp.bottom()), QPointF(x, ramp.bottom() + 3));
        const double w = fm.horizontalAdvance(label);
        p.drawText(QPointF(std::clamp(x - w / 2, 0.0, width() - w), ramp.bottom() + 4 + fm.ascent()), label);
    }
    // Grey: not compared.
    const QRectF grey(ramp.right() + 14, ramp.top(), 14, ramp.height());
    p.setBrush(GraphStyle::divergenceColor(-1));
    p.drawRect(grey);
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QPointF(grey.right() + 4, grey.bottom()), tr("unmatched"));
}

CompareBar::CompareBar(QWidget* parent)
    : QWidget(parent)
{
    // The summary on a line of its own, the controls under it.
    auto* rows = new QVBoxLayout(this);
    rows->setContentsMargins(6, 3, 4, 2);
    rows->setSpacing(2);
    auto* row = new QHBoxLayout;
    m_label = new QLabel(this);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The summary may be cut, never the graph: it does not widen the window (its tooltip has it all).
    m_label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_label->setMinimumWidth(80);
    m_metric = new QComboBox(this);
    for (debug::Metric m : kMetrics)
        m_metric->addItem(DivergenceScale { m }.title(), static_cast<int>(m));
    m_metric->setToolTip(tr("What colours the nodes: each node's worst output"));
    m_legend = new DivergenceLegend(this);
    m_legend->setScale({ metric() });
    m_first = new QPushButton(this);
    m_first->setStyleSheet(QStringLiteral("QPushButton { color: #a000c0; font-weight: bold; }"));
    m_first->setToolTip(tr("Go to the earliest node whose output diverges while all its inputs agree"));
    m_close = new QToolButton(this);
    m_close->setText(QStringLiteral("✕"));
    m_close->setToolTip(tr("End the comparison"));
    rows->addWidget(m_label);
    rows->addLayout(row);
    row->addWidget(m_first);
    row->addStretch(1);
    row->addWidget(m_metric);
    row->addWidget(m_legend);
    row->addWidget(m_close);
    setAutoFillBackground(true);
    QPalette pal = palette();
    pal.setColor(QPalette::Window, QColor(0xf6, 0xf0, 0xfa));
    setPalette(pal);
    connect(m_metric, &QComboBox::currentIndexChanged, this, [this] {
        m_legend->setScale({ metric() });
        Q_EMIT metricChanged(metric());
    });
    connect(m_first, &QPushButton::clicked, this, [this] { Q_EMIT firstDivergentClicked(m_firstNode); });
    connect(m_close, &QToolButton::clicked, this, &CompareBar::closeRequested);
}

void CompareBar::setSummary(const QString& describeB, int compared, int diverging, int unmatched,
    const QString& firstDivergent, const QString& top1)
{
    QString text = tr("A ↔ B: %1 — %2 tensors compared, %3 diverge").arg(describeB).arg(compared).arg(diverging);
    if (unmatched > 0) text += tr(", %1 unmatched").arg(unmatched);
    if (!top1.isEmpty()) text += QStringLiteral(" — ") + top1;
    m_label->setText(text);
    m_label->setToolTip(text);
    m_firstNode = firstDivergent;
    const QString shown = firstDivergent.size() > 36 ? QStringLiteral("…") + firstDivergent.right(35) : firstDivergent;
    m_first->setText(firstDivergent.isEmpty() ? QString() : tr("First divergent: %1").arg(shown));
    m_first->setVisible(!firstDivergent.isEmpty());
    m_metric->setEnabled(true);
}

void CompareBar::setBusy(const QString& describeB)
{
    m_label->setText(tr("Comparing A with B (%1)…").arg(describeB));
    m_first->hide();
}

debug::Metric CompareBar::metric() const
{
    return static_cast<debug::Metric>(m_metric->currentData().toInt());
}

void CompareBar::setMetric(debug::Metric m)
{
    const int i = m_metric->findData(static_cast<int>(m));
    if (i >= 0) m_metric->setCurrentIndex(i);
}

QString CompareBar::text() const
{
    return m_label->text();
}

} // namespace opscope::gui
