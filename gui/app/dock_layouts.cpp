#include "gui/app/dock_layouts.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include <QAction>
#include <QActionGroup>
#include <QDockWidget>
#include <QEvent>
#include <QKeySequence>
#include <QMainWindow>
#include <QMenu>
#include <QSettings>

namespace opscope::gui {

namespace {
// saveState's version: arrangements saved before there were two are not restored.
constexpr int kStateVersion = 3; // 3: the Explain dock

int share(int total, double fraction, int lo, int hi)
{
    return std::clamp(static_cast<int>(total * fraction), lo, hi);
}

QString kindName(DockLayouts::Kind kind)
{
    return kind == DockLayouts::Kind::Training ? QStringLiteral("training") : QStringLiteral("debugging");
}
} // namespace

DockLayouts::DockLayouts(QMainWindow* window, const Docks& docks)
    : QObject(window)
    , m_window(window)
    , m_docks(docks)
{
    // Placed now, so that the window's minimum size is the arrangement's (docks stacked where they were
    // first added would make it taller than a small screen); sized when the window's size is known.
    place(m_current);
    m_window->installEventFilter(this);
}

bool DockLayouts::eventFilter(QObject* watched, QEvent* event)
{
    // Made at the size the window is shown at (the screen's, or the one saved).
    if (watched == m_window && event->type() == QEvent::Show) arrangeOnce();
    return QObject::eventFilter(watched, event);
}

void DockLayouts::arrangeOnce()
{
    if (m_arranged) return;
    m_arranged = true;
    // A saved arrangement is restored at the size it was saved at: once the window has it.
    const QByteArray saved = std::exchange(m_savedState, {});
    if (!saved.isEmpty() && m_window->restoreState(saved, kStateVersion)) return;
    resize(m_current, m_window->size());
}

void DockLayouts::switchTo(Kind kind)
{
    if (kind == m_current) return;
    if (m_arranged) stateOf(m_current) = m_window->saveState(kStateVersion);
    m_current = kind;
    const QByteArray state = stateOf(kind);
    if (!m_arranged || state.isEmpty() || !m_window->restoreState(state, kStateVersion)) arrange(kind);
    Q_EMIT switched(kind);
}

void DockLayouts::reset()
{
    stateOf(m_current).clear();
    arrange(m_current);
}

void DockLayouts::arrange(Kind kind)
{
    m_arranged = true;
    m_savedState.clear();
    place(kind);
    resize(kind, m_window->size());
}

void DockLayouts::place(Kind kind)
{
    QMainWindow* w = m_window;
    for (QDockWidget* d :
        { m_docks.model, m_docks.breakpoints, m_docks.inspector, m_docks.record, m_docks.train, m_docks.explain }) {
        d->setFloating(false);
        w->removeDockWidget(d);
    }
    w->setCorner(Qt::TopLeftCorner, Qt::LeftDockWidgetArea);
    w->setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    w->setCorner(Qt::BottomLeftCorner, Qt::BottomDockWidgetArea);
    w->addDockWidget(Qt::LeftDockWidgetArea, m_docks.model);
    if (kind == Kind::Debugging) {
        // The tables under everything get the window's whole width; the inspector stands beside the graph.
        w->setCorner(Qt::BottomRightCorner, Qt::BottomDockWidgetArea);
        w->addDockWidget(Qt::RightDockWidgetArea, m_docks.inspector);
        w->tabifyDockWidget(m_docks.inspector, m_docks.train);
        w->tabifyDockWidget(m_docks.inspector, m_docks.explain);
        w->addDockWidget(Qt::BottomDockWidgetArea, m_docks.breakpoints);
        w->splitDockWidget(m_docks.breakpoints, m_docks.record, Qt::Horizontal);
    } else {
        // The Train dock full height on the right; the tables, tabbed, under the model and the graph.
        w->setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
        w->addDockWidget(Qt::RightDockWidgetArea, m_docks.train);
        w->tabifyDockWidget(m_docks.train, m_docks.inspector);
        w->tabifyDockWidget(m_docks.train, m_docks.explain);
        w->addDockWidget(Qt::BottomDockWidgetArea, m_docks.breakpoints);
        w->tabifyDockWidget(m_docks.breakpoints, m_docks.record);
    }
    for (QDockWidget* d :
        { m_docks.model, m_docks.breakpoints, m_docks.inspector, m_docks.record, m_docks.train, m_docks.explain })
        d->show();
    if (kind == Kind::Debugging) {
        m_docks.inspector->raise();
    } else {
        m_docks.train->raise();
        m_docks.breakpoints->raise();
    }
}

void DockLayouts::resize(Kind kind, const QSize& size)
{
    QMainWindow* w = m_window;
    const int width = size.width(), height = size.height();
    if (kind == Kind::Debugging) {
        const int left = share(width, 0.2, 250, 380);
        const int right = share(width, 0.37, 440, 760);
        const int bottom = share(height, 0.22, 150, 280);
        const int breakpoints = share(width, 0.345, 430, 660);
        w->resizeDocks({ m_docks.model, m_docks.inspector }, { left, right }, Qt::Horizontal);
        w->resizeDocks({ m_docks.breakpoints }, { bottom }, Qt::Vertical);
        w->resizeDocks({ m_docks.breakpoints, m_docks.record }, { breakpoints, width - breakpoints }, Qt::Horizontal);
    } else {
        const int left = share(width, 0.17, 270, 330);
        const int right = std::min(share(width, 0.55, 620, 1200), width - left - 300);
        const int bottom = share(height, 0.2, 140, 240);
        w->resizeDocks({ m_docks.model, m_docks.train }, { left, right }, Qt::Horizontal);
        w->resizeDocks({ m_docks.breakpoints }, { bottom }, Qt::Vertical);
    }
}

void DockLayouts::addActions(QMenu* menu)
{
    auto* group = new QActionGroup(this);
    const std::tuple<QString, Kind, QKeySequence, QString> kinds[] = {
        { tr("&Debugging Layout"), Kind::Debugging, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D),
            tr("The tensor inspector beside the graph, breakpoints and the run record below (a pause switches to "
               "it)") },
        { tr("&Training Layout"), Kind::Training, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T),
            tr("The Train dock large beside the graph (starting a training switches to it)") },
    };
    for (const auto& [text, kind, key, tip] : kinds) {
        QAction* a = menu->addAction(text, this, [this, kind = kind] { switchTo(kind); });
        a->setCheckable(true);
        a->setChecked(kind == m_current);
        a->setShortcut(key);
        a->setStatusTip(tip);
        a->setData(static_cast<int>(kind));
        group->addAction(a);
    }
    connect(this, &DockLayouts::switched, group, [group](Kind kind) {
        for (QAction* a : group->actions())
            a->setChecked(a->data().toInt() == static_cast<int>(kind));
    });
    menu->addAction(tr("&Reset Layout"), this, [this] { reset(); })
        ->setStatusTip(tr("Arrange the docks of this layout afresh for the window's size"));
}

void DockLayouts::save() const
{
    QSettings s;
    const QByteArray shown = m_window->saveState(kStateVersion);
    const Kind other = m_current == Kind::Debugging ? Kind::Training : Kind::Debugging;
    const QByteArray& otherState = other == Kind::Debugging ? m_debuggingState : m_trainingState;
    s.setValue(QStringLiteral("window/layout"), kindName(m_current));
    s.setValue(QStringLiteral("window/docks/") + kindName(m_current), shown);
    s.setValue(QStringLiteral("window/docks/") + kindName(other), otherState);
}

bool DockLayouts::restore()
{
    const QSettings s;
    const Kind kind = s.value(QStringLiteral("window/layout")).toString() == kindName(Kind::Training) ? Kind::Training
                                                                                                      : Kind::Debugging;
    const Kind other = kind == Kind::Debugging ? Kind::Training : Kind::Debugging;
    const QByteArray shown = s.value(QStringLiteral("window/docks/") + kindName(kind)).toByteArray();
    if (shown.isEmpty()) return false;
    m_current = kind;
    m_savedState = shown;
    stateOf(other) = s.value(QStringLiteral("window/docks/") + kindName(other)).toByteArray();
    if (m_arranged) {
        m_arranged = false;
        arrangeOnce();
    } else {
        place(kind); // the minimum size the arrangement has
    }
    Q_EMIT switched(kind);
    return true;
}

} // namespace opscope::gui
