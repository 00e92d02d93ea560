#include "debug/session.h"

#include "core/error.h"
#include "tensor/random.h"

#include <algorithm>

namespace opscope::debug {

Session::Session(SessionListener* listener)
    : m_listener(listener)
    , m_observer(m_gate, m_breakpoints, m_recordMutex, m_record)
    , m_worker([this] { workerLoop(); })
{
}

Session::~Session()
{
    m_queries.clear();
    {
        std::lock_guard lock(m_mutex);
        m_shutdown = true;
    }
    m_gate.shutdown();
    m_cv.notify_all();
    if (m_worker.joinable()) m_worker.join();
}

void Session::setListener(SessionListener* listener)
{
    std::lock_guard lock(m_mutex);
    if (m_running) throw UsageError("debug session: cannot change the listener during a run");
    m_listener = listener;
}

void Session::load(std::shared_ptr<gluon::HybridBlock> block, std::vector<std::string> inputNames)
{
    if (!block) throw UsageError("debug session: no model given");
    std::lock_guard lock(m_mutex);
    if (m_running) throw UsageError("debug session: cannot load a model during a run");
    m_block = std::move(block);
    m_inputNames = std::move(inputNames);
    m_inputs.clear();
    m_modelChanged = true;
}

void Session::setInputs(std::vector<Tensor> inputs)
{
    std::lock_guard lock(m_mutex);
    if (m_running) throw UsageError("debug session: cannot change the inputs during a run");
    m_inputs = std::move(inputs);
}

void Session::setOptions(const SessionOptions& options)
{
    std::lock_guard lock(m_mutex);
    m_options = options;
}

SessionOptions Session::options() const
{
    std::lock_guard lock(m_mutex);
    return m_options;
}

uint64_t Session::start(StartMode mode)
{
    std::lock_guard lock(m_mutex);
    if (m_running) throw UsageError("debug session: a run is already active");
    if (!m_block) throw UsageError("debug session: no model loaded");
    if (m_inputs.size() != m_inputNames.size())
        throw UsageError("debug session: the model has " + std::to_string(m_inputNames.size()) + " inputs, "
            + std::to_string(m_inputs.size()) + " given");
    m_running = true;
    m_jobPending = true;
    m_startMode = mode;
    // The gate opens now, so a command or a stop given right after start() applies to this run.
    m_gate.beginRun();
    m_cv.notify_all();
    return ++m_lastRunId;
}

bool Session::isRunning() const
{
    std::lock_guard lock(m_mutex);
    return m_running;
}

bool Session::waitUntilIdle(std::chrono::milliseconds timeout) const
{
    std::unique_lock lock(m_mutex);
    return m_idleCv.wait_for(lock, timeout, [&] { return !m_running; });
}

bool Session::continueRun()
{
    return m_gate.post({ Command::Kind::Continue, {} });
}
bool Session::step()
{
    return m_gate.post({ Command::Kind::Step, {} });
}
bool Session::stepOver()
{
    return m_gate.post({ Command::Kind::StepOver, {} });
}
bool Session::stepOut()
{
    return m_gate.post({ Command::Kind::StepOut, {} });
}
bool Session::pause()
{
    return m_gate.post({ Command::Kind::Pause, {} });
}
bool Session::stop()
{
    return m_gate.requestStop();
}

bool Session::runTo(const std::string& node)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_graph && !m_modelChanged) {
            auto id = m_graph->findNode(node);
            if (!id || m_graph->node(*id).isVariable()) return false;
        }
    }
    return m_gate.post({ Command::Kind::RunTo, node });
}

std::optional<Tensor> Session::tensor(const std::string& tensorName) const
{
    if (std::shared_ptr<const PauseEvent> p = m_gate.currentPause())
        if (const PausedTensor* t = p->find(tensorName)) return t->values;
    std::lock_guard lock(m_recordMutex);
    if (const Tensor* t = m_record.tensor(tensorName)) return *t; // shares storage; kept tensors are never written
    return std::nullopt;
}

std::optional<TensorStats> Session::statsOf(const std::string& tensorName) const
{
    std::optional<Tensor> t = tensor(tensorName);
    if (!t) return std::nullopt;
    return computeStats(t->view());
}

std::optional<Histogram> Session::histogramOf(
    const std::string& tensorName, int bins, HistogramScale scale, double lo, double hi) const
{
    std::optional<Tensor> t = tensor(tensorName);
    if (!t) return std::nullopt;
    return computeHistogram(t->view(), computeStats(t->view()), bins, scale, lo, hi);
}

std::optional<TensorSlice> Session::slice(const std::string& tensorName, const SliceRequest& request) const
{
    std::optional<Tensor> t = tensor(tensorName);
    if (!t) return std::nullopt;
    return sliceOf(t->view(), request);
}

void Session::requestSummary(
    const std::string& tensorName, Reply<TensorSummary> reply, int bins, HistogramScale scale, double lo, double hi)
{
    m_queries.post(0, [this, tensorName, reply = std::move(reply), bins, scale, lo, hi] {
        std::optional<Tensor> t = tensor(tensorName);
        if (!t) return reply(tensorName, std::nullopt, "no tensor '" + tensorName + "' in the paused node or the run record");
        TensorSummary s;
        s.shape = t->shape();
        s.stats = computeStats(t->view());
        s.histogram = computeHistogram(t->view(), s.stats, bins, scale, lo, hi);
        reply(tensorName, std::move(s), {});
    });
}

void Session::requestSlice(const std::string& tensorName, const SliceRequest& request, Reply<TensorSlice> reply)
{
    m_queries.post(1, [this, tensorName, request, reply = std::move(reply)] {
        std::optional<Tensor> t = tensor(tensorName);
        if (!t) return reply(tensorName, std::nullopt, "no tensor '" + tensorName + "' in the paused node or the run record");
        try {
            reply(tensorName, sliceOf(t->view(), request), {});
        } catch (const Error& e) {
            reply(tensorName, std::nullopt, e.what());
        }
    });
}

RunRecord Session::record() const
{
    std::lock_guard lock(m_recordMutex);
    return m_record;
}

std::shared_ptr<const Graph> Session::graph() const
{
    std::lock_guard lock(m_mutex);
    return m_graph;
}

void Session::workerLoop()
{
    for (;;) {
        uint64_t runId = 0;
        StartMode mode = StartMode::Run;
        {
            std::unique_lock lock(m_mutex);
            m_cv.wait(lock, [&] { return m_shutdown || m_jobPending; });
            if (m_shutdown && !m_jobPending) return;
            m_jobPending = false;
            runId = m_lastRunId;
            mode = m_startMode;
        }
        runOnce(runId, mode); // ends with m_running = false
    }
}

std::vector<Tensor> Session::bindVariables(const Graph& g, const std::vector<Tensor>& inputs) const
{
    // Worker only; m_block and m_inputNames do not change while a run is active.
    const gluon::ParameterDict params = m_block->collect_params();
    std::vector<Tensor> vars;
    vars.reserve(g.variables().size());
    for (uint32_t v : g.variables()) {
        const std::string& name = g.node(v).name;
        auto in = std::find(m_inputNames.begin(), m_inputNames.end(), name);
        if (in != m_inputNames.end()) {
            vars.push_back(inputs[static_cast<size_t>(in - m_inputNames.begin())]);
        } else if (params.contains(name)) {
            vars.push_back(params.at(name)->data());
        } else {
            throw UsageError("debug session: graph variable '" + name
                + "' is neither an input nor a parameter of block '" + m_block->name() + "'");
        }
    }
    return vars;
}

void Session::runOnce(uint64_t runId, StartMode mode)
{
    SessionListener* listener = nullptr;
    std::vector<Tensor> inputs;
    SessionOptions options;
    bool modelChanged = false;
    std::shared_ptr<gluon::HybridBlock> block;
    {
        std::lock_guard lock(m_mutex);
        listener = m_listener;
        inputs = m_inputs;
        options = m_options;
        modelChanged = m_modelChanged;
        m_modelChanged = false;
        if (modelChanged) m_graph.reset(); // until this run has traced the new model
        block = m_block;
    }
    {
        std::lock_guard lock(m_recordMutex);
        m_record = RunRecord();
        m_record.runId = runId;
        m_record.setTensorBudget(options.tensorBudgetBytes);
    }
    m_breakpoints.resetHitCounts();
    if (listener) listener->runStarted(runId);

    std::string error;
    RunResult result;
    bool observed = false;
    try {
        if (!block->active()) block->hybridize();
        std::vector<Shape> shapes;
        for (const Tensor& t : inputs)
            shapes.push_back(t.shape());
        std::shared_ptr<const Graph> graph;
        if (block->hasFixedGraph()) {
            graph = block->graph();
        } else if (modelChanged || !block->graph() || shapes != m_tracedShapes) {
            graph = block->trace(shapes);
            m_tracedShapes = shapes;
        } else {
            graph = block->graph();
        }
        for (const gluon::ParamPtr& p : block->collect_params().values())
            if (p->deferred()) p->finishDeferredInit();
        if (modelChanged || !m_exec || &m_exec->graph() != graph.get()
            || m_exec->flags().static_alloc != block->flags().static_alloc
            || m_exec->flags().static_shape != block->flags().static_shape)
            m_exec = std::make_unique<Executor>(graph, block->flags());
        {
            std::lock_guard lock(m_mutex);
            m_graph = graph;
        }
        const std::vector<Tensor> vars = bindVariables(*graph, inputs);
        m_observer.beginRun(runId, *graph, options, mode, listener);
        observed = true;
        RunContext ctx;
        ctx.rng = &globalGenerator();
        m_exec->attach(&m_observer);
        try {
            result = m_exec->run(vars, ctx);
        } catch (...) {
            m_exec->detach(&m_observer);
            throw;
        }
        m_exec->detach(&m_observer);
        if (block->flags().static_alloc)
            for (Tensor& t : result.outputs)
                t = t.copy(); // the executor's buffers are overwritten by the next run
    } catch (const Error& e) {
        error = e.what();
        const std::string where = observed ? m_observer.unfinishedOp() : std::string();
        if (!where.empty() && error.find(where.substr(0, where.find(')') + 1)) == std::string::npos)
            error += " (while running " + where + ")";
    } catch (const std::exception& e) {
        error = std::string("unexpected error: ") + e.what();
    }
    m_gate.endRun();
    {
        std::lock_guard lock(m_recordMutex);
        m_record.status = result.status;
    }
    // Idle before the last callback, so a listener (or a thread it wakes) may start the next run
    // at once; that run begins when this callback returns (same worker), so m_record stays put.
    {
        std::lock_guard lock(m_mutex);
        m_running = false;
    }
    m_idleCv.notify_all();
    if (!listener) return;
    if (!error.empty())
        listener->runFailed(runId, error);
    else
        listener->runFinished(runId, result.outputs, m_record); // the worker is the only writer
}

} // namespace opscope::debug
