/* ode_stepper.h — the explicit Runge–Kutta stepper's state, shared by its driver (ode.c: step
 * control, DOPRI5) and the second tableau it can run (dop853.c), so that a pair is a few
 * functions on the same vectors rather than a second stepper type for every engine to know. */
#ifndef TF_ODE_STEPPER_H
#define TF_ODE_STEPPER_H

#include <stdbool.h>

#include "ode.h"

/* DOP853 needs 12 stages, the first-same-as-last one and 3 more for its dense output; its
 * continuous extension has 7 coefficient vectors plus the start */
enum { TF_RK_MAX_STAGES = 16, TF_RK_MAX_CONT = 8 };

struct tf_dopri5 {
  size_t n;
  tf_rhs_fn f;
  void *ctx;
  tf_ode_options opt;
  double *block; /* one allocation behind all vectors (k[] pointers get swapped) */
  double *k[TF_RK_MAX_STAGES], *stage, *x_new, *cont[TF_RK_MAX_CONT];
  double h, t_prev, h_prev, t_last; /* t_last: where the last accepted step ended */
  /* DOP853 builds its continuous extension (3 evaluations) only when it is first asked for:
   * most steps of an event-driven run never interpolate (ode.c, tf_dopri5_sample) */
  enum { TF_DENSE_NONE, TF_DENSE_PENDING, TF_DENSE_READY } dense_state;
  double log_err_prev; /* the PI controller's memory, log max(err, 1e-4) of the last step */
  bool fsal_valid;
  bool dense_off; /* the caller never interpolates: no continuous extension is built */
  tf_ode_stats stats;
  /* the first refusal of the right-hand side since the step began (a fatal one wins) */
  int model_code;
};

static inline void tf_rk_eval(tf_dopri5 *s, double t, const double *x, double *dx) {
  const int rc = s->f(t, x, s->ctx, dx);
  s->stats.rhs_evals++;
  if (rc && (s->model_code == 0 || (rc < 0 && s->model_code > 0))) s->model_code = rc;
}

/* Dormand & Prince's 8(5,3) pair as in Hairer's DOP853: stages 1..12 into k[1..12] (k[12] is
 * f at the new solution x_new, the next step's k[0]); the error measure of the 5th- and
 * 3rd-order estimates; the 7th-order continuous extension (3 more evaluations) into cont[];
 * its value at theta in [0, 1] of the last step. */
void tf_dop853_attempt(tf_dopri5 *s, double t, const double *x, double h);
double tf_dop853_error(const tf_dopri5 *s, const double *x, double h);
void tf_dop853_build_dense(tf_dopri5 *s, double t, const double *x, double h);
/* The same after the step was accepted: k[0] and k[12] already swapped, the start in cont[0]. */
void tf_dop853_build_dense_late(tf_dopri5 *s);
void tf_dop853_dense(const tf_dopri5 *s, double theta, double *out);

#endif
