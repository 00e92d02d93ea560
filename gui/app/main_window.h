#pragma once

#include "gui/app/app_options.h"
#include "gui/remote/attach_dialog.h"
#include "gui/session/compare_runner.h"
#include "gui/session/model_replica.h"
#include "gui/session/parameter_snapshot.h"
#include "gui/session/session_controller.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include <QMainWindow>
#include <QPointer>

class QAction;
class QActionGroup;
class QDialog;
class QDockWidget;
class QLabel;
class QMenu;

namespace opscope::gui {

class BreakpointModel;
class BreakpointsPanel;
class CompareBar;
class CompareView;
class DockLayouts;
class EngineBanner;
class GraphPanel;
class InputPanel;
class RunRecordPanel;
class TensorInspector;
class ExplainPanel;
class UnitAnatomyView;
class ChannelExamplesView;
class PresentationView;
class TrainPanel;
struct InspectedTensor;

/// The opscope window: the graph in the centre, docks for the model and its inputs, breakpoints,
/// the tensor inspector, the run record and training; the debugger's actions on a toolbar, in the
/// Debug menu and on the usual keys. One SessionController drives every panel: a pause selects the node,
/// marks the graph, fills the inspector and the record.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const AppOptions& options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens the model given on the command line, else the last one, else the default sample
    /// (asynchronously; modelReady or the failure follows).
    void startUp();
    /// Opens `spec` (sample:NAME or a `-symbol.json`) off the GUI thread. A failure shows a message
    /// and keeps the current model; a run going on is stopped once the new model is ready.
    void openModel(const QString& spec);
    /// Starts a run with the inputs of the Model panel; false (and a message) when they cannot be made.
    bool startRun(bool pauseAtEntry = false);
    /// Run / Continue (F5).
    void runOrContinue();

    SessionController* controller() const { return m_controller; }
    GraphPanel* graphPanel() const { return m_graph; }
    TensorInspector* inspector() const { return m_inspector; }
    ExplainPanel* explainPanel() const { return m_explain; }
    QDockWidget* explainDock() const { return m_explainDock; }
    BreakpointModel* breakpointModel() const { return m_breakpoints; }
    BreakpointsPanel* breakpointsPanel() const { return m_breakpointsPanel; }
    RunRecordPanel* runRecordPanel() const { return m_record; }
    InputPanel* inputPanel() const { return m_inputs; }
    TrainPanel* trainPanel() const { return m_train; }
    /// The debugging and training arrangements of the docks (View menu).
    DockLayouts* layouts() const { return m_layouts; }
    QString statusText() const;
    /// The last error shown to the user (tests), and whether message boxes are shown (off in tests
    /// and scripted runs: errors then go to the status bar and stderr).
    QString lastMessage() const { return m_lastMessage; }
    void setInteractive(bool on) { m_interactive = on; }
    int exitStatus() const { return m_exitStatus; }

    enum class Action {
        Run,
        Pause,
        StepOver,
        StepInto,
        StepOut,
        RunTo,
        Stop,
        ToggleBreakpoint,
        BreakOnNan,
        Find,
        Open
    };
    QAction* action(Action a) const;

    /// Compares run A (the loaded model on the Model panel's inputs; an attached server's model on
    /// its own inputs, there) with run B off the GUI thread; the graph is coloured and the Compare
    /// dock filled when it is done. False (and a message) when the inputs cannot be made, or another
    /// client holds control of the server.
    bool startCompare(const CompareSpec& spec);
    /// The comparison shown (null when none).
    CompareResultPtr comparison() const { return m_compare; }
    CompareRunner* compareRunner() const { return m_compareRunner; }
    CompareBar* compareBar() const { return m_compareBar; }
    CompareView* compareView() const { return m_compareView; }
    /// Ends the comparison: the graph's colours, the bar and the dock's content go, and the
    /// engine forgets it (its reference run for `diff>T`); with `inEngine` false only the window's.
    void clearCompare(bool inEngine = true);

    /// How element `index` of the paused node's output `tensor` is computed (a convolution's or a
    /// fully connected layer's, paused after it), in the "How This Value Is Computed" window; false
    /// with a status-bar message saying why not otherwise. The Image tab's clicks call it.
    /// On a server, the node's tensors are fetched first: true then means the window opens when
    /// they are here (unitAnatomyShown).
    bool showUnitAnatomy(const QString& tensor, const QList<qint64>& index);
    UnitAnatomyView* unitAnatomyView() const { return m_anatomyView; }
    /// What channel `channel` of the layer whose output `tensor` is responds to, over a data set that
    /// fits the model's input, in the "What Does This Channel Respond To" window; false with a
    /// status-bar message saying why not. The Image tab's context menu calls it.
    bool showChannelExamples(const QString& tensor, int channel);
    ChannelExamplesView* channelExamplesView() const { return m_channelView; }
    /// View ▸ Presentation: the loaded model's forward pass on the Model panel's input, layer by layer,
    /// in a window of its own (gui/present/presentation_view.h), at `layer` (0-based). False with a
    /// message when there is no model of one input or its input cannot be made.
    bool openPresentation(int layer = 0);
    PresentationView* presentationView() const { return m_presentation; }

    /// Attaches the window to a server's engine (File ▸ Attach to Server…, --attach): its model is
    /// drawn, its breakpoints and pause are the window's, runs start there. The token is `token`,
    /// else read from the server's token file. False with a message when it cannot attach.
    bool attachToServer(const ServerEntry& server, const QString& token = {}, bool watchOnly = false);
    /// Back to this process's engine and model; the server keeps running, its breakpoints and pause.
    void detachFromServer();
    /// After the engine was lost: attaches to the same server again.
    bool reconnect();
    EngineBanner* engineBanner() const { return m_banner; }
    /// "Fetching … from HOST:PORT" while paused tensors are streamed from a server; empty otherwise.
    QString fetchText() const { return m_fetchText; }
    bool isFetching() const { return m_fetching; }

    /// Saves the window as a PNG (the --screenshot image). False with `error` set on failure.
    bool saveScreenshot(const QString& path, QString* error = nullptr);

Q_SIGNALS:
    /// A model is loaded and shown (graph laid out or about to be).
    void modelReady();
    /// After a pause, once the inspector shows the paused tensor.
    void pauseShown();
    /// The scripted part of the command line (--screenshot, --quit) is done.
    void scriptDone(int exitStatus);
    /// The "How This Value Is Computed" window shows a value's terms.
    void unitAnatomyShown();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildActions();
    void buildMenus();
    void buildDocks();
    void updateActions();
    void updateStatus();
    void showMessage(const QString& title, const QString& text);
    /// For what runs the model many times with its weights here (`what`): a copy of the server's
    /// model (model_replica.h) made off the GUI thread, then `use` with it, unless the window has
    /// detached or attached elsewhere meanwhile. False (and a status-bar message) when no copy can
    /// be made; its failure later is said in the status bar.
    /// The copy is kept in `slot` (its files stay while that user may read them again).
    bool withReplica(const QString& what, bool withInput, ModelReplica* slot, std::function<void(const ModelReplica&)> use);
    void showChannelExamples(const QString& spec, const QString& params, const QString& node, const QStringList& sets,
        int channel, ParameterSnapshot weights);
    void showPresentation(ModelInfoPtr model, const Tensor& input, int layer, ParameterSnapshot weights);
    /// The "How This Value Is Computed" window for element `idx` of node `id`'s output, from the
    /// node's inputs and, last, its output.
    bool presentUnitAnatomy(const Graph& graph, uint32_t id, std::vector<Tensor> tensors, const std::vector<int64_t>& idx);

    void onModelLoaded(ModelInfoPtr model);
    /// Shows `model`'s own graph (its fusion groups framed).
    void showModelGraph(const ModelInfo& model);
    void onModelLoadFailed(const QString& spec, const QString& error);
    void onPaused(std::shared_ptr<const debug::PauseEvent> e);
    /// The paused node's tensors in the inspector (values at hand).
    void showPausedTensors(const debug::PauseEvent& e, const QString& title, std::vector<InspectedTensor> tensors);

    // Attaching to a server (main_window_attach.cpp).
    void buildAttach(QMenu* fileMenu);
    void openAttachDialog();
    void onAttachChanged();
    void onEngineLost(const QString& why);
    void updateControlStatus();
    /// A server's pause: its tensors are fetched off the GUI thread (progress and latency in the
    /// status bar), then shown if the run is still paused there.
    void fetchPausedTensors(std::shared_ptr<const debug::PauseEvent> e, const QString& title,
        std::vector<InspectedTensor> tensors);
    /// The tensors of a pause as the inspector lists them (roles named from the run's graph).
    std::vector<InspectedTensor> pausedTensors(const debug::PauseEvent& pause);
    /// Those of `tensors` (a server's pause, in its report's order) above the fetch limit are read there.
    void markRemote(const debug::PauseReport& report, std::vector<InspectedTensor>& tensors) const;
    /// Fetch Whole of the inspector: a tensor that stayed on the server, brought here.
    void fetchWholeTensor(const QString& name);
    /// Fetches the values of `tensors` (by name; those with a source stay where they are) from the
    /// attached engine off the GUI thread; on arrival, if `stillWanted()`, `show` gets those it has
    /// (and the error of any it had not).
    void fetchIntoInspector(std::vector<InspectedTensor> tensors, std::function<bool()> stillWanted,
        std::function<void(std::vector<InspectedTensor>, const QString&)> show);
    void onRunFinished(const RunOutcome& outcome);
    void onRunFailed(const QString& error);
    void markExecuted(const debug::RunRecord& record);
    /// Hands the run's input to the Explain dock (raised, with --explain's method, when scripted).
    void explainRun();
    void syncBreakpointMarks();
    /// Shows the graph the session ran last (a training step's forward + loss + backward, or the
    /// model's) when the view shows another.
    void syncShownGraph();
    void showNodeTensors(const QString& node);
    std::vector<InspectedTensor> parameterTensorsOf(uint32_t nodeId) const;
    /// A parameter's values, from the block here (none for a model on a server).
    std::optional<Tensor> parameterValue(const std::string& name) const;
    /// A node picked while attached: its parameters and kept outputs, fetched from the server.
    void showServerNodeTensors(const QString& node, const Graph& graph, uint32_t id);

    void stepCommand(int kind);
    void runToSelected();
    void toggleBreakpointOnSelected();
    void openFileDialog();
    void exportGraph(bool svg);

    // Settings.
    void restoreWindowSettings();
    void saveModelSettings();
    void restoreModelSettings();
    /// Applies --input NAME=SOURCE; kExitOk, or (with a message) the exit status of what is wrong:
    /// an unknown input or source 2, an unreadable picture 3, a shape the model cannot take 4.
    int applyInputOptions();
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    QString modelKey() const;

    // Comparisons (main_window_compare.cpp).
    void buildCompare(QMenu* debugMenu);
    void openCompareDialog();
    void onCompareFinished(CompareResultPtr result);
    void recolourCompare();
    void showCompareFor(const QString& node);
    /// The tensors of A and B of a server's comparison, fetched, then shown (unless the comparison
    /// or the node changed meanwhile).
    void fetchCompareFor(const QString& node, const QString& title, const QStringList& names);

    // Scripting (--run, --screenshot, --quit).
    void scriptCheckpoint(bool paused);
    void finishScript(int status);

    AppOptions m_options;
    SessionController* m_controller;
    BreakpointModel* m_breakpoints;
    GraphPanel* m_graph = nullptr;
    TensorInspector* m_inspector = nullptr;
    ExplainPanel* m_explain = nullptr;
    QDockWidget* m_explainDock = nullptr;
    QDialog* m_anatomyDialog = nullptr;
    UnitAnatomyView* m_anatomyView = nullptr;
    QDialog* m_channelDialog = nullptr;
    ChannelExamplesView* m_channelView = nullptr;
    PresentationView* m_presentation = nullptr;
    // The copies of a server's model the presentation and the channel view run on (their files stay
    // while those views may load them again).
    ModelReplica m_presentReplica, m_channelReplica;
    BreakpointsPanel* m_breakpointsPanel = nullptr;
    RunRecordPanel* m_record = nullptr;
    InputPanel* m_inputs = nullptr;
    TrainPanel* m_train = nullptr;
    QLabel* m_stateLabel = nullptr;
    QLabel* m_modelLabel = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QActionGroup* m_recordGroup = nullptr;
    std::map<Action, QAction*> m_actions;
    QString m_lastMessage;
    QString m_pendingRunTo;
    QString m_status;
    bool m_interactive = true;
    bool m_firstModel = true;
    bool m_defaultStart = false; // no model given and none saved: the default sample with its breakpoint
    bool m_restoringSettings = false;
    bool m_scriptFinished = false;
    int m_exitStatus = kExitOk;
    int m_startFailure = kExitOk; // the exit status of why the last startRun() failed
    std::shared_ptr<const Graph> m_shownGraph; // the graph the graph view shows
    std::shared_ptr<const Graph> m_checkedGraph; // the session's graph last looked at, and whether it
    bool m_checkedIsTraining = false; // is a training step's
    DockLayouts* m_layouts = nullptr;
    CompareRunner* m_compareRunner = nullptr;
    CompareBar* m_compareBar = nullptr;
    CompareView* m_compareView = nullptr;
    QDockWidget* m_compareDock = nullptr;
    CompareResultPtr m_compare;
    // The tensors of a server's comparison the Compare dock shows (A, B), and the node they are of.
    std::shared_ptr<const std::pair<debug::RecordedRun, debug::RecordedRun>> m_compareFetched;
    QString m_compareNode;
    CompareSpec m_compareSpec; // the last one asked for (the dialog starts from it)
    EngineBanner* m_banner = nullptr;
    QLabel* m_engineLabel = nullptr; // where the engine runs, who holds control
    QAction* m_attachAction = nullptr;
    QAction* m_detachAction = nullptr;
    QAction* m_controlAction = nullptr;
    ServerEntry m_server; // the one attached to (or last lost), for Reconnect
    QString m_serverToken; // a typed token, kept for Reconnect (never saved)
    bool m_serverWatchOnly = false;
    QString m_fetchText;
    bool m_fetching = false;
    /// Bumped by each fetch, a detach, the engine lost: older fetches are dropped, and cancelled
    /// by their own thread when it reads it.
    std::shared_ptr<std::atomic<quint64>> m_fetchGeneration = std::make_shared<std::atomic<quint64>>(0);
};

} // namespace opscope::gui
