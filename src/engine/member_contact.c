/* member_contact.c — the member-engine adapter of bodies under spatial friction (contact_run.h:
 * codimension-2 kernels on evolve2.h, bodies with two contacts on dual_contact.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact_run.h"
#include "flow.h"
#include "member_engine.h"
#include "physical_initial.h"
#include "poincare.h"
#include "routes.h"
#include "section_crossings.h"
#include "status.h"

typedef struct contact_engine {
  tf_flow flow; /* model, initial state and integrator options */
  tf_contact_options opts;
  bool dual;
  /* poincare.event: crossings found on the accepted steps (NULL: none), recorded with the
   * mode at each */
  tf_poincare_spec spec;
  tf_section_crossings *crossings;
  tf_poincare_record rec;
  double *modes;
  /* inside settings.step: the engine whose step is seen, and the step (NULL: none; the
   * engines live for one run, so no step is kept after it) */
  const tf_contact *seeing;
  double seen[2];
} contact_engine;

enum { EVENT_HEAD = 3 }; /* t, kind, detail; then the state */

/* A traced member's keys: the events kept, and tangent vectors through the saltation of
 * evolve2.c (codim-2 kernels only). */
static int traced_keys(tf_config *cfg, contact_engine *ce, long *event_slots, tf_error *err) {
  const long long d_log = 64, d_exp = 0;
  const double d_int = 0.1;
  long long logged, exponents;
  if (tf_config_get_int(cfg, "output.event_log", &d_log, 0, 1000000, &logged, err)) return -1;
  *event_slots = (long)logged;
  if (ce->dual) return 0;
  if (tf_config_get_int(cfg, "lyapunov.exponents", &d_exp, 0, (long long)ce->flow.kernel->dim,
                        &exponents, err) ||
      tf_config_get_double(cfg, "lyapunov.interval", &d_int, 1e-9, INFINITY,
                           &ce->opts.lyapunov_interval, err))
    return -1;
  ce->opts.exponents = (int)exponents;
  return 0;
}

static const char *const fingerprint[] = {
    "job",           "model",          "initial", "integrator", "ensemble.member",
    "ensemble.seed", "output.samples", "impact",  "poincare",   NULL};

static void fill_layout(tf_member_layout *l, const contact_engine *ce) {
  const tf_kernel *k = ce->flow.kernel;
  l->kernel = k;
  l->params = ce->flow.params;
  l->dim = k->dim;
  l->t0 = ce->flow.t0, l->t_end = ce->flow.t_end;
  l->event_kinds = 1;
  l->events_doc = "events (arrivals at and departures from the contact sets)";
  l->mode_doc = "mode or kinematic case at t_final (attribute modes)";
  l->modes_attr = tf_contact_modes_doc(k);
  l->counts_rhs = true;
  l->event_width = EVENT_HEAD + k->dim;
  l->event_log_doc = ce->dual ? "events: t, kind, case after, state"
                              : "events: t, kind, phi (limit direction), state";
  l->event_log_attr = tf_contact_event_kinds_doc(k);
  l->sample_mode_doc = ce->dual ? "kinematic case at the sample times: 0 SS, 1 SR, 2 RS, 3 RR"
                                : "mode at the sample times: 0 roll (on Sigma), 1 slip";
  snprintf(l->integrator, sizeof l->integrator, "%s+%s", tf_stepper_type_name(ce->flow.ode.type),
           ce->dual ? "two-contact" : "codim2");
  l->samples_doc = "state at the sample times (samples x dim)";
  l->fingerprint = fingerprint;
  if (ce->crossings) {
    l->poincare_slots = (long)ce->spec.count;
    l->poincare_mode_doc =
        "mode or kinematic case at each recorded crossing (attribute modes), "
        "NaN-padded";
  }
  l->traced_integrator = tf_flow_integrator_name(&ce->flow);
  l->batch = 1;
}

/* poincare.* (read only when poincare.event is given): a level or an expression crossed,
 * located to codim2.event_tol on the dense output of the engine's accepted steps. */
static int section_setup(contact_engine *ce, tf_config *cfg, tf_error *err) {
  const tf_kernel *k = ce->flow.kernel;
  if (!tf_config_has(cfg, "poincare.event")) return 0;
  if (tf_poincare_from_config(&ce->spec, cfg, k, &ce->flow.ode, err) ||
      tf_section_crossings_check(&ce->spec, cfg, k, "a body under spatial friction", err))
    return -1;
  const size_t count = (size_t)ce->spec.count;
  ce->rec.samples = malloc(count * (1 + k->dim) * sizeof(double));
  ce->modes = malloc(count * sizeof(double));
  ce->crossings =
      tf_section_crossings_create(k, ce->flow.params, &ce->spec, ce->opts.engine.event_tol);
  if (!ce->rec.samples || !ce->modes || !ce->crossings)
    return tf_fail(err, "out of memory for the section of a member");
  return 0;
}

static int create(tf_member_engine *e, tf_config *cfg, const tf_kernel *k,
                  const tf_member_settings *s, tf_error *err) {
  (void)k, (void)s;
  contact_engine *ce = calloc(1, sizeof *ce);
  if (!(e->impl = ce)) return tf_fail(err, "out of memory");
  const bool state_given = tf_config_has(cfg, "initial.state");
  tf_flow *flow = &ce->flow;
  tf_member_settings *own = &e->settings;
  if (tf_flow_from_config(flow, cfg, s->comm, s->stop, err) ||
      tf_physical_initial_from_config(cfg, flow->kernel, flow->params, state_given, flow->x0,
                                      err) ||
      tf_member_member_keys(own, cfg, err) ||
      tf_contact_options_from_config(cfg, &flow->ode, &ce->opts, err) ||
      tf_member_output_keys(own, cfg, err) || section_setup(ce, cfg, err))
    return -1;
  ce->dual = tf_contact_is_dual(flow->kernel);
  fill_layout(&e->layout, ce);
  /* no samples unless asked for: output.trajectory_samples is not a key of these bodies */
  e->layout.samples = own->samples > 0 ? own->samples : 0;
  if (own->traced && traced_keys(cfg, ce, &e->layout.event_slots, err)) return -1;
  if (flow->method != TF_METHOD_DOPRI5) {
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'integrator.method': model '%s' runs on the event-driven "
                        "codimension-2 engine (dopri5)",
                        tf_config_where(cfg, "integrator.method", where, sizeof where),
                        flow->kernel->name);
  }
  return 0;
}

/* One run's hooks: events into the log, samples and section crossings from the dense output
 * of each step. */
typedef struct contact_sink {
  tf_member_engine *e;
  const tf_member_buffers *b;
  long events, next_sample;
  /* the section (poincare.event) */
  contact_engine *ce;
  tf_poincare_recorder recorder;
  const tf_contact *step; /* the engine whose step is scanned */
  bool done, stop;        /* done: the slots are full; stop: the member ends at the crossing */
  double t_stop, x_stop[TF_MAX_DIM];
} contact_sink;

static void on_event(void *ctx, const tf_contact_event *ev) {
  contact_sink *s = ctx;
  const tf_member_layout *l = &s->e->layout;
  if (s->events >= l->event_slots || !s->b->event_log) return;
  double *row = s->b->event_log + (size_t)s->events++ * l->event_width;
  row[0] = ev->t, row[1] = ev->kind, row[2] = ev->detail;
  memcpy(row + EVENT_HEAD, ev->x, l->dim * sizeof *ev->x);
}

static void dense(const void *c, double t, double *x) {
  tf_contact_dense(c, t, x);
}

/* A counted crossing at (t, x): recorded with the mode of the step; true once the slots are
 * full (poincare.action stop: the member ends there). */
static bool record_crossing(void *ctx, double t, const double *x) {
  contact_sink *s = ctx;
  contact_engine *ce = s->ce;
  const long long j = ce->rec.recorded;
  s->done = tf_poincare_recorder_add(&s->recorder, t, x) != 0;
  if (ce->rec.recorded > j) ce->modes[j] = tf_contact_mode(s->step);
  if (!s->done) return false;
  tf_poincare_continue_period(&ce->rec, ce->spec.count, ce->modes);
  if (ce->spec.action == TF_POINCARE_STOP) {
    s->stop = true, s->t_stop = t;
    memcpy(s->x_stop, x, s->e->layout.dim * sizeof *x);
  }
  return true;
}

/* settings.step: the step as the engine cut it at events (up to the crossing that ends the
 * member), whose dense output ops->dense gives. */
static void seen_step(contact_sink *s, const tf_contact *c, double ta, double tb) {
  tf_member_engine *e = s->e;
  contact_engine *ce = s->ce;
  if (!e->settings.step || !(ta < tb)) return;
  ce->seeing = c, ce->seen[0] = ta, ce->seen[1] = tb;
  e->dense_valid = true;
  e->settings.step(e->settings.ctx, e, ta, tb);
  ce->seeing = NULL, e->dense_valid = false;
}

static void on_step(void *ctx, const tf_contact *c, double ta, double tb) {
  contact_sink *s = ctx;
  const tf_member_layout *l = &s->e->layout;
  if (s->ce->crossings && !s->done) {
    s->step = c;
    tf_section_crossings_step(s->ce->crossings, dense, c, ta, tb, record_crossing, s);
    if (s->stop) { /* nothing after the crossing is the member's */
      tb = s->t_stop;
      tf_contact_request_stop(c);
    }
  }
  seen_step(s, c, ta, tb);
  for (; s->next_sample < l->samples; s->next_sample++) {
    const double ts = tf_member_sample_time(l->t0, l->t_end, s->next_sample, l->samples);
    if (ts > tb || ts < ta) break;
    const size_t i = (size_t)s->next_sample;
    if (s->b->sample_x) tf_contact_dense(c, ts, s->b->sample_x + i * l->dim);
    if (s->b->sample_t) s->b->sample_t[i] = ts;
    if (s->b->sample_mode) s->b->sample_mode[i] = tf_contact_mode(c);
    /* the loop ends the run at its next step, pending */
    if (tf_stop_point(s->e->settings.stop)) {
      s->next_sample++;
      break;
    }
  }
}

static void run(tf_member_engine *e, uint64_t member, const tf_member_buffers *b,
                tf_member_result *r) {
  contact_engine *ce = e->impl;
  const tf_member_layout *l = &e->layout;
  double initial[TF_MAX_DIM], final[TF_MAX_DIM];
  double *x0 = b->initial ? b->initial : initial, *x = b->final ? b->final : final;
  tf_flow_initial_state(&ce->flow, member, x0);
  memcpy(x, x0, l->dim * sizeof *x);
  /* sample 0 too comes from the first step's dense output */
  contact_sink sink = {.e = e, .b = b, .ce = ce};
  if (ce->crossings) {
    tf_poincare_recorder_start(&sink.recorder, &ce->spec, l->dim, &ce->rec);
    tf_section_crossings_start(ce->crossings);
    for (long long j = 0; j < ce->spec.count; j++) ce->modes[j] = NAN;
  }
  const tf_contact_hooks hooks = {on_event, on_step, &sink};
  const bool hooked = l->samples > 0 || l->event_slots > 0 || ce->crossings || e->settings.step;
  tf_contact_result cr =
      tf_contact_run(l->kernel, l->params, &ce->opts, l->t0, x, l->t_end, hooked ? &hooks : NULL);
  if (sink.stop) { /* the section ended the member at its crossing, inside the last step */
    if (ce->dual) cr.dual.time_in[cr.dual.final_case] -= cr.dual.t - sink.t_stop;
    cr.status = cr.c2.status = cr.dual.status = TF_MEMBER_OK;
    cr.t = cr.c2.t = cr.dual.t = sink.t_stop;
    memcpy(x, sink.x_stop, l->dim * sizeof *x);
  }
  r->status = cr.status;
  r->t = cr.t;
  r->work = cr.work;
  r->events[0] = cr.events;
  r->mode = cr.mode;
  r->failure = cr.failure;
  r->exponents = ce->dual ? 0 : ce->opts.exponents;
  memcpy(r->lyapunov, cr.c2.lyapunov, sizeof r->lyapunov);
  r->sample_rows = sink.next_sample;
  r->event_rows = sink.events;
  r->tag = TF_MEMBER_EXTRA_CONTACT;
  r->extra.contact = cr;
  if (!ce->crossings) return;
  r->poincare.samples = ce->rec.samples, r->poincare.modes = ce->modes;
  r->poincare.recorded = ce->rec.recorded, r->poincare.period = ce->rec.period;
}

/* Inside settings.step only: the contact engines (evolve2, dual_contact) live for one
 * tf_contact_run, so no step is left to interpolate after it.  The step's mode's field (slip,
 * roll on Sigma, a kinematic case) on the stepper's continuous extension, a two-contact body's
 * state put back on its manifold (tf_dual_dense). */
static int dense_output(const tf_member_engine *e, double t, double *x, double step[2]) {
  const contact_engine *ce = e->impl;
  step[0] = step[1] = e->layout.t0;
  if (!ce->seeing) return -1;
  step[0] = ce->seen[0], step[1] = ce->seen[1];
  if (!(t >= step[0] && t <= step[1])) return -1;
  tf_contact_dense(ce->seeing, t, x);
  return 0;
}

static void destroy(tf_member_engine *e) {
  contact_engine *ce = e->impl;
  if (!ce) return;
  tf_flow_destroy(&ce->flow);
  tf_section_crossings_destroy(ce->crossings);
  free(ce->rec.samples), free(ce->modes);
  free(ce);
}

/* The kernel's named outputs at the final state, as final_<name>. */
static void report_outputs(tf_json *j, const tf_member_layout *l, const double *final) {
  const tf_kernel *k = l->kernel;
  double out[16];
  if (!k->outputs || k->noutputs > 16) return;
  k->outputs(final, l->params, out);
  for (size_t i = 0; i < k->noutputs; i++) {
    char key[128];
    snprintf(key, sizeof key, "final_%s", k->output_names[i]);
    tf_json_number(j, key, out[i]);
  }
}

static void report_dual(tf_json *j, const tf_dual_result *d) {
  tf_json_string(j, "final_case", tf_dc_case_name(d->final_case));
  const char *names[TF_DC_EVENT_KIND_COUNT];
  long long counts[TF_DC_EVENT_KIND_COUNT];
  for (int i = 0; i < TF_DC_EVENT_KIND_COUNT; i++)
    names[i] = tf_dc_event_kind_name((tf_dc_event_kind)i), counts[i] = d->counts[i];
  tf_json_counts(j, "events", names, counts, TF_DC_EVENT_KIND_COUNT);
  tf_json_numbers(j, "time_in", d->time_in, TF_DC_CASE_COUNT);
  tf_json_integer(j, "rhs_evals", d->work.rhs_evals);
  if (d->failure) tf_json_string(j, "failure", d->failure);
}

static void report_codim2(tf_json *j, const tf_member_result *r) {
  const tf_evolve2_result *c2 = &r->extra.contact.c2;
  tf_json_number(j, "rolling_onset_time", c2->first_roll_time);
  tf_json_string(j, "final_mode", tf_c2_mode_name(c2->mode));
  const char *names[TF_C2_EVENT_KIND_COUNT];
  long long counts[TF_C2_EVENT_KIND_COUNT];
  for (int i = 0; i < TF_C2_EVENT_KIND_COUNT; i++)
    names[i] = tf_c2_event_kind_name((tf_c2_event_kind)i), counts[i] = c2->counts[i];
  tf_json_counts(j, "events", names, counts, TF_C2_EVENT_KIND_COUNT);
  tf_json_integer(j, "rhs_evals", c2->work.rhs_evals);
  if (c2->failure) tf_json_string(j, "failure", c2->failure);
  if (r->exponents > 0) tf_json_numbers(j, "lyapunov", r->lyapunov, (size_t)r->exponents);
}

static void report(const tf_member_engine *e, const tf_member_result *r, const double *final,
                   tf_json *j) {
  const contact_engine *ce = e->impl;
  if (ce->dual)
    report_dual(j, &r->extra.contact.dual);
  else
    report_codim2(j, r);
  report_outputs(j, &e->layout, final);
  if (ce->crossings) tf_json_integer(j, "poincare_recorded", r->poincare.recorded);
}

static const tf_member_ops member_ops = {
    .name = "contact",
    .create = create,
    .run = run,
    .dense = dense_output,
    .destroy = destroy,
    .report = report,
};

/* The stationary engine of a body with two contacts is TF_STATIONARY_DUAL (stationary.c); the
 * spectrum runs through contact_run.h, with the codim2.* options. */
const tf_route_ops tf_route_contact = {.name = "contact",
                                       .member = &member_ops,
                                       .smooth_field = true,
                                       .stationary = TF_STATIONARY_CODIM2,
                                       .lyapunov_method = "codim2-events+saltation"};
