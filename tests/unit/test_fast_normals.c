/* test_fast_normals.c — integrator.normals: fast.  Its log and sin/cos of a turn (vmath.h)
 * against long double libm over the range the normals use; a plain scalar build of them
 * against the vectorised one the library runs (the same bits); its normals against the
 * normal distribution (Kolmogorov–Smirnov, moments, pair correlation), against the exact
 * stream drawn from the same words, and batched against per-counter draws. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"
#include "vmath.h"

/* The same source without target clones or vectorisation: one value at a time. */
#pragma GCC push_options
#pragma GCC optimize("no-tree-vectorize")
#define TF_VMATH_CLONES
#define tf_vmath_log scalar_log
#define tf_vmath_sincos_turn scalar_sincos_turn
#define tf_vmath_exp scalar_exp /* test_fast_control.c's */
#include "vmath.c"
#undef tf_vmath_exp
#undef tf_vmath_log
#undef tf_vmath_sincos_turn
#pragma GCC pop_options

enum { SAMPLES = 1 << 20 };

/* The unit values the normals are drawn from: Philox words as open_unit makes them, then
 * log-uniform ones down to 2^-54 (the smallest open_unit gives), then edge cases. */
static size_t unit_samples(double *u) {
  size_t n = 0;
  const uint64_t key[2] = {7, 11};
  for (uint64_t i = 0; n < SAMPLES / 2; i++) {
    uint64_t r[4];
    tf_rng_philox(key, (const uint64_t[4]){i, 0, 0, 0}, r);
    for (int j = 0; j < 4; j++) u[n++] = ((double)(r[j] >> 11) + 0.5) * 0x1.0p-53;
  }
  for (size_t i = 0; n < SAMPLES - 64; i++)
    u[n++] = exp2(-54.0 * (double)(i + 1) / (double)(SAMPLES / 2));
  const double edges[] = {0x1.0p-54,
                          0x1.8p-54,
                          0.5,
                          0.25,
                          0.125,
                          0.75,
                          0.375,
                          0.625,
                          0.875,
                          M_SQRT1_2,
                          1 - 0x1p-53,
                          1 - 0x1p-52,
                          0x1.6a09e667f3bcdp-1,
                          0x1.6a09e667f3bccp-1,
                          0.1,
                          0.9,
                          0.999999,
                          1e-9};
  for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) u[n++] = edges[i];
  return n;
}

/* sin and cos of 2 pi u in long double, reduced by identities exact in double: u -> 1 - u
 * (u >= 1/2), then sin(2 pi u) = sin(2 pi (1/2 - u)) for u >= 1/4 and
 * cos(2 pi u) = sin(2 pi (1/4 - u)) for u >= 1/8, so that sinl sees no argument near a zero
 * of its result that rounding could move. */
static void reference_sincos(double u, long double *s, long double *c) {
  const long double two_pi = 2 * 3.141592653589793238462643383279502884L;
  double sign_s = 1;
  if (u >= 0.5) u = 1 - u, sign_s = -1;
  *s = sign_s * sinl(two_pi * (u >= 0.25 ? 0.5 - u : u));
  *c = u >= 0.125 ? sinl(two_pi * (0.25 - u)) : cosl(two_pi * u);
}

static double relative(double got, long double want) {
  return want == 0 ? fabs(got) : (double)fabsl(((long double)got - want) / want);
}

/* Largest relative errors over the samples; 2^-52 is one unit in the last place at most. */
static void accuracy(const double *u, size_t n) {
  double *lg = malloc(n * sizeof *lg), *s = malloc(n * sizeof *s), *c = malloc(n * sizeof *c);
  tf_vmath_log(n, u, lg);
  tf_vmath_sincos_turn(n, u, s, c);
  double worst_log = 0, worst_sin = 0, worst_cos = 0;
  for (size_t i = 0; i < n; i++) {
    long double rs, rc;
    reference_sincos(u[i], &rs, &rc);
    worst_log = fmax(worst_log, relative(lg[i], logl((long double)u[i])));
    worst_sin = fmax(worst_sin, relative(s[i], rs));
    worst_cos = fmax(worst_cos, relative(c[i], rc));
  }
  printf("max relative error: log %.3g, sin %.3g, cos %.3g (2^-52 = %.3g)\n", worst_log, worst_sin,
         worst_cos, 0x1p-52);
  CHECK(worst_log < 0x1p-52, "log: max relative error %.3g", worst_log);
  CHECK(worst_sin < 0x1p-51, "sin of a turn: max relative error %.3g", worst_sin);
  CHECK(worst_cos < 0x1p-51, "cos of a turn: max relative error %.3g", worst_cos);
  /* and a plain scalar build gives the vector loops' bits */
  double *lg1 = malloc(n * sizeof *lg1), *s1 = malloc(n * sizeof *s1), *c1 = malloc(n * sizeof *c1);
  scalar_log(n, u, lg1);
  scalar_sincos_turn(n, u, s1, c1);
  CHECK(memcmp(lg, lg1, n * sizeof *lg) == 0 && memcmp(s, s1, n * sizeof *s) == 0 &&
            memcmp(c, c1, n * sizeof *c) == 0,
        "the vectorised loops differ from a scalar build");
  free(lg), free(s), free(c), free(lg1), free(s1), free(c1);
}

static int compare_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* N normals of one member, 4 a counter: Kolmogorov–Smirnov distance to the normal CDF
 * (critical value at level 0.001: 1.95 / sqrt(N)), moments and the correlation of the two
 * values of a pair within 5 standard errors. */
static void distribution(void) {
  const size_t counters = 1 << 16, n = 4 * counters;
  double *z = malloc(n * sizeof *z);
  tf_rng_normals_run_fast((tf_rng_key){2024, 7}, 0, TF_RNG_NOISE, 4, counters, z);
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0, pair = 0;
  for (size_t i = 0; i < n; i++) {
    const double x = z[i];
    m1 += x, m2 += x * x, m3 += x * x * x, m4 += x * x * x * x;
    if (i % 2 == 0) pair += x * z[i + 1];
  }
  const double se = 1 / sqrt((double)n);
  CHECK_CLOSE(m1 / n, 0.0, 5 * se, "fast normals: mean");
  CHECK_CLOSE(m2 / n, 1.0, 5 * sqrt(2.0) * se, "fast normals: variance");
  CHECK_CLOSE(m3 / n, 0.0, 5 * sqrt(15.0) * se, "fast normals: third moment");
  CHECK_CLOSE(m4 / n, 3.0, 5 * sqrt(96.0) * se, "fast normals: fourth moment");
  CHECK_CLOSE(pair / (n / 2), 0.0, 5 * sqrt(2.0) * se, "fast normals: pair correlation");
  qsort(z, n, sizeof *z, compare_double);
  double d = 0;
  for (size_t i = 0; i < n; i++) {
    const double cdf = 0.5 * erfc(-z[i] / M_SQRT2);
    d = fmax(d, fmax(fabs(cdf - (double)i / n), fabs((double)(i + 1) / n - cdf)));
  }
  printf("Kolmogorov-Smirnov distance %.3g over %zu normals (critical 0.001: %.3g)\n", d, n,
         1.95 * se);
  CHECK(d < 1.95 * se, "fast normals: KS distance %.3g", d);
  free(z);
}

/* The same words as the exact stream: each value close to it (and the two streams not
 * identical, or this test would not see the fast one).  The exact stream rounds the angle
 * 2 pi u before its sin and cos (up to 4.4e-16 off near a full turn), which a radius of up
 * to 8.6 (u = 2^-54) multiplies: 1e-14 bounds that with room, far below any other error. */
static void same_draws_as_exact(void) {
  enum { COUNTERS = 5000, N = 3 };
  static double fast[COUNTERS * N], exact[COUNTERS * N];
  tf_rng_normals_run_fast((tf_rng_key){20141, 5}, 0, TF_RNG_NOISE, N, COUNTERS, fast);
  tf_rng_normals_run((tf_rng_key){20141, 5}, 0, TF_RNG_NOISE, N, COUNTERS, exact);
  double worst = 0;
  long differ = 0;
  for (size_t i = 0; i < COUNTERS * N; i++) {
    worst = fmax(worst, fabs(fast[i] - exact[i]) / (1 + fabs(exact[i])));
    differ += fast[i] != exact[i];
  }
  printf("fast vs exact: max |difference| / (1 + |exact|) %.3g, %ld of %d values differ\n", worst,
         differ, COUNTERS * N);
  CHECK(worst < 1e-14, "fast normals far from the exact ones: %.3g", worst);
  CHECK(differ > 0, "fast normals identical to the exact ones: not the fast stream?");
}

/* Runs of many counters equal the one-counter draws bit for bit (batch independence: a
 * member's increments do not depend on where a segment or a resume starts). */
static void batched_runs(void) {
  enum { COUNTERS = 77, MAX_N = 16 };
  static double run[COUNTERS * MAX_N];
  const size_t dims[] = {1, 2, 3, 4, 5, 7, 16};
  const uint64_t firsts[] = {0, 999, ~0ULL - 200};
  long mismatches = 0;
  for (size_t d = 0; d < sizeof dims / sizeof *dims; d++)
    for (size_t f = 0; f < 3; f++) {
      const size_t n = dims[d];
      tf_rng_normals_run_fast((tf_rng_key){1, 12345}, firsts[f], TF_RNG_NOISE, n, COUNTERS, run);
      for (size_t s = 0; s < COUNTERS; s++) {
        double one[MAX_N];
        tf_rng_normals_run_fast((tf_rng_key){1, 12345}, firsts[f] + s, TF_RNG_NOISE, n, 1, one);
        mismatches += memcmp(one, run + s * n, n * sizeof *one) != 0;
      }
    }
  CHECK(mismatches == 0, "%ld batched fast draws differ from the one-counter draws", mismatches);
}

int main(void) {
  double *u = malloc(SAMPLES * sizeof *u);
  accuracy(u, unit_samples(u));
  free(u);
  distribution();
  same_draws_as_exact();
  batched_runs();
  return check_report("test_fast_normals");
}
