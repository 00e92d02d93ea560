// MXNet's NDArray list format (src/ndarray/ndarray.cc: NDArray::Save/Load, LegacyLoad,
// LegacyTShapeLoad; the list framing of MXNDArraySave). Little-endian throughout.

#include "io/params_file.h"

#include "core/error.h"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <type_traits>

namespace opscope {

namespace {
constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kV1Magic = 0xF993fac8;
constexpr uint32_t kV2Magic = 0xF993fac9;
constexpr uint32_t kV3Magic = 0xF993faca;

struct DType {
    const char* name;
    size_t size;
};
// MXNet's type_flag order (mshadow::TypeFlag).
constexpr DType kDTypes[] = { { "float32", 4 }, { "float64", 8 }, { "float16", 2 }, { "uint8", 1 }, { "int32", 4 },
    { "int8", 1 }, { "int64", 8 }, { "bool", 1 }, { "int16", 2 }, { "uint16", 2 }, { "uint32", 4 }, { "uint64", 8 },
    { "bfloat16", 2 } };
constexpr int kNumDTypes = static_cast<int>(sizeof kDTypes / sizeof kDTypes[0]);

std::string hex(uint64_t v)
{
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

float halfToFloat(uint16_t h)
{
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { // subnormal: normalise
            exp = 127 - 15 + 1;
            while (!(mant & 0x400u)) {
                mant <<= 1;
                --exp;
            }
            bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(bits);
}

template <class T> T loadLE(const char* p)
{
    using U = std::make_unsigned_t<T>;
    U v = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
        v |= static_cast<U>(static_cast<unsigned char>(p[i])) << (8 * i);
    return static_cast<T>(v);
}

void convert(int typeFlag, const char* src, float* dst, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        const char* p = src + i * kDTypes[typeFlag].size;
        float v = 0;
        switch (typeFlag) {
        case 0:
            v = std::bit_cast<float>(loadLE<uint32_t>(p));
            break;
        case 1:
            v = static_cast<float>(std::bit_cast<double>(loadLE<uint64_t>(p)));
            break;
        case 2:
            v = halfToFloat(loadLE<uint16_t>(p));
            break;
        case 3:
            v = static_cast<float>(static_cast<unsigned char>(*p));
            break;
        case 4:
            v = static_cast<float>(loadLE<int32_t>(p));
            break;
        case 5:
            v = static_cast<float>(static_cast<signed char>(*p));
            break;
        case 6:
            v = static_cast<float>(loadLE<int64_t>(p));
            break;
        case 7:
            v = *p ? 1.0f : 0.0f;
            break;
        case 8:
            v = static_cast<float>(loadLE<int16_t>(p));
            break;
        case 9:
            v = static_cast<float>(loadLE<uint16_t>(p));
            break;
        case 10:
            v = static_cast<float>(loadLE<uint32_t>(p));
            break;
        case 11:
            v = static_cast<float>(loadLE<uint64_t>(p));
            break;
        case 12:
            v = std::bit_cast<float>(static_cast<uint32_t>(loadLE<uint16_t>(p)) << 16);
            break;
        }
        dst[i] = v;
    }
}

class Cursor {
public:
    Cursor(const std::string& bytes, const std::string& name)
        : m_bytes(bytes)
        , m_name(name)
    {
    }
    size_t offset() const { return m_pos; }
    size_t remaining() const { return m_bytes.size() - m_pos; }

    [[noreturn]] void fail(size_t at, const std::string& why) const
    {
        throw FileError(m_name + ": byte " + std::to_string(at) + ": " + why);
    }
    const char* take(size_t n, const std::string& what)
    {
        if (remaining() < n)
            fail(m_pos,
                "file ends early: expected " + what + " (" + std::to_string(n) + " bytes), but only "
                    + std::to_string(remaining()) + " bytes are left");
        const char* p = m_bytes.data() + m_pos;
        m_pos += n;
        return p;
    }
    template <class T> T read(const std::string& what) { return loadLE<T>(take(sizeof(T), what)); }

private:
    const std::string& m_bytes;
    const std::string& m_name;
    size_t m_pos = 0;
};

enum class ShapeRule {
    Legacy, // legacy and V1 records: ndim 0 is an empty array, 0 dims are zero-size
    V2, // MXNet 1.x legacy shape semantics: ndim 0 or any 0 / -1 dim is an empty array
    V3, // NumPy semantics: ndim -1 or any -1 dim is empty, ndim 0 a scalar, 0 dims zero-size
};

// Reads `i32 ndim` + ndim × i64. Returns false for an empty ("none") array.
bool readShape(Cursor& c, ShapeRule rule, Shape& shape, const std::string& what)
{
    const size_t at = c.offset();
    const int32_t ndim = c.read<int32_t>(what + " ndim");
    if (ndim == -1 && rule != ShapeRule::Legacy) return false;
    if (ndim < 0) c.fail(at, what + ": invalid ndim " + std::to_string(ndim));
    if (ndim > Shape::kMaxDims)
        c.fail(at,
            what + " has " + std::to_string(ndim) + " dimensions; at most " + std::to_string(Shape::kMaxDims)
                + " are supported");
    bool none = ndim == 0 && rule != ShapeRule::V3;
    shape = Shape();
    for (int32_t k = 0; k < ndim; ++k) {
        const size_t dimAt = c.offset();
        const int64_t d = c.read<int64_t>(what + " dimension " + std::to_string(k));
        if (d < -1 || (d == -1 && rule == ShapeRule::Legacy))
            c.fail(dimAt, what + ": invalid dimension " + std::to_string(d));
        if (d == -1 || (d == 0 && rule == ShapeRule::V2)) none = true;
        shape.push_back(d);
    }
    if (ndim == 0 && rule == ShapeRule::V3) shape = Shape { 1 }; // a NumPy scalar
    return !none;
}

Tensor readRecord(Cursor& c, size_t index)
{
    const std::string rec = "array " + std::to_string(index);
    const size_t start = c.offset();
    const uint32_t magic = c.read<uint32_t>(rec + " magic");
    Shape shape;
    bool present = false;
    if (magic == kV2Magic || magic == kV3Magic) {
        const size_t stypeAt = c.offset();
        const int32_t stype = c.read<int32_t>(rec + " storage type");
        if (stype == 1 || stype == 2)
            c.fail(stypeAt,
                rec + " has sparse storage (" + std::string(stype == 1 ? "row_sparse" : "csr")
                    + "); only dense arrays (storage type 0) are supported");
        if (stype != 0) c.fail(stypeAt, rec + ": unknown storage type " + std::to_string(stype));
        present = readShape(c, magic == kV3Magic ? ShapeRule::V3 : ShapeRule::V2, shape, rec + " shape");
    } else if (magic == kV1Magic) {
        present = readShape(c, ShapeRule::Legacy, shape, rec + " shape");
    } else {
        // Before V1 the first word is the ndim itself, followed by uint32 dimensions.
        if (magic > static_cast<uint32_t>(Shape::kMaxDims))
            c.fail(start,
                rec + ": unknown record magic " + hex(magic)
                    + " (expected 0xf993fac9, 0xf993faca, 0xf993fac8, or a legacy ndim of at most "
                    + std::to_string(Shape::kMaxDims) + ")");
        for (uint32_t k = 0; k < magic; ++k)
            shape.push_back(c.read<uint32_t>(rec + " dimension " + std::to_string(k)));
        present = magic != 0;
    }
    if (!present) return Tensor();

    const size_t ctxAt = c.offset();
    const int32_t devType = c.read<int32_t>(rec + " context device type");
    (void)c.read<int32_t>(rec + " context device id");
    if (devType != 1 && devType != 2 && devType != 3 && devType != 5)
        c.fail(ctxAt,
            rec + ": unknown device type " + std::to_string(devType)
                + " (expected 1 cpu, 2 gpu, 3 cpu_pinned or 5 cpu_shared)");
    const size_t typeAt = c.offset();
    const int32_t typeFlag = c.read<int32_t>(rec + " type flag");
    if (typeFlag < 0 || typeFlag >= kNumDTypes) c.fail(typeAt, rec + ": unknown type flag " + std::to_string(typeFlag));
    const size_t itemSize = kDTypes[typeFlag].size;

    // Element count, bounded by the bytes left before anything is multiplied or allocated.
    const size_t limit = c.remaining() / itemSize;
    size_t count = 1;
    for (int64_t d : shape.dims()) {
        const auto ud = static_cast<size_t>(d);
        if (ud != 0 && count > limit / ud) {
            count = SIZE_MAX;
            break;
        }
        count *= ud;
    }
    if (count == SIZE_MAX || count > limit)
        c.fail(c.offset(),
            "file ends early: " + rec + " of shape " + shape.str() + " and type " + kDTypes[typeFlag].name
                + " needs more data than the " + std::to_string(c.remaining()) + " bytes left");
    const char* data = c.take(count * itemSize, rec + " data");
    Tensor t(shape);
    convert(typeFlag, data, t.data(), count);
    return t;
}
} // namespace

NamedTensors parseParams(const std::string& bytes, const std::string& name)
{
    Cursor c(bytes, name);
    const uint64_t magic = c.read<uint64_t>("the file magic 0x112");
    if (magic != kListMagic) c.fail(0, "not an MXNet NDArray file: magic " + hex(magic) + ", expected 0x112");
    (void)c.read<uint64_t>("the reserved word");
    const size_t countAt = c.offset();
    const uint64_t n = c.read<uint64_t>("the array count");
    // Every record takes at least 4 bytes, and the name count 8 more.
    if (n > c.remaining() / 4)
        c.fail(countAt,
            "file ends early or the array count is wrong: " + std::to_string(n)
                + " arrays need at least 4 bytes each, but only " + std::to_string(c.remaining()) + " bytes follow");
    NamedTensors out;
    out.reserve(static_cast<size_t>(n));
    for (uint64_t i = 0; i < n; ++i)
        out.emplace_back(std::string(), readRecord(c, static_cast<size_t>(i)));

    const size_t namesAt = c.offset();
    const uint64_t k = c.read<uint64_t>("the name count");
    if (k != 0 && k != n)
        c.fail(namesAt, "name count " + std::to_string(k) + " must be 0 or the array count " + std::to_string(n));
    for (uint64_t i = 0; i < k; ++i) {
        const std::string what = "name " + std::to_string(i);
        const size_t lenAt = c.offset();
        const uint64_t len = c.read<uint64_t>(what + " length");
        if (len > c.remaining())
            c.fail(lenAt,
                "file ends early: " + what + " is " + std::to_string(len) + " bytes long, but only "
                    + std::to_string(c.remaining()) + " bytes are left");
        const char* p = c.take(static_cast<size_t>(len), what);
        out[static_cast<size_t>(i)].first.assign(p, static_cast<size_t>(len));
    }
    if (c.remaining() != 0)
        c.fail(c.offset(),
            std::to_string(c.remaining()) + " bytes left over after the last "
                + (k ? std::string("name") : std::string("name count")) + "; the file should end here");
    return out;
}

NamedTensors loadParams(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FileError(path + ": cannot open for reading");
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw FileError(path + ": read failed");
    return parseParams(ss.str(), path);
}

namespace {
template <class T> void storeLE(std::string& out, T v)
{
    using U = std::make_unsigned_t<T>;
    const U u = static_cast<U>(v);
    for (size_t i = 0; i < sizeof(T); ++i)
        out += static_cast<char>((u >> (8 * i)) & 0xff);
}
} // namespace

std::string serializeParams(const NamedTensors& arrays)
{
    std::string out;
    storeLE<uint64_t>(out, kListMagic);
    storeLE<uint64_t>(out, 0);
    storeLE<uint64_t>(out, arrays.size());
    for (const auto& [name, t] : arrays) {
        storeLE<uint32_t>(out, kV2Magic);
        storeLE<int32_t>(out, 0); // dense
        if (!t.defined() || t.size() == 0) {
            storeLE<int32_t>(out, 0); // ndim 0: an empty array, nothing follows
            continue;
        }
        storeLE<int32_t>(out, t.ndim());
        for (int64_t d : t.shape().dims())
            storeLE<int64_t>(out, d);
        storeLE<int32_t>(out, 1); // cpu
        storeLE<int32_t>(out, 0); // device id
        storeLE<int32_t>(out, 0); // float32
        for (float v : t.values())
            storeLE<uint32_t>(out, std::bit_cast<uint32_t>(v));
    }
    bool named = false;
    for (const auto& a : arrays)
        named = named || !a.first.empty();
    storeLE<uint64_t>(out, named ? arrays.size() : 0);
    if (named) {
        for (const auto& a : arrays) {
            storeLE<uint64_t>(out, a.first.size());
            out += a.first;
        }
    }
    return out;
}

void saveParams(const std::string& path, const NamedTensors& arrays)
{
    const std::string bytes = serializeParams(arrays);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw FileError(path + ": cannot open for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw FileError(path + ": write failed");
}

std::string stripParamPrefix(const std::string& name)
{
    if (name.size() >= 4 && (name.compare(0, 4, "arg:") == 0 || name.compare(0, 4, "aux:") == 0)) return name.substr(4);
    return name;
}

} // namespace opscope
