/* integrator_settings.c — see integrator_settings.h. */
#include "integrator_settings.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stepper_type.h"

static const char *const steps[] = {"adaptive", "fixed", NULL};
static const char *const jacobians[] = {"auto", "analytic", "fd", NULL};
static const char *const normal_kinds[] = {"exact", "fast", NULL};
static const char *const landings[] = {"retake", "dense", NULL};
static const char *const lane_widths[] = {"auto", "1", "4", "8", "16", NULL};
/* RODAS4 by default: L-stable and of order 4, which the tight tolerances of stiff smoothed
 * members reward (ROS3P is A-stable only, order 3) */
static const char *const rosenbrocks[] = {"rodas4", "ros3p", NULL};

#define DBL(p, d, l, h, meaning) \
  { .path = p, .kind = TF_SETTING_DOUBLE, .def = d, .lo = l, .hi = h, .doc = meaning }
#define INT(p, d, l, h, meaning) \
  { .path = p, .kind = TF_SETTING_INT, .def = d, .ilo = l, .ihi = h, .doc = meaning }
#define STR(p, d, c, meaning) \
  { .path = p, .kind = TF_SETTING_STRING, .text = d, .choices = c, .doc = meaning }

const tf_integrator_key tf_integrator_keys[] = {
    STR("integrator.method", "auto", NULL, "a stepper type, an SDE method or petsc-ts"),
    DBL("integrator.t_end", NAN, -INFINITY, INFINITY, "end time (> initial.time)"),
    DBL("integrator.rtol", 1e-8, 1e-15, 1.0, "relative tolerance"),
    DBL("integrator.atol", 1e-10, 0.0, INFINITY, "absolute tolerance"),
    DBL("integrator.h0", 0.0, 0.0, INFINITY, "first step; 0 = automatic"),
    DBL("integrator.hmax", 0.0, 0.0, INFINITY, "largest step; 0 = unbounded"),
    STR("integrator.step", "adaptive", steps, "adaptive or fixed (every step h0)"),
    STR("integrator.rosenbrock", "rodas4", rosenbrocks, "method rosenbrock: rodas4 or ros3p"),
    DBL("integrator.dt", 1e-3, 1e-12, INFINITY, "SDE step"),
    STR("integrator.normals", "exact", normal_kinds, "SDE normals: exact (libm) or fast"),
    STR("integrator.controller_math", "exact", normal_kinds,
        "step-size controller's exp and log: exact (libm) or fast"),
    STR("integrator.landing", "retake", landings,
        "state at a located event: the step retaken to it, or its dense output"),
    INT("integrator.max_steps", 1000000, 1, LLONG_MAX, "step budget per member"),
    STR("integrator.lanes", "auto", lane_widths, "members side by side per core (1: one by one)"),
    /* the Rosenbrock-W method ra34pw2 (order 3, L-stable, one Jacobian and four linear solves
     * per step, no Newton iteration) took a third of BDF's time on the smoothed wheel at the
     * same accuracy (docs/BENCHMARKS.md) */
    STR("integrator.ts.type", "rosw", NULL, "PETSc TS type"),
    STR("integrator.ts.options", "", NULL, "PETSc options"),
    STR("integrator.ts.jacobian", "auto", jacobians, "analytic, fd or auto"),
    INT("integrator.ts.jacobian_lag", 0, 0, 1000000, "steps an analytic Jacobian is kept"),
    /* members per PETSc TS solve (bench/smooth_batch) */
    INT("integrator.ts.batch", 16, 1, 4096, "members per TS"),
    DBL("integrator.theta", 1.0, 0.5, 1.0, "drift-implicit weight of the implicit drift"),
    {.path = "integrator.milstein",
     .kind = TF_SETTING_BOOL,
     .def = 0,
     .doc = "drift-implicit: the Milstein correction"},
    {0},
};

const tf_integrator_key *tf_integrator_key_find(const char *path) {
  for (const tf_integrator_key *k = tf_integrator_keys; k->path; k++)
    if (strcmp(k->path, path) == 0) return k;
  return NULL;
}

int tf_integrator_get_double(tf_config *cfg, const char *path, double *out, tf_error *err) {
  const tf_integrator_key *k = tf_integrator_key_find(path);
  return tf_config_get_double(cfg, path, isnan(k->def) ? NULL : &k->def, k->lo, k->hi, out, err);
}

int tf_integrator_get_int(tf_config *cfg, const char *path, long long *out, tf_error *err) {
  const tf_integrator_key *k = tf_integrator_key_find(path);
  const long long def = (long long)k->def;
  return tf_config_get_int(cfg, path, &def, k->ilo, k->ihi, out, err);
}

int tf_integrator_get_bool(tf_config *cfg, const char *path, bool *out, tf_error *err) {
  const bool def = tf_integrator_key_find(path)->def != 0;
  return tf_config_get_bool(cfg, path, &def, out, err);
}

/* With choices given here (the method's come from the registry), else the table's. */
static int get_string_of(tf_config *cfg, const char *path, const char *const *choices,
                         const char **out, tf_error *err) {
  const tf_integrator_key *k = tf_integrator_key_find(path);
  return tf_config_get_string(cfg, path, k->text, choices ? choices : k->choices, out, err);
}

int tf_integrator_get_string(tf_config *cfg, const char *path, const char **out, tf_error *err) {
  return get_string_of(cfg, path, NULL, out, err);
}

/* auto, every registered stepper type and, for flows, their own methods; NULL-ended. */
static void method_choices(bool flow_methods, const char **out, size_t cap) {
  static const char *const flow_only[] = {TF_FLOW_ONLY_METHODS};
  size_t n = 0;
  out[n++] = "auto";
  for (size_t i = 0; tf_stepper_type_at(i) && n + 1 < cap; i++) {
    const tf_stepper_type *ty = tf_stepper_type_at(i);
    const char *name = ty->family ? ty->family : tf_stepper_type_name(ty);
    if (strcmp(out[n - 1], name) != 0) out[n++] = name; /* a family's types are adjacent */
  }
  for (size_t i = 0; flow_methods && i < sizeof flow_only / sizeof *flow_only && n + 1 < cap; i++)
    out[n++] = flow_only[i];
  out[n] = NULL;
}

/* integrator.lanes where a config does not give it: 0, auto; a build made to run every test with
 * lanes wherever they can run takes 1, 4, 8 or 16 (CMake's TWOFOLD_TEST_LANES_DEFAULT:
 * docs/ARCHITECTURE.md, "Lanes on everywhere"). */
#ifndef TWOFOLD_LANES_DEFAULT
#define TWOFOLD_LANES_DEFAULT 0
#endif

/* integrator.lanes, read only where the config gives it: 0 auto, 1, 4, 8 or 16. */
static int read_lanes(tf_config *cfg, int *lanes, tf_error *err) {
  *lanes = TWOFOLD_LANES_DEFAULT;
  if (!tf_config_has(cfg, "integrator.lanes")) return 0;
  const char *text = "auto";
  if (tf_integrator_get_string(cfg, "integrator.lanes", &text, err)) return -1;
  *lanes = strcmp(text, "auto") == 0 ? 0 : atoi(text);
  return 0;
}

/* integrator.controller_math, read only where given (the config as run then lists it): the
 * step-size controller's exp and log.  Fixed steps have no controller, so `fast` there is a
 * mistake worth naming. */
static int read_controller_math(tf_config *cfg, tf_ode_options *o, tf_error *err) {
  const char *math = "exact";
  char where[256];
  if (!tf_config_has(cfg, "integrator.controller_math")) return 0;
  if (tf_integrator_get_string(cfg, "integrator.controller_math", &math, err)) return -1;
  o->fast_control = strcmp(math, "fast") == 0;
  if (o->fast_control && o->fixed_step)
    return tf_fail(err,
                   "%s: key 'integrator.controller_math': fixed steps (integrator.step: fixed) "
                   "have no step-size controller; remove the key",
                   tf_config_where(cfg, "integrator.controller_math", where, sizeof where));
  return 0;
}

/* integrator.landing, read only where given (the config as run then lists it), after the
 * method: the event loops' landing (event_loop.c). */
static int read_landing(tf_config *cfg, tf_integrator_settings *s, tf_error *err) {
  const char *landing = "retake";
  if (!tf_config_has(cfg, "integrator.landing")) return 0;
  if (tf_integrator_get_string(cfg, "integrator.landing", &landing, err)) return -1;
  s->ode.dense_landing = strcmp(landing, "dense") == 0;
  return 0;
}

static int read_ode(tf_config *cfg, double t0, bool with_t_end, tf_integrator_settings *s,
                    tf_error *err) {
  tf_ode_options *o = &s->ode;
  long long max_steps;
  const char *step;
  char where[256];
  if ((with_t_end && tf_integrator_get_double(cfg, "integrator.t_end", &s->t_end, err)) ||
      tf_integrator_get_double(cfg, "integrator.rtol", &o->rtol, err) ||
      tf_integrator_get_double(cfg, "integrator.atol", &o->atol, err) ||
      tf_integrator_get_double(cfg, "integrator.h0", &o->h0, err) ||
      tf_integrator_get_double(cfg, "integrator.hmax", &o->hmax, err) ||
      tf_integrator_get_int(cfg, "integrator.max_steps", &max_steps, err) ||
      tf_integrator_get_string(cfg, "integrator.step", &step, err))
    return -1;
  o->max_steps = (long)max_steps;
  if (read_lanes(cfg, &s->lanes, err)) return -1;
  o->fixed_step = strcmp(step, "fixed") == 0;
  if (read_controller_math(cfg, o, err)) return -1;
  if (o->fixed_step && !(o->h0 > 0))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'integrator.step': fixed steps take integrator.h0 each; set "
                        "integrator.h0 > 0",
                        tf_config_where(cfg, "integrator.step", where, sizeof where));
  if (with_t_end && !(s->t_end > t0))
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'integrator.t_end': expected a time after initial.time = %g, got %g",
        tf_config_where(cfg, "integrator.t_end", where, sizeof where), t0, s->t_end);
  return 0;
}

static int read_rosenbrock(tf_config *cfg, tf_integrator_settings *s, tf_error *err) {
  const char *type;
  if (tf_integrator_get_string(cfg, "integrator.rosenbrock", &type, err)) return -1;
  s->ode.type = tf_stepper_type_find(type);
  return 0;
}

static int read_method(tf_config *cfg, bool flow_methods, tf_integrator_settings *s,
                       tf_error *err) {
  const char *choices[64];
  method_choices(flow_methods, choices, sizeof choices / sizeof *choices);
  if (get_string_of(cfg, "integrator.method", choices, &s->method, err)) return -1;
  /* the one family so far; integrator.<family> names its member */
  if (strcmp(s->method, "rosenbrock") == 0) {
    if (read_rosenbrock(cfg, s, err)) return -1;
  } else
    s->ode.type = tf_stepper_type_find(s->method);   /* NULL (DOPRI5) for auto and flow methods */
  tf_config_mark_used(cfg, "integrator.rosenbrock"); /* a config run with another method */
  return 0;
}

/* The table's defaults, the one copy of them: what a stepper runs with when no config is read
 * (ode.h). */
tf_ode_options tf_ode_default_options(void) {
  return (tf_ode_options){.rtol = tf_integrator_key_find("integrator.rtol")->def,
                          .atol = tf_integrator_key_find("integrator.atol")->def,
                          .max_steps = (long)tf_integrator_key_find("integrator.max_steps")->def};
}

int tf_integrator_settings_read(tf_config *cfg, double t0, bool with_t_end, bool flow_methods,
                                tf_integrator_settings *s, tf_error *err) {
  *s = (tf_integrator_settings){.ode = tf_ode_default_options()};
  /* the config as run lists the defaults it filled in the order they were read: flows have
   * always read the method first, the other engines last */
  if (flow_methods)
    return read_method(cfg, true, s, err) || read_ode(cfg, t0, with_t_end, s, err) ||
           tf_integrator_get_double(cfg, "integrator.dt", &s->dt, err) || read_landing(cfg, s, err);
  return read_ode(cfg, t0, with_t_end, s, err) || read_method(cfg, false, s, err) ||
         read_landing(cfg, s, err);
}

int tf_integrator_auto_rosenbrock_read(tf_config *cfg, tf_integrator_settings *s, tf_error *err) {
  return read_rosenbrock(cfg, s, err);
}

int tf_integrator_drift_implicit_read(tf_config *cfg, tf_integrator_settings *s, tf_error *err) {
  return tf_integrator_get_double(cfg, "integrator.theta", &s->theta, err) ||
         tf_integrator_get_bool(cfg, "integrator.milstein", &s->milstein, err);
}

int tf_integrator_normals_read(tf_config *cfg, tf_integrator_settings *s, tf_error *err) {
  const char *normals = "exact";
  if (tf_config_has(cfg, "integrator.normals") &&
      tf_integrator_get_string(cfg, "integrator.normals", &normals, err))
    return -1;
  s->fast_normals = strcmp(normals, "fast") == 0;
  return 0;
}

int tf_integrator_ts_read(tf_config *cfg, tf_integrator_settings *s, tf_error *err) {
  const char *type, *options, *jacobian;
  long long batch, lag;
  char where[256];
  if (tf_integrator_get_string(cfg, "integrator.ts.type", &type, err) ||
      tf_integrator_get_string(cfg, "integrator.ts.options", &options, err) ||
      tf_integrator_get_string(cfg, "integrator.ts.jacobian", &jacobian, err) ||
      tf_integrator_get_int(cfg, "integrator.ts.batch", &batch, err) ||
      tf_integrator_get_int(cfg, "integrator.ts.jacobian_lag", &lag, err))
    return -1;
  if (strlen(type) >= sizeof s->ts.type || strlen(options) >= sizeof s->ts.options)
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: key 'integrator.ts': type or options too long",
                        tf_config_where(cfg, "integrator.ts", where, sizeof where));
  snprintf(s->ts.type, sizeof s->ts.type, "%s", type);
  snprintf(s->ts.options, sizeof s->ts.options, "%s", options);
  s->ts.jacobian_lag = (int)lag;
  s->ts_jacobian = strcmp(jacobian, "analytic") == 0 ? TF_TS_JACOBIAN_ANALYTIC
                   : strcmp(jacobian, "fd") == 0     ? TF_TS_JACOBIAN_FD
                                                     : TF_TS_JACOBIAN_AUTO;
  s->ts_batch = (long)batch;
  return 0;
}

/* key=value into the config, read back so that the config as run counts it as used. */
static int write_back(tf_config *cfg, const char *path, const char *assignment, const char **out,
                      tf_error *err) {
  return tf_config_set(cfg, assignment, err) || tf_integrator_get_string(cfg, path, out, err);
}

int tf_integrator_ts_record(tf_config *cfg, tf_integrator_settings *s, const char *type,
                            const char *options, tf_error *err) {
  char assignment[sizeof s->ts.options + 64];
  const char *now;
  if (strcmp(options, s->ts.options) != 0 && !strchr(options, '"')) {
    snprintf(assignment, sizeof assignment, "integrator.ts.options=\"%s\"", options);
    if (write_back(cfg, "integrator.ts.options", assignment, &now, err)) return -1;
    snprintf(s->ts.options, sizeof s->ts.options, "%s", now);
  }
  if (strcmp(type, s->ts.type) != 0) {
    snprintf(assignment, sizeof assignment, "integrator.ts.type=%s", type);
    if (write_back(cfg, "integrator.ts.type", assignment, &now, err)) return -1;
    snprintf(s->ts.type, sizeof s->ts.type, "%s", now);
  }
  return 0;
}

/* 2^50 iterations past the first: far beyond any run, and exact as a double time */
int tf_integrator_iterations_read(tf_config *cfg, long long first, long long *last, tf_error *err) {
  return tf_config_get_int(cfg, "integrator.t_end", NULL, first + 1, first + (1LL << 50), last,
                           err);
}

void tf_integrator_take_ode(const tf_integrator_settings *s, tf_ode_options *ode) {
  struct tf_stop_token *stop = ode->stop;
  *ode = s->ode;
  ode->stop = stop;
}

int tf_integrator_ode_from_config(tf_config *cfg, double t0, double *t_end, tf_ode_options *ode,
                                  tf_error *err) {
  tf_integrator_settings s;
  if (tf_integrator_settings_read(cfg, t0, t_end != NULL, false, &s, err)) return -1;
  /* the dense landing is measured, and taken, only on the impact engine's event runs (flow.c,
   * the Poincaré scan); these jobs' Filippov and contact models have a kink at their events */
  if (s.ode.dense_landing)
    return tf_config_fail_key(cfg, "integrator.landing", err,
                              "dense is taken by the event runs of impact models and flows "
                              "(ensembles and Poincaré scans), not by this job; remove the key");
  tf_integrator_take_ode(&s, ode);
  if (t_end) *t_end = s.t_end;
  return 0;
}
