/* dopri5.c — Dormand–Prince 5(4) (DOPRI5) following Hairer, Nørsett & Wanner, "Solving ODEs
 * I", with their PI controller constants and 4th-order dense output.  The first-same-as-last
 * stage is reused across steps, so an accepted step costs 6 evaluations.  The stages are
 * unrolled over the tableau's rows (the generic loop of rk_tableau.c would sum in another
 * order, and DOPRI5's results are pinned bit for bit). */
#include <string.h>

#include "rk_driver.h"

enum { STAGES = 7 };

/* a (row-major, strictly lower, one row a line); row 6 is b (first same as last) */
// clang-format off
static const double A[STAGES * STAGES] = {
    [1 * STAGES] = 1.0 / 5,
    [2 * STAGES] = 3.0 / 40, 9.0 / 40,
    [3 * STAGES] = 44.0 / 45, -56.0 / 15, 32.0 / 9,
    [4 * STAGES] = 19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729,
    [5 * STAGES] = 9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656,
    [6 * STAGES] = 35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84,
};
// clang-format on
static const double C[STAGES] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};
static const double E[STAGES] = {71.0 / 57600,      0.0,        -71.0 / 16695, 71.0 / 1920,
                                 -17253.0 / 339200, 22.0 / 525, -1.0 / 40};
/* Hairer's dense-output coefficients (the 4th-order extension's last term) */
static const double D[STAGES] = {-12715105075.0 / 11282082432,  0.0,
                                 87487479700.0 / 32700410799,   -10690763975.0 / 1880347072,
                                 701980252875.0 / 199316789632, -1453857185.0 / 822651844,
                                 69997945.0 / 29380423};

static const tf_rk_tableau tableau = {
    .stages = STAGES, .a = A, .b = A + 6 * STAGES, .c = C, .e = E};

/* Inlined at each call, where nk and the coefficients are constants: the loop over the stages
 * unrolls and the coefficients become immediates (a Runge-Kutta step of a small system is
 * mostly these sums). */
static inline __attribute__((always_inline)) void axpy_stages(tf_stepper *s, const double *x,
                                                              double h, int row) {
  const double *a = A + row * STAGES;
  for (size_t i = 0; i < s->n; i++) {
    double acc = 0.0;
    for (int j = 0; j < row; j++) acc += a[j] * s->k[j][i];
    s->stage[i] = x[i] + h * acc;
  }
}

/* Six new stages; k[6] is f at the 5th-order solution (reused as k[0] of the next step). */
static void attempt(tf_stepper *s, double t, const double *x, double h) {
  axpy_stages(s, x, h, 1);
  tf_rk_eval(s, t + C[1] * h, s->stage, s->k[1]);
  axpy_stages(s, x, h, 2);
  tf_rk_eval(s, t + C[2] * h, s->stage, s->k[2]);
  axpy_stages(s, x, h, 3);
  tf_rk_eval(s, t + C[3] * h, s->stage, s->k[3]);
  axpy_stages(s, x, h, 4);
  tf_rk_eval(s, t + C[4] * h, s->stage, s->k[4]);
  axpy_stages(s, x, h, 5);
  tf_rk_eval(s, t + h, s->stage, s->k[5]);
  axpy_stages(s, x, h, 6);
  memcpy(s->x_new, s->stage, s->n * sizeof *s->x_new);
  tf_rk_eval(s, t + h, s->x_new, s->k[6]);
}

static double error_norm(const tf_stepper *s, const double *x, double h) {
  double *v = s->stage; /* free between attempts */
  for (size_t i = 0; i < s->n; i++)
    v[i] = h * (E[0] * s->k[0][i] + E[2] * s->k[2][i] + E[3] * s->k[3][i] + E[4] * s->k[4][i] +
                E[5] * s->k[5][i] + E[6] * s->k[6][i]);
  return tf_rk_weighted_rms(s, v, x, s->x_new);
}

static void build_dense(tf_stepper *s, const double *x, double h) {
  for (size_t i = 0; i < s->n; i++) {
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

static void dense_at(const tf_stepper *s, double theta, double *out) {
  const double theta1 = 1.0 - theta;
  for (size_t i = 0; i < s->n; i++)
    out[i] = s->cont[0][i] +
             theta * (s->cont[1][i] +
                      theta1 * (s->cont[2][i] + theta * (s->cont[3][i] + theta1 * s->cont[4][i])));
}

static tf_ode_status step(tf_stepper *s, double *t, double *x, double t_limit) {
  return tf_rk_step_with(s, t, x, t_limit, attempt, error_norm, build_dense);
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
