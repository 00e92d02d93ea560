#include "tensor/dtype.h"

#include <bit>

namespace opscope {

float halfToFloat(uint16_t h)
{
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
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
            mant &= 0x3ffu;
            bits = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(bits);
}

uint16_t floatToHalf(float f)
{
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) // Inf or NaN (a NaN stays a quiet NaN)
        return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
    if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u); // rounds to beyond 65504: Inf
    if (absx < 0x38800000u) {
        // A half subnormal (or zero): |f| / 2^-24 rounded to the nearest integer, ties to even.
        if (absx < 0x33000000u) return sign; // at most half the smallest subnormal
        const uint32_t e = absx >> 23;
        const uint32_t m = (absx & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126 - e; // 14 … 24
        uint32_t result = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (result & 1u))) ++result;
        return static_cast<uint16_t>(sign | result);
    }
    // Normal: rebias the exponent, round the mantissa to 10 bits (to nearest even).
    uint32_t result = ((absx >> 13) - (112u << 10));
    const uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
}

float roundToBFloat16(float v)
{
    uint32_t x = std::bit_cast<uint32_t>(v);
    if ((x & 0x7fffffffu) > 0x7f800000u) return std::bit_cast<float>(x | 0x00400000u); // NaN: quiet, kept
    x += 0x7fffu + ((x >> 16) & 1u); // to nearest, ties to even; a carry may reach the exponent (Inf)
    return std::bit_cast<float>(x & 0xffff0000u);
}

Half::Half(float v)
    : bits(floatToHalf(v))
{
}

Half::operator float() const
{
    return halfToFloat(bits);
}

const char* dtypeName(DType t)
{
    switch (t) {
    case DType::Float32:
        return "float32";
    case DType::Float64:
        return "float64";
    case DType::Float16:
        return "float16";
    case DType::Int64:
        return "int64";
    case DType::Int32:
        return "int32";
    case DType::Int8:
        return "int8";
    case DType::UInt8:
        return "uint8";
    case DType::Bool:
        return "bool";
    }
    return "?";
}

std::optional<DType> dtypeFromName(std::string_view name)
{
    for (int i = 0; i < kNumDTypes; ++i)
        if (name == dtypeName(static_cast<DType>(i))) return static_cast<DType>(i);
    return std::nullopt;
}

std::optional<DType> dtypeFromMxnetCode(int code)
{
    switch (code) {
    case 0:
        return DType::Float32;
    case 1:
        return DType::Float64;
    case 2:
        return DType::Float16;
    case 3:
        return DType::UInt8;
    case 4:
        return DType::Int32;
    case 5:
        return DType::Int8;
    case 6:
        return DType::Int64;
    case 7:
        return DType::Bool;
    default:
        return std::nullopt;
    }
}

int mxnetCode(DType t)
{
    switch (t) {
    case DType::Float32:
        return 0;
    case DType::Float64:
        return 1;
    case DType::Float16:
        return 2;
    case DType::UInt8:
        return 3;
    case DType::Int32:
        return 4;
    case DType::Int8:
        return 5;
    case DType::Int64:
        return 6;
    case DType::Bool:
        return 7;
    }
    return 0;
}

} // namespace opscope
