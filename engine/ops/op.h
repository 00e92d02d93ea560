#pragma once

#include "ops/attrs.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace opscope {

class Generator;

/// Parsed, typed attributes of one operator instance. Each operator defines its own subclass.
struct OpParams {
    virtual ~OpParams() = default;
};
using ParamsPtr = std::shared_ptr<const OpParams>;

/// Per-run state a kernel may use: training mode (BatchNorm batch statistics, Dropout masks) and
/// the run's random generator.
struct RunContext {
    bool training = false;
    Generator* rng = nullptr;
};

/// Which implementation of an operator to prepare. Auto picks oneDNN where it is available and
/// pays for the shape, the reference kernel otherwise.
enum class KernelKind { Auto, Reference, Dnnl };

/// An element-wise operation a kernel may apply to its own output before storing it
/// (Kernel::setPostOps): how the executor fuses nodes nobody watches into the kernel before them.
struct PostOp {
    enum class Kind : uint8_t {
        Relu, ///< max(x, 0)
        Sigmoid, ///< 1 / (1 + exp(-x))
        Tanh,
        Gelu, ///< x·Φ(x), the erf form
        Clip, ///< x < lo ? lo : (x > hi ? hi : x) (ONNX's order; MXNet's agrees when lo <= hi)
        Sum, ///< x + r: one more input r of the output's shape (a residual connection)
        Affine, ///< x·scale[c] + shift[c] per channel (axis 1): two more inputs of shape (C) (a folded BatchNorm)
        Bias, ///< x + b[j] along the last axis: one more input of N elements (a linear layer's bias)
        /// (x / a, then erf, + b, · x, · c), each step rounded to float: the Div, Erf, Add, Mul and Mul
        /// that ONNX exporters write for GELU (a = √2, b = 1, c = ½). Three more inputs, the scalars
        /// a, b and c, read at each run.
        GeluParts,
        /// A depthwise convolution of the output (one 3x3 filter per channel, padding 1, stride
        /// `stride`, 1 or 2) with its bias: two more inputs, its weights (C, 1, 3, 3) and bias (C).
        /// Only after a 1x1 convolution (oneDNN's fused depthwise post-op: the 1x1's output is never
        /// stored whole); the post-ops after it apply to its output, which is then the kernel's.
        Depthwise,
    };
    Kind kind = Kind::Relu;
    float lo = 0.0f, hi = 0.0f; ///< Clip's bounds
    /// Relu and Clip: NaN stays NaN (oneDNN's relu kernel on its own, MXNet's clip and ONNX's Clip)
    /// instead of becoming 0 or a bound (MXNet's relu operator, ONNX's Relu, and oneDNN's relu and
    /// clip post-ops). Applied after the output is stored: only as the last of a list.
    bool keepNaN = false;
    /// Clip only: bit 0, the lower bound is an extra input (a scalar read at each run, as ONNX's
    /// Clip takes it) instead of `lo`; bit 1, the upper one instead of `hi`.
    uint8_t boundInputs = 0;
    uint8_t stride = 1; ///< Depthwise only
    bool operator==(const PostOp&) const = default;
    /// How many inputs it adds after the kernel's own (and after those of the post-ops before it).
    int extraInputs() const
    {
        if (kind == Kind::Clip) return (boundInputs & 1) + ((boundInputs >> 1) & 1);
        if (kind == Kind::GeluParts) return 3;
        if (kind == Kind::Depthwise) return 2;
        return kind == Kind::Sum || kind == Kind::Bias ? 1 : kind == Kind::Affine ? 2 : 0;
    }
};

/// How a kernel lays a tensor out in memory when it reads or writes it without converting: a
/// oneDNN blocked format such as nChw16c, named by `key` (equal keys: the same layout). An empty
/// key is the plain row-major layout every tensor has outside such kernels.
struct NativeLayout {
    std::string key;
    int64_t bytes = 0; ///< the tensor's size in that layout (padded channels make it larger)
    bool plain() const { return key.empty(); }
};

/// An operator prepared for fixed input and output shapes (oneDNN primitives are created here).
/// run() may be called many times; the caller allocates outputs with the inferred shapes.
/// A kernel is used by one thread at a time.
class Kernel {
public:
    virtual ~Kernel() = default;
    virtual void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) = 0;
    /// "reference" or "dnnl", for tests and benchmarks.
    virtual const char* backend() const { return "reference"; }
    /// Applies `ops`, in order, to this kernel's output from now on (oneDNN's post-ops), so that the
    /// nodes computing them need not run; an empty list removes them. Returns false when the kernel
    /// cannot take the whole list, and then runs with none.
    virtual bool setPostOps(std::span<const PostOp> ops) { return ops.empty(); }
    /// The layout the kernel computes its first output in before converting it to plain (plain
    /// when it writes plain). Asked after setPostOps.
    virtual NativeLayout nativeOutput() const { return {}; }
    /// The layout it converts input `index` into before reading it (its own inputs, then what its
    /// post-ops read, as run() receives them); plain when it reads the tensor as it is.
    virtual NativeLayout nativeInput(size_t /*index*/) const { return {}; }
    /// From now on the inputs flagged in `inputs` arrive in their native layout and the first
    /// output stays in its own (`output`): no conversion (the executor keeps a tensor that only
    /// such kernels write and read in their layout). Called after setPostOps, which clears it:
    /// the layouts are asked again after any new list of post-ops.
    virtual void setNative(std::span<const bool> /*inputs*/, bool /*output*/) {}
    /// A kernel that runs in whichever layout the kernels beside it use (a pooling between
    /// convolutions): the layouts besides plain it can read its first input in or write its
    /// output in, one list (a layout names its tensor's dimensions, so the executor finds the
    /// ones of each side by key). Empty (the default): only those nativeInput() and
    /// nativeOutput() name.
    virtual std::vector<NativeLayout> nativeChoices() const { return {}; }
    /// Makes nativeInput(0) and nativeOutput() the choices `input` and `output` (indexes into
    /// nativeChoices(); -1: plain), asked before setNative() decides whether they are used.
    virtual void chooseNative(int /*input*/, int /*output*/) {}
    /// Asked when every reader of its first output reads `layout`, a native layout other than
    /// nativeOutput(): whether it can convert its output into that layout (one oneDNN reorder)
    /// instead of into plain. When it returns true, nativeOutput() is `layout` from then on and
    /// setNative(…, true) keeps the output in it; until the next setPostOps.
    virtual bool outputIn(const NativeLayout& /*layout*/) { return false; }
    /// Whether the network around it runs faster with every convolution in oneDNN's
    /// channel-blocked layout (nChw16c) than in the layouts each would choose alone: true for a
    /// depthwise convolution (MobileNet's), whose 1x1 neighbours in channels-last fall out of the
    /// caches on its large, narrow tensors, and for a convolution of more than one image, whose
    /// tensors outgrow the caches alike (ResNets from a batch of two).
    virtual bool favoursBlocked() const { return false; }
    /// From now on computes in the channel-blocked layout, where it can (`on`), or in its own
    /// choice again. Asked before the layouts are; a change clears setNative() as setPostOps does.
    virtual void computeBlocked(bool /*on*/) {}
    /// The post-op this kernel's whole work is as part of another kernel's, when there is one: a
    /// depthwise 3x3 convolution with its bias (PostOp::Kind::Depthwise) a 1x1 convolution before
    /// it may compute in its own primitive. Its inputs are then the post-op's operand and the extra
    /// inputs the post-op reads, in that order.
    virtual std::optional<PostOp> asPostOp() const { return std::nullopt; }
};

using KernelFactory = std::function<std::unique_ptr<Kernel>(
    const OpParams& params, std::span<const Shape> in, std::span<const Shape> out)>;

/// What an operator's gradient receives (MXNet's FGradient, run as the `_backward_<Op>` node).
/// `in` and `out` are the forward pass's inputs and outputs (every output, hidden ones included:
/// BatchNorm's saved mean and variance, Dropout's mask). `outGrad` has one entry per output; a null
/// entry means that output's gradient is zero (hidden outputs always are). `inGrad` has one entry
/// per input, allocated by the caller with the input's shape; a null entry means that gradient is
/// not wanted (grad_req null, an auxiliary state, an integer index). The gradient writes every
/// non-null `inGrad` entirely (it never adds to what is there).
struct BackwardArgs {
    const OpParams& params;
    std::span<const Tensor* const> in;
    std::span<const Tensor* const> out;
    std::span<const Tensor* const> outGrad;
    std::span<Tensor* const> inGrad;
    RunContext& ctx;
};
using BackwardFn = std::function<void(const BackwardArgs&)>;

/// One operator under its MXNet name: everything the graph, the executor and eager calls need.
/// Shape inference receives the known input shapes (a shape with ndim 0 or a 0 dimension is
/// unknown) and must fill every output shape; it may also complete unknown input shapes that the
/// operator determines (FullyConnected's weight from its data and num_hidden), and throws
/// ShapeError when a known input contradicts what it expects (the message gives both shapes; the
/// caller adds the node's name).
struct OpDef {
    std::string name;
    std::function<ParamsPtr(const AttrMap&)> parse;
    std::function<int(const OpParams&)> numInputs;
    std::function<int(const OpParams&)> numOutputs;
    /// Outputs visible to users of the node (BatchNorm has 3 outputs, 1 visible). Null: all.
    std::function<int(const OpParams&)> numVisibleOutputs;
    /// Registered slot names; null when MXNet registers none (then `input0`… / `0`… are used).
    /// A list may be longer than the slots: the first numInputs (numOutputs) are their names.
    std::function<std::vector<std::string>(const OpParams&)> inputNames;
    std::function<std::vector<std::string>(const OpParams&)> outputNames;
    /// Output slot names that do not depend on the parameters, of which the first numOutputs are
    /// the slots: set by nameOutputs(), and by the registry to MXNet's `0`, `1`… for an operator
    /// that registers no outputNames. Empty: ask outputNames.
    std::vector<std::string> fixedOutputNames;
    /// Names the outputs with a list that does not depend on the parameters (sets outputNames and
    /// fixedOutputNames).
    void nameOutputs(std::vector<std::string> names);
    /// The same for the inputs: the first numInputs of a list that does not depend on the
    /// parameters (MXNet's `input0`, `input1`… for an operator that registers no inputNames).
    std::vector<std::string> fixedInputNames;
    void nameInputs(std::vector<std::string> names);
    /// Indexes of inputs that are auxiliary states (updated in place in training), e.g. BatchNorm's
    /// moving_mean and moving_var. Null: none.
    std::function<std::vector<int>(const OpParams&)> auxInputs;
    /// Indexes of inputs only a loss reads, which inference does not need (SoftmaxOutput's label: its
    /// forward pass is the softmax alone). A variable read only through such inputs may be given
    /// zeros when not training, as MXNet's predictor does. Null: none.
    std::function<std::vector<int>(const OpParams&)> labelInputs;
    std::function<void(const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out)> inferShape;
    /// Element types: given the inputs' types, fills the outputs' types, and throws TypeError naming
    /// the input, its type and the types the operator takes for one it does not support (never a
    /// silent conversion). Null: float32 only, as MXNet's operators compute.
    std::function<void(const OpParams&, std::span<const DType> in, std::span<DType> out)> inferType;
    KernelFactory reference;
    /// oneDNN kernel; may return nullptr where oneDNN does not apply (an attribute it lacks).
    KernelFactory dnnl;
    /// Whether the oneDNN kernel pays for these shapes (its call cost dominates tiny ops). Asked
    /// only for KernelKind::Auto; null: always. KernelKind::Dnnl forces oneDNN where it applies.
    std::function<bool(const OpParams&, std::span<const Shape> in, std::span<const Shape> out)> dnnlPays;
    /// The gradient (a reference implementation); null for an operator without one.
    BackwardFn backward;
    /// ONNX's rule: a 0 dimension is an empty tensor. MXNet's (false): a 0 dimension is unknown until
    /// shape inference completes it (a Dense weight (2, 0) becomes (2, in_units)).
    bool zeroDimsAreEmpty = false;

    /// Slot names with MXNet's fallbacks applied: `input<i>` and `<i>`.
    std::vector<std::string> inputSlotNames(const OpParams& p) const;
    std::vector<std::string> outputSlotNames(const OpParams& p) const;
    /// The same names without building them where they are fixed (what an op reporting to hooks on
    /// every call reads); `scratch` holds them otherwise. `count`: numOutputs(p), or numInputs(p)
    /// for the inputs, which the caller knows (asking again costs as much as the rest); a wrong
    /// count gives that many names where they are fixed.
    std::span<const std::string> outputSlotNames(
        const OpParams& p, size_t count, std::vector<std::string>& scratch) const;
    std::span<const std::string> inputSlotNames(
        const OpParams& p, size_t count, std::vector<std::string>& scratch) const;
    int visibleOutputs(const OpParams& p) const { return numVisibleOutputs ? numVisibleOutputs(p) : numOutputs(p); }
    /// inferType, or the float32-only rule where there is none.
    void inferTypes(const OpParams& p, std::span<const DType> in, std::span<DType> out) const;
    /// Prepares a kernel of the requested kind; falls back to Reference where oneDNN does not apply.
    std::unique_ptr<Kernel> makeKernel(
        const OpParams& p, std::span<const Shape> in, std::span<const Shape> out, KernelKind kind) const;
};

/// Convenience for kernels written as a lambda over the typed params.
template <class P, class F> std::unique_ptr<Kernel> lambdaKernel(const P& params, F fn, const char* backend = "reference")
{
    struct K final : Kernel {
        K(const P& p, F f, const char* b)
            : params(p)
            , fn(std::move(f))
            , name(b)
        {
        }
        void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override
        {
            fn(params, in, out, ctx);
        }
        const char* backend() const override { return name; }
        P params;
        F fn;
        const char* name;
    };
    return std::make_unique<K>(params, std::move(fn), backend);
}

template <class P> const P& paramsAs(const OpParams& p)
{
    return static_cast<const P&>(p);
}

/// Throws ShapeError "<what>: expected <expected>, got <actual>" (shapes in MXNet's tuple form).
[[noreturn]] void shapeMismatch(const std::string& what, const Shape& expected, const Shape& actual);
/// Assigns `expected` to `slot` when unknown; when known, checks it is compatible (0 dims in
/// `expected` are wildcards) and throws shapeMismatch otherwise. Returns the resulting shape.
const Shape& assignShape(Shape& slot, const Shape& expected, const std::string& what);

} // namespace opscope
