/* stepper_type.h — what a stepper type is, for the files that define one.
 *
 * A type (like GSL odeiv2's gsl_odeiv2_step_type or a PETSc TS type) is data: its name, orders,
 * costs, controller constants and, for an explicit Runge–Kutta pair, its Butcher tableau.  Its
 * operations (tf_stepper_ops) are the seam every engine drives: the explicit pairs share one
 * driver (ode.c and rk_driver.h: step-size control, accept/reject, first-same-as-last, dense
 * output, restart), and an implicit or Rosenbrock type supplies its own operations on the same
 * calls.
 *
 * A new explicit pair is one file holding a tf_rk_tableau and a tf_stepper_type with ops NULL
 * (the driver runs it with the generic tableau loop, rk_tableau.c) plus one line in
 * stepper_registry.c.  DOPRI5 and DOP853 are fast paths: ops tables whose step is the same
 * driver instantiated with their hand-unrolled stages (rk_driver.h), because their results are
 * pinned bit for bit and the generic loop sums in a different order. */
#ifndef TF_STEPPER_TYPE_H
#define TF_STEPPER_TYPE_H

#include <math.h>
#include <stdbool.h>

#include "max_dim.h"
#include "ode.h"

/* DOP853 needs 12 stages, the first-same-as-last one and 3 more for its dense output; its
 * continuous extension has 7 coefficient vectors plus the start */
enum { TF_RK_MAX_STAGES = 16, TF_RK_MAX_CONT = 8 };

/* The operations the engines call through ode.h; the explicit pairs' are tf_rk_driver_ops. */
typedef struct tf_stepper_ops {
  void (*reset)(tf_stepper *s, double t0, const double *x0);
  void (*restart)(tf_stepper *s, double t0, const double *x0);
  tf_ode_status (*step)(tf_stepper *s, double *t, double *x, double t_limit);
  void (*dense)(const tf_stepper *s, double t, double *out);
  void (*sample)(const tf_stepper *s, double t, double *out);
  bool (*sample_is_exact)(const tf_stepper *s);
  /* tf_stepper_step_to's restart at its start (x0); again: the start of the call before, whose
   * field a type may keep and reuse (the state there is the same).  NULL: restart. */
  void (*restart_step_to)(tf_stepper *s, double t0, const double *x0, bool again);
  /* tf_stepper_step_to; NULL: a restart at t_start and steps ending at te (ode.c) */
  int (*step_to)(tf_stepper *s, double t_start, const double *start, size_t n, double te, double *x,
                 bool again);
} tf_stepper_ops;

/* Hairer's controller: fac = err^expo1 / err_prev^beta / safety, clamped to [fac_lo, fac_hi],
 * h_new = h / fac (expo1 = 1/(q+1) - 0.75 beta for an error estimate of order q); a rejected
 * step shrinks by at most fac_hi.  start_order: of the starting-step estimate. */
typedef struct tf_rk_controller {
  double safety, expo1, beta, fac_lo, fac_hi, start_order;
} tf_rk_controller;

/* An explicit pair as data (stages < TF_RK_MAX_STAGES): a (stages x stages, row-major, strictly
 * lower), b and c; e the weights of the error estimate (b minus the embedded weights); dense
 * (stages x dense_degree, row-major) the continuous extension's weights b_j(theta) = sum_p
 * dense[j][p] theta^(p+1). */
typedef struct tf_rk_tableau {
  int stages, dense_degree;
  const double *a, *b, *c, *e, *dense;
} tf_rk_tableau;

struct tf_stepper_type {
  const char *name;       /* as integrator.method spells it */
  int order, error_order; /* of the solution carried on and of the error estimate */
  int evals_per_step;     /* new evaluations an accepted step costs (FSAL counted once) */
  int dense_evals;        /* more for the continuous extension */
  int samples_per_step;   /* event-function samples per step (tf_stepper_type_samples) */
  /* the stage that is f at the new solution, the next step's k[0]: the last row of a tableau
   * that is first same as last, else `stages` (the generic loop evaluates f there) */
  int fsal_stage;
  bool smooth_only; /* tf_stepper_type_smooth_only */
  tf_rk_controller control;
  const tf_rk_tableau *tableau;
  /* The driver's dense output (tf_rk_dense, tf_rk_sample): lazy, the extension is built on
   * first use by build_dense_late; dense_at, its value at theta in [0, 1] of the last step
   * (NULL: the tableau's, rk_tableau.c). */
  bool lazy_dense;
  void (*build_dense_late)(tf_stepper *s);
  void (*dense_at)(const tf_stepper *s, double theta, double *out);
  const tf_stepper_ops *ops; /* NULL: the explicit driver's */
  /* the integrator.method that names this type among its siblings, integrator.<family> then
   * choosing which (rosenbrock: rodas4 or ros3p); NULL: the method is the type's name */
  const char *family;
};

/* The state of a stepper; the explicit driver's vectors, which another kind of type may use
 * as its workspace (stages for a Rosenbrock method, cont[] for its interpolant). */
struct tf_stepper {
  size_t n;
  tf_rhs_fn f;
  void *ctx;
  tf_ode_options opt;
  const tf_stepper_type *type;
  const tf_stepper_ops *ops;
  double *block; /* one allocation behind all vectors (k[] pointers get swapped) */
  double *k[TF_RK_MAX_STAGES], *stage, *x_new, *cont[TF_RK_MAX_CONT];
  /* the field at the start of the last tf_stepper_step_to, and the model's code for it */
  double *start_slope;
  int start_code;
  double h, t_prev, h_prev, t_last; /* t_last: where the last accepted step ended */
  /* A lazy extension (DOP853's costs 3 evaluations) is built only when first asked for: most
   * steps of an event-driven run never interpolate (ode.c, tf_stepper_sample) */
  enum { TF_DENSE_NONE, TF_DENSE_PENDING, TF_DENSE_READY } dense_state;
  double log_err_prev; /* the PI controller's memory, log max(err, 1e-4) of the last step */
  bool fsal_valid;
  bool dense_off; /* the caller never interpolates: no continuous extension is built */
  tf_counts stats;
  /* the first refusal of the right-hand side since the step began (a fatal one wins) */
  int model_code;
  /* A linearly implicit type's (rosenbrock.c): the field's Jacobian given by the caller
   * (NULL: forward differences), and lin, allocated for n <= TF_MAX_DIM: df/dx (n x n), the
   * factors of I / (h gamma) - df/dx (n x n) and df/dt (n) at the step's start, kept over its
   * rejected attempts while lin_current. */
  tf_jacobian_fn jac;
  bool autonomous; /* tf_stepper_set_autonomous: df/dt = 0 without evaluating */
  double *lin;
  int lin_piv[TF_MAX_DIM];
  bool lin_current;
};

extern const tf_stepper_ops tf_rk_driver_ops;

static inline void tf_rk_eval(tf_stepper *s, double t, const double *x, double *dx) {
  const int rc = s->f(t, x, s->ctx, dx);
  s->stats.rhs_evals++;
  if (rc && (s->model_code == 0 || (rc < 0 && s->model_code > 0))) s->model_code = rc;
}

/* sqrt(mean((v_i / (atol + rtol max(|x0_i|, |x1_i|)))^2)) over n = s->n components, the
 * explicit pairs' error norm (n a constant where a fast path is instantiated for it). */
static inline __attribute__((always_inline)) double tf_rk_weighted_rms_n(
    const tf_stepper *s, const double *v, const double *x0, const double *x1, size_t n) {
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    const double a0 = fabs(x0[i]), a1 = fabs(x1[i]); /* a NaN is caught by the caller */
    const double scale = s->opt.atol + s->opt.rtol * (a0 > a1 ? a0 : a1);
    sum += (v[i] / scale) * (v[i] / scale);
  }
  return sqrt(sum / (double)n);
}
static inline double tf_rk_weighted_rms(const tf_stepper *s, const double *v, const double *x0,
                                        const double *x1) {
  return tf_rk_weighted_rms_n(s, v, x0, x1, s->n);
}

/* The generic tableau loop (rk_tableau.c): stages, error measure and extension of a pair given
 * as data only. */
void tf_rk_tableau_attempt(tf_stepper *s, double t, const double *x, double h);
double tf_rk_tableau_error(const tf_stepper *s, const double *x, double h);
void tf_rk_tableau_build_dense(tf_stepper *s, const double *x, double h);
void tf_rk_tableau_dense_at(const tf_stepper *s, double theta, double *out);

#endif
