/* poincare.c — see poincare.h. */
#include "poincare.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "observable.h"
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
    return tf_fail(err, "%s: key '%s': model '%s' has no state component '%s'",
                   tf_config_where(cfg, key, where, sizeof where), key, k->name, name);
  }
  return 0;
}

/* poincare.function: read and checked here, where a mistake can name its key; the engine
 * parses it again (tf_impact_create). */
static int event_function(tf_config *cfg, const tf_kernel *k, const char **text, tf_error *err) {
  if (tf_config_get_string(cfg, "poincare.function", NULL, NULL, text, err)) return -1;
  tf_error why;
  tf_observable *f = tf_observable_parse(k, *text, &why);
  if (f) {
    tf_observable_destroy(f);
    return 0;
  }
  char where[256];
  return tf_fail(err,
                 "%s: key 'poincare.function': %.900s (the event is where this expression of "
                 "the state, the model's outputs and parameters, and t crosses zero)",
                 tf_config_where(cfg, "poincare.function", where, sizeof where), why.msg);
}

int tf_poincare_from_config(tf_poincare_spec *s, tf_config *cfg, const tf_kernel *k,
                            const tf_ode_options *ode, tf_error *err) {
  memset(s, 0, sizeof *s);
  tf_impact_options *o = &s->impact;
  tf_impact_options_default(o);
  o->loop.ode = *ode;
  o->loop.qr_interval = 1.0;
  const bool impacts = tf_model_route(k, NULL) == TF_ROUTE_IMPACT;
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
    char where[256];
    return tf_fail(err, "%s: key 'poincare.event': model '%s' has no impact surfaces",
                   tf_config_where(cfg, "poincare.event", where, sizeof where), k->name);
  }
  o->section = strstr(event, "extremum")   ? TF_SECTION_EXTREMUM
               : strstr(event, "level")    ? TF_SECTION_LEVEL
               : strstr(event, "function") ? TF_SECTION_FUNCTION
                                           : TF_SECTION_NONE;
  if (o->section == TF_SECTION_FUNCTION && event_function(cfg, k, &o->section_function, err))
    return -1;
  o->section_component = s->component;
  o->section_direction = strcmp(direction, "up") == 0 ? 1 : strcmp(direction, "down") == 0 ? -1 : 0;
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
  *r = (tf_poincare_recorder){.s = s, .dim = dim, .rec = rec, .seen = 0};
}

int tf_poincare_recorder_add(tf_poincare_recorder *pr, double t, const double *x) {
  if (pr->seen++ < pr->s->transient) return 0;
  tf_poincare_record *r = pr->rec;
  const size_t n = pr->dim, w = 1 + n;
  double *row = r->samples + r->recorded * (long long)w;
  row[0] = t;
  memcpy(row + 1, x, n * sizeof *x);
  r->recorded++;
  if (r->recorded == pr->s->count) return 1;
  if (pr->s->tol > 0 && (r->period = find_period(pr)) > 0) {
    /* the periodic continuation fills the rest (times included, one period apart) */
    const long long P = r->period;
    const double T = row[0] - r->samples[(r->recorded - 1 - P) * w];
    for (long long j = r->recorded; j < pr->s->count; j++) {
      memcpy(r->samples + j * w, r->samples + (j - P) * w, w * sizeof *r->samples);
      r->samples[j * w] += T;
    }
    return 1;
  }
  return 0;
}

static int observe(void *ctx, tf_impact_event kind, int surface, double t, const double *x) {
  (void)surface;
  tf_poincare *pc = ctx;
  if (!pc->s.record) return 0;
  const bool counted = kind == TF_IMPACT_SECTION || (kind == TF_IMPACT_HIT && pc->s.on_impacts);
  if (!counted) return 0;
  return tf_poincare_recorder_add(&pc->recorder, t, x);
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
  if (tf_poincare_begin(pc, p, t0, x, t_end, rec))
    while (tf_event_loop_iterate(tf_poincare_loop(pc))) continue;
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
