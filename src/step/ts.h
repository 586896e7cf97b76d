/* ts.h — stiff members on PETSc TS (implicit and IMEX: BDF, ARKIMEX, ROSW, ...).
 *
 * Smoothed Filippov systems have Jacobians of size 1/eps, so explicit DOPRI5 is limited by
 * stability, not accuracy; PETSc's implicit integrators are the field's tool for that.
 * A solve integrates `batch` independent members at once as one block-diagonal system (one
 * TS, one adaptive step sequence, one sparse LU per Newton step); batch = 1 is one TS per
 * member.  The Jacobian is the problem's analytic one if it has one, otherwise finite
 * differences with a colouring of the block-diagonal pattern (MatFDColoring: dim colours
 * whatever the batch size).
 *
 * Settings come from the config (tf_ts_settings) and are applied BEFORE TSSetFromOptions,
 * so every PETSc option on the command line (-ts_type rosw, -ts_adapt_type basic,
 * -ts_rtol 1e-9, -snes_*, -ksp_*, -pc_*) overrides them.  Options given in the config
 * (integrator.ts.options) are inserted only where the command line did not set the same
 * option.  Everything is sequential (PETSC_COMM_SELF): ranks share members, not solves, so
 * results do not depend on the rank count. */
#ifndef TF_TS_H
#define TF_TS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "ode.h"

typedef struct tf_ts_problem {
  size_t n; /* dimension of one member */
  /* 0, or a model's refusal: > 0 fails the nonlinear solve (a smaller step is tried; an
   * explicit type sees NaN), < 0 ends the solve (stats.model_code) */
  int (*rhs)(double t, const double *x, void *ctx, double *dx);
  void (*jacobian)(double t, const double *x, void *ctx, double *jac); /* NULL: FD colouring */
  void *ctx;
} tf_ts_problem;

/* The step a step hook sees, as a view of the solve's interpolation (TSInterpolate). */
typedef struct tf_ts_step {
  /* Member `slot` of the batch at t in the step into x (n values): 0, or -1 where the TS type
   * has no interpolation (some of PETSc's order-4 Rosenbrock methods) or t lies outside the
   * step. */
  int (*at)(const struct tf_ts_step *s, double t, size_t slot, double *x);
  void *impl;
} tf_ts_step;

typedef struct tf_ts_settings {
  char type[64];      /* TSType, e.g. "bdf"; the command line's -ts_type wins */
  char options[512];  /* extra PETSc options from the config ("-ts_bdf_order 3 ...") */
  bool fd_jacobian;   /* use FD colouring even if an analytic Jacobian exists */
  int jacobian_lag;   /* accepted steps an analytic field Jacobian is kept (1 = every call) */
  tf_ode_options ode; /* rtol, atol, h0 (0 = (t_end - t0) 1e-6), hmax, max_steps */
  /* Optional, the solve's caller's (not the config's): sees every accepted step [ta, tb] of the
   * solve (the batch's one step sequence), its interpolation inside it in s; nothing of the
   * solve depends on it. */
  void (*on_step)(void *ctx, double ta, double tb, const tf_ts_step *s);
  void *on_step_ctx;
} tf_ts_settings;

typedef struct tf_ts_stats {
  tf_counts work; /* counts.h */
  long nonlinear_iterations, linear_iterations;
  int model_code; /* the fatal refusal that ended the solve (status failed), else 0 */
  double t_reached;
} tf_ts_stats;

/* Called at each sample time with the states of the whole batch (batch x n). */
typedef void (*tf_ts_sample_fn)(void *ctx, double t, const double *x);

/* Integrates `batch` members (x holds batch x n values) from t0 to t_end, calling `sample`
 * at n_samples equally spaced times t0..t_end (both included) if given (each sample time
 * is reached exactly: TS_EXACTFINALTIME_MATCHSTEP).  Returns a tf_member_status for the
 * batch; *stats (may be NULL) receives the counts.  PETSc errors (an unknown -ts_type, a
 * bad option value) return -1 with err filled. */
int tf_ts_solve(const tf_ts_problem *pb, const tf_ts_settings *set, size_t batch, double t0,
                double t_end, double *x, tf_ts_sample_fn sample, void *sample_ctx, long n_samples,
                tf_ts_stats *stats, tf_error *err);

/* Checks the settings and the command-line options (creates a TS and applies them without
 * integrating), writing the TS type that will run to type_out.  For setup(), so that an
 * unknown type fails before any output is touched. */
int tf_ts_check(const tf_ts_settings *set, char *type_out, size_t n, tf_error *err);

/* The PETSc options in effect (config and command line merged, as tf_ts_check leaves the
 * database), without -ts_type (reported by tf_ts_check) and PETSc's own start-up options:
 * "-ts_adapt_type basic -ts_rtol 1e-9".  Stored as integrator.ts.options so that the config
 * as run (and the results fingerprint) records what the command line changed. */
void tf_ts_effective_options(char *buf, size_t n);

#endif
