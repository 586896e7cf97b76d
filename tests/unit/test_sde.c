/* test_sde.c — Euler–Maruyama and Milstein on geometric Brownian motion
 *     dX = a X dt + b X dW,  X_T = X_0 exp((a - b^2/2) T + b W_T)  (exact, pathwise).
 * Strong order: E|X_T^h - X_T| over many paths, with W_T taken from the very increments
 * the scheme used (same key, a driftless unit-diffusion run).  Weak order of EM: the exact
 * E[X_T] = X_0 e^{aT} against the sample mean, where the EM bias (1 + a h)^{T/h} - e^{aT}
 * is O(h) and dominates the Monte-Carlo error for the sizes chosen. */
#include <math.h>

#include "check.h"
#include "sde.h"

static const double A = 1.0, B = 0.5, T = 1.0;

static void gbm_drift(double t, const double *x, void *c, double *f) {
  (void)t, (void)c;
  f[0] = A * x[0];
}
static void gbm_diff(double t, const double *x, void *c, double *g) {
  (void)t, (void)c;
  g[0] = B * x[0];
}
static void gbm_diff_dx(double t, const double *x, void *c, double *dg) {
  (void)t, (void)x, (void)c;
  dg[0] = B;
}
static void zero(double t, const double *x, void *c, double *f) {
  (void)t, (void)x, (void)c;
  f[0] = 0.0;
}
static void unit(double t, const double *x, void *c, double *g) {
  (void)t, (void)x, (void)c;
  g[0] = 1.0;
}

static double strong_error(tf_sde_scheme scheme, double dt, int paths) {
  const tf_sde_system gbm = {
      .n = 1, .drift = gbm_drift, .diffusion = gbm_diff, .diffusion_dx = gbm_diff_dx};
  const tf_sde_system brownian = {.n = 1, .drift = zero, .diffusion = unit};
  double work[4], sum = 0;
  long steps;
  for (int p = 0; p < paths; p++) {
    const tf_rng_key key = {7, (uint64_t)p};
    double x = 1.0, w = 0.0;
    tf_sde_integrate(&gbm, scheme, key, 0, T, dt, &x, work, &steps);
    tf_sde_integrate(&brownian, TF_SDE_EULER_MARUYAMA, key, 0, T, dt, &w, work, &steps);
    sum += fabs(x - exp((A - 0.5 * B * B) * T + B * w));
  }
  return sum / paths;
}

static double slope(const double *h, const double *e, int n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    const double x = log(h[i]), y = log(e[i]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

static void strong_orders(void) {
  const double h[4] = {1.0 / 16, 1.0 / 32, 1.0 / 64, 1.0 / 128};
  double em[4], mil[4];
  for (int i = 0; i < 4; i++) {
    em[i] = strong_error(TF_SDE_EULER_MARUYAMA, h[i], 4000);
    mil[i] = strong_error(TF_SDE_MILSTEIN, h[i], 4000);
  }
  const double p_em = slope(h, em, 4), p_mil = slope(h, mil, 4);
  printf("strong errors EM %.3e..%.3e (order %.3f), Milstein %.3e..%.3e (order %.3f)\n", em[0],
         em[3], p_em, mil[0], mil[3], p_mil);
  CHECK(p_em > 0.4 && p_em < 0.65, "EM strong order %g", p_em);
  CHECK(p_mil > 0.85 && p_mil < 1.15, "Milstein strong order %g", p_mil);
}

static void weak_order(void) {
  const tf_sde_system gbm = {
      .n = 1, .drift = gbm_drift, .diffusion = gbm_diff, .diffusion_dx = gbm_diff_dx};
  const double h[3] = {1.0 / 8, 1.0 / 16, 1.0 / 32};
  double bias[3];
  const int paths = 200000;
  for (int i = 0; i < 3; i++) {
    double sum = 0, work[4];
    long steps;
    for (int p = 0; p < paths; p++) {
      double x = 1.0;
      tf_sde_integrate(&gbm, TF_SDE_EULER_MARUYAMA, (tf_rng_key){11, (uint64_t)p}, 0, T, h[i], &x,
                       work, &steps);
      sum += x;
    }
    bias[i] = exp(A * T) - sum / paths;
    const double predicted = exp(A * T) - pow(1 + A * h[i], T / h[i]);
    /* sd of the sample mean: sqrt(Var X_T / paths) = e^{aT} sqrt(e^{b^2 T} - 1) / sqrt(paths) */
    const double mc = exp(A * T) * sqrt(exp(B * B * T) - 1) / sqrt((double)paths);
    printf("EM weak bias at h=%g: %.4f (exact EM bias %.4f, MC sd %.4f)\n", h[i], bias[i],
           predicted, mc);
    CHECK_CLOSE(bias[i], predicted, 5 * mc, "EM mean");
  }
  const double p = slope(h, bias, 3);
  printf("EM weak order %.3f\n", p);
  CHECK(p > 0.8 && p < 1.2, "EM weak order %g", p);
}

static void step_grid(void) {
  CHECK(tf_sde_step_count(0, 1, 0.1) == 10, "1/0.1 steps: %ld", tf_sde_step_count(0, 1, 0.1));
  CHECK(tf_sde_step_count(0, 1, 0.3) == 4, "1/0.3 steps");
  CHECK(tf_sde_step_count(0, 0, 0.1) == 0, "empty span");
}

int main(void) {
  step_grid();
  strong_orders();
  weak_order();
  return check_report("test_sde");
}
