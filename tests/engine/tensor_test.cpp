#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "io/npy.h"
#include "tensor/allocator.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <utility>

using namespace opscope;

TEST(Shape, TupleSpellingAndSize)
{
    EXPECT_EQ(Shape({ 2, 3 }).str(), "(2, 3)");
    EXPECT_EQ(Shape({ 5 }).str(), "(5,)");
    EXPECT_EQ(Shape().str(), "()");
    EXPECT_EQ(Shape({ 2, 3, 4 }).size(), 24);
    EXPECT_TRUE(Shape({ 2, 3 }).known());
    EXPECT_FALSE(Shape({ 2, 0 }).known());
    EXPECT_EQ(shapeToX(Shape({ 1, 1, 28, 28 })), "1x1x28x28");
    EXPECT_THROW(Shape({ 1, 2, 3, 4, 5, 6, 7 }), ShapeError);
}

TEST(Tensor, FillsAndViewsShareStorage)
{
    Tensor t = Tensor::ones(Shape({ 2, 3 }));
    for (float v : t.values())
        EXPECT_EQ(v, 1.0f);
    Tensor r = t.reshape(Shape({ 3, 2 }));
    EXPECT_TRUE(r.sharesStorageWith(t));
    r.at(5) = 7.0f;
    EXPECT_EQ(t.at(5), 7.0f);
    Tensor row = t[1];
    EXPECT_EQ(row.shape(), Shape({ 3 }));
    EXPECT_EQ(row.at(2), 7.0f);
    Tensor c = t.copy();
    c.at(0) = -1.0f;
    EXPECT_EQ(t.at(0), 1.0f);
    EXPECT_THROW(t.reshape(Shape({ 4, 2 })), ShapeError);
    EXPECT_THROW(t.slice(1, 3), ShapeError);
}

// version() changes after any writable access to the storage, through any view, and never after
// reads; numbers are never shared by two storages.
TEST(Tensor, VersionChangesAfterEveryWritableAccessAndOnlyThen)
{
    Tensor t = Tensor::ones(Shape({ 2, 3 }));
    const uint64_t v0 = t.version();
    EXPECT_EQ(t.version(), v0);
    (void)t.view().values();
    (void)t.copy();
    (void)t.toVector();
    (void)t.astype(DType::Float64);
    (void)t.reshape(Shape({ 3, 2 }));
    EXPECT_EQ(t.version(), v0) << "reads are not writes";
    const std::vector<std::pair<const char*, std::function<void()>>> writes = {
        { "data", [&] { (void)t.data(); } },
        { "raw", [&] { (void)t.raw(); } },
        { "dataAs", [&] { (void)t.dataAs<float>(); } },
        { "at", [&] { t.at(1) = 2.0f; } },
        { "values", [&] { (void)t.values(); } },
        { "fill", [&] { t.fill(3.0f); } },
        { "fillWith", [&] { t.fillWith(4.0); } },
        { "copyFrom", [&] { t.copyFrom(Tensor::zeros(t.shape()).view()); } },
        { "a reshaped view", [&] { t.reshape(Shape({ 6 })).at(0) = 5.0f; } },
        { "a row", [&] { (void)t[1].data(); } },
    };
    std::set<uint64_t> seen { v0 };
    for (const auto& [what, write] : writes) {
        write();
        const uint64_t v = t.version();
        EXPECT_TRUE(seen.insert(v).second) << what << ": the version did not change";
        EXPECT_EQ(t.version(), v) << what;
    }
    // Another storage never shows a number this one had.
    Tensor other = Tensor::ones(Shape({ 2, 3 }));
    EXPECT_FALSE(seen.count(other.version()));
    EXPECT_EQ(Tensor().version(), 0u);
}

TEST(Tensor, SeededRandomFillsAreReproducible)
{
    Generator g1(42), g2(42), g3(43);
    Tensor a = Tensor::uniform(Shape({ 100 }), -1, 1, &g1);
    Tensor b = Tensor::uniform(Shape({ 100 }), -1, 1, &g2);
    Tensor c = Tensor::uniform(Shape({ 100 }), -1, 1, &g3);
    EXPECT_EQ(a.toVector(), b.toVector());
    EXPECT_NE(a.toVector(), c.toVector());
    for (float v : a.values()) {
        EXPECT_GE(v, -1.0f);
        EXPECT_LT(v, 1.0f);
    }
    Generator g4(7);
    Tensor n = Tensor::normal(Shape({ 20000 }), 2.0f, 3.0f, &g4);
    double mean = 0, sq = 0;
    for (float v : n.values())
        mean += v;
    mean /= n.size();
    for (float v : n.values())
        sq += (v - mean) * (v - mean);
    EXPECT_NEAR(mean, 2.0, 0.1);
    EXPECT_NEAR(std::sqrt(sq / n.size()), 3.0, 0.1);
}

TEST(Allocator, CountsAllocationsAndPeak)
{
    const auto before = allocatorStats();
    {
        Tensor t(Shape({ 1000 }));
        const auto during = allocatorStats();
        EXPECT_EQ(during.allocations, before.allocations + 1);
        EXPECT_GE(during.liveBytes, before.liveBytes + 4000);
    }
    EXPECT_EQ(allocatorStats().liveBytes, before.liveBytes);
}

TEST(Npy, RoundTripWrittenFile)
{
    const auto path = std::filesystem::temp_directory_path() / "opscope_roundtrip.npy";
    Tensor t = Tensor::fromValues(Shape({ 2, 3 }), std::vector<float> { 1, 2, 3, 4, 5, 6.5f });
    writeNpy(path.string(), t.view());
    Tensor r = readNpy(path.string());
    EXPECT_TRUE(test::tensorsNear(r, t, 0, 0));
    Tensor v = Tensor::fromValues(Shape({ 3 }), std::vector<float> { 1, 2, 3 });
    writeNpy(path.string(), v.view());
    EXPECT_EQ(readNpy(path.string()).shape(), Shape({ 3 }));
    std::filesystem::remove(path);
}

// Files written by NumPy itself (tests/fixtures/make_npy_fixtures.py).
TEST(Npy, ReadsEveryDtypeNumPyWrites)
{
    const Tensor expected = Tensor::fromValues(Shape({ 2, 3 }), std::vector<float> { 0, 1, 2, 3, 4, 5 });
    const std::pair<const char*, DType> kinds[] = { { "f4", DType::Float32 }, { "f8", DType::Float64 },
        { "f2", DType::Float16 }, { "i4", DType::Int32 }, { "i8", DType::Int64 }, { "u1", DType::UInt8 } };
    for (const auto& [code, dtype] : kinds) {
        SCOPED_TRACE(code);
        Tensor t = readNpy(test::fixture(std::string("npy/arange_") + code + ".npy"));
        EXPECT_EQ(t.dtype(), dtype); // read as the type the file holds
        EXPECT_TRUE(test::tensorsNear(t.astype(DType::Float32), expected, 0, 0));
    }
    Tensor b = readNpy(test::fixture("npy/bool.npy"));
    EXPECT_EQ(b.dtype(), DType::Bool);
    EXPECT_EQ(b.astype(DType::Float32).toVector(), (std::vector<float> { 1, 0, 1, 1 }));
    Tensor v2 = readNpy(test::fixture("npy/version2.npy"));
    EXPECT_TRUE(test::tensorsNear(v2.astype(DType::Float32), expected, 0, 0));
    Tensor v3 = readNpy(test::fixture("npy/version3.npy"));
    EXPECT_TRUE(test::tensorsNear(v3.astype(DType::Float32), expected, 0, 0));
    Tensor h = readNpy(test::fixture("npy/half_special.npy")).astype(DType::Float32);
    ASSERT_EQ(h.size(), 4);
    EXPECT_EQ(h.at(0), 0.5f);
    EXPECT_TRUE(std::isinf(h.at(1)));
    EXPECT_TRUE(std::isnan(h.at(2)));
    EXPECT_FLOAT_EQ(h.at(3), 5.9604645e-08f); // smallest subnormal half
}

TEST(Npy, ClearErrorsNameFileAndReason)
{
    auto expectError = [](const std::string& file, const std::string& needle) {
        try {
            readNpy(test::fixture(file));
            ADD_FAILURE() << file << " was accepted";
        } catch (const FileError& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(file), std::string::npos) << msg;
            EXPECT_NE(msg.find(needle), std::string::npos) << msg;
        }
    };
    expectError("npy/fortran.npy", "Fortran");
    expectError("npy/complex.npy", "unsupported dtype '<c8'");
    expectError("npy/truncated.npy", "data ends early");
    EXPECT_THROW(readNpy("/nonexistent/file.npy"), FileError);
}
