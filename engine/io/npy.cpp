#include "io/npy.h"

#include "core/error.h"
#include "tensor/memory_limit.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace opscope {

namespace {
    [[noreturn]] void fail(const std::string& name, size_t offset, const std::string& why)
    {
        throw FileError(name + ": byte " + std::to_string(offset) + ": " + why);
    }

    // Extracts the value of 'key' from a Python dict literal header, as raw text.
    std::string dictValue(const std::string& header, const std::string& key, const std::string& name, size_t offset)
    {
        const std::string quoted1 = "'" + key + "'";
        const std::string quoted2 = "\"" + key + "\"";
        size_t pos = header.find(quoted1);
        size_t klen = quoted1.size();
        if (pos == std::string::npos) {
            pos = header.find(quoted2);
            klen = quoted2.size();
        }
        if (pos == std::string::npos)
            fail(name, offset, "header has no '" + key + "' entry");
        size_t colon = header.find(':', pos + klen);
        if (colon == std::string::npos)
            fail(name, offset, "header entry '" + key + "' has no value");
        size_t start = colon + 1;
        while (start < header.size() && header[start] == ' ')
            ++start;
        size_t end = start;
        if (start < header.size() && header[start] == '(') {
            end = header.find(')', start);
            if (end == std::string::npos)
                fail(name, offset, "unterminated shape tuple in header");
            ++end;
        } else if (start < header.size() && (header[start] == '\'' || header[start] == '"')) {
            end = header.find(header[start], start + 1);
            if (end == std::string::npos)
                fail(name, offset, "unterminated string in header");
            ++end;
        } else {
            while (end < header.size() && header[end] != ',' && header[end] != '}')
                ++end;
        }
        return header.substr(start, end - start);
    }
}

Tensor parseNpy(const std::string& bytes, const std::string& name)
{
    static const char kMagic[] = "\x93NUMPY";
    if (bytes.size() < 10)
        fail(name, bytes.size(), "file too short for a .npy header (" + std::to_string(bytes.size()) + " bytes)");
    if (std::memcmp(bytes.data(), kMagic, 6) != 0)
        fail(name, 0, "not a .npy file (magic \\x93NUMPY missing)");
    const int major = static_cast<unsigned char>(bytes[6]);
    size_t headerLen = 0;
    size_t headerStart = 0;
    if (major == 1) {
        headerLen = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
        headerStart = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12)
            fail(name, bytes.size(), "file too short for a version " + std::to_string(major) + " header");
        headerLen = 0;
        for (int i = 0; i < 4; ++i)
            headerLen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)])) << (8 * i);
        headerStart = 12;
    } else {
        fail(name, 6, "unsupported .npy format version " + std::to_string(major));
    }
    if (headerStart + headerLen > bytes.size())
        fail(name, bytes.size(), "header of " + std::to_string(headerLen) + " bytes runs past the end of the file");
    const std::string header = bytes.substr(headerStart, headerLen);

    std::string descr = dictValue(header, "descr", name, headerStart);
    if (descr.size() >= 2)
        descr = descr.substr(1, descr.size() - 2);
    const std::string fortran = dictValue(header, "fortran_order", name, headerStart);
    if (fortran.find("True") != std::string::npos)
        fail(name, headerStart, "Fortran-order arrays are not supported (save with C order)");
    const std::string shapeText = dictValue(header, "shape", name, headerStart);

    if (shapeText.size() < 2 || shapeText.front() != '(' || shapeText.back() != ')')
        fail(name, headerStart, "malformed shape '" + shapeText + "' (expected a tuple such as (1, 28, 28))");
    Shape shape;
    {
        std::string inner = shapeText.substr(1, shapeText.size() - 2);
        std::stringstream ss(inner);
        std::string item;
        while (std::getline(ss, item, ',')) {
            size_t a = item.find_first_not_of(' ');
            if (a == std::string::npos)
                continue;
            item = item.substr(a);
            while (!item.empty() && (item.back() == ' ' || item.back() == 'L'))
                item.pop_back();
            try {
                size_t used = 0;
                long long v = std::stoll(item, &used);
                if (used != item.size() || v < 0)
                    throw std::invalid_argument("bad");
                if (shape.ndim() == Shape::kMaxDims)
                    fail(name, headerStart, "array has more than 6 dimensions: " + shapeText);
                shape.push_back(v);
            } catch (const std::invalid_argument&) {
                fail(name, headerStart, "malformed shape " + shapeText);
            } catch (const std::out_of_range&) {
                fail(name, headerStart, "malformed shape " + shapeText);
            }
        }
        if (shape.ndim() == 0) shape = Shape::scalar();
    }

    // Little-endian (or native, '=') and one-byte types; the tensor keeps the file's type.
    static const std::pair<const char*, DType> kTypes[] = { { "f4", DType::Float32 }, { "f8", DType::Float64 },
        { "f2", DType::Float16 }, { "i8", DType::Int64 }, { "i4", DType::Int32 }, { "i1", DType::Int8 },
        { "u1", DType::UInt8 }, { "b1", DType::Bool } };
    std::optional<DType> type;
    for (const auto& [code, t] : kTypes) {
        const bool oneByte = dtypeSize(t) == 1;
        if (descr.size() == 3 && descr.compare(1, 2, code) == 0
            && (descr[0] == '<' || descr[0] == '=' || (oneByte && descr[0] == '|')))
            type = t;
    }
    if (!type)
        fail(name, headerStart,
            "unsupported dtype '" + descr + "' (supported: <f4 <f8 <f2 <i8 <i4 |i1 |u1 |b1)");
    const size_t itemSize = dtypeSize(*type);
    const size_t dataStart = headerStart + headerLen;
    // Sizes from the header are checked before they are used: an element count or byte count that
    // overflows, or more data than the file holds, is a bad file, never an allocation.
    const int64_t needBytes = tensorBytes(shape, static_cast<int64_t>(itemSize));
    if (needBytes < 0)
        fail(name, headerStart, "shape " + shape.str() + " has more elements than 64-bit sizes can count");
    const size_t count = static_cast<size_t>(needBytes) / itemSize;
    const size_t need = static_cast<size_t>(needBytes);
    if (bytes.size() - dataStart < need)
        fail(name, bytes.size(), "data ends early: expected " + std::to_string(need) + " bytes for shape "
            + shape.str() + ", found " + std::to_string(bytes.size() - dataStart));
    if (bytes.size() - dataStart > need)
        fail(name, dataStart + need, std::to_string(bytes.size() - dataStart - need) + " bytes after the array data");

    Tensor t(shape, *type);
    if (need) std::memcpy(t.raw(), bytes.data() + dataStart, need);
    if (*type == DType::Bool) // any non-zero byte is true; the engine keeps bools as 0 or 1
        for (bool* b = t.dataAs<bool>(), *e = b + count; b != e; ++b)
            *b = *reinterpret_cast<const unsigned char*>(b) != 0;
    return t;
}

Tensor readNpy(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw FileError(path + ": cannot open for reading");
    std::stringstream ss;
    ss << in.rdbuf();
    return parseNpy(ss.str(), path);
}

std::string serializeNpy(const TensorView& tensor)
{
    static const char* const kDescr[] = { "<f4", "<f8", "<f2", "<i8", "<i4", "|i1", "|u1", "|b1" };
    std::string header = std::string("{'descr': '") + kDescr[static_cast<int>(tensor.dtype())]
        + "', 'fortran_order': False, 'shape': (";
    for (int i = 0; i < tensor.ndim(); ++i)
        header += std::to_string(tensor.shape()[i]) + (tensor.ndim() == 1 || i + 1 < tensor.ndim() ? ", " : "");
    if (tensor.ndim() == 1)
        header.resize(header.size() - 1);
    header += "), }";
    // Pad with spaces so the data starts on a 64-byte boundary; the header ends with '\n'.
    const size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>((header.size() >> 8) & 0xff);
    out += header;
    out.append(static_cast<const char*>(tensor.raw()), tensor.bytes());
    return out;
}

void writeNpy(const std::string& path, const TensorView& tensor)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        throw FileError(path + ": cannot open for writing");
    const std::string bytes = serializeNpy(tensor);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out)
        throw FileError(path + ": write failed");
}

} // namespace opscope
