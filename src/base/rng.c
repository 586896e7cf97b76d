/* rng.c — Philox4x64-10 streams and the variates built on them.  See rng.h for the keying. */
#define _GNU_SOURCE /* sincos */
#include "rng.h"

#include <Random123/philox.h>
#include <math.h>
#include <stdbool.h>

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

/* High and low words of a * b, from 32-bit halves: gcc vectorises these loops (pmuludq),
 * which it cannot do with a 128-bit product.  Integer arithmetic, so exact. */
static inline uint64_t mul_hi(uint64_t a, uint64_t b) {
  const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* Philox4x64-10 (Random123's rounds and key schedule) on `count` <= BATCH counters in place:
 * w[j][b] is word j of block b.  The clones let one binary use the widest vectors the CPU
 * has while keeping a portable path. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void philox_batch(
    const uint64_t key[2], size_t count, uint64_t w[4][BATCH]) {
  uint64_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) {
    for (size_t b = 0; b < count; b++) {
      const uint64_t x0 = w[0][b], x1 = w[1][b], x2 = w[2][b], x3 = w[3][b];
      const uint64_t m0 = PHILOX_M4x64_0, m1 = PHILOX_M4x64_1;
      w[0][b] = mul_hi(m1, x2) ^ x1 ^ k0;
      w[1][b] = m1 * x2;
      w[2][b] = mul_hi(m0, x0) ^ x3 ^ k1;
      w[3][b] = m0 * x0;
    }
    k0 += PHILOX_W64_0, k1 += PHILOX_W64_1;
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
