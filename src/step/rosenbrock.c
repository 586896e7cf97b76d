/* rosenbrock.c — Rosenbrock methods for small stiff systems (n <= TF_ROS_MAX_DIM): one LU
 * factorisation of I / (h gamma) - J per step and a linear solve per stage, no Newton
 * iteration (Hairer & Wanner II, sec. IV.7).
 *
 * RODAS4 (Hairer & Wanner's rodas.f, METH = 1): 6 stages, order 4, an embedded order-3
 * solution, stiffly accurate and L-stable, with a continuous extension of order 3.  ROS3P (Lang
 * & Verwer, BIT 41, 2001): 3 stages and 2 evaluations, order 3, an embedded order-2 solution,
 * A-stable but not L-stable (|R(inf)| = 0.73), free of order reduction on parabolic problems;
 * its dense output is the cubic Hermite interpolant.
 *
 * Both run on the explicit driver's step (rk_driver.h: controller, rejections, overflow
 * shrinking, the extension kept) with their own attempt, error and extension.  Slots of the
 * stepper's vectors: k[0] f at the step's start (first same as last: the attempt evaluates f
 * at its new solution into k[FSAL], the next step's k[0], which the cubic Hermite sample uses
 * too), k[1..stages] the stages u_i, k[ERR] the error estimate, stage the stage's point and
 * right-hand side.  J, its factors and df/dt live in s->lin, taken once per step (a rejected
 * attempt starts from the same point), J from the caller's exact Jacobian
 * (tf_stepper_set_jacobian) or by forward differences, df/dt = 0 for a field its caller calls
 * autonomous (tf_stepper_set_autonomous), else by a difference (one evaluation a step shows an
 * autonomous field, two give df/dt). */
#include "rosenbrock.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "rk_driver.h"

enum { FSAL = TF_ROS_MAX_STAGES + 1, ERR = TF_ROS_MAX_STAGES + 2 };

/* --- RODAS4: rodas.f's coefficients (METH = 1), the 6th row is the 5th plus u_5 ------------ */
// clang-format off
static const double RODAS4_A[6 * 6] = {
    0, 0, 0, 0, 0, 0,
    0.1544000000000000e+01, 0, 0, 0, 0, 0,
    0.9466785280815826e+00, 0.2557011698983284e+00, 0, 0, 0, 0,
    0.3314825187068521e+01, 0.2896124015972201e+01, 0.9986419139977817e+00, 0, 0, 0,
    0.1221224509226641e+01, 0.6019134481288629e+01, 0.1253708332932087e+02,
        -0.6878860361058950e+00, 0, 0,
    0.1221224509226641e+01, 0.6019134481288629e+01, 0.1253708332932087e+02,
        -0.6878860361058950e+00, 1, 0,
};
static const double RODAS4_C[6 * 6] = {
    0, 0, 0, 0, 0, 0,
    -0.5668800000000000e+01, 0, 0, 0, 0, 0,
    -0.2430093356833875e+01, -0.2063599157091915e+00, 0, 0, 0, 0,
    -0.1073529058151375e+00, -0.9594562251023355e+01, -0.2047028614809616e+02, 0, 0, 0,
    0.7496443313967647e+01, -0.1024680431464352e+02, -0.3399990352819905e+02,
        0.1170890893206160e+02, 0, 0,
    0.8083246795921522e+01, -0.7981132988064893e+01, -0.3152159432874371e+02,
        0.1631930543123136e+02, -0.6058818238834054e+01, 0,
};
static const double RODAS4_ALPHA[6] = {0, 0.386, 0.21, 0.63, 1, 1};
static const double RODAS4_GAM[6] = {0.25, -0.1043, 0.1035, -0.3620000000000023e-01, 0, 0};
static const double RODAS4_M[6] = {0.1221224509226641e+01, 0.6019134481288629e+01,
                                   0.1253708332932087e+02, -0.6878860361058950e+00, 1, 1};
static const double RODAS4_E[6] = {0, 0, 0, 0, 0, 1};
static const bool RODAS4_SAME[6] = {false};
static const double RODAS4_DENSE[2 * 6] = {
    0.1012623508344586e+02, -0.7487995877610167e+01, -0.3480091861555747e+02,
        -0.7992771707568823e+01, 0.1025137723295662e+01, 0,
    -0.6762803392801253e+00, 0.6087714651680015e+01, 0.1643084320892478e+02,
        0.2476722511418386e+02, -0.6594389125716872e+01, 0,
};

/* --- ROS3P: Lang & Verwer's Table 1 (gamma = 1/2 + sqrt(3)/6); stage 3 is at stage 2's point */
static const double ROS3P_A[3 * 3] = {
    0, 0, 0,
    1.267949192431123, 0, 0,
    1.267949192431123, 0, 0,
};
static const double ROS3P_C[3 * 3] = {
    0, 0, 0,
    -1.607695154586736, 0, 0,
    -3.464101615137755, -1.732050807568877, 0,
};
static const double ROS3P_ALPHA[3] = {0, 1, 1};
static const double ROS3P_GAM[3] = {0.7886751345948129, -0.2113248654051871, -1.077350269189626};
static const double ROS3P_M[3] = {2, 0.5773502691896258, 0.4226497308103742};
/* m minus the embedded weights (2.113248654051871, 1, 0.4226497308103742) */
static const double ROS3P_E[3] = {2 - 2.113248654051871, 0.5773502691896258 - 1, 0};
static const bool ROS3P_SAME[3] = {false, false, true};
// clang-format on

static const tf_ros_tableau rodas4 = {.stages = 6,
                                      .gamma = 0.25,
                                      .a = RODAS4_A,
                                      .c = RODAS4_C,
                                      .alpha = RODAS4_ALPHA,
                                      .gam = RODAS4_GAM,
                                      .m = RODAS4_M,
                                      .e = RODAS4_E,
                                      .same_field = RODAS4_SAME,
                                      .dense = RODAS4_DENSE,
                                      .order = 4,
                                      .embedded_order = 3};

static const tf_ros_tableau ros3p = {.stages = 3,
                                     .gamma = 0.7886751345948129,
                                     .a = ROS3P_A,
                                     .c = ROS3P_C,
                                     .alpha = ROS3P_ALPHA,
                                     .gam = ROS3P_GAM,
                                     .m = ROS3P_M,
                                     .e = ROS3P_E,
                                     .same_field = ROS3P_SAME,
                                     .dense = NULL,
                                     .order = 3,
                                     .embedded_order = 2};

/* --- the small dense LU -------------------------------------------------------------------- */

/* The factor and solve for n rows, inlined with n a constant for the smallest systems (the
 * compiler unrolls them) and with the actual n above; the diagonal keeps 1 / u_kk, so the solve
 * multiplies where it would divide. */
static inline __attribute__((always_inline)) bool lu_factor_n(int n, double *m, int *piv) {
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(m[i * n + k]) > fabs(m[p * n + k])) p = i;
    piv[k] = p;
    if (!(fabs(m[p * n + k]) > 0) || !isfinite(m[p * n + k])) return false;
    if (p != k)
      for (int j = 0; j < n; j++) {
        const double w = m[k * n + j];
        m[k * n + j] = m[p * n + j], m[p * n + j] = w;
      }
    const double inv = 1.0 / m[k * n + k];
    m[k * n + k] = inv;
    for (int i = k + 1; i < n; i++) {
      const double l = m[i * n + k] * inv;
      m[i * n + k] = l;
      for (int j = k + 1; j < n; j++) m[i * n + j] -= l * m[k * n + j];
    }
  }
  return true;
}

static inline __attribute__((always_inline)) void lu_solve_n(int n, const double *lu,
                                                             const int *piv, double *b) {
  for (int k = 0; k < n; k++) { /* the rows were swapped whole: all swaps first */
    const double w = b[piv[k]];
    b[piv[k]] = b[k], b[k] = w;
  }
  for (int i = 1; i < n; i++) {
    double acc = b[i];
    for (int j = 0; j < i; j++) acc -= lu[i * n + j] * b[j];
    b[i] = acc;
  }
  for (int i = n - 1; i >= 0; i--) {
    double acc = b[i];
    for (int j = i + 1; j < n; j++) acc -= lu[i * n + j] * b[j];
    b[i] = acc * lu[i * n + i];
  }
}

bool tf_ros_lu_factor(int n, double *m, int *piv) {
  switch (n) {
    case 2:
      return lu_factor_n(2, m, piv);
    case 3:
      return lu_factor_n(3, m, piv);
    case 4:
      return lu_factor_n(4, m, piv);
    default:
      return lu_factor_n(n, m, piv);
  }
}

void tf_ros_lu_solve(int n, const double *lu, const int *piv, double *b) {
  switch (n) {
    case 2:
      lu_solve_n(2, lu, piv, b);
      break;
    case 3:
      lu_solve_n(3, lu, piv, b);
      break;
    case 4:
      lu_solve_n(4, lu, piv, b);
      break;
    default:
      lu_solve_n(n, lu, piv, b);
  }
}

/* --- the method ---------------------------------------------------------------------------- */

static double *jac_of(tf_stepper *s) {
  return s->lin;
}
static double *factors_of(tf_stepper *s) {
  return s->lin + s->n * s->n;
}
static double *dfdt_of(tf_stepper *s) {
  return s->lin + 2 * s->n * s->n;
}

/* df/dx by forward differences (Hairer's increments), from f(t, x) in k[0].  A perturbed point
 * may lie outside the field's domain (a sliding mode's field off its manifold): such a refusal
 * is not the step's (a fatal one is). */
static void jacobian_by_differences(tf_stepper *s, double t, const double *x) {
  const size_t n = s->n;
  const int code = s->model_code;
  double *xp = s->stage, *fp = s->k[ERR], *jac = jac_of(s);
  memcpy(xp, x, n * sizeof *x);
  for (size_t j = 0; j < n; j++) {
    const double d = sqrt(DBL_EPSILON * fmax(1e-5, fabs(x[j])));
    xp[j] = x[j] + d;
    tf_rk_eval(s, t, xp, fp);
    xp[j] = x[j];
    for (size_t i = 0; i < n; i++) jac[i * n + j] = (fp[i] - s->k[0][i]) / d;
  }
  if (s->model_code > 0) s->model_code = code;
}

/* df/dt at (t, x) by a central difference (its error, about eps^(2/3) |f|, does not swamp
 * a stiff field's stages as a forward difference's eps^(1/2) |f| does), from a first
 * evaluation that shows an autonomous field at once: bitwise f(t, x), so df/dt = 0. */
static void time_derivative(tf_stepper *s, double t, const double *x) {
  const size_t n = s->n;
  double *ft = dfdt_of(s), *fm = s->k[ERR];
  if (s->autonomous) { /* the caller knows: no evaluation to find out */
    memset(ft, 0, n * sizeof *ft);
    return;
  }
  const double d = cbrt(DBL_EPSILON) * fmax(1.0, fabs(t));
  tf_rk_eval(s, t + d, x, ft);
  if (memcmp(ft, s->k[0], n * sizeof *ft) == 0) {
    memset(ft, 0, n * sizeof *ft);
    return;
  }
  tf_rk_eval(s, t - d, x, fm);
  for (size_t i = 0; i < n; i++) ft[i] = (ft[i] - fm[i]) / (2 * d);
}

/* J and df/dt at the step's start (t, x), once a step. */
static void linearise(tf_stepper *s, double t, const double *x) {
  s->stats.jacobian_evals++;
  if (s->jac)
    s->jac(t, x, s->ctx, jac_of(s));
  else
    jacobian_by_differences(s, t, x);
  time_derivative(s, t, x);
  s->lin_current = true;
}

/* I / (h gamma) - J into the factors; false if singular (the attempt is refused). */
static inline __attribute__((always_inline)) bool factorise(tf_stepper *s, const size_t n, double h,
                                                            double gamma) {
  const double *jac = jac_of(s);
  double *m = factors_of(s);
  for (size_t i = 0; i < n * n; i++) m[i] = -jac[i];
  for (size_t i = 0; i < n; i++) m[i * n + i] += 1.0 / (h * gamma);
  return lu_factor_n((int)n, m, s->lin_piv);
}

/* One attempt for n = s->n, inlined with n a constant for the smallest systems (ROSENBROCK_OPS):
 * the stage sums, the factorisation and the solves unroll, and the copies become moves. */
static inline __attribute__((always_inline)) void attempt_with(tf_stepper *s, const size_t n,
                                                               double t, const double *x, double h,
                                                               const tf_ros_tableau *tb) {
  const int ns = tb->stages;
  if (!s->lin) {
    s->model_code = -1; /* n > TF_MAX_DIM: the configuration readers refuse it first */
    return;
  }
  if (!s->lin_current) linearise(s, t, x);
  if (!factorise(s, n, h, tb->gamma)) {
    if (!s->model_code) s->model_code = 1; /* retried with a smaller step */
    return;
  }
  const double *ft = dfdt_of(s), *lu = factors_of(s);
  double *y = s->stage, *f = s->x_new;
  for (int i = 0; i < ns; i++) {
    double *u = s->k[1 + i];
    const double *ai = tb->a + i * ns, *ci = tb->c + i * ns;
    if (i == 0) {
      memcpy(u, s->k[0], n * sizeof *u);
    } else if (tb->same_field[i]) {
      memcpy(u, f, n * sizeof *u);
    } else {
      for (size_t r = 0; r < n; r++) {
        double acc = x[r];
        for (int j = 0; j < i; j++) acc += ai[j] * s->k[1 + j][r];
        y[r] = acc;
      }
      tf_rk_eval(s, t + tb->alpha[i] * h, y, f);
      memcpy(u, f, n * sizeof *u);
    }
    for (size_t r = 0; r < n; r++) {
      double acc = u[r] + h * tb->gam[i] * ft[r];
      for (int j = 0; j < i; j++) acc += (ci[j] / h) * s->k[1 + j][r];
      u[r] = acc;
    }
    lu_solve_n((int)n, lu, s->lin_piv, u);
  }
  double *err = s->k[ERR];
  for (size_t r = 0; r < n; r++) {
    double xn = x[r], e = 0.0;
    for (int j = 0; j < ns; j++) xn += tb->m[j] * s->k[1 + j][r], e += tb->e[j] * s->k[1 + j][r];
    s->x_new[r] = xn, err[r] = e;
  }
  tf_rk_eval(s, t + h, s->x_new, s->k[FSAL]);
}

static double error_of(const tf_stepper *s, const double *x, double h) {
  (void)h;
  return tf_rk_weighted_rms(s, s->k[ERR], x, s->x_new);
}

/* RODAS4's extension (rodas.f): x0 + theta (x1 - x0 + (1 - theta) (d2 + theta d3)), with
 * d2, d3 combinations of the first five stages. */
static void build_with(tf_stepper *s, const double *x, const tf_ros_tableau *tb) {
  const size_t n = s->n;
  memcpy(s->cont[0], x, n * sizeof *x);
  if (!tb->dense) return; /* the Hermite interpolant needs only the ends and slopes */
  for (size_t r = 0; r < n; r++) {
    double d2 = 0.0, d3 = 0.0;
    for (int j = 0; j < tb->stages; j++)
      d2 += tb->dense[j] * s->k[1 + j][r], d3 += tb->dense[tb->stages + j] * s->k[1 + j][r];
    s->cont[1][r] = s->x_new[r] - x[r], s->cont[2][r] = d2, s->cont[3][r] = d3;
  }
}

static void rodas4_dense_at(const tf_stepper *s, double th, double *out) {
  for (size_t r = 0; r < s->n; r++)
    out[r] = tf_ros_dense_value(s->cont[0][r], s->cont[1][r], s->cont[2][r], s->cont[3][r], th);
}

/* After the step's swap k[FSAL] holds f at its start and k[0] f at its end. */
static void hermite_dense_at(const tf_stepper *s, double th, double *out) {
  tf_rk_hermite(s, s->t_prev + th * s->h_prev, FSAL, out);
}

/* Gustafsson's predictive controller, as rodas.f runs it (PRED): after an accepted step the
 * driver's proposal h / fac is cut to h / fac_gus, fac_gus = (h_acc / h) (err^2 /
 * err_acc)^expo1 / safety from the last two accepted steps (expo1 = 1/4 for RODAS4), and a
 * step that needed a rejection does not grow.  Without it the crossings of a stiff layer cost
 * RODAS4 rejected attempts numbering about a third of its steps (configs/wheel-smoothed.yaml
 * at eps 1e-6), each a Jacobian and a full set of stages.  The driver's memory log_err_prev
 * is log max(err, 1e-4) (rodas.f: max(err, 1e-2)). */
double tf_ros_predict(const tf_rk_controller *c, bool fast, double h_new, double h, double log_err,
                      double h_acc, double log_err_acc, bool rejected) {
  if (h_acc > 0) {
    double fac =
        (h_acc / h) * tf_rk_control_exp(fast, c->expo1 * (2 * log_err - log_err_acc)) / c->safety;
    fac = fmax(c->fac_lo, fmin(c->fac_hi, fac));
    h_new = fmin(h_new, h / fac);
  }
  return rejected ? fmin(h_new, h) : h_new;
}

static void predict(tf_stepper *s, double h_acc, double log_err_acc, bool rejected, bool last) {
  if (s->opt.fixed_step || last) return;
  s->h = tf_ros_predict(&s->type->control, s->opt.fast_control, s->h, s->h_prev, s->log_err_prev,
                        h_acc, log_err_acc, rejected);
}

/* A type's attempt for n components: attempt_<n> with n a constant for n = 2, 3 and 4 (the
 * smoothed wheel and most small stiff members), attempt_any for the rest. */
#define ROSENBROCK_ATTEMPT(name, dim, n_expr)                                            \
  static void name##_attempt_##dim(tf_stepper *s, double t, const double *x, double h) { \
    attempt_with(s, n_expr, t, x, h, &name);                                             \
  }
#define ROSENBROCK_STEP_N(name, dim, n_expr) \
  tf_rk_step_with(s, t, x, t_limit, n_expr, name##_attempt_##dim, error_of, name##_build)

#define ROSENBROCK_OPS(name)                                                                \
  ROSENBROCK_ATTEMPT(name, 2, 2)                                                            \
  ROSENBROCK_ATTEMPT(name, 3, 3)                                                            \
  ROSENBROCK_ATTEMPT(name, 4, 4)                                                            \
  ROSENBROCK_ATTEMPT(name, any, s->n)                                                       \
  static void name##_build(tf_stepper *s, const double *x, double h) {                      \
    (void)h;                                                                                \
    build_with(s, x, &name);                                                                \
  }                                                                                         \
  static tf_ode_status name##_step_n(tf_stepper *s, double *t, double *x, double t_limit) { \
    switch (s->n) {                                                                         \
      case 2:                                                                               \
        return ROSENBROCK_STEP_N(name, 2, 2);                                               \
      case 3:                                                                               \
        return ROSENBROCK_STEP_N(name, 3, 3);                                               \
      case 4:                                                                               \
        return ROSENBROCK_STEP_N(name, 4, 4);                                               \
      default:                                                                              \
        return ROSENBROCK_STEP_N(name, any, s->n);                                          \
    }                                                                                       \
  }                                                                                         \
  static tf_ode_status name##_step(tf_stepper *s, double *t, double *x, double t_limit) {   \
    s->lin_current = false; /* a new step: J and df/dt at its start */                      \
    const double h_acc = s->h_prev, log_err_acc = s->log_err_prev;                          \
    const long rejected = s->stats.rejected;                                                \
    const tf_ode_status st = name##_step_n(s, t, x, t_limit);                               \
    if (st == TF_ODE_OK)                                                                    \
      predict(s, h_acc, log_err_acc, s->stats.rejected > rejected, *t >= t_limit);          \
    return st;                                                                              \
  }                                                                                         \
  static const tf_stepper_ops name##_ops = {.reset = tf_rk_reset,                           \
                                            .restart = tf_rk_restart,                       \
                                            .restart_step_to = tf_rk_restart_step_to,       \
                                            .step = name##_step,                            \
                                            .dense = tf_rk_dense,                           \
                                            .sample = tf_rk_sample,                         \
                                            .sample_is_exact = tf_rk_sample_is_exact};

ROSENBROCK_OPS(rodas4)
ROSENBROCK_OPS(ros3p)

/* Controller: Hairer's rodas.f bounds (the step grows at most 6-fold and shrinks at most
 * 5-fold), exponent 1 / (q + 1) for an estimate of order q. */
const tf_stepper_type tf_stepper_rodas4 = {
    .name = "rodas4",
    .family = "rosenbrock",
    .order = 4,
    .error_order = 3,
    .evals_per_step = 6, /* five stages and f at the new solution, plus df/dt */
    .samples_per_step = 4,
    .fsal_stage = FSAL,
    .control = {.safety = 0.9,
                .expo1 = 1.0 / 4,
                .beta = 0.0,
                .fac_lo = 1.0 / 6,
                .fac_hi = 5.0,
                .start_order = 4.0},
    .dense_at = rodas4_dense_at,
    .ops = &rodas4_ops,
};

const tf_stepper_type tf_stepper_ros3p = {
    .name = "ros3p",
    .family = "rosenbrock",
    .order = 3,
    .error_order = 2,
    .evals_per_step = 2, /* stage 2 and f at the new solution, plus df/dt */
    .samples_per_step = 4,
    .fsal_stage = FSAL,
    .control = {.safety = 0.9,
                .expo1 = 1.0 / 3,
                .beta = 0.0,
                .fac_lo = 1.0 / 6,
                .fac_hi = 5.0,
                .start_order = 3.0},
    .dense_at = hermite_dense_at,
    .ops = &ros3p_ops,
};

const tf_ros_tableau *tf_rosenbrock_tableau(const tf_stepper_type *type) {
  return type == &tf_stepper_rodas4 ? &rodas4 : type == &tf_stepper_ros3p ? &ros3p : NULL;
}
