/* test_sde.c — Euler–Maruyama and Milstein on geometric Brownian motion
 *     dX = a X dt + b X dW,  X_T = X_0 exp((a - b^2/2) T + b W_T)  (exact, pathwise).
 * Strong order: E|X_T^h - X_T| over many paths, with W_T taken from the very increments
 * the scheme used (same key, a driftless unit-diffusion run).  Weak order of EM: the exact
 * E[X_T] = X_0 e^{aT} against the sample mean, where the EM bias (1 + a h)^{T/h} - e^{aT}
 * is O(h) and dominates the Monte-Carlo error for the sizes chosen.
 * Drift-implicit schemes: the same strong orders (1/2 without, 1 with the Milstein
 * correction), the exact weak bias of backward Euler in the drift, (1 - a h)^{-T/h} - e^{aT},
 * the single-source general-noise path (m = 1) against the diagonal one, and a stiff
 * Ornstein–Uhlenbeck process (lambda h = 10) on which Euler–Maruyama blows up while
 * drift-implicit Euler keeps its exact stationary variance sigma^2 h / ((1 + lambda h)^2 - 1). */
#include <math.h>

#include "check.h"
#include "sde.h"

static const double A = 1.0, B = 0.5, T = 1.0;

static int gbm_drift(double t, const double *x, void *c, double *f) {
  (void)t, (void)c;
  f[0] = A * x[0];
  return 0;
}
static int gbm_diff(double t, const double *x, void *c, double *g) {
  (void)t, (void)c;
  g[0] = B * x[0];
  return 0;
}
static int gbm_diff_dx(double t, const double *x, void *c, double *dg) {
  (void)t, (void)x, (void)c;
  dg[0] = B;
  return 0;
}
static int zero(double t, const double *x, void *c, double *f) {
  (void)t, (void)x, (void)c;
  f[0] = 0.0;
  return 0;
}
static int unit(double t, const double *x, void *c, double *g) {
  (void)t, (void)x, (void)c;
  g[0] = 1.0;
  return 0;
}

static int gbm_column(double t, const double *x, void *c, double *g) {
  (void)t, (void)c;
  g[0] = B * x[0];
  return 0;
}
static void gbm_jacobian(double t, const double *x, void *c, double *j) {
  (void)t, (void)x, (void)c;
  j[0] = A;
}

static double strong_error_sys(const tf_sde_system *sys, tf_sde_scheme scheme, double dt,
                               int paths) {
  const tf_sde_system brownian = {.n = 1, .drift = zero, .diffusion = unit};
  double work[4], sum = 0;
  long steps;
  for (int p = 0; p < paths; p++) {
    const tf_rng_key key = {7, (uint64_t)p};
    double x = 1.0, w = 0.0;
    tf_sde_integrate(sys, scheme, key, 0, T, dt, &x, work, &steps);
    tf_sde_integrate(&brownian, TF_SDE_EULER_MARUYAMA, key, 0, T, dt, &w, work, &steps);
    sum += fabs(x - exp((A - 0.5 * B * B) * T + B * w));
  }
  return sum / paths;
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

static void implicit_strong_orders(void) {
  const double h[4] = {1.0 / 16, 1.0 / 32, 1.0 / 64, 1.0 / 128};
  const tf_sde_system analytic = {.n = 1,
                                  .drift = gbm_drift,
                                  .diffusion = gbm_diff,
                                  .diffusion_dx = gbm_diff_dx,
                                  .drift_jacobian = gbm_jacobian};
  const tf_sde_system differences = {
      .n = 1, .drift = gbm_drift, .diffusion = gbm_diff, .diffusion_dx = gbm_diff_dx};
  const tf_sde_system column = {.n = 1, .drift = gbm_drift, .m = 1, .noise = gbm_column};
  double di[4], dim[4], col[4], colm[4];
  for (int i = 0; i < 4; i++) {
    di[i] = strong_error_sys(&analytic, TF_SDE_DRIFT_IMPLICIT, h[i], 4000);
    dim[i] = strong_error_sys(&differences, TF_SDE_DRIFT_IMPLICIT_MILSTEIN, h[i], 4000);
    col[i] = strong_error_sys(&column, TF_SDE_EULER_MARUYAMA, h[i], 4000);
    colm[i] = strong_error_sys(&column, TF_SDE_MILSTEIN, h[i], 4000);
  }
  const double p_di = slope(h, di, 4), p_dim = slope(h, dim, 4);
  const double p_col = slope(h, col, 4), p_colm = slope(h, colm, 4);
  printf(
      "strong orders: drift-implicit %.3f, drift-implicit Milstein %.3f, single-source "
      "EM %.3f, single-source Milstein %.3f\n",
      p_di, p_dim, p_col, p_colm);
  CHECK(p_di > 0.4 && p_di < 0.75, "drift-implicit strong order %g", p_di);
  CHECK(p_dim > 0.85 && p_dim < 1.15, "drift-implicit Milstein strong order %g", p_dim);
  CHECK(p_col > 0.4 && p_col < 0.65, "single-source EM strong order %g", p_col);
  CHECK(p_colm > 0.85 && p_colm < 1.15, "single-source Milstein strong order %g", p_colm);
  /* the single-source path is the diagonal path (same increments, same formula) */
  CHECK_CLOSE(col[0], strong_error(TF_SDE_EULER_MARUYAMA, h[0], 4000), 1e-12, "m = 1 vs diagonal");
  CHECK_CLOSE(colm[0], strong_error(TF_SDE_MILSTEIN, h[0], 4000), 1e-6 * colm[0],
              "m = 1 Milstein (differenced G'G) vs diagonal");
}

static void implicit_weak_order(void) {
  const tf_sde_system gbm = {.n = 1,
                             .drift = gbm_drift,
                             .diffusion = gbm_diff,
                             .drift_jacobian = gbm_jacobian,
                             .theta = 1.0};
  const double h[3] = {1.0 / 8, 1.0 / 16, 1.0 / 32};
  double bias[3];
  const int paths = 100000;
  for (int i = 0; i < 3; i++) {
    double sum = 0, work[4];
    long steps;
    for (int p = 0; p < paths; p++) {
      double x = 1.0;
      tf_sde_integrate(&gbm, TF_SDE_DRIFT_IMPLICIT, (tf_rng_key){13, (uint64_t)p}, 0, T, h[i], &x,
                       work, &steps);
      sum += x;
    }
    /* E[x_{k+1}] = E[x_k] / (1 - a h): the noise term has mean zero */
    bias[i] = sum / paths - exp(A * T);
    const double predicted = pow(1 - A * h[i], -T / h[i]) - exp(A * T);
    const double mc = exp(A * T) * sqrt(exp(B * B * T) - 1) / sqrt((double)paths);
    printf("drift-implicit weak bias at h=%g: %.4f (exact %.4f, MC sd %.4f)\n", h[i], bias[i],
           predicted, mc);
    CHECK_CLOSE(bias[i], predicted, 5 * mc, "drift-implicit mean");
  }
  const double p = slope(h, bias, 3);
  CHECK(p > 0.8 && p < 1.2, "drift-implicit weak order %g", p);
}

/* dX = -L X dt + S dW with L h = 10 */
static const double L = 1000.0, S = 1.0;
static int ou_drift(double t, const double *x, void *c, double *f) {
  (void)t, (void)c;
  f[0] = -L * x[0];
  return 0;
}
static int ou_diff(double t, const double *x, void *c, double *g) {
  (void)t, (void)x, (void)c;
  g[0] = S;
  return 0;
}

static void stiff_stability(void) {
  const tf_sde_system ou = {.n = 1, .drift = ou_drift, .diffusion = ou_diff};
  const double h = 0.01;
  double work[4], x = 1.0;
  long steps;
  const tf_sde_status em =
      tf_sde_integrate(&ou, TF_SDE_EULER_MARUYAMA, (tf_rng_key){3, 0}, 0, 100, h, &x, work, &steps);
  CHECK(em == TF_SDE_NONFINITE || fabs(x) > 1e100, "EM on the stiff OU stays bounded: %g", x);
  /* stationary variance of drift-implicit Euler: sum over k of (sigma^2 h)/(1 + L h)^(2k) */
  double sum2 = 0;
  const int paths = 20000;
  for (int p = 0; p < paths; p++) {
    x = 0.0;
    tf_sde_integrate(&ou, TF_SDE_DRIFT_IMPLICIT, (tf_rng_key){5, (uint64_t)p}, 0, 1.0, h, &x, work,
                     &steps);
    sum2 += x * x;
  }
  const double var = sum2 / paths, exact = S * S * h / ((1 + L * h) * (1 + L * h) - 1);
  printf("stiff OU (L h = %g): drift-implicit variance %.5g, exact %.5g\n", L * h, var, exact);
  CHECK_CLOSE(var, exact, 5 * exact * sqrt(2.0 / paths), "drift-implicit stationary variance");
}

int main(void) {
  step_grid();
  strong_orders();
  weak_order();
  implicit_strong_orders();
  implicit_weak_order();
  stiff_stability();
  return check_report("test_sde");
}
