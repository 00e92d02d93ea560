#include "gui/tensor/value_format.h"

#include <charconv>
#include <cmath>

namespace opscope::gui {

QString formatValue(double v)
{
    return QString::number(v, 'g', 6);
}

QString formatCompact(double v)
{
    if (std::isnan(v)) return QStringLiteral("nan");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    QString s = QString::number(v, 'g', 4);
    const qsizetype e = s.indexOf(QLatin1Char('e'));
    if (e < 0) return s;
    // "1.235e-05" → "1.235e-5", "2.5e+12" → "2.5e12"
    QString exponent = s.mid(e + 1);
    const bool negative = exponent.startsWith(QLatin1Char('-'));
    if (negative || exponent.startsWith(QLatin1Char('+'))) exponent.remove(0, 1);
    while (exponent.size() > 1 && exponent.startsWith(QLatin1Char('0')))
        exponent.remove(0, 1);
    return s.left(e) + (negative ? QStringLiteral("e-") : QStringLiteral("e")) + exponent;
}

QString formatExact(float v)
{
    if (std::isnan(v)) return QStringLiteral("nan");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    if (res.ec != std::errc()) return QString::number(static_cast<double>(v), 'g', 9);
    return QString::fromLatin1(buf, static_cast<qsizetype>(res.ptr - buf));
}

QString formatIndex(std::span<const int64_t> index)
{
    QString s = QStringLiteral("(");
    for (size_t i = 0; i < index.size(); ++i) {
        if (i > 0) s += QStringLiteral(", ");
        s += QString::number(index[i]);
    }
    if (index.size() == 1) s += QLatin1Char(',');
    s += QLatin1Char(')');
    return s;
}

QString formatShape(const opscope::Shape& shape)
{
    return formatIndex(shape.dims());
}

QString formatBytes(int64_t bytes)
{
    const double b = static_cast<double>(bytes);
    if (bytes < 1024) return QStringLiteral("%1 B").arg(bytes);
    if (b < 1024.0 * 1024) return QStringLiteral("%1 KB").arg(b / 1024, 0, 'f', 1);
    if (b < 1024.0 * 1024 * 1024) return QStringLiteral("%1 MB").arg(b / (1024.0 * 1024), 0, 'f', 1);
    return QStringLiteral("%1 GB").arg(b / (1024.0 * 1024 * 1024), 0, 'f', 2);
}

QString formatCountShare(int64_t count, int64_t total)
{
    if (total <= 0) return QString::number(count);
    const double pct = 100.0 * static_cast<double>(count) / static_cast<double>(total);
    return QStringLiteral("%1 (%2%)").arg(count).arg(QString::number(pct, 'g', 3));
}

} // namespace opscope::gui
