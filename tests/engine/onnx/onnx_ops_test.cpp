// ONNX operators in an engine graph: registry names apart from MXNet's, the slot names hooks use,
// and errors that name the node, the type or the index (the values themselves are checked by ONNX's
// conformance suite: tests/conformance).

#include "core/error.h"
#include "exec/executor.h"
#include "graph/graph.h"

#include <gtest/gtest.h>

using namespace opscope;

namespace {
AttrMap onnx(AttrMap extra, int inputs, int opset = 13)
{
    extra["__domain__"] = "ai.onnx";
    extra["__opset__"] = std::to_string(opset);
    extra["__ninputs__"] = std::to_string(inputs);
    return extra;
}

std::string runError(Graph& g, std::vector<Tensor> in)
{
    try {
        Executor ex(std::make_shared<Graph>(g));
        ex.run(in);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}
}

TEST(OnnxOps, ResolveApartFromMxnetOperatorsOfTheSameName)
{
    Graph g;
    const uint32_t x = g.addVariable("x");
    const uint32_t onnxFlatten = g.addOp("Flatten", "f", onnx({ { "axis", "2" } }, 1), { { x, 0, 0 } });
    const uint32_t mxnetFlatten = g.addOp("Flatten", "m", {}, { { x, 0, 0 } });
    g.setHeads({ { onnxFlatten, 0, 0 }, { mxnetFlatten, 0, 0 } });
    g.finalize();
    const auto shapes = g.inferShapes({ Shape({ 2, 3, 4 }) });
    EXPECT_EQ(shapes[g.entryId(*g.findNode("f"), 0)], Shape({ 6, 4 })); // ONNX: split at axis 2
    EXPECT_EQ(shapes[g.entryId(*g.findNode("m"), 0)], Shape({ 2, 12 })); // MXNet: keep axis 0
    const Node& f = g.node(*g.findNode("f"));
    EXPECT_EQ(f.opName(), "Flatten");
    EXPECT_EQ(g.outputName({ *g.findNode("f"), 0, 0 }), "f_output0");
    EXPECT_EQ(f.inputSlots, std::vector<std::string> { "input0" });
}

TEST(OnnxOps, ATypeAnOperatorDoesNotTakeIsRefusedNamingTheNode)
{
    Graph g;
    const uint32_t x = g.addVariable("x", { { "__dtype__", "6" } }); // int64
    const uint32_t s = g.addOp("Sqrt", "root", onnx({}, 1), { { x, 0, 0 } });
    g.setHeads({ { s, 0, 0 } });
    g.finalize();
    const std::string msg = runError(g, { Tensor::zeros(Shape({ 2 }), DType::Int64) });
    EXPECT_NE(msg.find("root"), std::string::npos) << msg;
    EXPECT_NE(msg.find("input 0 is int64; Sqrt takes float32, float64 or float16"), std::string::npos) << msg;
}

TEST(OnnxOps, AnIndexOutOfRangeNamesItAndTheBound)
{
    Graph g;
    const uint32_t data = g.addVariable("data");
    const uint32_t idx = g.addVariable("idx", { { "__dtype__", "6" } });
    const uint32_t gather = g.addOp("Gather", "pick", onnx({ { "axis", "0" } }, 2), { { data, 0, 0 }, { idx, 0, 0 } });
    g.setHeads({ { gather, 0, 0 } });
    g.finalize();
    const Tensor d = Tensor::fromValues(Shape({ 3 }), std::vector<float> { 1, 2, 3 });
    const Tensor ok = Tensor::fromTyped<int64_t>(Shape({ 2 }), std::vector<int64_t> { -1, 0 });
    Executor ex(std::make_shared<Graph>(g));
    std::vector<Tensor> in { d, ok };
    EXPECT_EQ(ex.run(in).outputs[0].toVector(), (std::vector<float> { 3, 1 })); // negative counts from the end
    const std::string msg
        = runError(g, { d, Tensor::fromTyped<int64_t>(Shape({ 1 }), std::vector<int64_t> { 7 }) });
    EXPECT_NE(msg.find("index 7 is outside [-3, 3)"), std::string::npos) << msg;
}

// Under static_alloc with nothing watched the kernels run without the step loop (Executor's
// unobserved path): a kernel's error still names its node, and the next run goes on.
TEST(OnnxOps, AnIndexOutOfRangeInAnUnwatchedStaticRunNamesTheNode)
{
    Graph g;
    const uint32_t data = g.addVariable("data");
    const uint32_t idx = g.addVariable("idx", { { "__dtype__", "6" } });
    const uint32_t gather = g.addOp("Gather", "pick", onnx({ { "axis", "0" } }, 2), { { data, 0, 0 }, { idx, 0, 0 } });
    const uint32_t twice = g.addOp("Add", "twice", onnx({}, 2), { { gather, 0, 0 }, { gather, 0, 0 } });
    g.setHeads({ { twice, 0, 0 } });
    g.finalize();
    ExecFlags flags;
    flags.static_alloc = true;
    Executor ex(std::make_shared<Graph>(g), flags);
    const Tensor d = Tensor::fromValues(Shape({ 3 }), std::vector<float> { 1, 2, 3 });
    std::vector<Tensor> in { d, Tensor::fromTyped<int64_t>(Shape({ 2 }), std::vector<int64_t> { -1, 0 }) };
    EXPECT_EQ(ex.run(in).outputs[0].toVector(), (std::vector<float> { 6, 2 }));
    in[1] = Tensor::fromTyped<int64_t>(Shape({ 2 }), std::vector<int64_t> { 1, 7 });
    try {
        ex.run(in);
        FAIL() << "an index outside the data was taken";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("pick"), std::string::npos) << msg;
        EXPECT_NE(msg.find("index 7 is outside [-3, 3)"), std::string::npos) << msg;
    }
    in[1] = Tensor::fromTyped<int64_t>(Shape({ 2 }), std::vector<int64_t> { 2, 1 });
    EXPECT_EQ(ex.run(in).outputs[0].toVector(), (std::vector<float> { 6, 4 }));
}

TEST(OnnxOps, AShapeInputMustBeKnownBeforeTheRun)
{
    Graph g;
    const uint32_t x = g.addVariable("x");
    const uint32_t shape = g.addVariable("shape", { { "__dtype__", "6" } });
    try {
        g.addOp("Reshape", "r", onnx({}, 2), { { x, 0, 0 }, { shape, 0, 0 } });
        FAIL() << "a Reshape without its shape's value was accepted";
    } catch (const AttributeError& e) {
        EXPECT_NE(std::string(e.what()).find("input 1 ('shape') must be known before the run"), std::string::npos)
            << e.what();
    }
    // With the value written beside it (what the importer does), it infers.
    const uint32_t r = g.addOp("Reshape", "r", onnx({ { "__in1__", "[-1, 2]" } }, 2), { { x, 0, 0 }, { shape, 0, 0 } });
    g.setHeads({ { r, 0, 0 } });
    g.finalize();
    const auto shapes = g.inferShapes({ Shape({ 3, 4 }), Shape({ 2 }) });
    EXPECT_EQ(shapes[g.entryId(*g.findNode("r"), 0)], Shape({ 6, 2 }));
}
