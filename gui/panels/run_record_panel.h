#pragma once

#include "debug/run_record.h"

#include <memory>

#include "gui/panels/run_record_model.h"

#include <map>
#include <string>

#include <QWidget>

class QLabel;
class QLineEdit;
class QCheckBox;
class QTableView;

namespace opscope::gui {

class RunRecordModel;
class RunRecordFilter;

/// The Run Record dock: every executed op of the current or last run, sortable by any column and
/// filtered by node/operator text or to ops with NaN/Inf. Picking a row reports the op.
class RunRecordPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunRecordPanel(QWidget* parent = nullptr);
    void setRecord(std::shared_ptr<const debug::RunRecord> record);
    RunRecordModel* model() const { return m_model; }
    RunRecordFilter* filter() const { return m_filter; }
    QTableView* view() const { return m_view; }
    /// Shows a comparison's figures in the divergence columns (shown only while there are any; an
    /// empty map hides them).
    void setDivergence(std::map<std::string, RunRecordModel::NodeDiff> byNode);
    /// Selects the row of record op `order` (0-based) and scrolls to it.
    void selectOp(int order);

Q_SIGNALS:
    /// A row was picked: its op's position in the record and its node.
    void opPicked(int order, const QString& node);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    /// Every column but the node's as wide as its contents (operators and shapes capped).
    void fitColumns();
    /// The node column takes the rest of the width, at least enough for a name elided in the middle.
    void fitNodeColumn();

    RunRecordModel* m_model;
    RunRecordFilter* m_filter;
    QLineEdit* m_text;
    QCheckBox* m_onlyNan;
    QLabel* m_summary;
    QTableView* m_view;
};

} // namespace opscope::gui
