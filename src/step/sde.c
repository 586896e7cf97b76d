/* sde.c — Euler–Maruyama (strong order 1/2, weak order 1), Milstein (strong order 1 for
 * diagonal or single-source noise) and the drift-implicit theta-method on counter-based
 * Wiener increments.  The implicit step solves
 *     y = x + h [theta f(t + h, y) + (1 - theta) f(t, x)] + noise terms(x)
 * by Newton's method with (I - theta h df/dx(y)) factorised by GSL's LU each iteration;
 * the noise terms are explicit (Itô), so the increments are those of the explicit schemes
 * and paths of different schemes can be compared increment by increment. */
#include "sde.h"

#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

/* Wiener increments drawn per batch: 16 steps at the largest dimension. */
enum { NOISE_BATCH = 16 * TF_MAX_DIM };

long tf_sde_step_count(double t0, double t_end, double dt) {
  const double span = t_end - t0;
  if (span <= 0) return 0;
  /* Tolerate round-off: 1.0 / 0.1 must give 10 steps, not 11. */
  return (long)ceil(span / dt * (1.0 - 1e-12));
}

static bool implicit_scheme(tf_sde_scheme s) {
  return s == TF_SDE_DRIFT_IMPLICIT || s == TF_SDE_DRIFT_IMPLICIT_MILSTEIN;
}
static bool milstein_scheme(tf_sde_scheme s) {
  return s == TF_SDE_MILSTEIN || s == TF_SDE_DRIFT_IMPLICIT_MILSTEIN;
}

/* Noise increment of one step, with the Milstein correction if asked, added to dx. */
static int noise_increment(const tf_sde_system *sys, bool milstein, double t, const double *x,
                           double h, const double *dw, double *g, double *dg, double *dx) {
  const size_t n = sys->n;
  if (!sys->noise) { /* diagonal */
    int rc = sys->diffusion(t, x, sys->ctx, g);
    if (milstein && !rc) rc = sys->diffusion_dx(t, x, sys->ctx, dg);
    for (size_t i = 0; i < n; i++) {
      const double w = sqrt(h) * dw[i];
      dx[i] += g[i] * w;
      if (milstein) dx[i] += 0.5 * g[i] * dg[i] * (w * w - h);
    }
    return rc;
  }
  double G[TF_MAX_DIM * TF_MAX_DIM];
  const size_t m = sys->m;
  const int rc = sys->noise(t, x, sys->ctx, G);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < m; j++) dx[i] += G[i * m + j] * sqrt(h) * dw[j];
  if (!milstein) return 0;
  /* m = 1: (G'G)(x) = d/ds G(x + s G(x)) at s = 0, by central differences */
  double xp[TF_MAX_DIM], xm[TF_MAX_DIM], gp[TF_MAX_DIM], gm[TF_MAX_DIM];
  double norm = 0, xnorm = 0;
  for (size_t i = 0; i < n; i++) norm = fmax(norm, fabs(G[i])), xnorm = fmax(xnorm, fabs(x[i]));
  if (norm == 0) return 0;
  const double s = 1e-5 * fmax(1.0, xnorm) / norm;
  for (size_t i = 0; i < n; i++) xp[i] = x[i] + s * G[i], xm[i] = x[i] - s * G[i];
  const int rp = sys->noise(t, xp, sys->ctx, gp), rm = sys->noise(t, xm, sys->ctx, gm);
  const double w = sqrt(h) * dw[0];
  for (size_t i = 0; i < n; i++) dx[i] += 0.5 * (gp[i] - gm[i]) / (2 * s) * (w * w - h);
  return rp ? rp : rm;
}

static int drift_jacobian(const tf_sde_system *sys, double t, const double *y, double *f0,
                          double *jac) {
  const size_t n = sys->n;
  if (sys->drift_jacobian) {
    sys->drift_jacobian(t, y, sys->ctx, jac);
    return 0;
  }
  double yy[TF_MAX_DIM], f1[TF_MAX_DIM];
  memcpy(yy, y, n * sizeof *y);
  int rc = sys->drift(t, y, sys->ctx, f0);
  for (size_t j = 0; j < n && !rc; j++) {
    const double step = 1e-7 * fmax(1.0, fabs(y[j]));
    yy[j] = y[j] + step;
    rc = sys->drift(t, yy, sys->ctx, f1);
    yy[j] = y[j];
    for (size_t i = 0; i < n; i++) jac[i * n + j] = (f1[i] - f0[i]) / step;
  }
  return rc;
}

/* |r|^2, or NAN where the drift refuses y (*code then says how) */
static double residual(const tf_sde_system *sys, double t1, double th_h, const double *c,
                       const double *y, double *f, double *r, int *code) {
  double norm = 0;
  *code = sys->drift(t1, y, sys->ctx, f);
  if (*code) return NAN;
  for (size_t i = 0; i < sys->n; i++) {
    r[i] = -(y[i] - c[i] - th_h * f[i]);
    norm += r[i] * r[i];
  }
  return isfinite(norm) ? norm : INFINITY;
}

/* Solves y = c + theta h f(t1, y) for y (y holds the initial guess).  Newton with
 * backtracking on |residual|^2: smoothed sign laws saturate, and undamped Newton on a
 * sigmoid overshoots from a guess outside the layer and can cycle. */
static tf_sde_status newton(const tf_sde_system *sys, double t1, double h, const double *c,
                            double *y) {
  const size_t n = sys->n;
  const double th_h = (sys->theta > 0 ? sys->theta : 1.0) * h;
  double jac[TF_MAX_DIM * TF_MAX_DIM], f[TF_MAX_DIM], r[TF_MAX_DIM], d[TF_MAX_DIM],
      trial[TF_MAX_DIM], r_trial[TF_MAX_DIM];
  size_t perm_data[TF_MAX_DIM];
  gsl_permutation perm = {n, perm_data};
  int code;
  double norm = residual(sys, t1, th_h, c, y, f, r, &code);
  if (code) return TF_SDE_MODEL_FAILED;
  for (int it = 0; it < 100; it++) {
    if (drift_jacobian(sys, t1, y, f, jac)) return TF_SDE_MODEL_FAILED;
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) jac[i * n + j] = (i == j) - th_h * jac[i * n + j];
    gsl_matrix_view A = gsl_matrix_view_array(jac, n, n);
    gsl_vector_view rv = gsl_vector_view_array(r, n), dv = gsl_vector_view_array(d, n);
    int sign;
    if (gsl_linalg_LU_decomp(&A.matrix, &perm, &sign) ||
        gsl_linalg_LU_solve(&A.matrix, &perm, &rv.vector, &dv.vector))
      return TF_SDE_NEWTON_FAILED;
    double step = 1.0, trial_norm = INFINITY;
    for (int halvings = 0; halvings < 40; halvings++, step *= 0.5) {
      for (size_t i = 0; i < n; i++) trial[i] = y[i] + step * d[i];
      trial_norm = residual(sys, t1, th_h, c, trial, f, r_trial, &code);
      if (code < 0) return TF_SDE_MODEL_FAILED;
      if (trial_norm <= (1 - 1e-4 * step) * norm) break; /* a refusal (NAN) halves the step */
    }
    if (code) return TF_SDE_MODEL_FAILED;
    double change = 0;
    for (size_t i = 0; i < n; i++) {
      change = fmax(change, fabs(trial[i] - y[i]) / (1.0 + fabs(trial[i])));
      y[i] = trial[i];
      r[i] = r_trial[i];
    }
    norm = trial_norm;
    for (size_t i = 0; i < n; i++)
      if (!isfinite(y[i])) return TF_SDE_NONFINITE;
    if (change < 1e-13 || norm == 0) return TF_SDE_OK;
  }
  return TF_SDE_NEWTON_FAILED;
}

tf_sde_status tf_sde_integrate_range(const tf_sde_system *sys, tf_sde_scheme scheme, tf_rng_key key,
                                     double t0, double h, long k_begin, long k_end, double *x,
                                     double *work, long *steps) {
  const size_t n = sys->n, m = sys->noise ? sys->m : n;
  double *f = work, *g = work + n, *dg = work + 2 * n;
  double c[TF_MAX_DIM], xa[TF_MAX_DIM];
  const bool milstein = milstein_scheme(scheme), implicit = implicit_scheme(scheme);
  const bool watched = sys->accepted && n <= TF_MAX_DIM;
  const double th = sys->theta > 0 ? sys->theta : 1.0;
  /* The increments of several steps are drawn at once (see tf_rng_normals_run); a step's
   * increments are the same whichever batch they fall in. */
  double increments[NOISE_BATCH];
  const long batch_steps = (long)(NOISE_BATCH / (m ? m : 1));
  long batch_begin = k_begin, batch_end = k_begin;
  const double sqrt_h = sqrt(h);
  *steps = 0;
  for (long k = k_begin; k < k_end; k++) {
    const double t = t0 + (double)k * h;
    if (k == batch_end) {
      batch_begin = k;
      batch_end = k_end - k < batch_steps ? k_end : k + batch_steps;
      (sys->fast_normals ? tf_rng_normals_run_fast : tf_rng_normals_run)(
          key, (uint64_t)k, TF_RNG_NOISE, m, (size_t)(batch_end - k), increments);
    }
    const double *dw = increments + (size_t)(k - batch_begin) * m;
    if (watched) memcpy(xa, x, n * sizeof *x);
    if (sys->drift(t, x, sys->ctx, f)) return TF_SDE_MODEL_FAILED;
    if (!implicit && !sys->noise) { /* diagonal explicit: the original arithmetic */
      if (sys->diffusion(t, x, sys->ctx, g) || (milstein && sys->diffusion_dx(t, x, sys->ctx, dg)))
        return TF_SDE_MODEL_FAILED;
      for (size_t i = 0; i < n; i++) {
        const double w = sqrt_h * dw[i];
        x[i] += f[i] * h + g[i] * w;
        if (milstein) x[i] += 0.5 * g[i] * dg[i] * (w * w - h);
      }
    } else if (!implicit) {
      for (size_t i = 0; i < n; i++) f[i] *= h;
      if (noise_increment(sys, milstein, t, x, h, dw, g, dg, f)) return TF_SDE_MODEL_FAILED;
      for (size_t i = 0; i < n; i++) x[i] += f[i];
    } else {
      for (size_t i = 0; i < n; i++) c[i] = (1 - th) * h * f[i];
      if (noise_increment(sys, milstein, t, x, h, dw, g, dg, c)) return TF_SDE_MODEL_FAILED;
      for (size_t i = 0; i < n; i++) c[i] += x[i];
      /* first guess: the explicit Euler step */
      for (size_t i = 0; i < n; i++) f[i] = c[i] + th * h * f[i];
      const tf_sde_status st = newton(sys, t + h, h, c, f);
      if (st != TF_SDE_OK) return st;
      memcpy(x, f, n * sizeof *x);
    }
    *steps += 1;
    for (size_t i = 0; i < n; i++)
      if (!isfinite(x[i])) return TF_SDE_NONFINITE;
    if (watched) sys->accepted(sys->ctx, k, xa, x);
  }
  return TF_SDE_OK;
}

tf_sde_status tf_sde_integrate(const tf_sde_system *sys, tf_sde_scheme scheme, tf_rng_key key,
                               double t0, double t_end, double dt, double *x, double *work,
                               long *steps) {
  const long nsteps = tf_sde_step_count(t0, t_end, dt);
  const double h = nsteps > 0 ? (t_end - t0) / (double)nsteps : 0.0;
  return tf_sde_integrate_range(sys, scheme, key, t0, h, 0, nsteps, x, work, steps);
}
