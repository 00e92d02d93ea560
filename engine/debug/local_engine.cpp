#include "debug/local_engine.h"

#include "core/error.h"

namespace opscope::debug {

LocalEngine::LocalEngine(Session& session, ModelDescription description)
    : m_session(session)
    , m_description(std::move(description))
    , m_comparison(session)
{
}

LocalEngine::~LocalEngine()
{
    bool listening = false;
    {
        std::lock_guard lock(m_mutex);
        listening = m_listener != nullptr;
    }
    if (!listening) return;
    // The session calls this object until it is idle: wait for that however long the op going on
    // takes (stopped, a run ends at the next op), asking again in case a new run slipped in.
    do
        m_session.stop();
    while (!m_session.waitUntilIdle(std::chrono::seconds(5)));
    try {
        m_session.setListener(nullptr);
    } catch (const std::exception&) { // idle was seen: nothing can refuse now, but never throw here
    }
}

void LocalEngine::setDescription(ModelDescription description)
{
    std::lock_guard lock(m_mutex);
    m_description = std::move(description);
}

ModelDescription LocalEngine::model()
{
    ModelDescription d;
    {
        std::lock_guard lock(m_mutex);
        d = m_description;
    }
    if (m_session.graph()) {
        ModelDescription ran = describeSession(m_session, d.source);
        d.graph = ran.graph;
        d.shapes = std::move(ran.shapes);
        if (d.inputs.empty()) d.inputs = std::move(ran.inputs);
        if (d.parameters.empty()) d.parameters = std::move(ran.parameters);
    }
    return d;
}

void LocalEngine::setListener(EngineListener* listener)
{
    // The session's own rule: only while idle; it waits for a finished run's last callback.
    m_session.setListener(listener ? static_cast<SessionListener*>(this) : nullptr);
    std::lock_guard lock(m_mutex);
    m_listener = listener;
}

uint64_t LocalEngine::start(StartMode mode, bool trainStep)
{
    return trainStep ? m_session.startTrainStep(mode) : m_session.start(mode);
}

std::optional<PauseReport> LocalEngine::currentPause()
{
    if (std::shared_ptr<const PauseEvent> p = m_session.currentPause()) return reportOf(*p);
    return std::nullopt;
}

std::optional<Session::TensorSummary> LocalEngine::summary(
    const std::string& tensorName, int bins, HistogramScale scale, double lo, double hi, const TensorPin& pin)
{
    if (pin.run == 0) { // the session's own answers, its pause's statistics among them
        std::optional<TensorStats> stats = m_session.statsOf(tensorName);
        std::optional<Histogram> histogram = m_session.histogramOf(tensorName, bins, scale, lo, hi);
        std::optional<Tensor> t = m_session.tensor(tensorName);
        if (!stats || !histogram || !t) return std::nullopt;
        return Session::TensorSummary { t->shape(), *stats, std::move(*histogram) };
    }
    std::optional<Tensor> t = m_session.tensorAt(tensorName, pin);
    if (!t) return std::nullopt;
    const TensorStats stats = computeStats(t->view());
    Histogram histogram = computeHistogram(t->view(), stats, bins, scale, lo, hi);
    return Session::TensorSummary { t->shape(), stats, std::move(histogram) };
}

std::optional<TensorSlice> LocalEngine::slice(const std::string& tensorName, const SliceRequest& request, const TensorPin& pin)
{
    return m_session.slice(tensorName, request, pin);
}

std::optional<Tensor> LocalEngine::fetch(const std::string& tensorName, const Progress& progress, const TensorPin& pin)
{
    std::optional<Tensor> t = m_session.tensorAt(tensorName, pin);
    if (t && progress) progress(t->bytes(), t->bytes());
    return t;
}

std::optional<Tensor> LocalEngine::fetchOutput(int index, const Progress& progress)
{
    std::lock_guard lock(m_mutex);
    if (index < 0 || static_cast<size_t>(index) >= m_outputs.size()) return std::nullopt;
    const Tensor t = m_outputs[static_cast<size_t>(index)];
    if (progress) progress(t.bytes(), t.bytes());
    return t;
}

void LocalEngine::setOptions(const SessionOptions& options)
{
    m_session.updateOptions([&](SessionOptions& o) {
        std::shared_ptr<const RecordedRun> reference = std::move(o.reference);
        o = options;
        o.reference = std::move(reference);
    });
}

void LocalEngine::setInputs(const std::vector<std::optional<Tensor>>& inputs)
{
    m_session.setInputs(mergeInputs(m_session.inputs(), inputs, m_session.inputNames().size()));
}

void LocalEngine::setComparer(Comparer comparer)
{
    std::lock_guard lock(m_mutex);
    m_comparer = std::move(comparer);
}

std::shared_ptr<const CompareOutcome> LocalEngine::compare(const CompareRequest& request)
{
    Comparer comparer;
    {
        std::lock_guard lock(m_mutex);
        comparer = m_comparer;
    }
    if (!comparer) throw UsageError("this engine's model cannot be loaded again to compare (no comparer was given)");
    const uint64_t ticket = m_comparison.begin();
    std::shared_ptr<CompareOutcome> outcome = comparer(request);
    outcome->id = ticket;
    m_comparison.finish(ticket, outcome);
    return outcome;
}

void LocalEngine::endComparison() { m_comparison.end(); }

void LocalEngine::setExplainer(Explainer explainer)
{
    std::lock_guard lock(m_mutex);
    m_explainer = std::move(explainer);
}

Explanation LocalEngine::explain(const ExplainOptions& options)
{
    Explainer explainer;
    {
        std::lock_guard lock(m_mutex);
        explainer = m_explainer;
    }
    if (!explainer) throw UsageError("this engine's model cannot be loaded again to explain (no explainer was given)");
    return explainer(m_session.inputs(), options);
}

std::optional<Tensor> LocalEngine::fetchCompared(CompareSide side, const std::string& tensorName, const Progress& progress, uint64_t comparison)
{
    std::optional<Tensor> t = m_comparison.tensor(side, tensorName, comparison);
    if (t && progress) progress(t->bytes(), t->bytes());
    return t;
}

ControlInfo LocalEngine::control()
{
    ControlInfo c;
    c.holder = 1;
    c.holderName = "this process";
    c.youHold = true;
    c.clients.push_back({ 1, "this process", "in-process", true });
    return c;
}

EngineListener* LocalEngine::listener() const
{
    std::lock_guard lock(m_mutex);
    return m_listener;
}

// The callbacks run on the session's worker, never while setListener changes the listener (the
// session's setListener waits for them), and call the listener unlocked: it may ask the engine.
void LocalEngine::runStarted(uint64_t runId)
{
    if (EngineListener* l = listener()) l->runStarted(runId);
}

void LocalEngine::setPauseStatistics(bool on)
{
    std::lock_guard lock(m_mutex);
    m_pauseStatistics = on;
}

void LocalEngine::paused(const PauseEvent& event)
{
    EngineListener* l = listener();
    if (!l) return;
    bool statistics = true;
    {
        std::lock_guard lock(m_mutex);
        statistics = m_pauseStatistics;
    }
    l->paused(reportOf(event, statistics));
}

void LocalEngine::runFinished(uint64_t runId, const std::vector<Tensor>& outputs, const RunRecord& record)
{
    {
        // Copies: with static_alloc the next run writes into the same buffers.
        std::vector<Tensor> copies;
        for (const Tensor& t : outputs)
            copies.push_back(t.copy());
        std::lock_guard lock(m_mutex);
        m_outputs = std::move(copies);
    }
    EngineListener* l = listener();
    if (!l) return;
    std::vector<OutputInfo> infos;
    for (const Tensor& t : outputs)
        infos.push_back({ t.shape(), t.dtype(), computeStats(t.view()) });
    if (std::optional<Session::TrainStepResult> step = m_session.lastTrainStep(); step && step->runId == runId)
        l->trainStep(*step);
    l->runFinished(runId, record.status == RunStatus::Stopped, infos);
}

void LocalEngine::runFailed(uint64_t runId, const std::string& error)
{
    EngineListener* l = listener();
    if (!l) return;
    if (std::optional<Session::TrainStepResult> step = m_session.lastTrainStep(); step && step->runId == runId)
        l->trainStep(*step);
    l->runFailed(runId, error);
}

} // namespace opscope::debug
