#include "gui/tensor/tensor_table_model.h"

#include "core/error.h"
#include "debug/tensor_stats.h"
#include "gui/tensor/tensor_source.h"
#include "gui/tensor/value_format.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <exception>
#include <limits>

#include <QColor>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace opscope::gui {

namespace {
// Heat colours for larger tensors need a range from outside (the inspector's statistics).
constexpr int64_t kHeatScanMax = 1 << 24;
constexpr int kHeatAlpha = 110;
const QColor kAlarm(214, 39, 40);
const QColor kPending(150, 150, 150);

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
    m_pool.setMaxThreadCount(1);
}

TensorTableModel::~TensorTableModel()
{
    ++m_pageGeneration;
    m_pool.waitForDone(); // a page in flight posts to this model: it must not outlive it
}

void TensorTableModel::setTensor(const opscope::Tensor& tensor)
{
    reset(tensor, tensor.defined() ? tensor.shape() : opscope::Shape(),
        tensor.defined() ? tensor.dtype() : opscope::DType::Float32, nullptr);
}

void TensorTableModel::setSource(
    const opscope::Shape& shape, opscope::DType dtype, std::shared_ptr<const TensorSource> source)
{
    reset(opscope::Tensor(), shape, dtype, std::move(source));
}

void TensorTableModel::reset(const opscope::Tensor& tensor, const opscope::Shape& shape, opscope::DType dtype,
    std::shared_ptr<const TensorSource> source)
{
    const ChangeGuard guard(m_changing);
    beginResetModel();
    const bool has = tensor.defined() || source != nullptr;
    const bool sameShape = hasTensor() && has && m_shape == shape && (m_source != nullptr) == (source != nullptr);
    m_tensor = tensor;
    m_source = std::move(source);
    m_shape = has ? shape : opscope::Shape();
    m_dtype = dtype;
    m_ndim = has ? m_shape.ndim() : 0;
    if (!sameShape) {
        defaultAxes();
        m_rows = 0;
        m_cols = 0;
    }
    m_heatKnown = false;
    dropPages();
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
    const opscope::Shape& shape = m_shape;
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
    if (!hasTensor() || m_shape.size() <= 0) {
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
    if (m_source || m_ndim < 2 || axis < 0 || axis >= m_ndim || axis == m_rowAxis) return;
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
    if (m_source || m_ndim < 2 || axis < 0 || axis >= m_ndim || axis == m_colAxis) return;
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
    const int64_t clamped = std::clamp<int64_t>(value, 0, std::max<int64_t>(0, m_shape[axis] - 1));
    if (clamped == m_fixed[static_cast<size_t>(axis)]) return;
    // Same table size, other values: the view keeps its scroll position.
    const ChangeGuard guard(m_changing);
    m_fixed[static_cast<size_t>(axis)] = clamped;
    dropPages();
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
    if (off < 0) return std::numeric_limits<double>::quiet_NaN();
    if (!m_source) return m_tensor.view().valueAt(off);
    const Page* page = pageOf(row, col);
    if (!page) return std::numeric_limits<double>::quiet_NaN();
    const int64_t r = row % kPageRows, c = col % kPageColumns;
    return r < page->rows && c < page->cols ? page->values[static_cast<size_t>(r * page->cols + c)]
                                            : std::numeric_limits<double>::quiet_NaN();
}

QString TensorTableModel::sourceWhere() const
{
    return m_source ? m_source->where() : QString();
}

bool TensorTableModel::isLoaded(int row, int col) const
{
    if (flatOffset(row, col) < 0) return false;
    return !m_source || m_pages.count({ row / kPageRows, col / kPageColumns }) > 0;
}

const TensorTableModel::Page* TensorTableModel::pageOf(int row, int col) const
{
    const PageKey key { row / kPageRows, col / kPageColumns };
    const auto it = m_pages.find(key);
    if (it != m_pages.end()) return &it->second;
    if (m_fetchError.isEmpty() && m_queued.insert(key).second) {
        const bool wasFetching = isFetching();
        // Newest first: the page on screen now goes before those scrolled past; a long queue drops
        // its oldest (asked for again if they are painted again).
        m_queue.push_front(key);
        while (m_queue.size() > kMaxQueuedPages) {
            m_queued.erase(m_queue.back());
            m_queue.pop_back();
        }
        startNextPage();
        // Asked from data(), often while painting: listeners hear of it once that is done.
        if (!wasFetching)
            QMetaObject::invokeMethod(
                const_cast<TensorTableModel*>(this), [this] { emit const_cast<TensorTableModel*>(this)->fetchStateChanged(); },
                Qt::QueuedConnection);
    }
    return nullptr;
}

void TensorTableModel::dropPages()
{
    ++m_pageGeneration;
    m_pages.clear();
    m_queue.clear();
    m_queued.clear();
    m_fetchError.clear();
}

void TensorTableModel::startNextPage() const
{
    if (m_inFlight || m_queue.empty() || !m_source) return;
    const PageKey key = m_queue.front();
    m_queue.pop_front();
    // The window in the slice's terms: the last two axes are its rows and columns (a 1-D tensor
    // is one row there, one column here).
    debug::SliceRequest request;
    const bool oneD = m_ndim == 1;
    for (int i = 0; i + 2 < m_ndim; ++i)
        request.index.push_back(m_fixed[static_cast<size_t>(i)]);
    const int64_t row0 = key.first * kPageRows, col0 = key.second * kPageColumns;
    const int64_t rows = std::min<int64_t>(kPageRows, m_totalRows - row0);
    const int64_t cols = std::min<int64_t>(kPageColumns, m_totalCols - col0);
    if (oneD) {
        request.colBegin = row0;
        request.colCount = rows;
    } else if (m_ndim >= 2) {
        request.rowBegin = row0;
        request.rowCount = rows;
        request.colBegin = col0;
        request.colCount = cols;
    }
    m_inFlight = true;
    QPointer<TensorTableModel> self(const_cast<TensorTableModel*>(this));
    (void)QtConcurrent::run(&m_pool, [self, source = m_source, request, key, rows, cols, oneD, generation = m_pageGeneration] {
        Page page;
        QString error;
        try {
            const debug::TensorSlice s = source->slice(request);
            page.rows = std::min(rows, oneD ? s.cols : s.rows);
            page.cols = std::min(cols, oneD ? int64_t { 1 } : s.cols);
            if (page.rows < rows || page.cols < cols) // another tensor of that name now (the pause moved on)
                throw Error("a window of " + std::to_string(page.rows) + " x " + std::to_string(page.cols) + " came for "
                    + std::to_string(rows) + " x " + std::to_string(cols) + ": the tensor changed where it is");
            page.dtype = s.dtype;
            page.values.resize(static_cast<size_t>(page.rows * page.cols));
            for (int64_t r = 0; r < page.rows; ++r)
                for (int64_t c = 0; c < page.cols; ++c)
                    page.values[static_cast<size_t>(r * page.cols + c)] = oneD ? s.at(0, r) : s.at(r, c);
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        // The destructor waits for this job, so `self` is alive here; the queued call is dropped
        // if the model is deleted before it is delivered.
        QMetaObject::invokeMethod(
            self.data(),
            [self, generation, key, page = std::move(page), error]() mutable {
                if (self) self->pageArrived(generation, key, std::move(page), error);
            },
            Qt::QueuedConnection);
    });
}

void TensorTableModel::pageArrived(uint64_t generation, PageKey key, Page page, const QString& error)
{
    m_inFlight = false;
    if (generation == m_pageGeneration) {
        m_queued.erase(key);
        if (!error.isEmpty()) {
            m_fetchError = error;
            m_queue.clear();
            m_queued.clear();
        } else {
            if (m_pages.size() >= kMaxPages) m_pages.clear(); // what is on screen asks again
            // The source knows the type (a server's description has shapes only): values print as it says.
            if (page.dtype != m_dtype && m_rows > 0 && m_cols > 0) {
                m_dtype = page.dtype;
                const ChangeGuard guard(m_changing);
                emit dataChanged(index(0, 0), index(m_rows - 1, m_cols - 1));
            }
            m_pages[key] = std::move(page);
            const int top = static_cast<int>(key.first * kPageRows), left = static_cast<int>(key.second * kPageColumns);
            const int bottom = std::min(m_rows, top + kPageRows) - 1, right = std::min(m_cols, left + kPageColumns) - 1;
            if (bottom >= top && right >= left) {
                const ChangeGuard guard(m_changing);
                emit dataChanged(index(top, left), index(bottom, right));
            }
        }
    }
    startNextPage();
    if (!isFetching()) emit fetchStateChanged();
}

QString TensorTableModel::textOf(double v, bool exact) const
{
    const DType t = m_dtype;
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
    if (m_heatKnown || !m_tensor.defined() || m_tensor.size() > kHeatScanMax) return; // remote: from the statistics
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
    if (m_source && !m_pages.count({ index.row() / kPageRows, index.column() / kPageColumns })) {
        (void)pageOf(index.row(), index.column()); // asks for it
        switch (role) {
        case Qt::DisplayRole:
            return QStringLiteral("…");
        case Qt::ToolTipRole:
            return m_fetchError.isEmpty() ? tr("%1: being read from %2")
                                                .arg(formatIndex(fullIndex(index.row(), index.column())), m_source->where())
                                          : m_fetchError;
        case Qt::TextAlignmentRole:
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        case Qt::ForegroundRole:
            return kPending;
        default:
            return {};
        }
    }
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
