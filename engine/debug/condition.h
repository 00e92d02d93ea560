#pragma once

#include "debug/tensor_stats.h"

#include <string>

namespace opscope::debug {

/// A test on a tensor's statistics: what a breakpoint or watchpoint checks before it pauses.
/// A value type; any thread may use it.
struct Condition {
    enum class Kind : uint8_t {
        Always, ///< no test: every time the location is reached
        AnyNan,
        AnyInf,
        NanOrInf,
        AbsMaxAbove, ///< max |x| over finite values > threshold
        MinBelow,
        MaxAbove,
        MeanAbove,
        MeanBelow,
        StdAbove,
        StdBelow,
        AllZero,
        ZeroFractionAbove, ///< zeros / count > threshold (a fraction in [0, 1])
        NormAbove, ///< L2 norm of the finite values > threshold (a gradient that explodes)
        /// The tensor's relative L2 difference ‖a − b‖ / ‖a‖ from the same tensor of a reference run
        /// (a comparison's run B, SessionOptions::reference) > threshold; NaN or Inf on one side
        /// only counts as infinite. A tensor the reference lacks never satisfies it.
        DiffAbove,
    };

    Kind kind = Kind::Always;
    double threshold = 0;
    /// Test gradients only: the outputs of the backward pass's nodes (and the gradients they
    /// read), so "grad naninf" stops at the first gradient with NaN or Inf, "grad norm>10" at the
    /// first gradient whose norm exceeds 10. Other tensors never satisfy it.
    bool gradientsOnly = false;

    static Condition always() { return {}; }
    static Condition of(Kind kind, double threshold = 0) { return { kind, threshold, false }; }
    static Condition onGradients(Kind kind, double threshold = 0) { return { kind, threshold, true }; }

    /// False for Always (no statistics are needed to decide).
    bool needsStats() const { return kind != Kind::Always; }
    /// DiffAbove: decided against a reference run's tensor (test() alone says false).
    bool needsReference() const { return kind == Kind::DiffAbove; }
    /// Whether a tensor with these statistics satisfies the condition. Comparisons use the
    /// finite values (as TensorStats does); a tensor without finite values satisfies no
    /// threshold test.
    bool test(const TensorStats& s) const;
    /// Readable form, the one parse() reads: "nan", "max>1000", "zero", "grad norm>10", …
    std::string str() const;

    /// Parses "always", "nan", "inf", "naninf", "zero", "absmax>T", "max>T", "min<T", "mean>T",
    /// "mean<T", "std>T", "std<T", "zeros>P", "norm>T", "diff>T", each optionally after "grad " (gradients
    /// only; "grad" alone is any gradient). Spaces are allowed. Throws UsageError naming the text.
    static Condition parse(const std::string& text);

    friend bool operator==(const Condition&, const Condition&) = default;
};

} // namespace opscope::debug
