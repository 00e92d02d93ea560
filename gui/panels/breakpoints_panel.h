#pragma once

#include <QWidget>

class QTableView;
class QToolBar;

namespace opscope::gui {

class BreakpointModel;

/// The Breakpoints dock: a table of every breakpoint (enable checkbox, node, phase, editable
/// condition, hit count, ignore count) with add / remove actions. Delete removes the selected rows;
/// double-clicking a node breakpoint asks the window to show that node.
class BreakpointsPanel : public QWidget {
    Q_OBJECT
public:
    explicit BreakpointsPanel(BreakpointModel* model, QWidget* parent = nullptr);
    QTableView* view() const { return m_view; }
    QToolBar* toolBar() const { return m_toolBar; }
    /// Removes the selected breakpoints.
    void removeSelected();
    /// Asks for a node (or tensor) name and a condition, and adds the breakpoint.
    void addWithDialog(const QString& node = {});

Q_SIGNALS:
    void nodeActivated(const QString& node);

private:
    BreakpointModel* m_model;
    QTableView* m_view;
    QToolBar* m_toolBar;
};

} // namespace opscope::gui
