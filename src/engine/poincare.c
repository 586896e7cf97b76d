/* poincare.c — see poincare.h. */
#include "poincare.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact_run.h"
#include "kinds.h"
#include "max_dim.h"
#include "observable.h"
#include "routes.h"
#include "status.h"

struct tf_poincare {
  const tf_kernel *k;
  tf_poincare_spec s;
  tf_impact *engine;
  tf_poincare_recorder recorder;
  bool begun; /* the run in progress got past tf_impact_begin */
};

static int state_index(tf_config *cfg, const tf_kernel *k, const char *key, int *out,
                       tf_error *err) {
  const char *name;
  if (tf_config_get_string(cfg, key, k->state_names ? k->state_names[0] : "x0", NULL, &name, err))
    return -1;
  *out = k->state_names ? tf_kernel_state_index(k, name) : -1;
  if (*out < 0) {
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': model '%s' has no state component '%s'",
                        tf_config_where(cfg, key, where, sizeof where), key, k->name, name);
  }
  return 0;
}

/* An expression of the config, checked here, where a mistake can name its key; the engine
 * parses it again (tf_impact_create, pws_section.c). */
static int check_expression(tf_config *cfg, const tf_kernel *k, const char *key, const char *text,
                            const char *meaning, tf_error *err) {
  tf_error why;
  tf_observable *f = tf_observable_parse(k, text, &why);
  if (f) {
    tf_observable_destroy(f);
    return 0;
  }
  char where[256];
  return tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': %.800s (%s)",
                      tf_config_where(cfg, key, where, sizeof where), key, why.msg, meaning);
}

static int event_function(tf_config *cfg, const tf_kernel *k, const char **text, tf_error *err) {
  if (tf_config_get_string(cfg, "poincare.function", NULL, NULL, text, err)) return -1;
  return check_expression(cfg, k, "poincare.function", *text,
                          "the event is where this expression of the state, the model's outputs "
                          "and parameters, and t crosses zero",
                          err);
}

/* poincare.reset: a mapping from state component to the expression of its new value. */
static int reset_map(tf_config *cfg, const tf_kernel *k, tf_reset_spec *r, tf_error *err) {
  const char *names[TF_MAX_DIM + 1];
  size_t n;
  char key[300], where[256];
  if (tf_config_keys(cfg, "poincare.reset", names, TF_MAX_DIM + 1, &n, err)) return -1;
  if (n == 0 || n > k->dim)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'poincare.reset': expected a mapping from state component to the "
                        "expression of its value after the event, e.g. {v: \"-0.8*v\"} (1 to %zu "
                        "entries)",
                        tf_config_where(cfg, "poincare.reset", where, sizeof where), k->dim);
  for (size_t i = 0; i < n; i++) {
    snprintf(key, sizeof key, "poincare.reset.%s", names[i]);
    const int c = tf_kernel_component_of_key(k, cfg, key, names[i], err);
    if (c < 0) return -1;
    r->component[i] = c;
    if (tf_config_get_string(cfg, key, NULL, NULL, &r->expr[i], err) ||
        check_expression(cfg, k, key, r->expr[i],
                         "the new value of a component is this expression of the state before "
                         "the event, the model's outputs and parameters, and t",
                         err))
      return -1;
  }
  r->count = (int)n;
  return 0;
}

/* poincare.action (read only when given, so a config without it runs and records as before)
 * and, with reset, poincare.reset. */
static int event_action(tf_config *cfg, const tf_kernel *k, bool on_impacts_only,
                        tf_poincare_spec *s, tf_error *err) {
  static const char *const actions[] = {"stop", "log", "reset", NULL};
  const bool filippov = tf_route_ops_for(k, NULL)->pws_sections;
  const bool contact = tf_contact_kernel(k);
  const char *action = filippov || contact ? "log" : "stop";
  char where[256];
  if (tf_config_has(cfg, "poincare.action") &&
      tf_config_get_string(cfg, "poincare.action", NULL, actions, &action, err))
    return -1;
  s->action = strcmp(action, "stop") == 0  ? TF_POINCARE_STOP
              : strcmp(action, "log") == 0 ? TF_POINCARE_LOG
                                           : TF_POINCARE_RESET;
  if (s->action != TF_POINCARE_RESET) {
    if (!tf_config_has(cfg, "poincare.reset")) return 0;
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'poincare.reset' is a reset map, used only with "
                        "poincare.action: reset (the action is '%s')",
                        tf_config_where(cfg, "poincare.reset", where, sizeof where), action);
  }
  if (filippov)
    return tf_config_fail_key(
        cfg, "poincare.action", err,
        "reset is not defined for a Filippov model ('%s'): "
        "its switching surfaces change the field, not the state, and its sliding and "
        "two-fold rules assume a continuous state; write 'log' or 'stop', or model "
        "the jump as an impact kernel (docs/IMPACTS.md) or a smooth flow with this "
        "reset",
        k->name);
  if (contact)
    return tf_config_fail_key(
        cfg, "poincare.action", err,
        "reset is not defined for a body under spatial "
        "friction ('%s'): its engine follows slip and rolling on a continuous state "
        "(a jump of the velocities would skip its arrival and departure rules); "
        "write 'log' or 'stop', or model the jump as an impact kernel "
        "(docs/IMPACTS.md)",
        k->name);
  if (on_impacts_only)
    return tf_config_fail_key(
        cfg, "poincare.action", err,
        "reset needs an event of the section's own "
        "(poincare.event function, level or extremum, or impact+...): the impacts "
        "reset the state by the model's own map");
  return reset_map(cfg, k, &s->impact.section_reset, err);
}

/* The impact.* keys of the event loop (impact.chattering and its kin for impact kernels). */
static int impact_keys(tf_config *cfg, bool impacts, tf_impact_options *o, tf_error *err) {
  static const char *const chattering[] = {"complete", "stop", NULL};
  const char *chat = "complete";
  const double d_event_tol = 1e-12, d_rate = 1e6, d_cv = o->chatter_velocity,
               d_ctol = o->chatter_tol, d_contact = o->contact_tol;
  const long long d_max_events = 1000000000LL, d_cn = o->chatter_impacts;
  long long max_events = d_max_events, cn = d_cn;
  o->loop.event_tol = d_event_tol, o->loop.max_event_rate = d_rate;
  if (impacts &&
      (tf_config_get_string(cfg, "impact.chattering", "complete", chattering, &chat, err) ||
       tf_config_get_double(cfg, "impact.chatter_velocity", &d_cv, 0.0, INFINITY,
                            &o->chatter_velocity, err) ||
       tf_config_get_double(cfg, "impact.chatter_tol", &d_ctol, 1e-12, 0.5, &o->chatter_tol, err) ||
       tf_config_get_int(cfg, "impact.chatter_impacts", &d_cn, 3, 16, &cn, err) ||
       tf_config_get_double(cfg, "impact.contact_tol", &d_contact, 0.0, 1e-3, &o->contact_tol,
                            err)))
    return -1;
  o->complete_chattering = strcmp(chat, "complete") == 0;
  o->chatter_impacts = (int)cn;
  if (tf_config_get_double(cfg, "impact.event_tol", &d_event_tol, 1e-16, 1e-3, &o->loop.event_tol,
                           err) ||
      tf_config_get_double(cfg, "impact.max_event_rate", &d_rate, 1.0, INFINITY,
                           &o->loop.max_event_rate, err) ||
      tf_config_get_int(cfg, "impact.max_events", &d_max_events, 1, LLONG_MAX, &max_events, err))
    return -1;
  o->loop.max_events = (long)max_events;
  return 0;
}

/* A map's iterates are separated by whole steps: an event is seen between two of them, which
 * a derivative in time cannot describe. */
static int refuse_map_extremum(tf_config *cfg, const tf_kernel *k, tf_error *err) {
  return tf_config_fail_key(
      cfg, "poincare.event", err,
      "extremum needs the derivative along a continuous "
      "orbit, and the map '%s' has only its iterates; write level or function (an "
      "event is a sign change of the function between consecutive iterates)",
      k->name);
}

int tf_poincare_from_config(tf_poincare_spec *s, tf_config *cfg, const tf_kernel *k,
                            const tf_ode_options *ode, tf_error *err) {
  memset(s, 0, sizeof *s);
  tf_impact_options *o = &s->impact;
  tf_impact_options_default(o);
  o->loop.ode = *ode;
  o->loop.qr_interval = 1.0;
  const tf_route_ops *route = tf_route_ops_for(k, NULL);
  const bool impacts = route->impacts;
  if (!route->iterates && impact_keys(cfg, impacts, o, err)) return -1;
  if (!tf_config_has(cfg, "poincare.event")) return 0;
  static const char *const events[] = {
      "impact",          "extremum",     "level",           "function",
      "impact+extremum", "impact+level", "impact+function", NULL};
  static const char *const directions[] = {"both", "up", "down", NULL};
  const char *event, *direction;
  const long long d_transient = 0, d_count = 64;
  const double d_tol = 0.0, d_level = 0.0;
  if (tf_config_get_string(cfg, "poincare.event", NULL, events, &event, err) ||
      state_index(cfg, k, "poincare.component", &s->component, err) ||
      tf_config_get_string(cfg, "poincare.direction", "both", directions, &direction, err) ||
      tf_config_get_double(cfg, "poincare.level", &d_level, -INFINITY, INFINITY, &o->section_level,
                           err) ||
      tf_config_get_int(cfg, "poincare.transient", &d_transient, 0, LLONG_MAX / 2, &s->transient,
                        err) ||
      tf_config_get_int(cfg, "poincare.count", &d_count, 1, 1000000, &s->count, err) ||
      tf_config_get_double(cfg, "poincare.tol", &d_tol, 0.0, INFINITY, &s->tol, err))
    return -1;
  s->record = true;
  s->on_impacts = strncmp(event, "impact", 6) == 0;
  if (s->on_impacts && !impacts) {
    return tf_config_fail_key(cfg, "poincare.event", err, "model '%s' has no impact surfaces",
                              k->name);
  }
  if (route->iterates && strcmp(event, "extremum") == 0) return refuse_map_extremum(cfg, k, err);
  o->section = strstr(event, "extremum")   ? TF_SECTION_EXTREMUM
               : strstr(event, "level")    ? TF_SECTION_LEVEL
               : strstr(event, "function") ? TF_SECTION_FUNCTION
                                           : TF_SECTION_NONE;
  if (o->section == TF_SECTION_FUNCTION && event_function(cfg, k, &o->section_function, err))
    return -1;
  o->section_component = s->component;
  o->section_direction = strcmp(direction, "up") == 0 ? 1 : strcmp(direction, "down") == 0 ? -1 : 0;
  return event_action(cfg, k, o->section == TF_SECTION_NONE, s, err);
}

/* An expression of the section whose exact derivatives the saltation matrix needs. */
static int check_derivative(tf_config *cfg, const tf_kernel *k, const char *key, const char *text,
                            const char *job, tf_error *err) {
  tf_error why;
  tf_observable *f = tf_observable_parse(k, text, &why);
  const int rc = f ? tf_observable_differentiate(f, &why) : -1;
  tf_observable_destroy(f);
  if (rc == 0) return 0;
  return tf_config_fail_key(cfg, key, err,
                            "%.700s (%s carries tangent vectors across the reset by its "
                            "saltation matrix, from the exact derivatives of the section's "
                            "function and reset)",
                            why.msg, job);
}

int tf_poincare_reset_from_config(tf_poincare_spec *s, tf_config *cfg, const tf_kernel *k,
                                  const tf_ode_options *ode, const char *job, tf_error *err) {
  memset(s, 0, sizeof *s);
  if (!tf_config_has(cfg, "poincare")) return 0;
  if (!tf_route_ops_for(k, NULL)->section_resets)
    return tf_config_fail_key(cfg, "poincare", err,
                              "%s takes a section only to reset the state of a flow or an impact "
                              "model (poincare.action: reset); model '%s' is neither",
                              job, k->name);
  static const char *const recording[] = {"poincare.count", "poincare.transient", "poincare.tol",
                                          NULL};
  for (int i = 0; recording[i]; i++)
    if (tf_config_has(cfg, recording[i]))
      return tf_config_fail_key(cfg, recording[i], err,
                                "%s records no events: its section only resets the state "
                                "(poincare.action: reset); remove the key",
                                job);
  if (tf_poincare_from_config(s, cfg, k, ode, err)) return -1;
  if (!s->record)
    return tf_config_fail_key(cfg, "poincare.event", err,
                              "required: the section whose events reset the state");
  if (s->action != TF_POINCARE_RESET)
    return tf_config_fail_key(cfg, "poincare.action", err,
                              "%s records no events: a section there resets the state; write "
                              "reset (with poincare.reset)",
                              job);
  const tf_impact_options *o = &s->impact;
  if (o->section == TF_SECTION_EXTREMUM)
    return tf_config_fail_key(
        cfg, "poincare.event", err,
        "an extremum's event function is the rate of '%s' along the field, and the saltation "
        "matrix of the reset would need its gradient, the field's second derivatives; write "
        "poincare.event: function with that rate as poincare.function (the component's field "
        "as an expression)",
        k->state_names ? k->state_names[s->component] : "the component");
  if (o->section == TF_SECTION_FUNCTION &&
      check_derivative(cfg, k, "poincare.function", o->section_function, job, err))
    return -1;
  char key[300];
  for (int i = 0; i < o->section_reset.count; i++) {
    snprintf(key, sizeof key, "poincare.reset.%s", k->state_names[o->section_reset.component[i]]);
    if (check_derivative(cfg, k, key, o->section_reset.expr[i], job, err)) return -1;
  }
  return 0;
}

/* The recorded values of the compared component repeat with period P over the last 4 P. */
static int find_period(const tf_poincare_recorder *pr) {
  const tf_poincare_record *r = pr->rec;
  const size_t w = 1 + pr->dim;
  const int c = 1 + pr->s->component;
  for (int P = 1; P <= TF_POINCARE_MAX_PERIOD; P++) {
    if (r->recorded < 4LL * P) break;
    bool same = true;
    for (long long j = r->recorded - 3LL * P; same && j < r->recorded; j++)
      same = fabs(r->samples[j * w + c] - r->samples[(j - P) * w + c]) <= pr->s->tol;
    if (same) return P;
  }
  return 0;
}

void tf_poincare_recorder_start(tf_poincare_recorder *r, const tf_poincare_spec *s, size_t dim,
                                tf_poincare_record *rec) {
  const size_t w = 1 + dim;
  rec->recorded = 0, rec->period = 0;
  if (s->record && rec->samples)
    for (long long i = 0; i < s->count * (long long)w; i++) rec->samples[i] = NAN;
  *r = (tf_poincare_recorder){.s = s, .dim = dim, .rec = rec, .seen = 0, .full = false};
}

int tf_poincare_recorder_add(tf_poincare_recorder *pr, double t, const double *x) {
  if (pr->full) return 1; /* a member that runs on (poincare.action log, reset) */
  if (pr->seen++ < pr->s->transient) return 0;
  tf_poincare_record *r = pr->rec;
  const size_t n = pr->dim, w = 1 + n;
  double *row = r->samples + r->recorded * (long long)w;
  row[0] = t;
  memcpy(row + 1, x, n * sizeof *x);
  r->recorded++;
  if (r->recorded == pr->s->count) return pr->full = true;
  if (pr->s->tol > 0 && (r->period = find_period(pr)) > 0) {
    /* the periodic continuation fills the rest (times included, one period apart) */
    const long long P = r->period;
    const double T = row[0] - r->samples[(r->recorded - 1 - P) * w];
    for (long long j = r->recorded; j < pr->s->count; j++) {
      memcpy(r->samples + j * w, r->samples + (j - P) * w, w * sizeof *r->samples);
      r->samples[j * w] += T;
    }
    return pr->full = true;
  }
  return 0;
}

void tf_poincare_continue_period(const tf_poincare_record *rec, long long count, double *values) {
  for (long long j = rec->recorded; rec->period > 0 && j < count; j++)
    values[j] = values[j - rec->period];
}

static int observe(void *ctx, tf_impact_event kind, int surface, double t, const double *x) {
  (void)surface;
  tf_poincare *pc = ctx;
  if (!pc->s.record) return 0;
  const bool counted = kind == TF_IMPACT_SECTION || (kind == TF_IMPACT_HIT && pc->s.on_impacts);
  if (!counted) return 0;
  const int full = tf_poincare_recorder_add(&pc->recorder, t, x);
  return pc->s.action == TF_POINCARE_STOP ? full : 0;
}

tf_poincare *tf_poincare_create(const tf_kernel *k, const tf_poincare_spec *s) {
  tf_poincare *pc = calloc(1, sizeof *pc);
  if (!pc) return NULL;
  pc->k = k, pc->s = *s;
  pc->engine = tf_impact_create(k, 0, &s->impact);
  if (!pc->engine) {
    free(pc);
    return NULL;
  }
  tf_impact_set_observer(pc->engine, observe, pc);
  return pc;
}

void tf_poincare_destroy(tf_poincare *pc) {
  if (!pc) return;
  tf_impact_destroy(pc->engine);
  free(pc);
}

void tf_poincare_run(tf_poincare *pc, const double *p, double t0, double *x, double t_end,
                     tf_poincare_record *rec, tf_impact_sampler sample, void *sample_ctx,
                     long n_samples) {
  tf_impact_set_sampler(pc->engine, sample, sample_ctx, n_samples);
  if (tf_poincare_begin(pc, p, t0, x, t_end, rec)) tf_event_loop_drive(tf_poincare_loop(pc));
  tf_poincare_end(pc, rec);
}

bool tf_poincare_begin(tf_poincare *pc, const double *p, double t0, double *x, double t_end,
                       tf_poincare_record *rec) {
  tf_poincare_recorder_start(&pc->recorder, &pc->s, pc->k->dim, rec);
  pc->begun = tf_impact_begin(pc->engine, p, t0, x, t_end);
  return pc->begun;
}

tf_event_loop *tf_poincare_loop(tf_poincare *pc) {
  return tf_impact_loop(pc->engine);
}

void tf_poincare_end(tf_poincare *pc, tf_poincare_record *rec) {
  rec->result = pc->begun ? tf_impact_end(pc->engine) : tf_impact_refused(pc->engine);
}

tf_impact *tf_poincare_impact(tf_poincare *pc) {
  return pc->engine;
}
