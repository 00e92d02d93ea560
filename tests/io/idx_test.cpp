// IDX files (io/idx.h), the format of MNIST and Fashion-MNIST: every element type, plain and gzip,
// and damaged files refused with the file and the byte offset.

#include "core/error.h"
#include "io/idx.h"
#include "io/io_test_util.h"
#include "tensor/memory_limit.h"

#include <zlib.h>

#include <gtest/gtest.h>

using namespace opscope;
using opscope::test::tempPath;
using opscope::test::writeBytes;

namespace {

std::string header(unsigned char type, std::initializer_list<uint32_t> dims)
{
    std::string h { '\0', '\0', static_cast<char>(type), static_cast<char>(dims.size()) };
    for (uint32_t d : dims)
        for (int s = 24; s >= 0; s -= 8)
            h += static_cast<char>((d >> s) & 0xff);
    return h;
}

std::string gzip(const std::string& plain)
{
    z_stream s {};
    EXPECT_EQ(deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string out(deflateBound(&s, plain.size()) + 64, '\0');
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
    s.avail_in = static_cast<uInt>(plain.size());
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    s.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
    out.resize(s.total_out);
    deflateEnd(&s);
    return out;
}

std::string errorOf(const std::string& bytes)
{
    const std::string path = tempPath("damaged.idx");
    writeBytes(path, bytes);
    try {
        readIdx(path);
    } catch (const FileError& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST(Idx, ReadsUnsignedBytesPlainAndGzip)
{
    std::string b = header(0x08, { 3, 2, 2 });
    for (int i = 0; i < 12; ++i)
        b += static_cast<char>(i * 20);
    for (const std::string& image : { b, gzip(b) }) {
        const std::string path = tempPath("u8.idx");
        writeBytes(path, image);
        const Tensor t = readIdx(path);
        EXPECT_EQ(t.dtype(), DType::UInt8);
        EXPECT_EQ(t.shape(), Shape({ 3, 2, 2 }));
        for (int i = 0; i < 12; ++i)
            EXPECT_EQ(static_cast<const uint8_t*>(t.raw())[i], i * 20);
    }
}

TEST(Idx, ReadsBigEndianShortsFloatsAndDoubles)
{
    std::string s = header(0x0B, { 2 }) + std::string { '\xff', '\xfe', '\x01', '\x00' };
    const Tensor shorts = parseIdx(s, "s");
    EXPECT_EQ(shorts.dtype(), DType::Int32);
    EXPECT_EQ(shorts.dataAs<int32_t>()[0], -2);
    EXPECT_EQ(shorts.dataAs<int32_t>()[1], 256);
    std::string f = header(0x0D, { 1 }) + std::string { '\x3f', '\xc0', '\0', '\0' }; // 1.5f
    EXPECT_EQ(parseIdx(f, "f").data()[0], 1.5f);
    std::string d = header(0x0E, { 1 }) + std::string { '\xc0', '\x04', '\0', '\0', '\0', '\0', '\0', '\0' }; // -2.5
    EXPECT_EQ(parseIdx(d, "d").dataAs<double>()[0], -2.5);
}

TEST(Idx, DamagedFilesNameTheFileAndTheByte)
{
    const std::string good = header(0x08, { 2, 3 }) + std::string(6, '\x07');
    EXPECT_NE(errorOf("\x01" + good.substr(1)).find("byte 0: not an IDX file"), std::string::npos);
    std::string badType = good;
    badType[2] = '\x42';
    EXPECT_NE(errorOf(badType).find("byte 2: unknown element type 0x42"), std::string::npos) << errorOf(badType);
    EXPECT_NE(errorOf(good.substr(0, 9)).find("byte 9: the file ends inside the IDX header"), std::string::npos);
    const std::string shortData = errorOf(good.substr(0, 15));
    EXPECT_NE(shortData.find("byte 15: the data ends early"), std::string::npos) << shortData;
    EXPECT_NE(shortData.find("(2, 3)"), std::string::npos) << shortData;
    EXPECT_NE(errorOf(good + "xy").find("byte 18: 2 bytes after the data"), std::string::npos) << errorOf(good + "xy");
    // The same in a gzip file: offsets are of the decompressed data.
    const std::string inGzip = errorOf(gzip(good.substr(0, 15)));
    EXPECT_NE(inGzip.find("byte 15 of the decompressed data: the data ends early"), std::string::npos) << inGzip;
    EXPECT_NE(errorOf(gzip(good + "xy")).find("of the decompressed data"), std::string::npos);
    // More dimensions than a tensor holds: the file and the byte, not a bare shape error.
    const std::string seven = errorOf(header(0x08, { 1, 1, 1, 1, 1, 1, 1 }) + "x");
    EXPECT_NE(seven.find("byte 3: 7 dimensions"), std::string::npos) << seven;
    // A truncated gzip stream says so.
    const std::string packed = gzip(good);
    const std::string cut = errorOf(packed.substr(0, packed.size() / 2));
    EXPECT_NE(cut.find("ends early"), std::string::npos) << cut;
}

TEST(Idx, EveryDamagedGzipByteIsAnErrorNotACrash)
{
    std::string plain = header(0x08, { 40, 28 });
    for (int i = 0; i < 40 * 28; ++i)
        plain += static_cast<char>((i * 7) & 0xff);
    const std::string packed = gzip(plain);
    for (size_t at = 0; at < packed.size(); ++at) {
        std::string bad = packed;
        bad[at] = static_cast<char>(bad[at] ^ 0x5a);
        const std::string path = tempPath("flip.idx");
        writeBytes(path, bad);
        try {
            const Tensor t = readIdx(path); // a flip in a stored field may still be a readable file
            EXPECT_GT(t.size(), 0);
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        }
    }
    for (size_t cut = 0; cut < packed.size(); cut += 7) {
        const std::string message = errorOf(packed.substr(0, cut));
        EXPECT_NE(message.find("byte"), std::string::npos) << "cut at " << cut << ": " << message;
    }
}

TEST(Idx, AHeaderAskingForMoreThanTheMemoryLimitIsRefusedBeforeReading)
{
    // 4 × 2^30 bytes announced by a 24-byte file (and by a small gzip bomb).
    const std::string huge = header(0x08, { 65536, 65536 });
    const std::string path = tempPath("huge.idx");
    writeBytes(path, huge);
    setMemoryLimit(int64_t { 1 } << 30);
    EXPECT_THROW(readIdx(path), ResourceError);
    writeBytes(path, gzip(huge + std::string(1 << 20, '\0')));
    EXPECT_THROW(readIdx(path), ResourceError);
    setMemoryLimit(0);
    // Without a limit that refuses it, the short file is an error, not 4 GiB allocated and read.
    EXPECT_THROW(readIdx(path), FileError);
}
