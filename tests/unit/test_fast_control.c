/* test_fast_control.c — the exp and log of integrator.controller_math: fast (vmath.h) against
 * long double libm over the range the step-size controller uses them in, and beyond; their
 * edge cases; and a plain scalar build of the array loops against the vectorised one the
 * library runs (the same bits: what keeps a member's numbers independent of the lanes'
 * width and of who shares them).
 *
 * The controller takes log max(err, 1e-16) of an error norm err (any finite value: a rejected
 * attempt may have err far above 1) and exp of expo1 log_err - beta log_prev with expo1 <= 1/3,
 * beta <= 0.04 and log_prev >= log 1e-4: exponents between about -40 and +240. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vmath.h"

/* The same source without target clones or vectorisation: one value at a time. */
#pragma GCC push_options
#pragma GCC optimize("no-tree-vectorize")
#define TF_VMATH_CLONES
#define tf_vmath_log scalar_log
#define tf_vmath_exp scalar_exp
#define tf_vmath_sincos_turn scalar_sincos_turn
#include "vmath.c"
#undef tf_vmath_log
#undef tf_vmath_exp
#undef tf_vmath_sincos_turn
#pragma GCC pop_options

enum { SAMPLES = 1 << 20 };

/* A fixed pseudo-random unit value (splitmix64): the test needs spread, not a stream. */
static double unit(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static double relative(double got, long double want) {
  return want == 0 ? fabs(got) : (double)fabsl(((long double)got - want) / want);
}

/* Error norms: log-uniform over [1e-16, 1e6] (accepted and ordinarily rejected attempts), over
 * [1e-16, 1e300] (any finite norm), and 1 +- a few units in the last place (log near 0). */
static size_t log_samples(double *x) {
  uint64_t st = 1;
  size_t n = 0;
  while (n < SAMPLES / 2) x[n++] = pow(10.0, -16.0 + 22.0 * unit(&st));
  while (n < SAMPLES - 256) x[n++] = pow(10.0, -16.0 + 316.0 * unit(&st));
  for (int k = -128; k < 128; k++) x[n++] = 1.0 + k * DBL_EPSILON;
  return n;
}

/* Exponents: uniform over the controller's [-40, 240], then over exp's whole normal range. */
static size_t exp_samples(double *x) {
  uint64_t st = 2;
  size_t n = 0;
  while (n < SAMPLES / 2) x[n++] = -40.0 + 280.0 * unit(&st);
  while (n < SAMPLES) x[n++] = -708.0 + 1417.0 * unit(&st);
  return n;
}

static void same_bits_as_scalar(void (*vec)(size_t, const double *, double *),
                                void (*one)(size_t, const double *, double *), const double *x,
                                const double *y, size_t n, const char *what) {
  double *y1 = malloc(n * sizeof *y1);
  one(n, x, y1);
  CHECK(memcmp(y, y1, n * sizeof *y) == 0, "%s: the vectorised loop differs from a scalar build",
        what);
  /* and one element at a time through the array function, as the scalar stepper calls it */
  bool single = true;
  for (size_t i = 0; i < n; i += 4099) {
    double v;
    vec(1, &x[i], &v);
    single = single && memcmp(&v, &y[i], sizeof v) == 0;
  }
  CHECK(single, "%s: a call for one value differs from the same value in a long call", what);
  free(y1);
}

static void log_accuracy(void) {
  double *x = malloc(SAMPLES * sizeof *x), *y = malloc(SAMPLES * sizeof *y);
  const size_t n = log_samples(x);
  tf_vmath_log(n, x, y);
  double worst = 0;
  for (size_t i = 0; i < n; i++) worst = fmax(worst, relative(y[i], logl((long double)x[i])));
  printf("log: %zu values, max relative error %.3g (2^-52 = %.3g)\n", n, worst, 0x1p-52);
  CHECK(worst < 0x1p-52, "log: max relative error %.3g", worst);
  CHECK(tf_vmath_log1(1.0) == 0.0 && tf_vmath_log1(2.0) == (double)logl(2.0L),
        "log(1) = 0 and log(2) to the nearest double");
  same_bits_as_scalar(tf_vmath_log, scalar_log, x, y, n, "log");
  free(x), free(y);
}

/* exp's edges: exact at 0, overflow above log(DBL_MAX), 0 below the subnormals, NaN kept, and
 * within half a subnormal unit where the result is subnormal. */
static void exp_edges(void) {
  CHECK(tf_vmath_exp1(0.0) == 1.0, "exp(0) = %.17g", tf_vmath_exp1(0.0));
  CHECK(isinf(tf_vmath_exp1(709.79)) && isinf(tf_vmath_exp1(1e300)), "exp overflows to inf");
  CHECK(relative(tf_vmath_exp1(709.78), expl((long double)709.78)) < 0x1p-52,
        "exp(709.78), near DBL_MAX");
  CHECK(tf_vmath_exp1(-746.0) == 0.0 && tf_vmath_exp1(-1e300) == 0.0, "exp underflows to 0");
  CHECK(isnan(tf_vmath_exp1(NAN)), "exp(NaN) is NaN");
  double worst_sub = 0;
  for (double x = -745.0; x < -708.5; x += 0.37) {
    const long double want = expl((long double)x);
    worst_sub = fmax(worst_sub, (double)fabsl((long double)tf_vmath_exp1(x) - want));
  }
  CHECK(worst_sub <= 0x1p-1074, "exp: subnormal results within one subnormal unit (%.3g)",
        worst_sub);
}

static void exp_accuracy(void) {
  double *x = malloc(SAMPLES * sizeof *x), *y = malloc(SAMPLES * sizeof *y);
  const size_t n = exp_samples(x);
  tf_vmath_exp(n, x, y);
  double worst = 0, worst_range = 0;
  for (size_t i = 0; i < n; i++) {
    const double e = relative(y[i], expl((long double)x[i]));
    worst = fmax(worst, e);
    if (i < SAMPLES / 2) worst_range = fmax(worst_range, e);
  }
  printf("exp: %zu values, max relative error %.3g ([-40, 240]: %.3g)\n", n, worst, worst_range);
  CHECK(worst < 0x1p-52, "exp: max relative error %.3g", worst);
  exp_edges();
  same_bits_as_scalar(tf_vmath_exp, scalar_exp, x, y, n, "exp");
  free(x), free(y);
}

int main(void) {
  log_accuracy();
  exp_accuracy();
  return check_report("test_fast_control");
}
