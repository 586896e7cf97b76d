/* test_fast_math.c — sin, cos and atan2 of twofold/fast_math.h (model.field_math: fast)
 * against long double libm over wide ranges, in units in the last place of the exact value;
 * their edge cases against C's atan2, sin and cos; and the same bits from a loop compiled
 * without vectorisation, with SSE2 and with AVX2 and AVX-512 (where the CPU has them): what
 * keeps a member's numbers the same on every lane width.
 *
 * The bounds: sin and cos within 1 ulp over the reduced range |x| <= 2^19 (fdlibm's kernels
 * with its three-piece reduction), atan2 within 1.5 ulp over every quadrant and magnitudes from
 * 1e-300 to 1e300 (fdlibm's atan of a correctly rounded quotient). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "twofold/fast_math.h"

enum { SAMPLES = 1 << 19 };

/* A fixed pseudo-random unit value (splitmix64): the test needs spread, not a stream. */
static double unit(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/* |got - want| in units of the last place of want as a double (of the smallest normal below
 * it) */
static double ulps(double got, long double want) {
  if (isnan(got) || isnan((double)want)) return isnan(got) && isnan((double)want) ? 0 : INFINITY;
  const double w = (double)want;
  const int e = w == 0 ? -1022 : ilogb(w) < -1022 ? -1022 : ilogb(w);
  return (double)(fabsl((long double)got - want) / ldexpl(1.0L, e - 52));
}

/* Angles: uniform over a turn, over the whole reduced range, log-uniform small ones, and
 * multiples of pi/2 nudged by an ulp (the reduction's hardest cancellations) or by 2^-17 to
 * 2^-48 of themselves (its second round: the arrays' functions leave both to the one-value
 * functions after their vector loop) */
static size_t angle_samples(double *x) {
  uint64_t st = 1;
  size_t n = 0;
  while (n < SAMPLES / 4) x[n++] = M_PI * (2 * unit(&st) - 1);
  while (n < SAMPLES / 2) x[n++] = TF_FAST_TRIG_MAX * (2 * unit(&st) - 1);
  while (n < 3 * SAMPLES / 4) x[n++] = pow(10.0, -300.0 + 300.0 * unit(&st));
  while (n < SAMPLES) {
    const double k = floor(unit(&st) * TF_FAST_TRIG_MAX / M_PI_2), side = unit(&st) < 0.5 ? -1 : 1;
    const double near = k * M_PI_2 * (1 + side * ldexp(1.0, -17 - (int)(32 * unit(&st))));
    x[n] = n % 2 ? nextafter(k * M_PI_2, side * INFINITY) : near;
    n++;
  }
  return n;
}

/* The arrays' loops compiled three ways (the SSE2 baseline, AVX2 and AVX-512 where the CPU has
 * them), and the one-value functions (with branches) without vectorisation */
#define SINCOS_LOOP(name, attr)                                         \
  attr static void name(int n, const double *x, double *s, double *c) { \
    tf_fast_sincos_array(n, x, s, c);                                   \
  }
#define ATAN2_LOOP(name, attr)                                                  \
  attr static void name(int n, const double *y, const double *x, double *out) { \
    tf_fast_atan2_array(n, y, x, out);                                          \
  }
SINCOS_LOOP(sincos_sse2, )
SINCOS_LOOP(sincos_avx2, __attribute__((target("avx2"))))
SINCOS_LOOP(sincos_avx512, __attribute__((target("avx512f,avx512dq"))))
ATAN2_LOOP(atan2_sse2, )
ATAN2_LOOP(atan2_avx2, __attribute__((target("avx2"))))
ATAN2_LOOP(atan2_avx512, __attribute__((target("avx512f,avx512dq"))))
#pragma GCC push_options
#pragma GCC optimize("no-tree-vectorize")
static void sincos_scalar(int n, const double *x, double *s, double *c) {
  for (int i = 0; i < n; i++) tf_fast_sincos(x[i], &s[i], &c[i]);
}
static void atan2_scalar(int n, const double *y, const double *x, double *out) {
  for (int i = 0; i < n; i++) out[i] = tf_fast_atan2(y[i], x[i]);
}
static void sin_cos_scalar(int n, const double *x, double *s, double *c) {
  for (int i = 0; i < n; i++) s[i] = tf_fast_sin(x[i]), c[i] = tf_fast_cos(x[i]);
}
#pragma GCC pop_options

static void sincos_accuracy(void) {
  double *x = malloc(SAMPLES * sizeof *x), *s = malloc(SAMPLES * sizeof *s),
         *c = malloc(SAMPLES * sizeof *c);
  const size_t n = angle_samples(x);
  sincos_sse2((int)n, x, s, c);
  double worst_s = 0, worst_c = 0;
  for (size_t i = 0; i < n; i++) {
    worst_s = fmax(worst_s, ulps(s[i], sinl((long double)x[i])));
    worst_c = fmax(worst_c, ulps(c[i], cosl((long double)x[i])));
  }
  printf("sin: %zu values, max error %.3f ulp; cos: %.3f ulp\n", n, worst_s, worst_c);
  CHECK(worst_s <= 1.0, "sin: max error %.3f ulp", worst_s);
  CHECK(worst_c <= 1.0, "cos: max error %.3f ulp", worst_c);
  free(x), free(s), free(c);
}

/* Beyond the reduced range, infinities and NaN: libm's own values, by both paths. */
static void sincos_edges(void) {
  const double xs[] = {0x1p19,   -0x1p19,   nextafter(0x1p19, INFINITY),
                       1e6,      -3e7,      1e300,
                       INFINITY, -INFINITY, NAN,
                       0.0,      -0.0,      0x1p-1074,
                       M_PI_4,   -M_PI_2};
  const int n = sizeof xs / sizeof *xs;
  double s[16], c[16];
  sincos_sse2(n, xs, s, c);
  for (int i = 0; i < n; i++) {
    double s1, c1;
    tf_fast_sincos(xs[i], &s1, &c1);
    CHECK(memcmp(&s1, &s[i], sizeof s1) == 0 && memcmp(&c1, &c[i], sizeof c1) == 0,
          "x = %g: one value and the array differ", xs[i]);
    if (!tf_fast_trig_in_range(xs[i])) {
      const double ls = sin(xs[i]), lc = cos(xs[i]);
      CHECK((isnan(ls) && isnan(s[i])) || memcmp(&ls, &s[i], sizeof ls) == 0,
            "sin(%g) out of range is libm's", xs[i]);
      CHECK((isnan(lc) && isnan(c[i])) || memcmp(&lc, &c[i], sizeof lc) == 0,
            "cos(%g) out of range is libm's", xs[i]);
    }
  }
  CHECK(tf_fast_sin(0.0) == 0.0 && !signbit(tf_fast_sin(0.0)) && signbit(tf_fast_sin(-0.0)),
        "sin(+-0) = +-0");
  CHECK(tf_fast_cos(0.0) == 1.0 && tf_fast_sin(0x1p-1074) == 0x1p-1074, "cos 0 = 1, sin tiny");
}

/* Every quadrant, magnitudes log-uniform over 1e-300 .. 1e300 and ratios near 1 (the wheel's
 * |h| against |g| is any ratio, both nonnegative). */
static void atan2_accuracy(double *y, double *x, double *out) {
  uint64_t st = 3;
  for (size_t i = 0; i < SAMPLES; i++) {
    const bool near = i % 4 == 0;
    const double m = pow(10.0, -300.0 + 600.0 * unit(&st));
    x[i] = (unit(&st) < 0.5 ? -1 : 1) * m;
    y[i] = (unit(&st) < 0.5 ? -1 : 1) *
           (near ? m * (0.5 + unit(&st)) : pow(10.0, -300.0 + 600.0 * unit(&st)));
  }
  atan2_sse2(SAMPLES, y, x, out);
  double worst = 0;
  for (size_t i = 0; i < SAMPLES; i++)
    worst = fmax(worst, ulps(out[i], atan2l((long double)y[i], (long double)x[i])));
  printf("atan2: %d values, max error %.3f ulp\n", SAMPLES, worst);
  CHECK(worst <= 1.5, "atan2: max error %.3f ulp", worst);
}

/* Signed zeros, infinities and NaN as C's atan2 (Annex F), by both paths */
static void atan2_edges(void) {
  const double v[] = {0.0, -0.0, 1.0, -1.0, 0x1p-1074, 1e300, INFINITY, -INFINITY, NAN};
  const int n = sizeof v / sizeof *v;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double got[2];
      got[0] = tf_fast_atan2(v[i], v[j]);
      atan2_sse2(1, &v[i], &v[j], &got[1]);
      const double want = atan2(v[i], v[j]);
      for (int k = 0; k < 2; k++) {
        const bool same = (isnan(got[k]) && isnan(want)) ||
                          (signbit(got[k]) == signbit(want) && ulps(got[k], want) <= 1.0);
        CHECK(same, "atan2(%g, %g) = %.17g (%s), C gives %.17g", v[i], v[j], got[k],
              k ? "array" : "one value", want);
      }
    }
}

/* The same bits from every build of the loops (what a member's lane width must not change). */
static void same_bits_everywhere(const double *y, const double *x) {
  const size_t n = SAMPLES;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c),
         *d = malloc(n * sizeof *d);
  double *angle = malloc(n * sizeof *angle);
  const size_t m = angle_samples(angle);
  sincos_sse2((int)m, angle, a, b);
  sincos_scalar((int)m, angle, c, d);
  CHECK(!memcmp(a, c, m * sizeof *a) && !memcmp(b, d, m * sizeof *b),
        "sincos: the vectorised loop differs from one value at a time");
  sin_cos_scalar((int)m, angle, c, d);
  CHECK(!memcmp(a, c, m * sizeof *a) && !memcmp(b, d, m * sizeof *b),
        "sin and cos one at a time differ from the vectorised loop");
  atan2_sse2((int)n, y, x, a);
  atan2_scalar((int)n, y, x, b);
  CHECK(!memcmp(a, b, n * sizeof *a), "atan2: the vectorised loop differs from a scalar build");
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) {
    sincos_avx2((int)m, angle, c, d);
    double *s2 = malloc(m * sizeof *s2), *c2 = malloc(m * sizeof *c2);
    sincos_sse2((int)m, angle, s2, c2);
    CHECK(!memcmp(s2, c, m * sizeof *c) && !memcmp(c2, d, m * sizeof *d),
          "sincos: AVX2 differs from SSE2");
    atan2_avx2((int)n, y, x, c);
    CHECK(!memcmp(b, c, n * sizeof *c), "atan2: AVX2 differs from SSE2");
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
      sincos_avx512((int)m, angle, c, d);
      CHECK(!memcmp(s2, c, m * sizeof *c) && !memcmp(c2, d, m * sizeof *d),
            "sincos: AVX-512 differs from SSE2");
      atan2_avx512((int)n, y, x, c);
      CHECK(!memcmp(b, c, n * sizeof *c), "atan2: AVX-512 differs from SSE2");
    }
    free(s2), free(c2);
  }
  free(a), free(b), free(c), free(d), free(angle);
}

int main(void) {
  sincos_accuracy();
  sincos_edges();
  double *y = malloc(SAMPLES * sizeof *y), *x = malloc(SAMPLES * sizeof *x),
         *out = malloc(SAMPLES * sizeof *out);
  atan2_accuracy(y, x, out);
  atan2_edges();
  same_bits_everywhere(y, x);
  free(y), free(x), free(out);
  return check_report("test_fast_math");
}
