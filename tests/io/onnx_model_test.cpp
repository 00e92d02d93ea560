// The ONNX importer on small files (tests/fixtures/onnx/make_onnx_fixtures.py): what it builds, and
// every kind of bad file ending in an error that names the file and what is wrong.

#include "common/test_paths.h"
#include "core/error.h"
#include "exec/executor.h"
#include "io/onnx_model.h"
#include "io/onnx_tensor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace opscope;

namespace {
std::string loadError(const std::string& file)
{
    try {
        OnnxDocument::read(test::fixture("onnx/" + file));
    } catch (const FileError& e) {
        return e.what();
    }
    return "(loaded)";
}

// Runs a built graph: inputs by name, every other variable from the constants.
std::vector<Tensor> runBuilt(OnnxGraph& b, const std::map<std::string, Tensor>& inputs = {})
{
    std::vector<Tensor> vars;
    for (uint32_t v : b.graph.variables()) {
        const std::string& n = b.graph.node(v).name;
        vars.push_back(inputs.count(n) ? inputs.at(n) : b.constants.at(n));
    }
    Executor ex(std::make_shared<Graph>(b.graph));
    return ex.run(vars).outputs;
}
}

TEST(OnnxModel, BadFilesNameTheFileAndWhatIsWrong)
{
    auto expect = [](const std::string& file, const std::string& needle) {
        const std::string msg = loadError(file);
        EXPECT_NE(msg.find(file), std::string::npos) << msg;
        EXPECT_NE(msg.find(needle), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    };
    expect("truncated.onnx", "not a valid ONNX model (protobuf parse error");
    expect("checker_fails.onnx", "fails ONNX's checker");
    expect("checker_fails.onnx", "nowhere");
    expect("opset18.onnx", "opset 18 is newer than this build supports (7 to 17)");
    expect("external_missing.onnx", "missing_weights.bin");
    expect("no_such_file.onnx", "no such file");
}

TEST(OnnxModel, EveryUnsupportedOperatorIsNamedWithItsNodesAtLoad)
{
    const std::string msg = loadError("unsupported_ops.onnx");
    EXPECT_NE(msg.find("unsupported operators"), std::string::npos) << msg;
    EXPECT_NE(msg.find("NonMaxSuppression (nms_a, nms_b)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("StringNormalizer (StringNormalizer_0)"), std::string::npos) << msg;
}

TEST(OnnxModel, ConstantsOfEveryTypeAreVariablesWithTheirValues)
{
    const OnnxDocument doc = OnnxDocument::read(test::fixture("onnx/constants.onnx"));
    EXPECT_EQ(doc.opset(), 13);
    EXPECT_EQ(doc.producer(), "opscope-fixtures");
    EXPECT_TRUE(doc.inputs().empty());
    OnnxGraph b = doc.build({});
    EXPECT_EQ(b.outputNames, (std::vector<std::string> { "c", "h" }));
    const std::vector<Tensor> out = runBuilt(b);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].dtype(), DType::Int64);
    EXPECT_EQ(out[0].shape(), Shape({ 2, 2 }));
    EXPECT_EQ(out[0].dataAs<int64_t>()[1], -2);
    EXPECT_EQ(out[1].dtype(), DType::Float16);
    EXPECT_EQ(static_cast<float>(out[1].dataAs<Half>()[1]), 65504.0f);
    const Node& c = b.graph.node(*b.graph.findNode("c"));
    EXPECT_TRUE(c.isVariable());
    EXPECT_EQ(c.attrs.at("__folded__"), "Constant Constant_0"); // unnamed nodes: <op_type>_<n>
}

TEST(OnnxModel, ExternalDataIsReadFromBesideTheModel)
{
    const OnnxDocument doc = OnnxDocument::read(test::fixture("onnx/external_present.onnx"));
    OnnxGraph b = doc.build({});
    const std::vector<Tensor> out = runBuilt(b);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].toVector(), (std::vector<float> { 0, 1, 2, 3 }));
}

TEST(OnnxModel, TensorFilesOfTheConformanceSuiteAreRead)
{
    const std::string dir = "/usr/share/libonnx-testdata/data/node/test_abs/test_data_set_0";
    if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " is missing (Debian package libonnx-testdata)";
    std::string name;
    const Tensor t = readTensorPb(dir + "/input_0.pb", &name);
    EXPECT_EQ(name, "x");
    EXPECT_EQ(t.dtype(), DType::Float32);
    EXPECT_EQ(t.shape(), Shape({ 3, 4, 5 }));
    // Garbage is a FileError naming the file.
    const auto bad = std::filesystem::temp_directory_path() / "opscope_bad_tensor.pb";
    std::ofstream(bad) << "\xff\xff\xff\xff garbage";
    EXPECT_THROW(readTensorPb(bad.string()), FileError);
    std::filesystem::remove(bad);
}

TEST(OnnxTypes, CodesMapBothWays)
{
    for (int k = 0; k < kNumDTypes; ++k) {
        const auto t = static_cast<DType>(k);
        EXPECT_EQ(dtypeFromOnnx(onnxTypeCode(t)), t);
    }
    EXPECT_FALSE(dtypeFromOnnx(16).has_value()); // bfloat16
    EXPECT_EQ(onnxTypeName(16), "BFLOAT16");
    EXPECT_TRUE(isOnnxPath("a/b/Model.ONNX"));
    EXPECT_FALSE(isOnnxPath("model-symbol.json"));
}

// IR 3 (early PyTorch, CNTK) lists initializers among the graph inputs: such an input is a
// parameter with the file's value, not an input the user must give.
TEST(OnnxModel, AnIr3InputWithAnInitializerIsAParameter)
{
    const OnnxDocument doc = OnnxDocument::read(test::fixture("onnx/ir3_initializer_input.onnx"));
    EXPECT_EQ(doc.irVersion(), 3);
    ASSERT_EQ(doc.inputs().size(), 1u);
    EXPECT_EQ(doc.inputs()[0].name, "x");
    EXPECT_EQ(doc.inputs()[0].describe(), "(1, 2)");
    OnnxGraph b = doc.build({ Shape({ 1, 2 }) });
    // Shape of x and Size of w are computed while building.
    EXPECT_EQ(b.foldedNodes, 2);
    const std::vector<Tensor> out = runBuilt(b, { { "x", Tensor::zeros(Shape({ 1, 2 })) } });
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].dataAs<int64_t>()[1], 2);
    EXPECT_EQ(out[1].dataAs<int64_t>()[0], 3);
    // A shape the model contradicts names the input and both shapes.
    try {
        doc.build({ Shape({ 1, 3 }) });
        FAIL() << "accepted";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("input 'x': the model declares (1, 2), given (1, 3)"), std::string::npos) << e.what();
    }
}
