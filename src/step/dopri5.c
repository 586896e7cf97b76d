/* dopri5.c — Dormand–Prince 5(4) (DOPRI5) following Hairer, Nørsett & Wanner, "Solving ODEs
 * I", with their PI controller constants and 4th-order dense output.  The first-same-as-last
 * stage is reused across steps, so an accepted step costs 6 evaluations.  The stages are
 * unrolled over the tableau's rows (the generic loop of rk_tableau.c would sum in another
 * order, and DOPRI5's results are pinned bit for bit). */
#include <string.h>

#include "dopri5_coeffs.h"
#include "rk_driver.h"

static const tf_rk_tableau tableau = {
    .stages = STAGES, .a = A, .b = A + 6 * STAGES, .c = C, .e = E};

/* Inlined at each call, where nk, the coefficients and (for a small system) n are constants:
 * the loops unroll and the coefficients become immediates (a Runge-Kutta step of a small system
 * is mostly these sums). */
static inline __attribute__((always_inline)) void axpy_stages(tf_stepper *s, const double *x,
                                                              double h, int row, size_t n) {
  const double *a = A + row * STAGES;
  for (size_t i = 0; i < n; i++) {
    double acc = 0.0;
    for (int j = 0; j < row; j++) acc += a[j] * s->k[j][i];
    s->stage[i] = x[i] + h * acc;
  }
}

/* Six new stages; k[6] is f at the 5th-order solution (reused as k[0] of the next step). */
static inline __attribute__((always_inline)) void attempt_n(tf_stepper *s, double t,
                                                            const double *x, double h, size_t n) {
  axpy_stages(s, x, h, 1, n);
  tf_rk_eval(s, t + C[1] * h, s->stage, s->k[1]);
  axpy_stages(s, x, h, 2, n);
  tf_rk_eval(s, t + C[2] * h, s->stage, s->k[2]);
  axpy_stages(s, x, h, 3, n);
  tf_rk_eval(s, t + C[3] * h, s->stage, s->k[3]);
  axpy_stages(s, x, h, 4, n);
  tf_rk_eval(s, t + C[4] * h, s->stage, s->k[4]);
  axpy_stages(s, x, h, 5, n);
  tf_rk_eval(s, t + h, s->stage, s->k[5]);
  axpy_stages(s, x, h, 6, n);
  memcpy(s->x_new, s->stage, n * sizeof *s->x_new);
  tf_rk_eval(s, t + h, s->x_new, s->k[6]);
}

static inline __attribute__((always_inline)) double error_norm_n(const tf_stepper *s,
                                                                 const double *x, double h,
                                                                 size_t n) {
  double *v = s->stage; /* free between attempts */
  for (size_t i = 0; i < n; i++)
    v[i] = h * (E[0] * s->k[0][i] + E[2] * s->k[2][i] + E[3] * s->k[3][i] + E[4] * s->k[4][i] +
                E[5] * s->k[5][i] + E[6] * s->k[6][i]);
  return tf_rk_weighted_rms_n(s, v, x, s->x_new, n);
}

static inline __attribute__((always_inline)) void build_dense_n(tf_stepper *s, const double *x,
                                                                double h, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const double dx = s->x_new[i] - x[i];
    const double bspl = h * s->k[0][i] - dx;
    s->cont[0][i] = x[i];
    s->cont[1][i] = dx;
    s->cont[2][i] = bspl;
    s->cont[3][i] = dx - h * s->k[6][i] - bspl;
    s->cont[4][i] = h * (D[0] * s->k[0][i] + D[2] * s->k[2][i] + D[3] * s->k[3][i] +
                         D[4] * s->k[4][i] + D[5] * s->k[5][i] + D[6] * s->k[6][i]);
  }
}

/* The driver instantiated for n components: N a constant for the small systems most models
 * are (the loops then unroll, with no loop control or alias checks between a step's sums),
 * s->n otherwise.  The arithmetic is the same either way, component by component. */
#define DOPRI5_STEP_FOR(name, N)                                                             \
  static void name##_attempt(tf_stepper *s, double t, const double *x, double h) {           \
    attempt_n(s, t, x, h, N);                                                                \
  }                                                                                          \
  static double name##_error(const tf_stepper *s, const double *x, double h) {               \
    return error_norm_n(s, x, h, N);                                                         \
  }                                                                                          \
  static void name##_build(tf_stepper *s, const double *x, double h) {                       \
    build_dense_n(s, x, h, N);                                                               \
  }                                                                                          \
  static tf_ode_status name(tf_stepper *s, double *t, double *x, double t_limit) {           \
    return tf_rk_step_with(s, t, x, t_limit, N, name##_attempt, name##_error, name##_build); \
  }
DOPRI5_STEP_FOR(step_any, s->n)
DOPRI5_STEP_FOR(step_1, 1)
DOPRI5_STEP_FOR(step_2, 2)
DOPRI5_STEP_FOR(step_3, 3)
DOPRI5_STEP_FOR(step_4, 4)
DOPRI5_STEP_FOR(step_5, 5)
DOPRI5_STEP_FOR(step_6, 6)

static void dense_at(const tf_stepper *s, double theta, double *out) {
  const double theta1 = 1.0 - theta;
  for (size_t i = 0; i < s->n; i++)
    out[i] = s->cont[0][i] +
             theta * (s->cont[1][i] +
                      theta1 * (s->cont[2][i] + theta * (s->cont[3][i] + theta1 * s->cont[4][i])));
}

/* the step unrolled for the model's dimension, where there is one */
static tf_ode_status (*const step_of_dim[])(tf_stepper *, double *, double *, double) = {
    step_any, step_1, step_2, step_3, step_4, step_5, step_6};

static tf_ode_status step(tf_stepper *s, double *t, double *x, double t_limit) {
  const size_t n = sizeof step_of_dim / sizeof *step_of_dim;
  return (s->n < n ? step_of_dim[s->n] : step_any)(s, t, x, t_limit);
}

/* Every step builds the extension, so a sample is the dense output, exact. */
static void dense(const tf_stepper *s, double t, double *out) {
  dense_at(s, s->h_prev > 0 ? (t - s->t_prev) / s->h_prev : 0.0, out);
}

static bool always_exact(const tf_stepper *s) {
  (void)s;
  return true;
}

static const tf_stepper_ops ops = {
    .reset = tf_rk_reset,
    .restart = tf_rk_restart,
    .restart_step_to = tf_rk_restart_step_to,
    .step = step,
    .dense = dense,
    .sample = dense,
    .sample_is_exact = always_exact,
};

const tf_stepper_type tf_stepper_dopri5 = {
    .name = "dopri5",
    .order = 5,
    .error_order = 4,
    .evals_per_step = 6,
    .samples_per_step = 4,
    .fsal_stage = 6,
    .control = {.safety = 0.9,
                .expo1 = 0.2 - 0.75 * 0.04,
                .beta = 0.04,
                .fac_lo = 1.0 / 10.0,
                .fac_hi = 1.0 / 0.2,
                .start_order = 5.0},
    .tableau = &tableau,
    .dense_at = dense_at,
    .ops = &ops,
};
