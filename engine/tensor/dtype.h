#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace opscope {

/// The element type of a tensor. MXNet's graphs compute in Float32; ONNX graphs also carry int64
/// shapes and indices, bool masks, float16 and float64 weights, int8/uint8 data. Operators say which
/// types they take (OpDef::inferType); nothing converts silently.
enum class DType : uint8_t { Float32, Float64, Float16, Int64, Int32, Int8, UInt8, Bool };
inline constexpr int kNumDTypes = 8;

/// IEEE 754 half precision, stored as its bits. Conversions round to nearest even and keep NaN and
/// infinities; arithmetic happens in float.
struct Half {
    uint16_t bits = 0;
    Half() = default;
    explicit Half(float v);
    explicit operator float() const;
    static Half fromBits(uint16_t b)
    {
        Half h;
        h.bits = b;
        return h;
    }
};
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float v);
/// `v` rounded to the nearest float16 value, as float (ties to even; beyond 65504 ±Inf; NaN stays NaN).
inline float roundToHalf(float v)
{
    return halfToFloat(floatToHalf(v));
}
/// `v` rounded to the nearest bfloat16 value, as float: float's 8-bit exponent with 7 mantissa bits
/// (ties to even; what overflows becomes ±Inf; NaN stays NaN).
float roundToBFloat16(float v);

constexpr size_t dtypeSize(DType t)
{
    switch (t) {
    case DType::Float64:
    case DType::Int64:
        return 8;
    case DType::Float32:
    case DType::Int32:
        return 4;
    case DType::Float16:
        return 2;
    default:
        return 1;
    }
}

/// NumPy's name: "float32", "int64", "bool"…
const char* dtypeName(DType t);
std::optional<DType> dtypeFromName(std::string_view name);
constexpr bool isFloatingType(DType t)
{
    return t == DType::Float32 || t == DType::Float64 || t == DType::Float16;
}
constexpr bool isIntegerType(DType t)
{
    return t == DType::Int64 || t == DType::Int32 || t == DType::Int8 || t == DType::UInt8;
}

/// MXNet's dtype codes (`__dtype__` attributes, .params records): 0 float32, 1 float64, 2 float16,
/// 3 uint8, 4 int32, 5 int8, 6 int64, 7 bool.
std::optional<DType> dtypeFromMxnetCode(int code);
int mxnetCode(DType t);

/// The C++ type that stores an element of each DType (Bool is stored as one byte 0 or 1).
template <DType T> struct StorageOf;
template <> struct StorageOf<DType::Float32> { using type = float; };
template <> struct StorageOf<DType::Float64> { using type = double; };
template <> struct StorageOf<DType::Float16> { using type = Half; };
template <> struct StorageOf<DType::Int64> { using type = int64_t; };
template <> struct StorageOf<DType::Int32> { using type = int32_t; };
template <> struct StorageOf<DType::Int8> { using type = int8_t; };
template <> struct StorageOf<DType::UInt8> { using type = uint8_t; };
template <> struct StorageOf<DType::Bool> { using type = bool; };

template <class T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<float>() { return DType::Float32; }
template <> constexpr DType dtypeOf<double>() { return DType::Float64; }
template <> constexpr DType dtypeOf<Half>() { return DType::Float16; }
template <> constexpr DType dtypeOf<int64_t>() { return DType::Int64; }
template <> constexpr DType dtypeOf<int32_t>() { return DType::Int32; }
template <> constexpr DType dtypeOf<int8_t>() { return DType::Int8; }
template <> constexpr DType dtypeOf<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtypeOf<bool>() { return DType::Bool; }

/// Calls `f(T{})` with T the storage type of `t`: `dispatchType(t, [&](auto tag) { using T =
/// decltype(tag); … })`.
template <class F> decltype(auto) dispatchType(DType t, F&& f)
{
    switch (t) {
    case DType::Float64:
        return f(double {});
    case DType::Float16:
        return f(Half {});
    case DType::Int64:
        return f(int64_t {});
    case DType::Int32:
        return f(int32_t {});
    case DType::Int8:
        return f(int8_t {});
    case DType::UInt8:
        return f(uint8_t {});
    case DType::Bool:
        return f(bool {});
    default:
        return f(float {});
    }
}

/// An element as double (bool 0/1; float16 exactly).
template <class T> inline double toDouble(T v)
{
    if constexpr (std::is_same_v<T, Half>)
        return static_cast<double>(static_cast<float>(v));
    else
        return static_cast<double>(v);
}

/// A double as an element of type T, as C++ (and NumPy's astype) converts: floating types round,
/// integers truncate toward zero, bool is v != 0. Out-of-range values saturate for integers
/// (NaN gives 0), so no conversion is undefined behaviour.
template <class T> inline T fromDouble(double v)
{
    if constexpr (std::is_same_v<T, Half>)
        return Half(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, bool>)
        return v != 0;
    else if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(v);
    else {
        if (!(v == v)) return T(0);
        constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
        constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
        if (v <= lo) return std::numeric_limits<T>::min();
        if (v >= hi) return std::numeric_limits<T>::max();
        return static_cast<T>(v);
    }
}

} // namespace opscope
