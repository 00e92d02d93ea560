#include "io/idx.h"

#include "core/error.h"
#include "tensor/memory_limit.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>

namespace opscope {

namespace {

struct Layout {
    DType dtype;
    int fileSize; // bytes of one element in the file
    Shape shape;
    int64_t headerBytes;
    int64_t totalBytes; // header plus data
};

uint32_t be32(const std::string& b, size_t at)
{
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i)
        v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    return v;
}

// The layout the header announces, or nothing while `b` does not hold the whole header yet.
// `where` qualifies byte offsets ("" or " of the decompressed data").
std::optional<Layout> readHeader(const std::string& b, const std::string& name, const std::string& where)
{
    auto fail = [&](size_t offset, const std::string& why) -> void {
        throw FileError(name + ": byte " + std::to_string(offset) + where + ": " + why);
    };
    if (b.size() < 4) return std::nullopt;
    if (b[0] != 0 || b[1] != 0) fail(0, "not an IDX file: it must start with two zero bytes");
    Layout l {};
    const auto type = static_cast<unsigned char>(b[2]);
    switch (type) {
    case 0x08: l.dtype = DType::UInt8, l.fileSize = 1; break;
    case 0x09: l.dtype = DType::Int8, l.fileSize = 1; break;
    case 0x0B: l.dtype = DType::Int32, l.fileSize = 2; break;
    case 0x0C: l.dtype = DType::Int32, l.fileSize = 4; break;
    case 0x0D: l.dtype = DType::Float32, l.fileSize = 4; break;
    case 0x0E: l.dtype = DType::Float64, l.fileSize = 8; break;
    default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", type);
        fail(2, std::string("unknown element type ") + hex + " (known: 0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E)");
    }
    }
    const int ndim = static_cast<unsigned char>(b[3]);
    if (ndim == 0) fail(3, "zero dimensions");
    if (ndim > Shape::kMaxDims)
        fail(3, std::to_string(ndim) + " dimensions (at most " + std::to_string(Shape::kMaxDims) + " are read)");
    l.headerBytes = 4 + 4 * static_cast<int64_t>(ndim);
    if (b.size() < static_cast<size_t>(l.headerBytes)) return std::nullopt;
    std::vector<int64_t> dims;
    for (int d = 0; d < ndim; ++d) {
        const uint32_t n = be32(b, 4 + 4 * static_cast<size_t>(d));
        if (n > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()))
            fail(4 + 4 * static_cast<size_t>(d), "dimension " + std::to_string(d) + " is " + std::to_string(n) + ": too large");
        dims.push_back(n);
    }
    l.shape = Shape(dims);
    const int64_t bytes = tensorBytes(l.shape, l.fileSize);
    if (bytes < 0) fail(4, "the dimensions " + l.shape.str() + " overflow 64 bits");
    checkTensorFits(l.shape, name + ": IDX data", static_cast<int64_t>(dtypeSize(l.dtype)));
    l.totalBytes = l.headerBytes + bytes;
    return l;
}

Tensor decode(const std::string& b, const Layout& l)
{
    Tensor t(l.shape, l.dtype);
    const auto* src = reinterpret_cast<const unsigned char*>(b.data()) + l.headerBytes;
    const int64_t n = l.shape.size();
    if (l.fileSize == 1) {
        std::memcpy(t.raw(), src, static_cast<size_t>(n));
        return t;
    }
    auto* dst = static_cast<unsigned char*>(t.raw());
    for (int64_t i = 0; i < n; ++i) {
        const unsigned char* e = src + i * l.fileSize;
        if (l.fileSize == 2) { // big-endian short, widened to int32
            const auto v = static_cast<int16_t>(static_cast<uint16_t>((e[0] << 8) | e[1]));
            const int32_t w = v;
            std::memcpy(dst + i * 4, &w, 4);
        } else {
            for (int k = 0; k < l.fileSize; ++k)
                dst[i * l.fileSize + k] = e[l.fileSize - 1 - k];
        }
    }
    return t;
}

void checkLength(const std::string& b, const Layout& l, const std::string& name, const std::string& where)
{
    const auto have = static_cast<int64_t>(b.size());
    if (have < l.totalBytes)
        throw FileError(name + ": byte " + std::to_string(have) + where + ": the data ends early: the header "
            + l.shape.str() + " needs " + std::to_string(l.totalBytes) + " bytes");
    if (have > l.totalBytes)
        throw FileError(name + ": byte " + std::to_string(l.totalBytes) + where + ": "
            + std::to_string(have - l.totalBytes) + " bytes after the data the header " + l.shape.str() + " announces");
}

// Inflates a gzip image, stopping as soon as it holds more than the header announces (so a small
// file that inflates to a huge one is refused without being inflated).
std::string gunzip(const std::string& packed, const std::string& name)
{
    const std::string where = " of the decompressed data";
    z_stream s {};
    if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK) throw FileError(name + ": cannot start decompressing");
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
    s.avail_in = static_cast<uInt>(std::min<size_t>(packed.size(), std::numeric_limits<uInt>::max()));
    std::string out;
    std::optional<Layout> layout;
    char chunk[1 << 16];
    int rc = Z_OK;
    try {
        while (rc != Z_STREAM_END) {
            s.next_out = reinterpret_cast<Bytef*>(chunk);
            s.avail_out = sizeof chunk;
            rc = inflate(&s, Z_NO_FLUSH);
            if (rc == Z_BUF_ERROR && s.avail_in == 0) {
                throw FileError(name + ": byte " + std::to_string(s.total_in)
                    + " of the gzip file: the compressed stream ends early (after " + std::to_string(s.total_out)
                    + " bytes decompressed)");
            }
            if (rc != Z_OK && rc != Z_STREAM_END) {
                const std::string why = s.msg ? s.msg : "damaged compressed data";
                throw FileError(name + ": byte " + std::to_string(s.total_in) + " of the gzip file: " + why
                    + " (after " + std::to_string(s.total_out) + " bytes decompressed)");
            }
            const size_t got = sizeof chunk - s.avail_out;
            if (got == 0 && rc == Z_OK && s.avail_in == 0) {
                throw FileError(name + ": byte " + std::to_string(s.total_in)
                    + " of the gzip file: the compressed stream ends early (after " + std::to_string(s.total_out)
                    + " bytes decompressed)");
            }
            out.append(chunk, got);
            if (!layout) layout = readHeader(out, name, where);
            if (layout && static_cast<int64_t>(out.size()) > layout->totalBytes) checkLength(out, *layout, name, where);
        }
    } catch (...) {
        inflateEnd(&s);
        throw;
    }
    inflateEnd(&s);
    return out;
}

} // namespace

Tensor parseIdx(const std::string& bytes, const std::string& name)
{
    const std::optional<Layout> l = readHeader(bytes, name, "");
    if (!l) throw FileError(name + ": byte " + std::to_string(bytes.size()) + ": the file ends inside the IDX header");
    checkLength(bytes, *l, name, "");
    return decode(bytes, *l);
}

Tensor readIdx(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FileError(path + ": cannot open for reading");
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw FileError(path + ": read failed");
    if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b) {
        const std::string plain = gunzip(bytes, path);
        const std::string where = " of the decompressed data";
        const std::optional<Layout> l = readHeader(plain, path, where);
        if (!l) {
            throw FileError(path + ": byte " + std::to_string(plain.size()) + where
                + ": the data ends inside the IDX header");
        }
        checkLength(plain, *l, path, where);
        return decode(plain, *l);
    }
    return parseIdx(bytes, path);
}

} // namespace opscope
