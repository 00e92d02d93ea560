#pragma once

#include <QByteArray>
#include <QObject>

class QDockWidget;
class QMainWindow;
class QMenu;
class QSize;

namespace opscope::gui {

/// The window's two arrangements of its docks, one per task. Debugging: the model on the left, the
/// tensor inspector right of the graph (the Train and Explain docks tabbed behind it), breakpoints and the run
/// record side by side under everything. Training: the Train dock in the inspector's place, full
/// height and about half the width, breakpoints and the run record tabbed under the graph.
///
/// Each arrangement keeps what the user changes in it (QMainWindow::saveState) while the other is
/// shown, and between starts (save/restore). One that was never shown is made for the window's
/// size at the time: column widths in proportion, within bounds that keep every panel usable from
/// 1280×720 to 2560×1600. GUI thread only.
class DockLayouts : public QObject {
    Q_OBJECT
public:
    enum class Kind { Debugging, Training };

    struct Docks {
        QDockWidget* model = nullptr;
        QDockWidget* breakpoints = nullptr;
        QDockWidget* inspector = nullptr;
        QDockWidget* record = nullptr;
        QDockWidget* train = nullptr;
        QDockWidget* explain = nullptr; ///< tabbed with the inspector
    };

    DockLayouts(QMainWindow* window, const Docks& docks);

    Kind current() const { return m_current; }
    /// Keeps the current arrangement and shows `kind`'s (as left, or made for the window's size).
    void switchTo(Kind kind);
    /// Makes the current arrangement afresh for the window's size (View ▸ Reset Layout).
    void reset();
    /// Adds "Debugging Layout" and "Training Layout" (checkable, one checked: the current) and
    /// "Reset Layout" to `menu`.
    void addActions(QMenu* menu);

    /// Writes the current arrangement and the other's saved state under "window/".
    void save() const;
    /// Reads what save() wrote (restored when the window is shown, at its size); false when nothing
    /// was saved.
    bool restore();

Q_SIGNALS:
    /// Another arrangement is shown.
    void switched(DockLayouts::Kind kind);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    /// When the window is first shown: the saved arrangement, or the current one sized for the window.
    void arrangeOnce();
    /// Places the docks and sizes them for the window's size.
    void arrange(Kind kind);
    /// Which dock goes in which area, split or tabbed, and which tabs are raised.
    void place(Kind kind);
    /// Dock widths and heights in proportion to `size`, within bounds.
    void resize(Kind kind, const QSize& size);
    QByteArray& stateOf(Kind kind) { return kind == Kind::Debugging ? m_debuggingState : m_trainingState; }

    QMainWindow* m_window;
    Docks m_docks;
    Kind m_current = Kind::Debugging;
    QByteArray m_debuggingState; // the arrangement not shown, as the user left it
    QByteArray m_trainingState;
    QByteArray m_savedState; // read from the settings, restored when the window is shown
    bool m_arranged = false;
};

} // namespace opscope::gui
