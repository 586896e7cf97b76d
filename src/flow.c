/* flow.c — config reading and member runs for smooth and SDE kernels. */
#include "flow.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "rng.h"
#include "status.h"

const char *tf_method_name(tf_method m) {
  switch (m) {
    case TF_METHOD_DOPRI5:
      return "dopri5";
    case TF_METHOD_EULER_MARUYAMA:
      return "euler-maruyama";
    case TF_METHOD_MILSTEIN:
      return "milstein";
  }
  return "unknown";
}

static int read_model(tf_flow *flow, tf_config *cfg, tf_error *err) {
  tf_model model;
  const int rc = tf_model_from_config(&model, cfg, TF_KERNEL_FLOW, "ensemble", err);
  flow->kernel = model.kernel;
  flow->params = model.params;
  return rc;
}

int tf_initial_from_config(tf_config *cfg, const tf_kernel *k, double *x0, double *spread,
                           double *t0, tf_error *err) {
  double *zeros = calloc(k->dim, sizeof *zeros);
  size_t n;
  if (!zeros) return tf_fail(err, "out of memory");
  int rc = tf_config_get_double_array(cfg, "initial.state", k->initial ? k->initial : zeros, k->dim,
                                      k->dim, x0, k->dim, &n, err);
  free(zeros);
  if (rc) return -1;
  const double zero = 0.0;
  if (tf_config_get_double(cfg, "initial.spread", &zero, 0.0, INFINITY, spread, err) ||
      tf_config_get_double(cfg, "initial.time", &zero, -INFINITY, INFINITY, t0, err))
    return -1;
  return 0;
}

int tf_ode_options_from_config(tf_config *cfg, tf_ode_options *o, double t0, double *t_end,
                               tf_error *err) {
  const double d_rtol = 1e-8, d_atol = 1e-10, d_zero = 0.0;
  const long long d_max_steps = 1000000;
  long long max_steps;
  if ((t_end &&
       tf_config_get_double(cfg, "integrator.t_end", NULL, -INFINITY, INFINITY, t_end, err)) ||
      tf_config_get_double(cfg, "integrator.rtol", &d_rtol, 1e-15, 1.0, &o->rtol, err) ||
      tf_config_get_double(cfg, "integrator.atol", &d_atol, 0.0, INFINITY, &o->atol, err) ||
      tf_config_get_double(cfg, "integrator.h0", &d_zero, 0.0, INFINITY, &o->h0, err) ||
      tf_config_get_double(cfg, "integrator.hmax", &d_zero, 0.0, INFINITY, &o->hmax, err) ||
      tf_config_get_int(cfg, "integrator.max_steps", &d_max_steps, 1, LLONG_MAX, &max_steps, err))
    return -1;
  o->max_steps = (long)max_steps;
  char where[256];
  if (t_end && !(*t_end > t0))
    return tf_fail(err,
                   "%s: key 'integrator.t_end': expected a time after initial.time = %g, got %g",
                   tf_config_where(cfg, "integrator.t_end", where, sizeof where), t0, *t_end);
  return 0;
}

static int read_initial(tf_flow *flow, tf_config *cfg, tf_error *err) {
  flow->x0 = calloc(flow->kernel->dim, sizeof *flow->x0);
  if (!flow->x0) return tf_fail(err, "out of memory");
  return tf_initial_from_config(cfg, flow->kernel, flow->x0, &flow->spread, &flow->t0, err);
}

static int read_integrator(tf_flow *flow, tf_config *cfg, tf_error *err) {
  static const char *const methods[] = {"auto", "dopri5", "euler-maruyama", "milstein", NULL};
  const char *method;
  const double d_dt = 1e-3;
  if (tf_config_get_string(cfg, "integrator.method", "auto", methods, &method, err) ||
      tf_ode_options_from_config(cfg, &flow->ode, flow->t0, &flow->t_end, err) ||
      tf_config_get_double(cfg, "integrator.dt", &d_dt, 1e-12, INFINITY, &flow->dt, err))
    return -1;
  char where[256];
  const bool noisy = tf_kernel_is_noisy(flow->kernel, flow->x0, flow->params);
  if (strcmp(method, "auto") == 0)
    flow->method = noisy ? TF_METHOD_EULER_MARUYAMA : TF_METHOD_DOPRI5;
  else if (strcmp(method, "dopri5") == 0)
    flow->method = TF_METHOD_DOPRI5;
  else if (strcmp(method, "euler-maruyama") == 0)
    flow->method = TF_METHOD_EULER_MARUYAMA;
  else
    flow->method = TF_METHOD_MILSTEIN;
  if (flow->method == TF_METHOD_DOPRI5 && noisy)
    return tf_fail(err,
                   "%s: key 'integrator.method': model '%s' has noise with these parameters, "
                   "but dopri5 is deterministic; use euler-maruyama or milstein (or auto)",
                   tf_config_where(cfg, "integrator.method", where, sizeof where),
                   flow->kernel->name);
  if (flow->method != TF_METHOD_DOPRI5 && !flow->kernel->diffusion)
    return tf_fail(err, "%s: key 'integrator.method': model '%s' has no noise term; use dopri5",
                   tf_config_where(cfg, "integrator.method", where, sizeof where),
                   flow->kernel->name);
  if (flow->method == TF_METHOD_MILSTEIN && !flow->kernel->diffusion_dx)
    return tf_fail(err,
                   "%s: key 'integrator.method': model '%s' gives no noise derivative "
                   "needed by milstein; use euler-maruyama",
                   tf_config_where(cfg, "integrator.method", where, sizeof where),
                   flow->kernel->name);
  return 0;
}

int tf_flow_from_config(tf_flow *flow, tf_config *cfg, tf_error *err) {
  memset(flow, 0, sizeof *flow);
  flow->ode = tf_ode_default_options();
  long long seed;
  const long long d_seed = 1;
  if (read_model(flow, cfg, err) || read_initial(flow, cfg, err) ||
      read_integrator(flow, cfg, err) ||
      tf_config_get_int(cfg, "ensemble.seed", &d_seed, 0, LLONG_MAX, &seed, err))
    return -1;
  flow->seed = (uint64_t)seed;
  flow->stepper = tf_dopri5_create(flow->kernel->dim);
  flow->work = calloc(4 * flow->kernel->dim, sizeof *flow->work);
  if (!flow->stepper || !flow->work) return tf_fail(err, "out of memory");
  return 0;
}

void tf_flow_destroy(tf_flow *flow) {
  tf_dopri5_destroy(flow->stepper);
  free(flow->work);
  free(flow->params);
  free(flow->x0);
  memset(flow, 0, sizeof *flow);
}

void tf_flow_initial_state(const tf_flow *flow, uint64_t member, double *x) {
  const size_t n = flow->kernel->dim;
  memcpy(x, flow->x0, n * sizeof *x);
  if (flow->spread > 0) {
    double *z = flow->work + 3 * n; /* the noise slot is free before a run */
    tf_rng_normals((tf_rng_key){flow->seed, member}, 0, TF_RNG_INITIAL, n, z);
    for (size_t i = 0; i < n; i++) x[i] += flow->spread * z[i];
  }
}

/* Adapters from the kernel's (t, x, p) signature to the integrators' (t, x, ctx). */
static void drift_adapter(double t, const double *x, void *ctx, double *dx) {
  const tf_flow *flow = ctx;
  flow->kernel->rhs(t, x, flow->params, dx);
}
static void diffusion_adapter(double t, const double *x, void *ctx, double *g) {
  const tf_flow *flow = ctx;
  flow->kernel->diffusion(t, x, flow->params, g);
}
static void diffusion_dx_adapter(double t, const double *x, void *ctx, double *dg) {
  const tf_flow *flow = ctx;
  flow->kernel->diffusion_dx(t, x, flow->params, dg);
}

static bool finite_state(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return false;
  return true;
}

static double sample_time(const tf_flow *flow, long i, long n_samples) {
  if (n_samples <= 1) return flow->t_end;
  return i == n_samples - 1
             ? flow->t_end
             : flow->t0 + (flow->t_end - flow->t0) * (double)i / (double)(n_samples - 1);
}

static tf_flow_result run_dopri5(tf_flow *flow, double *x, tf_sample_fn sample, void *sctx,
                                 long n_samples) {
  const size_t n = flow->kernel->dim;
  tf_flow_result res = {.status = TF_MEMBER_OK, .t_final = flow->t0};
  tf_dopri5_setup(flow->stepper, drift_adapter, flow, &flow->ode);
  tf_dopri5_reset(flow->stepper, flow->t0, x);
  double *xs = flow->work;
  long next = 0;
  if (sample && n_samples > 0) sample(sctx, flow->t0, x), next = 1;
  double t = flow->t0;
  while (t < flow->t_end) {
    if (res.steps >= flow->ode.max_steps) {
      res.status = TF_MEMBER_MAX_STEPS;
      break;
    }
    const tf_ode_status st = tf_dopri5_step(flow->stepper, &t, x, flow->t_end);
    res.steps++;
    if (st == TF_ODE_NONFINITE) res.status = TF_MEMBER_NONFINITE;
    if (st == TF_ODE_STEP_UNDERFLOW) res.status = TF_MEMBER_STEP_UNDERFLOW;
    if (st != TF_ODE_OK) break;
    for (; sample && next < n_samples && sample_time(flow, next, n_samples) <= t; next++) {
      const double ts = sample_time(flow, next, n_samples);
      if (ts == t)
        memcpy(xs, x, n * sizeof *xs);
      else
        tf_dopri5_dense(flow->stepper, ts, xs);
      sample(sctx, ts, xs);
    }
  }
  res.t_final = t;
  return res;
}

static tf_flow_result run_sde(tf_flow *flow, uint64_t member, double *x, tf_sample_fn sample,
                              void *sctx, long n_samples) {
  const tf_sde_system sys = {flow->kernel->dim, drift_adapter, diffusion_adapter,
                             flow->kernel->diffusion_dx ? diffusion_dx_adapter : NULL, flow};
  const tf_sde_scheme scheme =
      flow->method == TF_METHOD_MILSTEIN ? TF_SDE_MILSTEIN : TF_SDE_EULER_MARUYAMA;
  const tf_rng_key key = {flow->seed, member};
  tf_flow_result res = {.status = TF_MEMBER_OK, .t_final = flow->t_end};
  const long total = tf_sde_step_count(flow->t0, flow->t_end, flow->dt);
  if (total > flow->ode.max_steps) {
    res.status = TF_MEMBER_MAX_STEPS;
    res.t_final = flow->t0;
    return res;
  }
  if (!sample || n_samples < 2) {
    if (tf_sde_integrate(&sys, scheme, key, flow->t0, flow->t_end, flow->dt, x, flow->work,
                         &res.steps) != TF_SDE_OK)
      res.status = TF_MEMBER_NONFINITE;
    if (sample && n_samples == 1) sample(sctx, flow->t_end, x);
    return res;
  }
  /* Sampling: integrate segment by segment on the same global step grid, so the path (and
   * the noise counters) are those of the unsampled run. */
  const double h = (flow->t_end - flow->t0) / (double)total;
  sample(sctx, flow->t0, x);
  long done = 0;
  for (long i = 1; i < n_samples; i++) {
    const long target = (long)llround((double)total * (double)i / (double)(n_samples - 1));
    long seg_steps = 0;
    if (tf_sde_integrate_range(&sys, scheme, key, flow->t0, h, done, target, x, flow->work,
                               &seg_steps) != TF_SDE_OK) {
      res.status = TF_MEMBER_NONFINITE;
      res.steps = done + seg_steps;
      res.t_final = flow->t0 + (double)res.steps * h;
      return res;
    }
    done = target;
    sample(sctx, i == n_samples - 1 ? flow->t_end : flow->t0 + (double)done * h, x);
  }
  res.steps = done;
  return res;
}

tf_flow_result tf_flow_run_member(tf_flow *flow, uint64_t member, double *x, tf_sample_fn sample,
                                  void *sample_ctx, long n_samples) {
  tf_flow_initial_state(flow, member, x);
  if (!finite_state(x, flow->kernel->dim))
    return (tf_flow_result){.status = TF_MEMBER_NONFINITE, .t_final = flow->t0};
  if (flow->method == TF_METHOD_DOPRI5) return run_dopri5(flow, x, sample, sample_ctx, n_samples);
  return run_sde(flow, member, x, sample, sample_ctx, n_samples);
}
