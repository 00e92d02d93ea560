#include "gui/explain/unit_anatomy_view.h"

#include "gui/tensor/color_map.h"
#include "gui/tensor/value_format.h"

#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QScrollArea>
#include <QTableWidget>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace opscope::gui {

namespace {
constexpr int kCell = 42;
constexpr int kGap = 28;
constexpr int kRowGap = 14;
constexpr int kMaxChannels = 64; // rows drawn; the rest are summed in one line
constexpr int kTableRows = 40;

QString number(double v)
{
    if (v == 0) return QStringLiteral("0");
    const double a = std::fabs(v);
    if (a >= 100) return QString::number(v, 'g', 2);
    if (a < 0.01) return QString::number(v, 'g', 1);
    return QString::number(v, 'f', a >= 10 ? 1 : 2);
}
} // namespace

/// The convolution's channel rows: patch × kernel = products, and the channel's sum.
class ConvTermsCanvas : public QWidget {
public:
    explicit ConvTermsCanvas(QWidget* parent)
        : QWidget(parent)
    {
    }
    void setAnatomy(const debug::UnitAnatomy* a)
    {
        m_a = a;
        const auto rows = static_cast<int>(std::min<size_t>(a ? a->channels.size() : 0, kMaxChannels));
        const int gridW = a ? static_cast<int>(a->kernelW) * kCell : 0, gridH = a ? static_cast<int>(a->kernelH) * kCell : 0;
        setFixedSize(a ? 90 + 3 * gridW + 3 * kGap + 120 : 0, a ? 24 + rows * (gridH + kRowGap + 16) : 0);
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        if (!m_a) return;
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        const auto& a = *m_a;
        const int kh = static_cast<int>(a.kernelH), kw = static_cast<int>(a.kernelW);
        const int per = kh * kw;
        // One colour scale per kind of grid, shared by every channel.
        double maxIn = 0, maxW = 0, maxP = 0;
        for (const auto& t : a.terms) {
            maxIn = std::max(maxIn, std::fabs(double(t.input)));
            maxW = std::max(maxW, std::fabs(double(t.weight)));
            maxP = std::max(maxP, std::fabs(t.product));
        }
        const QFont normal = font();
        QFont small = normal;
        small.setPointSizeF(normal.pointSizeF() * 0.8);
        const int x0 = 90, gridW = kw * kCell, gridH = kh * kCell;
        const int sumX = x0 + 3 * gridW + 3 * kGap;
        p.drawText(QRect(x0, 0, gridW, 20), Qt::AlignCenter, tr("input patch"));
        p.drawText(QRect(x0 + gridW + kGap, 0, gridW, 20), Qt::AlignCenter, tr("kernel weights"));
        p.drawText(QRect(x0 + 2 * (gridW + kGap), 0, gridW, 20), Qt::AlignCenter, tr("products"));
        p.drawText(QRect(sumX, 0, 120, 20), Qt::AlignLeft | Qt::AlignVCenter, tr("channel sum"));
        const auto rows = static_cast<int>(std::min<size_t>(a.channels.size(), kMaxChannels));
        for (int r = 0; r < rows; ++r) {
            const int y = 24 + r * (gridH + kRowGap + 16);
            p.setFont(normal);
            p.setPen(palette().color(QPalette::WindowText));
            p.drawText(QRect(0, y, x0 - 8, gridH), Qt::AlignRight | Qt::AlignVCenter,
                tr("channel %1").arg(a.channels[static_cast<size_t>(r)]));
            double sum = 0;
            for (int k = 0; k < per; ++k) {
                const auto& t = a.terms[static_cast<size_t>(r * per + k)];
                sum += t.product;
                const int cx = static_cast<int>(t.kx) * kCell, cy = y + static_cast<int>(t.ky) * kCell;
                cell(p, QRect(x0 + cx, cy, kCell, kCell), t.input, maxIn, t.padding, small);
                cell(p, QRect(x0 + gridW + kGap + cx, cy, kCell, kCell), t.weight, maxW, false, small);
                cell(p, QRect(x0 + 2 * (gridW + kGap) + cx, cy, kCell, kCell), t.product, maxP, t.padding, small);
            }
            p.setFont(normal);
            p.setPen(palette().color(QPalette::WindowText));
            p.drawText(QRect(x0 + gridW, y, kGap, gridH), Qt::AlignCenter, QStringLiteral("×"));
            p.drawText(QRect(x0 + 2 * gridW + kGap, y, kGap, gridH), Qt::AlignCenter, QStringLiteral("="));
            p.drawText(QRect(x0 + 3 * gridW + 2 * kGap, y, kGap, gridH), Qt::AlignCenter, QStringLiteral("Σ"));
            p.drawText(QRect(sumX, y, 120, gridH), Qt::AlignLeft | Qt::AlignVCenter, formatCompact(sum));
        }
    }

private:
    static void cell(QPainter& p, const QRect& r, double v, double scale, bool padding, const QFont& f)
    {
        const double t = scale > 0 ? 0.5 + 0.5 * v / scale : 0.5;
        p.fillRect(r, padding ? QColor(225, 225, 225) : colorMapColor(ColorMap::Diverging, t));
        p.setPen(QColor(255, 255, 255));
        p.drawRect(r.adjusted(0, 0, -1, -1));
        p.setPen(padding ? QColor(140, 140, 140) : QColor(20, 20, 20));
        p.setFont(f);
        p.drawText(r, Qt::AlignCenter, padding ? QStringLiteral("pad") : number(v));
    }

    const debug::UnitAnatomy* m_a = nullptr;
};

UnitAnatomyView::UnitAnatomyView(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(false);
    m_canvas = new ConvTermsCanvas(m_scroll);
    m_scroll->setWidget(m_canvas);
    layout->addWidget(m_scroll, 1);
    m_table = new QTableWidget(this);
    m_table->setColumnCount(5);
    m_table->setHorizontalHeaderLabels({ tr("Input"), tr("Value"), tr("Weight"), tr("Product"), tr("Share of Σ|·|") });
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(m_table, 1);
}

QSize UnitAnatomyView::sizeHint() const
{
    return { 900, 640 };
}

QString UnitAnatomyView::summaryText() const
{
    QTextDocument d;
    d.setHtml(m_summary->text());
    return d.toPlainText();
}

void UnitAnatomyView::setAnatomy(const debug::UnitAnatomy& anatomy)
{
    m_anatomy = anatomy;
    const auto& a = m_anatomy;
    const bool conv = a.kernelH > 0;
    const QString where = QStringLiteral("<b>%1</b> (%2), output %3")
                              .arg(QString::fromStdString(a.node).toHtmlEscaped(), QString::fromStdString(a.op),
                                  formatIndex(a.index));
    QString how;
    if (conv) {
        how = tr("Σ over %1 input channel(s) × %2×%3 kernel = %4 products")
                  .arg(a.channels.size())
                  .arg(a.kernelH)
                  .arg(a.kernelW)
                  .arg(a.terms.size());
    } else {
        how = tr("Σ over %1 inputs").arg(a.terms.size());
    }
    QString line = QStringLiteral("%1 = <b>%2</b>").arg(how, formatExact(static_cast<float>(a.sum)));
    if (a.scale != 1) line += tr(" · α %1").arg(a.scale);
    line += tr(" &nbsp;+ bias %1 = <b>%2</b>").arg(formatExact(static_cast<float>(a.bias)), formatExact(static_cast<float>(a.total)));
    QString held = tr("The tensor holds <b>%1</b>").arg(formatExact(a.tensorValue));
    const double diff = a.total - a.tensorValue;
    held += diff == 0 ? tr(" (exactly)") : tr(" (the kernels' float32 sum differs by %1)").arg(QString::number(diff, 'g', 2));
    if (!a.activation.empty())
        held += tr(" &nbsp;→ %1 → <b>%2</b>").arg(QString::fromStdString(a.activation), formatExact(static_cast<float>(a.activated)));
    m_summary->setText(where + QStringLiteral("<br>") + line + QStringLiteral("<br>") + held);

    m_scroll->setVisible(conv);
    m_table->setVisible(!conv);
    m_canvas->setAnatomy(conv ? &m_anatomy : nullptr);
    if (conv) {
        if (a.channels.size() > static_cast<size_t>(kMaxChannels))
            m_summary->setText(m_summary->text()
                + tr("<br>The first %1 of %2 channels are drawn.").arg(kMaxChannels).arg(a.channels.size()));
        return;
    }
    double absSum = 0;
    for (const auto& t : a.terms)
        absSum += std::fabs(t.product);
    const int rows = static_cast<int>(std::min<size_t>(a.terms.size(), kTableRows));
    m_table->setRowCount(rows);
    for (int r = 0; r < rows; ++r) {
        const auto& t = a.terms[static_cast<size_t>(r)];
        const QStringList cells { QString::number(t.channel), formatCompact(t.input), formatCompact(t.weight),
            formatCompact(t.product), absSum > 0 ? QStringLiteral("%1 %").arg(100 * std::fabs(t.product) / absSum, 0, 'f', 1) : QString() };
        for (int c = 0; c < 5; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (c == 3) item->setBackground(colorMapColor(ColorMap::Diverging, 0.5 + 0.5 * t.product / std::max(1e-30, std::fabs(a.terms[0].product))));
            m_table->setItem(r, c, item);
        }
    }
    if (a.terms.size() > static_cast<size_t>(kTableRows)) {
        double rest = 0;
        for (size_t i = kTableRows; i < a.terms.size(); ++i)
            rest += a.terms[i].product;
        m_summary->setText(m_summary->text()
            + tr("<br>The %1 largest contributions are listed; the other %2 sum to %3.")
                  .arg(kTableRows)
                  .arg(a.terms.size() - kTableRows)
                  .arg(formatCompact(rest)));
    }
}

} // namespace opscope::gui
