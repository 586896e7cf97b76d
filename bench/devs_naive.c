/* devs_naive.c — the straightforward C loop for a DEVS of logistic maps, the baseline of
 * bench/devs_throughput.sh: per element and step one random draw, a branch, and one log()
 * of |f'| added to the element's exponent sum; X_i summed every step; lambda_1 of the full
 * state from the element sums at the end (log-sum-exp), as the engine defines it.
 *   devs_naive RNG N STEPS Q MU      RNG: xoshiro (xoshiro256**, one stream, fastest)
 *                                         philox  (Random123 Philox4x64-10 per element and
 *                                                  step: counter-based like the engine)
 * Prints one JSON line: seconds (wall), cpu_seconds, element_updates_per_second (wall and
 * per CPU second), lambda1, X_last.  Build: cc -O3 -march=native devs_naive.c -lm */
#define _POSIX_C_SOURCE 200809L
#include <Random123/philox.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devs_baseline.h"

static uint64_t s[4] = {0x9E3779B97F4A7C15ULL, 0xBF58476D1CE4E5B9ULL, 0x94D049BB133111EBULL, 1};
static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
static inline uint64_t xoshiro(void) {
  const uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
  return r;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: devs_naive xoshiro|philox N STEPS Q MU\n");
    return 2;
  }
  const int philox = strcmp(argv[1], "philox") == 0;
  const long n = atol(argv[2]), steps = atol(argv[3]);
  const double q = atof(argv[4]), mu = atof(argv[5]);
  double *x = malloc((size_t)n * sizeof *x), *L = calloc((size_t)n, sizeof *L);
  for (long k = 0; k < n; k++) x[k] = (double)(xoshiro() >> 11) * 0x1.0p-53;
  const philox4x64_key_t key = {{1, 0}};
  double X = 0;
  const double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
  for (long i = 0; i < steps; i++) {
    X = 0;
    for (long k = 0; k < n; k++) {
      uint64_t bits;
      if (philox) {
        const philox4x64_ctr_t c = {{(uint64_t)i, 7, (uint64_t)k, 0}};
        bits = philox4x64(c, key).v[0];
      } else {
        bits = xoshiro();
      }
      const double u = (double)(bits >> 11) * 0x1.0p-53;
      if (u < q) {
        L[k] += log(fabs(mu * (1.0 - 2.0 * x[k])));
        x[k] = mu * x[k] * (1.0 - x[k]);
      }
      X += x[k];
    }
  }
  const double wall = now(CLOCK_MONOTONIC) - w0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
  print_rates("rng", argv[1], n, steps, wall, cpu, full_state_lambda1(L, n, steps), X);
  free(x), free(L);
  return 0;
}
