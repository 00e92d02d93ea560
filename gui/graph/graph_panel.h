#pragma once

#include <QStringList>
#include <QWidget>

class QAction;
class QLabel;
class QLineEdit;
class QToolBar;

namespace opscope::gui {

class GraphModel;
class GraphView;

/// The graph view with a thin toolbar (fit, zoom, parameters, expand/collapse, export), a find bar
/// (hidden until showFind()) and a notice bar that says what Expand All did. Owns its GraphModel. Find
/// walks the nodes whose name or operator contains the text, selecting and centring each match in the
/// view (which opens the blocks around it).
class GraphPanel : public QWidget {
    Q_OBJECT
public:
    /// Expand All opens every block when that makes at most this many boxes (3,000 lay out in about a
    /// second off the GUI thread; dot's time grows faster than the count), else whole levels that fit.
    static constexpr int kExpandAllLimit = 5000;

    explicit GraphPanel(QWidget* parent = nullptr);
    ~GraphPanel() override;

    GraphModel* model() const { return m_model; }
    GraphView* view() const { return m_view; }
    QToolBar* toolBar() const { return m_toolBar; }
    QLineEdit* findEdit() const { return m_findEdit; }
    QAction* parametersAction() const { return m_parametersAction; }

    void showFind();
    void hideFind();
    bool isFindVisible() const;
    /// Goes to the next match of `text` (the first when the text changed); false when nothing matches.
    bool findNext(const QString& text);
    /// Goes to the previous match of the find bar's text (the last when the text changed).
    bool findPrevious();
    /// Node name of the current match ("" when none).
    QString currentFindMatch() const;
    int findMatchCount() const { return static_cast<int>(m_matches.size()); }
    /// 0-based index of the current match, -1 when none.
    int findMatchIndex() const { return m_matchIndex; }

    /// Expand All: every block open, or as many levels as kExpandAllLimit allows; the notice bar says
    /// which (and why it stopped).
    void expandAll();
    /// The notice bar's text ("" when hidden).
    QString notice() const;

    bool exportPngTo(const QString& path, QString* error = nullptr);
    bool exportSvgTo(const QString& path, QString* error = nullptr);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void buildToolBar();
    void buildFindBar();
    void buildNoticeBar();
    void showNotice(const QString& text);
    void hideNotice();
    void refreshMatches(const QString& text);
    void goToMatch(int index);
    void updateFindStatus();
    void exportWithDialog(bool svg);

    GraphModel* m_model = nullptr;
    GraphView* m_view = nullptr;
    QToolBar* m_toolBar = nullptr;
    QAction* m_parametersAction = nullptr;
    QWidget* m_findBar = nullptr;
    QLineEdit* m_findEdit = nullptr;
    QLabel* m_findStatus = nullptr;
    QWidget* m_noticeBar = nullptr;
    QLabel* m_notice = nullptr;
    QString m_findText;
    QStringList m_matches;
    int m_matchIndex = -1;
    QString m_lastExportDir;
};

} // namespace opscope::gui
