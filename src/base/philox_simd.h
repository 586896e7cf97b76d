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

/* 64 x 64 -> 128-bit products of eight lanes by a constant m (halves m_lo, m_hi): the high
 * half from 32-bit partial products with the carries of Hacker's Delight's mulhu (no sum can
 * overflow), the low half as p00 + ((p01 + p10) << 32) modulo 2^64. */
TF_PHILOX_AVX512 static inline __m512i tf_philox_mulhilo8(__m512i a, __m512i m_lo, __m512i m_hi,
                                                          __m512i *hi) {
  const __m512i low32 = _mm512_set1_epi64(0xffffffff);
  const __m512i a_hi = _mm512_srli_epi64(a, 32);
  const __m512i p00 = _mm512_mul_epu32(a, m_lo), p01 = _mm512_mul_epu32(a, m_hi);
  const __m512i p10 = _mm512_mul_epu32(a_hi, m_lo), p11 = _mm512_mul_epu32(a_hi, m_hi);
  const __m512i t = _mm512_add_epi64(p01, _mm512_srli_epi64(p00, 32));
  const __m512i u = _mm512_add_epi64(p10, _mm512_and_si512(t, low32));
  *hi = _mm512_add_epi64(_mm512_add_epi64(p11, _mm512_srli_epi64(t, 32)), _mm512_srli_epi64(u, 32));
  return _mm512_add_epi64(p00, _mm512_slli_epi64(_mm512_add_epi64(p01, p10), 32));
}

/* The ten rounds of Philox4x64 on eight blocks, in place. */
TF_PHILOX_AVX512 static inline void tf_philox_rounds8(const uint64_t key[2], __m512i x[4]) {
  const __m512i m0_lo = _mm512_set1_epi64(PHILOX_M4x64_0 & 0xffffffff),
                m0_hi = _mm512_set1_epi64(PHILOX_M4x64_0 >> 32),
                m1_lo = _mm512_set1_epi64(PHILOX_M4x64_1 & 0xffffffff),
                m1_hi = _mm512_set1_epi64(PHILOX_M4x64_1 >> 32);
  __m512i x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
  uint64_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    if (r) k0 += PHILOX_W64_0, k1 += PHILOX_W64_1;
    __m512i hi0, hi1;
    const __m512i lo0 = tf_philox_mulhilo8(x0, m0_lo, m0_hi, &hi0);
    const __m512i lo1 = tf_philox_mulhilo8(x2, m1_lo, m1_hi, &hi1);
    /* 0x96: a ^ b ^ c */
    x0 = _mm512_ternarylogic_epi64(hi1, x1, _mm512_set1_epi64((long long)k0), 0x96);
    x1 = lo1;
    x2 = _mm512_ternarylogic_epi64(hi0, x3, _mm512_set1_epi64((long long)k1), 0x96);
    x3 = lo0;
  }
  x[0] = x0, x[1] = x1, x[2] = x2, x[3] = x3;
}

/* The same products on four lanes. */
TF_PHILOX_AVX2 static inline __m256i tf_philox_mulhilo4(__m256i a, __m256i m_lo, __m256i m_hi,
                                                        __m256i *hi) {
  const __m256i low32 = _mm256_set1_epi64x(0xffffffff);
  const __m256i a_hi = _mm256_srli_epi64(a, 32);
  const __m256i p00 = _mm256_mul_epu32(a, m_lo), p01 = _mm256_mul_epu32(a, m_hi);
  const __m256i p10 = _mm256_mul_epu32(a_hi, m_lo), p11 = _mm256_mul_epu32(a_hi, m_hi);
  const __m256i t = _mm256_add_epi64(p01, _mm256_srli_epi64(p00, 32));
  const __m256i u = _mm256_add_epi64(p10, _mm256_and_si256(t, low32));
  *hi = _mm256_add_epi64(_mm256_add_epi64(p11, _mm256_srli_epi64(t, 32)), _mm256_srli_epi64(u, 32));
  return _mm256_add_epi64(p00, _mm256_slli_epi64(_mm256_add_epi64(p01, p10), 32));
}

/* The ten rounds of Philox4x64 on four blocks, in place. */
TF_PHILOX_AVX2 static inline void tf_philox_rounds4(const uint64_t key[2], __m256i x[4]) {
  const __m256i m0_lo = _mm256_set1_epi64x(PHILOX_M4x64_0 & 0xffffffff),
                m0_hi = _mm256_set1_epi64x(PHILOX_M4x64_0 >> 32),
                m1_lo = _mm256_set1_epi64x(PHILOX_M4x64_1 & 0xffffffff),
                m1_hi = _mm256_set1_epi64x(PHILOX_M4x64_1 >> 32);
  __m256i x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
  uint64_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    if (r) k0 += PHILOX_W64_0, k1 += PHILOX_W64_1;
    __m256i hi0, hi1;
    const __m256i lo0 = tf_philox_mulhilo4(x0, m0_lo, m0_hi, &hi0);
    const __m256i lo1 = tf_philox_mulhilo4(x2, m1_lo, m1_hi, &hi1);
    x0 = _mm256_xor_si256(_mm256_xor_si256(hi1, x1), _mm256_set1_epi64x((long long)k0));
    x1 = lo1;
    x2 = _mm256_xor_si256(_mm256_xor_si256(hi0, x3), _mm256_set1_epi64x((long long)k1));
    x3 = lo0;
  }
  x[0] = x0, x[1] = x1, x[2] = x2, x[3] = x3;
}
#endif

#endif
