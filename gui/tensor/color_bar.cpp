#include "gui/tensor/color_bar.h"

#include "gui/tensor/value_format.h"

#include <cmath>

#include <QLinearGradient>
#include <QPainter>

namespace opscope::gui {

namespace {
constexpr int kBarHeight = 12;
constexpr int kSwatch = 10;
} // namespace

ColorBar::ColorBar(QWidget* parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void ColorBar::setColorMap(ColorMap map)
{
    m_map = map;
    update();
}

void ColorBar::setRange(double lo, double hi, const QString& caption)
{
    m_hasRange = std::isfinite(lo) && std::isfinite(hi) && lo <= hi;
    m_lo = lo;
    m_hi = hi;
    m_caption = caption;
    update();
}

void ColorBar::setSpecialCounts(int64_t nan, int64_t posInf, int64_t negInf)
{
    m_nan = nan;
    m_posInf = posInf;
    m_negInf = negInf;
    update();
}

QSize ColorBar::sizeHint() const
{
    return QSize(320, kBarHeight + 2 * fontMetrics().height() + 8);
}

QSize ColorBar::minimumSizeHint() const
{
    return QSize(120, sizeHint().height());
}

void ColorBar::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QFontMetrics fm = fontMetrics();
    const QColor text = palette().color(QPalette::WindowText);
    const QColor dim = palette().color(QPalette::PlaceholderText);

    // Swatches for special values take the right end of the caption line.
    int right = width() - 2;
    const int captionY = 2;
    auto swatch = [&](const QColor& c, const QString& label, int64_t count) {
        if (count <= 0) return;
        const QString s = QStringLiteral("%1 %2").arg(label).arg(count);
        const int w = fm.horizontalAdvance(s);
        p.setPen(text);
        p.drawText(QRect(right - w, captionY, w, fm.height()), Qt::AlignVCenter | Qt::AlignRight, s);
        right -= w + 4 + kSwatch;
        p.fillRect(QRect(right, captionY + (fm.height() - kSwatch) / 2, kSwatch, kSwatch), c);
        right -= 10;
    };
    swatch(negInfColor(), QStringLiteral("-Inf"), m_negInf);
    swatch(posInfColor(), QStringLiteral("+Inf"), m_posInf);
    swatch(nanColor(), QStringLiteral("NaN"), m_nan);
    p.setPen(dim);
    p.drawText(QRect(2, captionY, std::max(0, right - 2), fm.height()), Qt::AlignVCenter | Qt::AlignLeft,
        fm.elidedText(m_caption, Qt::ElideRight, std::max(0, right - 2)));

    const QRect bar(2, captionY + fm.height() + 2, width() - 4, kBarHeight);
    QLinearGradient g(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 16; ++i)
        g.setColorAt(i / 16.0, colorMapColor(m_map, i / 16.0));
    p.fillRect(bar, g);
    p.setPen(palette().color(QPalette::Mid));
    p.drawRect(bar.adjusted(0, 0, -1, -1));

    if (!m_hasRange) return;
    const QRect labels(bar.left(), bar.bottom() + 2, bar.width(), fm.height());
    p.setPen(text);
    p.drawText(labels, Qt::AlignLeft | Qt::AlignTop, formatValue(m_lo));
    p.drawText(labels, Qt::AlignRight | Qt::AlignTop, formatValue(m_hi));
    if (m_lo < 0 && m_hi > 0) {
        const int x0 = bar.left() + static_cast<int>(std::lround(-m_lo / (m_hi - m_lo) * bar.width()));
        const QString zero = QStringLiteral("0");
        const int w = fm.horizontalAdvance(zero);
        const int lw = fm.horizontalAdvance(formatValue(m_lo)), rw = fm.horizontalAdvance(formatValue(m_hi));
        if (x0 - w / 2 > bar.left() + lw + 6 && x0 + w / 2 < bar.right() - rw - 6) {
            p.drawText(QRect(x0 - w, labels.top(), 2 * w, fm.height()), Qt::AlignHCenter | Qt::AlignTop, zero);
            p.setPen(palette().color(QPalette::Mid));
            p.drawLine(x0, bar.bottom() - 3, x0, bar.bottom());
        }
    }
}

} // namespace opscope::gui
