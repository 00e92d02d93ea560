#include "gui/graph/graph_panel.h"

#include "gui/graph/graph_model.h"
#include "gui/graph/graph_view.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QShortcut>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace opscope::gui {

GraphPanel::GraphPanel(QWidget* parent)
    : QWidget(parent)
    , m_model(new GraphModel(this))
    , m_view(new GraphView(this))
    , m_lastExportDir(QDir::homePath())
{
    m_view->setModel(m_model);
    buildToolBar();
    buildFindBar();
    buildNoticeBar();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_toolBar);
    layout->addWidget(m_findBar);
    layout->addWidget(m_noticeBar);
    layout->addWidget(m_view, 1);

    connect(m_model, &GraphModel::graphChanged, this, [this] {
        hideNotice();
        m_findText.clear();
        m_matches.clear();
        m_matchIndex = -1;
        if (!m_findEdit->text().isEmpty()) refreshMatches(m_findEdit->text());
        updateFindStatus();
    });
    connect(m_model, &GraphModel::showParametersChanged, m_parametersAction, &QAction::setChecked);

    auto* next = new QShortcut(QKeySequence(Qt::Key_F3), this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    connect(next, &QShortcut::activated, this, [this] {
        if (!isFindVisible() || m_findEdit->text().isEmpty())
            showFind();
        else
            findNext(m_findEdit->text());
    });
    auto* previous
        = new QShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F3), this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    connect(previous, &QShortcut::activated, this, [this] {
        if (!isFindVisible() || m_findEdit->text().isEmpty())
            showFind();
        else
            findPrevious();
    });
}

GraphPanel::~GraphPanel()
{
    // The view must not outlive its model's signals while children are deleted.
    m_view->setModel(nullptr);
}

void GraphPanel::buildToolBar()
{
    m_toolBar = new QToolBar(this);
    m_toolBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_toolBar->setIconSize(QSize(14, 14));
    m_toolBar->setContentsMargins(2, 0, 2, 0);
    m_toolBar->setStyleSheet(QStringLiteral("QToolBar { border: none; spacing: 2px; padding: 1px 4px; }"
                                            "QToolButton { padding: 2px 6px; }"));
    auto add = [this](const QString& text, const QString& tip, auto&& slot) {
        QAction* action = m_toolBar->addAction(text);
        action->setToolTip(tip);
        connect(action, &QAction::triggered, this, std::forward<decltype(slot)>(slot));
        return action;
    };
    add(QStringLiteral("Fit"), QStringLiteral("Fit the whole graph in view (F)"), [this] { m_view->fitToView(); });
    add(QStringLiteral("Zoom In"), QStringLiteral("Zoom in (+)"), [this] { m_view->zoomIn(); });
    add(QStringLiteral("Zoom Out"), QStringLiteral("Zoom out (\u2212)"), [this] { m_view->zoomOut(); });
    m_toolBar->addSeparator();
    m_parametersAction
        = add(QStringLiteral("Parameters"), QStringLiteral("Show weights, biases and running statistics"),
            [this](bool on) { m_model->setShowParameters(on); });
    m_parametersAction->setCheckable(true);
    m_parametersAction->setChecked(m_model->showParameters());
    add(QStringLiteral("Expand All"),
        QStringLiteral("Open every block (whole levels up to %1 boxes on a larger graph)")
            .arg(QLocale().toString(kExpandAllLimit)),
        [this] { expandAll(); });
    add(QStringLiteral("Collapse All"), QStringLiteral("Close every block"), [this] {
        hideNotice();
        m_model->collapseAll();
    });
    m_toolBar->addSeparator();
    add(QStringLiteral("Find"), QStringLiteral("Find a node or operator (F3)"), [this] { showFind(); });
    add(QStringLiteral("Export PNG\u2026"), QStringLiteral("Save the graph as a PNG image"),
        [this] { exportWithDialog(false); });
    add(QStringLiteral("Export SVG\u2026"), QStringLiteral("Save the graph as an SVG drawing"),
        [this] { exportWithDialog(true); });
}

void GraphPanel::buildFindBar()
{
    m_findBar = new QWidget(this);
    auto* layout = new QHBoxLayout(m_findBar);
    layout->setContentsMargins(6, 3, 6, 3);
    layout->setSpacing(4);
    m_findEdit = new QLineEdit(m_findBar);
    m_findEdit->setPlaceholderText(QStringLiteral("Find node or operator"));
    m_findEdit->setClearButtonEnabled(true);
    m_findEdit->setMaximumWidth(320);
    m_findEdit->installEventFilter(this);
    auto button = [this](const QString& text, const QString& tip) {
        auto* b = new QToolButton(m_findBar);
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        return b;
    };
    QToolButton* previous = button(QStringLiteral("\u25b2"), QStringLiteral("Previous match (Shift+Enter, Shift+F3)"));
    QToolButton* next = button(QStringLiteral("\u25bc"), QStringLiteral("Next match (Enter, F3)"));
    QToolButton* close = button(QStringLiteral("\u2715"), QStringLiteral("Close (Escape)"));
    m_findStatus = new QLabel(m_findBar);
    m_findStatus->setMinimumWidth(80);
    m_findStatus->setStyleSheet(QStringLiteral("color: #6b717a;"));
    layout->addWidget(m_findEdit);
    layout->addWidget(previous);
    layout->addWidget(next);
    layout->addWidget(m_findStatus);
    layout->addStretch(1);
    layout->addWidget(close);
    m_findBar->hide();

    connect(previous, &QToolButton::clicked, this, [this] { findPrevious(); });
    connect(next, &QToolButton::clicked, this, [this] { findNext(m_findEdit->text()); });
    connect(close, &QToolButton::clicked, this, &GraphPanel::hideFind);
    connect(m_findEdit, &QLineEdit::textChanged, this, [this](const QString& text) {
        refreshMatches(text);
        updateFindStatus();
    });
}

void GraphPanel::buildNoticeBar()
{
    m_noticeBar = new QWidget(this);
    m_noticeBar->setObjectName(QStringLiteral("graphNotice"));
    m_noticeBar->setAutoFillBackground(true);
    m_noticeBar->setStyleSheet(
        QStringLiteral("#graphNotice { background: #fdf6e3; border-bottom: 1px solid #e6dcc0; }"));
    auto* layout = new QHBoxLayout(m_noticeBar);
    layout->setContentsMargins(8, 3, 4, 3);
    layout->setSpacing(6);
    m_notice = new QLabel(m_noticeBar);
    m_notice->setWordWrap(true);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* close = new QToolButton(m_noticeBar);
    close->setText(QStringLiteral("\u2715"));
    close->setToolTip(QStringLiteral("Close"));
    close->setAutoRaise(true);
    layout->addWidget(m_notice, 1);
    layout->addWidget(close, 0, Qt::AlignTop);
    m_noticeBar->hide();
    connect(close, &QToolButton::clicked, this, &GraphPanel::hideNotice);
}

void GraphPanel::showNotice(const QString& text)
{
    m_notice->setText(text);
    m_noticeBar->show();
}

void GraphPanel::hideNotice()
{
    m_notice->clear();
    m_noticeBar->hide();
}

QString GraphPanel::notice() const
{
    return m_noticeBar->isHidden() ? QString() : m_notice->text();
}

void GraphPanel::expandAll()
{
    if (!m_model->graph()) return;
    const GraphModel::ExpandResult r = m_model->expandAll(kExpandAllLimit);
    const QLocale locale;
    const QString ops = QStringLiteral("%1 ops").arg(locale.toString(r.opCount));
    if (r.complete && !r.changed)
        showNotice(QStringLiteral("Every block is already expanded (%1).").arg(ops));
    else if (r.complete)
        showNotice(QStringLiteral("Expanded every block: %1 in %2 boxes.").arg(ops, locale.toString(r.visible)));
    else
        showNotice(QStringLiteral("Graph too large to expand fully: %1 would need %2 boxes, more than the %3 laid "
                                  "out at once. Opened %4 of %5 block levels (%6 boxes); double-click a block to "
                                  "expand it.")
                       .arg(ops, locale.toString(r.fullCount), locale.toString(kExpandAllLimit))
                       .arg(r.levelsOpened)
                       .arg(r.levels)
                       .arg(locale.toString(r.visible)));
}

void GraphPanel::showFind()
{
    m_findBar->show();
    m_findEdit->setFocus(Qt::ShortcutFocusReason);
    m_findEdit->selectAll();
}

void GraphPanel::hideFind()
{
    m_findBar->hide();
    m_view->setFocus(Qt::OtherFocusReason);
}

bool GraphPanel::isFindVisible() const
{
    return !m_findBar->isHidden();
}

bool GraphPanel::findNext(const QString& text)
{
    if (m_findEdit->text() != text) {
        const QSignalBlocker blocker(m_findEdit);
        m_findEdit->setText(text);
    }
    if (text != m_findText) refreshMatches(text);
    if (m_matches.isEmpty()) {
        updateFindStatus();
        return false;
    }
    goToMatch((m_matchIndex + 1) % static_cast<int>(m_matches.size()));
    return true;
}

bool GraphPanel::findPrevious()
{
    const QString text = m_findEdit->text();
    if (text != m_findText) refreshMatches(text);
    if (m_matches.isEmpty()) {
        updateFindStatus();
        return false;
    }
    const int n = static_cast<int>(m_matches.size());
    goToMatch(m_matchIndex <= 0 ? n - 1 : m_matchIndex - 1);
    return true;
}

QString GraphPanel::currentFindMatch() const
{
    return m_matchIndex >= 0 && m_matchIndex < m_matches.size() ? m_matches[m_matchIndex] : QString();
}

bool GraphPanel::exportPngTo(const QString& path, QString* error)
{
    return m_view->exportPng(path, error);
}

bool GraphPanel::exportSvgTo(const QString& path, QString* error)
{
    return m_view->exportSvg(path, error);
}

bool GraphPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_findEdit && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Escape) {
            hideFind();
            return true;
        }
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            if (key->modifiers() & Qt::ShiftModifier)
                findPrevious();
            else
                findNext(m_findEdit->text());
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void GraphPanel::refreshMatches(const QString& text)
{
    m_findText = text;
    m_matches = m_model->find(text);
    m_matchIndex = -1;
}

void GraphPanel::goToMatch(int index)
{
    m_matchIndex = index;
    m_view->selectNode(m_matches[index], true);
    updateFindStatus();
}

void GraphPanel::updateFindStatus()
{
    const int n = static_cast<int>(m_matches.size());
    if (m_findText.isEmpty())
        m_findStatus->clear();
    else if (n == 0)
        m_findStatus->setText(QStringLiteral("No matches"));
    else if (m_matchIndex < 0)
        m_findStatus->setText(n == 1 ? QStringLiteral("1 match") : QStringLiteral("%1 matches").arg(n));
    else
        m_findStatus->setText(QStringLiteral("%1 of %2").arg(m_matchIndex + 1).arg(n));
}

void GraphPanel::exportWithDialog(bool svg)
{
    const QString suffix = svg ? QStringLiteral("svg") : QStringLiteral("png");
    QString path = QFileDialog::getSaveFileName(this,
        svg ? QStringLiteral("Export Graph as SVG") : QStringLiteral("Export Graph as PNG"),
        QDir(m_lastExportDir).filePath(QStringLiteral("graph.") + suffix),
        svg ? QStringLiteral("SVG drawing (*.svg)") : QStringLiteral("PNG image (*.png)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QLatin1Char('.') + suffix;
    m_lastExportDir = QFileInfo(path).absolutePath();
    QString error;
    const bool ok = svg ? m_view->exportSvg(path, &error) : m_view->exportPng(path, &error);
    if (!ok) QMessageBox::warning(this, QStringLiteral("Export Failed"), error);
}

} // namespace opscope::gui
