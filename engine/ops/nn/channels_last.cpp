#include "ops/nn/channels_last.h"

#include <algorithm>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define OPSCOPE_X86_TRANSPOSE 1
#include <immintrin.h>
#endif

namespace opscope {

namespace {

// Tiles keep both the rows read and the columns written within L1.
constexpr int64_t kTile = 32;

// dst[j][i] = src[i][j] for i in [i0, i1), j in [j0, j1); the scalar edges of the SIMD paths.
inline void transposeScalar(
    const float* src, float* dst, int64_t rows, int64_t cols, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
    for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j)
            dst[j * rows + i] = src[i * cols + j];
}

// Transposes the row-major (rows, cols) matrix `src` into the (cols, rows) matrix `dst`, one
// kTile x kTile tile at a time, B x B blocks inside a tile by `block`.
template <int B, class Block>
inline void transposeTiled(const float* src, float* dst, int64_t rows, int64_t cols, Block block)
{
    for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
        const int64_t i1 = std::min(rows, i0 + kTile);
        for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
            const int64_t j1 = std::min(cols, j0 + kTile);
            int64_t i = i0;
            for (; i + B <= i1; i += B) {
                int64_t j = j0;
                for (; j + B <= j1; j += B)
                    block(src + i * cols + j, cols, dst + j * rows + i, rows);
                transposeScalar(src, dst, rows, cols, i, i + B, j, j1);
            }
            transposeScalar(src, dst, rows, cols, i, i1, j0, j1);
        }
    }
}

#ifdef OPSCOPE_X86_TRANSPOSE
void transposeSse(const float* src, float* dst, int64_t rows, int64_t cols)
{
    transposeTiled<4>(src, dst, rows, cols, [](const float* s, int64_t ls, float* d, int64_t ld) {
        __m128 r0 = _mm_loadu_ps(s);
        __m128 r1 = _mm_loadu_ps(s + ls);
        __m128 r2 = _mm_loadu_ps(s + 2 * ls);
        __m128 r3 = _mm_loadu_ps(s + 3 * ls);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_storeu_ps(d, r0);
        _mm_storeu_ps(d + ld, r1);
        _mm_storeu_ps(d + 2 * ld, r2);
        _mm_storeu_ps(d + 3 * ld, r3);
    });
}

__attribute__((target("avx"))) inline void transposeBlock8(const float* s, int64_t ls, float* d, int64_t ld)
{
    const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ls);
    const __m256 r2 = _mm256_loadu_ps(s + 2 * ls), r3 = _mm256_loadu_ps(s + 3 * ls);
    const __m256 r4 = _mm256_loadu_ps(s + 4 * ls), r5 = _mm256_loadu_ps(s + 5 * ls);
    const __m256 r6 = _mm256_loadu_ps(s + 6 * ls), r7 = _mm256_loadu_ps(s + 7 * ls);
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + ld, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * ld, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * ld, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * ld, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * ld, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * ld, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * ld, _mm256_permute2f128_ps(u3, u7, 0x31));
}

// transposeTiled<8> spelled out: a template would not be compiled for AVX, nor inline the block.
__attribute__((target("avx"))) void transposeAvx(const float* src, float* dst, int64_t rows, int64_t cols)
{
    for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
        const int64_t i1 = std::min(rows, i0 + kTile);
        for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
            const int64_t j1 = std::min(cols, j0 + kTile);
            int64_t i = i0;
            for (; i + 8 <= i1; i += 8) {
                int64_t j = j0;
                for (; j + 8 <= j1; j += 8)
                    transposeBlock8(src + i * cols + j, cols, dst + j * rows + i, rows);
                transposeScalar(src, dst, rows, cols, i, i + 8, j, j1);
            }
            transposeScalar(src, dst, rows, cols, i, i1, j0, j1);
        }
    }
}
#endif

using TransposeFn = void (*)(const float*, float*, int64_t, int64_t);

TransposeFn pickTranspose()
{
#ifdef OPSCOPE_X86_TRANSPOSE
    if (__builtin_cpu_supports("avx")) return transposeAvx;
    return transposeSse;
#else
    return [](const float* src, float* dst, int64_t rows, int64_t cols) {
        transposeTiled<1>(src, dst, rows, cols, [](const float* s, int64_t, float* d, int64_t) { *d = *s; });
    };
#endif
}

void transpose(const float* src, float* dst, int64_t rows, int64_t cols)
{
    static const TransposeFn fn = pickTranspose();
    fn(src, dst, rows, cols);
}

} // namespace

void toChannelsLast(const float* src, float* dst, int64_t batch, int64_t channels, int64_t positions)
{
    const int64_t image = channels * positions;
    for (int64_t n = 0; n < batch; ++n)
        transpose(src + n * image, dst + n * image, channels, positions);
}

void toChannelsFirst(const float* src, float* dst, int64_t batch, int64_t channels, int64_t positions)
{
    const int64_t image = channels * positions;
    for (int64_t n = 0; n < batch; ++n)
        transpose(src + n * image, dst + n * image, positions, channels);
}

} // namespace opscope
