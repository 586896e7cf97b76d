/* rk_driver.h — the explicit Runge–Kutta driver's step, for the files that give a type its
 * operations (ode.c for pairs given as data, dopri5.c and dop853.c for their unrolled fast
 * paths).  One source, instantiated with the type's stage, error and extension functions as
 * constants, so a fast path inlines them as its hand-written step did; the rest of the driver
 * (reset, restart, dense output, samples) is shared code in ode.c. */
#ifndef TF_RK_DRIVER_H
#define TF_RK_DRIVER_H

#include <math.h>
#include <string.h>

#include "stepper_type.h"
#include "vmath.h"

/* log(1e-4): the PI controller's memory starts at, and never falls below, an error of 1e-4 */
#define TF_RK_LOG_1E4 (-9.210340371976182)

/* The controller's exp and log: libm's, or with integrator.controller_math: fast vmath.h's,
 * whose bits the lanes get from the same functions over all their lanes. */
static inline double tf_rk_control_exp(bool fast, double x) {
  return fast ? tf_vmath_exp1(x) : exp(x);
}
static inline double tf_rk_control_log(bool fast, double x) {
  return fast ? tf_vmath_log1(x) : log(x);
}

typedef void (*tf_rk_attempt_fn)(tf_stepper *s, double t, const double *x, double h);
typedef double (*tf_rk_error_fn)(const tf_stepper *s, const double *x, double h);
typedef void (*tf_rk_build_fn)(tf_stepper *s, const double *x, double h);

/* The explicit driver's operations (ode.c); a fast path's ops table reuses them. */
void tf_rk_reset(tf_stepper *s, double t0, const double *x0);
void tf_rk_restart(tf_stepper *s, double t0, const double *x0);
void tf_rk_restart_step_to(tf_stepper *s, double t0, const double *x0, bool again);
void tf_rk_dense(const tf_stepper *s, double t, double *out);
void tf_rk_sample(const tf_stepper *s, double t, double *out);
bool tf_rk_sample_is_exact(const tf_stepper *s);

static inline bool tf_rk_all_finite(const double *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) return false;
  return true;
}

/* The continuous extension of a step about to be accepted: built now, or (build NULL: a lazy
 * type) left to be built from the kept start on first use. */
static inline __attribute__((always_inline)) void tf_rk_keep_dense(tf_stepper *s, const double *x,
                                                                   double h, tf_rk_build_fn build) {
  if (s->dense_off) {
    s->dense_state = TF_DENSE_NONE;
  } else if (!build) {
    memcpy(s->cont[0], x, s->n * sizeof *x);
    s->dense_state = TF_DENSE_PENDING;
  } else {
    build(s, x, h);
    s->dense_state = TF_DENSE_READY;
  }
}

/* The cubic Hermite interpolant through the last step's ends and slopes, the cheap sample of a
 * type whose extension is not built yet: after the first-same-as-last swap k[0] is f at the
 * end and k[fsal] f at the start. */
/* One component of it at th (th1 = 1 - th) in a step of h from x0 (slope f0) to x1 (f1). */
static inline double tf_rk_hermite_value(double th, double th1, double h, double x0, double x1,
                                         double f0, double f1) {
  return th1 * x0 + th * x1 + th * th1 * ((th - th1) * (x1 - x0) + h * (th1 * f0 - th * f1));
}
static inline __attribute__((always_inline)) void tf_rk_hermite(const tf_stepper *s, double t,
                                                                int fsal, double *out) {
  const double h = s->h_prev, th = h > 0 ? (t - s->t_prev) / h : 0.0, th1 = 1.0 - th;
  const double *x0 = s->cont[0], *x1 = s->x_new, *f0 = s->k[fsal], *f1 = s->k[0];
  for (size_t i = 0; i < s->n; i++)
    out[i] = tf_rk_hermite_value(th, th1, h, x0[i], x1[i], f0[i], f1[i]);
}

/* The smallest step before a step fails as an underflow at t (only where a step shrinks). */
static inline double tf_rk_hmin_floor(const tf_stepper *s, double t) {
  return s->opt.hmin > 0 ? s->opt.hmin : 1e-14 * fmax(1.0, fabs(t));
}

/* One accepted step: Hairer's PI controller, rejections, a hard shrink after an overflow, the
 * first-same-as-last swap, and the extension kept.  n is s->n, or that value as a constant
 * where a fast path is instantiated for a fixed dimension. */
static inline __attribute__((always_inline)) tf_ode_status tf_rk_step_with(
    tf_stepper *s, double *t, double *x, double t_limit, size_t n, tf_rk_attempt_fn attempt,
    tf_rk_error_fn error, tf_rk_build_fn build) {
  if (!s->fsal_valid) tf_rk_reset(s, *t, x);
  const tf_stepper_type *ty = s->type;
  const int fsal = ty->fsal_stage;
  const double safety = ty->control.safety, expo1 = ty->control.expo1, beta = ty->control.beta;
  const double fac_lo = ty->control.fac_lo, fac_hi = ty->control.fac_hi;
  const bool fast = s->opt.fast_control;
  if (s->model_code) return TF_ODE_MODEL_FAILED; /* refused at the accepted state itself */
  for (;;) {
    double h = s->h;
    if (s->opt.hmax > 0) h = fmin(h, s->opt.hmax);
    const bool last = *t + h >= t_limit;
    if (last) h = t_limit - *t;
    attempt(s, *t, x, h);
    const double err = s->opt.fixed_step ? 0.0 : error(s, x, h);
    if (s->model_code < 0) return TF_ODE_MODEL_FAILED;
    const bool refused = s->model_code > 0;
    s->model_code = 0;
    if (refused || !isfinite(err) || !tf_rk_all_finite(s->x_new, n)) {
      /* !(h > floor) also catches a NaN step, which would otherwise shrink for ever */
      if (s->opt.fixed_step || !(h > tf_rk_hmin_floor(s, *t)))
        return refused ? TF_ODE_STEP_UNDERFLOW : TF_ODE_NONFINITE;
      s->h = 0.25 * h; /* an overflow or a refusal in a trial stage; shrink hard and retry */
      s->stats.rejected++;
      continue;
    }
    /* Hairer's controller in logarithms: one log and one exp per step instead of two powers
     * (a tenth of a small system's step).  Fixed steps have no controller. */
    const double log_err =
        s->opt.fixed_step ? 0.0 : tf_rk_control_log(fast, err > 1e-16 ? err : 1e-16);
    if (err <= 1.0) {
      tf_rk_keep_dense(s, x, h, build);
      s->t_prev = *t;
      s->h_prev = h;
      *t = last ? t_limit : *t + h;
      s->t_last = *t;
      memcpy(x, s->x_new, n * sizeof *x);
      double *swap = s->k[0];
      s->k[0] = s->k[fsal];
      s->k[fsal] = swap;
      s->stats.steps++;
      if (!s->opt.fixed_step) {
        double fac = tf_rk_control_exp(fast, expo1 * log_err - beta * s->log_err_prev) / safety;
        fac = fmax(fac_lo, fmin(fac_hi, fac));
        s->log_err_prev = fmax(log_err, TF_RK_LOG_1E4);
        /* Keep the proposed step of the last, truncated step if it was cut short. */
        if (!last || h / fac > s->h) s->h = h / fac;
      }
      return TF_ODE_OK;
    }
    s->stats.rejected++;
    s->h = h / fmin(fac_hi, tf_rk_control_exp(fast, expo1 * log_err) / safety);
    if (!(s->h >= tf_rk_hmin_floor(s, *t)))
      return isnan(s->h) ? TF_ODE_NONFINITE : TF_ODE_STEP_UNDERFLOW;
  }
}

#endif
