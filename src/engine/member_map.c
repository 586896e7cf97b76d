/* member_map.c — the member-engine adapter of maps: a member is the orbit x_{n+1} = F(x_n) of
 * its initial state (initial.*, drawn as a flow's) from n = initial.time to integrator.t_end,
 * t counting iterations (both whole numbers), for the jobs `ensemble` and `trajectory`.
 *
 * Events of the user's own (poincare.h reads the keys): the event function g is
 * poincare.function (observable.h, t the iteration number) or, for `level`, the component
 * minus poincare.level.  An event is a sign change of g between consecutive iterates in
 * poincare.direction (up: g(x_{n-1}) < 0 <= g(x_n); down: g(x_{n-1}) > 0 >= g(x_n)); iterate
 * n itself is the event, with t = n.  Time is discrete, so nothing is interpolated: there is
 * no state between two iterates.  With poincare.action reset, x_n is replaced by R(x_n) (the
 * recorded state), and the next iterate is compared with g of the reset state; no event is
 * disarmed, as the next comparison is a whole iterate away. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "member_engine.h"
#include "model.h"
#include "observable.h"
#include "poincare.h"
#include "routes.h"
#include "status.h"

typedef struct map_engine {
  tf_model model;
  double x0[TF_MAX_DIM], spread;
  uint64_t seed;
  long long first, last; /* iterations initial.time .. integrator.t_end */
  tf_poincare_spec spec;
  tf_observable *g; /* poincare.function; NULL: a level */
  tf_reset_map *reset;
  double *recorded;  /* spec.count x (1 + dim) */
  char failure[256]; /* the last member's, for its result */
} map_engine;

static const char *const fingerprint[] = {
    "job",           "model",          "initial",  "integrator", "ensemble.member",
    "ensemble.seed", "output.samples", "poincare", NULL};

/* initial.time and integrator.t_end: whole iteration numbers. */
static int read_iterations(map_engine *me, tf_config *cfg, double t0, tf_error *err) {
  char where[256];
  if (t0 != floor(t0) || fabs(t0) > 1e15)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.time': a map's time counts iterations, so it is a whole "
                        "number (got %g)",
                        tf_config_where(cfg, "initial.time", where, sizeof where), t0);
  me->first = (long long)t0;
  return tf_config_get_int(cfg, "integrator.t_end", NULL, me->first + 1, me->first + (1LL << 50),
                           &me->last, err);
}

static int read_events(map_engine *me, tf_config *cfg, tf_error *err) {
  const tf_kernel *k = me->model.kernel;
  const tf_ode_options ode = tf_ode_default_options();
  if (tf_poincare_from_config(&me->spec, cfg, k, &ode, err)) return -1;
  if (!me->spec.record) return 0;
  const tf_impact_options *o = &me->spec.impact;
  tf_error why;
  if (o->section == TF_SECTION_FUNCTION &&
      !(me->g = tf_observable_parse(k, o->section_function, &why)))
    return tf_fail_code(err, TF_ERR_CONFIG, "poincare.function: %s",
                        why.msg); /* checked with its key already */
  if (me->spec.action == TF_POINCARE_RESET &&
      !(me->reset = tf_reset_map_parse(k, &o->section_reset, &why)))
    return tf_fail_code(err, TF_ERR_CONFIG, "poincare.reset: %s", why.msg);
  me->recorded = calloc((size_t)me->spec.count * (1 + k->dim), sizeof *me->recorded);
  return me->recorded ? 0 : tf_fail(err, "out of memory for %lld events", me->spec.count);
}

static void fill_layout(tf_member_layout *l, const map_engine *me) {
  l->kernel = me->model.kernel;
  l->params = me->model.params;
  l->dim = me->model.kernel->dim;
  l->t0 = (double)me->first, l->t_end = (double)me->last;
  l->samples_doc = "state at the sample iterations (samples x dim)";
  l->fingerprint = fingerprint;
  snprintf(l->integrator, sizeof l->integrator, "map");
  l->traced_integrator = l->integrator;
  l->batch = 1, l->lanes = 1;
  if (!me->spec.record) return;
  l->poincare_slots = me->spec.count;
  l->event_kinds = 1;
  l->events_doc =
      "events of poincare.event: sign changes of the event function between "
      "consecutive iterates in poincare.direction, transient ones included";
}

static int create(tf_member_engine *e, tf_config *cfg, const tf_kernel *k,
                  const tf_member_settings *s, tf_error *err) {
  (void)k;
  map_engine *me = calloc(1, sizeof *me);
  if (!(e->impl = me)) return tf_fail(err, "out of memory");
  double t0;
  long long seed;
  const long long d_seed = 1;
  tf_member_settings *own = &e->settings;
  if (tf_model_from_config(&me->model, cfg, s->comm, TF_KIND_BIT(TF_MODEL_MAP), "ensemble", err) ||
      tf_initial_from_config(cfg, me->model.kernel, me->x0, &me->spread, &t0, err) ||
      read_iterations(me, cfg, t0, err) ||
      tf_config_get_int(cfg, "ensemble.seed", &d_seed, 0, LLONG_MAX, &seed, err) ||
      read_events(me, cfg, err) || tf_member_member_keys(own, cfg, err) ||
      tf_member_output_keys(own, cfg, err))
    return -1;
  me->seed = (uint64_t)seed;
  e->layout.samples = own->samples;
  if (own->samples == TF_MEMBER_SAMPLES_FROM_CONFIG &&
      tf_member_read_trajectory_samples(cfg, &e->layout.samples, err))
    return -1;
  fill_layout(&e->layout, me);
  return tf_member_sampling(e, cfg, me->x0, me->model.params, me->seed, me->spread, false, NULL,
                            err);
}

/* --- one member ------------------------------------------------------------------------- */

typedef struct orbit {
  const tf_member_engine *e;
  map_engine *me;
  const tf_member_buffers *b;
  long long n; /* the iteration of x */
  double *x;
  long next_sample;
  tf_poincare_recorder recorder;
  tf_poincare_record record;
  double g; /* the event function at x */
  long events;
} orbit;

static double event_function(const orbit *o, const double *x) {
  const map_engine *me = o->me;
  const double *p = me->model.params;
  if (me->g) return tf_observable_eval(me->g, (double)o->n, x, p);
  return x[me->spec.component] - me->spec.impact.section_level;
}

/* The iteration of sample i: the one nearest its time, equally spaced from first to last. */
static long long sample_iteration(const orbit *o, long i) {
  const tf_member_layout *l = &o->e->layout;
  return llround(tf_member_sample_time(l->t0, l->t_end, i, l->samples));
}

/* Takes the samples due at x; false if the stop token says stop there. */
static bool take_samples(orbit *o) {
  const tf_member_layout *l = &o->e->layout;
  const size_t n = l->dim;
  bool go_on = true;
  while (o->next_sample < l->samples && sample_iteration(o, o->next_sample) == o->n) {
    const long i = o->next_sample++;
    if (o->b->sample_t) o->b->sample_t[i] = (double)o->n;
    if (o->b->sample_x) memcpy(o->b->sample_x + (size_t)i * n, o->x, n * sizeof *o->x);
    go_on = go_on && !tf_stop_point(o->e->settings.stop);
  }
  return go_on;
}

static bool finite_state(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return false;
  return true;
}

/* The event check at iterate o->n: returns a member status to end with, or -1 to go on. */
static int event_step(orbit *o) {
  map_engine *me = o->me;
  const tf_kernel *k = me->model.kernel;
  const int dir = me->spec.impact.section_direction;
  const double before = o->g;
  o->g = event_function(o, o->x);
  const bool up = before < 0 && o->g >= 0, down = before > 0 && o->g <= 0;
  if (!((dir >= 0 && up) || (dir <= 0 && down))) return -1;
  o->events++;
  if (me->reset) {
    tf_reset_map_apply(me->reset, (double)o->n, o->x, me->model.params, o->x);
    if (!finite_state(o->x, k->dim)) {
      snprintf(me->failure, sizeof me->failure,
               "the reset map (poincare.reset) gives a non-finite state at iteration %lld", o->n);
      return TF_MEMBER_FAILED;
    }
    o->g = event_function(o, o->x);
  }
  const int full = tf_poincare_recorder_add(&o->recorder, (double)o->n, o->x);
  return full && me->spec.action == TF_POINCARE_STOP ? TF_MEMBER_OK : -1;
}

/* Iterates o from its start to the end, an event's stop, a failure or the stop token. */
static int iterate(orbit *o) {
  map_engine *me = o->me;
  const tf_kernel *k = me->model.kernel;
  double next[TF_MAX_DIM];
  if (!take_samples(o)) return TF_MEMBER_PENDING;
  while (o->n < me->last) {
    if (((o->n - me->first) & 1023) == 1023 && tf_stop_poll(o->e->settings.stop))
      return TF_MEMBER_PENDING;
    const int refused = tf_model_map(k)(o->x, me->model.params, next);
    if (refused) return tf_kernel_member_failed(k, refused, (double)o->n);
    o->n++;
    memcpy(o->x, next, k->dim * sizeof *next);
    if (!finite_state(o->x, k->dim)) return TF_MEMBER_NONFINITE;
    const int ended = me->spec.record ? event_step(o) : -1;
    if (!take_samples(o)) return TF_MEMBER_PENDING;
    if (ended >= 0) return ended;
  }
  return TF_MEMBER_OK;
}

static void run(tf_member_engine *e, uint64_t member, const tf_member_buffers *b,
                tf_member_result *r) {
  map_engine *me = e->impl;
  const size_t n = me->model.kernel->dim;
  double scratch[TF_MAX_DIM];
  orbit o = {.e = e, .me = me, .b = b, .n = me->first, .x = b->final ? b->final : scratch};
  tf_initial_state_of(e->sampling, me->x0, n, me->spread, me->seed, member, o.x);
  if (b->initial) memcpy(b->initial, o.x, n * sizeof *o.x);
  if (b->sample_x)
    for (size_t i = 0; i < (size_t)e->layout.samples * n; i++) b->sample_x[i] = NAN;
  me->failure[0] = '\0';
  o.record.samples = me->recorded;
  if (me->spec.record) {
    tf_poincare_recorder_start(&o.recorder, &me->spec, n, &o.record);
    o.g = event_function(&o, o.x);
  }
  r->status = iterate(&o);
  r->t = (double)o.n;
  r->work.steps = (long)(o.n - me->first);
  r->events[0] = o.events;
  r->sample_rows = o.next_sample;
  r->failure = me->failure[0] ? me->failure : NULL;
  if (!me->spec.record) return;
  r->poincare.samples = me->recorded; /* the recorded states, as poincare.h leaves them */
  r->poincare.recorded = o.record.recorded;
  r->poincare.period = o.record.period;
}

static void destroy(tf_member_engine *e) {
  map_engine *me = e->impl;
  if (!me) return;
  tf_observable_destroy(me->g);
  tf_reset_map_destroy(me->reset);
  free(me->recorded);
  tf_model_destroy(&me->model);
  free(me);
}

static void report(const tf_member_engine *e, const tf_member_result *r, const double *final,
                   tf_json *j) {
  (void) final;
  const map_engine *me = e->impl;
  if (me->spec.record) {
    tf_json_integer(j, "events", r->events[0]);
    tf_json_integer(j, "poincare_recorded", r->poincare.recorded);
  }
  if (r->failure) tf_json_string(j, "failure", r->failure);
}

static const tf_member_ops member_ops = {
    .name = "map",
    .create = create,
    .run = run,
    .dense = NULL,
    .no_dense =
        "a map's time counts iterations, and there is no state between two iterates "
        "to interpolate",
    .destroy = destroy,
    .report = report,
};

static int map_spectrum(const tf_kernel *k, const double *p, const double *x0,
                        const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                        tf_lyapunov_result *r, tf_error *err) {
  (void)ode, (void)saltation; /* iterated, no events */
  return tf_lyapunov_map(k, p, x0, o, r, err);
}

const tf_route_ops tf_route_map = {.name = "map",
                                   .member = &member_ops,
                                   .iterates = true,
                                   .stationary = TF_STATIONARY_NONE,
                                   .lyapunov = map_spectrum,
                                   .lyapunov_method = "map"};
