#include "debug/compare_kernel.h"

#include "debug/stats_simd.h"

#include <cmath>
#include <cstring>

namespace opscope::debug {

namespace {

typedef float F8 __attribute__((vector_size(32)));
typedef double D8 __attribute__((vector_size(64)));
typedef long long L8 __attribute__((vector_size(64)));

// Inlined into each instruction set's kernel, the vector by reference: a vector passed by value to a
// function of another instruction set would be passed otherwise (the ABI differs; -O1 builds showed it).
inline __attribute__((always_inline)) double hsum(const D8& v)
{
    double s = 0;
    for (int k = 0; k < 8; ++k)
        s += v[k];
    return s;
}

inline __attribute__((always_inline)) double hmax(const D8& v)
{
    double m = 0;
    for (int k = 0; k < 8; ++k)
        m = v[k] > m ? v[k] : m;
    return m;
}

// Eight pairs at a time in double lanes; the code is compiled for each instruction set by the
// functions below that inline it.
inline __attribute__((always_inline)) bool kernel(
    const float* a, const float* b, int64_t n, double atol, double rtol, PairSums& s)
{
    const D8 zero = {}, tolAbs = zero + atol, tolRel = zero + rtol;
    D8 sA2 = zero, sB2 = zero, sAB = zero, sD2 = zero, mAbs = zero, relD = zero;
    L8 beyond = {}, bad = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        F8 xf, yf;
        std::memcpy(&xf, a + i, sizeof xf);
        std::memcpy(&yf, b + i, sizeof yf);
        const D8 x = __builtin_convertvector(xf, D8), y = __builtin_convertvector(yf, D8);
        bad |= ((x - x) != zero) | ((y - y) != zero); // NaN or ±Inf: v - v is NaN
        const D8 d = x - y;
        const D8 ad = d < zero ? -d : d;
        const D8 ax = x < zero ? -x : x;
        mAbs = ad > mAbs ? ad : mAbs;
        const D8 rel = ax > zero ? ad / (ax > zero ? ax : zero + 1) : zero; // none where a is 0
        relD = rel > relD ? rel : relD;
        beyond -= ad > tolAbs + tolRel * ax; // a true comparison is -1
        sA2 += x * x;
        sB2 += y * y;
        sAB += x * y;
        sD2 += d * d;
    }
    for (int k = 0; k < 8; ++k)
        if (bad[k]) return false;
    s.sumA2 = hsum(sA2);
    s.sumB2 = hsum(sB2);
    s.sumAB = hsum(sAB);
    s.sumD2 = hsum(sD2);
    s.maxAbs = hmax(mAbs);
    s.maxRel = 0;
    for (int k = 0; k < 8; ++k)
        s.maxRel = std::max(s.maxRel, relD[k]);
    s.beyond = 0;
    for (int k = 0; k < 8; ++k)
        s.beyond += beyond[k];
    for (; i < n; ++i) {
        const double x = a[i], y = b[i];
        if (!std::isfinite(x) || !std::isfinite(y)) return false;
        const double d = x - y, ad = std::fabs(d), ax = std::fabs(x);
        s.maxAbs = ad > s.maxAbs ? ad : s.maxAbs;
        if (ax > 0) s.maxRel = std::max(s.maxRel, ad / ax);
        s.beyond += ad > atol + rtol * ax;
        s.sumA2 += x * x;
        s.sumB2 += y * y;
        s.sumAB += x * y;
        s.sumD2 += d * d;
    }
    return true;
}

#ifdef OPSCOPE_STATS_X86
__attribute__((target(OPSCOPE_AVX512))) bool kernelAvx512(
    const float* a, const float* b, int64_t n, double atol, double rtol, PairSums& s)
{
    return kernel(a, b, n, atol, rtol, s);
}
__attribute__((target(OPSCOPE_AVX2))) bool kernelAvx2(
    const float* a, const float* b, int64_t n, double atol, double rtol, PairSums& s)
{
    return kernel(a, b, n, atol, rtol, s);
}
#endif

} // namespace

bool finitePairSums(const float* a, const float* b, int64_t n, double atol, double rtol, PairSums& s)
{
#ifdef OPSCOPE_STATS_X86
    switch (simd::isa()) {
    case simd::Isa::Avx512:
        return kernelAvx512(a, b, n, atol, rtol, s);
    case simd::Isa::Avx2:
        return kernelAvx2(a, b, n, atol, rtol, s);
    case simd::Isa::Portable:
        break;
    }
#endif
    return kernel(a, b, n, atol, rtol, s);
}

} // namespace opscope::debug
