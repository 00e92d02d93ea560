#include "gui/tensor/stats_table.h"

#include "gui/tensor/value_format.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>

namespace opscope::gui {

namespace {
const QColor kAlarm(214, 39, 40);
}

StatsTable::StatsTable(QWidget* parent)
    : QTableWidget(RowCount, 2, parent)
{
    setHorizontalHeaderLabels({ tr("Statistic"), tr("Value") });
    const QStringList names = { tr("Shape"), tr("Elements"), tr("Min"), tr("Max"), tr("Mean"), tr("Std"), tr("L2 norm"),
        tr("NaN"), tr("+Inf"), tr("-Inf"), tr("Zeros") };
    const QStringList tips = { QString(), QString(), tr("Smallest finite value"), tr("Largest finite value"),
        tr("Mean of the finite values"), tr("Population standard deviation of the finite values"),
        tr("Square root of the sum of squares of the finite values"), QString(), QString(), QString(), QString() };
    for (int r = 0; r < RowCount; ++r) {
        auto* name = new QTableWidgetItem(names[r]);
        name->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        name->setForeground(palette().brush(QPalette::PlaceholderText));
        name->setToolTip(tips[r]);
        setItem(r, 0, name);
        auto* value = new QTableWidgetItem;
        value->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        value->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        setItem(r, 1, value);
    }
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setFocusPolicy(Qt::NoFocus);
    setWordWrap(false);
    setShowGrid(false);
    setAlternatingRowColors(true);
    verticalHeader()->hide();
    verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    horizontalHeader()->setHighlightSections(false);
    horizontalHeader()->hide();
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    auto* copy = new QAction(tr("Copy statistics"), this);
    connect(copy, &QAction::triggered, this, &StatsTable::copyAll);
    addAction(copy);
    setContextMenuPolicy(Qt::ActionsContextMenu);
    clear();
}

void StatsTable::setValue(Row row, const QString& text, bool alarm)
{
    QTableWidgetItem* cell = item(row, 1);
    cell->setText(text);
    cell->setToolTip(text);
    if (alarm) {
        cell->setForeground(kAlarm);
        QFont f = font();
        f.setBold(true);
        cell->setFont(f);
    } else {
        cell->setData(Qt::ForegroundRole, QVariant());
        cell->setData(Qt::FontRole, QVariant());
    }
}

void StatsTable::setStats(const QString& shapeText, const debug::TensorStats& s)
{
    m_stats = s;
    m_hasStats = true;
    setValue(Shape, shapeText);
    setValue(Elements, QString::number(s.count));
    setValue(Min, formatValue(s.min));
    setValue(Max, formatValue(s.max));
    setValue(Mean, formatValue(s.mean));
    setValue(Std, formatValue(s.std));
    setValue(L2, formatValue(s.l2));
    setValue(Nan, formatCountShare(s.nan, s.count), s.nan > 0);
    setValue(PosInf, formatCountShare(s.posInf, s.count), s.posInf > 0);
    setValue(NegInf, formatCountShare(s.negInf, s.count), s.negInf > 0);
    setValue(Zeros, formatCountShare(s.zeros, s.count));
}

void StatsTable::clear(const QString& message)
{
    m_stats = {};
    m_hasStats = false;
    for (int r = 0; r < RowCount; ++r)
        setValue(static_cast<Row>(r), QString());
    if (!message.isEmpty()) {
        setValue(Shape, message);
        item(Shape, 1)->setForeground(palette().brush(QPalette::PlaceholderText));
    }
}

QString StatsTable::valueText(Row row) const
{
    const QTableWidgetItem* cell = item(row, 1);
    return cell ? cell->text() : QString();
}

QString StatsTable::toText() const
{
    QString out;
    for (int r = 0; r < RowCount; ++r)
        out += item(r, 0)->text() + QLatin1Char('\t') + item(r, 1)->text() + QLatin1Char('\n');
    return out;
}

void StatsTable::copyAll() const
{
    QApplication::clipboard()->setText(toText());
}

QSize StatsTable::sizeHint() const
{
    const int rows = verticalHeader()->defaultSectionSize() * RowCount;
    return QSize(260, rows + 2 * frameWidth());
}

} // namespace opscope::gui
