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

/// The graph view with a thin toolbar (fit, zoom, parameters, expand/collapse, export) and a find bar
/// (hidden until showFind()). Owns its GraphModel. Find walks the nodes whose name or operator contains
/// the text, selecting and centring each match in the view (which opens the blocks around it).
class GraphPanel : public QWidget {
    Q_OBJECT
public:
    /// Expand All opens block levels as deep as keeps this many boxes (dot gets slow beyond).
    static constexpr int kExpandAllLimit = 600;

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

    bool exportPngTo(const QString& path, QString* error = nullptr);
    bool exportSvgTo(const QString& path, QString* error = nullptr);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void buildToolBar();
    void buildFindBar();
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
    QString m_findText;
    QStringList m_matches;
    int m_matchIndex = -1;
    QString m_lastExportDir;
};

} // namespace opscope::gui
