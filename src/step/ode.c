/* ode.c — the stepper seam (every tf_stepper_* call goes through the type's operations) and
 * the explicit Runge–Kutta driver behind it: Hairer, Nørsett & Wanner's PI step-size
 * controller, initial step estimate, accept/reject, first-same-as-last reuse and dense output,
 * for any pair a tf_stepper_type describes (dopri5.c, dop853.c, bs23.c). */
#include "ode.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "rk_driver.h"
#include "status.h"

tf_stepper *tf_stepper_create(size_t n) {
  tf_stepper *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->n = n;
  double *block = calloc((TF_RK_MAX_STAGES + 3 + TF_RK_MAX_CONT) * n, sizeof *block);
  if (!block) {
    free(s);
    return NULL;
  }
  s->block = block;
  if (n <= TF_MAX_DIM && !(s->lin = calloc(2 * n * n + n, sizeof *s->lin))) {
    free(block);
    free(s);
    return NULL;
  }
  for (int i = 0; i < TF_RK_MAX_STAGES; i++) s->k[i] = block + i * n;
  s->stage = block + TF_RK_MAX_STAGES * n;
  s->x_new = block + (TF_RK_MAX_STAGES + 1) * n;
  for (int i = 0; i < TF_RK_MAX_CONT; i++) s->cont[i] = block + (TF_RK_MAX_STAGES + 2 + i) * n;
  s->start_slope = block + (TF_RK_MAX_STAGES + 2 + TF_RK_MAX_CONT) * n;
  tf_stepper_setup(s, NULL, NULL, NULL);
  return s;
}

void tf_stepper_destroy(tf_stepper *s) {
  if (!s) return;
  free(s->block);
  free(s->lin);
  free(s);
}

void tf_stepper_setup(tf_stepper *s, tf_rhs_fn f, void *ctx, const tf_ode_options *opts) {
  s->f = f;
  s->ctx = ctx;
  s->opt = opts ? *opts : tf_ode_default_options();
  s->type = tf_stepper_type_of(&s->opt);
  s->ops = s->type->ops ? s->type->ops : &tf_rk_driver_ops;
  s->jac = NULL;
  s->autonomous = false;
}

void tf_stepper_set_jacobian(tf_stepper *s, tf_jacobian_fn jac) {
  s->jac = jac;
}

void tf_stepper_set_autonomous(tf_stepper *s, bool autonomous) {
  s->autonomous = autonomous;
}

/* --- the seam ------------------------------------------------------------------------------ */

void tf_stepper_reset(tf_stepper *s, double t0, const double *x0) {
  s->ops->reset(s, t0, x0);
}

void tf_stepper_restart(tf_stepper *s, double t0, const double *x0) {
  s->ops->restart(s, t0, x0);
}

/* tf_stepper_step, inlined in the drive's loop. */
static inline tf_ode_status type_step(tf_stepper *s, double *t, double *x, double t_limit) {
  return s->ops->step(s, t, x, t_limit);
}

tf_ode_status tf_stepper_step(tf_stepper *s, double *t, double *x, double t_limit) {
  return type_step(s, t, x, t_limit);
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

double tf_stepper_last_step_end(const tf_stepper *s) {
  return s->t_last;
}

tf_counts tf_stepper_stats(const tf_stepper *s) {
  return s->stats;
}

int tf_stepper_model_code(const tf_stepper *s) {
  return s->model_code;
}

tf_ode_status tf_stepper_integrate(tf_stepper *s, double *t, double *x, double t_end) {
  tf_stepper_reset(s, *t, x);
  tf_drive d = {.max_steps = s->opt.max_steps > 0 ? s->opt.max_steps : LONG_MAX};
  tf_ode_status st;
  tf_stepper_drive(s, t, x, t_end, &d, &st);
  return st;
}

/* tf_drive_due, inlined in the drive's loop (the exported functions of a shared library are
 * not: one call fewer on every step of the event loop). */
static inline bool drive_due(const tf_drive *d, long steps, double t, double t_end,
                             tf_drive_end *end, tf_ode_status *st) {
  *st = TF_ODE_OK;
  *end = TF_DRIVE_STOPPED;
  if (!(t < t_end)) {
    *end = TF_DRIVE_REACHED;
    return false;
  }
  if (d->stop_first && tf_stop_poll(d->stop)) return false;
  if (steps >= d->max_steps) {
    *st = TF_ODE_MAX_STEPS;
    *end = TF_DRIVE_FAILED;
    return false;
  }
  return d->stop_first || !tf_stop_poll(d->stop);
}

bool tf_drive_due(const tf_drive *d, long steps, double t, double t_end, tf_drive_end *end,
                  tf_ode_status *st) {
  return drive_due(d, steps, t, t_end, end, st);
}

tf_drive_end tf_stepper_drive(tf_stepper *s, double *t, double *x, double t_end, tf_drive *d,
                              tf_ode_status *st) {
  tf_drive_end end;
  d->steps = 0;
  while (drive_due(d, d->steps, *t, t_end, &end, st)) {
    const double ta = *t;
    *st = type_step(s, t, x, d->before ? d->before(d->ctx, ta, x, t_end) : t_end);
    d->steps++;
    if (*st != TF_ODE_OK) return TF_DRIVE_FAILED;
    if (d->accepted && d->accepted(d->ctx, s, ta, *t, x)) return TF_DRIVE_HOOK_ENDED;
  }
  return end;
}

int tf_member_status_of_step(tf_ode_status st) {
  switch (st) {
    case TF_ODE_OK:
      return TF_MEMBER_OK;
    case TF_ODE_NONFINITE:
      return TF_MEMBER_NONFINITE;
    case TF_ODE_STEP_UNDERFLOW:
      return TF_MEMBER_STEP_UNDERFLOW;
    case TF_ODE_MAX_STEPS:
      return TF_MEMBER_MAX_STEPS;
    case TF_ODE_MODEL_FAILED:
      break;
  }
  return TF_MEMBER_FAILED;
}

/* From a restart at the step's start, steps under error control that end exactly at te: any
 * type that can restart and step can do it, so a type gives its own step_to only to do better. */
static int step_to_by_steps(tf_stepper *s, double t_start, const double *start, size_t n, double te,
                            double *x, bool again) {
  memcpy(x, start, n * sizeof *x);
  if (s->ops->restart_step_to)
    s->ops->restart_step_to(s, t_start, x, again);
  else
    tf_stepper_restart(s, t_start, x);
  double t = t_start;
  for (int i = 0; t < te && i < 1000; i++)
    if (tf_stepper_step(s, &t, x, te) != TF_ODE_OK) return -1;
  return t < te ? -1 : 0;
}

int tf_stepper_step_to(tf_stepper *s, double t_start, const double *start, size_t n, double te,
                       double *x, bool again) {
  return (s->ops->step_to ? s->ops->step_to : step_to_by_steps)(s, t_start, start, n, te, x, again);
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
    case TF_ODE_MODEL_FAILED:
      return "failed";
  }
  return "unknown";
}

bool tf_state_finite(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return false;
  return true;
}

/* --- the explicit Runge–Kutta driver ------------------------------------------------------- */

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

void tf_rk_reset(tf_stepper *s, double t0, const double *x0) {
  s->stats = (tf_counts){0};
  s->model_code = 0;
  tf_rk_eval(s, t0, x0, s->k[0]);
  s->fsal_valid = true;
  s->t_prev = s->t_last = t0;
  s->h_prev = 0.0;
  s->dense_state = TF_DENSE_NONE;
  s->log_err_prev = TF_RK_LOG_1E4;
  s->h = s->opt.h0 > 0 ? s->opt.h0 : initial_step(s, t0, x0, 1.0);
}

void tf_rk_restart(tf_stepper *s, double t0, const double *x0) {
  if (!(s->h > 0)) {
    tf_counts keep = s->stats;
    tf_rk_reset(s, t0, x0);
    tf_counts_add(&s->stats, &keep);
    return;
  }
  s->model_code = 0;
  tf_rk_eval(s, t0, x0, s->k[0]);
  s->fsal_valid = true;
  s->t_prev = s->t_last = t0;
  s->h_prev = 0.0;
  /* a pending extension needed the stages this evaluation overwrote, and the field may have
   * changed (a new mode): it is gone; a built one stays, for DOPRI5's callers as before */
  if (s->dense_state == TF_DENSE_PENDING) s->dense_state = TF_DENSE_NONE;
}

static tf_ode_status rk_step(tf_stepper *s, double *t, double *x, double t_limit) {
  return tf_rk_step_with(s, t, x, t_limit, s->n, tf_rk_tableau_attempt, tf_rk_tableau_error,
                         tf_rk_tableau_build_dense);
}

/* A lazy extension's stages lie inside a step already accepted: a domain refusal there is not
 * the next step's business (a fatal one is, and stays). */
static void build_dense_late(tf_stepper *s) {
  const int code = s->model_code;
  s->type->build_dense_late(s);
  if (s->model_code > 0) s->model_code = code;
}

void tf_rk_dense(const tf_stepper *s, double t, double *out) {
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
    if (s->dense_state == TF_DENSE_PENDING) build_dense_late((tf_stepper *)s);
    if (s->dense_state != TF_DENSE_READY) {
      for (size_t i = 0; i < s->n; i++) out[i] = NAN; /* no step to interpolate: loud, not wrong */
      return;
    }
  }
  dense_at(s, theta, out);
}

bool tf_rk_sample_is_exact(const tf_stepper *s) {
  return !s->type->lazy_dense || s->dense_state == TF_DENSE_READY;
}

/* Where the extension is not built yet, the cubic Hermite interpolant (rk_driver.h). */
void tf_rk_sample(const tf_stepper *s, double t, double *out) {
  if (tf_rk_sample_is_exact(s))
    tf_rk_dense(s, t, out);
  else
    tf_rk_hermite(s, t, s->type->fsal_stage, out);
}

/* tf_rk_restart for tf_stepper_step_to: it keeps the field at the start, and again (the same
 * start, a step already sized) takes the kept one instead of evaluating it anew (still counted). */
void tf_rk_restart_step_to(tf_stepper *s, double t0, const double *x0, bool again) {
  if (!(again && s->h > 0)) {
    tf_rk_restart(s, t0, x0);
    memcpy(s->start_slope, s->k[0], s->n * sizeof *s->k[0]);
    s->start_code = s->model_code;
    return;
  }
  memcpy(s->k[0], s->start_slope, s->n * sizeof *s->k[0]);
  s->stats.rhs_evals++;
  s->model_code = s->start_code;
  s->fsal_valid = true;
  s->t_prev = s->t_last = t0;
  s->h_prev = 0.0;
  if (s->dense_state == TF_DENSE_PENDING) s->dense_state = TF_DENSE_NONE;
}

const tf_stepper_ops tf_rk_driver_ops = {
    .reset = tf_rk_reset,
    .restart = tf_rk_restart,
    .restart_step_to = tf_rk_restart_step_to,
    .step = rk_step,
    .dense = tf_rk_dense,
    .sample = tf_rk_sample,
    .sample_is_exact = tf_rk_sample_is_exact,
};
