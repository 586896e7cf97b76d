/* devs_baseline.h — what the DEVS baselines of bench/devs_throughput.sh share: the clock,
 * lambda_1 of the full state from the elements' log-stretch sums, as the engine defines it
 * (log-sum-exp: (1/T) ln sqrt(mean_k exp(2 L_k))), and the one JSON line each prints. */
#ifndef DEVS_BASELINE_H
#define DEVS_BASELINE_H
#include <math.h>
#include <stdio.h>
#include <time.h>

static double now(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double full_state_lambda1(const double *L, long n, long steps) {
  double Lmax = -INFINITY, S = 0;
  for (long k = 0; k < n; k++) Lmax = L[k] > Lmax ? L[k] : Lmax;
  for (long k = 0; k < n; k++) S += exp(2 * (L[k] - Lmax));
  return (Lmax + 0.5 * log(S) - 0.5 * log((double)n)) / (double)steps;
}

/* variant: e.g. "rng": "xoshiro" or "layout": "flat" */
static void print_rates(const char *variant_key, const char *variant, long n, long steps,
                        double wall, double cpu, double lambda1, double x_last) {
  const double updates = (double)n * (double)steps;
  printf(
      "{\"%s\": \"%s\", \"N\": %ld, \"steps\": %ld, \"seconds\": %.6g, \"cpu_seconds\": %.6g, "
      "\"element_updates_per_second\": %.6g, \"element_updates_per_cpu_second\": %.6g, "
      "\"lambda1\": %.6g, \"X_last\": %.10g}\n",
      variant_key, variant, n, steps, wall, cpu, updates / wall, updates / cpu, lambda1, x_last);
}
#endif
