/* ode.h — the stepper seam: one accepted step at a time with step-size control and dense
 * output, whatever the method.
 *
 * Layered like GSL's odeiv2 and SUNDIALS: the caller owns the state, the stepper takes one
 * accepted step at a time, and after each step the continuous extension interpolates anywhere
 * in [t_prev, t].  Event location (Filippov issue) works on that interpolant between steps, so
 * the stepper needs no knowledge of events.  The method is a type (stepper_type.h) looked up
 * by its integrator.method name (tf_stepper_type_find); every call below goes through the
 * type's operations, so the event loop, flows, Lyapunov spectra and stationary points run on
 * any registered type, an implicit or Rosenbrock one included.
 *
 *   tf_stepper *s = tf_stepper_create(n);
 *   tf_stepper_setup(s, rhs, ctx, &opts);
 *   tf_stepper_reset(s, t0, x0);            // new trajectory, discards FSAL state
 *   while (t < t_end) tf_stepper_step(s, &t, x, t_end);
 *   tf_stepper_destroy(s); */
#ifndef TF_ODE_H
#define TF_ODE_H

#include <stdbool.h>
#include <stddef.h>

#include "counts.h"

/* Returns 0, or a model's refusal (twofold/model.h): > 0 outside its domain, where a step
 * is rejected and retried smaller; < 0 fatal, which ends the integration with
 * TF_ODE_MODEL_FAILED and the code in tf_stepper_model_code. */
typedef int (*tf_rhs_fn)(double t, const double *x, void *ctx, double *dxdt);

/* The field's Jacobian df/dx at (t, x), n x n row-major into jac. */
typedef void (*tf_jacobian_fn)(double t, const double *x, void *ctx, double *jac);

/* Two refusals as one: 0 if both are 0, else a fatal (< 0) one if any, else the first. */
static inline int tf_model_code_join(int a, int b) {
  return a < 0 ? a : b < 0 ? b : a ? a : b;
}

/* A record of the first refusal met (0: none yet): code kept there if it is the first. */
static inline void tf_model_code_keep(int *first, int code) {
  if (code && !*first) *first = code;
}

/* A stepper type: its tableau, controller and operations (stepper_type.h).  The registered
 * types are listed by tf_stepper_type_at; NULL in the options means DOPRI5. */
typedef struct tf_stepper_type tf_stepper_type;

typedef struct tf_ode_options {
  const tf_stepper_type *type; /* NULL = DOPRI5 */
  double rtol, atol;
  double h0;       /* initial step; 0 = automatic (Hairer's estimate) */
  double hmax;     /* 0 = unbounded */
  double hmin;     /* steps below this fail with TF_ODE_STEP_UNDERFLOW; 0 = 1e-14 |t| */
  bool fixed_step; /* take exactly h0 per step (no error control), for convergence studies */
  long max_steps;  /* per tf_stepper_integrate call; 0 = unbounded */
  /* integrator.controller_math: fast: the step-size controller's exp and log are vmath.h's
   * (the same bits in the lanes of any width and one by one), not libm's */
  bool fast_control;
  /* integrator.landing: dense: the event loop (event_loop.c) takes the state at a located event
   * from the step's dense output instead of retaking the step; steppers do not read it */
  bool dense_landing;
  /* Where the run may stop early (checkpoint.h), the run's own token; NULL: never.  A member
   * stopped by it ends with status pending. */
  struct tf_stop_token *stop;
} tf_ode_options;

/* The defaults of the integrator table (integrator_settings.h): tolerances, the step budget;
 * automatic h0, no hmax. */
tf_ode_options tf_ode_default_options(void);

typedef enum tf_ode_status {
  TF_ODE_OK = 0,
  TF_ODE_NONFINITE,      /* the state or the error estimate became NaN/Inf */
  TF_ODE_STEP_UNDERFLOW, /* the step size fell below hmin */
  TF_ODE_MAX_STEPS,      /* max_steps reached before t_end */
  TF_ODE_MODEL_FAILED    /* the right-hand side returned < 0, or > 0 at an accepted state */
} tf_ode_status;

typedef struct tf_stepper tf_stepper;

tf_stepper *tf_stepper_create(size_t n);
void tf_stepper_setup(tf_stepper *s, tf_rhs_fn f, void *ctx, const tf_ode_options *opts);
void tf_stepper_reset(tf_stepper *s, double t0, const double *x0);
/* The exact Jacobian of the field set up last, for the linearly implicit (Rosenbrock) types,
 * which otherwise take it by forward differences (n more evaluations a step); the explicit
 * types ignore it.  Call after tf_stepper_setup (which forgets it). */
void tf_stepper_set_jacobian(tf_stepper *s, tf_jacobian_fn jac);
/* The field set up last does not depend on t (tf_model_def.autonomous): the Rosenbrock types
 * take df/dt = 0 without evaluating it; the others ignore it.  Call after tf_stepper_setup
 * (which forgets it). */
void tf_stepper_set_autonomous(tf_stepper *s, bool autonomous);
/* Continue from a new state (after an event or a mode switch, with a new right-hand side)
 * keeping the current step-size estimate: re-evaluates the first stage only. */
void tf_stepper_restart(tf_stepper *s, double t0, const double *x0);
/* One accepted step from (*t, x) not going beyond t_limit; updates both. */
tf_ode_status tf_stepper_step(tf_stepper *s, double *t, double *x, double t_limit);

/* The step from (t_start, start) taken again, under error control, to exactly te: an event
 * located on the dense output is a point of the interpolant, and continuing from it would
 * inject the interpolant's uncontrolled error at every event.  n values of start are copied
 * into x; returns 0, or -1 if te is not reached (step collapse).  again: the last call of
 * this stepper was step_to from the same (t_start, start), with the same field: the field at
 * the start is the one that call evaluated (counted in rhs_evals as evaluated again, so the
 * counts, like the results, do not depend on it). */
int tf_stepper_step_to(tf_stepper *s, double t_start, const double *start, size_t n, double te,
                       double *x, bool again);

/* True if every one of the n values is finite. */
bool tf_state_finite(const double *x, size_t n);
/* Dense output at t in [t_prev, t_last] of the last accepted step. */
void tf_stepper_dense(const tf_stepper *s, double t, double *out);
/* For callers that never interpolate (a spectrum integrated interval by interval): steps
 * skip building the continuous extension, about a third of a step's arithmetic outside the
 * right-hand side; tf_stepper_dense must not be called afterwards. */
void tf_stepper_without_dense(tf_stepper *s);
/* A cheap estimate inside the last step, for finding where events might be: the dense output
 * where it is already built (DOPRI5's always is), else the cubic Hermite interpolant through
 * the step's ends and slopes, which costs no evaluations (DOP853's extension costs 3).  Where
 * the estimate shows an event, the caller checks it on tf_stepper_dense. */
void tf_stepper_sample(const tf_stepper *s, double t, double *out);
bool tf_stepper_sample_is_exact(const tf_stepper *s);
double tf_stepper_last_step_start(const tf_stepper *s);
/* Where the last accepted step ended (the start after a reset or restart: no step since). */
double tf_stepper_last_step_end(const tf_stepper *s);
/* Steps until *t == t_end (resets first). */
tf_ode_status tf_stepper_integrate(tf_stepper *s, double *t, double *x, double t_end);

/* The one outer loop of the engines that step a member: flows, Lyapunov intervals, stationary
 * windows and the event loop, whose state machine (events, landings, transitions, QR) runs in
 * the hooks.  Before every step the budget and the stop token are checked and the caller may
 * prepare the step and bound it; after every accepted step the caller's hook sees it; so no
 * engine repeats the loop's bookkeeping. */
typedef struct tf_drive {
  long max_steps;             /* step calls this drive may make; reaching it: TF_ODE_MAX_STEPS */
  struct tf_stop_token *stop; /* polled before every step (checkpoint.h); NULL: never */
  /* The stop token before the budget: a member told to stop as its budget runs out ends pending
   * (the event loop's order), not at max_steps. */
  bool stop_first;
  /* After the checks, before the step from (t, x): the caller's preparation of the step, and
   * the time the step must not pass (<= t_end).  NULL: t_end. */
  double (*before)(void *ctx, double t, const double *x, double t_end);
  /* After the accepted step from ta to t (x the state at t); nonzero ends the drive there. */
  int (*accepted)(void *ctx, const tf_stepper *s, double ta, double t, const double *x);
  void *ctx;
  long steps; /* out: step calls made, the one that failed included */
} tf_drive;

typedef enum tf_drive_end {
  TF_DRIVE_REACHED,   /* *t == t_end */
  TF_DRIVE_FAILED,    /* a step failed, or the budget ran out: the ode status says which */
  TF_DRIVE_STOPPED,   /* the stop token said stop before a step */
  TF_DRIVE_HOOK_ENDED /* the hook returned nonzero */
} tf_drive_end;

/* Steps from (*t, x) towards t_end (no reset: the caller resets or restarts); *st gets the last
 * step's status (TF_ODE_OK unless TF_DRIVE_FAILED).  The hooks may move *t and x (an event's
 * landing); the drive goes on from where they leave them. */
tf_drive_end tf_stepper_drive(tf_stepper *s, double *t, double *x, double t_end, tf_drive *d,
                              tf_ode_status *st);

/* The checks the drive makes before a step, for a caller that takes some steps outside it (the
 * lanes, at tf_event_loop_top): true if a step from t is due after `steps` step calls; else
 * *end and *st are what the drive would return there. */
bool tf_drive_due(const tf_drive *d, long steps, double t, double t_end, tf_drive_end *end,
                  tf_ode_status *st);

/* The member status (status.h) of a step status that ended an integration: nonfinite,
 * step_underflow, max_steps, or failed for a model's refusal. */
int tf_member_status_of_step(tf_ode_status st);
void tf_stepper_destroy(tf_stepper *s);

/* The stepper's counts since its last reset (counts.h); jacobian_evals are the linearly
 * implicit types' (by differences: n evaluations each). */
tf_counts tf_stepper_stats(const tf_stepper *s);
/* After TF_ODE_MODEL_FAILED: the code the right-hand side returned. */
int tf_stepper_model_code(const tf_stepper *s);

const char *tf_ode_status_name(tf_ode_status st);

/* The registry of stepper types (stepper_registry.c): the type an integrator.method names, or
 * NULL; the i-th registered type, or NULL past the last; the type options select (DOPRI5 for
 * NULL) and its name as integrator.method spells it. */
const tf_stepper_type *tf_stepper_type_find(const char *name);
const tf_stepper_type *tf_stepper_type_at(size_t i);
const tf_stepper_type *tf_stepper_type_of(const tf_ode_options *o);
const char *tf_stepper_type_name(const tf_stepper_type *type);
/* Evaluations of the field at sample points per step an event loop checks: a cheap sample
 * that can miss a sign change between two samples needs more of them. */
int tf_stepper_type_samples(const tf_stepper_type *type);
/* The type's error estimate assumes a solution smooth inside a step (true for DOP853: it
 * misses a slip that starts non-smoothly, so bodies under spatial friction refuse it). */
bool tf_stepper_type_smooth_only(const tf_stepper_type *type);

#endif
