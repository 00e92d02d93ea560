#include "gui/tensor/tensor_table_model.h"

#include "debug/tensor_stats.h"
#include "gui/tensor/value_format.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include <QColor>

namespace opscope::gui {

namespace {
// Heat colours for larger tensors need a range from outside (the inspector's statistics).
constexpr int64_t kHeatScanMax = 1 << 24;
constexpr int kHeatAlpha = 110;
const QColor kAlarm(214, 39, 40);

/// Marks a change in progress for its lifetime (nesting keeps the outer mark).
class ChangeGuard {
public:
    explicit ChangeGuard(bool& flag)
        : m_flag(flag)
        , m_old(flag)
    {
        m_flag = true;
    }
    ~ChangeGuard() { m_flag = m_old; }
    ChangeGuard(const ChangeGuard&) = delete;
    ChangeGuard& operator=(const ChangeGuard&) = delete;

private:
    bool& m_flag;
    bool m_old;
};

int clampToInt(int64_t n)
{
    return static_cast<int>(std::clamp<int64_t>(n, 0, INT_MAX));
}
} // namespace

TensorTableModel::TensorTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void TensorTableModel::setTensor(const opscope::Tensor& tensor)
{
    const ChangeGuard guard(m_changing);
    beginResetModel();
    const bool sameShape = m_tensor.defined() && tensor.defined() && m_tensor.shape() == tensor.shape();
    m_tensor = tensor;
    m_ndim = tensor.defined() ? tensor.ndim() : 0;
    if (!sameShape) {
        defaultAxes();
        m_rows = 0;
        m_cols = 0;
    }
    m_heatKnown = false;
    recompute();
    endResetModel();
    emit sliceChanged();
}

void TensorTableModel::clear()
{
    setTensor(opscope::Tensor());
}

void TensorTableModel::defaultAxes()
{
    m_fixed.assign(static_cast<size_t>(m_ndim), 0);
    m_rowAxis = m_ndim >= 2 ? m_ndim - 2 : (m_ndim == 1 ? 0 : -1);
    m_colAxis = m_ndim >= 2 ? m_ndim - 1 : -1;
}

void TensorTableModel::recompute()
{
    const opscope::Shape& shape = m_tensor.shape();
    m_strides.assign(static_cast<size_t>(m_ndim), 1);
    for (int i = m_ndim - 2; i >= 0; --i)
        m_strides[static_cast<size_t>(i)] = m_strides[static_cast<size_t>(i + 1)] * shape[i + 1];
    m_base = 0;
    for (int i = 0; i < m_ndim; ++i) {
        if (i == m_rowAxis || i == m_colAxis) continue;
        auto& fixed = m_fixed[static_cast<size_t>(i)];
        fixed = std::clamp<int64_t>(fixed, 0, std::max<int64_t>(0, shape[i] - 1));
        m_base += fixed * m_strides[static_cast<size_t>(i)];
    }
    m_rowStride = m_rowAxis >= 0 ? m_strides[static_cast<size_t>(m_rowAxis)] : 0;
    m_colStride = m_colAxis >= 0 ? m_strides[static_cast<size_t>(m_colAxis)] : 0;
    if (!m_tensor.defined() || m_tensor.size() <= 0) {
        m_totalRows = m_totalCols = 0;
    } else {
        m_totalRows = m_rowAxis >= 0 ? shape[m_rowAxis] : 1;
        m_totalCols = m_colAxis >= 0 ? shape[m_colAxis] : 1;
    }
    const int rowLimit = clampToInt(m_totalRows), colLimit = clampToInt(m_totalCols);
    m_rows = std::clamp(m_rows, std::min(kRowChunk, rowLimit), rowLimit);
    m_cols = std::clamp(m_cols, std::min(kColumnChunk, colLimit), colLimit);
}

void TensorTableModel::setRowAxis(int axis)
{
    if (m_ndim < 2 || axis < 0 || axis >= m_ndim || axis == m_rowAxis) return;
    const ChangeGuard guard(m_changing);
    beginResetModel();
    if (axis == m_colAxis) m_colAxis = m_rowAxis;
    m_rowAxis = axis;
    m_rows = 0;
    m_cols = 0;
    recompute();
    endResetModel();
    emit sliceChanged();
}

void TensorTableModel::setColumnAxis(int axis)
{
    if (m_ndim < 2 || axis < 0 || axis >= m_ndim || axis == m_colAxis) return;
    const ChangeGuard guard(m_changing);
    beginResetModel();
    if (axis == m_rowAxis) m_rowAxis = m_colAxis;
    m_colAxis = axis;
    m_rows = 0;
    m_cols = 0;
    recompute();
    endResetModel();
    emit sliceChanged();
}

void TensorTableModel::setFixedIndex(int axis, int64_t value)
{
    if (axis < 0 || axis >= m_ndim || axis == m_rowAxis || axis == m_colAxis) return;
    const int64_t clamped = std::clamp<int64_t>(value, 0, std::max<int64_t>(0, m_tensor.shape()[axis] - 1));
    if (clamped == m_fixed[static_cast<size_t>(axis)]) return;
    // Same table size, other values: the view keeps its scroll position.
    const ChangeGuard guard(m_changing);
    m_fixed[static_cast<size_t>(axis)] = clamped;
    recompute();
    if (m_rows > 0 && m_cols > 0) emit dataChanged(index(0, 0), index(m_rows - 1, m_cols - 1));
    emit sliceChanged();
}

std::vector<int64_t> TensorTableModel::fixedIndex() const
{
    std::vector<int64_t> out = m_fixed;
    for (int i = 0; i < m_ndim; ++i)
        if (i == m_rowAxis || i == m_colAxis) out[static_cast<size_t>(i)] = 0;
    return out;
}

int64_t TensorTableModel::totalRows() const
{
    return m_totalRows;
}

int64_t TensorTableModel::totalColumns() const
{
    return m_totalCols;
}

bool TensorTableModel::ensureLoaded(int64_t row, int64_t col)
{
    if (row < 0 || col < 0 || row >= m_totalRows || col >= m_totalCols) return false;
    if (m_changing) return row < m_rows && col < m_cols;
    const ChangeGuard guard(m_changing);
    if (row >= m_rows) {
        const int last = clampToInt(std::min<int64_t>(m_totalRows, (row / kRowChunk + 1) * kRowChunk)) - 1;
        beginInsertRows(QModelIndex(), m_rows, last);
        m_rows = last + 1;
        endInsertRows();
    }
    if (col >= m_cols) {
        const int last = clampToInt(std::min<int64_t>(m_totalCols, (col / kColumnChunk + 1) * kColumnChunk)) - 1;
        beginInsertColumns(QModelIndex(), m_cols, last);
        m_cols = last + 1;
        endInsertColumns();
    }
    return true;
}

int64_t TensorTableModel::flatOffset(int row, int col) const
{
    if (row < 0 || col < 0 || row >= m_totalRows || col >= m_totalCols) return -1;
    return m_base + row * m_rowStride + col * m_colStride;
}

double TensorTableModel::valueAt(int row, int col) const
{
    const int64_t off = flatOffset(row, col);
    return off < 0 ? std::numeric_limits<double>::quiet_NaN() : m_tensor.view().valueAt(off);
}

QString TensorTableModel::textOf(double v, bool exact) const
{
    const DType t = m_tensor.dtype();
    if (t == DType::Bool) return v != 0 ? QStringLiteral("true") : QStringLiteral("false");
    if (isIntegerType(t)) return QString::number(static_cast<qlonglong>(v));
    if (t == DType::Float64 && exact) return QString::number(v, 'g', 17);
    return exact ? formatExact(static_cast<float>(v)) : formatCompact(v);
}

std::vector<int64_t> TensorTableModel::fullIndex(int row, int col) const
{
    std::vector<int64_t> idx = m_fixed;
    if (m_rowAxis >= 0) idx[static_cast<size_t>(m_rowAxis)] = row;
    if (m_colAxis >= 0) idx[static_cast<size_t>(m_colAxis)] = col;
    return idx;
}

void TensorTableModel::setHeatColours(bool on)
{
    if (on == m_heat) return;
    m_heat = on;
    const ChangeGuard guard(m_changing);
    if (m_rows > 0 && m_cols > 0) emit dataChanged(index(0, 0), index(m_rows - 1, m_cols - 1), { Qt::BackgroundRole });
    emit heatColoursChanged(on);
}

void TensorTableModel::setHeatRange(double lo, double hi)
{
    m_heatKnown = std::isfinite(lo) && std::isfinite(hi) && lo < hi;
    m_heatLo = lo;
    m_heatHi = hi;
    const ChangeGuard guard(m_changing);
    if (m_heat && m_rows > 0 && m_cols > 0)
        emit dataChanged(index(0, 0), index(m_rows - 1, m_cols - 1), { Qt::BackgroundRole });
}

void TensorTableModel::ensureHeatRange() const
{
    if (m_heatKnown || !m_tensor.defined() || m_tensor.size() > kHeatScanMax) return;
    const debug::TensorStats s = debug::computeStats(m_tensor.view());
    m_heatLo = s.min;
    m_heatHi = s.max;
    m_heatKnown = true;
}

QColor TensorTableModel::heatColour(float v) const
{
    ensureHeatRange();
    if (!m_heatKnown || !std::isfinite(v) || !(m_heatHi > m_heatLo)) return {};
    if (m_heatLo < 0 && m_heatHi > 0) {
        const double a = std::max(-m_heatLo, m_heatHi);
        const double t = std::clamp(std::fabs(v) / a, 0.0, 1.0);
        QColor c = v < 0 ? QColor(33, 102, 172) : QColor(178, 24, 43);
        c.setAlpha(static_cast<int>(t * kHeatAlpha));
        return c;
    }
    const double t = std::clamp((v - m_heatLo) / (m_heatHi - m_heatLo), 0.0, 1.0);
    QColor c(230, 120, 20);
    c.setAlpha(static_cast<int>(t * kHeatAlpha));
    return c;
}

int TensorTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int TensorTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : m_cols;
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.model() != this || index.row() >= m_rows || index.column() >= m_cols) return {};
    const double v = valueAt(index.row(), index.column());
    switch (role) {
    case Qt::DisplayRole:
        return textOf(v, false);
    case Qt::ToolTipRole: {
        const auto idx = fullIndex(index.row(), index.column());
        return QStringLiteral("%1 = %2").arg(formatIndex(idx), textOf(v, true));
    }
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ForegroundRole:
        if (!std::isfinite(v)) return kAlarm;
        return {};
    case Qt::BackgroundRole:
        if (m_heat) {
            const QColor c = heatColour(static_cast<float>(v));
            if (c.isValid()) return c;
        }
        return {};
    default:
        return {};
    }
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    const bool horizontal = orientation == Qt::Horizontal;
    if (section < 0 || section >= (horizontal ? m_cols : m_rows)) return {};
    const int axis = horizontal ? m_colAxis : m_rowAxis;
    switch (role) {
    case Qt::DisplayRole:
        if (axis < 0) return horizontal ? tr("value") : QString();
        return QString::number(section);
    case Qt::ToolTipRole:
        if (axis < 0) return {};
        return tr("axis %1, index %2").arg(axis).arg(section);
    default:
        return {};
    }
}

bool TensorTableModel::canFetchMore(const QModelIndex& parent) const
{
    return !parent.isValid() && !m_changing && (m_rows < m_totalRows || m_cols < m_totalCols);
}

void TensorTableModel::fetchMore(const QModelIndex& parent)
{
    // Listeners of our own change signals may ask for more; that waits until the change is done.
    if (parent.isValid() || m_changing) return;
    const ChangeGuard guard(m_changing);
    if (m_rows < m_totalRows) {
        const int last = clampToInt(std::min<int64_t>(m_totalRows, int64_t { m_rows } + kRowChunk)) - 1;
        beginInsertRows(QModelIndex(), m_rows, last);
        m_rows = last + 1;
        endInsertRows();
    }
    if (m_cols < m_totalCols) {
        const int last = clampToInt(std::min<int64_t>(m_totalCols, int64_t { m_cols } + kColumnChunk)) - 1;
        beginInsertColumns(QModelIndex(), m_cols, last);
        m_cols = last + 1;
        endInsertColumns();
    }
}

} // namespace opscope::gui
