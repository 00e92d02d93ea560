// ONNX tensors: TensorProto's data in raw_data (little-endian), in the typed fields, or in an
// external file beside the model; every size is checked against the shape before it is read.

#include "io/onnx_tensor.h"

#include "core/error.h"
#include "io/onnx_proto.h"
#include "tensor/memory_limit.h"

#include <filesystem>
#include <fstream>
#include <limits>

namespace opscope {

std::optional<DType> dtypeFromOnnx(int code)
{
    switch (code) {
    case 1: return DType::Float32;
    case 2: return DType::UInt8;
    case 3: return DType::Int8;
    case 6: return DType::Int32;
    case 7: return DType::Int64;
    case 9: return DType::Bool;
    case 10: return DType::Float16;
    case 11: return DType::Float64;
    default: return std::nullopt;
    }
}

int onnxTypeCode(DType t)
{
    switch (t) {
    case DType::Float32: return 1;
    case DType::UInt8: return 2;
    case DType::Int8: return 3;
    case DType::Int32: return 6;
    case DType::Int64: return 7;
    case DType::Bool: return 9;
    case DType::Float16: return 10;
    case DType::Float64: return 11;
    }
    return 0;
}

std::string onnxTypeName(int code)
{
    static const char* names[] = { "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
        "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16" };
    if (code >= 0 && code < static_cast<int>(std::size(names))) return names[code];
    return "type " + std::to_string(code);
}

namespace onnx_io {

namespace {
    std::string readExternal(const onnx::TensorProto& t, const std::string& baseDir, const std::string& what)
    {
        std::string location;
        int64_t offset = 0, length = -1;
        for (const auto& kv : t.external_data()) {
            try {
                if (kv.key() == "location") location = kv.value();
                else if (kv.key() == "offset") offset = std::stoll(kv.value());
                else if (kv.key() == "length") length = std::stoll(kv.value());
            } catch (const std::exception&) {
                throw FileError(what + ": external data '" + kv.key() + "' = \"" + kv.value() + "\" is not a number");
            }
        }
        if (location.empty()) throw FileError(what + ": external data without a location");
        namespace fs = std::filesystem;
        const fs::path rel(location);
        if (rel.is_absolute() || rel.lexically_normal().string().rfind("..", 0) == 0)
            throw FileError(what + ": external data location '" + location + "' is outside the model's folder");
        const fs::path file = fs::path(baseDir) / rel;
        std::error_code ec;
        const auto size = fs::file_size(file, ec);
        if (ec) throw FileError(what + ": external data file " + file.string() + " is missing");
        if (offset < 0 || static_cast<uint64_t>(offset) > size)
            throw FileError(what + ": external data offset " + std::to_string(offset) + " is past the end of "
                + file.string() + " (" + std::to_string(size) + " bytes)");
        if (length < 0) length = static_cast<int64_t>(size) - offset;
        if (static_cast<uint64_t>(offset) + static_cast<uint64_t>(length) > size)
            throw FileError(what + ": external data of " + std::to_string(length) + " bytes at offset "
                + std::to_string(offset) + " runs past the end of " + file.string() + " (" + std::to_string(size)
                + " bytes)");
        std::ifstream in(file, std::ios::binary);
        std::string bytes(static_cast<size_t>(length), '\0');
        in.seekg(offset);
        if (!in.read(bytes.data(), length)) throw FileError(what + ": cannot read " + file.string());
        return bytes;
    }

    template <class Field> void needCount(const Field& f, int64_t n, const std::string& what, const char* field)
    {
        if (static_cast<int64_t>(f.size()) != n)
            throw FileError(what + ": " + field + " holds " + std::to_string(f.size()) + " values, the shape needs "
                + std::to_string(n));
    }
}

Tensor tensorFromProto(const onnx::TensorProto& t, const std::string& baseDir, const std::string& what)
{
    const auto dtype = dtypeFromOnnx(t.data_type());
    if (!dtype) throw FileError(what + ": element type " + onnxTypeName(t.data_type()) + " is not supported");
    if (t.dims_size() > Shape::kMaxDims)
        throw FileError(what + ": " + std::to_string(t.dims_size()) + " dimensions (at most "
            + std::to_string(Shape::kMaxDims) + ")");
    Shape shape = t.dims_size() == 0 ? Shape::scalar() : Shape();
    for (int64_t d : t.dims()) {
        if (d < 0) throw FileError(what + ": negative dimension " + std::to_string(d));
        shape.push_back(d);
    }
    int64_t n = 0;
    try {
        n = shape.size();
        checkTensorFits(shape, what, static_cast<int64_t>(dtypeSize(*dtype)));
    } catch (const ResourceError& e) {
        throw FileError(what + ": " + e.what());
    }
    Tensor out(shape, *dtype);
    const size_t bytes = out.bytes();
    const bool external = t.data_location() == onnx::TensorProto::EXTERNAL;
    if (external || t.has_raw_data()) {
        const std::string ext = external ? readExternal(t, baseDir, what) : std::string();
        const std::string& raw = external ? ext : t.raw_data();
        if (raw.size() != bytes)
            throw FileError(what + ": " + std::to_string(raw.size()) + " bytes of data, the shape " + shape.str()
                + " of " + dtypeName(*dtype) + " needs " + std::to_string(bytes));
        if (bytes) std::memcpy(out.raw(), raw.data(), bytes);
        if (*dtype == DType::Bool) { // any non-zero byte is true
            auto* b = static_cast<uint8_t*>(out.raw());
            for (int64_t i = 0; i < n; ++i)
                b[i] = b[i] != 0;
        }
        return out;
    }
    switch (*dtype) {
    case DType::Float32: {
        needCount(t.float_data(), n, what, "float_data");
        std::copy(t.float_data().begin(), t.float_data().end(), out.dataAs<float>());
        break;
    }
    case DType::Float64: {
        needCount(t.double_data(), n, what, "double_data");
        std::copy(t.double_data().begin(), t.double_data().end(), out.dataAs<double>());
        break;
    }
    case DType::Int64: {
        needCount(t.int64_data(), n, what, "int64_data");
        std::copy(t.int64_data().begin(), t.int64_data().end(), out.dataAs<int64_t>());
        break;
    }
    default: { // int32_data holds int32, int8, uint8, bool and float16's bits
        needCount(t.int32_data(), n, what, "int32_data");
        dispatchType(*dtype, [&](auto tag) {
            using T = decltype(tag);
            T* p = static_cast<T*>(out.raw());
            for (int64_t i = 0; i < n; ++i) {
                const int32_t v = t.int32_data(static_cast<int>(i));
                if constexpr (std::is_same_v<T, Half>)
                    p[i] = Half::fromBits(static_cast<uint16_t>(v));
                else if constexpr (std::is_same_v<T, bool>)
                    p[i] = v != 0;
                else
                    p[i] = static_cast<T>(v);
            }
        });
    }
    }
    return out;
}

void parseProtoFile(const std::string& path, google::protobuf::MessageLite& msg, const char* kind)
{
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw FileError(path + ": no such file");
    if (size > static_cast<uintmax_t>(std::numeric_limits<int>::max()))
        throw FileError(path + ": " + std::to_string(size) + " bytes, more than protobuf can read (2 GiB); "
            + "large models keep their weights in external data files");
    std::ifstream in(path, std::ios::binary);
    std::string bytes(static_cast<size_t>(size), '\0');
    if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) throw FileError(path + ": cannot read the file");
    if (!msg.ParseFromString(bytes))
        throw FileError(path + ": not a valid " + kind + " (protobuf parse error in " + std::to_string(size)
            + " bytes)");
}

} // namespace onnx_io

Tensor readTensorPb(const std::string& path, std::string* name)
{
    onnx::TensorProto t;
    onnx_io::parseProtoFile(path, t, "ONNX tensor");
    if (name) *name = t.name();
    const std::string dir = std::filesystem::path(path).parent_path().string();
    return onnx_io::tensorFromProto(t, dir, path + (t.name().empty() ? "" : ": tensor '" + t.name() + "'"));
}

} // namespace opscope
