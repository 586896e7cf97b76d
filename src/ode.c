/* ode.c — Dormand–Prince 5(4) (DOPRI5) following Hairer, Nørsett & Wanner, "Solving ODEs I",
 * including their PI step-size controller, initial step estimate and dense output.  The
 * first-same-as-last stage is reused across steps, so an accepted step costs 6 evaluations. */
#include "ode.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ode_stepper.h"

enum { STAGES = 7 }; /* DOPRI5's */

static const double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
static const double a21 = 1.0 / 5;
static const double a31 = 3.0 / 40, a32 = 9.0 / 40;
static const double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
static const double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561,
                    a54 = -212.0 / 729;
static const double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                    a65 = -5103.0 / 18656;
static const double a71 = 35.0 / 384, a73 = 500.0 / 1113, a74 = 125.0 / 192, a75 = -2187.0 / 6784,
                    a76 = 11.0 / 84;
static const double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
                    e6 = 22.0 / 525, e7 = -1.0 / 40;
static const double d1 = -12715105075.0 / 11282082432, d3 = 87487479700.0 / 32700410799,
                    d4 = -10690763975.0 / 1880347072, d5 = 701980252875.0 / 199316789632,
                    d6 = -1453857185.0 / 822651844, d7 = 69997945.0 / 29380423;

/* Controller constants of Hairer's DOPRI5 code. */
static const double safety = 0.9, log_1e4 = -9.210340371976182; /* log(1e-4) */

/* Each pair's controller as in Hairer's codes: fac = err^expo1 / err_prev^beta / safety,
 * clamped to [fac_lo, fac_hi], h_new = h / fac; a rejected step shrinks by at most fac_hi.
 * order: of the starting-step estimate. */
static const struct {
  double expo1, beta, fac_lo, fac_hi, order;
} control[] = {
    [TF_RK_DOPRI5] = {0.2 - 0.75 * 0.04, 0.04, 1.0 / 10.0, 1.0 / 0.2, 5.0},
    [TF_RK_DOP853] = {1.0 / 8.0, 0.0, 1.0 / 6.0, 1.0 / 0.333, 8.0},
};

tf_ode_options tf_ode_default_options(void) {
  return (tf_ode_options){.rtol = 1e-8, .atol = 1e-10, .max_steps = 1000000};
}

tf_dopri5 *tf_dopri5_create(size_t n) {
  tf_dopri5 *s = calloc(1, sizeof *s);
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
  s->opt = tf_ode_default_options();
  return s;
}

void tf_dopri5_destroy(tf_dopri5 *s) {
  if (!s) return;
  free(s->block);
  free(s);
}

void tf_dopri5_setup(tf_dopri5 *s, tf_rhs_fn f, void *ctx, const tf_ode_options *opts) {
  s->f = f;
  s->ctx = ctx;
  if (opts) s->opt = *opts;
}

static void eval(tf_dopri5 *s, double t, const double *x, double *dx) {
  tf_rk_eval(s, t, x, dx);
}

static double weighted_rms(const tf_dopri5 *s, const double *v, const double *x0,
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
static double initial_step(tf_dopri5 *s, double t, const double *x, double direction) {
  const double *f0 = s->k[0];
  const double d0 = weighted_rms(s, x, x, x), d1n = weighted_rms(s, f0, x, x);
  double h = (d0 < 1e-10 || d1n < 1e-10) ? 1e-6 : 0.01 * d0 / d1n;
  if (s->opt.hmax > 0) h = fmin(h, s->opt.hmax);
  for (size_t i = 0; i < s->n; i++) s->stage[i] = x[i] + direction * h * f0[i];
  eval(s, t + direction * h, s->stage, s->k[1]);
  for (size_t i = 0; i < s->n; i++) s->x_new[i] = (s->k[1][i] - f0[i]) / h;
  const double d2 = weighted_rms(s, s->x_new, x, x);
  const double dmax = fmax(d1n, d2);
  const double h1 =
      dmax <= 1e-15 ? fmax(1e-6, h * 1e-3) : pow(0.01 / dmax, 1.0 / control[s->opt.method].order);
  h = fmin(100.0 * h, h1);
  if (s->opt.hmax > 0) h = fmin(h, s->opt.hmax);
  return h;
}

void tf_dopri5_reset(tf_dopri5 *s, double t0, const double *x0) {
  s->stats = (tf_ode_stats){0};
  s->model_code = 0;
  eval(s, t0, x0, s->k[0]);
  s->fsal_valid = true;
  s->t_prev = s->t_last = t0;
  s->h_prev = 0.0;
  s->dense_state = TF_DENSE_NONE;
  s->log_err_prev = log_1e4;
  s->h = s->opt.h0 > 0 ? s->opt.h0 : initial_step(s, t0, x0, 1.0);
}

void tf_dopri5_restart(tf_dopri5 *s, double t0, const double *x0) {
  if (!(s->h > 0)) {
    tf_ode_stats keep = s->stats;
    tf_dopri5_reset(s, t0, x0);
    s->stats.steps += keep.steps, s->stats.rejected += keep.rejected;
    s->stats.rhs_evals += keep.rhs_evals;
    return;
  }
  s->model_code = 0;
  eval(s, t0, x0, s->k[0]);
  s->fsal_valid = true;
  s->t_prev = s->t_last = t0;
  s->h_prev = 0.0;
  /* a pending extension needed the stages this evaluation overwrote, and the field may have
   * changed (a new mode): it is gone; a built one stays, for DOPRI5's callers as before */
  if (s->dense_state == TF_DENSE_PENDING) s->dense_state = TF_DENSE_NONE;
}

/* Inlined at each call, where nk and the coefficients are constants: the loop over the stages
 * unrolls and the coefficients become immediates (a Runge-Kutta step of a small system is
 * mostly these sums). */
static inline __attribute__((always_inline)) void axpy_stages(tf_dopri5 *s, const double *x,
                                                              double h, int nk, const double *a) {
  for (size_t i = 0; i < s->n; i++) {
    double acc = 0.0;
    for (int j = 0; j < nk; j++) acc += a[j] * s->k[j][i];
    s->stage[i] = x[i] + h * acc;
  }
}

/* Six new stages; k[6] is f at the 5th-order solution (reused as k[0] of the next step). */
static void attempt(tf_dopri5 *s, double t, const double *x, double h) {
  axpy_stages(s, x, h, 1, (const double[]){a21});
  eval(s, t + c2 * h, s->stage, s->k[1]);
  axpy_stages(s, x, h, 2, (const double[]){a31, a32});
  eval(s, t + c3 * h, s->stage, s->k[2]);
  axpy_stages(s, x, h, 3, (const double[]){a41, a42, a43});
  eval(s, t + c4 * h, s->stage, s->k[3]);
  axpy_stages(s, x, h, 4, (const double[]){a51, a52, a53, a54});
  eval(s, t + c5 * h, s->stage, s->k[4]);
  axpy_stages(s, x, h, 5, (const double[]){a61, a62, a63, a64, a65});
  eval(s, t + h, s->stage, s->k[5]);
  axpy_stages(s, x, h, 6, (const double[]){a71, 0.0, a73, a74, a75, a76});
  memcpy(s->x_new, s->stage, s->n * sizeof *s->x_new);
  eval(s, t + h, s->x_new, s->k[6]);
}

static double error_norm(tf_dopri5 *s, const double *x, double h) {
  for (size_t i = 0; i < s->n; i++)
    s->stage[i] = h * (e1 * s->k[0][i] + e3 * s->k[2][i] + e4 * s->k[3][i] + e5 * s->k[4][i] +
                       e6 * s->k[5][i] + e7 * s->k[6][i]);
  return weighted_rms(s, s->stage, x, s->x_new);
}

static void build_dense(tf_dopri5 *s, const double *x, double h) {
  for (size_t i = 0; i < s->n; i++) {
    const double dx = s->x_new[i] - x[i];
    const double bspl = h * s->k[0][i] - dx;
    s->cont[0][i] = x[i];
    s->cont[1][i] = dx;
    s->cont[2][i] = bspl;
    s->cont[3][i] = dx - h * s->k[6][i] - bspl;
    s->cont[4][i] = h * (d1 * s->k[0][i] + d3 * s->k[2][i] + d4 * s->k[3][i] + d5 * s->k[4][i] +
                         d6 * s->k[5][i] + d7 * s->k[6][i]);
  }
}

static bool all_finite(const double *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) return false;
  return true;
}

tf_ode_status tf_dopri5_step(tf_dopri5 *s, double *t, double *x, double t_limit) {
  if (!s->fsal_valid) tf_dopri5_reset(s, *t, x);
  const bool d853 = s->opt.method == TF_RK_DOP853;
  const int fsal = d853 ? 12 : 6; /* the stage that is f at the new solution */
  const double expo1 = control[s->opt.method].expo1, beta = control[s->opt.method].beta;
  const double fac_lo = control[s->opt.method].fac_lo, fac_hi = control[s->opt.method].fac_hi;
  const double hmin_floor = s->opt.hmin > 0 ? s->opt.hmin : 1e-14 * fmax(1.0, fabs(*t));
  if (s->model_code) return TF_ODE_MODEL_FAILED; /* refused at the accepted state itself */
  for (;;) {
    double h = s->h;
    if (s->opt.hmax > 0) h = fmin(h, s->opt.hmax);
    const bool last = *t + h >= t_limit;
    if (last) h = t_limit - *t;
    if (d853)
      tf_dop853_attempt(s, *t, x, h);
    else
      attempt(s, *t, x, h);
    const double err = s->opt.fixed_step ? 0.0
                       : d853            ? tf_dop853_error(s, x, h)
                                         : error_norm(s, x, h);
    if (s->model_code < 0) return TF_ODE_MODEL_FAILED;
    const bool refused = s->model_code > 0;
    s->model_code = 0;
    if (refused || !isfinite(err) || !all_finite(s->x_new, s->n)) {
      /* !(h > floor) also catches a NaN step, which would otherwise shrink for ever */
      if (s->opt.fixed_step || !(h > hmin_floor))
        return refused ? TF_ODE_STEP_UNDERFLOW : TF_ODE_NONFINITE;
      s->h = 0.25 * h; /* an overflow or a refusal in a trial stage; shrink hard and retry */
      s->stats.rejected++;
      continue;
    }
    /* Hairer's controller in logarithms: one log and one exp per step instead of two powers
     * (a tenth of a small system's step).  Fixed steps have no controller. */
    const double log_err = s->opt.fixed_step ? 0.0 : log(err > 1e-16 ? err : 1e-16);
    if (err <= 1.0) {
      if (s->dense_off) {
        s->dense_state = TF_DENSE_NONE;
      } else if (d853) {
        memcpy(s->cont[0], x, s->n * sizeof *x);
        s->dense_state = TF_DENSE_PENDING;
      } else {
        build_dense(s, x, h);
        s->dense_state = TF_DENSE_READY;
      }
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

void tf_dopri5_without_dense(tf_dopri5 *s) {
  s->dense_off = true;
}

/* The extension's stages lie inside a step already accepted: a domain refusal there is not
 * the next step's business (a fatal one is, and stays). */
static void build_dense_late(tf_dopri5 *s) {
  const int code = s->model_code;
  tf_dop853_build_dense_late(s);
  if (s->model_code > 0) s->model_code = code;
}

void tf_dopri5_dense(const tf_dopri5 *s, double t, double *out) {
  const double theta = s->h_prev > 0 ? (t - s->t_prev) / s->h_prev : 0.0, theta1 = 1.0 - theta;
  if (s->opt.method == TF_RK_DOP853) {
    if (s->dense_state != TF_DENSE_NONE && t == s->t_last) { /* the step's end: the solution */
      memcpy(out, s->x_new, s->n * sizeof *out);
      return;
    }
    /* built on first use; the stepper is logically const (the extension is a function of the
     * step taken) */
    if (s->dense_state == TF_DENSE_PENDING) build_dense_late((tf_dopri5 *)s);
    if (s->dense_state != TF_DENSE_READY) {
      for (size_t i = 0; i < s->n; i++) out[i] = NAN; /* no step to interpolate: loud, not wrong */
      return;
    }
    tf_dop853_dense(s, theta, out);
    return;
  }
  for (size_t i = 0; i < s->n; i++)
    out[i] = s->cont[0][i] +
             theta * (s->cont[1][i] +
                      theta1 * (s->cont[2][i] + theta * (s->cont[3][i] + theta1 * s->cont[4][i])));
}

void tf_dopri5_sample(const tf_dopri5 *s, double t, double *out) {
  if (s->opt.method != TF_RK_DOP853 || s->dense_state == TF_DENSE_READY) {
    tf_dopri5_dense(s, t, out);
    return;
  }
  /* cubic Hermite through the step's ends and slopes: after the swap k[0] is f at the end and
   * k[12] f at the start */
  const double h = s->h_prev, th = h > 0 ? (t - s->t_prev) / h : 0.0, th1 = 1.0 - th;
  const double *x0 = s->cont[0], *x1 = s->x_new, *f0 = s->k[12], *f1 = s->k[0];
  for (size_t i = 0; i < s->n; i++)
    out[i] = th1 * x0[i] + th * x1[i] +
             th * th1 * ((th - th1) * (x1[i] - x0[i]) + h * (th1 * f0[i] - th * f1[i]));
}

bool tf_dopri5_sample_is_exact(const tf_dopri5 *s) {
  return s->opt.method != TF_RK_DOP853 || s->dense_state == TF_DENSE_READY;
}

double tf_dopri5_last_step_start(const tf_dopri5 *s) {
  return s->t_prev;
}

tf_ode_status tf_dopri5_integrate(tf_dopri5 *s, double *t, double *x, double t_end) {
  tf_dopri5_reset(s, *t, x);
  long taken = 0;
  while (*t < t_end) {
    if (s->opt.max_steps > 0 && taken++ >= s->opt.max_steps) return TF_ODE_MAX_STEPS;
    tf_ode_status st = tf_dopri5_step(s, t, x, t_end);
    if (st != TF_ODE_OK) return st;
  }
  return TF_ODE_OK;
}

tf_ode_stats tf_dopri5_stats(const tf_dopri5 *s) {
  return s->stats;
}

int tf_dopri5_model_code(const tf_dopri5 *s) {
  return s->model_code;
}

const char *tf_rk_name(tf_rk_method m) {
  return m == TF_RK_DOP853 ? "dop853" : "dopri5";
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

int tf_dopri5_step_to(tf_dopri5 *s, double t_start, const double *start, size_t n, double te,
                      double *x) {
  memcpy(x, start, n * sizeof *x);
  tf_dopri5_restart(s, t_start, x);
  double t = t_start;
  for (int i = 0; t < te && i < 1000; i++)
    if (tf_dopri5_step(s, &t, x, te) != TF_ODE_OK) return -1;
  return t < te ? -1 : 0;
}

bool tf_state_finite(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return false;
  return true;
}
