// .npz archives (io/npz.h): what NumPy writes (stored and deflated) is read with its names, types
// and values; our writer's archives read back; damaged archives are errors naming the file, the
// member and the byte offset.

#include "common/test_paths.h"
#include "core/error.h"
#include "io/npz.h"
#include "io/io_test_util.h"
#include "tensor/memory_limit.h"

#include <gtest/gtest.h>

using namespace opscope;
using opscope::test::readBytes;
using opscope::test::tempPath;
using opscope::test::writeBytes;

namespace {
void expectFixtureArrays(const std::vector<std::pair<std::string, Tensor>>& a)
{
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[0].first, "conv1.weight");
    EXPECT_EQ(a[0].second.shape(), Shape({ 2, 3, 2, 2 }));
    for (int64_t i = 0; i < 24; ++i)
        EXPECT_EQ(a[0].second.data()[i], static_cast<float>(i) / 8);
    EXPECT_EQ(a[1].first, "features/0");
    EXPECT_EQ(a[1].second.shape(), Shape({ 10 }));
    EXPECT_EQ(a[1].second.data()[0], -1.0f);
    EXPECT_EQ(a[1].second.data()[9], 1.0f);
    EXPECT_EQ(a[2].first, "labels");
    EXPECT_EQ(a[2].second.dtype(), DType::Int64);
    EXPECT_EQ(a[2].second.dataAs<int64_t>()[2], 4);
}

std::string errorOf(const std::string& bytes)
{
    const std::string path = tempPath("damaged.npz");
    writeBytes(path, bytes);
    try {
        readNpz(path);
    } catch (const FileError& e) {
        return e.what();
    }
    return "no error";
}
}

TEST(Npz, ReadsWhatNumpyWritesStoredAndDeflated)
{
    expectFixtureArrays(readNpz(test::fixture("npz/stored.npz")));
    expectFixtureArrays(readNpz(test::fixture("npz/compressed.npz")));
}

TEST(Npz, WhatItWritesReadsBack)
{
    const std::string path = tempPath("out.npz");
    const Tensor a = Tensor::fromValues(Shape({ 2, 2 }), std::vector<float> { 1, 2, 3, 4 });
    const Tensor b = Tensor::fromTyped<int32_t>(Shape({ 3 }), std::vector<int32_t> { 7, 8, 9 });
    writeNpz(path, { { "layer1/out", a.view() }, { "idx", b.view() } });
    const auto r = readNpz(path);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].first, "layer1/out");
    EXPECT_EQ(r[0].second.data()[3], 4.0f);
    EXPECT_EQ(r[1].first, "idx");
    EXPECT_EQ(r[1].second.dataAs<int32_t>()[1], 8);
    EXPECT_TRUE(readNpz((writeNpz(path, {}), path)).empty());
}

TEST(Npz, DamagedArchivesNameTheFileMemberAndByte)
{
    const std::string stored = readBytes(test::fixture("npz/stored.npz"));
    const std::string deflated = readBytes(test::fixture("npz/compressed.npz"));
    EXPECT_NE(errorOf("").find("not a zip archive"), std::string::npos);
    EXPECT_NE(errorOf(stored.substr(0, stored.size() - 30)).find("no end of central directory"), std::string::npos);
    // A flipped byte in the first member's array data: its CRC no longer matches.
    std::string crc = stored;
    crc[0x100] ^= 0x55;
    const std::string e = errorOf(crc);
    EXPECT_NE(e.find("member 'conv1.weight.npy'"), std::string::npos) << e;
    EXPECT_NE(e.find("CRC-32"), std::string::npos) << e;
    EXPECT_NE(e.find(": byte "), std::string::npos) << e;
    // Deflated data damaged: corrupt stream or CRC, never a crash.
    std::string inflate = deflated;
    for (size_t i = 0x60; i < 0x90; ++i)
        inflate[i] = static_cast<char>(0xff);
    const std::string f = errorOf(inflate);
    EXPECT_NE(f.find("member 'conv1.weight.npy'"), std::string::npos) << f;
    // The directory's offset pointing past the end.
    std::string dir = stored;
    const size_t end = dir.rfind("PK\x05\x06");
    ASSERT_NE(end, std::string::npos);
    dir[end + 16] = static_cast<char>(0xf0);
    dir[end + 19] = 0x70;
    EXPECT_NE(errorOf(dir).find("outside the file"), std::string::npos) << errorOf(dir);
    // Two directory records pointing at one member's data (a small file inflating to much more).
    const std::string twoPath = tempPath("two.npz");
    const Tensor t = Tensor::fromValues(Shape({ 4 }), std::vector<float> { 1, 2, 3, 4 });
    writeNpz(twoPath, { { "a", t.view() }, { "b", t.view() } });
    std::string two = readBytes(twoPath);
    const size_t second = two.find("PK\x01\x02", two.find("PK\x01\x02") + 4);
    ASSERT_NE(second, std::string::npos);
    for (int k = 0; k < 4; ++k)
        two[second + 42 + static_cast<size_t>(k)] = 0; // its local header: the first member's
    EXPECT_NE(errorOf(two).find("overlaps"), std::string::npos) << errorOf(two);
    // Every truncation and every single-byte change is an error or a result, never a crash.
    for (size_t cut = 0; cut < stored.size(); cut += 7)
        errorOf(stored.substr(0, cut));
    for (size_t i = 0; i < deflated.size(); ++i) {
        std::string m = deflated;
        m[i] = static_cast<char>(m[i] ^ 0xa5);
        const std::string path = tempPath("flip.npz");
        writeBytes(path, m);
        try {
            readNpz(path);
        } catch (const Error&) {
        }
    }
}
