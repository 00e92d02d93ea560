// Gradients of the element-wise, reduction, dot and shape operators against central differences,
// plus what the numeric check cannot see: ties, boundaries, zero output gradients, skipped inputs.

#include "common/grad_check.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <random>

using namespace opscope;
using opscope::test::checkGradient;
using opscope::test::GradCheckOptions;

namespace {

Tensor rnd(const Shape& s, uint64_t seed, float lo = -1, float hi = 1)
{
    Generator g(seed);
    return Tensor::uniform(s, lo, hi, &g);
}

// Values in [lo, hi) with random sign: kept at least `lo` away from 0 (abs, division, relu).
Tensor awayFromZero(const Shape& s, uint64_t seed, float lo = 0.3f, float hi = 1.5f)
{
    Tensor t = rnd(s, seed, lo, hi);
    Generator g(seed + 1000);
    for (float& v : t.values())
        if (g.uniform(0, 1) < 0.5f) v = -v;
    return t;
}

// Distinct values offset + 0.1·k in shuffled order: two tensors made with offsets 0 and 0.05 never
// come closer than 0.05 (max, maximum and minimum stay away from ties under the ±0.01 steps).
Tensor spaced(const Shape& s, uint64_t seed, float offset = 0)
{
    std::vector<float> v(static_cast<size_t>(s.size()));
    for (size_t k = 0; k < v.size(); ++k)
        v[k] = offset + 0.1f * static_cast<float>(k) - 1.0f;
    std::shuffle(v.begin(), v.end(), std::mt19937(static_cast<unsigned>(seed)));
    return Tensor::fromValues(s, v);
}

Tensor values(const Shape& s, std::vector<float> v)
{
    return Tensor::fromValues(s, v);
}

// Runs the operator's backward directly with every wanted input gradient pre-filled with NaN, so a
// gradient that leaves elements unwritten shows. `outGrads`: one per output, undefined = zero.
std::vector<Tensor> backwardPrefilled(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
    std::vector<Tensor> outGrads, std::vector<bool> wanted = {})
{
    const OpDef& def = OpRegistry::instance().get(op);
    const ParamsPtr params = def.parse(attrs);
    const std::vector<Tensor> outs = invokeOp(op, attrs, inputs, KernelKind::Reference);
    outGrads.resize(outs.size());
    if (wanted.empty()) wanted.assign(inputs.size(), true);
    std::vector<Tensor> grads(inputs.size());
    std::vector<const Tensor*> in, out, og;
    std::vector<Tensor*> ig;
    for (const Tensor& t : inputs)
        in.push_back(&t);
    for (size_t k = 0; k < outs.size(); ++k) {
        out.push_back(&outs[k]);
        og.push_back(outGrads[k].defined() ? &outGrads[k] : nullptr);
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (wanted[i]) grads[i] = Tensor::full(inputs[i].shape(), std::numeric_limits<float>::quiet_NaN());
        ig.push_back(wanted[i] ? &grads[i] : nullptr);
    }
    RunContext ctx;
    def.backward(BackwardArgs { *params, in, out, og, ig, ctx });
    return grads;
}

std::vector<Tensor> onesLike(const std::vector<Tensor>& outs)
{
    std::vector<Tensor> r;
    for (const Tensor& t : outs)
        r.push_back(Tensor::ones(t.shape()));
    return r;
}

void expectValues(const Tensor& t, const std::vector<float>& expected)
{
    ASSERT_TRUE(t.defined());
    ASSERT_EQ(t.size(), static_cast<int64_t>(expected.size()));
    for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_FLOAT_EQ(t.at(static_cast<int64_t>(i)), expected[i]) << "element " << i;
}

struct Case {
    std::string op;
    AttrMap attrs;
    std::vector<Tensor> inputs;
};

// One configuration of every operator here (inputs inside every domain).
std::vector<Case> everyOperator()
{
    const Tensor a = awayFromZero({ 2, 3 }, 1), b = awayFromZero({ 2, 3 }, 2), pos = rnd({ 2, 3 }, 3, 0.5f, 2.0f);
    std::vector<Case> cases;
    for (const char* op : { "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div" })
        cases.push_back({ op, {}, { a, b } });
    for (const char* op : { "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
             "broadcast_minimum" })
        cases.push_back({ op, {}, { spaced({ 2, 1, 3 }, 1), awayFromZero({ 4, 1 }, 2) } });
    for (const char* op : { "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
             "_rdiv_scalar", "_power_scalar" })
        cases.push_back({ op, { { "scalar", "2.5" } }, { pos } });
    for (const char* op : { "exp", "log", "sqrt", "square", "abs", "negative", "relu", "sigmoid", "tanh", "softsign" })
        cases.push_back({ op, {}, { pos } });
    cases.push_back({ "clip", { { "a_min", "0.8" }, { "a_max", "1.5" } }, { pos } });
    for (const char* op : { "sum", "mean", "max" })
        cases.push_back({ op, { { "axis", "1" } }, { spaced({ 2, 3, 2 }, 4) } });
    cases.push_back({ "dot", { { "transpose_b", "True" } }, { a, b } });
    cases.push_back({ "batch_dot", {}, { rnd({ 2, 2, 3 }, 5), rnd({ 2, 3, 2 }, 6) } });
    cases.push_back({ "Flatten", {}, { rnd({ 2, 3, 2 }, 7) } });
    cases.push_back({ "Reshape", { { "shape", "(-1, 2)" } }, { rnd({ 2, 3, 2 }, 8) } });
    cases.push_back({ "expand_dims", { { "axis", "1" } }, { a } });
    cases.push_back({ "squeeze", {}, { rnd({ 2, 1, 3 }, 9) } });
    cases.push_back({ "_copy", {}, { a } });
    cases.push_back({ "transpose", {}, { rnd({ 2, 3, 4 }, 10) } });
    cases.push_back({ "Concat", { { "num_args", "2" }, { "dim", "1" } }, { a, rnd({ 2, 2 }, 11) } });
    cases.push_back({ "SliceChannel", { { "num_outputs", "3" }, { "axis", "1" } }, { a } });
    cases.push_back({ "slice_axis", { { "axis", "1" }, { "begin", "1" }, { "end", "2" } }, { a } });
    return cases;
}

} // namespace

// ---- elemwise_* ----------------------------------------------------------------------------

TEST(Gradient, ElemwiseBinary)
{
    for (const char* op : { "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div" })
        EXPECT_TRUE(checkGradient(op, {}, { rnd({ 2, 3, 4 }, 1), awayFromZero({ 2, 3, 4 }, 2) })) << op;
}

TEST(Gradient, ElemwiseBinaryOneSideWanted)
{
    for (const char* op : { "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div" }) {
        GradCheckOptions o;
        o.wanted = { false, true };
        EXPECT_TRUE(checkGradient(op, {}, { rnd({ 3, 4 }, 3), awayFromZero({ 3, 4 }, 4) }, o)) << op;
        o.wanted = { true, false };
        EXPECT_TRUE(checkGradient(op, {}, { rnd({ 3, 4 }, 5), awayFromZero({ 3, 4 }, 6) }, o)) << op;
    }
}

TEST(Gradient, ElemwiseDivValues)
{
    // d(a/b)/da = 1/b, d(a/b)/db = -a/b².
    const auto g = invokeBackward("elemwise_div", {}, { values({ 2 }, { 3, -1 }), values({ 2 }, { 2, 4 }) },
        invokeOp("elemwise_div", {}, { values({ 2 }, { 3, -1 }), values({ 2 }, { 2, 4 }) }),
        { values({ 2 }, { 1, 2 }) });
    expectValues(g[0], { 0.5f, 0.5f });
    expectValues(g[1], { -0.75f, 0.125f });
}

// ---- broadcast_* ---------------------------------------------------------------------------

TEST(Gradient, BroadcastArithmetic)
{
    // rhs broadcast, lhs broadcast, both broadcast, a missing leading axis, a single value.
    const std::vector<std::pair<Shape, Shape>> shapes = { { { 2, 3, 4 }, { 3, 1 } }, { { 1, 3 }, { 4, 3 } },
        { { 1, 3, 1 }, { 2, 1, 4 } }, { { 2, 3 }, { 3 } }, { { 1 }, { 2, 3 } }, { { 2, 3 }, { 2, 3 } } };
    uint64_t seed = 10;
    for (const char* op : { "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div" })
        for (const auto& [l, r] : shapes) {
            EXPECT_TRUE(checkGradient(op, {}, { rnd(l, seed), awayFromZero(r, seed + 1) }))
                << op << " " << l.str() << " " << r.str();
            seed += 2;
        }
}

TEST(Gradient, BroadcastMaximumMinimum)
{
    const std::vector<std::pair<Shape, Shape>> shapes
        = { { { 2, 3, 4 }, { 3, 1 } }, { { 1, 3, 1 }, { 2, 1, 4 } }, { { 3 }, { 2, 3 } }, { { 2, 3 }, { 2, 3 } } };
    uint64_t seed = 40;
    for (const char* op : { "broadcast_maximum", "broadcast_minimum" })
        for (const auto& [l, r] : shapes) {
            EXPECT_TRUE(checkGradient(op, {}, { spaced(l, seed), spaced(r, seed + 1, 0.05f) }))
                << op << " " << l.str() << " " << r.str();
            seed += 2;
        }
}

TEST(Gradient, BroadcastMaximumMinimumTiesGoToLhs)
{
    // MXNet: maximum routes by lhs >= rhs / lhs < rhs, minimum by lhs <= rhs / lhs > rhs.
    const Tensor lhs = values({ 2, 2 }, { 1, 2, 3, 2 }), rhs = values({ 1 }, { 2 });
    const Tensor dy = values({ 2, 2 }, { 1, 10, 100, 1000 });
    for (const char* op : { "broadcast_maximum", "broadcast_minimum" }) {
        const auto g = invokeBackward(op, {}, { lhs, rhs }, invokeOp(op, {}, { lhs, rhs }), { dy });
        if (std::string(op) == "broadcast_maximum") {
            expectValues(g[0], { 0, 10, 100, 1000 });
            expectValues(g[1], { 1 });
        } else {
            expectValues(g[0], { 1, 10, 0, 1000 });
            expectValues(g[1], { 100 });
        }
    }
}

TEST(Gradient, BroadcastSumsOverRepeatedAxes)
{
    // (2, 3) + (3,): the rhs gradient sums the rows; sub negates it.
    const Tensor lhs = rnd({ 2, 3 }, 1), rhs = rnd({ 3 }, 2), dy = values({ 2, 3 }, { 1, 2, 3, 4, 5, 6 });
    auto g = invokeBackward("broadcast_sub", {}, { lhs, rhs }, invokeOp("broadcast_sub", {}, { lhs, rhs }), { dy });
    expectValues(g[0], { 1, 2, 3, 4, 5, 6 });
    expectValues(g[1], { -5, -7, -9 });
}

// ---- scalar ops ----------------------------------------------------------------------------

TEST(Gradient, ScalarOps)
{
    for (const char* op :
        { "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar" })
        for (const char* s : { "2.5", "-0.75" })
            EXPECT_TRUE(checkGradient(op, { { "scalar", s } }, { awayFromZero({ 3, 4 }, 20) })) << op << " " << s;
}

TEST(Gradient, PowerScalar)
{
    for (const char* s : { "3", "0.5", "-1.5", "1" })
        EXPECT_TRUE(checkGradient("_power_scalar", { { "scalar", s } }, { rnd({ 3, 4 }, 21, 0.5f, 2.0f) })) << s;
    // An integer exponent is defined for negative bases.
    EXPECT_TRUE(checkGradient("_power_scalar", { { "scalar", "2" } }, { awayFromZero({ 3, 4 }, 22) }));
    EXPECT_TRUE(checkGradient("_power_scalar", { { "scalar", "3" } }, { awayFromZero({ 3, 4 }, 23) }));
}

// ---- unary math ----------------------------------------------------------------------------

TEST(Gradient, UnaryMath)
{
    for (const char* op : { "exp", "square", "negative" })
        EXPECT_TRUE(checkGradient(op, {}, { rnd({ 3, 4 }, 30, -2, 2) })) << op;
    for (const char* op : { "log", "sqrt" })
        EXPECT_TRUE(checkGradient(op, {}, { rnd({ 3, 4 }, 31, 0.3f, 3) })) << op;
    EXPECT_TRUE(checkGradient("abs", {}, { awayFromZero({ 3, 4 }, 32, 0.05f, 2) }));
}

TEST(Gradient, AbsAtZeroIsZero)
{
    const Tensor x = values({ 3 }, { -2, 0, 2 });
    const auto g = invokeBackward("abs", {}, { x }, invokeOp("abs", {}, { x }), { values({ 3 }, { 5, 5, 5 }) });
    expectValues(g[0], { -5, 0, 5 });
}

TEST(Gradient, Clip)
{
    // Values kept 0.05 away from the bounds, both inside and outside.
    const Tensor x = values({ 2, 4 }, { -1.2f, -0.55f, -0.3f, 0.1f, 0.45f, 0.7f, 1.3f, -0.95f });
    EXPECT_TRUE(checkGradient("clip", { { "a_min", "-0.5" }, { "a_max", "0.5" } }, { x }));
    EXPECT_TRUE(checkGradient("clip", { { "a_min", "0" }, { "a_max", "1" } }, { x }));
}

TEST(Gradient, ClipPassesOnTheClosedInterval)
{
    // MXNet's clip_grad: zero only strictly outside [a_min, a_max]; the bounds themselves and NaN pass.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const Tensor x = values({ 6 }, { -2, -1, 0, 1, 2, nan });
    const AttrMap attrs = { { "a_min", "-1" }, { "a_max", "1" } };
    const auto g = invokeBackward("clip", attrs, { x }, invokeOp("clip", attrs, { x }), { Tensor::full({ 6 }, 3) });
    expectValues(g[0], { 0, 3, 3, 3, 0, 3 });
}

// ---- activations as operators --------------------------------------------------------------

TEST(Gradient, UnaryActivations)
{
    for (const char* op : { "relu", "sigmoid", "tanh", "softsign" })
        EXPECT_TRUE(checkGradient(op, {}, { awayFromZero({ 3, 5 }, 40, 0.05f, 3) })) << op;
}

TEST(Gradient, ReluFromOutput)
{
    // relu_grad reads the output: zero where the output is 0 (input 0 included).
    const Tensor x = values({ 3 }, { -1, 0, 2 });
    const auto g = invokeBackward("relu", {}, { x }, invokeOp("relu", {}, { x }), { Tensor::full({ 3 }, 4) });
    expectValues(g[0], { 0, 0, 4 });
}

// ---- reductions ----------------------------------------------------------------------------

TEST(Gradient, SumMean)
{
    const std::vector<AttrMap> variants = { {}, { { "axis", "1" } }, { { "axis", "(0, 2)" }, { "keepdims", "True" } },
        { { "axis", "-1" } }, { { "axis", "1" }, { "exclude", "True" } }, { { "axis", "()" }, { "keepdims", "True" } },
        { { "axis", "(0, 1, 2)" } }, { { "axis", "0" }, { "keepdims", "True" } } };
    for (const char* op : { "sum", "mean" })
        for (const AttrMap& attrs : variants)
            EXPECT_TRUE(checkGradient(op, attrs, { rnd({ 2, 3, 4 }, 50) }))
                << op << " variant " << &attrs - variants.data();
    // Size-1 axes between reduced ones.
    EXPECT_TRUE(checkGradient("sum", { { "axis", "(0, 2)" } }, { rnd({ 2, 1, 3, 1 }, 51) }));
}

TEST(Gradient, MeanDividesByTheCount)
{
    const Tensor x = rnd({ 2, 4 }, 52);
    const AttrMap attrs = { { "axis", "1" } };
    const auto g = invokeBackward("mean", attrs, { x }, invokeOp("mean", attrs, { x }), { values({ 2 }, { 4, 8 }) });
    expectValues(g[0], { 1, 1, 1, 1, 2, 2, 2, 2 });
}

TEST(Gradient, Max)
{
    const std::vector<AttrMap> variants = { {}, { { "axis", "1" } }, { { "axis", "(0, 2)" }, { "keepdims", "True" } },
        { { "axis", "1" }, { "exclude", "True" } }, { { "axis", "0" } } };
    for (const AttrMap& attrs : variants)
        EXPECT_TRUE(checkGradient("max", attrs, { spaced({ 2, 3, 4 }, 53) })) << "variant " << &attrs - variants.data();
}

TEST(Gradient, MaxTiesAllGetTheGradient)
{
    // _backward_max is g · (x == max): every tied position gets the whole gradient.
    const Tensor x = values({ 2, 3 }, { 1, 3, 3, 5, 2, 4 });
    const AttrMap attrs = { { "axis", "1" } };
    const auto g = invokeBackward("max", attrs, { x }, invokeOp("max", attrs, { x }), { values({ 2 }, { 2, 7 }) });
    expectValues(g[0], { 0, 2, 2, 7, 0, 0 });
}

// ---- dot, batch_dot ------------------------------------------------------------------------

TEST(Gradient, Dot)
{
    const std::vector<std::pair<Shape, Shape>> plain = { { { 3, 4 }, { 4, 2 } }, { { 2, 3, 4 }, { 4, 2, 3 } },
        { { 5 }, { 5 } }, { { 4 }, { 4, 3 } }, { { 3, 4 }, { 4 } } };
    uint64_t seed = 60;
    for (const auto& [l, r] : plain) {
        EXPECT_TRUE(checkGradient("dot", {}, { rnd(l, seed), rnd(r, seed + 1) })) << l.str() << " " << r.str();
        seed += 2;
    }
    EXPECT_TRUE(checkGradient("dot", { { "transpose_a", "True" } }, { rnd({ 4, 3 }, 70), rnd({ 4, 2 }, 71) }));
    EXPECT_TRUE(checkGradient("dot", { { "transpose_b", "True" } }, { rnd({ 3, 4 }, 72), rnd({ 2, 4 }, 73) }));
    EXPECT_TRUE(checkGradient(
        "dot", { { "transpose_a", "True" }, { "transpose_b", "True" } }, { rnd({ 4, 3 }, 74), rnd({ 2, 4 }, 75) }));
    // N-d with transposes: lhs (k, …) folded as (k, m), rhs (…, k) as (n, k).
    EXPECT_TRUE(checkGradient("dot", { { "transpose_a", "True" }, { "transpose_b", "True" } },
        { rnd({ 4, 2, 3 }, 76), rnd({ 3, 2, 4 }, 77) }));
    EXPECT_TRUE(checkGradient("dot", { { "transpose_a", "True" } }, { rnd({ 4 }, 78), rnd({ 4, 3 }, 79) }));
    GradCheckOptions o;
    o.wanted = { false, true };
    EXPECT_TRUE(checkGradient("dot", { { "transpose_a", "True" } }, { rnd({ 4, 3 }, 80), rnd({ 4, 2 }, 81) }, o));
    o.wanted = { true, false };
    EXPECT_TRUE(checkGradient("dot", { { "transpose_b", "True" } }, { rnd({ 3, 4 }, 82), rnd({ 2, 4 }, 83) }, o));
}

TEST(Gradient, BatchDot)
{
    const Shape lhs[] = { { 2, 3, 4 }, { 2, 4, 3 }, { 2, 3, 4 }, { 2, 4, 3 } };
    const Shape rhs[] = { { 2, 4, 5 }, { 2, 4, 5 }, { 2, 5, 4 }, { 2, 5, 4 } };
    for (int t = 0; t < 4; ++t) {
        const AttrMap attrs
            = { { "transpose_a", (t & 1) ? "True" : "False" }, { "transpose_b", (t & 2) ? "True" : "False" } };
        EXPECT_TRUE(checkGradient("batch_dot", attrs, { rnd(lhs[t], 90 + t), rnd(rhs[t], 95 + t) })) << "variant " << t;
    }
    // Two leading batch axes.
    EXPECT_TRUE(checkGradient("batch_dot", {}, { rnd({ 2, 2, 2, 3 }, 99), rnd({ 2, 2, 3, 2 }, 100) }));
}

// ---- shape ---------------------------------------------------------------------------------

TEST(Gradient, ReshapeFamily)
{
    EXPECT_TRUE(checkGradient("Flatten", {}, { rnd({ 2, 3, 4 }, 110) }));
    EXPECT_TRUE(checkGradient("Reshape", { { "shape", "(4, -1)" } }, { rnd({ 2, 3, 4 }, 111) }));
    EXPECT_TRUE(checkGradient("Reshape", { { "shape", "(0, -3)" } }, { rnd({ 2, 3, 4 }, 112) }));
    EXPECT_TRUE(checkGradient("Reshape", { { "shape", "(-4, 1, 2, -2)" } }, { rnd({ 2, 3, 4 }, 113) }));
    EXPECT_TRUE(checkGradient("expand_dims", { { "axis", "-1" } }, { rnd({ 2, 3 }, 114) }));
    EXPECT_TRUE(checkGradient("squeeze", {}, { rnd({ 2, 1, 3, 1 }, 115) }));
    EXPECT_TRUE(checkGradient("squeeze", { { "axis", "3" } }, { rnd({ 2, 1, 3, 1 }, 116) }));
    EXPECT_TRUE(checkGradient("_copy", {}, { rnd({ 2, 3 }, 117) }));
}

TEST(Gradient, Transpose)
{
    EXPECT_TRUE(checkGradient("transpose", {}, { rnd({ 2, 3, 4 }, 120) }));
    EXPECT_TRUE(checkGradient("transpose", { { "axes", "(1, 0, 2)" } }, { rnd({ 2, 3, 4 }, 121) }));
    EXPECT_TRUE(checkGradient("transpose", { { "axes", "(2, 0, 1)" } }, { rnd({ 2, 3, 4 }, 122) }));
    EXPECT_TRUE(checkGradient("transpose", { { "axes", "(0, 2, 3, 1)" } }, { rnd({ 2, 3, 2, 4 }, 123) }));
    EXPECT_TRUE(checkGradient("transpose", { { "axes", "(1, 0)" } }, { rnd({ 1, 5 }, 124) }));
}

TEST(Gradient, Concat)
{
    EXPECT_TRUE(checkGradient("Concat", { { "num_args", "3" }, { "dim", "1" } },
        { rnd({ 2, 1, 3 }, 130), rnd({ 2, 2, 3 }, 131), rnd({ 2, 3, 3 }, 132) }));
    EXPECT_TRUE(
        checkGradient("Concat", { { "num_args", "2" }, { "dim", "0" } }, { rnd({ 1, 3 }, 133), rnd({ 2, 3 }, 134) }));
    EXPECT_TRUE(checkGradient(
        "Concat", { { "num_args", "2" }, { "dim", "-1" } }, { rnd({ 2, 2, 1 }, 135), rnd({ 2, 2, 3 }, 136) }));
    GradCheckOptions o;
    o.wanted = { false, true, false };
    EXPECT_TRUE(checkGradient("Concat", { { "num_args", "3" }, { "dim", "1" } },
        { rnd({ 2, 1 }, 137), rnd({ 2, 2 }, 138), rnd({ 2, 3 }, 139) }, o));
}

TEST(Gradient, SliceChannel)
{
    EXPECT_TRUE(checkGradient("SliceChannel", { { "num_outputs", "3" } }, { rnd({ 2, 3, 2 }, 140) }));
    EXPECT_TRUE(checkGradient("SliceChannel", { { "num_outputs", "2" }, { "axis", "-1" } }, { rnd({ 2, 3, 4 }, 141) }));
    EXPECT_TRUE(checkGradient("SliceChannel", { { "num_outputs", "2" }, { "axis", "0" } }, { rnd({ 4, 3 }, 142) }));
    EXPECT_TRUE(checkGradient("SliceChannel", { { "num_outputs", "3" }, { "axis", "1" }, { "squeeze_axis", "True" } },
        { rnd({ 2, 3, 2 }, 143) }));
}

TEST(Gradient, SliceChannelMissingOutputGradientIsZero)
{
    // Only output 1 of 3 has a gradient: the other thirds of the input get zeros.
    const AttrMap attrs = { { "num_outputs", "3" }, { "axis", "1" } };
    const Tensor x = rnd({ 2, 3 }, 144);
    const auto g = backwardPrefilled("SliceChannel", attrs, { x }, { Tensor(), values({ 2, 1 }, { 5, 6 }), Tensor() });
    expectValues(g[0], { 0, 5, 0, 0, 6, 0 });
}

TEST(Gradient, SliceAxis)
{
    EXPECT_TRUE(
        checkGradient("slice_axis", { { "axis", "1" }, { "begin", "1" }, { "end", "3" } }, { rnd({ 2, 4, 2 }, 150) }));
    EXPECT_TRUE(
        checkGradient("slice_axis", { { "axis", "0" }, { "begin", "-2" }, { "end", "None" } }, { rnd({ 3, 4 }, 151) }));
    EXPECT_TRUE(
        checkGradient("slice_axis", { { "axis", "-1" }, { "begin", "0" }, { "end", "-1" } }, { rnd({ 2, 3 }, 152) }));
}

TEST(Gradient, SliceAxisZerosOutsideTheSlice)
{
    const AttrMap attrs = { { "axis", "1" }, { "begin", "1" }, { "end", "2" } };
    const auto g = backwardPrefilled("slice_axis", attrs, { rnd({ 2, 3 }, 153) }, { values({ 2, 1 }, { 7, 8 }) });
    expectValues(g[0], { 0, 7, 0, 0, 8, 0 });
}

// ---- contract of every gradient here -------------------------------------------------------

TEST(Gradient, TensorOpsWriteEveryElement)
{
    for (const Case& c : everyOperator()) {
        const auto outs = invokeOp(c.op, c.attrs, c.inputs, KernelKind::Reference);
        const auto g = backwardPrefilled(c.op, c.attrs, c.inputs, onesLike(outs));
        for (size_t i = 0; i < g.size(); ++i)
            for (float v : g[i].values())
                ASSERT_FALSE(std::isnan(v)) << c.op << " input " << i;
    }
}

TEST(Gradient, TensorOpsZeroOutputGradientGivesZeros)
{
    for (const Case& c : everyOperator()) {
        const auto g = backwardPrefilled(c.op, c.attrs, c.inputs, {});
        for (size_t i = 0; i < g.size(); ++i)
            for (float v : g[i].values())
                ASSERT_EQ(v, 0.0f) << c.op << " input " << i;
    }
}

TEST(Gradient, TensorOpsSkipUnwantedInputs)
{
    // One input asked for at a time (the others null): the same values as with all of them.
    for (const Case& c : everyOperator()) {
        const auto outs = invokeOp(c.op, c.attrs, c.inputs, KernelKind::Reference);
        const auto all = invokeBackward(c.op, c.attrs, c.inputs, outs, onesLike(outs));
        for (size_t keep = 0; keep < c.inputs.size(); ++keep) {
            std::vector<bool> wanted(c.inputs.size(), false);
            wanted[keep] = true;
            const auto g = backwardPrefilled(c.op, c.attrs, c.inputs, onesLike(outs), wanted);
            for (int64_t e = 0; e < g[keep].size(); ++e)
                ASSERT_EQ(g[keep].at(e), all[keep].at(e)) << c.op << " input " << keep << " element " << e;
        }
    }
}
