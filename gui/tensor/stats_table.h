#pragma once

#include "debug/tensor_stats.h"

#include <QTableWidget>

namespace opscope::gui {

/// Read-only summary of a tensor: shape, element count, min, max, mean, std, L2 norm and the
/// NaN, ±Inf and zero counts with their share of the elements. NaN and Inf counts above zero are
/// red. The context menu copies the table as text.
class StatsTable : public QTableWidget {
    Q_OBJECT

public:
    /// Row order of the table.
    enum Row { Shape, Elements, Min, Max, Mean, Std, L2, Nan, PosInf, NegInf, Zeros, RowCount };

    explicit StatsTable(QWidget* parent = nullptr);

    void setStats(const QString& shapeText, const debug::TensorStats& stats);
    /// Empties the values (the names stay); `message` goes in the shape row.
    void clear(const QString& message = {});
    bool hasStats() const { return m_hasStats; }
    const debug::TensorStats& stats() const { return m_stats; }
    /// Text of a value cell, as shown.
    QString valueText(Row row) const;
    /// The table as "name<TAB>value" lines.
    QString toText() const;
    QSize sizeHint() const override;

private:
    void setValue(Row row, const QString& text, bool alarm = false);
    void copyAll() const;

    debug::TensorStats m_stats;
    bool m_hasStats = false;
};

} // namespace opscope::gui
