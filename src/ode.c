/* ode.c — the stepper seam (every tf_stepper_* call goes through the type's operations) and
 * the explicit Runge–Kutta driver behind it: Hairer, Nørsett & Wanner's PI step-size
 * controller, initial step estimate, accept/reject, first-same-as-last reuse and dense output,
 * for any pair a tf_stepper_type describes (dopri5.c, dop853.c, bs23.c). */
#include "ode.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stepper_type.h"

/* log(1e-4): the PI controller's memory starts at, and never falls below, an error of 1e-4 */
static const double log_1e4 = -9.210340371976182;

tf_ode_options tf_ode_default_options(void) {
  return (tf_ode_options){.rtol = 1e-8, .atol = 1e-10, .max_steps = 1000000};
}

tf_stepper *tf_stepper_create(size_t n) {
  tf_stepper *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->n = n;
  double *block = calloc((TF_RK_MAX_STAGES + 2 + TF_RK_MAX_CONT) * n, sizeof *block);
  if (!block) {
    free(s);
    return NULL;
  }
  s->block = block;
  for (int i = 0; i < TF_RK_MAX_STAGES; i++) s->k[i] = block + i * n;
  s->stage = block + TF_RK_MAX_STAGES * n;
  s->x_new = block + (TF_RK_MAX_STAGES + 1) * n;
  for (int i = 0; i < TF_RK_MAX_CONT; i++) s->cont[i] = block + (TF_RK_MAX_STAGES + 2 + i) * n;
  tf_stepper_setup(s, NULL, NULL, NULL);
  return s;
}

void tf_stepper_destroy(tf_stepper *s) {
  if (!s) return;
  free(s->block);
  free(s);
}

void tf_stepper_setup(tf_stepper *s, tf_rhs_fn f, void *ctx, const tf_ode_options *opts) {
  s->f = f;
  s->ctx = ctx;
  s->opt = opts ? *opts : tf_ode_default_options();
  s->type = tf_stepper_type_of(&s->opt);
  s->ops = s->type->ops ? s->type->ops : &tf_rk_driver_ops;
}

/* --- the seam ------------------------------------------------------------------------------ */

void tf_stepper_reset(tf_stepper *s, double t0, const double *x0) {
  s->ops->reset(s, t0, x0);
}

void tf_stepper_restart(tf_stepper *s, double t0, const double *x0) {
  s->ops->restart(s, t0, x0);
}

tf_ode_status tf_stepper_step(tf_stepper *s, double *t, double *x, double t_limit) {
  return s->ops->step(s, t, x, t_limit);
}

void tf_stepper_dense(const tf_stepper *s, double t, double *out) {
  s->ops->dense(s, t, out);
}

void tf_stepper_sample(const tf_stepper *s, double t, double *out) {
  s->ops->sample(s, t, out);
}

bool tf_stepper_sample_is_exact(const tf_stepper *s) {
  return s->ops->sample_is_exact(s);
}

void tf_stepper_without_dense(tf_stepper *s) {
  s->dense_off = true;
}

double tf_stepper_last_step_start(const tf_stepper *s) {
  return s->t_prev;
}

tf_ode_stats tf_stepper_stats(const tf_stepper *s) {
  return s->stats;
}

tf_ode_status tf_stepper_integrate(tf_stepper *s, double *t, double *x, double t_end) {
  tf_stepper_reset(s, *t, x);
  long taken = 0;
  while (*t < t_end) {
    if (s->opt.max_steps > 0 && taken++ >= s->opt.max_steps) return TF_ODE_MAX_STEPS;
    tf_ode_status st = tf_stepper_step(s, t, x, t_end);
    if (st != TF_ODE_OK) return st;
  }
  return TF_ODE_OK;
}

int tf_stepper_step_to(tf_stepper *s, double t_start, const double *start, size_t n, double te,
                       double *x) {
  memcpy(x, start, n * sizeof *x);
  tf_stepper_restart(s, t_start, x);
  double t = t_start;
  for (int i = 0; t < te && i < 1000; i++)
    if (tf_stepper_step(s, &t, x, te) != TF_ODE_OK) return -1;
  return t < te ? -1 : 0;
}

const char *tf_ode_status_name(tf_ode_status st) {
  switch (st) {
    case TF_ODE_OK:
      return "ok";
    case TF_ODE_NONFINITE:
      return "nonfinite";
    case TF_ODE_STEP_UNDERFLOW:
      return "step_underflow";
    case TF_ODE_MAX_STEPS:
      return "max_steps";
  }
  return "unknown";
}

bool tf_state_finite(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return false;
  return true;
}

/* --- the explicit Runge–Kutta driver ------------------------------------------------------- */

double tf_rk_weighted_rms(const tf_stepper *s, const double *v, const double *x0,
                          const double *x1) {
  double sum = 0.0;
  for (size_t i = 0; i < s->n; i++) {
    const double a0 = fabs(x0[i]), a1 = fabs(x1[i]); /* a NaN is caught by the caller */
    const double scale = s->opt.atol + s->opt.rtol * (a0 > a1 ? a0 : a1);
    sum += (v[i] / scale) * (v[i] / scale);
  }
  return sqrt(sum / (double)s->n);
}

/* Hairer's starting step: balance the first and second derivative estimates. */
static double initial_step(tf_stepper *s, double t, const double *x, double direction) {
  const double *f0 = s->k[0];
  const double d0 = tf_rk_weighted_rms(s, x, x, x), d1n = tf_rk_weighted_rms(s, f0, x, x);
  double h = (d0 < 1e-10 || d1n < 1e-10) ? 1e-6 : 0.01 * d0 / d1n;
  if (s->opt.hmax > 0) h = fmin(h, s->opt.hmax);
  for (size_t i = 0; i < s->n; i++) s->stage[i] = x[i] + direction * h * f0[i];
  tf_rk_eval(s, t + direction * h, s->stage, s->k[1]);
  for (size_t i = 0; i < s->n; i++) s->x_new[i] = (s->k[1][i] - f0[i]) / h;
  const double d2 = tf_rk_weighted_rms(s, s->x_new, x, x);
  const double dmax = fmax(d1n, d2);
  const double h1 =
      dmax <= 1e-15 ? fmax(1e-6, h * 1e-3) : pow(0.01 / dmax, 1.0 / s->type->control.start_order);
  h = fmin(100.0 * h, h1);
  if (s->opt.hmax > 0) h = fmin(h, s->opt.hmax);
  return h;
}

static void rk_reset(tf_stepper *s, double t0, const double *x0) {
  s->stats = (tf_ode_stats){0};
  tf_rk_eval(s, t0, x0, s->k[0]);
  s->fsal_valid = true;
  s->t_prev = s->t_last = t0;
  s->h_prev = 0.0;
  s->dense_state = TF_DENSE_NONE;
  s->log_err_prev = log_1e4;
  s->h = s->opt.h0 > 0 ? s->opt.h0 : initial_step(s, t0, x0, 1.0);
}

static void rk_restart(tf_stepper *s, double t0, const double *x0) {
  if (!(s->h > 0)) {
    tf_ode_stats keep = s->stats;
    rk_reset(s, t0, x0);
    s->stats.steps += keep.steps, s->stats.rejected += keep.rejected;
    s->stats.rhs_evals += keep.rhs_evals;
    return;
  }
  tf_rk_eval(s, t0, x0, s->k[0]);
  s->fsal_valid = true;
  s->t_prev = s->t_last = t0;
  s->h_prev = 0.0;
  /* a pending extension needed the stages this evaluation overwrote, and the field may have
   * changed (a new mode): it is gone; a built one stays, for DOPRI5's callers as before */
  if (s->dense_state == TF_DENSE_PENDING) s->dense_state = TF_DENSE_NONE;
}

static bool all_finite(const double *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) return false;
  return true;
}

/* The continuous extension of a step about to be accepted: built now, or (lazy types) left to
 * be built from the kept start on first use. */
static void keep_dense(tf_stepper *s, const double *x, double h) {
  const tf_stepper_type *ty = s->type;
  if (s->dense_off) {
    s->dense_state = TF_DENSE_NONE;
  } else if (ty->lazy_dense) {
    memcpy(s->cont[0], x, s->n * sizeof *x);
    s->dense_state = TF_DENSE_PENDING;
  } else {
    (ty->build_dense ? ty->build_dense : tf_rk_tableau_build_dense)(s, x, h);
    s->dense_state = TF_DENSE_READY;
  }
}

static tf_ode_status rk_step(tf_stepper *s, double *t, double *x, double t_limit) {
  if (!s->fsal_valid) rk_reset(s, *t, x);
  const tf_stepper_type *ty = s->type;
  void (*attempt)(tf_stepper *, double, const double *, double) =
      ty->attempt ? ty->attempt : tf_rk_tableau_attempt;
  double (*error)(const tf_stepper *, const double *, double) =
      ty->error ? ty->error : tf_rk_tableau_error;
  const int fsal = ty->fsal_stage;
  const double safety = ty->control.safety, expo1 = ty->control.expo1, beta = ty->control.beta;
  const double fac_lo = ty->control.fac_lo, fac_hi = ty->control.fac_hi;
  const double hmin_floor = s->opt.hmin > 0 ? s->opt.hmin : 1e-14 * fmax(1.0, fabs(*t));
  for (;;) {
    double h = s->h;
    if (s->opt.hmax > 0) h = fmin(h, s->opt.hmax);
    const bool last = *t + h >= t_limit;
    if (last) h = t_limit - *t;
    attempt(s, *t, x, h);
    const double err = s->opt.fixed_step ? 0.0 : error(s, x, h);
    if (!isfinite(err) || !all_finite(s->x_new, s->n)) {
      /* !(h > floor) also catches a NaN step, which would otherwise shrink for ever */
      if (s->opt.fixed_step || !(h > hmin_floor)) return TF_ODE_NONFINITE;
      s->h = 0.25 * h; /* an overflow in a trial stage; shrink hard and retry */
      s->stats.rejected++;
      continue;
    }
    /* Hairer's controller in logarithms: one log and one exp per step instead of two powers
     * (a tenth of a small system's step).  Fixed steps have no controller. */
    const double log_err = s->opt.fixed_step ? 0.0 : log(err > 1e-16 ? err : 1e-16);
    if (err <= 1.0) {
      keep_dense(s, x, h);
      s->t_prev = *t;
      s->h_prev = h;
      *t = last ? t_limit : *t + h;
      s->t_last = *t;
      memcpy(x, s->x_new, s->n * sizeof *x);
      double *swap = s->k[0];
      s->k[0] = s->k[fsal];
      s->k[fsal] = swap;
      s->stats.steps++;
      if (!s->opt.fixed_step) {
        double fac = exp(expo1 * log_err - beta * s->log_err_prev) / safety;
        fac = fmax(fac_lo, fmin(fac_hi, fac));
        s->log_err_prev = fmax(log_err, log_1e4);
        /* Keep the proposed step of the last, truncated step if it was cut short. */
        if (!last || h / fac > s->h) s->h = h / fac;
      }
      return TF_ODE_OK;
    }
    s->stats.rejected++;
    s->h = h / fmin(fac_hi, exp(expo1 * log_err) / safety);
    if (!(s->h >= hmin_floor)) return isnan(s->h) ? TF_ODE_NONFINITE : TF_ODE_STEP_UNDERFLOW;
  }
}

static void rk_dense(const tf_stepper *s, double t, double *out) {
  const double theta = s->h_prev > 0 ? (t - s->t_prev) / s->h_prev : 0.0;
  const tf_stepper_type *ty = s->type;
  void (*dense_at)(const tf_stepper *, double, double *) =
      ty->dense_at ? ty->dense_at : tf_rk_tableau_dense_at;
  if (ty->lazy_dense) {
    if (s->dense_state != TF_DENSE_NONE && t == s->t_last) { /* the step's end: the solution */
      memcpy(out, s->x_new, s->n * sizeof *out);
      return;
    }
    /* built on first use; the stepper is logically const (the extension is a function of the
     * step taken) */
    if (s->dense_state == TF_DENSE_PENDING) ty->build_dense_late((tf_stepper *)s);
    if (s->dense_state != TF_DENSE_READY) {
      for (size_t i = 0; i < s->n; i++) out[i] = NAN; /* no step to interpolate: loud, not wrong */
      return;
    }
  }
  dense_at(s, theta, out);
}

static bool rk_sample_is_exact(const tf_stepper *s) {
  return !s->type->lazy_dense || s->dense_state == TF_DENSE_READY;
}

/* Where the extension is not built yet, the cubic Hermite interpolant through the step's ends
 * and slopes: after the swap k[0] is f at the end and k[fsal] f at the start. */
static void rk_sample(const tf_stepper *s, double t, double *out) {
  if (rk_sample_is_exact(s)) {
    rk_dense(s, t, out);
    return;
  }
  const double h = s->h_prev, th = h > 0 ? (t - s->t_prev) / h : 0.0, th1 = 1.0 - th;
  const double *x0 = s->cont[0], *x1 = s->x_new, *f0 = s->k[s->type->fsal_stage], *f1 = s->k[0];
  for (size_t i = 0; i < s->n; i++)
    out[i] = th1 * x0[i] + th * x1[i] +
             th * th1 * ((th - th1) * (x1[i] - x0[i]) + h * (th1 * f0[i] - th * f1[i]));
}

const tf_stepper_ops tf_rk_driver_ops = {
    .reset = rk_reset,
    .restart = rk_restart,
    .step = rk_step,
    .dense = rk_dense,
    .sample = rk_sample,
    .sample_is_exact = rk_sample_is_exact,
};
