#include "gui/panels/breakpoints_panel.h"

#include "gui/panels/breakpoint_dialog.h"
#include "gui/panels/breakpoint_model.h"

#include <QAction>
#include <QHeaderView>
#include <QKeyEvent>
#include <QMessageBox>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

namespace opscope::gui {

BreakpointsPanel::BreakpointsPanel(BreakpointModel* model, QWidget* parent)
    : QWidget(parent)
    , m_model(model)
    , m_view(new QTableView(this))
    , m_toolBar(new QToolBar(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_toolBar->setIconSize(QSize(16, 16));
    m_toolBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    layout->addWidget(m_toolBar);
    layout->addWidget(m_view);

    QAction* add = m_toolBar->addAction(tr("Add…"), this, [this] { addWithDialog(); });
    add->setToolTip(tr("Add a breakpoint on a node or tensor, with an optional condition"));
    QAction* remove = m_toolBar->addAction(tr("Remove"), this, &BreakpointsPanel::removeSelected);
    remove->setShortcut(QKeySequence::Delete);
    remove->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(remove);
    QAction* removeAll = m_toolBar->addAction(tr("Remove All"), this, [this] { m_model->clear(); });
    // Watching a server another client controls: the table is shown, not edited.
    connect(model, &BreakpointModel::readOnlyChanged, this, [this, add, remove, removeAll](bool readOnly) {
        for (QAction* a : { add, remove, removeAll })
            a->setEnabled(!readOnly);
        m_toolBar->setToolTip(readOnly ? m_model->readOnlyReason() : QString());
    });

    m_view->setModel(model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(
        QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed | QAbstractItemView::SelectedClicked);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(22);
    m_view->setWordWrap(false);
    // The node takes the room left by the other columns, which fit their (short) contents; a long name
    // loses its middle, where MXNet names repeat the block path, and reads whole in the tooltip.
    QHeaderView* h = m_view->horizontalHeader();
    h->setStretchLastSection(false);
    h->setMinimumSectionSize(24);
    for (int c = 0; c < BreakpointModel::ColumnCount; ++c)
        h->setSectionResizeMode(
            c, c == BreakpointModel::Location ? QHeaderView::Stretch : QHeaderView::ResizeToContents);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->setAlternatingRowColors(true);
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        if (index.column() != BreakpointModel::Location) return;
        const auto& rows = m_model->breakpoints();
        if (index.row() < 0 || index.row() >= static_cast<int>(rows.size())) return;
        const debug::Breakpoint& b = rows[static_cast<size_t>(index.row())];
        if (b.kind == debug::Breakpoint::Kind::Node) Q_EMIT nodeActivated(QString::fromStdString(b.location));
    });
}

void BreakpointsPanel::removeSelected()
{
    std::vector<int> ids;
    for (const QModelIndex& i : m_view->selectionModel()->selectedRows())
        ids.push_back(i.data(Qt::UserRole).toInt());
    for (int id : ids)
        m_model->remove(id);
}

void BreakpointsPanel::addWithDialog(const QString& node)
{
    BreakpointDialog dialog(this);
    dialog.setNode(node);
    if (dialog.exec() != QDialog::Accepted) return;
    m_model->add(dialog.breakpoint());
}

} // namespace opscope::gui
