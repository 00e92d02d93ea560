// Session: what other threads ask of it at a pause or between runs: tensors by name (the paused
// node's, the run record's, the model's parameters), their statistics, histograms and windows,
// the asynchronous forms of those on the query thread, the record and the run's graph.

#include "debug/session.h"

#include "core/error.h"

namespace opscope::debug {

std::optional<Tensor> Session::tensor(const std::string& tensorName) const
{
    if (std::shared_ptr<const PauseEvent> p = m_gate.currentPause())
        if (const PausedTensor* t = p->find(tensorName)) return t->values;
    std::lock_guard lock(m_recordMutex);
    if (const Tensor* t = m_record.tensor(tensorName)) return *t; // shares storage; kept tensors are never written
    if (std::optional<Tensor> p = parameter(tensorName)) return p;
    std::lock_guard inputs(m_mutex); // an input of the runs, as set now (setInputs replaces, never writes)
    for (size_t i = 0; i < m_inputNames.size() && i < m_inputs.size(); ++i)
        if (m_inputNames[i] == tensorName) return m_inputs[i];
    return std::nullopt;
}

std::optional<Tensor> Session::tensorAt(const std::string& tensorName, const TensorPin& pin) const
{
    if (pin.run == 0) return tensor(tensorName);
    const std::string where = "run " + std::to_string(pin.run);
    if (pin.pauseSequence != 0) {
        const std::shared_ptr<const PauseEvent> p = m_gate.currentPause();
        if (!p || p->runId != pin.run || p->sequence != pin.pauseSequence)
            throw MovedOnError(tensorName + ": the pause it was shown at (" + where + ", pause "
                + std::to_string(pin.pauseSequence) + ") has ended");
        if (const PausedTensor* t = p->find(tensorName)) return t->values;
        return std::nullopt;
    }
    uint64_t recordRun = 0;
    {
        std::lock_guard lock(m_recordMutex);
        recordRun = m_record.runId;
        if (recordRun == pin.run)
            if (const Tensor* t = m_record.tensor(tensorName)) return *t;
    }
    if (std::optional<Tensor> p = parameter(tensorName)) return p;
    if (recordRun != pin.run)
        throw MovedOnError(tensorName + ": the record of " + where + " it was shown from is now run " + std::to_string(recordRun) + "'s");
    return std::nullopt;
}

std::optional<Tensor> Session::parameter(const std::string& name) const
{
    // m_running is false only once a run's job has ended, its update included (the gate closes
    // before a training step's update): then nothing writes the parameters. While a run goes on,
    // only a pause holds the worker, and whilePaused keeps it there during the copy.
    std::lock_guard lock(m_mutex);
    if (!m_block) return std::nullopt;
    const gluon::ParameterDict params = m_block->collect_params();
    if (!params.contains(name)) return std::nullopt;
    const gluon::ParamPtr p = params.at(name);
    std::optional<Tensor> copy;
    auto read = [&] {
        if (p->initialized()) copy = p->data().copy();
    };
    if (!m_running)
        read();
    else if (!m_gate.whilePaused(read))
        throw UsageError("parameter '" + name + "' is read while the run is paused or once it has ended: the run may be updating it");
    return copy;
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

std::optional<TensorSlice> Session::slice(const std::string& tensorName, const SliceRequest& request, const TensorPin& pin) const
{
    std::optional<Tensor> t = tensorAt(tensorName, pin);
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

std::vector<Shape> Session::graphShapes() const
{
    std::lock_guard lock(m_mutex);
    return m_graphShapes;
}

} // namespace opscope::debug
