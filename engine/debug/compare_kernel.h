#pragma once

// Private to compare.cpp: the difference metrics of two float32 tensors in one vectorised pass
// (AVX-512, AVX2 or plain SSE2 chosen at run time), for tensors without NaN or ±Inf.

#include <cstdint>

namespace opscope::debug {

struct PairSums {
    double sumA2 = 0, sumB2 = 0, sumAB = 0, sumD2 = 0;
    double maxAbs = 0, maxRel = 0;
    int64_t beyond = 0; ///< elements with |a - b| > atol + rtol |a|
};

/// The sums over n pairs, in double. False (and `s` unspecified) when a value on either side is
/// NaN or ±Inf: the caller then takes the element-by-element path that counts them.
bool finitePairSums(const float* a, const float* b, int64_t n, double atol, double rtol, PairSums& s);

} // namespace opscope::debug
