/* ts.c — see ts.h; the PETSc TS module (ts_module.h), the only code that calls PETSc.  PETSc
 * errors are caught with PetscReturnErrorHandler (pushed for the duration of a call) and turned
 * into tf_error messages, so a bad option is a config-style error, not an abort with a PETSc
 * traceback. */
#include "ts.h"

#include <math.h>
#include <petscts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "max_dim.h"
#include "status.h"
#include "ts_module.h"

static const tf_ts_host *host; /* the engine's stop token calls */

#define KNOWN_TYPES                                                                          \
  "implicit/IMEX: bdf, arkimex, rosw, beuler, cn, theta, alpha, glle; explicit: rk, euler, " \
  "ssp"

typedef struct solve_ctx {
  const tf_ts_problem *pb;
  size_t batch;
  tf_ts_stats *stats;
  MatFDColoring fd;
  double t_fd; /* time at which the colouring differences are taken */
  bool nonfinite;
  /* the analytic field Jacobians (batch x n x n) kept for jacobian_lag accepted steps */
  double *jac;
  int lag;
  PetscInt jac_step, jac_rejections, jac_failures;
  bool jac_valid;
  bool implicit; /* the type solves a nonlinear system per stage */
} solve_ctx;

/* The batch's field; returns the members' refusals joined (tf_model_code_join). */
static int eval_rhs(solve_ctx *c, double t, const double *x, double *f) {
  const size_t n = c->pb->n;
  int code = 0;
  for (size_t b = 0; b < c->batch; b++)
    code = tf_model_code_join(code, c->pb->rhs(t, x + b * n, c->pb->ctx, f + b * n));
  c->stats->work.rhs_evals++;
  for (size_t i = 0; i < n * c->batch && !code; i++)
    if (!isfinite(f[i])) c->nonfinite = true;
  return code;
}

/* A refusal outside the domain fails the nonlinear solve, so TS retries a smaller step (an
 * explicit type has no solve: NaN makes its step controller reject the step); a fatal one
 * ends the solve. */
static PetscErrorCode refuse(solve_ctx *c, TS ts, int code, PetscScalar *f) {
  if (code < 0) {
    c->stats->model_code = code;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER, "the model failed (code %d)", code);
  }
  SNES snes = NULL;
  if (ts) PetscCall(TSGetSNES(ts, &snes));
  if (snes && c->implicit) PetscCall(SNESSetFunctionDomainError(snes));
  for (size_t i = 0; i < c->pb->n * c->batch; i++) f[i] = NAN;
  return 0;
}

static PetscErrorCode rhs_function(TS ts, PetscReal t, Vec X, Vec F, void *vctx) {
  const PetscScalar *x;
  PetscScalar *f;
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(F, &f));
  const int code = eval_rhs(vctx, t, x, f);
  if (code) PetscCall(refuse(vctx, ts, code, f));
  PetscCall(VecRestoreArray(F, &f));
  PetscCall(VecRestoreArrayRead(X, &x));
  return 0;
}

/* MatFDColoring's function signature: (context passed to MatFDColoringApply, x, f, ctx). */
static PetscErrorCode fd_function(void *unused, Vec X, Vec F, void *vctx) {
  (void)unused;
  solve_ctx *c = vctx;
  return rhs_function(NULL, c->t_fd, X, F, vctx);
}

/* Whether the kept field Jacobians are stale: never taken, older than the lag, or a step
 * was rejected or a nonlinear solve failed since (the step size is being cut: take the
 * Jacobian at the current state rather than shrink the step further on an old one). */
static bool jacobian_stale(solve_ctx *c, TS ts, PetscInt *step, PetscInt *rej, PetscInt *fail) {
  *step = *rej = *fail = 0;
  if (ts) TSGetStepNumber(ts, step), TSGetStepRejections(ts, rej), TSGetSNESFailures(ts, fail);
  return !ts || !c->jac_valid || *step - c->jac_step >= c->lag || *rej != c->jac_rejections ||
         *fail != c->jac_failures;
}

/* scale * df/dx + shift * I of every member into B from the analytic blocks (taken afresh or
 * kept, see jacobian_stale), one blocked insertion per member (the matrix has block size n). */
static PetscErrorCode field_jacobian_shifted(solve_ctx *c, TS ts, PetscReal t, Vec X, double scale,
                                             double shift, Mat B) {
  const size_t n = c->pb->n;
  PetscInt step, rej, fail;
  const bool fresh = jacobian_stale(c, ts, &step, &rej, &fail);
  const PetscScalar *x = NULL;
  if (fresh) {
    c->stats->work.jacobian_evals++;
    PetscCall(VecGetArrayRead(X, &x));
    for (size_t b = 0; b < c->batch; b++)
      c->pb->jacobian(t, x + b * n, c->pb->ctx, c->jac + b * n * n);
    PetscCall(VecRestoreArrayRead(X, &x));
    c->jac_valid = true, c->jac_step = step, c->jac_rejections = rej, c->jac_failures = fail;
  }
  PetscScalar block[TF_MAX_DIM * TF_MAX_DIM];
  for (size_t b = 0; b < c->batch; b++) {
    const PetscInt row = (PetscInt)b;
    for (size_t i = 0; i < n * n; i++) block[i] = scale * c->jac[b * n * n + i];
    for (size_t i = 0; i < n; i++) block[i * n + i] += shift;
    PetscCall(MatSetValuesBlocked(B, 1, &row, 1, &row, block, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  return 0;
}

/* df/dx of every member into B: the analytic blocks or the coloured differences. */
static PetscErrorCode field_jacobian(solve_ctx *c, PetscReal t, Vec X, Mat B) {
  if (!c->fd) return field_jacobian_shifted(c, NULL, t, X, 1.0, 0.0, B);
  c->stats->work.jacobian_evals++;
  c->t_fd = t;
  PetscCall(MatFDColoringApply(B, c->fd, X, c));
  return 0;
}

static PetscErrorCode finish_matrices(Mat A, Mat B) {
  if (A != B) {
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  }
  return 0;
}

/* Explicit types see x' = f(t, x) as an RHS function. */
static PetscErrorCode rhs_jacobian(TS ts, PetscReal t, Vec X, Mat A, Mat B, void *vctx) {
  (void)ts;
  PetscCall(field_jacobian(vctx, t, X, B));
  return finish_matrices(A, B);
}

/* Implicit and IMEX types get the whole field as the implicit part, F = x' - f(t, x) (an
 * RHS function would be the explicit part of an IMEX splitting: arkimex, rosw). */
static PetscErrorCode ifunction(TS ts, PetscReal t, Vec X, Vec Xdot, Vec F, void *vctx) {
  PetscCall(rhs_function(ts, t, X, F, vctx));
  PetscCall(VecAYPX(F, -1.0, Xdot));
  return 0;
}

static PetscErrorCode ijacobian(TS ts, PetscReal t, Vec X, Vec Xdot, PetscReal shift, Mat A, Mat B,
                                void *vctx) {
  (void)ts, (void)Xdot;
  solve_ctx *c = vctx;
  if (c->fd) {
    PetscCall(field_jacobian(c, t, X, B));
    PetscCall(MatScale(B, -1.0));
    PetscCall(MatShift(B, shift));
  } else {
    PetscCall(field_jacobian_shifted(c, ts, t, X, -1.0, shift, B));
  }
  return finish_matrices(A, B);
}

static bool explicit_type(TSType type) {
  static const char *const names[] = {TSEULER, TSRK, TSSSP, NULL};
  for (int i = 0; names[i]; i++)
    if (strcmp(type, names[i]) == 0) return true;
  return false;
}

/* Config options go in only where the command line did not set the same option. */
static PetscErrorCode insert_config_options(const char *options) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", options);
  char *save = NULL, *tok = strtok_r(buf, " \t\n", &save);
  while (tok) {
    char *next = strtok_r(NULL, " \t\n", &save);
    const char *value = NULL;
    if (next &&
        !(next[0] == '-' && next[1] && !(next[1] >= '0' && next[1] <= '9') && next[1] != '.')) {
      value = next;
      next = strtok_r(NULL, " \t\n", &save);
    }
    if (tok[0] == '-') {
      PetscBool set;
      PetscCall(PetscOptionsHasName(NULL, NULL, tok, &set));
      if (!set) PetscCall(PetscOptionsSetValue(NULL, tok, value));
    }
    tok = next;
  }
  return 0;
}

/* The members' Jacobian: n x n blocks on the diagonal of an AIJ matrix with block size n,
 * so that point-block Jacobi (the default preconditioner, with no Krylov iterations) inverts
 * it exactly, block by block, with PETSc's unrolled small-block kernels. */
static PetscErrorCode block_pattern(size_t n, size_t batch, Mat *J) {
  const PetscInt N = (PetscInt)(n * batch);
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, N, N, (PetscInt)n, NULL, J));
  PetscCall(MatSetBlockSize(*J, (PetscInt)n));
  PetscScalar zeros[TF_MAX_DIM * TF_MAX_DIM] = {0};
  for (size_t b = 0; b < batch; b++) {
    const PetscInt row = (PetscInt)b;
    PetscCall(MatSetValuesBlocked(*J, 1, &row, 1, &row, zeros, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  return 0;
}

static PetscErrorCode make_colouring(Mat J, solve_ctx *c) {
  MatColoring mc;
  ISColoring isc;
  PetscCall(MatColoringCreate(J, &mc));
  PetscCall(MatColoringSetType(mc, MATCOLORINGSL));
  PetscCall(MatColoringSetFromOptions(mc));
  PetscCall(MatColoringApply(mc, &isc));
  PetscCall(MatColoringDestroy(&mc));
  PetscCall(MatFDColoringCreate(J, isc, &c->fd));
  PetscCall(
      MatFDColoringSetFunction(c->fd, (PetscErrorCode(*)(void))(void (*)(void))fd_function, c));
  PetscCall(MatFDColoringSetFromOptions(c->fd));
  PetscCall(MatFDColoringSetUp(J, isc, c->fd));
  PetscCall(ISColoringDestroy(&isc));
  return 0;
}

/* Settings first, then TSSetFromOptions: the command line overrides the config. */
static PetscErrorCode configure(TS ts, const tf_ts_settings *set, double t0, double t_end) {
  SNES snes;
  KSP ksp;
  PC pc;
  TSAdapt adapt;
  PetscCall(insert_config_options(set->options));
  PetscCall(TSSetProblemType(ts, TS_NONLINEAR));
  PetscCall(TSSetType(ts, set->type));
  PetscCall(TSSetTime(ts, t0));
  PetscCall(TSSetMaxTime(ts, t_end));
  PetscCall(TSSetTimeStep(ts, set->ode.h0 > 0 ? set->ode.h0 : 1e-6 * (t_end - t0)));
  PetscCall(TSSetMaxSteps(ts, set->ode.max_steps > 0 ? (PetscInt)set->ode.max_steps : -1));
  PetscCall(TSSetExactFinalTime(ts, TS_EXACTFINALTIME_MATCHSTEP));
  PetscCall(TSSetTolerances(ts, set->ode.atol, NULL, set->ode.rtol, NULL));
  PetscCall(TSSetMaxSNESFailures(ts, -1)); /* a failed Newton solve shrinks the step */
  PetscCall(TSSetMaxStepRejections(ts, 100));
  PetscCall(TSSetErrorIfStepFails(ts, PETSC_FALSE));
  PetscCall(TSGetAdapt(ts, &adapt));
  if (set->ode.hmax > 0) PetscCall(TSAdaptSetStepLimits(adapt, PETSC_DEFAULT, set->ode.hmax));
  PetscCall(TSGetSNES(ts, &snes));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPSetType(ksp, KSPPREONLY)); /* block diagonal: its block inverse is exact */
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCPBJACOBI));
  PetscCall(TSSetFromOptions(ts));
  return 0;
}

static int petsc_fail(PetscErrorCode code, const char *what, tf_error *err) {
  const char *text = NULL;
  PetscErrorMessage(code, &text, NULL);
  return tf_fail(err, "PETSc TS: %s failed: %s", what, text ? text : "error");
}

static int ts_check(const tf_ts_settings *set, char *type_out, size_t n, tf_error *err) {
  TS ts = NULL;
  PetscErrorCode code;
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  int rc = 0;
  code = TSCreate(PETSC_COMM_SELF, &ts);
  if (!code) code = TSSetType(ts, set->type);
  if (code) {
    rc =
        tf_fail_code(err, TF_ERR_CONFIG, "unknown PETSc TS type '%s' (" KNOWN_TYPES ")", set->type);
  } else if ((code = configure(ts, set, 0.0, 1.0))) {
    char cl_type[64] = "";
    PetscBool found = PETSC_FALSE;
    PetscOptionsGetString(NULL, NULL, "-ts_type", cl_type, sizeof cl_type, &found);
    if (found && code == PETSC_ERR_ARG_UNKNOWN_TYPE)
      rc = tf_fail_code(err, TF_ERR_CONFIG,
                        "unknown PETSc TS type '%s' given by -ts_type (" KNOWN_TYPES ")", cl_type);
    else
      rc = petsc_fail(code, "applying the PETSc options", err);
  } else {
    TSType type;
    TSGetType(ts, &type);
    snprintf(type_out, n, "%s", type);
  }
  TSDestroy(&ts);
  PetscPopErrorHandler();
  return rc;
}

/* Samples at equally spaced times by interpolation inside each accepted step, so sampling
 * does not change the step sequence: a sampled member ends exactly where an unsampled one
 * does (the trajectory job's last sample equals the ensemble's final state). */
typedef struct sampler {
  tf_ts_sample_fn fn;
  void *ctx;
  size_t n;
  double t0, t_end;
  long n_samples, next;
  double *buf;
  Vec work;
  PetscErrorCode error;
  tf_stop_token *stop;
} sampler;

static double sample_time(const sampler *s, long i) {
  return i == s->n_samples - 1
             ? s->t_end
             : s->t0 + (s->t_end - s->t0) * (double)i / (double)(s->n_samples - 1);
}

static PetscErrorCode sample_monitor(TS ts, PetscInt step, PetscReal t, Vec U, void *vctx) {
  sampler *s = vctx;
  if (step == 0 || s->error || host->stop_requested(s->stop)) return 0;
  for (; s->next < s->n_samples && sample_time(s, s->next) <= t; s->next++) {
    const double ti = sample_time(s, s->next);
    Vec V = U;
    if (ti < t) {
      PetscErrorCode code = TSInterpolate(ts, ti, s->work);
      if (code) {
        s->error = code;
        return 0;
      }
      V = s->work;
    }
    const PetscScalar *v;
    PetscCall(VecGetArrayRead(V, &v));
    memcpy(s->buf, v, s->n * sizeof *s->buf);
    PetscCall(VecRestoreArrayRead(V, &v));
    s->fn(s->ctx, ti, s->buf);
    if (host->stop_point(s->stop)) break;
  }
  return 0;
}

/* A step hook's view of the solve (tf_ts_step): the steps seen once each (PETSc's monitor
 * sees the last step twice), the interpolation into a work vector. */
typedef struct step_view {
  tf_ts_step view;
  TS ts;
  Vec work;
  size_t n;
  double ta, tb;
  PetscInt seen;
  void (*fn)(void *ctx, double ta, double tb, const tf_ts_step *s);
  void *ctx;
} step_view;

static int interpolate_slot(const tf_ts_step *s, double t, size_t slot, double *x) {
  const step_view *v = s->impl;
  if (!(t >= v->ta && t <= v->tb) || TSInterpolate(v->ts, t, v->work)) return -1;
  const PetscScalar *w;
  if (VecGetArrayRead(v->work, &w)) return -1;
  memcpy(x, w + slot * v->n, v->n * sizeof *x);
  return VecRestoreArrayRead(v->work, &w) ? -1 : 0;
}

static PetscErrorCode step_monitor(TS ts, PetscInt step, PetscReal t, Vec U, void *vctx) {
  (void)U;
  step_view *v = vctx;
  if (step <= v->seen) return 0;
  v->seen = step;
  PetscReal ta;
  PetscCall(TSGetPrevTime(ts, &ta));
  v->ta = ta, v->tb = t;
  if (ta < t) v->fn(v->ctx, ta, t, &v->view);
  return 0;
}

/* A solve whose stop token (checkpoint.h, the TS's application context) said stop ends after
 * this step: a trajectory stopped at a sample, or a signal or the time limit during a long batch
 * solve.  The reason set here survives to TSSolve's loop test (TSStep resets one set in a
 * monitor). */
static PetscErrorCode stop_post_step(TS ts) {
  tf_stop_token *stop;
  PetscCall(TSGetApplicationContext(ts, &stop));
  if (host->stop_poll(stop)) PetscCall(TSSetConvergedReason(ts, TS_CONVERGED_USER));
  return 0;
}

static void effective_options(char *buf, size_t n) {
  char *all = NULL;
  buf[0] = '\0';
  if (PetscOptionsGetAll(NULL, &all) || !all) return;
  size_t len = 0;
  bool skip_value = false;
  for (char *save = NULL, *tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    const bool name = tok[0] == '-' && tok[1] && !(tok[1] >= '0' && tok[1] <= '9') && tok[1] != '.';
    if (name) skip_value = strcmp(tok, "-ts_type") == 0 || strcmp(tok, "-no_signal_handler") == 0;
    if (skip_value) continue;
    const int w = snprintf(buf + len, n - len, "%s%s", len ? " " : "", tok);
    if (w < 0 || (size_t)w >= n - len) break;
    len += (size_t)w;
  }
  PetscFree(all);
}

/* Whether an option asks PETSc to view an object or report why a solve ended. */
static bool viewing_requested(void) {
  char *all = NULL;
  if (PetscOptionsGetAll(NULL, &all) || !all) return true;
  const bool requested = strstr(all, "_view") || strstr(all, "_converged_reason");
  PetscFree(all);
  return requested;
}

static int status_of(TSConvergedReason reason, bool nonfinite) {
  if (nonfinite) return TF_MEMBER_NONFINITE;
  switch (reason) {
    case TS_CONVERGED_TIME:
    case TS_CONVERGED_EVENT:
    case TS_CONVERGED_USER:
      return TF_MEMBER_OK;
    case TS_CONVERGED_ITS:
      return TF_MEMBER_MAX_STEPS;
    case TS_DIVERGED_NONLINEAR_SOLVE:
    case TS_DIVERGED_STEP_REJECTED:
      return TF_MEMBER_STEP_UNDERFLOW;
    default:
      return TF_MEMBER_FAILED;
  }
}

static int ts_solve(const tf_ts_problem *pb, const tf_ts_settings *set, size_t batch, double t0,
                    double t_end, double *x, tf_ts_sample_fn sample, void *sample_ctx,
                    long n_samples, tf_ts_stats *stats, tf_error *err) {
  tf_ts_stats local = {0};
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  if (pb->n > TF_MAX_DIM)
    return tf_fail_code(err, TF_ERR_CONFIG, "PETSc TS members support at most %d components",
                        TF_MAX_DIM);
  solve_ctx c = {.pb = pb,
                 .batch = batch,
                 .stats = stats,
                 .lag = set->jacobian_lag > 0 ? set->jacobian_lag : 1,
                 .jac = pb->jacobian ? malloc(batch * pb->n * pb->n * sizeof(double)) : NULL};
  if (pb->jacobian && !c.jac) return tf_fail(err, "out of memory for a batch's Jacobians");
  const size_t N = pb->n * batch;
  TS ts = NULL;
  Vec X = NULL;
  Mat J = NULL;
  int status = TF_MEMBER_OK;
  const char *stage = "creating the solver";
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  PetscErrorCode code = TSCreate(PETSC_COMM_SELF, &ts);
  if (!code) code = VecCreateSeq(PETSC_COMM_SELF, (PetscInt)N, &X);
  if (!code) code = block_pattern(pb->n, batch, &J);
  if (!code && (!pb->jacobian || set->fd_jacobian)) code = make_colouring(J, &c);
  if (!code) stage = "applying the options", code = configure(ts, set, t0, t_end);
  TSType type = NULL;
  if (!code) code = TSGetType(ts, &type);
  if (!code && explicit_type(type)) {
    code = TSSetRHSFunction(ts, NULL, rhs_function, &c);
    if (!code) code = TSSetRHSJacobian(ts, J, J, rhs_jacobian, &c);
  } else if (!code) {
    c.implicit = true;
    code = TSSetIFunction(ts, NULL, ifunction, &c);
    if (!code) code = TSSetIJacobian(ts, J, J, ijacobian, &c);
  }
  PetscScalar *xv;
  if (!code && !(code = VecGetArray(X, &xv))) {
    memcpy(xv, x, N * sizeof *x);
    code = VecRestoreArray(X, &xv);
  }
  tf_stop_token *stop = set->ode.stop;
  if (!code && sample && n_samples > 0) sample(sample_ctx, t0, x), host->stop_point(stop);
  sampler smp = {.fn = sample,
                 .ctx = sample_ctx,
                 .n = N,
                 .t0 = t0,
                 .t_end = t_end,
                 .n_samples = n_samples,
                 .next = 1,
                 .buf = x,
                 .stop = stop};
  if (!code && sample && n_samples > 1) code = VecDuplicate(X, &smp.work);
  if (!code && sample && n_samples > 1) code = TSMonitorSet(ts, sample_monitor, &smp, NULL);
  step_view watch = {.view = {interpolate_slot, &watch},
                     .ts = ts,
                     .n = pb->n,
                     .fn = set->on_step,
                     .ctx = set->on_step_ctx};
  if (!code && set->on_step) code = VecDuplicate(X, &watch.work);
  if (!code && set->on_step) code = TSMonitorSet(ts, step_monitor, &watch, NULL);
  if (!code) code = TSSetApplicationContext(ts, stop);
  if (!code) code = TSSetPostStep(ts, stop_post_step);
  TSConvergedReason reason = TS_CONVERGED_TIME;
  /* PETSc asks its options database, at every nonlinear and linear solve (four per ROSW
   * step), whether any object is to be viewed: a quarter of a small member's time.  Unless
   * the user asked for a view or a convergence reason, that lookup is switched off. */
  const bool quiet = !viewing_requested();
  if (!code && quiet) code = PetscOptionsPushGetViewerOff(PETSC_TRUE);
  if (!code) stage = "integrating", code = TSSolve(ts, X);
  if (quiet) PetscOptionsPopGetViewerOff();
  if (!code) code = TSGetConvergedReason(ts, &reason);
  PetscInt its = 0;
  if (!code) code = TSGetSNESIterations(ts, &its);
  stats->nonlinear_iterations += its;
  if (!code) code = TSGetKSPIterations(ts, &its);
  stats->linear_iterations += its;
  if (!code) code = TSGetStepRejections(ts, &its);
  stats->work.rejected += its;
  const PetscScalar *xr;
  if (!code && !(code = VecGetArrayRead(X, &xr))) {
    memcpy(x, xr, N * sizeof *x);
    code = VecRestoreArrayRead(X, &xr);
  }
  bool nonfinite = false;
  for (size_t k = 0; k < N && !code; k++)
    if (!isfinite(x[k])) nonfinite = true;
  if (!code) status = status_of(reason, nonfinite);
  if (!code && smp.error)
    code = smp.error,
    stage = code == PETSC_ERR_SUP
                ? "interpolating to the sample times (this TS type has no dense output, e.g. "
                  "the order-4 Rosenbrock methods: sample with one that has, such as the "
                  "default -ts_rosw_type ra34pw2, or drop output.trajectory_samples)"
                : "interpolating to the sample times";
  if (!code) {
    PetscInt steps = 0;
    PetscReal t_reached = t0;
    TSGetStepNumber(ts, &steps);
    TSGetTime(ts, &t_reached);
    stats->work.steps = steps;
    stats->t_reached = t_reached;
  }
  if (stats->model_code) { /* the model's verdict, not PETSc's error */
    PetscReal t_reached = t0;
    TSGetTime(ts, &t_reached);
    stats->t_reached = t_reached;
    code = 0, status = TF_MEMBER_FAILED;
  }
  int rc = code ? petsc_fail(code, stage, err) : status;
  free(c.jac);
  MatFDColoringDestroy(&c.fd);
  VecDestroy(&smp.work);
  VecDestroy(&watch.work);
  MatDestroy(&J);
  VecDestroy(&X);
  TSDestroy(&ts);
  PetscPopErrorHandler();
  return rc;
}

/* --- PETSc's start and end (petsc_start.h) ------------------------------------------------ */

static bool started;
static MPI_Comm world_before; /* PETSC_COMM_WORLD before PETSc was started on the run's comm */
static PetscOptions pushed;

static bool running(void) {
  PetscBool up = PETSC_FALSE;
  PetscInitialized(&up);
  return up;
}

static int start(MPI_Comm comm, int argc, char **argv, tf_error *err) {
  if (running()) return 0;
  world_before = PETSC_COMM_WORLD;
  PETSC_COMM_WORLD = comm; /* PetscInitialize is collective on it: only the run's ranks call */
  if (PetscInitialize(argc ? &argc : NULL, argc ? &argv : NULL, NULL, NULL)) {
    PETSC_COMM_WORLD = world_before;
    return tf_fail(err, "PETSc could not be initialised");
  }
  started = true;
  return 1;
}

static void stop(void) {
  if (!started) return;
  PetscFinalize();
  PETSC_COMM_WORLD = world_before;
  started = false;
}

static int push_options(int argc, char **argv, tf_error *err) {
  if (PetscOptionsCreate(&pushed) || PetscOptionsInsertArgs(pushed, argc - 1, argv + 1) ||
      PetscOptionsPush(pushed)) {
    if (pushed) PetscOptionsDestroy(&pushed);
    return tf_fail(err, "PETSc options could not be set");
  }
  return 0;
}

static void pop_options(void) {
  if (!pushed) return;
  PetscOptionsPop();
  PetscOptionsDestroy(&pushed);
}

__attribute__((visibility("default"))) const tf_ts_ops *twofold_ts_module(const tf_ts_host *h) {
  static const tf_ts_ops ops = {.abi = TF_TS_MODULE_ABI,
                                .solve = ts_solve,
                                .check = ts_check,
                                .effective_options = effective_options,
                                .start = start,
                                .stop = stop,
                                .running = running,
                                .push_options = push_options,
                                .pop_options = pop_options};
  if (!h || h->abi != TF_TS_MODULE_ABI) return NULL;
  host = h;
  return &ops;
}
