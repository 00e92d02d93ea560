// Element types: conversions, typed tensors, .npy round trips of every type, and type inference
// refusing a type an operator does not take (naming the node).

#include "core/error.h"
#include "exec/executor.h"
#include "graph/graph.h"
#include "io/npy.h"
#include "tensor/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

using namespace opscope;

TEST(DType, NamesSizesAndMxnetCodesRoundTrip)
{
    for (int i = 0; i < kNumDTypes; ++i) {
        const auto t = static_cast<DType>(i);
        SCOPED_TRACE(dtypeName(t));
        EXPECT_EQ(dtypeFromName(dtypeName(t)), t);
        EXPECT_EQ(dtypeFromMxnetCode(mxnetCode(t)), t);
    }
    EXPECT_EQ(dtypeSize(DType::Float16), 2u);
    EXPECT_EQ(dtypeSize(DType::Int64), 8u);
    EXPECT_EQ(dtypeSize(DType::Bool), 1u);
    EXPECT_FALSE(dtypeFromName("complex64").has_value());
    EXPECT_FALSE(dtypeFromMxnetCode(42).has_value());
}

TEST(DType, HalfConvertsExactlyAndRoundsToNearestEven)
{
    EXPECT_EQ(halfToFloat(floatToHalf(1.0f)), 1.0f);
    EXPECT_EQ(halfToFloat(floatToHalf(-2.5f)), -2.5f);
    EXPECT_EQ(halfToFloat(floatToHalf(65504.0f)), 65504.0f); // largest finite half
    EXPECT_TRUE(std::isinf(halfToFloat(floatToHalf(70000.0f))));
    EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
    EXPECT_EQ(halfToFloat(0x0001), 5.9604645e-08f); // smallest subnormal
    // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties go to the even one, 1.
    EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 1.0f / 2048)), 1.0f);
    EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);
}

TEST(DType, AstypeConvertsAsNumPyDoes)
{
    const Tensor f = Tensor::fromValues(Shape({ 5 }), std::vector<float> { -1.7f, 0.0f, 0.4f, 2.9f, 300.0f });
    const Tensor i = f.astype(DType::Int32);
    EXPECT_EQ(i.dtype(), DType::Int32);
    const int32_t* iv = i.dataAs<int32_t>();
    EXPECT_EQ((std::vector<int32_t>(iv, iv + 5)), (std::vector<int32_t> { -1, 0, 0, 2, 300 })); // truncation
    const Tensor b = f.astype(DType::Bool);
    const bool* bv = b.dataAs<bool>();
    EXPECT_EQ((std::vector<bool>(bv, bv + 5)), (std::vector<bool> { true, false, true, true, true }));
    const Tensor u = f.astype(DType::UInt8); // out of range saturates instead of being undefined
    EXPECT_EQ(u.dataAs<uint8_t>()[0], 0);
    EXPECT_EQ(u.dataAs<uint8_t>()[4], 255);
    EXPECT_EQ(i.astype(DType::Float64).dataAs<double>()[3], 2.0);
}

TEST(DType, FloatAccessorsRefuseAnotherTypeNamingIt)
{
    const Tensor t = Tensor::zeros(Shape({ 2 }), DType::Int64);
    try {
        (void)t.data();
        FAIL() << "int64 data read as float32";
    } catch (const TypeError& e) {
        EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)t.dataAs<int32_t>(), TypeError);
    EXPECT_NO_THROW((void)t.dataAs<int64_t>());
    EXPECT_EQ(t.bytes(), 16u);
}

TEST(DType, ScalarShapeHasOneElement)
{
    const Tensor s = Tensor::fromTyped<int64_t>(Shape::scalar(), std::vector<int64_t> { 7 });
    EXPECT_TRUE(s.shape().isScalar());
    EXPECT_EQ(s.size(), 1);
    EXPECT_EQ(s.dataAs<int64_t>()[0], 7);
}

TEST(Npy, EveryTypeRoundTripsThroughAFile)
{
    const auto path = std::filesystem::temp_directory_path() / "opscope_dtype_roundtrip.npy";
    const Tensor base = Tensor::fromValues(Shape({ 2, 3 }), std::vector<float> { 0, 1, 0, 3, 4, 5 });
    for (int k = 0; k < kNumDTypes; ++k) {
        const auto dt = static_cast<DType>(k);
        SCOPED_TRACE(dtypeName(dt));
        const Tensor t = base.astype(dt);
        writeNpy(path.string(), t.view());
        const Tensor r = readNpy(path.string());
        EXPECT_EQ(r.dtype(), dt);
        EXPECT_EQ(r.shape(), t.shape());
        ASSERT_EQ(r.bytes(), t.bytes());
        EXPECT_EQ(std::memcmp(r.raw(), t.raw(), t.bytes()), 0);
    }
    const Tensor scalar = Tensor::fromTyped<double>(Shape::scalar(), std::vector<double> { 2.5 });
    writeNpy(path.string(), scalar.view());
    const Tensor r = readNpy(path.string());
    EXPECT_TRUE(r.shape().isScalar()); // a 0-d array stays 0-d
    EXPECT_EQ(r.dataAs<double>()[0], 2.5);
    std::filesystem::remove(path);
}

TEST(GraphTypes, AnOperatorRefusesATypeItDoesNotTakeNamingTheNode)
{
    Graph g;
    const uint32_t x = g.addVariable("x");
    const uint32_t a = g.addOp("Activation", "relu1", { { "act_type", "relu" } }, { { x, 0, 0 } });
    g.setHeads({ { a, 0, 0 } });
    g.finalize();
    EXPECT_EQ(g.inferTypes(), (std::vector<DType> { DType::Float32, DType::Float32 }));
    try {
        g.inferTypes({ DType::Int64 });
        FAIL() << "int64 accepted by a float32 operator";
    } catch (const TypeError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("relu1"), std::string::npos) << msg;
        EXPECT_NE(msg.find("int64"), std::string::npos) << msg;
    }
    // The executor checks the same before it runs anything: no silent conversion.
    Executor ex(std::make_shared<Graph>(g));
    std::vector<Tensor> in { Tensor::zeros(Shape({ 2 }), DType::Float64) };
    EXPECT_THROW(ex.run(in), TypeError);
}

TEST(GraphTypes, DeclaredTypeComesFromMxnetDtypeAttribute)
{
    Graph g;
    const uint32_t x = g.addVariable("x", { { "__dtype__", "1" } });
    const uint32_t y = g.addVariable("y", { { "__dtype__", "99" } });
    const uint32_t s = g.addOp("elemwise_add", "sum", {}, { { x, 0, 0 }, { y, 0, 0 } });
    g.setHeads({ { s, 0, 0 } });
    g.finalize();
    EXPECT_EQ(g.declaredType(g.variables()[0]), DType::Float64);
    EXPECT_THROW(g.declaredType(g.variables()[1]), AttributeError);
}
