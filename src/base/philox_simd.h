/* philox_simd.h — Philox4x64-10's ten rounds on eight blocks at once (AVX-512F) or four
 * (AVX2), the words of the blocks in structure-of-arrays form: x[j] holds word j of every
 * block.  Integer arithmetic only, so each block's words are Random123's philox4x64() bit
 * for bit (tests/unit/test_rng.c and test_devs.c check it against Random123 on every
 * instruction set the machine has).
 *
 * Why here: the variates of rng.c and the DEVS tiles of devs.c draw from the same generator;
 * x86 has no 64-bit high multiply in its vector units, and gcc 12 neither vectorises a
 * 128-bit product nor recognises a 32 x 32 -> 64-bit product in plain C (it emits the
 * three-uop vpmullq for each), so the products are written with pmuludq intrinsics once.
 * The functions carry their own target attributes: callers check the processor at run time
 * (__builtin_cpu_supports) and one binary runs everywhere. */
#ifndef TF_PHILOX_SIMD_H
#define TF_PHILOX_SIMD_H

#include <Random123/philox.h>
#include <stdint.h>

/* Not under the sanitizers' builds: their instrumentation and the target attributes do not
 * mix there, and the portable path is the reference anyway. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define TF_PHILOX_SIMD 1
#include <immintrin.h>
#define TF_PHILOX_AVX512 __attribute__((target("avx512f")))
#define TF_PHILOX_AVX2 __attribute__((target("avx2")))

/* The lanes' words as plain vectors, so that one body (TF_PHILOX_ROUNDS_FOR) serves both
 * widths: only the 32 x 32 -> 64-bit multiply is an intrinsic. */
typedef uint64_t tf_philox_v8 __attribute__((vector_size(64)));
typedef uint64_t tf_philox_v4 __attribute__((vector_size(32)));

/* NAME(key, x): the ten rounds of Philox4x64 on the blocks in x[0..3] (word j of every block
 * in x[j]), in place, for vectors V whose 32 x 32 -> 64-bit lane products MUL32 gives.  Each
 * 64 x 64 -> 128-bit product by a round constant m: the high half from 32-bit partial products
 * with the carries of Hacker's Delight's mulhu (no sum can overflow), the low half as
 * p00 + ((p01 + p10) << 32) modulo 2^64. */
#define TF_PHILOX_ROUNDS_FOR(NAME, TARGET, V, MUL32)                  \
  TARGET static inline V NAME##_mulhilo(V a, V m_lo, V m_hi, V *hi) { \
    const V low32 = (V){0} + 0xffffffffu, a_hi = a >> 32;             \
    const V p00 = MUL32(a, m_lo), p01 = MUL32(a, m_hi);               \
    const V p10 = MUL32(a_hi, m_lo), p11 = MUL32(a_hi, m_hi);         \
    const V t = p01 + (p00 >> 32), u = p10 + (t & low32);             \
    *hi = p11 + (t >> 32) + (u >> 32);                                \
    return p00 + ((p01 + p10) << 32);                                 \
  }                                                                   \
  TARGET static inline void NAME(const uint64_t key[2], V x[4]) {     \
    const V m0_lo = (V){0} + (PHILOX_M4x64_0 & 0xffffffff),           \
            m0_hi = (V){0} + (PHILOX_M4x64_0 >> 32);                  \
    const V m1_lo = (V){0} + (PHILOX_M4x64_1 & 0xffffffff),           \
            m1_hi = (V){0} + (PHILOX_M4x64_1 >> 32);                  \
    V x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];                     \
    uint64_t k0 = key[0], k1 = key[1];                                \
    for (int r = 0; r < 10; r++) {                                    \
      if (r) k0 += PHILOX_W64_0, k1 += PHILOX_W64_1;                  \
      V hi0, hi1;                                                     \
      const V lo0 = NAME##_mulhilo(x0, m0_lo, m0_hi, &hi0);           \
      const V lo1 = NAME##_mulhilo(x2, m1_lo, m1_hi, &hi1);           \
      x0 = hi1 ^ x1 ^ k0, x1 = lo1;                                   \
      x2 = hi0 ^ x3 ^ k1, x3 = lo0;                                   \
    }                                                                 \
    x[0] = x0, x[1] = x1, x[2] = x2, x[3] = x3;                       \
  }

#define TF_PHILOX_MUL32_8(a, b) ((tf_philox_v8)_mm512_mul_epu32((__m512i)(a), (__m512i)(b)))
#define TF_PHILOX_MUL32_4(a, b) ((tf_philox_v4)_mm256_mul_epu32((__m256i)(a), (__m256i)(b)))
TF_PHILOX_ROUNDS_FOR(tf_philox_rounds8, TF_PHILOX_AVX512, tf_philox_v8, TF_PHILOX_MUL32_8)
TF_PHILOX_ROUNDS_FOR(tf_philox_rounds4, TF_PHILOX_AVX2, tf_philox_v4, TF_PHILOX_MUL32_4)
#endif

#endif
