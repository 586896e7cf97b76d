/* dop853.c — Dormand & Prince's explicit Runge–Kutta pair of order 8 with error estimators of
 * orders 5 and 3 and a 7th-order continuous extension, as in Hairer's DOP853 (Hairer, Nørsett &
 * Wanner, "Solving ODEs I", 2nd ed., sec. II.10).  At tolerances of 1e-9 and below it takes a
 * fraction of DOPRI5's steps for 12 evaluations each (+3 for the dense output), which is why
 * event-driven runs at tight tolerances use it.  The step control is ode.c's; this file is
 * the tableau (dop853_coeffs.h), its stages unrolled over the sparse rows (results are pinned
 * bit for bit). */
#include <math.h>

#include <stddef.h>

#include "dop853_coeffs.h"
#include "rk_driver.h"

/* Inlined with s a constant: the row's loop unrolls and its coefficients become immediates. */
static inline __attribute__((always_inline)) void stage(tf_stepper *st, const double *x, double h,
                                                        int s) {
  for (size_t i = 0; i < st->n; i++) {
    double acc = 0.0;
    for (int q = 0; q < DOP853_ROW[s].nk; q++)
      acc += DOP853_ROW[s].a[q] * st->k[DOP853_ROW[s].j[q]][i];
    st->stage[i] = x[i] + h * acc;
  }
}

/* attempt and error_measure are not inlined into the driver's step: their unrolled loops are
 * large, and inlined there they cost more than the call */
static __attribute__((noinline)) void attempt(tf_stepper *st, double t, const double *x, double h) {
#pragma GCC unroll 12
  for (int s = 1; s < 12; s++) {
    stage(st, x, h, s);
    tf_rk_eval(st, t + DOP853_C[s] * h, st->stage, st->k[s]);
  }
  stage(st, x, h, 12); /* row 12 holds the weights of the 8th-order solution */
  for (size_t i = 0; i < st->n; i++) st->x_new[i] = st->stage[i];
  tf_rk_eval(st, t + h, st->x_new, st->k[12]);
}

static __attribute__((noinline)) double error_measure(const tf_stepper *st, const double *x,
                                                      double h) {
  double sum5 = 0.0, sum3 = 0.0;
  for (size_t i = 0; i < st->n; i++) {
    const double a0 = fabs(x[i]), a1 = fabs(st->x_new[i]);
    const double scale = st->opt.atol + st->opt.rtol * (a0 > a1 ? a0 : a1);
    double err5 = 0.0, err3 = 0.0;
    for (int q = 0; q < 8; q++) {
      err5 += DOP853_E5[q] * st->k[DOP853_ERR_K[q]][i];
      err3 += DOP853_E3[q] * st->k[DOP853_ERR_K[q]][i];
    }
    sum5 += (err5 / scale) * (err5 / scale);
    sum3 += (err3 / scale) * (err3 / scale);
  }
  /* Hairer's combination: the 5th-order estimate, damped where the 3rd-order one is large */
  double denom = sum5 + 0.01 * sum3;
  if (!(denom > 0.0)) denom = 1.0;
  return fabs(h) * sum5 / sqrt(denom * (double)st->n);
}

static void build_dense(tf_stepper *st, double t, const double *x, double h) {
#pragma GCC unroll 3
  for (int s = 13; s < 16; s++) {
    stage(st, x, h, s);
    tf_rk_eval(st, t + DOP853_C[s] * h, st->stage, st->k[s]);
  }
  for (size_t i = 0; i < st->n; i++) {
    const double dx = st->x_new[i] - x[i];
    st->cont[0][i] = x[i];
    st->cont[1][i] = dx;
    st->cont[2][i] = h * st->k[0][i] - dx;
    st->cont[3][i] = 2.0 * dx - h * (st->k[12][i] + st->k[0][i]);
    for (int r = 0; r < 4; r++) {
      double acc = 0.0;
      for (int q = 0; q < 12; q++) acc += DOP853_DCOEF[r][q] * st->k[DOP853_DENSE_K[q]][i];
      st->cont[4 + r][i] = h * acc;
    }
  }
}

static void build_dense_late(tf_stepper *st) {
  double *f1 = st->k[0];
  st->k[0] = st->k[12], st->k[12] = f1;
  build_dense(st, st->t_prev, st->cont[0], st->h_prev);
  st->k[12] = st->k[0], st->k[0] = f1;
  st->dense_state = TF_DENSE_READY;
}

static void dense_at(const tf_stepper *st, double theta, double *out) {
  const double t1 = 1.0 - theta;
  for (size_t i = 0; i < st->n; i++) {
    double y = st->cont[7][i];
    y = st->cont[6][i] + theta * y;
    y = st->cont[5][i] + t1 * y;
    y = st->cont[4][i] + theta * y;
    y = st->cont[3][i] + t1 * y;
    y = st->cont[2][i] + theta * y;
    y = st->cont[1][i] + t1 * y;
    out[i] = st->cont[0][i] + theta * y;
  }
}

/* The extension is lazy (build NULL): tf_rk_dense builds it on first use. */
static tf_ode_status step(tf_stepper *s, double *t, double *x, double t_limit) {
  return tf_rk_step_with(s, t, x, t_limit, s->n, attempt, error_measure, NULL);
}

static bool sample_is_exact(const tf_stepper *s) {
  return s->dense_state == TF_DENSE_READY;
}

/* The cubic Hermite interpolant until the extension is built (its 3 evaluations are spent only
 * where an event needs it). */
static void sample(const tf_stepper *s, double t, double *out) {
  if (s->dense_state == TF_DENSE_READY)
    tf_rk_dense(s, t, out);
  else
    tf_rk_hermite(s, t, 12, out);
}

static const tf_stepper_ops ops = {
    .reset = tf_rk_reset,
    .restart = tf_rk_restart,
    .restart_step_to = tf_rk_restart_step_to,
    .step = step,
    .dense = tf_rk_dense,
    .sample = sample,
    .sample_is_exact = sample_is_exact,
};

const tf_stepper_type tf_stepper_dop853 = {
    .name = "dop853",
    .order = 8,
    .error_order = 5,
    .evals_per_step = 12,
    .dense_evals = 3,
    /* its cheap samples are the cubic Hermite interpolant, which can step over a pair of sign
     * changes the 7th-order extension would show */
    .samples_per_step = 8,
    .fsal_stage = 12,
    .smooth_only = true,
    .control = {.safety = 0.9,
                .expo1 = 1.0 / 8.0,
                .beta = 0.0,
                .fac_lo = 1.0 / 6.0,
                .fac_hi = 1.0 / 0.333,
                .start_order = 8.0},
    .lazy_dense = true,
    .build_dense_late = build_dense_late,
    .dense_at = dense_at,
    .ops = &ops,
};
