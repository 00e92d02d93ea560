#include "gui/panels/run_record_model.h"

#include "gui/tensor/value_format.h"

#include <cmath>

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QStringList>

namespace opscope::gui {

RunRecordModel::RunRecordModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void RunRecordModel::setRecord(std::shared_ptr<const debug::RunRecord> record)
{
    beginResetModel();
    m_record = std::move(record);
    endResetModel();
}

int RunRecordModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_record ? 0 : static_cast<int>(m_record->ops.size());
}

int RunRecordModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

bool RunRecordModel::hasNanInf(int row) const
{
    if (!m_record || row < 0 || row >= rowCount()) return false;
    const debug::OpRecord& op = m_record->ops[static_cast<size_t>(row)];
    for (const debug::TensorStats& s : op.outputStats)
        if (s.nan + s.inf() > 0) return true;
    return false;
}

QVariant RunRecordModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const debug::OpRecord& op = m_record->ops[static_cast<size_t>(index.row())];
    const bool hasStats = !op.outputStats.empty();
    const debug::TensorStats* s = hasStats ? &op.outputStats.front() : nullptr;
    const int col = index.column();
    if (role == kNodeRole) return QString::fromStdString(op.node);
    if (role == Qt::DisplayRole) {
        switch (col) {
        case Order:
            return index.row() + 1;
        case Node:
            return QString::fromStdString(op.node);
        case Operator:
            return QString::fromStdString(op.op);
        case Time:
            // The warm time where one is known; a first call's (set apart in italics) otherwise.
            return QString::number(static_cast<double>(shownTimeNs(op)) / 1000.0, 'f', 1);
        case Shape:
            return op.outputShapes.empty() ? QString() : QString::fromStdString(op.outputShapes.front().str());
        case Min:
            return s ? formatCompact(s->min) : QString();
        case Max:
            return s ? formatCompact(s->max) : QString();
        case Mean:
            return s ? formatCompact(s->mean) : QString();
        case NanInf:
            if (!s) return QString();
            return hasNanInf(index.row()) ? QStringLiteral("NaN/Inf") : QString();
        case RelL2:
            if (const NodeDiff* d = divergenceOf(op)) return formatCompact(d->relL2);
            return QString();
        case Sqnr:
            if (const NodeDiff* d = divergenceOf(op))
                return std::isinf(d->sqnrDb) ? (d->sqnrDb > 0 ? QStringLiteral("∞") : QStringLiteral("−∞"))
                                             : QString::number(d->sqnrDb, 'f', 1);
            return QString();
        case Diverges:
            if (const NodeDiff* d = divergenceOf(op)) return d->diverges ? QStringLiteral("diverges") : QString();
            return QString();
        }
    }
    if (role == kSortRole) {
        switch (col) {
        case Order:
            return index.row();
        case Time:
            return static_cast<qlonglong>(shownTimeNs(op));
        case Min:
            return s ? s->min : -HUGE_VAL;
        case Max:
            return s ? s->max : -HUGE_VAL;
        case Mean:
            return s ? s->mean : -HUGE_VAL;
        case NanInf:
            return hasNanInf(index.row()) ? 1 : 0;
        case Shape:
            return op.outputShapes.empty() ? 0LL : static_cast<qlonglong>(op.outputShapes.front().size());
        // Not compared sorts below everything compared.
        case RelL2:
            if (const NodeDiff* d = divergenceOf(op)) return std::isinf(d->relL2) ? HUGE_VAL : d->relL2;
            return -1.0;
        case Sqnr:
            // Ascending SQNR puts the worst first, as ascending relative L2 puts the best first.
            if (const NodeDiff* d = divergenceOf(op))
                return std::isinf(d->sqnrDb) ? (d->sqnrDb > 0 ? 1e300 : -1e300) : d->sqnrDb;
            return 2e300;
        case Diverges:
            if (const NodeDiff* d = divergenceOf(op)) return d->diverges ? 1 : 0;
            return -1;
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole
        && (col == Order || col == Time || col == Min || col == Max || col == Mean || col == RelL2 || col == Sqnr))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && (col == NanInf || col == Diverges)) return QBrush(QColor(200, 30, 30));
    // The ops whose output has NaN or Inf stand out of a long record.
    if (role == Qt::BackgroundRole && hasNanInf(index.row())) return QBrush(QColor(253, 224, 224));
    if (role == Qt::FontRole && col == NanInf && hasNanInf(index.row())) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (col == Time && op.firstCall && op.warmNs == 0) {
        // A first call measures one-time setup too: shown, but not as the op's cost.
        if (role == Qt::FontRole) {
            QFont italic;
            italic.setItalic(true);
            return italic;
        }
        if (role == Qt::ForegroundRole) return QBrush(QColor(130, 130, 130));
    }
    if (role == Qt::ToolTipRole && col == Time) return timeToolTip(op);
    if (role == Qt::ToolTipRole && !s)
        return QStringLiteral("%1 (%2)").arg(QString::fromStdString(op.node), QString::fromStdString(op.op));
    if (role == Qt::ToolTipRole && s)
        return QStringLiteral("%1 (%2)\nmin %3  max %4\nmean %5  std %6\nNaN %7  Inf %8  zeros %9")
            .arg(QString::fromStdString(op.node), QString::fromStdString(op.op))
            .arg(s->min, 0, 'g', 6)
            .arg(s->max, 0, 'g', 6)
            .arg(s->mean, 0, 'g', 6)
            .arg(s->std, 0, 'g', 6)
            .arg(s->nan)
            .arg(s->inf())
            .arg(s->zeros);
    return {};
}

int64_t RunRecordModel::shownTimeNs(const debug::OpRecord& op)
{
    return op.warmNs > 0 ? op.warmNs : op.timeNs;
}

QString RunRecordModel::timeToolTip(const debug::OpRecord& op)
{
    auto us = [](int64_t ns) { return QString::number(static_cast<double>(ns) / 1000.0, 'f', 1); };
    QStringList lines;
    if (!op.firstCall) {
        lines << QStringLiteral("%1 µs (a warm call)").arg(us(op.timeNs));
    } else {
        lines << QStringLiteral("This run: %1 µs, the kernel's first call, with one-time setup (oneDNN reorders "
                                "weights, buffers and threads are first used)")
                     .arg(us(op.timeNs));
        lines << (op.warmNs > 0 ? QStringLiteral("Warm: %1 µs (an earlier run)").arg(us(op.warmNs))
                                : QStringLiteral("Run again to see its warm time"));
    }
    if (op.prepareNs > 0)
        lines << QStringLiteral("Kernel prepared before the run in %1 µs (not counted here)").arg(us(op.prepareNs));
    return lines.join(QLatin1Char('\n'));
}

void RunRecordModel::setDivergence(std::map<std::string, NodeDiff> byNode)
{
    m_divergence = std::move(byNode);
    if (rowCount() > 0) Q_EMIT dataChanged(index(0, RelL2), index(rowCount() - 1, Diverges));
}

const RunRecordModel::NodeDiff* RunRecordModel::divergenceOf(const debug::OpRecord& op) const
{
    const auto it = m_divergence.find(op.node);
    return it == m_divergence.end() ? nullptr : &it->second;
}

QVariant RunRecordModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[]
        = { "#", "Node", "Operator", "Time (µs)", "Output", "Min", "Max", "Mean", "NaN/Inf", "A↔B rel L2", "SQNR dB", "A↔B" };
    return section >= 0 && section < ColumnCount ? QString::fromUtf8(names[section]) : QVariant();
}

RunRecordFilter::RunRecordFilter(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(RunRecordModel::kSortRole);
}

void RunRecordFilter::setText(const QString& text)
{
    m_text = text.trimmed();
    invalidateFilter();
}

void RunRecordFilter::setOnlyNanInf(bool on)
{
    m_onlyNanInf = on;
    invalidateFilter();
}

bool RunRecordFilter::filterAcceptsRow(int row, const QModelIndex& parent) const
{
    auto* m = qobject_cast<RunRecordModel*>(sourceModel());
    if (!m) return true;
    if (m_onlyNanInf && !m->hasNanInf(row)) return false;
    if (m_text.isEmpty()) return true;
    const QString node = m->index(row, RunRecordModel::Node, parent).data().toString();
    const QString op = m->index(row, RunRecordModel::Operator, parent).data().toString();
    return node.contains(m_text, Qt::CaseInsensitive) || op.contains(m_text, Qt::CaseInsensitive);
}

} // namespace opscope::gui
