/* ode.h — Dormand–Prince 5(4) or 8(5,3) with step-size control and dense output.
 *
 * Layered like GSL's odeiv2 and SUNDIALS: the caller owns the state, the stepper takes one
 * accepted step at a time, and after each step the continuous extension (Hairer's 4th-order
 * dense output) interpolates anywhere in [t_prev, t].  Event location (Filippov issue)
 * works on that interpolant between steps, so the stepper needs no knowledge of events.
 *
 *   tf_dopri5 *s = tf_dopri5_create(n);
 *   tf_dopri5_setup(s, rhs, ctx, &opts);
 *   tf_dopri5_reset(s, t0, x0);            // new trajectory, discards FSAL state
 *   while (t < t_end) tf_dopri5_step(s, &t, x, t_end);
 *   tf_dopri5_destroy(s); */
#ifndef TF_ODE_H
#define TF_ODE_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*tf_rhs_fn)(double t, const double *x, void *ctx, double *dxdt);

/* The explicit pair: Dormand–Prince 5(4) (6 evaluations a step, 4th-order dense output) or
 * Dormand–Prince 8(5,3) as in Hairer's DOP853 (12 a step, +3 for its 7th-order dense
 * output; far fewer steps at tight tolerances). */
typedef enum tf_rk_method { TF_RK_DOPRI5 = 0, TF_RK_DOP853 } tf_rk_method;

typedef struct tf_ode_options {
  tf_rk_method method; /* 0 = DOPRI5 */
  double rtol, atol;
  double h0;       /* initial step; 0 = automatic (Hairer's estimate) */
  double hmax;     /* 0 = unbounded */
  double hmin;     /* steps below this fail with TF_ODE_STEP_UNDERFLOW; 0 = 1e-14 |t| */
  bool fixed_step; /* take exactly h0 per step (no error control), for convergence studies */
  long max_steps;  /* per tf_dopri5_integrate call; 0 = unbounded */
  /* Where the run may stop early (checkpoint.h); NULL: the process-wide token of the jobs not
   * yet given their own.  A member stopped by it ends with status pending. */
  struct tf_stop_token *stop;
} tf_ode_options;

/* Defaults: rtol 1e-8, atol 1e-10, automatic h0, no hmax, 1e6 max steps. */
tf_ode_options tf_ode_default_options(void);

typedef enum tf_ode_status {
  TF_ODE_OK = 0,
  TF_ODE_NONFINITE,      /* the state or the error estimate became NaN/Inf */
  TF_ODE_STEP_UNDERFLOW, /* the step size fell below hmin */
  TF_ODE_MAX_STEPS       /* max_steps reached before t_end */
} tf_ode_status;

typedef struct tf_dopri5 tf_dopri5;

tf_dopri5 *tf_dopri5_create(size_t n);
void tf_dopri5_setup(tf_dopri5 *s, tf_rhs_fn f, void *ctx, const tf_ode_options *opts);
void tf_dopri5_reset(tf_dopri5 *s, double t0, const double *x0);
/* Continue from a new state (after an event or a mode switch, with a new right-hand side)
 * keeping the current step-size estimate: re-evaluates the first stage only. */
void tf_dopri5_restart(tf_dopri5 *s, double t0, const double *x0);
/* One accepted step from (*t, x) not going beyond t_limit; updates both. */
tf_ode_status tf_dopri5_step(tf_dopri5 *s, double *t, double *x, double t_limit);

/* The step from (t_start, start) taken again, under error control, to exactly te: an event
 * located on the dense output is a point of the interpolant, and continuing from it would
 * inject the interpolant's uncontrolled error at every event.  n values of start are copied
 * into x; returns 0, or -1 if te is not reached (step collapse). */
int tf_dopri5_step_to(tf_dopri5 *s, double t_start, const double *start, size_t n, double te,
                      double *x);

/* True if every one of the n values is finite. */
bool tf_state_finite(const double *x, size_t n);
/* Dense output at t in [t_prev, t_last] of the last accepted step. */
void tf_dopri5_dense(const tf_dopri5 *s, double t, double *out);
/* For callers that never interpolate (a spectrum integrated interval by interval): steps
 * skip building the continuous extension, about a third of a step's arithmetic outside the
 * right-hand side; tf_dopri5_dense must not be called afterwards. */
void tf_dopri5_without_dense(tf_dopri5 *s);
/* A cheap estimate inside the last step, for finding where events might be: the dense output
 * where it is already built (DOPRI5's always is), else the cubic Hermite interpolant through
 * the step's ends and slopes, which costs no evaluations (DOP853's extension costs 3).  Where
 * the estimate shows an event, the caller checks it on tf_dopri5_dense. */
void tf_dopri5_sample(const tf_dopri5 *s, double t, double *out);
bool tf_dopri5_sample_is_exact(const tf_dopri5 *s);
double tf_dopri5_last_step_start(const tf_dopri5 *s);
/* Steps until *t == t_end (resets first). */
tf_ode_status tf_dopri5_integrate(tf_dopri5 *s, double *t, double *x, double t_end);
void tf_dopri5_destroy(tf_dopri5 *s);

typedef struct tf_ode_stats {
  long steps, rejected, rhs_evals;
} tf_ode_stats;
tf_ode_stats tf_dopri5_stats(const tf_dopri5 *s);

const char *tf_ode_status_name(tf_ode_status st);
/* "dopri5" or "dop853", as integrator.method spells them */
const char *tf_rk_name(tf_rk_method m);

#endif
