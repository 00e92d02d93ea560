#pragma once

#include "debug/local_engine.h"
#include "remote/remote_engine.h"
#include "debug/session.h"
#include "gui/session/model_info.h"

#include <functional>
#include <memory>
#include <optional>

#include <QElapsedTimer>
#include <QFuture>
#include <QFutureWatcher>
#include <QList>
#include <QObject>
#include <QThreadPool>

namespace opscope::gui {

class TensorSource;

/// How a run ended, for the window.
struct RunOutcome {
    quint64 runId = 0;
    bool stopped = false;
    qint64 elapsedNs = 0; ///< wall time from start to the end, pauses included
    std::vector<Tensor> outputs;
    std::shared_ptr<const debug::RunRecord> record;
};

/// The window's side of a debug session: owns the Session and its listener, loads models off the GUI
/// thread, and turns the worker's callbacks into signals on the GUI thread.
///
/// Threads: the listener (the engine's) runs on the session's worker and only posts queued calls to this object
/// (guarded by QPointer); each carries its run id, and a call for any run but the current one is
/// dropped. A run started on the Session by someone else (the Train dock's training steps) becomes
/// the current one when its start arrives, with runStarted emitted as for start(). Commands go straight to the Session, which only changes its pause gate (never blocks).
/// Model loading runs on the global thread pool; a newer load supersedes an older one still going.
class SessionController : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Paused, Finished, Stopped, Failed };
    Q_ENUM(State)

    explicit SessionController(QObject* parent = nullptr);
    ~SessionController() override;

    debug::Session& session() { return *m_session; }
    /// The engine the window drives: this process's session (LocalEngine), or a server's while
    /// attached. Runs, commands, breakpoints and the events of runs go through it; loading a model,
    /// setting inputs and training are this process's (its session).
    debug::Engine& engine() { return *m_active; }

    /// Attaches to the engine of a server (opscope-server, a program that serves its session): its
    /// model becomes the current one (no block: the weights stay there) and its runs, pauses and
    /// breakpoints are the window's; holding control, the record level is applied to it. A run of
    /// this process's own is stopped first. False with
    /// lastError() set when the server refuses or cannot be reached.
    bool attach(const remote::ConnectOptions& options);
    /// Back to this process's engine and its model; the server keeps running, with its breakpoints
    /// and its paused state.
    void detach();
    bool isAttached() const { return m_remote != nullptr; }
    /// Attached, and the server's event stream has ended (engineLost): nothing runs there any more.
    bool isEngineLost() const { return m_remote != nullptr && m_engineLost; }
    /// The graph the engine ran last (else the model's), its entry shapes, and the record of the run
    /// so far: never throw (a server gone answers with the model's graph, no shapes, an empty record;
    /// its loss is reported through engineLost).
    std::shared_ptr<const Graph> runGraph();
    std::vector<Shape> runGraphShapes();
    std::shared_ptr<const debug::RunRecord> runRecord();
    /// "this process", or the server's HOST:PORT.
    QString engineLocation() const { return QString::fromStdString(m_active->where()); }
    /// Who holds control of the engine (this process always holds its own). Kept up to date from the
    /// server's events; controlChanged follows a change.
    const debug::ControlInfo& control() const { return m_control; }
    bool hasControl() const { return !m_remote || (m_control.youHold && !m_engineLost); }
    /// Takes control of the attached engine, gives it up, hands it to another client (an id of
    /// control().clients); false with lastError() set when the server refuses (another holds it).
    /// Fetches tensors by name off this thread (a server's engine streams them; this process's has
    /// them at hand); `progress(index, received, total)` is called on the fetching thread. A tensor
    /// the engine does not have is nullopt; a failure (a server gone) also sets `error`.
    struct Fetched {
        std::vector<std::optional<Tensor>> tensors;
        QString error;
    };
    using FetchProgress = std::function<void(size_t index, size_t received, size_t total)>;
    /// Thrown by a FetchProgress to give the fetch up: it ends at once, the rest is not fetched.
    struct FetchCancelled : std::exception {
        const char* what() const noexcept override { return "the fetch was given up"; }
    };
    /// `pin`: where they were seen (a pause): none of another pause is given instead.
    QFuture<Fetched> fetchTensors(std::vector<std::string> names, FetchProgress progress = {}, debug::TensorPin pin = {});
    /// Tensors of the engine's comparison, each of run A or B, fetched as fetchTensors does.
    /// `comparison`: the CompareOutcome::id they are of (a later comparison's are refused, not given).
    QFuture<Fetched> fetchCompared(std::vector<std::pair<debug::CompareSide, std::string>> tensors, uint64_t comparison);

    /// A comparison computed by the engine (Engine::compare) off this thread: this process's on a
    /// worker (the destructor waits for it), a server's there (the engine held until it answers).
    /// Its run B becomes the reference of `diff>T` conditions from the next run.
    struct Compared {
        std::shared_ptr<const debug::CompareOutcome> outcome;
        QString error;
    };
    QFuture<Compared> compare(debug::CompareRequest request);
    /// Forgets the engine's comparison and its reference run (a server's only when this client
    /// holds control; a failure is dropped: the comparison's end is the window's).
    void endComparison();
    /// A tensor of the attached engine read in pieces where it is (statistics, histogram, windows
    /// of values) instead of fetched whole; null when not attached. The source holds the engine, so
    /// it outlives a detach (its reads then fail or answer for the server's current pause).
    /// `pin`: where the tensor was seen (a pause, a run's record); reads fail once the server has
    /// moved on from there.
    std::shared_ptr<const TensorSource> tensorSource(const std::string& name, const debug::TensorPin& pin = {}) const;
    /// The server's engine while attached (held by whoever computes there: it outlives a detach and
    /// then fails), else null.
    std::shared_ptr<debug::Engine> remoteEngine() const;
    /// Tensors of a server's pause larger than this stay there and are read as the views need
    /// them (tensorSource); smaller ones are fetched whole. Default kWholeFetchLimit.
    static constexpr qint64 kWholeFetchLimit = qint64 { 16 } << 20;
    void setWholeFetchLimit(qint64 bytes) { m_wholeFetchLimit = bytes; }
    qint64 wholeFetchLimit() const { return m_wholeFetchLimit; }

    bool takeControl();
    bool releaseControl();
    bool handOverControl(quint64 client);
    State state() const { return m_state; }
    bool isActive() const { return m_state == State::Running || m_state == State::Paused; }
    ModelInfoPtr model() const { return m_model; }
    bool isLoading() const { return m_loading; }
    quint64 currentRunId() const { return m_runId; }
    std::shared_ptr<const debug::PauseEvent> pauseEvent() const { return m_pause; }
    /// The current pause as the engine reported it: shapes, element types (and, from a server,
    /// statistics) of its tensors, in the order of the event's; null when not paused.
    std::shared_ptr<const debug::PauseReport> pauseReport() const;
    std::shared_ptr<const debug::RunRecord> lastRecord() const { return m_lastRecord; }
    const RunOutcome& lastOutcome() const { return m_lastOutcome; }
    QString lastError() const { return m_lastError; }

    /// Loads a model asynchronously: modelLoaded or modelLoadFailed follows. The current model and
    /// state stay as they are until the new model is ready; then a going run is stopped first.
    void loadModel(const QString& spec);
    /// Loads synchronously (tests, start-up); returns the error text or empty.
    QString loadModelNow(const QString& spec);

    /// Gives the model other input shapes (idle only): the graph's shapes are inferred again and
    /// modelReshaped follows; false with lastError() set when the model cannot take them.
    bool setInputShapes(const std::vector<Shape>& shapes);

    /// Starts a run with these inputs (attached: sent to the server first, an undefined one is the
    /// server's own); false with lastError() set when it cannot start.
    bool start(const std::vector<Tensor>& inputs, bool pauseAtEntry = false);
    bool continueRun();
    bool step();
    bool stepOver();
    bool stepOut();
    bool runTo(const QString& node);
    bool pause();
    /// Ends a running or paused run; its end (Stopped) arrives through runFinished.
    bool stop();
    /// Stops a run and waits (up to `timeoutMs`) until the worker is idle.
    bool stopAndWait(int timeoutMs = 5000);

    void setRecordLevel(debug::RecordLevel level);
    debug::RecordLevel recordLevel() const { return m_recordLevel; }

Q_SIGNALS:
    void loadStarted(const QString& spec);
    void modelLoaded(opscope::gui::ModelInfoPtr model);
    void modelLoadFailed(const QString& spec, const QString& error);
    void modelReshaped(opscope::gui::ModelInfoPtr model);
    void runStarted(quint64 runId);
    void paused(std::shared_ptr<const opscope::debug::PauseEvent> event);
    void resumed();
    void runFinished(const opscope::gui::RunOutcome& outcome);
    void runFailed(const QString& error);
    void stateChanged(opscope::gui::SessionController::State state);
    /// Something the user should know about a run that started anyway (a label filled with zeros).
    void note(const QString& text);
    void attached(const QString& where);
    void detached();
    /// The attached server's event stream ended: the engine is gone (`why`); the model stays shown.
    void engineLost(const QString& why);
    /// Control of the attached engine changed hands (control() says who holds it).
    void controlChanged();

private:
    class Listener;
    void adoptModel(ModelInfoPtr model);
    void setState(State s);
    void onStarted(quint64 runId);
    void onPaused(std::shared_ptr<const debug::PauseReport> report);
    void onFinished(quint64 runId, RunOutcome outcome);
    void onFailed(quint64 runId, const QString& error);
    void onEngineLost(const QString& why);
    void onControlChanged(debug::ControlInfo control);
    bool controlCall(const std::function<debug::ControlInfo()>& f);
    /// The Record menu's level given to the attached server when this client holds control.
    void applyRecordLevel();
    /// `f()` (a command), false when it was refused (lastError() says why; a server may be gone).
    bool command(const std::function<bool()>& f);
    using FetchOne = std::function<std::optional<Tensor>(debug::Engine&, size_t index, const debug::Engine::Progress&)>;
    /// `count` tensors fetched by `fetch` off this thread (a server's engine) or here.
    QFuture<Fetched> fetchWith(size_t count, FetchOne fetch, FetchProgress progress);

    std::unique_ptr<debug::Session> m_session;
    std::unique_ptr<debug::LocalEngine> m_engine; // over m_session: runs, commands, breakpoints, events
    std::unique_ptr<Listener> m_listener; // the engine's
    std::shared_ptr<remote::RemoteEngine> m_remote; // while attached (a fetch going on holds it too)
    std::unique_ptr<Listener> m_remoteListener;
    debug::Engine* m_active = nullptr; // m_engine, or m_remote while attached
    QList<QFuture<void>> m_localComparisons; // of m_engine: waited for before it goes
    /// A server's comparisons wait here, not on the shared pool the window fetches and loads on
    /// (one may take minutes); cancelled at a detach (RemoteEngine::cancelPending).
    QThreadPool m_remoteCalls;
    ModelInfoPtr m_localModel; // the model of this process's engine, while attached
    debug::ControlInfo m_control; // of the attached engine
    bool m_engineLost = false;
    quint64 m_activeListener = 1; // whose events count: 1, this process's engine; else the server's
    quint64 m_listenerIds = 1;
    State m_state = State::Idle;
    ModelInfoPtr m_model;
    QString m_notedSpec; // the model whose notes were given
    bool m_loading = false;
    quint64 m_loadGeneration = 0;
    quint64 m_runId = 0;
    quint64 m_adoptAfter = 0; // runs up to this id belong to an earlier model
    QElapsedTimer m_clock;
    std::shared_ptr<const debug::PauseEvent> m_pause; // shares m_pauseReport's storage
    std::shared_ptr<const debug::PauseReport> m_pauseReport; // the last pause's (see pauseReport())
    qint64 m_wholeFetchLimit = kWholeFetchLimit;
    std::shared_ptr<const debug::RunRecord> m_lastRecord;
    RunOutcome m_lastOutcome;
    QString m_lastError;
    debug::RecordLevel m_recordLevel = debug::RecordLevel::Tensors;
};

/// "Idle", "Running", "Paused", …
QString stateName(SessionController::State s);

} // namespace opscope::gui

Q_DECLARE_METATYPE(opscope::gui::ModelInfoPtr)
Q_DECLARE_METATYPE(opscope::gui::RunOutcome)
Q_DECLARE_METATYPE(std::shared_ptr<const opscope::debug::PauseEvent>)
