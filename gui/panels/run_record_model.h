#pragma once

#include "debug/run_record.h"

#include <map>
#include <memory>
#include <string>

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

namespace opscope::gui {

/// Every executed op of a run as a table: order, node, operator, time (warm where known; a kernel's
/// first call, with its one-time setup, set apart), output shape, min, max, mean and a NaN/Inf flag (the last four when the run recorded statistics). Holds an immutable
/// record; Qt::UserRole gives sortable numbers, kNodeRole the node name.
class RunRecordModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Order, Node, Operator, Time, Shape, Min, Max, Mean, NanInf, RelL2, Sqnr, Diverges, ColumnCount };
    /// The divergence columns (RelL2 … Diverges) are empty (and the panel hides them) unless a
    /// comparison is set.
    static constexpr int kFirstCompareColumn = RelL2;

    /// A comparison's figures per node (of its first output): shown in the divergence columns.
    struct NodeDiff {
        double relL2 = 0, sqnrDb = 0;
        bool diverges = false;
    };
    void setDivergence(std::map<std::string, NodeDiff> byNode);
    bool hasDivergence() const { return !m_divergence.empty(); }
    static constexpr int kSortRole = Qt::UserRole;
    static constexpr int kNodeRole = Qt::UserRole + 1;

    explicit RunRecordModel(QObject* parent = nullptr);

    void setRecord(std::shared_ptr<const debug::RunRecord> record);
    std::shared_ptr<const debug::RunRecord> record() const { return m_record; }
    void clear() { setRecord(nullptr); }
    /// Whether op `row`'s first output had NaN or Inf (false without statistics).
    bool hasNanInf(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    /// The time the Time column shows: the op's warm time where one is known, else this run's
    /// (a first call, shown in grey italics, its one-time setup included).
    static int64_t shownTimeNs(const debug::OpRecord& op);
    static QString timeToolTip(const debug::OpRecord& op);

private:
    const NodeDiff* divergenceOf(const debug::OpRecord& op) const;
    std::shared_ptr<const debug::RunRecord> m_record;
    std::map<std::string, NodeDiff> m_divergence;
};

/// The record's sorting and filtering: a text matched against node and operator, and an option to
/// show only ops with NaN or Inf.
class RunRecordFilter : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit RunRecordFilter(QObject* parent = nullptr);
    void setText(const QString& text);
    void setOnlyNanInf(bool on);

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

private:
    QString m_text;
    bool m_onlyNanInf = false;
};

} // namespace opscope::gui
