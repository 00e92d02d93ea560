#include "gui/session/session_controller.h"

#include "compare/compare_job.h"
#include "compare/explain_job.h"
#include "core/error.h"

#include <functional>

#include <QPointer>
#include <QtConcurrent/QtConcurrent>

namespace opscope::gui {

QString stateName(SessionController::State s)
{
    switch (s) {
    case SessionController::State::Idle:
        return QStringLiteral("Idle");
    case SessionController::State::Running:
        return QStringLiteral("Running");
    case SessionController::State::Paused:
        return QStringLiteral("Paused");
    case SessionController::State::Finished:
        return QStringLiteral("Finished");
    case SessionController::State::Stopped:
        return QStringLiteral("Stopped");
    case SessionController::State::Failed:
        return QStringLiteral("Failed");
    }
    return {};
}

// Runs on the engine's thread (the session's worker): copies what it needs and posts it to the
// controller's thread.
class SessionController::Listener : public debug::EngineListener {
public:
    /// `id`: which engine it listens to (1: this process's); a call arriving when the controller
    /// drives another engine is dropped.
    Listener(SessionController* target, debug::Engine& engine, quint64 id)
        : m_target(target)
        , m_engine(engine)
        , m_id(id)
    {
    }

    void runStarted(uint64_t runId) override
    {
        post([runId](SessionController* c) { c->onStarted(runId); });
    }

    void paused(const debug::PauseReport& p) override
    {
        auto report = std::make_shared<const debug::PauseReport>(p);
        post([report](SessionController* c) { c->onPaused(report); });
    }

    void runFinished(uint64_t runId, bool stopped, const std::vector<debug::OutputInfo>& outputs) override
    {
        RunOutcome o;
        o.runId = runId;
        o.stopped = stopped;
        // The engine keeps copies (with static_alloc the next run reuses the buffers).
        try {
            for (size_t i = 0; i < outputs.size(); ++i) {
                std::optional<Tensor> t = m_engine.fetchOutput(static_cast<int>(i));
                if (!t) { // all or none: a missing one would shift the others' indices
                    o.outputs.clear();
                    break;
                }
                o.outputs.push_back(std::move(*t));
            }
            o.record = std::make_shared<const debug::RunRecord>(m_engine.record());
            // A server's engine goes on while this is asked: if another run started meanwhile, what
            // came back may be that run's (run ids only grow, so one look afterwards tells).
            if (m_engine.isRemote() && m_engine.lastRunId() != runId) {
                o.outputs.clear();
                o.record = std::make_shared<const debug::RunRecord>();
            }
        } catch (const std::exception&) { // a server gone meanwhile: its loss is reported apart
            o.outputs.clear();
            o.record = std::make_shared<const debug::RunRecord>();
        }
        post([o = std::move(o)](SessionController* c) mutable { c->onFinished(o.runId, std::move(o)); });
    }

    void runFailed(uint64_t runId, const std::string& error) override
    {
        const QString text = QString::fromStdString(error);
        post([runId, text](SessionController* c) { c->onFailed(runId, text); });
    }

    void controlChanged(const debug::ControlInfo& control) override
    {
        post([control](SessionController* c) { c->onControlChanged(control); });
    }

    void disconnected(const std::string& why) override
    {
        const QString text = QString::fromStdString(why);
        post([text](SessionController* c) { c->onEngineLost(text); });
    }

private:
    void post(std::function<void(SessionController*)> f)
    {
        // The controller joins the worker before it dies, so it exists here; a queued call to a
        // deleted receiver is discarded by Qt, and the QPointer checks once more on arrival.
        QPointer<SessionController> target = m_target;
        QMetaObject::invokeMethod(
            m_target,
            [target, id = m_id, f = std::move(f)] {
                if (target && target->m_activeListener == id) f(target.data());
            },
            Qt::QueuedConnection);
    }

    SessionController* m_target;
    debug::Engine& m_engine;
    const quint64 m_id;
};

SessionController::SessionController(QObject* parent)
    : QObject(parent)
    , m_session(std::make_unique<debug::Session>())
    , m_engine(std::make_unique<debug::LocalEngine>(*m_session))
    , m_listener(std::make_unique<Listener>(this, *m_engine, 1))
    , m_active(m_engine.get())
{
    m_engine->setPauseStatistics(false); // the window computes what it shows, on demand
    m_engine->setListener(m_listener.get());
    qRegisterMetaType<ModelInfoPtr>();
    qRegisterMetaType<RunOutcome>();
    qRegisterMetaType<std::shared_ptr<const debug::PauseEvent>>();
    setRecordLevel(m_recordLevel);
}

SessionController::~SessionController()
{
    // Ends a paused or running run and joins the worker before the listener goes.
    if (m_remote) {
        m_remote->setListener(nullptr);
        m_remote->cancelPending(); // a comparison or explanation there ends now, not when the server answers
    }
    m_remote.reset();
    m_session->stop();
    for (QFuture<void>& f : m_localComparisons)
        f.waitForFinished(); // they run m_engine's comparer
    m_engine.reset();
    m_session.reset();
}

void SessionController::setState(State s)
{
    if (s == m_state) return;
    m_state = s;
    Q_EMIT stateChanged(s);
}

namespace {
struct LoadResult {
    ModelInfoPtr model;
    QString error;
};
} // namespace

void SessionController::loadModel(const QString& spec)
{
    const quint64 generation = ++m_loadGeneration;
    m_loading = true;
    Q_EMIT loadStarted(spec);
    auto* watcher = new QFutureWatcher<LoadResult>(this);
    connect(watcher, &QFutureWatcher<LoadResult>::finished, this, [this, watcher, generation, spec] {
        watcher->deleteLater();
        if (generation != m_loadGeneration) return; // a newer load supersedes this one
        m_loading = false;
        const LoadResult r = watcher->result();
        if (!r.model) {
            m_lastError = r.error;
            Q_EMIT modelLoadFailed(spec, r.error);
            return;
        }
        adoptModel(r.model);
    });
    watcher->setFuture(QtConcurrent::run([spec]() -> LoadResult {
        try {
            return { loadModelInfo(spec), {} };
        } catch (const std::exception& e) {
            return { nullptr, QString::fromStdString(e.what()) };
        }
    }));
}

QString SessionController::loadModelNow(const QString& spec)
{
    ++m_loadGeneration;
    m_loading = false;
    try {
        adoptModel(loadModelInfo(spec));
        return {};
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        Q_EMIT modelLoadFailed(spec, m_lastError);
        return m_lastError;
    }
}

void SessionController::adoptModel(ModelInfoPtr model)
{
    if (m_remote) detach();
    if (isActive() || m_session->isRunning()) stopAndWait();
    try {
        m_session->load(model->block, load::blockInputNames(model->loaded()));
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        Q_EMIT modelLoadFailed(model->spec, m_lastError);
        return;
    }
    // A comparison's run A is the model loaded again from where it came from.
    m_engine->endComparison();
    m_engine->setComparer(debug::comparerFor(model->spec.toStdString(), model->paramsFile.toStdString()));
    // Engine::explain here: the model's own weights (the Explain dock gives the window's, trained or not).
    m_engine->setExplainer(debug::explainerFor(model->spec.toStdString(), model->paramsFile.toStdString()));
    m_model = std::move(model);
    m_pause.reset();
    m_pauseReport.reset(); // its tensors, with a local engine, share the run's storage
    m_lastRecord.reset();
    m_lastOutcome = {};
    m_runId = 0;
    m_adoptAfter = m_session->lastRunId(); // events of earlier runs still queued are not adopted
    setState(State::Idle);
    Q_EMIT modelLoaded(m_model);
}

bool SessionController::setInputShapes(const std::vector<Shape>& shapes)
{
    if (m_remote) {
        m_lastError = QStringLiteral("the model runs on %1 with the inputs it has there").arg(engineLocation());
        return false;
    }
    if (!m_model || m_session->isRunning()) {
        m_lastError = m_model ? QStringLiteral("a run is going on") : QStringLiteral("no model loaded");
        return false;
    }
    bool known = true;
    for (const Shape& s : shapes)
        known = known && s.known();
    if (!known || shapes.size() != m_model->inputNames.size() || shapes == m_model->inputShapes) return known;
    try {
        ModelInfoPtr reshaped = withInputShapes(*m_model, shapes);
        // An ONNX model is built for its inputs' shapes: the session runs the new block.
        if (reshaped->block != m_model->block)
            m_session->load(reshaped->block, load::blockInputNames(reshaped->loaded()));
        m_model = std::move(reshaped);
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        return false;
    }
    Q_EMIT modelReshaped(m_model);
    return true;
}

bool SessionController::start(const std::vector<Tensor>& inputs, bool pauseAtEntry)
{
    if (!m_model) {
        m_lastError = QStringLiteral("no model loaded");
        return false;
    }
    if (!m_remote && m_session->isRunning()) {
        m_lastError = QStringLiteral("a run is going on");
        return false;
    }
    try {
        if (m_remote && m_remote->acceptsStart()) {
            // The inputs the window gives; an undefined one (and labels) the server's own.
            std::vector<std::optional<Tensor>> given;
            for (const Tensor& t : inputs)
                given.push_back(t.defined() ? std::optional<Tensor>(t) : std::nullopt);
            m_remote->setInputs(given);
        }
        if (!m_remote) {
            // Labels only a loss reads are zeros for a forward run (said once per model).
            std::vector<std::string> notes;
            m_session->setInputs(load::withLabels(m_model->loaded(), inputs, &notes));
            if (!notes.empty() && m_notedSpec != m_model->spec) {
                m_notedSpec = m_model->spec;
                QStringList lines;
                for (const std::string& n : notes)
                    lines << QString::fromStdString(n);
                Q_EMIT note(lines.join(QLatin1Char('\n')));
            }
        }
        m_pause.reset();
        m_pauseReport.reset();
        m_clock.start();
        m_runId = m_active->start(pauseAtEntry ? debug::StartMode::PauseAtEntry : debug::StartMode::Run, false);
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        return false;
    }
    setState(State::Running);
    Q_EMIT runStarted(m_runId);
    return true;
}

bool SessionController::command(const std::function<bool()>& f)
{
    bool ok = false;
    try {
        ok = f();
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        return false;
    }
    if (ok && m_state == State::Paused) {
        m_pause.reset();
        m_pauseReport.reset();
        setState(State::Running);
        Q_EMIT resumed();
    }
    return ok;
}

bool SessionController::continueRun()
{
    return command([this] { return m_active->continueRun(); });
}
bool SessionController::step()
{
    return command([this] { return m_active->step(); });
}
bool SessionController::stepOver()
{
    return command([this] { return m_active->stepOver(); });
}
bool SessionController::stepOut()
{
    return command([this] { return m_active->stepOut(); });
}
bool SessionController::runTo(const QString& node)
{
    return command([&] { return m_active->runTo(node.toStdString()); });
}
bool SessionController::pause()
{
    try {
        return m_active->pause();
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        return false;
    }
}
bool SessionController::stop()
{
    try {
        return m_active->stop();
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        return false;
    }
}

bool SessionController::stopAndWait(int timeoutMs)
{
    if (m_remote) return stop(); // the server's run ends there; its end comes as an event
    m_engine->stop();
    return m_session->waitUntilIdle(std::chrono::milliseconds(timeoutMs));
}

void SessionController::setRecordLevel(debug::RecordLevel level)
{
    m_recordLevel = level;
    try {
        debug::SessionOptions o = m_active->options();
        o.record = level;
        m_active->setOptions(o);
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
    }
}

bool SessionController::attach(const remote::ConnectOptions& options)
{
    std::unique_ptr<remote::RemoteEngine> engine;
    ModelInfoPtr model;
    try {
        engine = std::make_unique<remote::RemoteEngine>(options);
        model = remoteModelInfo(engine->model(), QString::fromStdString(options.address));
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        return false;
    }
    if (m_remote) detach();
    if (isActive() || m_session->isRunning()) stopAndWait();
    // A model still loading here is superseded: the attach came later.
    ++m_loadGeneration;
    m_loading = false;
    m_localModel = m_model;
    m_engine->endComparison(); // the window's comparison ends with the model it was of
    m_remote = std::move(engine);
    m_engineLost = false;
    m_active = m_remote.get();
    m_model = std::move(model);
    m_lastRecord.reset();
    m_lastOutcome = {};
    m_pause.reset();
    m_pauseReport.reset(); // its tensors, with a local engine, share the run's storage
    bool running = false;
    try {
        // Subscribed first, then the state read: a run started after the read is heard from its
        // start. Runs up to the last one started are the server's past, but one going on is adopted
        // (its pause comes first on the event stream). Events reach this thread only after this
        // function returns, so the ids below are set before any is looked at.
        m_activeListener = ++m_listenerIds;
        m_remoteListener = std::make_unique<Listener>(this, *m_remote, m_activeListener);
        m_remote->setListener(m_remoteListener.get());
        const debug::Engine::RunState state = m_remote->runState();
        m_control = m_remote->control();
        if (!state.running) applyRecordLevel();
        running = state.running;
        m_runId = running ? state.lastRunId : 0;
        m_adoptAfter = state.lastRunId;
    } catch (const std::exception& e) {
        m_lastError = QString::fromStdString(e.what());
        detach();
        return false;
    }
    if (running) m_clock.start();
    setState(running ? State::Running : State::Idle);
    Q_EMIT modelLoaded(m_model);
    Q_EMIT attached(engineLocation());
    return true;
}

void SessionController::detach()
{
    if (!m_remote) return;
    try {
        m_remote->setListener(nullptr);
    } catch (const std::exception&) {
    }
    m_remote->cancelPending(); // its comparison or explanation is not wanted after the detach
    m_remote.reset(); // the client detaches: the server keeps its state
    m_control = {};
    m_remoteListener.reset();
    m_activeListener = 1;
    m_active = m_engine.get();
    m_model = std::move(m_localModel);
    m_pause.reset();
    m_pauseReport.reset(); // its tensors, with a local engine, share the run's storage
    m_lastRecord.reset();
    m_lastOutcome = {};
    m_runId = 0;
    m_adoptAfter = m_session->lastRunId();
    setState(State::Idle);
    Q_EMIT detached();
    if (m_model) Q_EMIT modelLoaded(m_model);
}

std::shared_ptr<const Graph> SessionController::runGraph()
{
    try {
        if (std::shared_ptr<const Graph> g = m_active->graph()) return g;
    } catch (const std::exception&) {
    }
    return m_model ? m_model->graph : nullptr;
}

std::vector<Shape> SessionController::runGraphShapes()
{
    try {
        return m_active->graphShapes();
    } catch (const std::exception&) {
        return {};
    }
}

std::shared_ptr<const debug::RunRecord> SessionController::runRecord()
{
    try {
        return std::make_shared<const debug::RunRecord>(m_active->record());
    } catch (const std::exception&) {
        return std::make_shared<const debug::RunRecord>();
    }
}

void SessionController::onStarted(quint64 runId)
{
    // A run this controller did not start (a training step of the Train dock): adopt it.
    if (runId <= m_runId || runId <= m_adoptAfter) return;
    m_runId = runId;
    m_pause.reset();
    m_pauseReport.reset(); // its tensors, with a local engine, share the run's storage
    m_clock.start();
    setState(State::Running);
    Q_EMIT runStarted(m_runId);
}

void SessionController::onPaused(std::shared_ptr<const debug::PauseReport> report)
{
    if (report->event.runId != m_runId) return; // from a stale run
    std::shared_ptr<const debug::PauseEvent> e(report, &report->event);
    m_pauseReport = std::move(report);
    m_pause = e;
    setState(State::Paused);
    Q_EMIT paused(e);
}

void SessionController::onFinished(quint64 runId, RunOutcome outcome)
{
    if (runId != m_runId) return;
    outcome.elapsedNs = m_clock.nsecsElapsed();
    m_pause.reset();
    m_pauseReport.reset(); // its tensors, with a local engine, share the run's storage
    m_lastRecord = outcome.record;
    m_lastOutcome = std::move(outcome);
    setState(m_lastOutcome.stopped ? State::Stopped : State::Finished);
    applyRecordLevel();
    Q_EMIT runFinished(m_lastOutcome);
}

void SessionController::onFailed(quint64 runId, const QString& error)
{
    if (runId != m_runId) return;
    m_pause.reset();
    m_pauseReport.reset(); // its tensors, with a local engine, share the run's storage
    m_lastError = error;
    try {
        m_lastRecord = std::make_shared<const debug::RunRecord>(m_active->record());
    } catch (const std::exception&) {
        m_lastRecord = std::make_shared<const debug::RunRecord>();
    }
    setState(State::Failed);
    applyRecordLevel();
    Q_EMIT runFailed(error);
}

} // namespace opscope::gui
