#pragma once

#include "tensor/tensor.h"

#include <memory>
#include <vector>

#include <QWidget>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTableView;

namespace opscope::gui {

class TensorSource;
class TensorTableModel;

/// The values of a tensor as a table: a row-axis and a column-axis selector, an index spin box
/// for every other axis, a "go to index" field and the table itself (fixed row and column sizes so
/// that millions of rows scroll smoothly). Ctrl+C copies the selected cells as tab-separated text.
class ValueTable : public QWidget {
    Q_OBJECT

public:
    explicit ValueTable(QWidget* parent = nullptr);

    void setTensor(const opscope::Tensor& tensor);
    /// A tensor held where the engine runs: values read in pages as the table shows them.
    void setSource(const opscope::Shape& shape, opscope::DType dtype, std::shared_ptr<const TensorSource> source);
    void clear(const QString& message = {});
    TensorTableModel* model() { return m_model; }
    QTableView* view() { return m_view; }
    /// Scrolls to and selects a cell given as "r, c", "i" or a full index "(a, b, c, d)".
    bool goTo(const QString& text, QString* error = nullptr);
    /// The selected cells as tab-separated rows (at most a million cells).
    QString selectionText() const;

private:
    void modelSliceChanged();
    void rebuildSelectors();
    void syncSelectors();
    void updateStatus();
    /// Columns as wide as the widest value of a sample of the slice (compact numbers), so that a
    /// short row fits without scrolling; at least as wide as the largest column index.
    void fitColumns();
    void copySelection() const;

    TensorTableModel* m_model = nullptr;
    QTableView* m_view = nullptr;
    QLabel* m_message = nullptr;
    QWidget* m_body = nullptr;
    QLabel* m_rowLabel = nullptr;
    QComboBox* m_rowCombo = nullptr;
    QLabel* m_colLabel = nullptr;
    QComboBox* m_colCombo = nullptr;
    QCheckBox* m_heat = nullptr;
    QLineEdit* m_goTo = nullptr;
    QWidget* m_fixedBox = nullptr;
    QGridLayout* m_fixedGrid = nullptr;
    std::vector<QSpinBox*> m_fixedSpins; ///< one per axis; null for displayed axes
    std::vector<QLabel*> m_fixedLabels;
    QLabel* m_status = nullptr;
    opscope::Shape m_selectorShape;
    bool m_hasSelectors = false;
    bool m_selectorRemote = false; ///< the selectors were built for a remote table
    bool m_syncing = false;
};

} // namespace opscope::gui
