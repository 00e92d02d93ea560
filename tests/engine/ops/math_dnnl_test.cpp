// oneDNN kernels of the math operators against their reference kernels, over shapes and attributes.

#include "math_test_util.h"

#include <cctype>
#include <cmath>

using namespace opscope;
using mathtest::Domain;

namespace {

struct DnnlCase {
    std::string op;
    AttrMap attrs;
    std::vector<Shape> shapes;
    std::vector<Domain> domains; // per input
    bool dnnlApplies = true; // false: the op falls back to the reference kernel for these shapes/attributes
    float rtol = 1e-5f;
};

std::string shapeTag(const Shape& s)
{
    std::string t;
    for (int64_t d : s.dims())
        t += (t.empty() ? "" : "x") + std::to_string(d);
    return t;
}

std::string caseName(const DnnlCase& c, size_t index)
{
    std::string n = c.op;
    for (const Shape& s : c.shapes)
        n += "_" + shapeTag(s);
    for (const auto& [k, v] : c.attrs) {
        std::string val;
        for (char ch : v)
            if (std::isalnum(static_cast<unsigned char>(ch)))
                val += ch;
            else if (ch == '-')
                val += 'm';
        n += "_" + k + val;
    }
    std::string clean;
    for (char ch : n)
        clean += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    return clean + "_" + std::to_string(index);
}

std::vector<DnnlCase> elemwiseCases()
{
    std::vector<DnnlCase> cases;
    const std::vector<Shape> sameShapes = { Shape({ 7 }), Shape({ 2, 3, 4 }), Shape({ 64, 1024 }) };
    for (const char* op : { "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div" })
        for (const Shape& s : sameShapes)
            cases.push_back({ op, {}, { s, s }, { Domain::Any, Domain::NonZero } });

    struct Pattern {
        Shape lhs, rhs;
        bool lhsBroadcast, rhsBroadcast;
    };
    const std::vector<Pattern> patterns = {
        { Shape({ 2, 3, 4 }), Shape({ 2, 1, 4 }), false, true },
        { Shape({ 2, 3, 4 }), Shape({ 4 }), false, true },
        { Shape({ 8, 64, 128 }), Shape({ 64, 1 }), false, true },
        { Shape({ 1, 3, 1 }), Shape({ 2, 3, 4 }), true, false },
        { Shape({ 128 }), Shape({ 16, 128 }), true, false },
        { Shape({ 3, 1 }), Shape({ 1, 4 }), true, true },
        { Shape({ 5, 6 }), Shape({ 5, 6 }), false, false },
    };
    for (const char* op : { "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
             "broadcast_minimum" }) {
        const bool commutes = std::string(op) != "broadcast_div";
        for (const auto& p : patterns) {
            const bool applies = !p.lhsBroadcast || (!p.rhsBroadcast && commutes);
            cases.push_back({ op, {}, { p.lhs, p.rhs }, { Domain::Any, Domain::NonZero }, applies });
        }
    }
    return cases;
}

std::vector<DnnlCase> scalarAndUnaryCases()
{
    std::vector<DnnlCase> cases;
    const std::vector<Shape> shapes = { Shape({ 5 }), Shape({ 2, 3, 4 }), Shape({ 32, 3, 33, 17 }) };
    const std::vector<std::pair<const char*, const char*>> scalarOps = {
        { "_plus_scalar", "2.5" },
        { "_minus_scalar", "-1.25" },
        { "_rminus_scalar", "3" },
        { "_mul_scalar", "-0.75" },
        { "_div_scalar", "0.3" },
        { "_rdiv_scalar", "1.5" },
        { "_power_scalar", "2" },
        { "_power_scalar", "0.5" },
        { "_power_scalar", "-1.3" },
    };
    for (const auto& [op, s] : scalarOps)
        for (const Shape& shape : shapes)
            cases.push_back({ op, { { "scalar", s } }, { shape }, { Domain::Positive }, true, 1e-5f });
    for (const char* op : { "exp", "square", "abs", "negative" })
        for (const Shape& shape : shapes)
            cases.push_back({ op, {}, { shape }, { Domain::Any } });
    for (const char* op : { "log", "sqrt" })
        for (const Shape& shape : shapes)
            cases.push_back({ op, {}, { shape }, { Domain::Positive } });
    for (const Shape& shape : shapes) {
        cases.push_back({ "clip", { { "a_min", "-0.5" }, { "a_max", "1.25" } }, { shape }, { Domain::Any } });
        cases.push_back({ "clip", { { "a_min", "1" }, { "a_max", "-1" } }, { shape }, { Domain::Any }, false });
    }
    return cases;
}

std::vector<DnnlCase> reduceCases()
{
    struct R {
        AttrMap attrs;
        bool innermost; // the reduced axes of a (2, 3, 4)-like input are its last ones
    };
    const std::vector<R> rs = {
        { {}, true },
        { { { "axis", "1" } }, false },
        { { { "axis", "-1" }, { "keepdims", "True" } }, true },
        { { { "axis", "(1, 2)" } }, true },
        { { { "axis", "(0, 2)" } }, false },
        { { { "axis", "1" }, { "exclude", "True" } }, false },
        { { { "axis", "(0, 1)" }, { "exclude", "True" }, { "keepdims", "True" } }, true },
    };
    std::vector<DnnlCase> cases;
    for (const char* op : { "sum", "mean", "max" })
        for (const R& r : rs)
            for (const Shape& s : { Shape({ 2, 3, 4 }), Shape({ 8, 33, 64 }) })
                // max has no oneDNN kernel (oneDNN drops NaN); sum and mean use it for innermost axes.
                cases.push_back(
                    { op, r.attrs, { s }, { Domain::Any }, std::string(op) != "max" && r.innermost, 1e-4f });
    return cases;
}

std::vector<DnnlCase> dotCases()
{
    auto t = [](bool a, bool b) { return AttrMap { { "transpose_a", boolAttr(a) }, { "transpose_b", boolAttr(b) } }; };
    return {
        { "dot", t(false, false), { Shape({ 3, 4 }), Shape({ 4, 5 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(true, false), { Shape({ 4, 3 }), Shape({ 4, 5 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(false, true), { Shape({ 3, 4 }), Shape({ 5, 4 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(true, true), { Shape({ 4, 3 }), Shape({ 5, 4 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(false, false), { Shape({ 64, 96 }), Shape({ 96, 80 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(true, true), { Shape({ 96, 64 }), Shape({ 80, 96 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(false, false), { Shape({ 50 }), Shape({ 50 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(false, false), { Shape({ 6 }), Shape({ 6, 7 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(false, false), { Shape({ 2, 3, 4 }), Shape({ 4, 5, 2 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(true, false), { Shape({ 4, 2, 3 }), Shape({ 4, 5 }) }, { Domain::Any, Domain::Any } },
        { "dot", t(false, true), { Shape({ 2, 3, 4 }), Shape({ 5, 2, 4 }) }, { Domain::Any, Domain::Any } },
        { "batch_dot", t(false, false), { Shape({ 2, 3, 4 }), Shape({ 2, 4, 5 }) }, { Domain::Any, Domain::Any } },
        { "batch_dot", t(true, false), { Shape({ 2, 4, 3 }), Shape({ 2, 4, 5 }) }, { Domain::Any, Domain::Any } },
        { "batch_dot", t(false, true), { Shape({ 2, 3, 4 }), Shape({ 2, 5, 4 }) }, { Domain::Any, Domain::Any } },
        { "batch_dot", t(true, true), { Shape({ 2, 4, 3 }), Shape({ 2, 5, 4 }) }, { Domain::Any, Domain::Any } },
        { "batch_dot", t(false, false), { Shape({ 8, 32, 48 }), Shape({ 8, 48, 40 }) }, { Domain::Any, Domain::Any } },
        { "batch_dot", t(true, true), { Shape({ 2, 3, 48, 32 }), Shape({ 2, 3, 40, 48 }) },
            { Domain::Any, Domain::Any } },
    };
}

std::vector<DnnlCase> allCases()
{
    std::vector<DnnlCase> all;
    for (auto&& part : { elemwiseCases(), scalarAndUnaryCases(), reduceCases(), dotCases() })
        all.insert(all.end(), part.begin(), part.end());
    return all;
}

const std::vector<DnnlCase>& cases()
{
    static const std::vector<DnnlCase> all = allCases();
    return all;
}

class MathDnnl : public ::testing::TestWithParam<size_t> { };

TEST_P(MathDnnl, MatchesReference)
{
    const DnnlCase& c = cases()[GetParam()];
    Generator gen(1000 + GetParam());
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < c.shapes.size(); ++i)
        inputs.push_back(mathtest::randomInput(c.shapes[i], c.domains[i], gen));

    EXPECT_EQ(mathtest::backendOf(c.op, c.attrs, c.shapes, KernelKind::Dnnl), c.dnnlApplies ? "dnnl" : "reference");
    const Tensor ref = invokeOp(c.op, c.attrs, inputs, KernelKind::Reference)[0];
    const Tensor dnn = invokeOp(c.op, c.attrs, inputs, KernelKind::Dnnl)[0];
    EXPECT_TRUE(test::tensorsNear(dnn, ref, 1e-5f, c.rtol));
    // A prepared kernel runs many times: a second call gives the same values.
    const Tensor again = invokeOp(c.op, c.attrs, inputs, KernelKind::Dnnl)[0];
    EXPECT_TRUE(test::tensorsNear(again, dnn, 0, 0));
}

std::vector<size_t> indices()
{
    std::vector<size_t> v(cases().size());
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = i;
    return v;
}

INSTANTIATE_TEST_SUITE_P(Math, MathDnnl, ::testing::ValuesIn(indices()),
    [](const ::testing::TestParamInfo<size_t>& info) { return caseName(cases()[info.param], info.param); });

// Auto picks oneDNN only where it pays: element-wise work of ~1M elements (64K for exp, log and
// pow), reductions of ~1M elements over innermost axes, products from 64K flops.
TEST(MathDnnlAuto, PicksOneDnnOnlyWhereItPays)
{
    using mathtest::backendOf;
    const Shape small({ 4, 8 }), mid({ 256, 1024 }), large({ 1024, 1024 });
    EXPECT_EQ(backendOf("elemwise_add", {}, { small, small }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("elemwise_add", {}, { mid, mid }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("elemwise_add", {}, { large, large }, KernelKind::Auto), "dnnl");
    EXPECT_EQ(backendOf("broadcast_mul", {}, { large, Shape({ 1024 }) }, KernelKind::Auto), "dnnl");
    EXPECT_EQ(backendOf("broadcast_mul", {}, { small, Shape({ 8 }) }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("exp", {}, { small }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("exp", {}, { mid }, KernelKind::Auto), "dnnl");
    EXPECT_EQ(backendOf("log", {}, { mid }, KernelKind::Auto), "dnnl");
    EXPECT_EQ(backendOf("abs", {}, { mid }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("_power_scalar", { { "scalar", "1.5" } }, { mid }, KernelKind::Auto), "dnnl");
    EXPECT_EQ(backendOf("_mul_scalar", { { "scalar", "2" } }, { mid }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("_mul_scalar", { { "scalar", "2" } }, { large }, KernelKind::Auto), "dnnl");
    EXPECT_EQ(backendOf("sum", { { "axis", "1" } }, { small }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("sum", { { "axis", "1" } }, { large }, KernelKind::Auto), "dnnl");
    EXPECT_EQ(backendOf("sum", { { "axis", "0" } }, { large }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("max", { { "axis", "1" } }, { large }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("dot", {}, { Shape({ 1, 64 }), Shape({ 64, 64 }) }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("dot", {}, { Shape({ 64, 64 }), Shape({ 64, 64 }) }, KernelKind::Auto), "dnnl");
    EXPECT_EQ(backendOf("batch_dot", {}, { Shape({ 2, 2, 3 }), Shape({ 2, 3, 2 }) }, KernelKind::Auto), "reference");
    EXPECT_EQ(backendOf("dot", {}, { large, large }, KernelKind::Reference), "reference");
}

// oneDNN 2.6 maps NaN to +inf in exp and to a bound in clip; the kernels restore NaN, also when
// run in place.
TEST(MathDnnlNaN, ExpAndClipKeepNaN)
{
    const Shape s({ 3, 5 });
    for (const auto& [op, attrs] : std::vector<std::pair<std::string, AttrMap>> {
             { "exp", {} }, { "clip", { { "a_min", "-1" }, { "a_max", "1" } } } }) {
        SCOPED_TRACE(op);
        Generator gen(3);
        Tensor x = Tensor::uniform(s, -2.0f, 2.0f, &gen);
        x.at(4) = NAN;
        x.at(7) = INFINITY;
        const Tensor ref = invokeOp(op, attrs, { x }, KernelKind::Reference)[0];
        ASSERT_TRUE(std::isnan(ref.at(4)));
        const Tensor dnn = invokeOp(op, attrs, { x }, KernelKind::Dnnl)[0];
        EXPECT_TRUE(test::tensorsNear(dnn, ref, 1e-5f, 1e-5f));

        const OpDef& def = OpRegistry::instance().get(op);
        auto params = def.parse(attrs);
        const std::vector<Shape> shapes = { s };
        auto kernel = def.makeKernel(*params, shapes, shapes, KernelKind::Dnnl);
        ASSERT_EQ(std::string(kernel->backend()), "dnnl");
        Tensor inPlace = x.copy();
        const Tensor* in[] = { &inPlace };
        Tensor* out[] = { &inPlace };
        RunContext ctx;
        kernel->run(in, out, ctx);
        EXPECT_TRUE(test::tensorsNear(inPlace, ref, 1e-5f, 1e-5f));
    }
}

} // namespace
