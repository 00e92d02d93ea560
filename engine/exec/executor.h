#pragma once

#include "exec/observer.h"
#include "exec/profile.h"
#include "graph/graph.h"
#include "ops/op.h"
#include "ops/reduced_precision.h"

#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace opscope {

class Error;

/// MXNet CachedOp flags as a typed struct (never a list of pairs), with MXNet 1.x's defaults.
struct ExecFlags {
    bool static_alloc = false; ///< keep every buffer between calls: no allocation after the first call
    bool static_shape = false; ///< also keep prepared kernels; requires static_alloc; shapes are fixed
    int inline_limit = 2; ///< MXNet: subgraphs up to this size are inlined (kept for compatibility)
    int forward_bulk_size = 15; ///< MXNet: ops bulked per engine push in forward (kept for compatibility)
    int backward_bulk_size = 15;
    /// With static_alloc: fold what no observer watches into the kernel before it, as oneDNN
    /// post-ops (MXNet's MKLDNN subgraph backend did the same): into a convolution or a fully
    /// connected layer, the chain of nodes that alone read its output (a GELU's Div and Mul both
    /// read the value before it): an inference BatchNorm
    /// (per-channel scale and shift), an add of a residual ready before it, relu, sigmoid, tanh,
    /// gelu and clip (a clip keeping NaN: after the store, or inside oneDNN's primitive on a run
    /// whose product cannot be NaN; exec/fusion_rules.h). Into ONNX's MatMul and Gemm: a bias
    /// along the last axis, a residual, relu, sigmoid, tanh, clip and the five nodes of an
    /// exported GELU (Div, Erf, Add, Mul, Mul), with the arithmetic of the nodes they replace.
    /// A node an observer wants is never fused away: its inputs and outputs exist as without fusion.
    /// Then, with fuse: a tensor only oneDNN convolutions and poolings write and read, none of
    /// them watched, stays in their layout (nChw16c, nhwc…) between them instead of being
    /// converted to plain. And float32 tensors nobody watches share buffers once dead
    /// (Executor::sharedBuffer), as MXNet's static memory plan does.
    bool fuse = true;
};

enum class RunStatus { Completed, Stopped };

struct RunResult {
    RunStatus status = RunStatus::Completed;
    std::vector<Tensor> outputs; ///< the heads (empty when stopped)
    uint32_t stoppedAt = 0; ///< node id where an observer stopped the run
    OpPhase stoppedPhase = OpPhase::Before;
};

/// Runs a finalized graph (MXNet's CachedOp). Infers shapes and prepares kernels on the first call
/// and when input shapes change, runs op nodes in graph order, and reports them to attached
/// observers. Dynamic mode allocates each intermediate when produced and frees it after its last
/// use; static_alloc keeps buffers (outputs then alias internal buffers that the next call
/// overwrites, as in MXNet; with fuse, tensors no observer sees share them once dead: sharedBuffer);
/// static_shape keeps prepared kernels and rejects other shapes.
/// One thread at a time may call run(), attach() and detach().
class Executor {
public:
    explicit Executor(std::shared_ptr<const Graph> graph, ExecFlags flags = {}, KernelKind kind = KernelKind::Auto);
    ~Executor();
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    const Graph& graph() const { return *m_graph; }
    const ExecFlags& flags() const { return m_flags; }

    /// Adds an observer (not owned; must outlive its attachment). Wants are asked again.
    void attach(ExecutionObserver* observer);
    void detach(ExecutionObserver* observer);
    bool hasObservers() const { return !m_observers.empty(); }
    /// Asks every observer's wants() again (after an observer changed its mind).
    void refreshWants();

    /// Times every run from now on into `profile` (not owned; nullptr stops): each op's kernel and
    /// the observers called around it, on the steady clock. Costs two clock reads per op and
    /// observer phase; without a profile, one branch per op.
    void setProfile(RunProfile* profile) { m_profile = profile; }

    /// Each node's precision, by node id (ops/reduced_precision.h; empty or Float32: as the
    /// kernel computes). A node in float16 or bfloat16 rounds its float32 inputs and outputs to that
    /// type around its kernel and is never fused. Takes effect at the next run (a new plan).
    void setPrecision(std::vector<Precision> byNode);
    const std::vector<Precision>& precision() const { return m_precision; }

    /// Runs the graph. `variables` are in graph().variables() order (data, parameters and
    /// auxiliary states). Throws ShapeError/UsageError for bad inputs, Error (naming the node)
    /// when a kernel fails. Under static_alloc the executor holds a reference to the variables
    /// until the next run (a variable given again then costs nothing); dynamic mode holds none.
    RunResult run(std::span<const Tensor> variables, RunContext& ctx);
    RunResult run(std::span<const Tensor> variables);

    /// Shapes of every entry of the current plan (empty before the first run).
    const std::vector<Shape>& entryShapes() const { return m_shapes; }
    /// Element types of every entry of the current plan (empty before the first run).
    const std::vector<DType>& entryTypes() const { return m_types; }
    /// Kernel backends of the current plan, by node id ("" for variables).
    std::vector<std::string> kernelBackends() const;
    /// Nanoseconds preparing the node's kernel (oneDNN primitive creation) when the current plan
    /// was made; 0 for variables and before the first run.
    int64_t prepareNs(uint32_t nodeId) const;
    /// Counts the plans made (1 after the first run); a new plan has new kernels.
    uint64_t planGeneration() const { return m_planGeneration; }
    /// The node whose kernel computes node `nodeId` in the current plan (a fused relu: its
    /// convolution), or -1 when the node runs its own kernel (and for variables).
    int64_t fusedInto(uint32_t nodeId) const
    {
        return nodeId < m_fusedInto.size() ? m_fusedInto[nodeId] : -1;
    }
    /// The nodes fused into node `nodeId`'s kernel in the current plan (empty when none).
    std::vector<uint32_t> fusedWith(uint32_t nodeId) const;
    /// Whether entry `entryId` is kept in a kernel's native layout between the kernels that write
    /// and read it in the current plan (Executor::keepNativeLayouts; never an entry any observer
    /// sees or a graph output).
    bool nativeLayout(uint32_t entryId) const
    {
        return entryId < m_nativeElements.size() && m_nativeElements[entryId] > 0;
    }
    /// The float32 values such an entry's buffer holds in that layout: more than its shape's when
    /// the layout pads its channels (nChw16c of 24 channels holds 32); 0 for a plain entry.
    int64_t nativeElements(uint32_t entryId) const;
    /// Bytes of the plan's tensors at their peak (checked against memoryLimit() when planning;
    /// ResourceError names the node where a plan that does not fit peaks).
    int64_t plannedPeakBytes() const { return m_peakBytes; }
    /// With static_alloc and fuse, the buffer entry `entryId` shares with the other entries given
    /// the same number (their lives do not overlap, except a convolution's residual and the output
    /// it is added into in place, which meet at that one step; none of them is seen by an observer,
    /// a graph output or a variable), or -1 when it has a buffer of its own. Known after the first run.
    int64_t sharedBuffer(uint32_t entryId) const
    {
        return entryId < m_storageSlot.size() ? m_storageSlot[entryId] : -1;
    }
    /// Bytes of the buffers the entries share (0 when none do).
    int64_t sharedBufferBytes() const;

private:
    void plan(std::span<const Tensor> variables);
    void recomputeWants();
    void fuse();
    bool fusionStale() const;
    void checkPlanFits();
    // With static_alloc: which tensors share buffers (exec/executor_storage.cpp), then the buffers.
    void planStorage();
    bool storageStale() const;
    void allocateBuffers();
    template <OpPhase P> bool notify(uint32_t stepIndex);
    void makeKernelSteps();
    void runUnobserved(RunContext& ctx);
    void listWatchCalls();
    template <bool After> bool callWatchers(size_t tableStep, bool firstCall);
    void runWatched(RunContext& ctx, RunResult& result);
    void runSteps(RunContext& ctx, RunResult& result, RunProfile* profile);
    static RunResult stoppedRun(uint32_t node, OpPhase phase)
    {
        RunResult r;
        r.status = RunStatus::Stopped;
        r.stoppedAt = node;
        r.stoppedPhase = phase;
        return r;
    }
    // Throws an Error whose message names node `node` before `e`'s.
    [[noreturn]] void rethrowAt(uint32_t node, const Error& e) const;
    OpEvent makeEvent(uint32_t stepIndex, OpPhase phase, const TensorView* inViews, const TensorView* outViews) const;
    void makeEvents();

    std::shared_ptr<const Graph> m_graph;
    ExecFlags m_flags;
    KernelKind m_kind;
    std::vector<Precision> m_precision;

    struct Step {
        uint32_t node;
        uint32_t inBegin, inCount; // ranges in m_inPtrs / m_inEntries
        uint32_t outBegin, outCount; // ranges in m_outPtrs; outputs are entries outBegin…
        Kernel* kernel;
        PhaseMask wants;
        int64_t prepareNs; // creating the kernel at plan
        bool called; // the kernel has run since the plan
        uint32_t runOut; // the entry the kernel writes (outBegin; a fused consumer's output)
        bool absorbed; // fused into an earlier step's kernel: not run
        // A fused kernel's inputs, then extraCount more that its post-ops read: m_fusedInPtrs from extraBegin.
        uint32_t extraBegin, extraCount;
    };
    // A convolution and the chain of nodes that alone read it, one after the other, each computable
    // as a post-op (fusion::Chain: a GELU's five nodes as one); its first `fusedCount` run inside
    // the convolution's kernel in the current plan.
    struct FusionCandidate {
        uint32_t producer; // step indexes
        std::vector<uint32_t> consumers;
        std::vector<std::vector<uint32_t>> parts; // per consumer, the steps before it its post-op also replaces
        std::vector<PostOp> ops; // one per consumer
        std::vector<const Tensor*> extra; // what the post-ops read, in their order
        struct Fold {
            size_t consumer; // a folded normalisation
            Tensor *scale, *shift;
        };
        std::vector<Fold> folds;
        size_t unwatched = 0; // the leading consumers no observer wanted when fused (0: the producer is)
        size_t fusedCount = 0;
    };
    size_t unwatchedPrefix(const FusionCandidate& c) const;
    // OpEvent::firstCall: before, the step has not run since the plan; after, it just ran for the first time.
    bool firstCall(const Step& s, bool after) const { return after ? m_firstCallAfter : !s.called; }
    // No observer wants the step and it runs in float32: fusion and layouts may change it.
    bool stepIsFree(const Step& s) const
    {
        return s.wants == PhaseMask::None && (s.node >= m_precision.size() || m_precision[s.node] == Precision::Float32);
    }
    // What the step's kernel reads: its inputs, then (fused) what its post-ops read.
    std::span<const Tensor* const> runInputs(const Step& s) const
    {
        return s.extraCount == 0 ? std::span<const Tensor* const>(m_inPtrs.data() + s.inBegin, s.inCount)
                                 : std::span<const Tensor* const>(m_fusedInPtrs.data() + s.extraBegin, s.inCount + s.extraCount);
    }
    // The entry a kernel input points at (one of m_values), or -1 for a tensor outside the graph
    // (a folded normalisation's scale or shift).
    int64_t entryIndex(const Tensor* t) const
    {
        const Tensor* const first = m_values.data();
        return std::less_equal<>()(first, t) && std::less<>()(t, first + m_values.size()) ? t - first : -1;
    }
    void fuseCandidate(FusionCandidate& c);
    void computeFolds();
    // After fuse(): which tensors stay in the native layout of the kernels around them.
    void keepNativeLayouts();
    void followNeighbours(const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& readersOf);
    void offerReadersLayout(const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& readersOf);
    // By entry id: the float32 values it holds in its native layout (padding included); 0: plain.
    std::vector<int64_t> m_nativeElements;
    std::vector<uint32_t> m_layoutSteps; // the steps that write or read them
    std::vector<uint32_t> m_layoutWatched; // steps that would, were they not watched
    std::vector<const Tensor*> m_fusedInPtrs;
    std::vector<int64_t> m_storageSlot; // by entry id: the shared buffer it lives in, -1 its own
    std::vector<int64_t> m_slotElements; // float32 elements of each shared buffer
    std::vector<uint32_t> m_storageSteps; // steps that write or read a shared buffer
    std::deque<Tensor> m_foldTensors; // scale and shift of folded normalisations (stable addresses)
    bool m_runTraining = false; // the run being planned trains (RunContext::training)
    bool m_planTraining = false; // ... when the plan fused
    bool m_trainingMatters = false; // a normalisation folds when not training only
    std::vector<FusionCandidate> m_candidates;
    std::vector<int64_t> m_fusedInto; // by node id
    bool m_fusionDirty = false; // wants changed since the plan fused
    std::vector<Step> m_steps;
    std::vector<std::unique_ptr<Kernel>> m_kernels;
    std::vector<Tensor> m_values; // by entry id
    std::vector<const Tensor*> m_inPtrs;
    std::vector<uint32_t> m_inEntries;
    std::vector<Tensor*> m_outPtrs;
    std::vector<uint32_t> m_useCount; // consumers (+1 for heads) of each entry
    std::vector<uint32_t> m_remaining; // per run copy of m_useCount
    std::vector<bool> m_isVariableEntry;
    std::vector<Shape> m_shapes;
    std::vector<DType> m_types; // by entry id
    std::vector<Shape> m_planVariableShapes;
    bool m_planned = false;
    bool m_precisionDirty = false; // setPrecision since the plan: kernels are made again
    bool m_buffersReady = false;
    std::vector<ExecutionObserver*> m_observers;
    std::vector<ExecutionObserver*> m_calls; // by step and phase (recomputeWants)
    std::vector<uint32_t> m_callRange; // 2 × steps + 1 bounds into m_calls
    // Parallel to m_calls: the observer's callbacks on single tensors there (ExecutionObserver::
    // tensorCalls), m_tensorCalls[begin, end), or none (onOp) when `whole`.
    struct CallTensors {
        uint32_t begin, end;
        bool whole;
    };
    std::vector<CallTensors> m_callTensors;
    std::vector<TensorCall> m_tensorCalls;
    std::vector<TensorView> m_inViews, m_outViews;
    // With static_alloc the buffers stay put, so observers get views prepared once per plan
    // (variables' views when a run is given other tensors): an observed op then costs its callbacks only.
    std::vector<TensorView> m_entryViews; // by entry id
    std::vector<TensorView> m_inViewsFlat; // parallel to m_inEntries
    std::vector<OpEvent> m_events; // by step and phase, over those views (firstCall set at each call)
    // Per variable v, the indexes into m_inEntries of the inputs that read it: m_variableInputs
    // from m_variableInputBegin[v] to m_variableInputBegin[v + 1].
    std::vector<uint32_t> m_variableInputs, m_variableInputBegin;
    std::vector<uint32_t> m_variableEntries; // the entry of each of the graph's variables, in order
    std::vector<uint32_t> m_movedVariables; // this run's variables other than the last run's
    bool m_viewsReady = false;
    bool m_anyWants = false;
    bool m_wantsStale = false; // recomputeWants() did not finish: the next run lists again
    int64_t m_peakBytes = 0;
    std::vector<int64_t> m_prepareByNode;
    uint64_t m_planGeneration = 0;
    bool m_firstCallAfter = false; // the step that just ran ran for the first time since the plan
    // The kernels to run, with what they read and write, for a static_alloc run without a profile:
    // the step loop without its checks. Made with the plan. When nothing is watched the kernels run
    // alone (runUnobserved); otherwise each with its observer calls (runWatched):
    // m_watchCalls[before, after) before it and [after, end) after it, listed again whenever the
    // observers' wants change (recomputeWants).
    struct KernelStep {
        Kernel* kernel;
        const Tensor* const* in;
        Tensor* const* out;
        uint32_t inCount, outCount;
        uint32_t step; // in m_steps
        uint32_t before, after, end;
    };
    struct WatchCall {
        ExecutionObserver* observer;
        uint32_t event; // in m_events
        uint32_t slot; // m_tensorCalls[call] on the event's input or output `slot`, or kWholeOp: onOp(event)
        uint32_t call;
    };
    static constexpr uint32_t kWholeOp = ~0u;
    std::vector<KernelStep> m_kernelSteps;
    std::vector<WatchCall> m_watchCalls;
    bool m_allCalled = false; // every step that runs has run since the plan (Step::called)
    RunProfile* m_profile = nullptr;
};

} // namespace opscope
