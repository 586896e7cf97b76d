/* flow.c — config reading and member runs for smooth and SDE kernels, smoothed Filippov
 * kernels (smooth.h) on DOPRI5, PETSc TS (ts.h) or SDE schemes (sde.h), and the noise that
 * `model.noise` adds to a model. */
#include "flow.h"

#include "petsc_start.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "contact_run.h"
#include "crash_point.h"
#include "integrator_settings.h"
#include "kinds.h"
#include "model.h"
#include "rng.h"
#include "rosenbrock.h"
#include "routes.h"
#include "sampling.h"
#include "status.h"

const char *tf_method_name(tf_method m) {
  switch (m) {
    case TF_METHOD_PETSC_TS:
      return "petsc-ts";
    case TF_METHOD_DRIFT_IMPLICIT:
      return "drift-implicit";
    case TF_METHOD_DOPRI5:
      return "dopri5";
    case TF_METHOD_EULER_MARUYAMA:
      return "euler-maruyama";
    case TF_METHOD_MILSTEIN:
      return "milstein";
  }
  return "unknown";
}

const tf_route_ops *tf_flow_route(tf_config *cfg, MPI_Comm comm, const tf_kernel *k) {
  const tf_route_ops *usual = tf_route_ops_for(k, NULL);
  if (!tf_model_route_varies(k)) return usual; /* no parameters change these routes */
  if (tf_smoothing_requested(cfg)) return tf_route_find(TF_ROUTE_SMOOTH_FLOW);
  tf_model model;
  tf_error err;
  const tf_route_ops *route =
      tf_model_from_config(&model, cfg, comm, TF_KINDS_ALL, "ensemble", &err) == 0
          ? tf_route_ops_for(k, model.params)
          : usual;
  tf_model_destroy(&model);
  return route;
}

static int read_model(tf_flow *flow, tf_config *cfg, MPI_Comm comm, tf_error *err) {
  tf_model model;
  const tf_kernel *k;
  if (tf_model_kernel(cfg, comm, &k, err)) return -1;
  const bool filippov = k && k->kind == TF_MODEL_FILIPPOV;
  const int rc = tf_model_from_config(&model, cfg, comm, TF_KINDS_CONTINUOUS, "ensemble", err);
  flow->kernel = model.kernel;
  flow->params = model.params;
  if (!rc && !filippov && tf_smoothing_requested(cfg))
    return tf_smoothing_from_config(cfg, k, &flow->smoothing, err); /* says why not */
  if (rc || !filippov) return rc;
  char where[256];
  const bool self_smoothed = tf_model_self_smoothed(k, flow->params);
  if (tf_smoothing_requested(cfg)) {
    if (self_smoothed)
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'model.smoothing': model '%s' is already smoothed by its own "
                          "parameters; set its smoothing parameter to 0 or drop model.smoothing",
                          tf_config_where(cfg, "model.smoothing", where, sizeof where), k->name);
    flow->smoothing_on = true;
    if (tf_smoothing_from_config(cfg, k, &flow->smoothing, err)) return -1;
    const tf_filippov_ops *ops = flow->kernel->filippov;
    if (flow->smoothing.field == TF_SMOOTH_CONVEX && ops->continued && ops->continued(flow->params))
      return tf_fail_code(
          err, TF_ERR_CONFIG,
          "%s: key 'model.params': with these parameters model '%s' continues its slip fields "
          "past Sigma for event-driven steps (e.g. the wheel's continuation: 1), not by its law; "
          "model.smoothing's convex field combines both sides' fields at every state and would "
          "smooth that continuation: leave it at 0 here",
          tf_config_where(cfg, "model.params", where, sizeof where), k->name);
    return 0;
  }
  if (!self_smoothed)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.name': model '%s' is a Filippov system; add a "
                        "model.smoothing section (law, epsilon) to run it as a smooth flow",
                        tf_config_where(cfg, "model.name", where, sizeof where), k->name);
  return 0;
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

static int read_initial(tf_flow *flow, tf_config *cfg, tf_error *err) {
  flow->x0 = calloc(flow->kernel->dim, sizeof *flow->x0);
  if (!flow->x0) return tf_fail(err, "out of memory");
  return tf_initial_from_config(cfg, flow->kernel, flow->x0, &flow->spread, &flow->t0, err);
}

/* "v, omega" (empty: every component) into flags. */
static int parse_components(tf_config *cfg, const tf_kernel *k, const char *list, bool *on,
                            tf_error *err) {
  char buf[256], where[256];
  snprintf(buf, sizeof buf, "%s", list);
  bool any = false;
  for (char *save = NULL, *tok = strtok_r(buf, " ,", &save); tok;
       tok = strtok_r(NULL, " ,", &save)) {
    const int i = tf_kernel_state_index(k, tok);
    if (i < 0) {
      char names[256];
      tf_join_state_names(k, names, sizeof names);
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'model.noise.components': model '%s' has no state "
                          "component '%s' (components: %s)",
                          tf_config_where(cfg, "model.noise.components", where, sizeof where),
                          k->name, tok, names);
    }
    on[i] = any = true;
  }
  if (!any)
    for (size_t i = 0; i < k->dim; i++) on[i] = true;
  return 0;
}

/* model.noise: where the noise enters, its size and form. */
static int read_noise(tf_flow *flow, tf_config *cfg, tf_error *err) {
  static const char *const targets[] = {"state", "friction", "parameter", NULL};
  static const char *const forms[] = {"additive", "multiplicative", NULL};
  const tf_kernel *k = flow->kernel;
  tf_noise *nz = &flow->noise;
  char where[256];
  if (!tf_config_has(cfg, "model.noise")) return 0;
  const char *target, *form;
  if (tf_config_get_string(cfg, "model.noise.on", NULL, targets, &target, err) ||
      tf_config_get_string(cfg, "model.noise.form", "additive", forms, &form, err) ||
      tf_config_get_double(cfg, "model.noise.sigma", NULL, 0.0, INFINITY, &nz->sigma, err))
    return -1;
  nz->multiplicative = strcmp(form, "multiplicative") == 0;
  if (k->dim > TF_MAX_DIM)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.noise': model '%s' has %zu components; model.noise "
                        "supports at most %d",
                        tf_config_where(cfg, "model.noise", where, sizeof where), k->name, k->dim,
                        TF_MAX_DIM);
  if (tf_model_diffusion(k) &&
      tf_kernel_is_noisy(k, flow->x0 ? flow->x0 : k->initial, flow->params))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.noise': model '%s' already has noise with these "
                        "parameters; set its own noise parameter to 0 to use model.noise",
                        tf_config_where(cfg, "model.noise", where, sizeof where), k->name);
  if (strcmp(target, "state") == 0) {
    nz->target = TF_NOISE_STATE;
    const char *list;
    if (tf_config_get_string(cfg, "model.noise.components", "", NULL, &list, err)) return -1;
    return parse_components(cfg, k, list, nz->component, err);
  }
  if (strcmp(target, "friction") == 0) {
    nz->target = TF_NOISE_FRICTION;
    if (!flow->smoothing_on)
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'model.noise.on': noise on the friction law perturbs the "
                          "multiplier of a smoothed Filippov model; model '%s' needs a "
                          "model.smoothing section for it",
                          tf_config_where(cfg, "model.noise.on", where, sizeof where), k->name);
    return 0;
  }
  nz->target = TF_NOISE_PARAMETER;
  const char *pname;
  if (tf_config_get_string(cfg, "model.noise.parameter", NULL, NULL, &pname, err)) return -1;
  nz->parameter = tf_kernel_param_index(k, pname);
  if (nz->parameter < 0) {
    char known[512] = "";
    for (size_t i = 0; i < k->nparams; i++)
      snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
               k->params[i].name);
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.noise.parameter': model '%s' has no parameter '%s' "
                        "(known: %s)",
                        tf_config_where(cfg, "model.noise.parameter", where, sizeof where), k->name,
                        pname, known);
  }
  return 0;
}

static bool has_noise(const tf_flow *flow) {
  return (flow->noise.target != TF_NOISE_NONE && flow->noise.sigma > 0) ||
         tf_kernel_is_noisy(flow->kernel, flow->x0, flow->params);
}

static int read_ts(tf_flow *flow, tf_config *cfg, MPI_Comm comm, tf_integrator_settings *set,
                   tf_error *err) {
  if (tf_petsc_require(comm, err) || tf_integrator_ts_read(cfg, set, err)) return -1;
  flow->ts = set->ts;
  flow->batch = set->ts_batch;
  /* the ensemble size bounds the last batch (the ensemble job's default, 1000, also for
   * jobs that trace one member of an ensemble config, so their batches are the same) */
  const long long d_members = 1000;
  long long members;
  char where[256];
  if (tf_config_get_int(cfg, "ensemble.members", &d_members, 1, 1000000000LL, &members, err))
    return -1;
  flow->members = (uint64_t)members;
  const bool analytic = flow->smoothing_on ? tf_smooth_has_jacobian(flow->kernel, &flow->smoothing)
                                           : tf_model_jacobian(flow->kernel) != NULL;
  if (set->ts_jacobian == TF_TS_JACOBIAN_ANALYTIC && !analytic)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'integrator.ts.jacobian': model '%s' gives no analytic "
                        "Jacobian%s; use fd (finite differences with colouring) or auto",
                        tf_config_where(cfg, "integrator.ts.jacobian", where, sizeof where),
                        flow->kernel->name, flow->smoothing_on ? " for this smoothing field" : "");
  flow->ts.fd_jacobian = set->ts_jacobian == TF_TS_JACOBIAN_FD || !analytic;
  flow->ts.ode = flow->ode;
  if (tf_ts_check(&flow->ts, flow->ts_type, sizeof flow->ts_type, err)) {
    char msg[TF_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: key 'integrator.ts.type': %s",
                        tf_config_where(cfg, "integrator.ts.type", where, sizeof where), msg);
  }
  /* What the command line changed goes into the config as run (and its fingerprint). */
  char effective[sizeof flow->ts.options];
  tf_ts_effective_options(effective, sizeof effective);
  return tf_integrator_ts_record(cfg, set, flow->ts_type, effective, err);
}

/* auto's method for a smoothed (stiff) deterministic member small enough for a dense LU: the
 * Rosenbrock stepper (integrator.rosenbrock, RODAS4 unless it says otherwise), one member at a
 * time with its own steps (PETSc TS takes larger systems): on the smoothed wheel it is faster
 * than PETSc TS in batches at matched accuracy (docs/BENCHMARKS.md, bench/section_stiff.sh). */
static int auto_rosenbrock(tf_flow *flow, tf_config *cfg, tf_integrator_settings *set,
                           tf_error *err) {
  if (tf_integrator_auto_rosenbrock_read(cfg, set, err)) return -1;
  flow->method = TF_METHOD_DOPRI5; /* the stepper seam's types (flow->ode.type) */
  flow->ode.type = set->ode.type;
  return 0;
}

/* integrator.normals, read only where given (the config as run then lists it): the Wiener
 * increments of SDE members, exact (libm) or fast (rng.h).  A deterministic method draws
 * none, so `fast` there is a mistake worth naming. */
static int read_normals(tf_flow *flow, tf_config *cfg, tf_integrator_settings *set, bool sde,
                        tf_error *err) {
  if (tf_integrator_normals_read(cfg, set, err)) return -1;
  flow->fast_normals = set->fast_normals;
  if (flow->fast_normals && !sde)
    return tf_config_fail_key(cfg, "integrator.normals", err,
                              "%s draws no normals (integrator.normals: fast is for the SDE "
                              "methods euler-maruyama, milstein and drift-implicit); remove the "
                              "key",
                              tf_method_name(flow->method));
  return 0;
}

static int read_integrator(tf_flow *flow, tf_config *cfg, MPI_Comm comm, tf_error *err) {
  tf_integrator_settings set;
  if (tf_integrator_settings_read(cfg, flow->t0, true, true, &set, err)) return -1;
  flow->dt = set.dt;
  const char *method = set.method;
  tf_integrator_take_ode(&set, &flow->ode);
  flow->t_end = set.t_end;
  flow->lanes = set.lanes;
  char where[256];
  const bool noisy = has_noise(flow);
  const bool smoothed = flow->kernel->kind == TF_MODEL_FILIPPOV;
  if (strcmp(method, "auto") == 0 && smoothed && !noisy && flow->kernel->dim <= TF_ROS_MAX_DIM) {
    if (auto_rosenbrock(flow, cfg, &set, err)) return -1;
  } else if (strcmp(method, "auto") == 0)
    flow->method = noisy ? (smoothed ? TF_METHOD_DRIFT_IMPLICIT : TF_METHOD_EULER_MARUYAMA)
                         : (smoothed ? TF_METHOD_PETSC_TS : TF_METHOD_DOPRI5);
  else if (flow->ode.type)
    flow->method = TF_METHOD_DOPRI5;
  else if (strcmp(method, "euler-maruyama") == 0)
    flow->method = TF_METHOD_EULER_MARUYAMA;
  else if (strcmp(method, "milstein") == 0)
    flow->method = TF_METHOD_MILSTEIN;
  else if (strcmp(method, "drift-implicit") == 0)
    flow->method = TF_METHOD_DRIFT_IMPLICIT;
  else
    flow->method = TF_METHOD_PETSC_TS;
  const bool sde = flow->method == TF_METHOD_EULER_MARUYAMA || flow->method == TF_METHOD_MILSTEIN ||
                   flow->method == TF_METHOD_DRIFT_IMPLICIT;
  if (flow->ode.fixed_step && flow->method != TF_METHOD_DOPRI5)
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'integrator.step': fixed steps are the explicit pairs' (integrator.method "
        "dopri5 or dop853); %s controls its own steps (the SDE methods: integrator.dt)",
        tf_config_where(cfg, "integrator.step", where, sizeof where), tf_method_name(flow->method));
  if (flow->ode.fast_control && flow->method != TF_METHOD_DOPRI5)
    return tf_fail(err,
                   "%s: key 'integrator.controller_math': %s has no step-size controller of "
                   "twofold's (the SDE methods step by integrator.dt, petsc-ts controls its own "
                   "steps); remove the key",
                   tf_config_where(cfg, "integrator.controller_math", where, sizeof where),
                   tf_method_name(flow->method));
  if (!sde && noisy)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'integrator.method': model '%s' has noise with these parameters, "
                        "but %s is deterministic; use euler-maruyama, milstein or drift-implicit "
                        "(or auto)",
                        tf_config_where(cfg, "integrator.method", where, sizeof where),
                        flow->kernel->name,
                        flow->method == TF_METHOD_DOPRI5 ? tf_stepper_type_name(flow->ode.type)
                                                         : tf_method_name(flow->method));
  const bool model_noise = flow->noise.target != TF_NOISE_NONE;
  if (sde && !tf_model_diffusion(flow->kernel) && !model_noise)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'integrator.method': model '%s' has no noise term; use dopri5 or "
                        "petsc-ts (or add model.noise)",
                        tf_config_where(cfg, "integrator.method", where, sizeof where),
                        flow->kernel->name);
  if (flow->method == TF_METHOD_MILSTEIN && !model_noise && !tf_model_diffusion_dx(flow->kernel))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'integrator.method': model '%s' gives no noise derivative "
                        "needed by milstein; use euler-maruyama",
                        tf_config_where(cfg, "integrator.method", where, sizeof where),
                        flow->kernel->name);
  if (flow->method == TF_METHOD_DRIFT_IMPLICIT) {
    if (tf_integrator_drift_implicit_read(cfg, &set, err)) return -1;
    flow->theta = set.theta;
    if (set.milstein && !model_noise && !tf_model_diffusion_dx(flow->kernel))
      return tf_fail_code(
          err, TF_ERR_CONFIG, "%s: key 'integrator.milstein': model '%s' gives no noise derivative",
          tf_config_where(cfg, "integrator.milstein", where, sizeof where), flow->kernel->name);
    flow->implicit_milstein = set.milstein;
    if (flow->kernel->dim > TF_MAX_DIM)
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'integrator.method': drift-implicit supports at most %d state "
                          "components",
                          tf_config_where(cfg, "integrator.method", where, sizeof where),
                          TF_MAX_DIM);
  }
  if (read_normals(flow, cfg, &set, sde, err)) return -1;
  if (tf_rosenbrock_tableau(flow->ode.type) && flow->kernel->dim > TF_ROS_MAX_DIM)
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'integrator.method': rosenbrock supports at most %d state components "
        "(model '%s' has %zu); use petsc-ts",
        tf_config_where(cfg, "integrator.method", where, sizeof where), TF_ROS_MAX_DIM,
        flow->kernel->name, flow->kernel->dim);
  if (flow->method == TF_METHOD_PETSC_TS) return read_ts(flow, cfg, comm, &set, err);
  /* a config written for TS and run with another method (--set integrator.method=...) */
  tf_config_mark_used(cfg, "integrator.ts");
  return 0;
}

/* Impact kernels, and flows whose state is recorded at events, run on the impact engine:
 * deterministic DOPRI5 only. */
static int read_events(tf_flow *flow, tf_config *cfg, tf_error *err) {
  const tf_kernel *k = flow->kernel;
  const bool impacts = tf_route_ops_for(k, NULL)->impacts;
  const bool contact = tf_contact_kernel(k);
  const bool events = impacts || tf_config_has(cfg, "poincare.event");
  /* integrator.landing dense is taken where its accuracy was measured, the impact engine's
   * events (docs/CONFIG.md); a contact body's slip field has a kink at its events, as the
   * wheel's has, where the step's dense output is not accurate */
  if (flow->ode.dense_landing && (contact || !events))
    return tf_config_fail_key(
        cfg, "integrator.landing", err,
        "dense is for the events of impact models and of flows recorded at poincare.event; "
        "model '%s' %s; remove the key",
        k->name,
        contact ? "is a body under spatial friction, whose slip field has a kink at its events, "
                  "where the step's dense output is not accurate"
                : "has no events here");
  if (!events) return 0;
  /* bodies under spatial friction record the section on their own engine (member_contact.c) */
  if (contact) return 0;
  char where[256];
  if (flow->method != TF_METHOD_DOPRI5 || has_noise(flow) || flow->smoothing_on)
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'integrator.method': model '%s' %s runs on the event-driven DOPRI5 "
        "integrator only (no noise, smoothing or other method)",
        tf_config_where(cfg, impacts ? "integrator.method" : "poincare.event", where, sizeof where),
        k->name, impacts ? "has impacts and" : "recorded at events");
  if (tf_poincare_from_config(&flow->poincare_spec, cfg, k, &flow->ode, err)) return -1;
  flow->poincare = tf_poincare_create(k, &flow->poincare_spec);
  if (flow->poincare_spec.record)
    flow->poincare_rec.samples =
        calloc((size_t)flow->poincare_spec.count * (1 + k->dim), sizeof(double));
  if (!flow->poincare || (flow->poincare_spec.record && !flow->poincare_rec.samples))
    return tf_fail(err, "out of memory");
  return 0;
}

int tf_flow_from_config(tf_flow *flow, tf_config *cfg, MPI_Comm comm, tf_stop_token *stop,
                        tf_error *err) {
  memset(flow, 0, sizeof *flow);
  flow->ode = tf_ode_default_options();
  flow->ode.stop = stop; /* before the PETSc TS settings and the impact engine copy it */
  long long seed;
  const long long d_seed = 1;
  flow->batch_id = -1;
  if (read_model(flow, cfg, comm, err) || read_initial(flow, cfg, err) ||
      read_noise(flow, cfg, err) || read_integrator(flow, cfg, comm, err) ||
      tf_config_get_int(cfg, "ensemble.seed", &d_seed, 0, LLONG_MAX, &seed, err))
    return -1;
  flow->seed = (uint64_t)seed;
  if (read_events(flow, cfg, err)) return -1;
  flow->stepper = tf_stepper_create(flow->kernel->dim);
  flow->work = calloc(4 * flow->kernel->dim, sizeof *flow->work);
  flow->noise_params = calloc(flow->kernel->nparams + 1, sizeof *flow->noise_params);
  if (!flow->stepper || !flow->work || !flow->noise_params) return tf_fail(err, "out of memory");
  memcpy(flow->noise_params, flow->params, flow->kernel->nparams * sizeof *flow->params);
  if (flow->method == TF_METHOD_PETSC_TS && flow->batch > 1) {
    const size_t n = flow->kernel->dim, b = (size_t)flow->batch;
    flow->batch_x0 = calloc(n * b, sizeof *flow->batch_x0);
    flow->batch_x = calloc(n * b, sizeof *flow->batch_x);
    flow->batch_res = calloc(b, sizeof *flow->batch_res);
    if (!flow->batch_x0 || !flow->batch_x || !flow->batch_res)
      return tf_fail(err, "out of memory for a batch of %ld members", flow->batch);
  }
  return 0;
}

const char *tf_flow_integrator_name(const tf_flow *flow) {
  static _Thread_local char name[96];
  if (flow->method == TF_METHOD_DOPRI5) return tf_stepper_type_name(flow->ode.type);
  if (flow->method != TF_METHOD_PETSC_TS) return tf_method_name(flow->method);
  snprintf(name, sizeof name, "petsc-ts/%s", flow->ts_type);
  return name;
}

void tf_flow_destroy(tf_flow *flow) {
  tf_poincare_destroy(flow->poincare);
  free(flow->poincare_rec.samples);
  tf_stepper_destroy(flow->stepper);
  free(flow->work);
  free(flow->params);
  free(flow->x0);
  free(flow->noise_params);
  free(flow->batch_x0);
  free(flow->batch_x);
  free(flow->batch_res);
  free(flow->batch_samples);
  free(flow->batch_sample_t);
  free(flow->batch_sampled);
  memset(flow, 0, sizeof *flow);
}

void tf_initial_state_of(const tf_sampling *sampling, const double *x0, size_t n, double spread,
                         uint64_t seed, uint64_t member, double *x) {
  if (sampling && tf_sampling_state(sampling, member, x)) return;
  memcpy(x, x0, n * sizeof *x);
  if (spread > 0) {
    double z[TF_MAX_DIM];
    tf_rng_normals((tf_rng_key){seed, member}, 0, TF_RNG_INITIAL, n, z);
    for (size_t i = 0; i < n; i++) x[i] += spread * z[i];
  }
}

void tf_flow_initial_state(const tf_flow *flow, uint64_t member, double *x) {
  tf_initial_state_of(flow->sampling, flow->x0, flow->kernel->dim, flow->spread, flow->seed, member,
                      x);
}

/* Adapters from the kernel's (t, x, p) signature to the integrators' (t, x, ctx). */
/* The field callbacks' refusals are kept in flow->model_code (the first fatal one wins), for
 * the SDE schemes, which stop at one without saying which. */
static int noted(tf_flow *flow, int code) {
  flow->model_code = tf_model_code_join(flow->model_code, code);
  return code;
}
int tf_flow_drift(double t, const double *x, void *ctx, double *dx) {
  tf_flow *flow = ctx;
  return noted(flow, flow->smoothing_on
                         ? tf_smooth_rhs(flow->kernel, flow->params, &flow->smoothing, t, x, dx)
                         : tf_model_rhs(flow->kernel)(t, x, flow->params, dx));
}
void tf_flow_jacobian(double t, const double *x, void *ctx, double *jac) {
  const tf_flow *flow = ctx;
  if (flow->smoothing_on)
    tf_smooth_jacobian(flow->kernel, flow->params, &flow->smoothing, t, x, jac);
  else
    tf_model_jacobian(flow->kernel)(t, x, flow->params, jac);
}
bool tf_flow_has_jacobian(const tf_flow *flow) {
  return flow->smoothing_on ? tf_smooth_has_jacobian(flow->kernel, &flow->smoothing)
                            : tf_model_jacobian(flow->kernel) != NULL;
}
static int diffusion_adapter(double t, const double *x, void *ctx, double *g) {
  tf_flow *flow = ctx;
  if (flow->noise.target != TF_NOISE_STATE)
    return noted(flow, tf_model_diffusion(flow->kernel)(t, x, flow->params, g));
  for (size_t i = 0; i < flow->kernel->dim; i++)
    g[i] = !flow->noise.component[i]    ? 0.0
           : flow->noise.multiplicative ? flow->noise.sigma * x[i]
                                        : flow->noise.sigma;
  return 0;
}
static int diffusion_dx_adapter(double t, const double *x, void *ctx, double *dg) {
  tf_flow *flow = ctx;
  if (flow->noise.target != TF_NOISE_STATE)
    return noted(flow, tf_model_diffusion_dx(flow->kernel)(t, x, flow->params, dg));
  for (size_t i = 0; i < flow->kernel->dim; i++)
    dg[i] = flow->noise.component[i] && flow->noise.multiplicative ? flow->noise.sigma : 0.0;
  return 0;
}
/* One noise source along a direction of the field: the multiplier or a parameter. */
static int noise_column_adapter(double t, const double *x, void *ctx, double *g) {
  tf_flow *flow = ctx;
  const tf_noise *nz = &flow->noise;
  const size_t n = flow->kernel->dim;
  if (nz->target == TF_NOISE_FRICTION) {
    const int rc =
        tf_smooth_lambda_direction(flow->kernel, flow->params, &flow->smoothing, t, x, g);
    const double lambda = tf_smooth_sign(
        &flow->smoothing, flow->kernel->filippov->switching(x, flow->params, NULL), NULL);
    const double scale = nz->multiplicative ? nz->sigma * lambda : nz->sigma;
    for (size_t i = 0; i < n; i++) g[i] *= scale;
    return noted(flow, rc);
  }
  /* d f / d p_k by central differences on a copy of the parameters */
  double fp[TF_MAX_DIM], fm[TF_MAX_DIM];
  const int k = nz->parameter;
  const double pk = flow->params[k], step = 1e-6 * fmax(1.0, fabs(pk));
  double *p = flow->noise_params;
  p[k] = pk + step;
  int rc = flow->smoothing_on ? tf_smooth_rhs(flow->kernel, p, &flow->smoothing, t, x, fp)
                              : tf_model_rhs(flow->kernel)(t, x, p, fp);
  p[k] = pk - step;
  rc = tf_model_code_join(rc, flow->smoothing_on
                                  ? tf_smooth_rhs(flow->kernel, p, &flow->smoothing, t, x, fm)
                                  : tf_model_rhs(flow->kernel)(t, x, p, fm));
  p[k] = pk;
  const double scale = nz->multiplicative ? nz->sigma * pk : nz->sigma;
  for (size_t i = 0; i < n; i++) g[i] = scale * (fp[i] - fm[i]) / (2 * step);
  return noted(flow, rc);
}

static bool finite_state(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return false;
  return true;
}

double tf_flow_sample_time(const tf_flow *flow, long i, long n_samples) {
  if (n_samples <= 1) return flow->t_end;
  return i == n_samples - 1
             ? flow->t_end
             : flow->t0 + (flow->t_end - flow->t0) * (double)i / (double)(n_samples - 1);
}

/* The samples a flow writes while it is driven: those whose times the last step passed. */
typedef struct flow_samples {
  tf_flow *flow;
  tf_sample_fn fn;
  void *ctx;
  long n, next;
  tf_flow_result *res;
} flow_samples;

static int take_samples(void *ctx, const tf_stepper *s, double ta, double t, const double *x) {
  flow_samples *fs = ctx;
  tf_flow *flow = fs->flow;
  if (flow->on_step) flow->on_step(flow->on_step_ctx, ta, t);
  double *xs = flow->work;
  for (; fs->fn && fs->next < fs->n && tf_flow_sample_time(flow, fs->next, fs->n) <= t;
       fs->next++) {
    const double ts = tf_flow_sample_time(flow, fs->next, fs->n);
    if (ts == t)
      memcpy(xs, x, flow->kernel->dim * sizeof *xs);
    else
      tf_stepper_dense(s, ts, xs);
    fs->fn(fs->ctx, ts, xs);
    if (tf_stop_point(flow->ode.stop)) { /* told to stop at a sample (checkpoint.h) */
      fs->res->t_final = ts;
      if (fs->next + 1 < fs->n) fs->res->status = TF_MEMBER_PENDING;
      return 1;
    }
  }
  return 0;
}

/* The integration from *t = t0; *t and x are the published state (crash_point.h). */
static tf_flow_result dopri5_loop(tf_flow *flow, double *t, double *x, tf_sample_fn sample,
                                  void *sctx, long n_samples) {
  tf_flow_result res = {.status = TF_MEMBER_OK, .t_final = flow->t0};
  tf_stepper_setup(flow->stepper, tf_flow_drift, flow, &flow->ode);
  if (tf_flow_has_jacobian(flow)) tf_stepper_set_jacobian(flow->stepper, tf_flow_jacobian);
  tf_stepper_set_autonomous(flow->stepper, flow->kernel->autonomous);
  tf_stepper_reset(flow->stepper, flow->t0, x);
  flow_samples fs = {flow, sample, sctx, n_samples, 0, &res};
  if (sample && n_samples > 0) sample(sctx, flow->t0, x), fs.next = 1;
  tf_stop_token *stop = flow->ode.stop;
  if (sample && n_samples > 0 && tf_stop_point(stop)) {
    if (n_samples > 1) res.status = TF_MEMBER_PENDING;
    return res;
  }
  tf_drive d = {
      .max_steps = flow->ode.max_steps, .stop = stop, .accepted = take_samples, .ctx = &fs};
  tf_ode_status st;
  const tf_drive_end end = tf_stepper_drive(flow->stepper, t, x, flow->t_end, &d, &st);
  res.work.steps = d.steps;
  if (end == TF_DRIVE_HOOK_ENDED) return res;
  if (end == TF_DRIVE_STOPPED) res.status = TF_MEMBER_PENDING; /* told to stop: not done */
  if (end == TF_DRIVE_FAILED)
    res.status =
        st == TF_ODE_MODEL_FAILED
            ? tf_kernel_member_failed(flow->kernel, tf_stepper_model_code(flow->stepper), *t)
            : tf_member_status_of_step(st);
  res.t_final = *t;
  return res;
}

static tf_flow_result run_dopri5(tf_flow *flow, double *x, tf_sample_fn sample, void *sctx,
                                 long n_samples) {
  double t = flow->t0;
  tf_crash_point_publish(&t, x, (int)flow->kernel->dim);
  tf_flow_result res = dopri5_loop(flow, &t, x, sample, sctx, n_samples);
  tf_crash_point_publish(NULL, NULL, 0);
  const long steps = res.work.steps;
  res.work = tf_stepper_stats(flow->stepper);
  res.work.steps = steps; /* the drive's */
  return res;
}

/* The member status of an SDE run stopped at t. */
static int sde_status(tf_flow *flow, tf_sde_status st, double t) {
  if (st == TF_SDE_MODEL_FAILED) return tf_kernel_member_failed(flow->kernel, flow->model_code, t);
  return st == TF_SDE_NEWTON_FAILED ? TF_MEMBER_STEP_UNDERFLOW : TF_MEMBER_NONFINITE;
}

/* An SDE scheme's step k of the grid t0 + k h (the last ending at t_end, as the samples do):
 * its ends are what tf_flow_dense interpolates. */
static void sde_step_seen(void *ctx, long k, const double *xa, const double *xb) {
  tf_flow *flow = ctx;
  const size_t n = flow->kernel->dim;
  flow->sde_t[0] = flow->t0 + (double)k * flow->sde_h;
  flow->sde_t[1] =
      k + 1 == flow->sde_total ? flow->t_end : flow->t0 + (double)(k + 1) * flow->sde_h;
  memcpy(flow->sde_x[0], xa, n * sizeof *xa), memcpy(flow->sde_x[1], xb, n * sizeof *xb);
  flow->on_step(flow->on_step_ctx, flow->sde_t[0], flow->sde_t[1]);
}

static tf_flow_result run_sde(tf_flow *flow, uint64_t member, double *x, tf_sample_fn sample,
                              void *sctx, long n_samples) {
  const bool column =
      flow->noise.target == TF_NOISE_FRICTION || flow->noise.target == TF_NOISE_PARAMETER;
  const bool state_dx = flow->noise.target == TF_NOISE_STATE || tf_model_diffusion_dx(flow->kernel);
  const tf_sde_system sys = {.n = flow->kernel->dim,
                             .drift = tf_flow_drift,
                             .diffusion = diffusion_adapter,
                             .diffusion_dx = state_dx ? diffusion_dx_adapter : NULL,
                             .ctx = flow,
                             .m = column ? 1 : 0,
                             .noise = column ? noise_column_adapter : NULL,
                             .drift_jacobian = tf_flow_has_jacobian(flow) ? tf_flow_jacobian : NULL,
                             .theta = flow->theta,
                             .fast_normals = flow->fast_normals,
                             .accepted = flow->on_step ? sde_step_seen : NULL};
  tf_sde_scheme scheme = TF_SDE_EULER_MARUYAMA;
  if (flow->method == TF_METHOD_MILSTEIN) scheme = TF_SDE_MILSTEIN;
  if (flow->method == TF_METHOD_DRIFT_IMPLICIT)
    scheme = flow->implicit_milstein ? TF_SDE_DRIFT_IMPLICIT_MILSTEIN : TF_SDE_DRIFT_IMPLICIT;
  const tf_rng_key key = {flow->seed, member};
  flow->model_code = 0;
  tf_flow_result res = {.status = TF_MEMBER_OK, .t_final = flow->t_end};
  const long total = tf_sde_step_count(flow->t0, flow->t_end, flow->dt);
  flow->sde_total = total, flow->sde_h = total > 0 ? (flow->t_end - flow->t0) / (double)total : 0;
  flow->sde_t[0] = flow->sde_t[1] = flow->t0;
  if (total > flow->ode.max_steps) {
    res.status = TF_MEMBER_MAX_STEPS;
    res.t_final = flow->t0;
    return res;
  }
  if (!sample || n_samples < 2) {
    const tf_sde_status st = tf_sde_integrate(&sys, scheme, key, flow->t0, flow->t_end, flow->dt, x,
                                              flow->work, &res.work.steps);
    if (st != TF_SDE_OK) {
      res.t_final = flow->t0 + (flow->t_end - flow->t0) * (double)res.work.steps /
                                   (double)(total > 0 ? total : 1);
      res.status = sde_status(flow, st, res.t_final);
    }
    if (sample && n_samples == 1) sample(sctx, flow->t_end, x);
    return res;
  }
  /* Sampling: integrate segment by segment on the same global step grid, so the path (and
   * the noise counters) are those of the unsampled run. */
  const double h = (flow->t_end - flow->t0) / (double)total;
  sample(sctx, flow->t0, x);
  tf_stop_token *stop = flow->ode.stop;
  if (tf_stop_point(stop)) return res.t_final = flow->t0, res.status = TF_MEMBER_PENDING, res;
  long done = 0;
  for (long i = 1; i < n_samples; i++) {
    const long target = (long)llround((double)total * (double)i / (double)(n_samples - 1));
    long seg_steps = 0;
    const tf_sde_status st = tf_sde_integrate_range(&sys, scheme, key, flow->t0, h, done, target, x,
                                                    flow->work, &seg_steps);
    if (st != TF_SDE_OK) {
      res.work.steps = done + seg_steps;
      res.t_final = flow->t0 + (double)res.work.steps * h;
      res.status = sde_status(flow, st, res.t_final);
      return res;
    }
    done = target;
    sample(sctx, i == n_samples - 1 ? flow->t_end : flow->t0 + (double)done * h, x);
    if (tf_stop_point(stop)) {
      if (i + 1 < n_samples) res.status = TF_MEMBER_PENDING;
      break;
    }
  }
  res.work.steps = done;
  return res;
}

/* PETSc TS on `count` members at once (x: count x dim); samples go out for one slot. */
typedef struct ts_sample_ctx {
  tf_sample_fn fn;
  void *ctx;
  size_t offset;
} ts_sample_ctx;
static void ts_sample(void *ctx, double t, const double *x) {
  const ts_sample_ctx *c = ctx;
  c->fn(c->ctx, t, x + c->offset);
}

/* A PETSc TS step seen by on_step: tf_flow_dense interpolates the member's slot inside it. */
static void ts_step_seen(void *ctx, double ta, double tb, const tf_ts_step *s) {
  tf_flow *flow = ctx;
  flow->ts_step = s, flow->ts_t[0] = ta, flow->ts_t[1] = tb;
  flow->on_step(flow->on_step_ctx, ta, tb);
  flow->ts_step = NULL;
}

/* tf_ts_solve of `count` members in x; `watched`: on_step sees the solve's steps, tf_flow_dense
 * giving the state of member `slot`, whose samples go out. */
static int solve_ts(tf_flow *flow, size_t count, double *x, size_t slot, bool watched,
                    tf_sample_fn sample, void *sctx, long n_samples, tf_ts_stats *st,
                    tf_error *err) {
  const tf_ts_problem pb = {flow->kernel->dim, tf_flow_drift,
                            tf_flow_has_jacobian(flow) ? tf_flow_jacobian : NULL, flow};
  ts_sample_ctx sc = {sample, sctx, slot * flow->kernel->dim};
  tf_ts_settings set = flow->ts;
  if (watched && flow->on_step) set.on_step = ts_step_seen, set.on_step_ctx = flow;
  flow->ts_slot = slot;
  return tf_ts_solve(&pb, &set, count, flow->t0, flow->t_end, x, sample ? ts_sample : NULL, &sc,
                     n_samples, st, err);
}

static tf_flow_result run_ts(tf_flow *flow, size_t count, double *x, size_t slot, bool watched,
                             tf_sample_fn sample, void *sctx, long n_samples) {
  tf_ts_stats st;
  tf_error err;
  const int rc = solve_ts(flow, count, x, slot, watched, sample, sctx, n_samples, &st, &err);
  tf_flow_result res = {
      .status = rc < 0 ? TF_MEMBER_FAILED : rc, .t_final = flow->t_end, .work = st.work};
  if (rc < 0) fprintf(stderr, "twofold: %s\n", err.msg);
  if (res.status != TF_MEMBER_OK) res.t_final = rc < 0 ? flow->t0 : st.t_reached;
  /* a batch that fails is run again member by member: each says why for itself */
  if (st.model_code && count == 1)
    tf_kernel_member_failed(flow->kernel, st.model_code, res.t_final);
  return res;
}

/* Samples of a batch solve, kept for every member of the batch: sample i of slot j at
 * batch_samples[(i * batch + j) * dim].  `slot` < 0 records every slot of a batch solve,
 * otherwise the single member solved into that slot. */
typedef struct batch_recorder {
  tf_flow *flow;
  long slot;
  size_t count;
} batch_recorder;
static void record_batch(void *ctx, double t, const double *x) {
  batch_recorder *r = ctx;
  tf_flow *flow = r->flow;
  const size_t n = flow->kernel->dim, full = (size_t)flow->batch;
  const size_t first = r->slot < 0 ? 0 : (size_t)r->slot;
  const size_t last = r->slot < 0 ? r->count : first + 1;
  for (size_t j = first; j < last; j++) {
    const long i = flow->batch_sampled[j]++;
    if (i >= flow->batch_n_samples) continue;
    flow->batch_sample_t[i] = t;
    memcpy(flow->batch_samples + ((size_t)i * full + j) * n, x + (r->slot < 0 ? j * n : 0),
           n * sizeof *x);
  }
}

static int ensure_sample_buffers(tf_flow *flow, long n_samples) {
  if (n_samples <= flow->batch_n_alloc) return 0;
  const size_t n = flow->kernel->dim, full = (size_t)flow->batch;
  free(flow->batch_samples);
  free(flow->batch_sample_t);
  free(flow->batch_sampled);
  flow->batch_samples = malloc((size_t)n_samples * full * n * sizeof *flow->batch_samples);
  flow->batch_sample_t = malloc((size_t)n_samples * sizeof *flow->batch_sample_t);
  flow->batch_sampled = calloc(full, sizeof *flow->batch_sampled);
  flow->batch_n_alloc =
      flow->batch_samples && flow->batch_sample_t && flow->batch_sampled ? n_samples : 0;
  return flow->batch_n_alloc ? 0 : -1;
}

/* on_step for a member of a batch: the solve that gave its result (its batch's, or its own
 * where the batch failed) once more, bit for bit, with on_step watching the member's slot. */
static void solve_again_watched(tf_flow *flow, uint64_t first, size_t b, size_t slot) {
  const size_t n = flow->kernel->dim, count = flow->batch_whole ? b : 1;
  double *x = calloc(count * n, sizeof *x);
  tf_ts_stats st;
  tf_error err;
  if (!x) return;
  for (size_t i = 0; i < count; i++)
    tf_flow_initial_state(flow, first + (flow->batch_whole ? i : slot), x + i * n);
  if (finite_state(x, count * n))
    solve_ts(flow, count, x, flow->batch_whole ? slot : 0, true, NULL, NULL, 0, &st, &err);
  free(x);
}

/* Member m belongs to batch m / B (members m0 .. min(m0 + B, members) - 1), so its numbers
 * depend on (m, members) alone, not on ranks, chunks or restarts.  The last batch solved
 * is kept (with its samples, if asked for), as consecutive members usually follow each
 * other. */
static tf_flow_result run_batched(tf_flow *flow, uint64_t member, double *x, tf_sample_fn sample,
                                  void *sctx, long n_samples) {
  const size_t n = flow->kernel->dim, full = (size_t)flow->batch;
  const long long id = (long long)(member / full);
  const size_t slot = member % full;
  const uint64_t first = (uint64_t)id * full;
  const size_t b = flow->members > first && flow->members - first < full
                       ? (size_t)(flow->members - first)
                       : full;
  const long want = sample ? n_samples : 0;
  if (want > 0 && ensure_sample_buffers(flow, want))
    return (tf_flow_result){.status = TF_MEMBER_FAILED, .t_final = flow->t0};
  if (flow->batch_id != id || flow->batch_n_samples != want) {
    flow->batch_n_samples = want;
    if (want > 0) memset(flow->batch_sampled, 0, full * sizeof *flow->batch_sampled);
    for (size_t i = 0; i < b; i++) tf_flow_initial_state(flow, first + i, flow->batch_x0 + i * n);
    memcpy(flow->batch_x, flow->batch_x0, b * n * sizeof *x);
    const bool finite = finite_state(flow->batch_x, b * n);
    batch_recorder all = {flow, -1, b};
    tf_flow_result r =
        finite ? run_ts(flow, b, flow->batch_x, 0, false, want ? record_batch : NULL, &all, want)
               : (tf_flow_result){.status = TF_MEMBER_NONFINITE};
    flow->batch_whole = r.status == TF_MEMBER_OK;
    for (size_t i = 0; i < b; i++) {
      flow->batch_res[i] = (tf_flow_batch_result){r.status, r.t_final, r.work};
      if (r.status == TF_MEMBER_OK) continue;
      /* A batch fails as a whole: its members are run again one by one, so each gets its
       * own result and reason (deterministically, as the batch's failure is). */
      double *xi = flow->batch_x + i * n;
      memcpy(xi, flow->batch_x0 + i * n, n * sizeof *xi);
      batch_recorder one = {flow, (long)i, 1};
      if (want > 0) flow->batch_sampled[i] = 0;
      const tf_flow_result ri =
          finite_state(xi, n)
              ? run_ts(flow, 1, xi, 0, false, want ? record_batch : NULL, &one, want)
              : (tf_flow_result){.status = TF_MEMBER_NONFINITE, .t_final = flow->t0};
      flow->batch_res[i] = (tf_flow_batch_result){ri.status, ri.t_final, ri.work};
    }
    flow->batch_id = id;
  }
  if (flow->on_step) solve_again_watched(flow, first, b, slot);
  for (long i = 0; want > 0 && i < flow->batch_sampled[slot] && i < want; i++)
    sample(sctx, flow->batch_sample_t[i], flow->batch_samples + ((size_t)i * full + slot) * n);
  memcpy(x, flow->batch_x + slot * n, n * sizeof *x);
  const tf_flow_batch_result *br = &flow->batch_res[slot];
  return (tf_flow_result){.status = br->status, .t_final = br->t_final, .work = br->work};
}

tf_flow_result tf_flow_run_member(tf_flow *flow, uint64_t member, double *x, tf_sample_fn sample,
                                  void *sample_ctx, long n_samples) {
  if (flow->method == TF_METHOD_PETSC_TS && flow->batch > 1)
    return run_batched(flow, member, x, sample, sample_ctx, n_samples);
  tf_flow_initial_state(flow, member, x);
  /* the parameter noise differentiates on a copy of the member's (sampled) parameters */
  if (flow->sampling && flow->noise_params)
    memcpy(flow->noise_params, flow->params, flow->kernel->nparams * sizeof *flow->params);
  if (!finite_state(x, flow->kernel->dim))
    return (tf_flow_result){.status = TF_MEMBER_NONFINITE, .t_final = flow->t0};
  if (flow->poincare) {
    tf_impact_set_step_hook(tf_poincare_impact(flow->poincare), flow->on_step, flow->on_step_ctx);
    tf_poincare_run(flow->poincare, flow->params, flow->t0, x, flow->t_end, &flow->poincare_rec,
                    sample, sample_ctx, sample ? n_samples : 0);
    const tf_impact_result *r = &flow->poincare_rec.result;
    return (tf_flow_result){.status = r->status, .t_final = r->t, .work = r->work};
  }
  if (flow->method == TF_METHOD_DOPRI5) return run_dopri5(flow, x, sample, sample_ctx, n_samples);
  if (flow->method == TF_METHOD_PETSC_TS)
    return run_ts(flow, 1, x, 0, true, sample, sample_ctx, n_samples);
  return run_sde(flow, member, x, sample, sample_ctx, n_samples);
}

static int zero_field(double t, const double *x, void *ctx, double *dx) {
  (void)t, (void)x, (void)ctx;
  dx[0] = 0.0;
  return 0;
}

static void probe_step(void *ctx, double ta, double tb, const tf_ts_step *s) {
  double x;
  *(int *)ctx = s->at(s, 0.5 * (ta + tb), 0, &x);
}

bool tf_flow_ts_interpolates(const tf_flow *flow) {
  const tf_ts_problem pb = {1, zero_field, NULL, NULL};
  tf_ts_settings set = flow->ts;
  int answer = 0; /* no step seen: not known to lack it */
  set.ode.stop = NULL, set.ode.max_steps = 1, set.ode.h0 = 0.5;
  set.on_step = probe_step, set.on_step_ctx = &answer;
  double x = 1.0;
  tf_error err;
  tf_ts_solve(&pb, &set, 1, 0.0, 1.0, &x, NULL, NULL, 0, NULL, &err);
  return answer == 0;
}

void tf_flow_last_step(const tf_flow *flow, double step[2]) {
  if (flow->poincare) {
    tf_impact_last_step(tf_poincare_impact(flow->poincare), step);
  } else if (flow->method == TF_METHOD_DOPRI5) {
    step[0] = tf_stepper_last_step_start(flow->stepper);
    step[1] = tf_stepper_last_step_end(flow->stepper);
  } else if (flow->method == TF_METHOD_PETSC_TS) {
    step[0] = flow->ts_t[0], step[1] = flow->ts_step ? flow->ts_t[1] : flow->ts_t[0];
  } else {
    step[0] = flow->sde_t[0], step[1] = flow->sde_t[1];
  }
}

int tf_flow_dense(const tf_flow *flow, double t, double *x) {
  double step[2];
  tf_flow_last_step(flow, step);
  if (!(step[0] < step[1] && t >= step[0] && t <= step[1])) return -1;
  const size_t n = flow->kernel->dim;
  if (flow->poincare) {
    tf_impact_dense(tf_poincare_impact(flow->poincare), t, x);
  } else if (flow->method == TF_METHOD_DOPRI5) {
    tf_stepper_dense(flow->stepper, t, x);
  } else if (flow->method == TF_METHOD_PETSC_TS) {
    return flow->ts_step->at(flow->ts_step, t, flow->ts_slot, x);
  } else { /* the ends exactly at the ends */
    const double s = (t - step[0]) / (step[1] - step[0]);
    for (size_t i = 0; i < n; i++)
      x[i] = t == step[1] ? flow->sde_x[1][i]
                          : flow->sde_x[0][i] + s * (flow->sde_x[1][i] - flow->sde_x[0][i]);
  }
  return 0;
}
