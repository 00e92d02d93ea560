#pragma once

#include "exec/executor.h"
#include "exec/precision_rules.h"
#include "gluon/f.h"
#include "gluon/name_manager.h"
#include "gluon/op_hook.h"
#include "gluon/parameter.h"
#include "gluon/value.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opscope::gluon {

class Block;
using BlockPtr = std::shared_ptr<Block>;

/// Base of all layers and models (MXNet's gluon.Block). Naming follows MXNet exactly: a block
/// made inside a parent's name_scope() gets `<parent prefix><hint><k>_` (counted per hint within
/// that parent), a top-level block without a prefix `<hint><k>_` from a process-wide count, and an
/// explicit prefix is used as given (inside a parent, after the parent's prefix).
/// A model is used by one thread at a time.
class Block : public std::enable_shared_from_this<Block> {
public:
    virtual ~Block();
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;

    const std::string& prefix() const { return m_prefix; }
    /// The prefix without its trailing '_'.
    const std::string& name() const { return m_name; }

    /// This block's own parameters (not its children's).
    ParameterDict& params() { return m_params; }
    const ParameterDict& params() const { return m_params; }
    /// This block's and all descendants' parameters; `select` is a regular expression matched
    /// against the whole name (MXNet's `re.match`, anchored at the start).
    ParameterDict collect_params(const std::string& select = {}) const;
    void initialize(InitPtr init = nullptr, bool force_reinit = false);

    /// RAII scope: blocks created while it lives become children-to-be named under this block.
    class NameScope {
    public:
        explicit NameScope(Block* block);
        ~NameScope();
        NameScope(const NameScope&) = delete;
        NameScope& operator=(const NameScope&) = delete;

    private:
        Block* m_previous;
        std::unique_ptr<NameManager::PrefixScope> m_prefix;
    };
    [[nodiscard]] NameScope name_scope() { return NameScope(this); }

    void register_child(BlockPtr child, const std::string& name = {});
    const std::vector<BlockPtr>& children() const { return m_children; }

    /// Runs the block. Values are tensors (run now) or symbols (while a parent traces a graph).
    virtual std::vector<Value> forward(const std::vector<Value>& inputs) = 0;
    Value operator()(const Value& x) { return forward({ x }).at(0); }
    std::vector<Value> operator()(const std::vector<Value>& xs) { return forward(xs); }
    /// Eager convenience: runs on tensors, returns tensors.
    std::vector<Tensor> call(const std::vector<Tensor>& inputs);
    Tensor call(const Tensor& input) { return call(std::vector<Tensor> { input }).at(0); }

    /// MXNet's register_op_hook. On a Block that is not hybrid it is passed to every child (so it
    /// reaches every HybridBlock below); a HybridBlock keeps it and reports every operator run
    /// inside its forward, hybridized or not. The handle removes the hook from all of them.
    virtual HookHandle register_op_hook(OpHookCallback callback, bool monitor_all = false);

    /// MXNet's hybridize(active, static_alloc, static_shape, inline_limit, forward_bulk_size,
    /// backward_bulk_size): a Block passes it to its children; a HybridBlock also records it.
    void hybridize(bool active = true, bool static_alloc = false, bool static_shape = false, int inline_limit = 2,
        int forward_bulk_size = 15, int backward_bulk_size = 15);
    virtual void hybridize(bool active, const ExecFlags& flags);

    virtual bool isHybrid() const { return false; }

protected:
    /// Parameters were (re)initialised: forget what was checked about them.
    virtual void onParamsChanged();
    /// `hint`: MXNet's alias (lower-case class name, or "conv", "pool", an activation's act_type).
    Block(const std::string& hint, const std::optional<std::string>& prefix);

private:
    friend class NameScope;
    std::string m_prefix;
    std::string m_name;
    ParameterDict m_params;
    std::vector<BlockPtr> m_children;
    std::map<std::string, int> m_childCounter; // MXNet's _BlockScope._counter
};

/// A block whose forward is written once against F (MXNet's HybridBlock). Not hybridized, F runs
/// operators now; hybridized, the first call traces the graph and builds a cached executor, later
/// calls run it (new input shapes re-plan it; under static_shape they are an error).
class HybridBlock : public Block {
public:
    /// The forward computation, MXNet's `hybrid_forward(F, x, *args, **params)`. Read parameters
    /// with `F.param(p)`; call children with `(*child)(x)`.
    virtual std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& inputs) = 0;

    std::vector<Value> forward(const std::vector<Value>& inputs) override;
    HookHandle register_op_hook(OpHookCallback callback, bool monitor_all = false) override;
    using Block::hybridize;
    void hybridize(bool active, const ExecFlags& flags) override;
    bool isHybrid() const override { return true; }
    void onParamsChanged() override;
    bool active() const { return m_active; }
    const ExecFlags& flags() const { return m_flags; }

    /// The traced graph (after the first hybridized call, or after trace()); null before.
    std::shared_ptr<const Graph> graph() const { return m_graph; }
    /// Traces the graph for inputs of these shapes without running it (also completes deferred
    /// parameter shapes). Returns the graph.
    std::shared_ptr<const Graph> trace(const std::vector<Shape>& inputShapes);
    /// Infers and sets the shapes of this block's parameters from input shapes (MXNet's infer_shape).
    void infer_shape(const std::vector<Shape>& inputShapes);
    /// Completes every deferred parameter initialisation for inputs of these shapes without running
    /// the block (what the first call would do), so the parameters are fixed from then on: a later
    /// input of another shape that contradicts them is a ShapeError. A cached graph is left as is.
    void initializeFor(const std::vector<Shape>& inputShapes);
    /// The executor of the cached graph (null before the first hybridized call).
    Executor* executor() const { return m_exec.get(); }
    /// Forgets the traced graph and executor (MXNet's _clear_cached_op).
    void clearCache();
    /// True for a block given a graph of its own (SymbolBlock), which is never retraced.
    bool hasFixedGraph() const { return m_fixedGraph; }
    /// Which kernels the cached graph runs (Auto: oneDNN where it pays); takes effect when the
    /// executor is next made (clears the cache).
    void set_kernel_kind(KernelKind kind)
    {
        m_kernelKind = kind;
        m_exec.reset();
    }

    /// Which nodes of the cached graph compute in float16 or bfloat16, emulated around float32
    /// kernels (exec/precision_rules.h); empty: none. Takes effect when the executor is next made
    /// (clears the executor); a rule naming nothing in the graph is a UsageError at the next call.
    void set_precision(std::vector<PrecisionRule> rules)
    {
        m_precisionRules = std::move(rules);
        m_exec.reset();
    }

    /// Times every cached-graph run from now on, the first included, into `profile` (not owned;
    /// nullptr stops): Executor::setProfile on this block's executor, now and when it is made.
    void set_profile(RunProfile* profile)
    {
        m_profile = profile;
        if (m_exec) m_exec->setProfile(profile);
    }

protected:
    using Block::Block;
    /// Registers one of this block's parameters (MXNet's `self.params.get(...)`).
    ParamPtr addParam(const std::string& name, const Shape& shape, InitPtr init = nullptr,
        const std::string& grad_req = "write", bool differentiable = true);
    /// Runs hybrid_forward on symbols inside this block's name scope (used when a parent traces).
    std::vector<Value> traceInto(const std::vector<Value>& inputs);
    /// Gives the block a graph of its own instead of tracing one (SymbolBlock): variables named in
    /// `inputNames` are the inputs, in that order; every other variable must be in `params`
    /// (UsageError naming the missing ones). The block is then always run as a cached graph.
    void setFixedGraph(
        std::shared_ptr<Graph> graph, const std::vector<std::string>& inputNames, const ParameterDict& params);

private:
    void buildGraph(size_t numInputs);
    void finishDeferredInit(const std::vector<Value>& inputs);
    std::vector<Value> callCached(const std::vector<Value>& inputs);
    /// callCached under autograd::record: the forward keeps what the backward pass reads, and the
    /// call is recorded with this block's backward program (one per set of wanted gradients).
    std::vector<Value> callRecorded(const std::vector<Tensor>& args);
    std::vector<Value> callEager(const std::vector<Value>& inputs);

    bool m_active = false;
    ExecFlags m_flags;
    KernelKind m_kernelKind = KernelKind::Auto;
    std::vector<PrecisionRule> m_precisionRules;
    RunProfile* m_profile = nullptr;
    std::shared_ptr<HookList> m_hooks = std::make_shared<HookList>();
    std::shared_ptr<Graph> m_graph;
    std::shared_ptr<const BlockHooks> m_blockHooks; // of m_graph's nodes, when traced
    std::unique_ptr<Executor> m_exec;
    HookObserver m_hookObserver;
    // For each graph variable, in graph order: the input index (>= 0) or the parameter.
    std::vector<int> m_bindInput;
    std::vector<ParamPtr> m_bindParam;
    std::vector<Tensor> m_args;
    struct TrainingProgram;
    std::map<std::string, std::shared_ptr<TrainingProgram>> m_training; // by wanted gradients
    bool m_paramsReady = false; // no deferred parameter left below this block
    bool m_fixedGraph = false; // graph given by setFixedGraph, never retraced
};

/// Returns the root of a hint's counters (tests use it to start from a fresh process's state).
void resetNaming();

} // namespace opscope::gluon
