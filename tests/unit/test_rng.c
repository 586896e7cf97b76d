/* test_rng.c — Philox4x64-10 against Random123's published known-answer vectors, and the
 * variates built on it against their exact moments. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"

/* From Random123's kat_vectors (philox4x64, 10 rounds): ctr[4], key[2], expected[4]. */
static const uint64_t kat[3][10] = {
    {0, 0, 0, 0, 0, 0, 0x16554d9eca36314cULL, 0xdb20fe9d672d0fdcULL, 0xd7e772cee186176bULL,
     0x7e68b68aec7ba23bULL},
    {~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, 0x87b092c3013fe90bULL, 0x438c3c67be8d0224ULL,
     0x9cc7d7c69cd777b6ULL, 0xa09caebf594f0ba0ULL},
    {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL, 0x082efa98ec4e6c89ULL,
     0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL, 0xa528f45403e61d95ULL, 0x38c72dbd566e9788ULL,
     0xa5a1610e72fd18b5ULL, 0x57bd43b5e52b7fe6ULL},
};

static void known_answers(void) {
  for (int v = 0; v < 3; v++) {
    uint64_t out[4];
    tf_rng_philox(&kat[v][4], &kat[v][0], out);
    for (int i = 0; i < 4; i++)
      CHECK(out[i] == kat[v][6 + i], "vector %d word %d: %016llx", v, i,
            (unsigned long long)out[i]);
  }
}

/* Pure function of its arguments: the same draw twice, different purposes/members differ. */
static void purity(void) {
  const tf_rng_key k = {42, 7};
  double a[5], b[5], c[5], d[5];
  tf_rng_normals(k, 3, TF_RNG_NOISE, 5, a);
  tf_rng_normals(k, 3, TF_RNG_NOISE, 5, b);
  tf_rng_normals(k, 3, TF_RNG_INITIAL, 5, c);
  tf_rng_normals((tf_rng_key){42, 8}, 3, TF_RNG_NOISE, 5, d);
  CHECK(memcmp(a, b, sizeof a) == 0, "same arguments, different numbers");
  CHECK(memcmp(a, c, sizeof a) != 0, "purposes not separated");
  CHECK(memcmp(a, d, sizeof a) != 0, "members not separated");
  /* A prefix of a longer request equals the shorter request. */
  double long_run[9];
  tf_rng_normals(k, 3, TF_RNG_NOISE, 9, long_run);
  CHECK(memcmp(a, long_run, sizeof a) == 0, "prefix property broken");
}

/* Moments over 4e5 draws: standard errors are ~1/sqrt(n) times the variate's spread. */
static void moments(void) {
  const long n = 400000;
  double su = 0, su2 = 0, sn = 0, sn2 = 0, sn4 = 0, se = 0;
  double umin = 1, umax = 0;
  for (long i = 0; i < n; i++) {
    const tf_rng_key k = {2024, (uint64_t)i};
    const double u = tf_rng_uniform(k, 0, TF_RNG_TEST);
    double z;
    tf_rng_normals(k, 1, TF_RNG_TEST, 1, &z);
    const double e = tf_rng_exponential(k, 2, TF_RNG_TEST);
    su += u, su2 += u * u, sn += z, sn2 += z * z, sn4 += z * z * z * z, se += e;
    umin = fmin(umin, u), umax = fmax(umax, u);
  }
  const double se1 = 1.0 / sqrt((double)n);
  CHECK(umin > 0 && umax < 1, "uniform outside (0,1): %g %g", umin, umax);
  CHECK_CLOSE(su / n, 0.5, 5 * 0.2887 * se1, "uniform mean");
  CHECK_CLOSE(su2 / n, 1.0 / 3, 5 * 0.2981 * se1, "uniform second moment");
  CHECK_CLOSE(sn / n, 0.0, 5 * se1, "normal mean");
  CHECK_CLOSE(sn2 / n, 1.0, 5 * sqrt(2.0) * se1, "normal variance");
  CHECK_CLOSE(sn4 / n, 3.0, 5 * sqrt(96.0) * se1, "normal 4th moment");
  CHECK_CLOSE(se / n, 1.0, 5 * se1, "exponential mean");
}

/* Box–Muller written out on the raw Philox words, one pair at a time with sin and cos
 * called apart: the definition the batched draws must keep bit for bit. */
static void reference_normals(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n,
                              double *out) {
  const uint64_t k[2] = {key.seed, key.member};
  for (size_t i = 0; i < n; i += 2) {
    const uint64_t c[4] = {counter, purpose, i / 4, 0};
    uint64_t r[4];
    tf_rng_philox(k, c, r);
    const double u1 = ((double)(r[i % 4] >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = ((double)(r[i % 4 + 1] >> 11) + 0.5) * 0x1.0p-53;
    const double radius = sqrt(-2.0 * log(u1)), angle = 2.0 * M_PI * u2;
    out[i] = radius * cos(angle);
    if (i + 1 < n) out[i + 1] = radius * sin(angle);
  }
}

/* Runs of many counters (crossing the Philox batch size, with dimensions that leave a block
 * half used) equal the one-counter draws and the reference, bit for bit. */
static void batched_runs(void) {
  enum { COUNTERS = 77, MAX_N = 16 };
  static double run[COUNTERS * MAX_N];
  const size_t dims[] = {1, 2, 3, 4, 5, 7, 16};
  const tf_rng_key keys[] = {{20141, 0}, {1, 12345}, {~0ULL, ~0ULL - 1}};
  const uint64_t firsts[] = {0, 999, ~0ULL - 200};
  long mismatches = 0;
  for (size_t d = 0; d < sizeof dims / sizeof *dims; d++)
    for (size_t kk = 0; kk < 3; kk++)
      for (size_t f = 0; f < 3; f++) {
        const size_t n = dims[d];
        tf_rng_normals_run(keys[kk], firsts[f], TF_RNG_NOISE, n, COUNTERS, run);
        for (size_t s = 0; s < COUNTERS; s++) {
          double one[MAX_N], ref[MAX_N];
          tf_rng_normals(keys[kk], firsts[f] + s, TF_RNG_NOISE, n, one);
          reference_normals(keys[kk], firsts[f] + s, TF_RNG_NOISE, n, ref);
          mismatches += memcmp(one, run + s * n, n * sizeof *one) != 0;
          mismatches += memcmp(ref, run + s * n, n * sizeof *ref) != 0;
        }
      }
  CHECK(mismatches == 0, "%ld batched draws differ from the one-counter draws", mismatches);
}

/* `test_rng print SEED MEMBER COUNTER N`: the draws as hex floats, for rng_normals.py. */
static int print_normals(char **argv) {
  const tf_rng_key key = {strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0)};
  const size_t n = strtoull(argv[5], NULL, 0);
  double out[64];
  if (n > 64) return 2;
  tf_rng_normals_run(key, strtoull(argv[4], NULL, 0), TF_RNG_NOISE, n, 1, out);
  for (size_t i = 0; i < n; i++) printf("%a\n", out[i]);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "print") == 0) return print_normals(argv);
  known_answers();
  purity();
  moments();
  batched_runs();
  return check_report("test_rng");
}
