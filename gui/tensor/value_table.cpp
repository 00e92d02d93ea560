#include "gui/tensor/value_table.h"

#include "gui/tensor/tensor_table_model.h"
#include "gui/tensor/value_format.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {
constexpr int64_t kMaxCopyCells = 1000000;
constexpr int kFixedPerRow = 2;
// Values looked at to size the columns: the first rows whole, then rows spread over the slice.
constexpr int64_t kFitSample = 4096;
// A cell's text margins and frame, each side together.
constexpr int kCellPadding = 12;
} // namespace

ValueTable::ValueTable(QWidget* parent)
    : QWidget(parent)
    , m_model(new TensorTableModel(this))
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 4, 0, 0);
    outer->setSpacing(4);

    m_message = new QLabel(tr("No tensor"), this);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setForegroundRole(QPalette::PlaceholderText);
    outer->addWidget(m_message, 1);

    m_body = new QWidget(this);
    auto* layout = new QVBoxLayout(m_body);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    outer->addWidget(m_body, 1);

    auto* axes = new QHBoxLayout;
    axes->setSpacing(6);
    m_rowLabel = new QLabel(tr("Rows"), m_body);
    m_rowCombo = new QComboBox(m_body);
    m_rowCombo->setToolTip(tr("Axis shown down the table"));
    m_rowCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_colLabel = new QLabel(tr("Columns"), m_body);
    m_colCombo = new QComboBox(m_body);
    m_colCombo->setToolTip(tr("Axis shown across the table"));
    m_colCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_heat = new QCheckBox(tr("Heat"), m_body);
    m_heat->setToolTip(tr("Tint the cells by value"));
    m_goTo = new QLineEdit(m_body);
    m_goTo->setPlaceholderText(tr("Go to index…"));
    m_goTo->setToolTip(tr("A row, \"row, column\" or a full index such as (0, 3, 12, 7)"));
    m_goTo->setMinimumWidth(80);
    m_goTo->setMaximumWidth(150);
    axes->addWidget(m_rowLabel);
    axes->addWidget(m_rowCombo);
    axes->addSpacing(4);
    axes->addWidget(m_colLabel);
    axes->addWidget(m_colCombo);
    axes->addSpacing(4);
    axes->addWidget(m_heat);
    axes->addStretch(1);
    axes->addWidget(m_goTo);
    layout->addLayout(axes);

    m_fixedBox = new QWidget(m_body);
    m_fixedGrid = new QGridLayout(m_fixedBox);
    m_fixedGrid->setContentsMargins(0, 0, 0, 0);
    m_fixedGrid->setHorizontalSpacing(6);
    m_fixedGrid->setVerticalSpacing(4);
    layout->addWidget(m_fixedBox);

    m_view = new QTableView(m_body);
    m_view->setModel(m_model);
    m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_view->setWordWrap(false);
    m_view->setSelectionMode(QAbstractItemView::ContiguousSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_view->setVerticalScrollMode(QAbstractItemView::ScrollPerItem);
    const QFontMetrics fm(m_view->font());
    QHeaderView* vh = m_view->verticalHeader();
    vh->setSectionResizeMode(QHeaderView::Fixed);
    vh->setMinimumSectionSize(1);
    vh->setDefaultSectionSize(fm.height() + 4);
    vh->setDefaultAlignment(Qt::AlignRight | Qt::AlignVCenter);
    QHeaderView* hh = m_view->horizontalHeader();
    hh->setSectionResizeMode(QHeaderView::Fixed);
    hh->setMinimumSectionSize(1);
    hh->setDefaultSectionSize(fm.horizontalAdvance(QStringLiteral("-0.0001235")) + kCellPadding);
    hh->setHighlightSections(true);
    layout->addWidget(m_view, 1);

    m_status = new QLabel(m_body);
    m_status->setForegroundRole(QPalette::PlaceholderText);
    m_status->setMinimumWidth(1);
    layout->addWidget(m_status);

    auto* copy = new QAction(tr("Copy"), m_view);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(copy, &QAction::triggered, this, &ValueTable::copySelection);
    m_view->addAction(copy);
    m_view->setContextMenuPolicy(Qt::ActionsContextMenu);

    connect(m_rowCombo, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (!m_syncing && i >= 0) m_model->setRowAxis(m_rowCombo->itemData(i).toInt());
    });
    connect(m_colCombo, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (!m_syncing && i >= 0) m_model->setColumnAxis(m_colCombo->itemData(i).toInt());
    });
    connect(m_heat, &QCheckBox::toggled, m_model, &TensorTableModel::setHeatColours);
    connect(m_model, &TensorTableModel::heatColoursChanged, this, [this](bool on) {
        const QSignalBlocker block(m_heat);
        m_heat->setChecked(on);
    });
    connect(m_goTo, &QLineEdit::returnPressed, this, [this] {
        QString error;
        const bool ok = goTo(m_goTo->text(), &error);
        m_goTo->setStyleSheet(ok ? QString() : QStringLiteral("QLineEdit { color: #d62728; }"));
        m_goTo->setToolTip(ok ? tr("A row, \"row, column\" or a full index such as (0, 3, 12, 7)") : error);
    });
    connect(m_goTo, &QLineEdit::textEdited, this, [this] { m_goTo->setStyleSheet(QString()); });
    connect(m_model, &TensorTableModel::sliceChanged, this, &ValueTable::modelSliceChanged);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this, &ValueTable::updateStatus);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &ValueTable::updateStatus);
    connect(m_model, &QAbstractItemModel::columnsInserted, this, &ValueTable::updateStatus);
    connect(m_model, &TensorTableModel::fetchStateChanged, this, &ValueTable::updateStatus);

    clear();
}

void ValueTable::setTensor(const opscope::Tensor& tensor)
{
    m_message->setText(tr("No tensor"));
    m_model->setTensor(tensor);
}

void ValueTable::setSource(const opscope::Shape& shape, opscope::DType dtype, std::shared_ptr<const TensorSource> source)
{
    m_message->setText(tr("No tensor"));
    m_model->setSource(shape, dtype, std::move(source));
}

void ValueTable::clear(const QString& message)
{
    m_message->setText(message.isEmpty() ? tr("No tensor") : message);
    m_model->clear();
}

void ValueTable::modelSliceChanged()
{
    const bool shown = m_model->hasTensor();
    m_message->setVisible(!shown);
    m_body->setVisible(shown);
    if (shown && (!m_hasSelectors || m_model->shape() != m_selectorShape || m_model->isRemote() != m_selectorRemote))
        rebuildSelectors();
    else if (!shown)
        m_hasSelectors = false;
    syncSelectors();
    fitColumns();
    updateStatus();
}

void ValueTable::fitColumns()
{
    const int64_t rows = m_model->totalRows(), cols = m_model->totalColumns();
    if (rows <= 0 || cols <= 0) return;
    const QFontMetrics fm(m_view->font());
    if (m_model->isRemote()) { // no values here to measure: room for a compact number
        m_view->horizontalHeader()->setDefaultSectionSize(fm.horizontalAdvance(QStringLiteral("-0.0000e-00")) + kCellPadding);
        return;
    }
    int widest = fm.horizontalAdvance(QString::number(std::min<int64_t>(cols, TensorTableModel::kColumnChunk) - 1));
    const int64_t sampleCols = std::min<int64_t>(cols, TensorTableModel::kColumnChunk);
    const int64_t sampleRows = std::max<int64_t>(1, std::min(rows, kFitSample / sampleCols));
    // Whole rows: the first half of the sample from the top, the rest spread evenly down the slice.
    const int64_t top = (sampleRows + 1) / 2;
    for (int64_t i = 0; i < sampleRows; ++i) {
        const int64_t r = i < top ? i : top + (i - top) * (rows - top) / std::max<int64_t>(1, sampleRows - top);
        for (int64_t c = 0; c < sampleCols; ++c)
            widest = std::max(widest,
                fm.horizontalAdvance(m_model->textOf(m_model->valueAt(static_cast<int>(r), static_cast<int>(c)), false)));
    }
    m_view->horizontalHeader()->setDefaultSectionSize(widest + kCellPadding);
}

void ValueTable::rebuildSelectors()
{
    m_syncing = true;
    const opscope::Shape shape = m_model->shape();
    const int nd = m_model->ndim();
    m_selectorShape = shape;
    m_selectorRemote = m_model->isRemote();
    m_hasSelectors = true;

    m_rowCombo->clear();
    m_colCombo->clear();
    for (int i = 0; i < nd; ++i) {
        const QString text = tr("axis %1 (%2)").arg(i).arg(shape[i]);
        m_rowCombo->addItem(text, i);
        m_colCombo->addItem(text, i);
    }
    if (nd == 1) m_colCombo->addItem(tr("values"), -1);
    if (nd == 0) {
        m_rowCombo->addItem(tr("scalar"), -1);
        m_colCombo->addItem(tr("value"), -1);
    }
    // A remote tensor is read in windows of its last two axes.
    const bool choose = nd >= 2 && !m_model->isRemote();
    m_rowCombo->setEnabled(choose);
    m_colCombo->setEnabled(choose);
    const QString why = m_model->isRemote() ? tr("The tensor stays where the engine runs: its last two axes are shown") : QString();
    m_rowCombo->setToolTip(why);
    m_colCombo->setToolTip(why);
    m_colLabel->setVisible(nd >= 2);
    m_colCombo->setVisible(nd >= 2);

    for (QSpinBox* s : m_fixedSpins)
        delete s;
    for (QLabel* l : m_fixedLabels)
        delete l;
    m_fixedSpins.assign(static_cast<size_t>(nd), nullptr);
    m_fixedLabels.assign(static_cast<size_t>(nd), nullptr);
    for (int i = 0; i < nd; ++i) {
        auto* label = new QLabel(tr("axis %1 (%2):").arg(i).arg(shape[i]), m_fixedBox);
        auto* spin = new QSpinBox(m_fixedBox);
        const int hi = static_cast<int>(std::clamp<int64_t>(shape[i] - 1, 0, INT_MAX));
        spin->setRange(0, hi);
        spin->setKeyboardTracking(false);
        spin->setAccelerated(true);
        spin->setToolTip(tr("Index along axis %1: [0..%2]").arg(i).arg(hi));
        spin->setMinimumWidth(std::max(70, spin->sizeHint().width()));
        connect(spin, &QSpinBox::valueChanged, this, [this, i](int v) {
            if (!m_syncing) m_model->setFixedIndex(i, v);
        });
        m_fixedLabels[static_cast<size_t>(i)] = label;
        m_fixedSpins[static_cast<size_t>(i)] = spin;
    }
    m_syncing = false;
}

void ValueTable::syncSelectors()
{
    if (!m_hasSelectors) return;
    const int nd = m_model->ndim();
    if (m_fixedSpins.size() != static_cast<size_t>(nd)) return;
    m_syncing = true;
    m_rowCombo->setCurrentIndex(std::max(0, m_rowCombo->findData(m_model->rowAxis())));
    m_colCombo->setCurrentIndex(std::max(0, m_colCombo->findData(m_model->columnAxis())));

    // Lay the spin boxes of the fixed axes out again, two to a row.
    // The widgets stay (they are re-added below); the layout items taken out are ours to delete.
    while (m_fixedGrid->count() > 0)
        delete m_fixedGrid->takeAt(0);
    const std::vector<int64_t> fixed = m_model->fixedIndex();
    int slot = 0;
    for (int i = 0; i < nd; ++i) {
        QLabel* label = m_fixedLabels[static_cast<size_t>(i)];
        QSpinBox* spin = m_fixedSpins[static_cast<size_t>(i)];
        const bool shown = i != m_model->rowAxis() && i != m_model->columnAxis();
        label->setVisible(shown);
        spin->setVisible(shown);
        if (!shown) continue;
        spin->setValue(static_cast<int>(fixed[static_cast<size_t>(i)]));
        const int r = slot / kFixedPerRow, c = (slot % kFixedPerRow) * 2;
        m_fixedGrid->addWidget(label, r, c);
        m_fixedGrid->addWidget(spin, r, c + 1);
        ++slot;
    }
    for (int c = 0; c < kFixedPerRow * 2; ++c)
        m_fixedGrid->setColumnStretch(c, 0);
    m_fixedGrid->setColumnStretch(kFixedPerRow * 2, 1);
    m_heat->setChecked(m_model->heatColours());
    m_fixedBox->setVisible(slot > 0);
    m_syncing = false;
}

void ValueTable::updateStatus()
{
    if (!m_model->hasTensor()) {
        m_status->clear();
        return;
    }
    const int64_t rows = m_model->totalRows(), cols = m_model->totalColumns();
    QString text = tr("%1 × %2 of %3").arg(rows).arg(cols).arg(formatShape(m_model->shape()));
    if (m_model->rowCount() < rows || m_model->columnCount() < cols)
        text += tr(" · %1 × %2 loaded, more on scrolling").arg(m_model->rowCount()).arg(m_model->columnCount());
    // The cell picked, exactly (the table shows 4 significant digits).
    const QModelIndex current = m_view->currentIndex();
    if (current.isValid() && m_model->isLoaded(current.row(), current.column())) {
        const std::vector<int64_t> index = m_model->fullIndex(current.row(), current.column());
        text
            += tr(" · %1 = %2").arg(formatIndex(index), m_model->textOf(m_model->valueAt(current.row(), current.column()), true));
    }
    if (!m_model->fetchError().isEmpty())
        text += tr(" · reading values failed: %1").arg(m_model->fetchError());
    else if (m_model->isFetching())
        text += tr(" · reading values from %1…").arg(m_model->sourceWhere());
    else if (m_model->isRemote())
        text += tr(" · values read from %1 as shown").arg(m_model->sourceWhere());
    m_status->setText(text);
}

bool ValueTable::goTo(const QString& text, QString* error)
{
    auto fail = [error](const QString& why) {
        if (error) *error = why;
        return false;
    };
    if (!m_model->hasTensor()) return fail(tr("No tensor"));
    const opscope::Shape shape = m_model->shape();
    static const QRegularExpression number(QStringLiteral("-?\\d+"));
    std::vector<int64_t> values;
    for (auto it = number.globalMatch(text); it.hasNext();) {
        bool ok = false;
        values.push_back(it.next().captured().toLongLong(&ok));
        if (!ok) return fail(tr("Not an index: %1").arg(text));
    }
    const int nd = m_model->ndim();
    int64_t row = 0, col = 0;
    if (values.empty()) return fail(tr("Type a row, \"row, column\" or a full index"));
    if (nd > 2 && static_cast<int>(values.size()) == nd) {
        for (int i = 0; i < nd; ++i)
            if (values[static_cast<size_t>(i)] < 0 || values[static_cast<size_t>(i)] >= shape[i])
                return fail(tr("Index %1 is out of range for axis %2 (%3)")
                                .arg(values[static_cast<size_t>(i)])
                                .arg(i)
                                .arg(shape[i]));
        for (int i = 0; i < nd; ++i)
            m_model->setFixedIndex(i, values[static_cast<size_t>(i)]);
        row = m_model->rowAxis() >= 0 ? values[static_cast<size_t>(m_model->rowAxis())] : 0;
        col = m_model->columnAxis() >= 0 ? values[static_cast<size_t>(m_model->columnAxis())] : 0;
    } else if (values.size() == 2) {
        row = values[0];
        col = values[1];
    } else if (values.size() == 1) {
        row = values[0];
    } else {
        return fail(tr("Give 1, 2 or %1 numbers").arg(nd));
    }
    if (!m_model->ensureLoaded(row, col))
        return fail(tr("(%1, %2) is outside the %3 × %4 table")
                        .arg(row)
                        .arg(col)
                        .arg(m_model->totalRows())
                        .arg(m_model->totalColumns()));
    const QModelIndex index = m_model->index(static_cast<int>(row), static_cast<int>(col));
    m_view->setCurrentIndex(index);
    m_view->scrollTo(index, QAbstractItemView::PositionAtCenter);
    return true;
}

QString ValueTable::selectionText() const
{
    const QItemSelectionModel* sel = m_view->selectionModel();
    if (!sel || !sel->hasSelection()) return {};
    int top = INT_MAX, left = INT_MAX, bottom = -1, right = -1;
    for (const QItemSelectionRange& r : sel->selection()) {
        top = std::min(top, r.top());
        left = std::min(left, r.left());
        bottom = std::max(bottom, r.bottom());
        right = std::max(right, r.right());
    }
    if (bottom < top || right < left) return {};
    const int64_t cells = int64_t { bottom - top + 1 } * (right - left + 1);
    if (cells > kMaxCopyCells) bottom = top + static_cast<int>(kMaxCopyCells / (right - left + 1)) - 1;
    QString out;
    for (int r = top; r <= bottom; ++r) {
        for (int c = left; c <= right; ++c) {
            if (c > left) out += QLatin1Char('\t');
            // A remote cell not read yet stays empty (what is on screen has been read).
            if (sel->isSelected(m_model->index(r, c)) && m_model->isLoaded(r, c))
                out += m_model->textOf(m_model->valueAt(r, c), true);
        }
        out += QLatin1Char('\n');
    }
    return out;
}

void ValueTable::copySelection() const
{
    const QString text = selectionText();
    if (!text.isEmpty()) QApplication::clipboard()->setText(text);
}

} // namespace opscope::gui
