#include "gluon/autograd.h"

#include "core/error.h"
#include "gluon/tape.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <unordered_map>

namespace opscope::autograd {

namespace {
thread_local bool t_recording = false;
thread_local bool t_training = false;

using GradMap = std::unordered_map<const float*, Tensor>;

void accumulate(GradMap& grads, const Tensor& target, const Tensor& g)
{
    auto [it, added] = grads.try_emplace(target.data(), g);
    if (added) return;
    if (it->second.sharesStorageWith(g)) return;
    Tensor sum = it->second.copy();
    float* s = sum.data();
    const float* a = g.data();
    for (int64_t i = 0; i < sum.size(); ++i)
        s[i] += a[i];
    it->second = sum;
}

const Tensor* find(const GradMap& grads, const Tensor& t)
{
    auto it = grads.find(t.data());
    return it == grads.end() ? nullptr : &it->second;
}

// An eager op's gradient, reported to the hooks that watched its forward as `<node>_backward`.
void backwardOp(const detail::TapeEntry& e, GradMap& grads, const detail::Tape& tape)
{
    std::vector<const Tensor*> ograds;
    bool any = false;
    for (const Tensor& o : e.out) {
        ograds.push_back(find(grads, o));
        any = any || ograds.back();
    }
    if (!any) return;
    if (!e.def->backward) throw GraphError("gradient: node '" + e.node + "' (" + e.def->name + ") has no gradient");
    std::vector<Tensor> igrads(e.in.size());
    std::vector<Tensor*> ig;
    std::vector<bool> wanted;
    for (size_t i = 0; i < e.in.size(); ++i) {
        wanted.push_back(tape.requiresGrad(e.in[i]));
        if (wanted.back()) igrads[i] = Tensor(e.in[i].shape());
        ig.push_back(wanted.back() ? &igrads[i] : nullptr);
    }
    std::vector<const Tensor*> in, out;
    for (const Tensor& t : e.in)
        in.push_back(&t);
    for (const Tensor& t : e.out)
        out.push_back(&t);
    const std::string node = e.node + "_backward";
    const std::string op = "_backward_" + e.def->name;
    // Named as the `_backward_<Op>` graph operator names its slots.
    const auto inSlots = e.def->inputSlotNames(*e.params);
    const auto outSlots = e.def->outputSlotNames(*e.params);
    RunContext ctx;
    ctx.training = e.training;
    ctx.rng = &globalGenerator();
    if (!e.hooks.empty()) {
        std::vector<TensorView> views;
        std::vector<std::string> names;
        // The inputs of `_backward_<Op>`, as a graph reports them: the output gradients given, the
        // forward inputs, the forward outputs.
        for (size_t k = 0; k < ograds.size(); ++k)
            if (ograds[k]) {
                views.push_back(ograds[k]->view());
                names.push_back(outSlots[k] + "_grad");
            }
        for (size_t i = 0; i < e.in.size(); ++i) {
            views.push_back(e.in[i].view());
            names.push_back(inSlots[i]);
        }
        for (size_t k = 0; k < e.out.size(); ++k) {
            views.push_back(e.out[k].view());
            names.push_back("out_" + outSlots[k]);
        }
        gluon::reportEagerInputs(e.hooks, node, op, names, views);
    }
    e.def->backward(BackwardArgs { *e.params, in, out, ograds, ig, ctx });
    if (!e.hooks.empty()) {
        std::vector<TensorView> views;
        std::vector<std::string> names;
        for (size_t i = 0; i < igrads.size(); ++i)
            if (wanted[i]) {
                views.push_back(igrads[i].view());
                names.push_back(inSlots[i] + "_grad");
            }
        gluon::reportEagerOutputs(e.hooks, node, op, names, views);
    }
    for (size_t i = 0; i < igrads.size(); ++i)
        if (wanted[i]) accumulate(grads, e.in[i], igrads[i]);
}

// A hybridized block's backward graph, run by its executor (hooks attached to it).
void backwardProgram(const detail::TapeEntry& e, GradMap& grads)
{
    detail::BackwardProgram& p = *e.program;
    bool any = false;
    std::map<std::string, Tensor> bind = e.bindings;
    for (size_t h = 0; h < e.out.size(); ++h) {
        const Tensor* g = find(grads, e.out[h]);
        any = any || g;
        bind[p.gradient.headGradNames[h]] = g ? *g : Tensor::zeros(e.out[h].shape());
    }
    if (!any) return;
    std::vector<Tensor> vars;
    for (uint32_t v : p.graph->variables()) {
        auto it = bind.find(p.graph->node(v).name);
        if (it == bind.end())
            throw UsageError("autograd: no value for '" + p.graph->node(v).name + "' in the backward pass");
        vars.push_back(it->second);
    }
    RunContext ctx;
    ctx.training = e.training;
    ctx.rng = &globalGenerator();
    const RunResult r = p.exec->run(vars, ctx);
    if (r.status == RunStatus::Stopped) throw UsageError("autograd: the backward pass was stopped");
    for (size_t w = 0; w < e.wrtTensors.size(); ++w)
        accumulate(grads, e.wrtTensors[w], r.outputs[w].copy());
}
} // namespace

RecordScope::RecordScope(bool trainMode, bool recording)
    : m_prevRecording(t_recording)
    , m_prevTraining(t_training)
{
    t_recording = recording;
    t_training = trainMode;
}

RecordScope::~RecordScope()
{
    t_recording = m_prevRecording;
    t_training = m_prevTraining;
}

bool is_recording()
{
    return t_recording;
}
bool is_training()
{
    return t_training;
}

void mark_variables(
    const std::vector<Tensor>& variables, const std::vector<Tensor>& grads, const std::vector<std::string>& reqs)
{
    if (variables.size() != grads.size() || (!reqs.empty() && reqs.size() != variables.size()))
        throw UsageError("mark_variables: one gradient (and grad_req) per variable");
    for (size_t i = 0; i < variables.size(); ++i) {
        if (variables[i].shape() != grads[i].shape())
            throw ShapeError("mark_variables: variable " + std::to_string(i) + " has shape "
                + variables[i].shape().str() + " but its gradient " + grads[i].shape().str());
        detail::Tape::current().markVariable(variables[i], grads[i], reqs.empty() ? "write" : reqs[i]);
    }
}

void backward(const std::vector<Tensor>& heads, const std::vector<Tensor>& headGrads, bool retainGraph)
{
    detail::Tape& tape = detail::Tape::current();
    if (!headGrads.empty() && headGrads.size() != heads.size())
        throw UsageError("backward: one head gradient per head");
    GradMap grads;
    bool any = false;
    for (size_t h = 0; h < heads.size(); ++h) {
        if (!tape.requiresGrad(heads[h])) continue;
        any = true;
        const Tensor g = headGrads.empty() ? Tensor::ones(heads[h].shape()) : headGrads[h];
        if (g.shape() != heads[h].shape())
            throw ShapeError("backward: head " + std::to_string(h) + " has shape " + heads[h].shape().str()
                + " but its gradient " + g.shape().str());
        accumulate(grads, heads[h], g);
    }
    if (!any) throw UsageError("backward: no head was computed from a variable while recording (autograd::record)");
    const auto& entries = tape.entries();
    for (size_t i = entries.size(); i-- > 0;) {
        if (entries[i].program)
            backwardProgram(entries[i], grads);
        else
            backwardOp(entries[i], grads, tape);
    }
    for (const auto& [address, leaf] : tape.leaves()) {
        auto it = grads.find(address);
        if (leaf.req == "null") continue;
        Tensor target = leaf.param ? leaf.param->grad() : leaf.grad;
        if (!target.defined()) continue;
        if (it == grads.end()) {
            if (leaf.req == "write") target.fill(0);
            continue;
        }
        if (leaf.req == "add") {
            float* t = target.data();
            const float* g = it->second.data();
            for (int64_t k = 0; k < target.size(); ++k)
                t[k] += g[k];
        } else {
            target.copyFrom(it->second.view());
        }
    }
    if (!retainGraph) tape.clear();
}

size_t recorded_count()
{
    return detail::Tape::current().entries().size();
}
void clear_record()
{
    detail::Tape::current().reset();
}

namespace detail {

Tape& Tape::current()
{
    thread_local Tape tape;
    return tape;
}

void Tape::noteParameter(const gluon::ParamPtr& p)
{
    if (!p->initialized() || p->grad_req() == "null") return;
    const float* address = p->data().data();
    m_requires.insert(address);
    m_leaves[address] = Leaf { p->data(), Tensor(), p->grad_req(), p };
}

void Tape::markVariable(const Tensor& variable, const Tensor& grad, const std::string& req)
{
    if (req != "write" && req != "add" && req != "null")
        throw UsageError("mark_variables: grad_req '" + req + "' (expected write, add or null)");
    m_leaves[variable.data()] = Leaf { variable, grad, req, nullptr };
    if (req != "null") m_requires.insert(variable.data());
}

void Tape::recordOp(const OpDef& def, ParamsPtr params, const std::string& node, const std::vector<Tensor>& in,
    const std::vector<Tensor>& out, std::vector<gluon::OpHook> hooks)
{
    bool needed = false;
    for (const Tensor& t : in)
        needed = needed || requiresGrad(t);
    if (!needed) return;
    for (const Tensor& t : out)
        m_requires.insert(t.data());
    TapeEntry e;
    e.def = &def;
    e.params = std::move(params);
    e.node = node;
    e.in = in;
    e.out = out;
    e.hooks = std::move(hooks);
    e.training = is_training();
    m_entries.push_back(std::move(e));
}

void Tape::recordProgram(TapeEntry entry)
{
    for (const Tensor& t : entry.out)
        m_requires.insert(t.data());
    m_entries.push_back(std::move(entry));
}

void Tape::reset()
{
    m_entries.clear();
    m_requires.clear();
    m_leaves.clear();
}

void Tape::clear()
{
    m_entries.clear();
    m_requires.clear();
    // Marked variables stay marked (MXNet's attach_grad lasts); parameters are noted again when used.
    for (auto it = m_leaves.begin(); it != m_leaves.end();) {
        if (it->second.param) {
            it = m_leaves.erase(it);
        } else {
            if (it->second.req != "null") m_requires.insert(it->first);
            ++it;
        }
    }
}

} // namespace detail

} // namespace opscope::autograd
