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
    std::unique_lock lock(m_mutex);
    // A run's last callback comes after the run is over (idle): the old listener may still be in it.
    // Wait until it returns (unless this is that callback), so the old listener can go at once.
    if (std::this_thread::get_id() != m_worker.get_id())
        m_idleCv.wait(lock, [&] { return m_finalCallbacks == 0 || m_running; });
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
    m_loss.reset();
    m_trainer.reset();
    m_label = Tensor();
    m_modelChanged = true;
}

void Session::setTraining(std::shared_ptr<gluon::HybridBlock> loss, std::shared_ptr<gluon::Trainer> trainer)
{
    std::lock_guard lock(m_mutex);
    if (m_running) throw UsageError("debug session: cannot change the training during a run");
    if (loss && !trainer) throw UsageError("debug session: a training step needs a trainer");
    m_loss = std::move(loss);
    m_trainer = m_loss ? std::move(trainer) : nullptr;
}

void Session::setLabel(Tensor label)
{
    std::lock_guard lock(m_mutex);
    if (m_running) throw UsageError("debug session: cannot change the label during a run");
    m_label = std::move(label);
}

std::optional<Session::TrainStepResult> Session::lastTrainStep() const
{
    std::lock_guard lock(m_mutex);
    return m_lastTrainStep;
}

void Session::setInputs(std::vector<Tensor> inputs)
{
    std::lock_guard lock(m_mutex);
    if (m_running) throw UsageError("debug session: cannot change the inputs during a run");
    m_inputs = std::move(inputs);
}

std::vector<Tensor> Session::inputs() const
{
    std::lock_guard lock(m_mutex);
    return m_inputs;
}

std::vector<std::string> Session::inputNames() const
{
    std::lock_guard lock(m_mutex);
    return m_inputNames;
}

void Session::setOptions(const SessionOptions& options)
{
    std::lock_guard lock(m_mutex);
    m_options = options;
}

void Session::updateOptions(const std::function<void(SessionOptions&)>& change)
{
    std::lock_guard lock(m_mutex);
    SessionOptions o = m_options;
    change(o); // may throw: then nothing changes
    m_options = std::move(o);
}

SessionOptions Session::options() const
{
    std::lock_guard lock(m_mutex);
    return m_options;
}

uint64_t Session::start(StartMode mode)
{
    return startJob(mode, Job::Forward);
}

uint64_t Session::startTrainStep(StartMode mode)
{
    return startJob(mode, Job::TrainStep);
}

uint64_t Session::startJob(StartMode mode, Job job)
{
    std::lock_guard lock(m_mutex);
    // A session being destroyed takes no new work, also from a listener that starts the next run
    // from runFinished: the destructor would otherwise never get to join the worker.
    if (m_shutdown) return 0;
    if (m_running) throw UsageError("debug session: a run is already active");
    if (!m_block) throw UsageError("debug session: no model loaded");
    if (m_inputs.size() != m_inputNames.size())
        throw UsageError("debug session: the model has " + std::to_string(m_inputNames.size()) + " inputs, "
            + std::to_string(m_inputs.size()) + " given");
    if (job == Job::TrainStep) {
        if (!m_loss) throw UsageError("debug session: no loss and trainer set for a training step (setTraining)");
        if (!m_label.defined()) throw UsageError("debug session: no label set for the training step (setLabel)");
        if (m_inputs.empty() || m_inputs[0].ndim() == 0 || m_label.ndim() == 0)
            throw UsageError("debug session: a training step needs a batch axis in its first input and its label, "
                "got " + (m_inputs.empty() ? std::string("no inputs") : m_inputs[0].shape().str()) + " and "
                + m_label.shape().str());
        if (m_inputs[0].shape()[0] != m_label.shape()[0])
            throw UsageError("debug session: the training step's batch of " + m_inputs[0].shape().str()
                + " and its label " + m_label.shape().str() + " differ in the first axis");
    }
    m_running = true;
    m_jobPending = true;
    m_startMode = mode;
    m_job = job;
    // The gate opens now, so a command or a stop given right after start() applies to this run.
    m_gate.beginRun();
    m_cv.notify_all();
    return ++m_lastRunId;
}

uint64_t Session::lastRunId() const
{
    std::lock_guard lock(m_mutex);
    return m_lastRunId;
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

void Session::workerLoop()
{
    for (;;) {
        uint64_t runId = 0;
        StartMode mode = StartMode::Run;
        Job job = Job::Forward;
        {
            std::unique_lock lock(m_mutex);
            m_cv.wait(lock, [&] { return m_shutdown || m_jobPending; });
            if (m_shutdown) {
                // A job accepted just before the shutdown is dropped, not run.
                m_jobPending = false;
                m_running = false;
                m_idleCv.notify_all();
                return;
            }
            m_jobPending = false;
            runId = m_lastRunId;
            mode = m_startMode;
            job = m_job;
        }
        runOnce(runId, mode, job); // ends with m_running = false
    }
}

std::vector<Tensor> Session::bindVariables(
    const Graph& g, const std::vector<Tensor>& inputs, const std::map<std::string, Tensor>& extra) const
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
        } else if (auto x = extra.find(name); x != extra.end()) {
            vars.push_back(x->second);
        } else if (params.contains(name)) {
            vars.push_back(params.at(name)->data());
        } else {
            throw UsageError("debug session: graph variable '" + name
                + "' is neither an input nor a parameter of block '" + m_block->name() + "'");
        }
    }
    return vars;
}

std::shared_ptr<const Graph> Session::modelGraph(
    gluon::HybridBlock& block, const std::vector<Tensor>& inputs, bool modelChanged)
{
    if (!block.active()) block.hybridize();
    std::vector<Shape> shapes;
    for (const Tensor& t : inputs)
        shapes.push_back(t.shape());
    std::shared_ptr<const Graph> graph;
    if (block.hasFixedGraph()) {
        graph = block.graph();
    } else if (modelChanged || !block.graph() || shapes != m_tracedShapes) {
        graph = block.trace(shapes);
        m_tracedShapes = shapes;
    } else {
        graph = block.graph();
    }
    for (const gluon::ParamPtr& p : block.collect_params().values())
        if (p->deferred()) p->finishDeferredInit();
    return graph;
}

void Session::prepareTrainStep(const std::shared_ptr<const Graph>& model, gluon::HybridBlock& block,
    const std::vector<Tensor>& inputs, const Tensor& label, const std::shared_ptr<gluon::HybridBlock>& loss,
    bool modelChanged)
{
    // The parameters that take a gradient, in the model's variable order.
    const gluon::ParameterDict params = block.collect_params();
    std::vector<std::string> wrt;
    for (uint32_t v : model->variables()) {
        const std::string& name = model->node(v).name;
        if (params.contains(name) && params.at(name)->grad_req() != "null" && !model->isAuxiliary(v))
            wrt.push_back(name);
    }
    if (wrt.empty()) throw UsageError("training step: no parameter of '" + block.name() + "' takes a gradient");
    std::vector<Shape> shapes;
    for (const Tensor& t : inputs)
        shapes.push_back(t.shape());
    shapes.push_back(label.shape());
    const std::pair<bool, bool> flags { block.flags().static_alloc, block.flags().static_shape };
    if (!modelChanged && m_trainExec && m_trainModelGraph == model && m_trainLoss == loss && m_trainShapes == shapes
        && m_train.wrt == wrt && m_trainFlags == flags)
        return;

    // The prediction's shape, then the loss traced on it (its output's shape is the head gradient's).
    std::vector<Shape> varShapes;
    for (uint32_t v : model->variables()) {
        const std::string& name = model->node(v).name;
        auto in = std::find(m_inputNames.begin(), m_inputNames.end(), name);
        if (in != m_inputNames.end())
            varShapes.push_back(inputs[static_cast<size_t>(in - m_inputNames.begin())].shape());
        else if (params.contains(name))
            varShapes.push_back(params.at(name)->shape());
        else
            throw UsageError("debug session: graph variable '" + name + "' is neither an input nor a parameter of block '"
                + block.name() + "'");
    }
    const std::vector<Shape> modelShapes = model->inferShapes(varShapes);
    const Shape prediction = modelShapes[model->entryId(model->heads().at(0))];
    std::shared_ptr<const Graph> lossGraph = loss->trace({ prediction, label.shape() });
    std::vector<Shape> lossVars;
    const gluon::ParameterDict lossParams = loss->collect_params();
    for (size_t k = 0; k < lossGraph->variables().size(); ++k) {
        const std::string& name = lossGraph->node(lossGraph->variables()[k]).name;
        if (k == 0)
            lossVars.push_back(prediction);
        else if (k == 1)
            lossVars.push_back(label.shape());
        else if (lossParams.contains(name))
            lossVars.push_back(lossParams.at(name)->shape());
        else
            throw UsageError("training step: the loss's variable '" + name + "' is neither an input nor a parameter");
    }
    const std::vector<Shape> lossShapes = lossGraph->inferShapes(lossVars);
    m_headGradShape = lossShapes[lossGraph->entryId(lossGraph->heads().at(0))];

    m_train = buildTrainingGraph(*model, *lossGraph, wrt);
    m_trainExec = std::make_unique<Executor>(m_train.graph, block.flags());
    m_trainModelGraph = model;
    m_trainLoss = loss;
    m_trainShapes = shapes;
    m_trainFlags = flags;
}

void Session::applyUpdate(const RunResult& result, const std::vector<std::pair<gluon::ParamPtr, Tensor>>& auxCopies,
    gluon::Trainer& trainer, TrainStepResult& step)
{
    for (const auto& [param, values] : auxCopies)
        param->data().copyFrom(values.view());
    const gluon::ParameterDict params = m_block->collect_params();
    for (size_t w = 0; w < m_train.wrt.size(); ++w) {
        const gluon::ParamPtr& p = params.at(m_train.wrt[w]);
        const Tensor& g = result.outputs.at(1 + w);
        Tensor target = p->grad();
        if (p->grad_req() == "add") {
            float* t = target.data();
            const float* a = g.data();
            for (int64_t k = 0; k < target.size(); ++k)
                t[k] += a[k];
        } else {
            target.copyFrom(g.view());
        }
    }
    trainer.step(step.batch);
    step.updated = true;
}

void Session::runOnce(uint64_t runId, StartMode mode, Job job)
{
    SessionListener* listener = nullptr;
    std::vector<Tensor> inputs;
    SessionOptions options;
    bool modelChanged = false;
    std::shared_ptr<gluon::HybridBlock> block, loss;
    std::shared_ptr<gluon::Trainer> trainer;
    Tensor label;
    {
        std::lock_guard lock(m_mutex);
        listener = m_listener;
        inputs = m_inputs;
        options = m_options;
        modelChanged = m_modelChanged;
        m_modelChanged = false;
        if (modelChanged) {
            m_graph.reset(); // until this run has traced the new model
            m_graphShapes.clear();
        }
        block = m_block;
        loss = m_loss;
        trainer = m_trainer;
        label = m_label;
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
    TrainStepResult step;
    step.runId = runId;
    std::vector<std::pair<gluon::ParamPtr, Tensor>> auxCopies;
    try {
        std::shared_ptr<const Graph> graph = modelGraph(*block, inputs, modelChanged);
        Executor* exec = nullptr;
        std::vector<Tensor> vars;
        if (job == Job::Forward) {
            if (modelChanged || !m_exec || &m_exec->graph() != graph.get()
                || m_exec->flags().static_alloc != block->flags().static_alloc
                || m_exec->flags().static_shape != block->flags().static_shape)
                m_exec = std::make_unique<Executor>(graph, block->flags());
            exec = m_exec.get();
            vars = bindVariables(*graph, inputs);
        } else {
            prepareTrainStep(graph, *block, inputs, label, loss, modelChanged);
            graph = m_train.graph;
            exec = m_trainExec.get();
            step.batch = inputs.at(0).shape()[0];
            step.parameters = m_train.wrt;
            std::map<std::string, Tensor> extra { { m_train.label, label },
                { m_train.headGrad, Tensor::ones(m_headGradShape) } };
            for (const gluon::ParamPtr& p : loss->collect_params().values())
                extra.emplace(p->name(), p->data());
            vars = bindVariables(*graph, inputs, extra);
            // Training-mode BatchNorm updates its running statistics in place: on copies, written
            // back only by a completed step.
            const gluon::ParameterDict params = block->collect_params();
            for (size_t v = 0; v < vars.size(); ++v) {
                const uint32_t id = graph->variables()[v];
                if (!graph->isAuxiliary(id) || !params.contains(graph->node(id).name)) continue;
                vars[v] = vars[v].copy();
                auxCopies.emplace_back(params.at(graph->node(id).name), vars[v]);
            }
        }
        std::vector<Shape> shapes;
        {
            std::lock_guard lock(m_mutex);
            if (graph == m_graph) shapes = m_graphShapes; // checked below against these variables
        }
        bool same = !shapes.empty();
        for (size_t v = 0; same && v < vars.size(); ++v)
            same = shapes[graph->entryId(graph->variables()[v], 0)] == vars[v].shape();
        if (!same) {
            std::vector<Shape> varShapes;
            for (const Tensor& t : vars)
                varShapes.push_back(t.shape());
            shapes = graph->inferShapes(varShapes);
        }
        {
            std::lock_guard lock(m_mutex);
            m_graph = graph;
            m_graphShapes = std::move(shapes);
        }
        m_observer.beginRun(runId, *graph, *exec, options, mode, listener);
        observed = true;
        RunContext ctx;
        ctx.rng = &globalGenerator();
        ctx.training = job == Job::TrainStep;
        exec->attach(&m_observer);
        try {
            result = exec->run(vars, ctx);
        } catch (...) {
            exec->detach(&m_observer);
            throw;
        }
        exec->detach(&m_observer);
        if (block->flags().static_alloc)
            for (Tensor& t : result.outputs)
                t = t.copy(); // the executor's buffers are overwritten by the next run
        if (job == Job::TrainStep && result.status == RunStatus::Completed) {
            for (float v : result.outputs.at(0).values())
                step.lossSum += v;
            // No stop is accepted from here on; one accepted before cancels the update.
            m_gate.endRun();
            if (m_gate.stopRequested()) {
                result.status = RunStatus::Stopped;
                result.outputs.clear();
            } else {
                applyUpdate(result, auxCopies, *trainer, step);
            }
        }
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
        if (job == Job::TrainStep) {
            step.error = error;
            step.completed = error.empty() && result.status == RunStatus::Completed;
            m_lastTrainStep = step;
        }
        if (listener) ++m_finalCallbacks;
    }
    m_idleCv.notify_all();
    if (!listener) return;
    struct Done { // also when the listener throws
        Session& s;
        ~Done()
        {
            {
                std::lock_guard lock(s.m_mutex);
                --s.m_finalCallbacks;
            }
            s.m_idleCv.notify_all();
        }
    } done { *this };
    if (!error.empty())
        listener->runFailed(runId, error);
    else
        listener->runFinished(runId, result.outputs, m_record); // the worker is the only writer
}

} // namespace opscope::debug
