#pragma once

#include "tensor/tensor.h"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include <QAbstractTableModel>
#include <QThreadPool>

namespace opscope::gui {

class TensorSource;

/// A 2-D slice of an N-d tensor as a table. Two axes are displayed (by default the last two; a
/// 1-D tensor is one column of values, a scalar one cell) and every other axis is fixed by an
/// index. Cells are read straight from the tensor, and rows and columns are exposed in chunks
/// through fetchMore(), so a tensor of ten million elements costs no more than a small one.
/// A tensor held where its engine runs (setSource) is read in pages of kPageRows × kPageColumns
/// as the view asks for cells, one page at a time off the GUI thread; a cell not here yet shows
/// "…" until its page arrives. Such a table shows the tensor's last two axes.
class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    static constexpr int kRowChunk = 1000;
    static constexpr int kColumnChunk = 256;
    static constexpr int kPageRows = 128;
    static constexpr int kPageColumns = 32;
    /// Pages kept of a remote tensor; beyond, the cache starts again with what is on screen.
    static constexpr size_t kMaxPages = 256;
    /// Pages waiting to be read; older requests beyond are dropped.
    static constexpr size_t kMaxQueuedPages = 16;

    explicit TensorTableModel(QObject* parent = nullptr);
    ~TensorTableModel() override;

    /// Keeps the axes and fixed index when the shape is the same as before.
    void setTensor(const opscope::Tensor& tensor);
    const opscope::Tensor& tensor() const { return m_tensor; }
    /// A tensor whose values stay with `source`, read in pages as cells are shown.
    void setSource(const opscope::Shape& shape, opscope::DType dtype, std::shared_ptr<const TensorSource> source);
    bool isRemote() const { return m_source != nullptr; }
    /// A tensor (here or remote) is shown.
    bool hasTensor() const { return m_tensor.defined() || m_source != nullptr; }
    const opscope::Shape& shape() const { return m_shape; }
    int ndim() const { return m_ndim; }
    /// A remote table: pages being read, and the last read's failure (empty: none).
    bool isFetching() const { return m_inFlight || !m_queue.empty(); }
    QString fetchError() const { return m_fetchError; }
    /// Where a remote table's values are (empty: here).
    QString sourceWhere() const;
    /// False for a remote cell whose page has not arrived (its value reads as NaN meanwhile).
    bool isLoaded(int row, int col) const;
    void clear();

    /// Displayed axes; choosing the other displayed axis swaps the two. -1 when the tensor has
    /// too few axes (the column axis of a 1-D tensor, both axes of a scalar). A remote table keeps
    /// the last two.
    void setRowAxis(int axis);
    void setColumnAxis(int axis);
    int rowAxis() const { return m_rowAxis; }
    int columnAxis() const { return m_colAxis; }
    /// Index along an axis that is not displayed (clamped to the axis).
    void setFixedIndex(int axis, int64_t value);
    /// One entry per axis; entries of the displayed axes are 0.
    std::vector<int64_t> fixedIndex() const;

    /// Rows and columns of the whole slice (the model may expose fewer until fetched).
    int64_t totalRows() const;
    int64_t totalColumns() const;
    /// Exposes rows and columns up to (row, col); false when outside the slice.
    bool ensureLoaded(int64_t row, int64_t col);

    /// The value of a cell of the slice (NaN outside it).
    /// The element at a cell, as double (NaN outside the table).
    double valueAt(int row, int col) const;
    /// A value as the table writes it: true/false for bool, whole numbers for integer types, else
    /// compact (or, `exact`, every digit).
    QString textOf(double v, bool exact) const;
    /// The tensor index of a cell, one entry per axis.
    std::vector<int64_t> fullIndex(int row, int col) const;
    /// Flat offset of a cell in the tensor, or -1 outside the slice.
    int64_t flatOffset(int row, int col) const;

    /// Subtle background colours by value.
    void setHeatColours(bool on);
    bool heatColours() const { return m_heat; }
    /// Range of the heat colours; lo >= hi lets the model find it (for tensors it can scan quickly).
    void setHeatRange(double lo, double hi);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;

signals:
    /// The tensor, the displayed axes or the fixed index changed.
    void sliceChanged();
    void heatColoursChanged(bool on);
    /// A remote table started or finished reading pages, or a read failed.
    void fetchStateChanged();

private:
    void defaultAxes();
    void recompute();
    void ensureHeatRange() const;
    QColor heatColour(float v) const;
    void reset(const opscope::Tensor& tensor, const opscope::Shape& shape, opscope::DType dtype,
        std::shared_ptr<const TensorSource> source);
    using PageKey = std::pair<int64_t, int64_t>; ///< (row, column) of the page
    struct Page {
        int64_t rows = 0;
        int64_t cols = 0;
        std::vector<double> values; ///< row-major, table orientation
        opscope::DType dtype = opscope::DType::Float32; ///< the tensor's, as its source says
    };
    const Page* pageOf(int row, int col) const;
    void dropPages();
    void startNextPage() const;
    void pageArrived(uint64_t generation, PageKey key, Page page, const QString& error);

    opscope::Tensor m_tensor;
    opscope::Shape m_shape;
    opscope::DType m_dtype = opscope::DType::Float32;
    std::shared_ptr<const TensorSource> m_source;
    // A remote table's pages: all on the GUI thread; a page in flight captures what it needs.
    mutable std::map<PageKey, Page> m_pages;
    mutable std::deque<PageKey> m_queue;
    mutable std::set<PageKey> m_queued;
    mutable bool m_inFlight = false;
    uint64_t m_pageGeneration = 0; ///< bumped when the slice changes: pages in flight are dropped
    QString m_fetchError;
    mutable QThreadPool m_pool;
    int m_ndim = 0;
    int m_rowAxis = -1;
    int m_colAxis = -1;
    std::vector<int64_t> m_fixed;
    std::vector<int64_t> m_strides;
    int64_t m_base = 0;
    int64_t m_rowStride = 0;
    int64_t m_colStride = 0;
    int64_t m_totalRows = 0;
    int64_t m_totalCols = 0;
    int m_rows = 0; ///< exposed so far
    int m_cols = 0;
    bool m_changing = false; ///< a change is being announced; fetchMore() waits
    bool m_heat = false;
    mutable double m_heatLo = 0;
    mutable double m_heatHi = 0;
    mutable bool m_heatKnown = false;
};

} // namespace opscope::gui
