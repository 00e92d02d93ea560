#include "gluon/block.h"

#include "core/error.h"
#include "exec/gradient.h"
#include "gluon/autograd.h"
#include "gluon/name_manager.h"
#include "gluon/tape.h"
#include "gluon/tracer.h"
#include "tensor/random.h"

#include <algorithm>
#include <regex>
#include <string_view>
#include <unordered_map>

namespace opscope::gluon {

namespace {
thread_local Block* t_currentBlock = nullptr;
}

void resetNaming()
{
    NameManager::resetGlobalCounters();
}

Block::Block(const std::string& hint, const std::optional<std::string>& prefix)
{
    Block* current = t_currentBlock;
    if (!current) {
        m_prefix = prefix ? *prefix : NameManager::get({}, hint) + "_";
    } else {
        std::string own;
        if (prefix) {
            own = *prefix;
        } else {
            const int k = current->m_childCounter[hint]++;
            own = hint + std::to_string(k) + "_";
        }
        m_prefix = current->m_prefix + own;
    }
    m_name = !m_prefix.empty() && m_prefix.back() == '_' ? m_prefix.substr(0, m_prefix.size() - 1) : m_prefix;
    m_params = ParameterDict(m_prefix);
}

Block::~Block() = default;

Block::NameScope::NameScope(Block* block)
    : m_previous(t_currentBlock)
    , m_prefix(std::make_unique<NameManager::PrefixScope>(block->m_prefix))
{
    t_currentBlock = block;
}

Block::NameScope::~NameScope()
{
    t_currentBlock = m_previous;
}

ParameterDict Block::collect_params(const std::string& select) const
{
    ParameterDict out(m_params.prefix());
    if (select.empty()) {
        out.update(m_params);
    } else {
        std::regex pattern;
        try {
            pattern = std::regex(select);
        } catch (const std::regex_error& e) {
            throw UsageError("collect_params: invalid regular expression '" + select + "': " + e.what());
        }
        for (const ParamPtr& p : m_params.values())
            if (std::regex_search(p->name(), pattern, std::regex_constants::match_continuous)) out.add(p);
    }
    for (const BlockPtr& c : m_children)
        out.update(c->collect_params(select));
    return out;
}

void Block::initialize(InitPtr init, bool force_reinit)
{
    collect_params().initialize(std::move(init), force_reinit);
    onParamsChanged();
}

void Block::onParamsChanged()
{
    for (const BlockPtr& c : m_children)
        c->onParamsChanged();
}

void HybridBlock::onParamsChanged()
{
    m_paramsReady = false;
    Block::onParamsChanged();
}

void Block::register_child(BlockPtr child, const std::string&)
{
    if (!child) throw UsageError("block '" + m_name + "': cannot register a null child");
    if (isHybrid() && !child->isHybrid())
        throw UsageError("children of HybridBlock '" + m_name + "' must also be HybridBlocks, but '" + child->name()
            + "' is not (use HybridSequential instead of Sequential)");
    m_children.push_back(std::move(child));
    if (auto* hb = dynamic_cast<HybridBlock*>(this)) hb->clearCache();
}

std::vector<Tensor> Block::call(const std::vector<Tensor>& inputs)
{
    std::vector<Value> in(inputs.begin(), inputs.end());
    std::vector<Value> out = forward(in);
    std::vector<Tensor> result;
    for (const Value& v : out)
        result.push_back(v.tensor());
    return result;
}

HookHandle Block::register_op_hook(OpHookCallback callback, bool monitor_all)
{
    HookHandle handle;
    for (const BlockPtr& c : m_children)
        handle.merge(c->register_op_hook(callback, monitor_all));
    return handle;
}

void Block::hybridize(
    bool active, bool static_alloc, bool static_shape, int inline_limit, int forward_bulk_size, int backward_bulk_size)
{
    ExecFlags f;
    f.static_alloc = static_alloc;
    f.static_shape = static_shape;
    f.inline_limit = inline_limit;
    f.forward_bulk_size = forward_bulk_size;
    f.backward_bulk_size = backward_bulk_size;
    hybridize(active, f);
}

void Block::hybridize(bool active, const ExecFlags& flags)
{
    if (flags.static_shape && !flags.static_alloc)
        throw UsageError("hybridize: static_shape=true requires static_alloc=true");
    for (const BlockPtr& c : m_children)
        c->hybridize(active, flags);
}

// ---------------------------------------------------------------------------------------------

ParamPtr HybridBlock::addParam(
    const std::string& name, const Shape& shape, InitPtr init, const std::string& grad_req, bool differentiable)
{
    return params().get(name, shape, std::move(init), grad_req, differentiable);
}

void HybridBlock::hybridize(bool active, const ExecFlags& flags)
{
    Block::hybridize(active, flags); // validates the flags and passes them on
    m_active = active;
    m_flags = flags;
    clearCache();
}

void HybridBlock::clearCache()
{
    m_exec.reset();
    m_training.clear();
    if (m_fixedGraph) {
        m_args.clear();
        return;
    }
    m_graph.reset();
    m_blockHooks.reset();
    m_bindInput.clear();
    m_bindParam.clear();
    m_args.clear();
    m_paramsReady = false;
}

HookHandle HybridBlock::register_op_hook(OpHookCallback callback, bool monitor_all)
{
    if (!callback) throw UsageError("register_op_hook: the callback is empty");
    const uint64_t id = m_hooks->add(std::move(callback), monitor_all);
    return HookHandleBuilder::make(m_hooks, id);
}

std::vector<Value> HybridBlock::forward(const std::vector<Value>& inputs)
{
    if (inputs.empty()) throw UsageError("block '" + name() + "': forward needs at least one input");
    if (inputs[0].isSymbol()) return traceInto(inputs);
    ActiveHooks::Scope hooks(m_hooks.get());
    return m_active || m_fixedGraph ? callCached(inputs) : callEager(inputs);
}

void HybridBlock::setFixedGraph(
    std::shared_ptr<Graph> graph, const std::vector<std::string>& inputNames, const ParameterDict& params)
{
    if (!graph || !graph->finalized())
        throw UsageError("block '" + name() + "': setFixedGraph needs a finalized graph");
    std::vector<int> bindInput(graph->variables().size(), -1);
    std::vector<ParamPtr> bindParam(graph->variables().size());
    std::string missing;
    for (size_t v = 0; v < graph->variables().size(); ++v) {
        const std::string& vname = graph->node(graph->variables()[v]).name;
        for (size_t i = 0; i < inputNames.size(); ++i)
            if (inputNames[i] == vname) bindInput[v] = static_cast<int>(i);
        if (bindInput[v] >= 0) continue;
        if (!params.contains(vname)) {
            missing += (missing.empty() ? "" : ", ") + vname;
            continue;
        }
        bindParam[v] = params.at(vname);
        this->params().add(bindParam[v]);
    }
    if (!missing.empty()) throw UsageError("block '" + name() + "': missing parameters: " + missing);
    for (const std::string& in : inputNames)
        if (!graph->findNode(in) || !graph->node(*graph->findNode(in)).isVariable())
            throw UsageError("block '" + name() + "': input '" + in + "' is not a variable of the graph");
    m_graph = std::move(graph);
    m_blockHooks.reset();
    m_bindInput = std::move(bindInput);
    m_bindParam = std::move(bindParam);
    m_fixedGraph = true;
    m_exec.reset();
    m_training.clear();
    m_args.clear();
}

std::vector<Value> HybridBlock::traceInto(const std::vector<Value>& inputs)
{
    Tracer* tracer = inputs[0].tracer();
    struct BlockGuard {
        Tracer* t;
        ~BlockGuard() { t->popBlock(); }
    };
    tracer->pushBlock(name(), m_hooks);
    BlockGuard guard { tracer };
    NameScope scope(this);
    return hybrid_forward(F(tracer), inputs);
}

void HybridBlock::buildGraph(size_t numInputs)
{
    Tracer tracer;
    std::vector<Value> in;
    for (size_t i = 0; i < numInputs; ++i)
        in.push_back(tracer.input(numInputs == 1 ? std::string("data") : "data" + std::to_string(i)));
    std::vector<Value> out = traceInto(in);
    std::vector<NodeEntry> heads;
    for (const Value& v : out) {
        if (!v.isSymbol() || v.tracer() != &tracer)
            throw UsageError("block '" + name() + "': hybrid_forward returned a value that is not part of its graph");
        heads.push_back(v.entry());
    }
    Graph& g = tracer.graph();
    g.setHeads(heads);
    const std::vector<uint32_t> newId = g.finalize();
    auto graph = std::make_shared<Graph>(std::move(g));
    m_bindInput.assign(graph->variables().size(), -1);
    m_bindParam.assign(graph->variables().size(), nullptr);
    for (size_t v = 0; v < graph->variables().size(); ++v) {
        const std::string& vname = graph->node(graph->variables()[v]).name;
        bool isInput = false;
        for (size_t i = 0; i < numInputs && !isInput; ++i) {
            if (vname == (numInputs == 1 ? std::string("data") : "data" + std::to_string(i))) {
                m_bindInput[v] = static_cast<int>(i);
                isInput = true;
            }
        }
        if (!isInput) {
            auto it = tracer.params().find(vname);
            if (it == tracer.params().end())
                throw UsageError("block '" + name() + "': unknown input to HybridBlock: " + vname);
            m_bindParam[v] = it->second;
        }
    }
    m_graph = std::move(graph);
    m_blockHooks = tracer.blockHooks(newId);
    m_exec.reset();
    m_training.clear();
    m_args.clear();
}

std::shared_ptr<const Graph> HybridBlock::trace(const std::vector<Shape>& inputShapes)
{
    buildGraph(inputShapes.size());
    infer_shape(inputShapes);
    return m_graph;
}

void HybridBlock::infer_shape(const std::vector<Shape>& inputShapes)
{
    if (!m_graph || m_bindInput.size() != m_graph->variables().size()) buildGraph(inputShapes.size());
    std::vector<Shape> varShapes(m_graph->variables().size());
    for (size_t v = 0; v < varShapes.size(); ++v) {
        if (m_bindInput[v] >= 0) {
            const size_t idx = static_cast<size_t>(m_bindInput[v]);
            if (idx >= inputShapes.size())
                throw UsageError("block '" + name() + "': expected " + std::to_string(m_bindInput[v] + 1)
                    + " inputs or more, got " + std::to_string(inputShapes.size()));
            varShapes[v] = inputShapes[idx];
        } else {
            varShapes[v] = m_bindParam[v]->shape();
        }
    }
    const auto shapes = m_graph->inferShapes(varShapes);
    for (size_t v = 0; v < varShapes.size(); ++v)
        if (m_bindParam[v]) m_bindParam[v]->setShape(shapes[m_graph->entryId(m_graph->variables()[v], 0)]);
}

void HybridBlock::finishDeferredInit(const std::vector<Value>& inputs)
{
    if (m_paramsReady) return;
    std::vector<Shape> shapes;
    for (const Value& v : inputs)
        shapes.push_back(v.tensor().shape());
    initializeFor(shapes);
}

void HybridBlock::initializeFor(const std::vector<Shape>& shapes)
{
    if (m_paramsReady) return;
    const ParameterDict all = collect_params();
    bool deferred = false;
    for (const ParamPtr& p : all.values())
        deferred = deferred || p->deferred();
    if (!deferred) {
        m_paramsReady = true;
        return;
    }
    // Infer on a graph of its own, leaving a cached graph (if any) untouched.
    auto savedGraph = m_graph;
    auto savedHooks = m_blockHooks;
    auto savedInput = m_bindInput;
    auto savedParam = m_bindParam;
    const bool hadGraph = m_graph != nullptr;
    try {
        buildGraph(shapes.size());
        infer_shape(shapes);
    } catch (const Error& e) {
        throw ShapeError(
            "block '" + name() + "': deferred initialization failed because a shape cannot be inferred: " + e.what());
    }
    if (hadGraph) {
        m_graph = savedGraph;
        m_blockHooks = savedHooks;
        m_bindInput = savedInput;
        m_bindParam = savedParam;
    } else {
        m_graph.reset();
        m_blockHooks.reset();
        m_bindInput.clear();
        m_bindParam.clear();
    }
    for (const ParamPtr& p : all.values())
        if (p->deferred()) p->finishDeferredInit();
    m_paramsReady = true;
}

std::vector<Value> HybridBlock::callEager(const std::vector<Value>& inputs)
{
    finishDeferredInit(inputs);
    NameScope scope(this);
    return hybrid_forward(F(nullptr), inputs);
}

namespace {
    // `arg` = `t`, unless it already is `t`.
    void bindArg(Tensor& arg, const Tensor& t)
    {
        if (!arg.sameAs(t)) arg = t;
    }

    // The blocks' hooks for a backward graph: `<node>_backward` reports to those of the blocks
    // that made `<node>`, as the backward of an op recorded eagerly reports to the hooks active at
    // its forward. Sums of gradients were made by no block.
    std::shared_ptr<const BlockHooks> backwardBlockHooks(
        const Graph& backward, const Graph& forward, const std::shared_ptr<const BlockHooks>& hooks)
    {
        if (!hooks) return nullptr;
        std::unordered_map<std::string_view, uint32_t> byName;
        for (uint32_t i = 0; i < forward.size(); ++i)
            if (!forward.node(i).isVariable()) byName.emplace(forward.node(i).name, i);
        auto out = std::make_shared<BlockHooks>();
        out->chains = hooks->chains;
        out->chainOf.assign(backward.size(), -1);
        constexpr std::string_view kSuffix = "_backward";
        for (uint32_t i = 0; i < backward.size(); ++i) {
            const Node& n = backward.node(i);
            if (n.isVariable() || !isGradientNode(n) || !n.name.ends_with(kSuffix)) continue;
            const auto it = byName.find(std::string_view(n.name).substr(0, n.name.size() - kSuffix.size()));
            if (it != byName.end() && it->second < hooks->chainOf.size()) out->chainOf[i] = hooks->chainOf[it->second];
        }
        return out;
    }
}

std::vector<Value> HybridBlock::callCached(const std::vector<Value>& inputs)
{
    finishDeferredInit(inputs);
    if (!m_graph) buildGraph(inputs.size());
    const Graph& g = *m_graph;
    if (m_fixedGraph && m_bindInput.size() == g.variables().size()) {
        size_t needed = 0;
        for (int b : m_bindInput)
            needed = std::max(needed, static_cast<size_t>(b + 1));
        if (inputs.size() != needed)
            throw UsageError("block '" + name() + "': expected " + std::to_string(needed) + " inputs, got "
                + std::to_string(inputs.size()));
    }
    if (!m_exec) {
        auto exec = std::make_unique<Executor>(m_graph, m_flags, m_kernelKind);
        if (!m_precisionRules.empty()) exec->setPrecision(resolvePrecision(*m_graph, m_precisionRules));
        m_exec = std::move(exec);
        m_hookObserver.setBlockHooks(m_blockHooks);
        m_exec->attach(&m_hookObserver);
        m_exec->setProfile(m_profile);
    }
    if (m_hookObserver.setHooks(ActiveHooks::current())) m_exec->refreshWants();
    const size_t nvars = g.variables().size();
    m_args.resize(nvars);
    for (size_t v = 0; v < nvars; ++v) {
        if (m_bindInput[v] >= 0) {
            const size_t idx = static_cast<size_t>(m_bindInput[v]);
            if (idx >= inputs.size())
                throw UsageError("block '" + name() + "': the graph was traced with more inputs than given");
            bindArg(m_args[v], inputs[idx].tensor());
        } else {
            bindArg(m_args[v], m_bindParam[v]->data());
        }
    }
    if (autograd::is_recording()) {
        std::vector<Tensor> args = std::move(m_args);
        m_args.clear();
        return callRecorded(args);
    }
    RunContext ctx;
    ctx.rng = &globalGenerator();
    ctx.training = autograd::is_training();
    RunResult r = m_exec->run(m_args, ctx);
    // Under static_alloc the executor holds the variables until the next run in any case, and
    // those given again (the parameters) then cost no reference counting here either.
    if (!m_flags.static_alloc)
        for (Tensor& t : m_args)
            t = Tensor();
    std::vector<Value> out;
    for (const Tensor& t : r.outputs)
        out.emplace_back(t);
    return out;
}

struct HybridBlock::TrainingProgram {
    std::shared_ptr<const Graph> forward; // the graph with the saved entries as extra heads
    std::unique_ptr<Executor> exec;
    HookObserver hooks;
    std::shared_ptr<autograd::detail::BackwardProgram> backward;
};

std::vector<Value> HybridBlock::callRecorded(const std::vector<Tensor>& args)
{
    const Graph& g = *m_graph;
    auto& tape = autograd::detail::Tape::current();
    // The gradients wanted: parameters that take one, and inputs computed from variables.
    std::vector<std::string> wrt;
    std::vector<Tensor> wrtTensors;
    std::string key;
    for (size_t v = 0; v < g.variables().size(); ++v) {
        const std::string& name = g.node(g.variables()[v]).name;
        bool wanted = false;
        if (m_bindInput[v] >= 0) {
            wanted = tape.requiresGrad(args[v]);
        } else {
            tape.noteParameter(m_bindParam[v]);
            wanted = m_bindParam[v]->grad_req() != "null" && !g.isAuxiliary(g.variables()[v]);
        }
        key += wanted ? '1' : '0';
        if (!wanted) continue;
        wrt.push_back(name);
        wrtTensors.push_back(args[v]);
    }
    std::shared_ptr<TrainingProgram>& program = m_training[key];
    if (!program) {
        program = std::make_shared<TrainingProgram>();
        program->backward = std::make_shared<autograd::detail::BackwardProgram>();
        auto& b = *program->backward;
        b.gradient = buildGradientGraph(g, wrt, true);
        b.graph = std::make_shared<Graph>(b.gradient.graph);
        // The backward pass keeps its buffers with static_alloc (its gradients are copied out); the
        // forward's saved tensors must outlive later calls of this block, so its executor allocates.
        ExecFlags backwardFlags;
        backwardFlags.static_alloc = m_flags.static_alloc;
        b.exec = std::make_unique<Executor>(b.graph, backwardFlags);
        b.hooks.setBlockHooks(backwardBlockHooks(*b.graph, g, m_blockHooks));
        b.exec->attach(&b.hooks);
        program->forward = std::make_shared<Graph>(withExtraHeads(g, b.gradient.saved));
        program->exec = std::make_unique<Executor>(program->forward);
        program->hooks.setBlockHooks(m_blockHooks); // the forward's nodes keep their ids
        program->exec->attach(&program->hooks);
    }
    const auto hooks = ActiveHooks::current();
    if (program->hooks.setHooks(hooks)) program->exec->refreshWants();
    if (program->backward->hooks.setHooks(hooks)) program->backward->exec->refreshWants();

    RunContext ctx;
    ctx.rng = &globalGenerator();
    ctx.training = autograd::is_training();
    // Same variables, same order: the graph with extra heads copies the variables first.
    const RunResult r = program->exec->run(args, ctx);
    const size_t heads = g.heads().size();
    autograd::detail::TapeEntry entry;
    entry.program = program->backward;
    entry.training = ctx.training;
    for (size_t v = 0; v < g.variables().size(); ++v)
        entry.bindings[g.node(g.variables()[v]).name] = args[v];
    const auto& saved = program->backward->gradient.savedNames;
    for (size_t i = 0; i < saved.size(); ++i)
        entry.bindings[saved[i]] = r.outputs[heads + i];
    entry.out.assign(r.outputs.begin(), r.outputs.begin() + static_cast<std::ptrdiff_t>(heads));
    entry.wrtTensors = std::move(wrtTensors);
    std::vector<Value> out(entry.out.begin(), entry.out.end());
    if (!wrt.empty()) tape.recordProgram(std::move(entry));
    return out;
}

} // namespace opscope::gluon
