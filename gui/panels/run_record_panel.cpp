#include "gui/panels/run_record_panel.h"

#include "gui/panels/run_record_model.h"

#include <algorithm>
#include <array>

#include <QCheckBox>
#include <QEvent>
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
    m_summary->setMinimumWidth(1); // a long summary is cut rather than widening the dock

    m_view->setModel(m_filter);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(RunRecordModel::Order, Qt::AscendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->verticalHeader()->hide();
    for (int c = RunRecordModel::kFirstCompareColumn; c < RunRecordModel::ColumnCount; ++c)
        m_view->setColumnHidden(c, true);
    m_view->verticalHeader()->setDefaultSectionSize(20);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    // The node takes what the other columns, as wide as their contents, leave; its middle goes first.
    QHeaderView* h = m_view->horizontalHeader();
    h->setSectionResizeMode(QHeaderView::Interactive);
    h->setStretchLastSection(false);
    m_view->viewport()->installEventFilter(this);
    h->setMinimumSectionSize(30);
    m_view->setTextElideMode(Qt::ElideMiddle);
    fitColumns();

    connect(h, &QHeaderView::sortIndicatorChanged, this, &RunRecordPanel::fitColumns);
    connect(m_text, &QLineEdit::textChanged, m_filter, &RunRecordFilter::setText);
    connect(m_onlyNan, &QCheckBox::toggled, m_filter, &RunRecordFilter::setOnlyNanInf);
    connect(
        m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            const QModelIndex source = m_filter->mapToSource(current);
            Q_EMIT opPicked(source.row(), source.data(RunRecordModel::kNodeRole).toString());
        });
}

void RunRecordPanel::setDivergence(std::map<std::string, RunRecordModel::NodeDiff> byNode)
{
    const bool shown = !byNode.empty();
    m_model->setDivergence(std::move(byNode));
    for (int c = RunRecordModel::kFirstCompareColumn; c < RunRecordModel::ColumnCount; ++c)
        m_view->setColumnHidden(c, !shown);
    fitColumns();
    fitNodeColumn();
}

void RunRecordPanel::setRecord(std::shared_ptr<const debug::RunRecord> record)
{
    if (!record) {
        m_summary->clear();
        m_model->clear();
        return;
    }
    int64_t total = 0, prepare = 0;
    int nanOps = 0, cold = 0;
    for (const debug::OpRecord& op : record->ops) {
        total += RunRecordModel::shownTimeNs(op);
        prepare += op.prepareNs;
        cold += op.firstCall && op.warmNs == 0 ? 1 : 0;
    }
    m_model->setRecord(std::move(record));
    for (int r = 0; r < m_model->rowCount(); ++r)
        nanOps += m_model->hasNanInf(r) ? 1 : 0;
    const auto& rec = *m_model->record();
    QString s = tr("%n op(s), %1 ms in kernels", nullptr, static_cast<int>(rec.ops.size()))
                    .arg(static_cast<double>(total) / 1e6, 0, 'f', 2);
    if (prepare > 0)
        s += tr("; kernels prepared in %1 ms before the run").arg(static_cast<double>(prepare) / 1e6, 0, 'f', 2);
    if (cold) s += tr("; %1 first call(s) with one-time setup (in italics; run again for warm times)").arg(cold);
    if (nanOps) s += tr(", %1 with NaN/Inf").arg(nanOps);
    if (rec.keptCount()) s += tr(", %1 tensors kept").arg(rec.keptCount());
    if (rec.tensorsDropped()) s += tr(" (%1 dropped for the memory budget)").arg(rec.droppedTensors());
    m_summary->setText(s);
    m_summary->setToolTip(s);
    fitColumns();
}

void RunRecordPanel::fitColumns()
{
    // Contents of the first rows (a record of thousands of ops repeats its operators and shapes);
    // operator names and shapes of a training step's graph can be long and are capped.
    constexpr int kRows = 2000;
    constexpr int kPadding = 14;
    QHeaderView* h = m_view->horizontalHeader();
    const QFontMetrics fm(m_view->font());
    QFont boldFont = m_view->font();
    boldFont.setBold(true);
    const QFontMetrics bold(boldFont);
    const int rows = std::min(m_model->rowCount(), kRows);
    // Headers need room for the sort arrow only where it is drawn (the header reserves it everywhere).
    std::array<int, RunRecordModel::ColumnCount> headers {};
    h->setSortIndicatorShown(false);
    for (int c = 0; c < RunRecordModel::ColumnCount; ++c)
        headers[static_cast<size_t>(c)] = h->sectionSizeHint(c);
    h->setSortIndicatorShown(true);
    const int sorted = h->sortIndicatorSection();
    if (sorted >= 0 && sorted < RunRecordModel::ColumnCount)
        headers[static_cast<size_t>(sorted)] = h->sectionSizeHint(sorted);
    for (int c = 0; c < RunRecordModel::ColumnCount; ++c) {
        if (c == RunRecordModel::Node) continue;
        int w = headers[static_cast<size_t>(c)];
        for (int r = 0; r < rows; ++r) {
            const QString text = m_model->index(r, c).data().toString();
            w = std::max(w, (c == RunRecordModel::NanInf ? bold : fm).horizontalAdvance(text) + kPadding);
        }
        if (c == RunRecordModel::Operator)
            w = std::min(w, fm.horizontalAdvance(QStringLiteral("FullyConnected")) + kPadding);
        if (c == RunRecordModel::Shape)
            w = std::min(w, fm.horizontalAdvance(QStringLiteral("(64, 128, 28, 28)")) + kPadding);
        m_view->setColumnWidth(c, w);
    }
    fitNodeColumn();
}

void RunRecordPanel::fitNodeColumn()
{
    // What the others leave, but never so little that the names are lost: then the table scrolls.
    constexpr int kNodeMin = 150;
    int others = 0;
    for (int c = 0; c < RunRecordModel::ColumnCount; ++c)
        others += c == RunRecordModel::Node ? 0 : m_view->columnWidth(c);
    m_view->setColumnWidth(RunRecordModel::Node, std::max(kNodeMin, m_view->viewport()->width() - others));
}

bool RunRecordPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_view->viewport() && event->type() == QEvent::Resize) fitNodeColumn();
    return QWidget::eventFilter(watched, event);
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
