/* rng.c — Philox4x64-10 streams and the variates built on them.  See rng.h for the keying. */
#define _GNU_SOURCE /* sincos */
#include "rng.h"

#include <Random123/philox.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "philox_simd.h"
#include "vmath.h"

void tf_rng_philox(const uint64_t key[2], const uint64_t ctr[4], uint64_t out[4]) {
  philox4x64_key_t k = {{key[0], key[1]}};
  philox4x64_ctr_t c = {{ctr[0], ctr[1], ctr[2], ctr[3]}};
  philox4x64_ctr_t r = philox4x64(c, k);
  for (int i = 0; i < 4; i++) out[i] = r.v[i];
}

/* The top 53 bits, shifted by half a unit so that neither 0 nor 1 can occur. */
static double open_unit(uint64_t bits) {
  return ((double)(bits >> 11) + 0.5) * 0x1.0p-53;
}

void tf_rng_uniforms(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n, double *out) {
  const uint64_t k[2] = {key.seed, key.member};
  for (size_t block = 0; block * 4 < n; block++) {
    const uint64_t c[4] = {counter, purpose, block, 0};
    uint64_t r[4];
    tf_rng_philox(k, c, r);
    for (size_t i = 0; i < 4 && block * 4 + i < n; i++) out[block * 4 + i] = open_unit(r[i]);
  }
}

double tf_rng_uniform(tf_rng_key key, uint64_t counter, uint32_t purpose) {
  double u;
  tf_rng_uniforms(key, counter, purpose, 1, &u);
  return u;
}

/* Philox blocks are drawn this many at a time, in structure-of-arrays form. */
enum { BATCH = 32 };

/* Philox4x64-10 (Random123's rounds and key schedule) on `count` <= BATCH counters in place:
 * w[j][b] is word j of block b.  Eight blocks a vector with AVX-512, four with AVX2
 * (philox_simd.h), Random123's own function block by block elsewhere; integer arithmetic,
 * the same words on every path.  TWOFOLD_RNG_ISA=avx2|portable restricts the choice (tests,
 * benchmarks); the choice is the process's. */
#ifdef TF_PHILOX_SIMD
TF_PHILOX_AVX512 static void philox_batch_avx512(const uint64_t key[2], size_t count,
                                                 uint64_t w[4][BATCH]) {
  for (size_t b = 0; b < count; b += 8) {
    const __mmask8 in = count - b >= 8 ? 0xff : (__mmask8)((1u << (count - b)) - 1);
    tf_philox_v8 x[4];
    for (int j = 0; j < 4; j++) x[j] = (tf_philox_v8)_mm512_maskz_loadu_epi64(in, w[j] + b);
    tf_philox_rounds8(key, x);
    for (int j = 0; j < 4; j++) _mm512_mask_storeu_epi64(w[j] + b, in, (__m512i)x[j]);
  }
}

TF_PHILOX_AVX2 static size_t philox_batch_avx2(const uint64_t key[2], size_t count,
                                               uint64_t w[4][BATCH]) {
  size_t b = 0;
  for (; b + 4 <= count; b += 4) {
    tf_philox_v4 x[4];
    for (int j = 0; j < 4; j++) memcpy(&x[j], w[j] + b, sizeof x[j]);
    tf_philox_rounds4(key, x);
    for (int j = 0; j < 4; j++) memcpy(w[j] + b, &x[j], sizeof x[j]);
  }
  return b;
}

enum { ISA_PORTABLE = 1, ISA_AVX2, ISA_AVX512 };

/* The widest path the processor has, or the one TWOFOLD_RNG_ISA names, looked up once per
 * process (getenv costs about what a batch of blocks does); a race between two threads would
 * only store the same value twice. */
static int philox_isa(void) {
  static _Atomic int chosen;
  int isa = atomic_load_explicit(&chosen, memory_order_relaxed);
  if (isa) return isa;
  isa = ISA_PORTABLE;
  const char *want = getenv("TWOFOLD_RNG_ISA");
  const bool any = !want || strcmp(want, "auto") == 0;
  if (any && __builtin_cpu_supports("avx512f"))
    isa = ISA_AVX512;
  else if ((any || strcmp(want, "avx2") == 0) && __builtin_cpu_supports("avx2"))
    isa = ISA_AVX2;
  atomic_store_explicit(&chosen, isa, memory_order_relaxed);
  return isa;
}
#endif

static void philox_batch(const uint64_t key[2], size_t count, uint64_t w[4][BATCH]) {
  size_t b = 0;
#ifdef TF_PHILOX_SIMD
  const int isa = philox_isa();
  if (isa == ISA_AVX512) {
    philox_batch_avx512(key, count, w);
    return;
  }
  if (isa == ISA_AVX2) b = philox_batch_avx2(key, count, w);
#endif
  for (; b < count; b++) {
    uint64_t out[4];
    tf_rng_philox(key, (const uint64_t[4]){w[0][b], w[1][b], w[2][b], w[3][b]}, out);
    for (int j = 0; j < 4; j++) w[j][b] = out[j];
  }
}

/* Box–Muller on the words of one block: pair p uses words 2p (radius) and 2p + 1 (angle);
 * only the `wanted` (1..4) leading values are computed.  sincos gives the same bits as sin
 * and cos called apart (glibc computes both with the same kernels). */
static void box_muller_block(const uint64_t word[4], size_t wanted, double *out) {
  for (size_t pair = 0; 2 * pair < wanted; pair++) {
    const double radius = sqrt(-2.0 * log(open_unit(word[2 * pair])));
    const double angle = 2.0 * M_PI * open_unit(word[2 * pair + 1]);
    if (2 * pair + 1 < wanted) {
      double s, c;
      sincos(angle, &s, &c);
      out[2 * pair] = radius * c, out[2 * pair + 1] = radius * s;
    } else {
      out[2 * pair] = radius * cos(angle);
    }
  }
}

/* The fast Box–Muller: the same words and formula as box_muller_block, with the log and
 * sin/cos of vmath.h evaluated over all pairs of the batch at once.  Pair q of block b is
 * entry q * count + b of the arrays, so that the loops run over contiguous words. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void box_muller_fast(
    size_t count, uint64_t w[4][BATCH], const size_t *wanted, const size_t *offset, double *out) {
  double ur[2 * BATCH], ua[2 * BATCH], radius[2 * BATCH], s[2 * BATCH], c[2 * BATCH];
  const size_t pairs = 2 * count;
  for (size_t q = 0; q < 2; q++)
    for (size_t b = 0; b < count; b++)
      ur[q * count + b] = open_unit(w[2 * q][b]), ua[q * count + b] = open_unit(w[2 * q + 1][b]);
  tf_vmath_log(pairs, ur, radius);
  for (size_t p = 0; p < pairs; p++) radius[p] = sqrt(-2.0 * radius[p]);
  tf_vmath_sincos_turn(pairs, ua, s, c);
  for (size_t b = 0; b < count; b++)
    for (size_t q = 0; 2 * q < wanted[b]; q++) {
      const size_t p = q * count + b;
      double *o = out + offset[b] + 2 * q;
      o[0] = radius[p] * c[p];
      if (2 * q + 1 < wanted[b]) o[1] = radius[p] * s[p];
    }
}

static void normals_run(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n,
                        size_t counters, bool fast, double *out) {
  const uint64_t k[2] = {key.seed, key.member};
  uint64_t w[4][BATCH];
  size_t offset[BATCH], wanted[BATCH]; /* where block b's values go in out, and how many */
  size_t step = 0, index = 0;          /* the next block: its counter and its first value */
  while (step < counters) {
    size_t count = 0;
    for (; count < BATCH && step < counters; count++) {
      w[0][count] = counter + step, w[1][count] = purpose, w[2][count] = index / 4;
      w[3][count] = 0, offset[count] = step * n + index;
      wanted[count] = n - index < 4 ? n - index : 4;
      index += 4;
      if (index >= n) index = 0, step++;
    }
    philox_batch(k, count, w);
    if (fast) {
      box_muller_fast(count, w, wanted, offset, out);
      continue;
    }
    for (size_t b = 0; b < count; b++) {
      const uint64_t word[4] = {w[0][b], w[1][b], w[2][b], w[3][b]};
      box_muller_block(word, wanted[b], out + offset[b]);
    }
  }
}

void tf_rng_normals_run(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n,
                        size_t counters, double *out) {
  normals_run(key, counter, purpose, n, counters, false, out);
}

void tf_rng_normals_run_fast(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n,
                             size_t counters, double *out) {
  normals_run(key, counter, purpose, n, counters, true, out);
}

void tf_rng_normals(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n, double *out) {
  tf_rng_normals_run(key, counter, purpose, n, 1, out);
}

double tf_rng_exponential(tf_rng_key key, uint64_t counter, uint32_t purpose) {
  return -log(tf_rng_uniform(key, counter, purpose));
}
