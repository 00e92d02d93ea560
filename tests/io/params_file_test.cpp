// .params (NDArray list) reading and writing: the real files, every record version and dtype,
// and broken files (truncated at every byte, wrong magic, sparse, absurd sizes).

#include "common/test_paths.h"
#include "io/io_test_util.h"
#include "io/params_file.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <map>

using namespace opscope;
using namespace opscope::test;

namespace {

constexpr uint32_t kV1 = 0xF993fac8;
constexpr uint32_t kV2 = 0xF993fac9;
constexpr uint32_t kV3 = 0xF993faca;

Bytes header(uint64_t count)
{
    Bytes b;
    b.u64(0x112).u64(0).u64(count);
    return b;
}

// A dense V2/V3 record header up to and including the type flag.
Bytes& record(Bytes& b, uint32_t magic, const std::vector<int64_t>& shape, int32_t typeFlag)
{
    b.u32(magic).i32(0).i32(static_cast<int32_t>(shape.size()));
    for (int64_t d : shape)
        b.i64(d);
    return b.i32(1).i32(0).i32(typeFlag);
}

std::map<std::string, Tensor> byName(const NamedTensors& arrays)
{
    std::map<std::string, Tensor> m;
    for (const auto& [n, t] : arrays)
        m[n] = t;
    return m;
}

NamedTensors smallArrays()
{
    return { { "arg:w", Tensor::fromValues(Shape({ 2, 3 }), std::vector<float> { 1, -2, 3.5f, 4, 5, 6 }) },
        { "aux:m", Tensor::fromValues(Shape({ 2 }), std::vector<float> { 0.25f, -0.5f }) } };
}

} // namespace

TEST(ParamsFile, MnistExportV2WithArgPrefixes)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-0035.params");
    const NamedTensors arrays = loadParams(shared("models/mnist-0035.params"));
    ASSERT_EQ(arrays.size(), 8u);
    const auto m = byName(arrays);
    EXPECT_EQ(m.at("arg:hybridsequential9_conv0_weight").shape(), Shape({ 10, 1, 5, 5 }));
    EXPECT_EQ(m.at("arg:hybridsequential9_conv1_weight").shape(), Shape({ 25, 10, 5, 5 }));
    EXPECT_EQ(m.at("arg:hybridsequential9_dense0_weight").shape(), Shape({ 20, 400 }));
    EXPECT_EQ(m.at("arg:hybridsequential9_dense1_bias").shape(), Shape({ 10 }));
    for (const auto& [name, t] : arrays) {
        EXPECT_EQ(name.rfind("arg:", 0), 0u) << name;
        for (float v : t.values())
            ASSERT_TRUE(std::isfinite(v)) << name;
    }
}

TEST(ParamsFile, LenetExport)
{
    OPSCOPE_NEEDS_SHARED("models/lenet-0001.params");
    const auto m = byName(loadParams(shared("models/lenet-0001.params")));
    ASSERT_EQ(m.size(), 8u);
    EXPECT_EQ(m.at("arg:hybridsequential0_conv0_weight").shape(), Shape({ 5, 1, 5, 5 }));
    EXPECT_EQ(m.at("arg:hybridsequential0_dense0_weight").shape(), Shape({ 32, 80 }));
    EXPECT_EQ(m.at("arg:hybridsequential0_dense1_weight").shape(), Shape({ 10, 32 }));
}

// MXNet 0.9: legacy records (the first word is the ndim, dimensions are uint32).
TEST(ParamsFile, LegacyMlpRecords)
{
    OPSCOPE_NEEDS_SHARED("models/legacy-mlp-0001.params");
    const NamedTensors arrays = loadParams(shared("models/legacy-mlp-0001.params"));
    ASSERT_EQ(arrays.size(), 2u);
    EXPECT_EQ(arrays[0].first, "arg:pred_bias");
    EXPECT_EQ(arrays[0].second.shape(), Shape({ 10 }));
    EXPECT_EQ(arrays[1].first, "arg:pred_weight");
    EXPECT_EQ(arrays[1].second.shape(), Shape({ 10, 1 }));
    EXPECT_FLOAT_EQ(arrays[1].second.at(0), std::bit_cast<float>(0x3a7fec60u));
}

// apache/mxnet tests/python/unittest/legacy_ndarray.v0: six unnamed arange(128) arrays.
TEST(ParamsFile, LegacyNdarrayV0)
{
    OPSCOPE_NEEDS_SHARED("models/legacy-ndarray.v0");
    const NamedTensors arrays = loadParams(shared("models/legacy-ndarray.v0"));
    ASSERT_EQ(arrays.size(), 6u);
    for (const auto& [name, t] : arrays) {
        EXPECT_EQ(name, "");
        ASSERT_EQ(t.shape(), Shape({ 128 }));
        for (int i = 0; i < 128; ++i)
            ASSERT_EQ(t.at(i), static_cast<float>(i));
    }
}

TEST(ParamsFile, EveryDtypeBecomesFloat32)
{
    struct Case {
        int32_t flag;
        Bytes data;
        std::vector<float> expected;
    };
    std::vector<Case> cases;
    cases.push_back({ 0, Bytes().put(1.5f).put(-2.0f), { 1.5f, -2.0f } });
    cases.push_back({ 1, Bytes().put(0.1).put(-1e10), { 0.1f, -1e10f } });
    // float16: 1, -2.5, 65504 (largest), 2^-24 (smallest subnormal)
    cases.push_back(
        { 2, Bytes().put<uint16_t>(0x3c00).put<uint16_t>(0xc100).put<uint16_t>(0x7bff).put<uint16_t>(0x0001),
            { 1.0f, -2.5f, 65504.0f, std::ldexp(1.0f, -24) } });
    cases.push_back({ 3, Bytes().put<uint8_t>(0).put<uint8_t>(255), { 0, 255 } });
    cases.push_back({ 4, Bytes().put<int32_t>(-7).put<int32_t>(1 << 20), { -7, 1 << 20 } });
    cases.push_back({ 5, Bytes().put<int8_t>(-128).put<int8_t>(5), { -128, 5 } });
    cases.push_back({ 6, Bytes().put<int64_t>(-3).put<int64_t>(1LL << 40), { -3, std::ldexp(1.0f, 40) } });
    cases.push_back({ 7, Bytes().put<uint8_t>(0).put<uint8_t>(2), { 0, 1 } });
    cases.push_back({ 8, Bytes().put<int16_t>(-300).put<int16_t>(300), { -300, 300 } });
    cases.push_back({ 9, Bytes().put<uint16_t>(65535).put<uint16_t>(1), { 65535, 1 } });
    cases.push_back({ 10, Bytes().put<uint32_t>(4000000000u).put<uint32_t>(9), { 4e9f, 9 } });
    cases.push_back({ 11, Bytes().put<uint64_t>(1ULL << 63).put<uint64_t>(2), { std::ldexp(1.0f, 63), 2 } });
    // bfloat16: 1, -3, 0.15625
    cases.push_back(
        { 12, Bytes().put<uint16_t>(0x3f80).put<uint16_t>(0xc040).put<uint16_t>(0x3e20), { 1, -3, 0.15625f } });
    for (const Case& c : cases) {
        SCOPED_TRACE("type_flag " + std::to_string(c.flag));
        Bytes b = header(1);
        record(b, kV2, { static_cast<int64_t>(c.expected.size()) }, c.flag).raw(c.data.str()).u64(1).name("x");
        const NamedTensors arrays = parseParams(b.str(), "dtypes.params");
        ASSERT_EQ(arrays.size(), 1u);
        EXPECT_EQ(arrays[0].second.toVector(), c.expected);
    }
}

TEST(ParamsFile, V3V1AndLegacyRecords)
{
    Bytes b = header(6);
    record(b, kV3, { 2, 1 }, 0).put(1.0f).put(2.0f);
    b.u32(kV3).i32(0).i32(-1); // V3 empty: ndim -1, nothing follows
    b.u32(kV3).i32(0).i32(0).i32(1).i32(0).i32(0).put(7.0f); // V3 scalar
    record(b, kV3, { 2, 0 }, 0); // V3 zero-size: no data
    b.u32(kV1).i32(1).i64(3).i32(1).i32(0).i32(4).put<int32_t>(1).put<int32_t>(2).put<int32_t>(3); // V1
    b.u32(2).u32(1).u32(2).i32(2).i32(0).i32(0).put(5.0f).put(6.0f); // legacy, on gpu(0)
    b.u64(0);
    const NamedTensors a = parseParams(b.str(), "mixed.params");
    ASSERT_EQ(a.size(), 6u);
    EXPECT_EQ(a[0].second.shape(), Shape({ 2, 1 }));
    EXPECT_EQ(a[0].second.toVector(), (std::vector<float> { 1, 2 }));
    EXPECT_FALSE(a[1].second.defined());
    EXPECT_EQ(a[2].second.shape(), Shape({ 1 }));
    EXPECT_EQ(a[2].second.at(0), 7.0f);
    EXPECT_EQ(a[3].second.shape(), Shape({ 2, 0 }));
    EXPECT_EQ(a[4].second.toVector(), (std::vector<float> { 1, 2, 3 }));
    EXPECT_EQ(a[5].second.shape(), Shape({ 1, 2 }));
    EXPECT_EQ(a[5].second.toVector(), (std::vector<float> { 5, 6 }));
}

// V2 empty arrays: ndim 0, or an unknown (0) dimension; the record ends after the shape.
TEST(ParamsFile, V2EmptyArrays)
{
    Bytes b = header(3);
    b.u32(kV2).i32(0).i32(0);
    b.u32(kV2).i32(0).i32(2).i64(3).i64(0);
    record(b, kV2, { 1 }, 0).put(9.0f);
    b.u64(3).name("arg:a").name("arg:b").name("aux:c");
    const NamedTensors a = parseParams(b.str(), "empty.params");
    ASSERT_EQ(a.size(), 3u);
    EXPECT_FALSE(a[0].second.defined());
    EXPECT_FALSE(a[1].second.defined());
    EXPECT_EQ(a[2].second.toVector(), std::vector<float> { 9 });
    EXPECT_EQ(a[2].first, "aux:c");
}

TEST(ParamsFile, SaveThenLoadIsIdentical)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-0035.params");
    NamedTensors arrays = smallArrays();
    arrays.emplace_back("arg:big", Tensor::uniform(Shape({ 3, 4, 5, 2 }), -10, 10));
    arrays.emplace_back("arg:special",
        Tensor::fromValues(Shape({ 4 }),
            std::vector<float> { std::numeric_limits<float>::infinity(), -0.0f,
                std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max() }));
    arrays.emplace_back("arg:none", Tensor());
    const std::string path = tempPath("round.params");
    saveParams(path, arrays);
    const NamedTensors back = loadParams(path);
    ASSERT_EQ(back.size(), arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
        SCOPED_TRACE(arrays[i].first);
        EXPECT_EQ(back[i].first, arrays[i].first);
        ASSERT_EQ(back[i].second.defined(), arrays[i].second.defined());
        if (!arrays[i].second.defined()) continue;
        EXPECT_EQ(back[i].second.shape(), arrays[i].second.shape());
        const auto x = back[i].second.toVector(), y = arrays[i].second.toVector();
        EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0);
    }
    // MXNet's exact V2 layout: list magic, reserved, count, then the first record.
    const std::string bytes = readBytes(path);
    Bytes expected = header(arrays.size());
    record(expected, kV2, { 2, 3 }, 0);
    EXPECT_EQ(bytes.substr(0, expected.size()), expected.str());
    // A re-save of the real mnist file reproduces it byte for byte.
    const std::string mnist = readBytes(shared("models/mnist-0035.params"));
    EXPECT_EQ(serializeParams(parseParams(mnist, "mnist")), mnist);
}

TEST(ParamsFile, UnnamedListWritesNoNames)
{
    const NamedTensors arrays { { "", Tensor::ones(Shape({ 2 })) }, { "", Tensor::zeros(Shape({ 1 })) } };
    const std::string bytes = serializeParams(arrays);
    EXPECT_EQ(bytes.substr(bytes.size() - 8), Bytes().u64(0).str());
    const NamedTensors back = parseParams(bytes, "list");
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].first, "");
    EXPECT_EQ(back[1].second.toVector(), std::vector<float> { 0 });
}

TEST(ParamsFile, StripPrefix)
{
    EXPECT_EQ(stripParamPrefix("arg:conv0_weight"), "conv0_weight");
    EXPECT_EQ(stripParamPrefix("aux:bn_moving_var"), "bn_moving_var");
    EXPECT_EQ(stripParamPrefix("dense0_bias"), "dense0_bias");
    EXPECT_EQ(stripParamPrefix("arg"), "arg");
    EXPECT_EQ(stripParamPrefix("argx:y"), "argx:y");
}

// ---------------------------------------------------------------------------------------------

// Every proper prefix of a valid file is an error naming the file and a byte offset.
TEST(ParamsFileErrors, TruncatedAtEveryByte)
{
    const std::string full = serializeParams(smallArrays());
    ASSERT_NO_THROW(parseParams(full, "small.params"));
    for (size_t n = 0; n < full.size(); ++n) {
        SCOPED_TRACE(n);
        EXPECT_TRUE(throwsWith<FileError>(
            [&] { parseParams(full.substr(0, n), "small.params"); }, { "small.params: byte ", "file ends early" }));
    }
    // A cut inside the first dimension reports where the dimension starts and what it is.
    EXPECT_TRUE(throwsWith<FileError>(
        [&] { parseParams(full.substr(0, 40), "small.params"); }, { "byte 36", "array 0 shape dimension 0" }));
}

TEST(ParamsFileErrors, LeftOverBytes)
{
    const std::string full = serializeParams(smallArrays());
    EXPECT_TRUE(throwsWith<FileError>([&] { parseParams(full + "xyz", "extra.params"); },
        { "extra.params", "byte " + std::to_string(full.size()), "3 bytes left over" }));
}

TEST(ParamsFileErrors, WrongMagic)
{
    std::string bytes = serializeParams(smallArrays());
    bytes[0] = 0x13;
    EXPECT_TRUE(
        throwsWith<FileError>([&] { parseParams(bytes, "bad.params"); }, { "bad.params: byte 0", "magic 0x113" }));
    // A bad record magic that cannot be a legacy ndim either.
    Bytes b = header(1);
    b.u32(0xdeadbeef);
    EXPECT_TRUE(throwsWith<FileError>([&] { parseParams(b.str(), "rec.params"); }, { "byte 24", "0xdeadbeef" }));
}

TEST(ParamsFileErrors, ASymbolFileIsNotAParamsFile)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json");
    EXPECT_TRUE(throwsWith<FileError>(
        [&] { loadParams(shared("models/mnist-symbol.json")); }, { "mnist-symbol.json", "magic" }));
}

TEST(ParamsFileErrors, SparseStorage)
{
    for (int32_t stype : { 1, 2 }) {
        Bytes b = header(1);
        b.u32(kV2).i32(stype).i32(1).i64(4);
        EXPECT_TRUE(throwsWith<FileError>([&] { parseParams(b.str(), "sparse.params"); },
            { "sparse.params: byte 28", "sparse", stype == 1 ? "row_sparse" : "csr" }));
    }
    Bytes b = header(1);
    b.u32(kV3).i32(7);
    EXPECT_TRUE(throwsWith<FileError>([&] { parseParams(b.str(), "s.params"); }, { "byte 28", "storage type 7" }));
}

TEST(ParamsFileErrors, UnknownTypeOrDevice)
{
    Bytes b = header(1);
    record(b, kV2, { 1 }, 13).put(0.0f).u64(0);
    EXPECT_TRUE(throwsWith<FileError>([&] { parseParams(b.str(), "t.params"); }, { "byte 52", "type flag 13" }));
    Bytes d = header(1);
    d.u32(kV2).i32(0).i32(1).i64(1).i32(9).i32(0).i32(0).put(0.0f).u64(0);
    EXPECT_TRUE(throwsWith<FileError>([&] { parseParams(d.str(), "d.params"); }, { "byte 44", "device type 9" }));
}

// Sizes are checked against the bytes left, before anything is allocated.
TEST(ParamsFileErrors, AbsurdSizes)
{
    EXPECT_TRUE(throwsWith<FileError>(
        [&] { parseParams(header(1ULL << 60).u64(0).str(), "count.params"); }, { "byte 16", "array count" }));
    Bytes dims = header(1);
    record(dims, kV2, { 1LL << 40, 1LL << 40 }, 0).u64(0);
    EXPECT_TRUE(
        throwsWith<FileError>([&] { parseParams(dims.str(), "dims.params"); }, { "dims.params", "needs more data" }));
    Bytes ndim = header(1);
    ndim.u32(kV2).i32(0).i32(1000000);
    EXPECT_TRUE(
        throwsWith<FileError>([&] { parseParams(ndim.str(), "ndim.params"); }, { "byte 32", "1000000 dimensions" }));
    Bytes neg = header(1);
    neg.u32(kV2).i32(0).i32(1).i64(-5);
    EXPECT_TRUE(throwsWith<FileError>([&] { parseParams(neg.str(), "neg.params"); }, { "byte 36", "dimension -5" }));
    Bytes name = header(1);
    record(name, kV2, { 1 }, 0).put(1.0f).u64(1).u64(~0ULL);
    EXPECT_TRUE(throwsWith<FileError>([&] { parseParams(name.str(), "name.params"); }, { "byte 68", "name 0" }));
    Bytes names = header(1);
    record(names, kV2, { 1 }, 0).put(1.0f).u64(2);
    EXPECT_TRUE(throwsWith<FileError>([&] { parseParams(names.str(), "k.params"); }, { "byte 60", "name count 2" }));
}

TEST(ParamsFileErrors, MissingFile)
{
    EXPECT_TRUE(
        throwsWith<FileError>([&] { loadParams("/nonexistent/x-0000.params"); }, { "/nonexistent/x-0000.params" }));
    EXPECT_THROW(saveParams("/nonexistent/dir/y.params", smallArrays()), FileError);
}
