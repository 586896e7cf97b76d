/* devs_competent.c — the DEVS of logistic maps as a competent C programmer writes it in about
 * fifty lines, using the engine's own ideas: a counter-based hash for every update (a pure
 * function of seed, step and element, like the engine's Philox streams, but one 64-bit
 * splitmix64 finaliser instead of ten Philox rounds), a branchless update the compiler can
 * vectorise, and the product of |f'| kept as mantissa and exponent, renormalised with frexp
 * every 16 steps instead of one log() per update.  It is the honest baseline of
 * bench/devs_throughput.sh: twofold's lead over it is what the engine adds beyond those ideas.
 *   devs_competent LAYOUT N STEPS Q MU
 *     LAYOUT flat     every step sweeps all N elements (x, m: 16 bytes each from memory)
 *            blocked  the engine's tiling: blocks of 1024 elements advanced 64 steps at a time
 *                     (x and m stay in L1), per-step partial sums added in block order
 * Prints one JSON line like bench/devs_naive.c.
 * Build: cc -O3 -march=native -fopenmp-simd devs_competent.c -lm (the pragma lets the compiler
 * split the sum of x over vector lanes, as the engine's eight partial sums do). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devs_baseline.h"

enum { BLOCK = 1024, TILE = 64, RENORM = 16 };

static inline uint64_t hash(uint64_t step, uint64_t k) { /* splitmix64's finaliser */
  uint64_t z = 0x9E3779B97F4A7C15ULL * (k + 1) + 0xD1B54A32D192ED03ULL * step;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
/* Steps [s0, s0 + T) of elements [k0, k1): sums[s] += x after step s. */
__attribute__((noinline)) static void advance(double *restrict x, double *restrict m,
                                              int64_t *restrict e, long k0, long k1, long s0,
                                              long T, uint64_t qbits, double mu,
                                              double *restrict sums) {
  for (long s = s0; s < s0 + T; s++) {
    double acc = 0;
#pragma omp simd reduction(+ : acc)
    for (long k = k0; k < k1; k++) {
      const double xo = x[k], df = fabs(mu * (1.0 - 2.0 * xo));
      const int u = (hash((uint64_t)s, (uint64_t)k) >> 11) < qbits;
      x[k] = u ? mu * xo * (1.0 - xo) : xo;
      m[k] = u ? m[k] * df : m[k];
      acc += x[k];
    }
    sums[s] += acc;
    if (s % RENORM == RENORM - 1)
      for (long k = k0; k < k1; k++) {
        int ex;
        m[k] = frexp(m[k], &ex), e[k] += ex;
      }
  }
}

int main(int argc, char **argv) {
  if (argc != 6 || (strcmp(argv[1], "flat") && strcmp(argv[1], "blocked"))) {
    fprintf(stderr, "usage: devs_competent flat|blocked N STEPS Q MU\n");
    return 2;
  }
  const int blocked = strcmp(argv[1], "blocked") == 0;
  const long n = atol(argv[2]), steps = atol(argv[3]);
  const double q = atof(argv[4]), mu = atof(argv[5]);
  const uint64_t qbits = (uint64_t)(q * 0x1.0p53); /* u < q with u = (hash >> 11) 2^-53 */
  double *x = malloc((size_t)n * sizeof *x), *m = malloc((size_t)n * sizeof *m);
  int64_t *e = calloc((size_t)n, sizeof *e);
  double *sums = calloc((size_t)steps + TILE, sizeof *sums);
  for (long k = 0; k < n; k++) x[k] = ((double)(hash(~0ULL, (uint64_t)k) >> 11) + 0.5) * 0x1.0p-53;
  for (long k = 0; k < n; k++) m[k] = 1.0;
  const double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
  if (!blocked) advance(x, m, e, 0, n, 0, steps, qbits, mu, sums);
  for (long s0 = 0; blocked && s0 < steps; s0 += TILE)
    for (long k0 = 0; k0 < n; k0 += BLOCK)
      advance(x, m, e, k0, k0 + BLOCK < n ? k0 + BLOCK : n, s0,
              s0 + TILE < steps ? TILE : steps - s0, qbits, mu, sums);
  for (long k = 0; k < n; k++) { /* the last renormalisation when steps % 16 != 0 */
    int ex;
    m[k] = frexp(m[k], &ex), e[k] += ex;
  }
  const double wall = now(CLOCK_MONOTONIC) - w0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
  for (long k = 0; k < n; k++) x[k] = log(m[k]) + (double)e[k] * 0.69314718055994531; /* L_k */
  print_rates("layout", argv[1], n, steps, wall, cpu, full_state_lambda1(x, n, steps),
              sums[steps - 1]);
  free(x), free(m), free(e), free(sums);
  return 0;
}
