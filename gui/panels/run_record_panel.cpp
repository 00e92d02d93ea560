#include "gui/panels/run_record_panel.h"

#include "gui/panels/run_record_model.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QVBoxLayout>

namespace opscope::gui {

RunRecordPanel::RunRecordPanel(QWidget* parent)
    : QWidget(parent)
    , m_model(new RunRecordModel(this))
    , m_filter(new RunRecordFilter(this))
    , m_text(new QLineEdit(this))
    , m_onlyNan(new QCheckBox(tr("NaN/Inf only"), this))
    , m_summary(new QLabel(this))
    , m_view(new QTableView(this))
{
    m_filter->setSourceModel(m_model);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->setSpacing(4);
    auto* bar = new QHBoxLayout;
    m_text->setPlaceholderText(tr("Filter by node or operator"));
    m_text->setClearButtonEnabled(true);
    bar->addWidget(m_text, 1);
    bar->addWidget(m_onlyNan);
    bar->addWidget(m_summary);
    layout->addLayout(bar);
    layout->addWidget(m_view);
    m_summary->setStyleSheet(QStringLiteral("color: #666"));

    m_view->setModel(m_filter);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(RunRecordModel::Order, Qt::AscendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(20);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    QHeaderView* h = m_view->horizontalHeader();
    h->setSectionResizeMode(QHeaderView::Interactive);
    h->setStretchLastSection(true);
    m_view->setColumnWidth(RunRecordModel::Node, 280);
    m_view->setTextElideMode(Qt::ElideLeft);
    m_view->setColumnWidth(RunRecordModel::Order, 40);
    m_view->setColumnWidth(RunRecordModel::Operator, 110);
    m_view->setColumnWidth(RunRecordModel::Time, 75);
    m_view->setColumnWidth(RunRecordModel::Shape, 120);
    for (int c : { RunRecordModel::Min, RunRecordModel::Max, RunRecordModel::Mean })
        m_view->setColumnWidth(c, 80);
    m_view->setColumnWidth(RunRecordModel::NanInf, 65);

    connect(m_text, &QLineEdit::textChanged, m_filter, &RunRecordFilter::setText);
    connect(m_onlyNan, &QCheckBox::toggled, m_filter, &RunRecordFilter::setOnlyNanInf);
    connect(
        m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            const QModelIndex source = m_filter->mapToSource(current);
            Q_EMIT opPicked(source.row(), source.data(RunRecordModel::kNodeRole).toString());
        });
}

void RunRecordPanel::setRecord(std::shared_ptr<const debug::RunRecord> record)
{
    if (!record) {
        m_summary->clear();
        m_model->clear();
        return;
    }
    int64_t total = 0;
    int nanOps = 0;
    for (const debug::OpRecord& op : record->ops)
        total += op.timeNs;
    m_model->setRecord(std::move(record));
    for (int r = 0; r < m_model->rowCount(); ++r)
        nanOps += m_model->hasNanInf(r) ? 1 : 0;
    const auto& rec = *m_model->record();
    QString s = tr("%n op(s), %1 ms in kernels", nullptr, static_cast<int>(rec.ops.size()))
                    .arg(static_cast<double>(total) / 1e6, 0, 'f', 2);
    if (nanOps) s += tr(", %1 with NaN/Inf").arg(nanOps);
    if (rec.keptCount()) s += tr(", %1 tensors kept").arg(rec.keptCount());
    if (rec.tensorsDropped()) s += tr(" (%1 dropped for the memory budget)").arg(rec.droppedTensors());
    m_summary->setText(s);
}

void RunRecordPanel::selectOp(int order)
{
    const QModelIndex source = m_model->index(order, 0);
    const QModelIndex proxy = m_filter->mapFromSource(source);
    if (!proxy.isValid()) return;
    const QSignalBlocker block(m_view->selectionModel());
    m_view->selectionModel()->setCurrentIndex(proxy, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(proxy);
}

} // namespace opscope::gui
