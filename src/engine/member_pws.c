/* member_pws.c — the member-engine adapter of event-driven Filippov members (pws.h: one
 * switching function on evolve.h, several on switches.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "member_engine.h"
#include "pws.h"
#include "pws_lanes.h"
#include "pws_section.h"
#include "routes.h"
#include "status.h"

typedef struct pws_engine {
  tf_pws pws;
  const char *kind_names[TF_EVENT_KIND_COUNT];
  char kinds[256]; /* "slide_start,slide_end,...": the kinds attribute of event logs */
  /* where the logs go when a job does not keep them */
  double *scratch_exits, *scratch_events, *scratch_samples;
  /* poincare.event: the section recorded on the member's steps (NULL: none), and its record */
  tf_poincare_spec spec;
  tf_pws_section *section;
  /* inside settings.step: the step seen, which ends at an event where the stepper's goes on */
  bool seeing;
  double seen[2];
  tf_pws_section_record out;
} pws_engine;

static const char *const modes_doc =
    "-1 slip-, 0 sliding, 1 slip+, 2 rest, 3 along the intersection";
static const char *const switches_modes_doc =
    "sum over switching functions i of (s_i + 1) 3^i, s_i -1 slip-, 0 stick, 1 slip+";

static const char *const fingerprint[] = {
    "job",          "model",           "initial",       "integrator",     "filippov", "exit",
    "intersection", "ensemble.member", "ensemble.seed", "output.samples", NULL};

static void fill_layout(tf_member_layout *l, pws_engine *pe) {
  const tf_pws *pws = &pe->pws;
  l->kernel = pws->model.kernel;
  l->params = pws->model.params;
  l->dim = l->kernel->dim;
  l->t0 = pws->t0, l->t_end = pws->t_end;
  l->samples = pws->trajectory_samples;
  l->event_kinds = TF_EVENT_KIND_COUNT;
  l->event_kind_names = pe->kind_names;
  l->events_doc = "events per kind (attribute kinds)";
  l->mode_doc = pws->switches ? "mode at t_final: sum over switching functions i of "
                                "(s_i + 1) 3^i, s_i -1 slip-, 0 stick, 1 slip+"
                              : "mode at t_final: -1 slip-, 0 sliding, 1 slip+";
  l->counts_rhs = l->counts_kinds = true;
  /* arrivals happen only at a located nondeterministic two-fold (pws.c): elsewhere none */
  l->counts_visits = pws->has_twofold && pws->twofold.nondeterministic;
  l->exit_slots = pws->max_logged_exits, l->exit_width = tf_pws_exit_width(pws);
  l->event_slots = pws->max_logged_events, l->event_width = tf_pws_event_width(pws);
  l->event_log_doc =
      "events: t, kind, mode before, mode after (-1 slip-, 0 sliding, 1 slip+, "
      "2 rest, 3 along the intersection), state";
  l->event_log_attr = pe->kinds;
  l->samples_doc = "state at the sample times (samples x dim; NaN after a stop)";
  l->fingerprint = fingerprint;
  if (pe->section) {
    l->poincare_slots = (long)pe->spec.count;
    l->poincare_mode_doc = "mode at each recorded crossing (attribute modes), NaN-padded";
    l->modes_attr = pws->switches ? switches_modes_doc : modes_doc;
  }
  snprintf(l->integrator, sizeof l->integrator, "%s+events",
           tf_stepper_type_name(pws->opts.ode.type));
  l->traced_integrator = l->integrator;
  l->batch = 1;
  l->lanes = tf_pws_lanes_width(pws, pws->lanes);
}

/* The replay tables of the policies that name an earlier results file: reading a file is io,
 * above the engines, so the job hands the reader down. */
static int read_replays(const tf_member_settings *s, tf_pws *pws, uint64_t members, tf_error *err) {
  if (s->read_replays)
    return s->read_replays(&pws->policy, &pws->choice, members, pws->max_logged_exits, err);
  if (pws->policy.replay_from.path || pws->choice.replay_from.path)
    return tf_fail_code(err, TF_ERR_INTERNAL,
                        "internal error: a replay file is named but this job reads none");
  return 0;
}

/* poincare.* (read only when poincare.event is given, so other configs read as before): the
 * section of pws_section.h, its crossings recorded with the mode at each. */
static int section_setup(pws_engine *pe, tf_config *cfg, tf_error *err) {
  tf_pws *pws = &pe->pws;
  const tf_kernel *k = pws->model.kernel;
  if (!tf_config_has(cfg, "poincare.event")) return 0;
  if (tf_poincare_from_config(&pe->spec, cfg, k, &pws->opts.ode, err) ||
      tf_pws_section_check(&pe->spec, cfg, pws, err))
    return -1;
  const size_t n = k->dim, count = (size_t)pe->spec.count;
  const size_t slides = (size_t)tf_pws_section_slide_slots(&pe->spec) * (3 + n);
  tf_pws_section_record *o = &pe->out;
  o->poincare.samples = malloc(count * (1 + n) * sizeof(double));
  o->modes = malloc(count * sizeof(double));
  o->sliding = malloc(3 * (size_t)tf_pws_surfaces(pws) * sizeof(double));
  o->slides = malloc(slides * sizeof(double));
  pe->section = tf_pws_section_create(pws, &pe->spec);
  if (!o->poincare.samples || !o->modes || !o->sliding || !o->slides || !pe->section)
    return tf_fail(err, "out of memory for the section of a member");
  return 0;
}

/* settings.step: the step just accepted is the one ops->dense interpolates. */
static void seen_step(void *ctx, double ta, double tb) {
  tf_member_engine *e = ctx;
  pws_engine *pe = e->impl;
  pe->seeing = true, pe->seen[0] = ta, pe->seen[1] = tb;
  e->dense_valid = true;
  e->settings.step(e->settings.ctx, e, ta, tb);
  pe->seeing = false;
}

static int create(tf_member_engine *e, tf_config *cfg, const tf_kernel *k,
                  const tf_member_settings *s, tf_error *err) {
  (void)k;
  pws_engine *pe = calloc(1, sizeof *pe);
  if (!(e->impl = pe)) return tf_fail(err, "out of memory");
  tf_pws *pws = &pe->pws;
  tf_member_settings *own = &e->settings;
  const long long d_members = 1;
  long long members = (long long)s->members;
  if (tf_member_member_keys(own, cfg, err) ||
      (members == 0 &&
       tf_config_get_int(cfg, "ensemble.members", &d_members, 1, LLONG_MAX, &members, err)) ||
      tf_pws_from_config(pws, cfg, s->comm, s->stop, err) ||
      read_replays(s, pws, (uint64_t)members, err) || tf_member_output_keys(own, cfg, err) ||
      section_setup(pe, cfg, err))
    return -1;
  if (own->samples != TF_MEMBER_SAMPLES_FROM_CONFIG) pws->trajectory_samples = own->samples;
  for (int i = 0; i < TF_EVENT_KIND_COUNT; i++) {
    pe->kind_names[i] = tf_event_kind_name((tf_event_kind)i);
    snprintf(pe->kinds + strlen(pe->kinds), sizeof pe->kinds - strlen(pe->kinds), "%s%s",
             i ? "," : "", pe->kind_names[i]);
  }
  fill_layout(&e->layout, pe);
  const bool fixed = pws->has_twofold && pws->twofold.nondeterministic;
  if (tf_member_sampling(e, cfg, pws->x0, pws->model.params, pws->seed, pws->spread,
                         pws->at_twofold,
                         fixed ? "the exit policy at the model's nondeterministic two-fold is set "
                                 "up for one set of parameters; sample the initial state only"
                               : NULL,
                         err))
    return -1;
  pws->sampling = e->sampling;
  if (e->layout.sampled_params > 0) e->layout.lanes = 1; /* one parameter array for all lanes */
  /* a section's crossings are recorded around one member's run (tf_pws_section_run, its watch
   * set only then), which the lanes do not take */
  if (pe->section) e->layout.lanes = 1;
  /* settings.step: members one by one (tf_member_engine_run_many), each step seen */
  if (s->step) pws->on_step = seen_step, pws->on_step_ctx = e, e->layout.lanes = 1;
  const tf_member_layout *l = &e->layout;
  pe->scratch_exits = malloc(((size_t)l->exit_slots * l->exit_width + 1) * sizeof(double));
  pe->scratch_events = malloc(((size_t)l->event_slots * l->event_width + 1) * sizeof(double));
  pe->scratch_samples = malloc(((size_t)l->samples * l->dim + 1) * sizeof(double));
  if (!pe->scratch_exits || !pe->scratch_events || !pe->scratch_samples)
    return tf_fail(err, "out of memory for the logs of a member");
  return 0;
}

/* Rows of a NaN-padded log: how many are filled. */
static long logged_rows(const double *log, long slots, size_t width) {
  long rows = 0;
  while (rows < slots && !isnan(log[(size_t)rows * width])) rows++;
  return rows;
}

/* A member's record: into the job's buffers where it keeps them, else into scratch (initial
 * and final: dim values each; the logs: the engine's own scratch for one member at a time,
 * scratch_logs for members side by side, exits, events and samples after each other). */
static tf_pws_record record_of(const pws_engine *pe, const tf_member_layout *l,
                               const tf_member_buffers *b, double *initial, double *final,
                               double *scratch_logs) {
  double *exits = pe->scratch_exits, *events = pe->scratch_events, *samples = pe->scratch_samples;
  if (scratch_logs) {
    exits = scratch_logs, events = exits + (size_t)l->exit_slots * l->exit_width + 1;
    samples = events + (size_t)l->event_slots * l->event_width + 1;
  }
  return (tf_pws_record){.final_state = b->final ? b->final : final,
                         .initial_state = b->initial ? b->initial : initial,
                         .exits = b->exits ? b->exits : exits,
                         .events = b->event_log ? b->event_log : events,
                         .trajectory = b->sample_x ? b->sample_x : samples};
}

/* The doubles of one member's scratch logs (record_of). */
static size_t scratch_size(const tf_member_layout *l) {
  return (size_t)l->exit_slots * l->exit_width + (size_t)l->event_slots * l->event_width +
         (size_t)l->samples * l->dim + 3;
}

/* The result of a member run into rec, with status `status`. */
static void fill_result(const tf_member_engine *e, const tf_member_buffers *b,
                        const tf_pws_record *rec, int status, tf_member_result *r) {
  const tf_member_layout *l = &e->layout;
  r->status = status;
  r->t = rec->t_final;
  r->work = rec->work;
  for (int i = 0; i < TF_EVENT_KIND_COUNT; i++) r->events[i] = rec->counts[i];
  r->visits = rec->counts[TF_EVENT_TWOFOLD];
  r->mode = rec->final_mode;
  r->sample_rows = l->samples; /* NaN after a stop */
  for (long i = 0; b->sample_t && i < l->samples; i++)
    b->sample_t[i] = tf_member_sample_time(l->t0, l->t_end, i, l->samples);
  r->event_rows = logged_rows(rec->events, l->event_slots, l->event_width);
  r->exit_rows = logged_rows(rec->exits, l->exit_slots, l->exit_width);
}

static void run(tf_member_engine *e, uint64_t member, const tf_member_buffers *b,
                tf_member_result *r) {
  pws_engine *pe = e->impl;
  double initial[TF_MAX_DIM], final[TF_MAX_DIM];
  tf_pws_record rec = record_of(pe, &e->layout, b, initial, final, NULL);
  int status;
  if (pe->section) {
    const tf_pws_section_record *o = &pe->out;
    status = tf_pws_section_run(pe->section, member, &rec, &pe->out);
    r->poincare.samples = o->poincare.samples, r->poincare.modes = o->modes;
    r->poincare.recorded = o->poincare.recorded, r->poincare.period = o->poincare.period;
  } else {
    status = tf_pws_run_member(&pe->pws, member, &rec);
  }
  fill_result(e, b, &rec, status, r);
  e->dense_valid = r->work.steps > 0;
}

/* Members side by side in lanes where the model has them (pws_lanes.h), else one by one. */
static void run_many(tf_member_engine *e, size_t count, const uint64_t *members,
                     const tf_member_buffers *b, tf_member_result *r) {
  pws_engine *pe = e->impl;
  const tf_member_layout *l = &e->layout;
  const size_t n = l->dim, logs = scratch_size(l);
  tf_pws_lane_member *m = calloc(count, sizeof *m);
  tf_pws_record *recs = calloc(count, sizeof *recs);
  double *states = calloc(count * 2 * n, sizeof *states);
  double *scratch = calloc(count * logs, sizeof *scratch);
  if (l->lanes <= 1 || !m || !recs || !states || !scratch) {
    for (size_t i = 0; i < count; i++) run(e, members[i], &b[i], &r[i]);
  } else {
    for (size_t i = 0; i < count; i++) {
      recs[i] =
          record_of(pe, l, &b[i], states + 2 * n * i, states + 2 * n * i + n, scratch + logs * i);
      m[i] = (tf_pws_lane_member){.member = members[i], .rec = &recs[i]};
    }
    tf_pws_run_lanes(&pe->pws, l->lanes, m, count, e->settings.computing);
    for (size_t i = 0; i < count; i++) fill_result(e, &b[i], &recs[i], m[i].status, &r[i]);
  }
  free(m), free(recs), free(states), free(scratch);
}

/* The stepper's last step is on the field of the segment it lies in (a slip mode's, or the
 * sliding vector field), so its extension is the member's solution there; after an event the
 * stepper restarts, and until its next step there is no step to interpolate. */
static int dense(const tf_member_engine *e, double t, double *x, double step[2]) {
  const pws_engine *pe = e->impl;
  const tf_pws *pws = &pe->pws;
  if (pe->seeing)
    step[0] = pe->seen[0], step[1] = pe->seen[1];
  else
    tf_pws_last_step(pws, step);
  if (!(step[0] < step[1] && t >= step[0] && t <= step[1])) return -1;
  double all[TF_MAX_DIM * (TF_MAX_DIM + 1)]; /* the engine's state may carry tangent vectors */
  tf_pws_dense(pws, t, all);
  memcpy(x, all, e->layout.dim * sizeof *x);
  return 0;
}

static void destroy(tf_member_engine *e) {
  pws_engine *pe = e->impl;
  if (!pe) return;
  tf_pws_section_destroy(pe->section);
  tf_pws_destroy(&pe->pws);
  free(pe->scratch_exits), free(pe->scratch_events), free(pe->scratch_samples);
  free(pe->out.poincare.samples), free(pe->out.modes), free(pe->out.sliding), free(pe->out.slides);
  free(pe);
}

static void report(const tf_member_engine *e, const tf_member_result *r, const double *final,
                   tf_json *j) {
  (void) final;
  const pws_engine *pe = e->impl;
  char mode[64];
  tf_json_string(j, "final_mode", tf_pws_mode_name(&pe->pws, r->mode, mode, sizeof mode));
  if (e->layout.counts_visits) tf_json_integer(j, "twofold_visits", r->visits);
  long long counts[TF_EVENT_KIND_COUNT];
  for (int i = 0; i < TF_EVENT_KIND_COUNT; i++) counts[i] = r->events[i];
  tf_json_counts(j, "events", pe->kind_names, counts, TF_EVENT_KIND_COUNT);
  if (pe->section) tf_json_integer(j, "poincare_recorded", r->poincare.recorded);
}

/* On the draws log, `kinds` (what each code of its kind column means); on the results,
 * `exit_policy`, `intersection_policy`, and with weighted `intersection_weights`, with
 * regularised `intersection_smoothing_law` (a replay of a run differs from it only there). */
static void describe_draws(const tf_member_engine *e, tf_member_attr_fn put, void *ctx) {
  const tf_pws *pws = &((const pws_engine *)e->impl)->pws;
  const tf_intersection_policy *c = &pws->choice;
  put(ctx, true, "kinds",
      "0 two-fold exit, 1 intersection choice (uniform), 2 intersection choice "
      "(weighted), 3 intersection choice (regularised)");
  put(ctx, false, "exit_policy", tf_exit_kind_name(pws->policy.kind));
  put(ctx, false, "intersection_policy", tf_choice_rule_name(c->rule));
  if (c->rule == TF_CHOICE_WEIGHTED) {
    char w[256] = "";
    for (int i = 0; i < TF_DEPART_KIND_COUNT; i++)
      snprintf(w + strlen(w), sizeof w - strlen(w), "%s%s: %.17g", i ? ", " : "",
               tf_departure_kind_name((tf_departure_kind)i), c->weight[i]);
    put(ctx, false, "intersection_weights", w);
  }
  if (c->rule == TF_CHOICE_REGULARISED)
    put(ctx, false, "intersection_smoothing_law", tf_smooth_law_name(c->law.law));
}

static const tf_member_ops member_ops = {
    .name = "pws",
    .create = create,
    .run = run,
    .run_many = run_many,
    .dense = dense,
    .destroy = destroy,
    .report = report,
    .describe_draws = describe_draws,
};

const tf_route_ops tf_route_filippov = {.name = "filippov",
                                        .member = &member_ops,
                                        .stationary = TF_STATIONARY_FILIPPOV,
                                        .lyapunov = tf_lyapunov_filippov,
                                        .lyapunov_method = "events+saltation",
                                        .lyapunov_segments = true,
                                        .section_resets = true,
                                        .pws_sections = true};

static int switches_spectrum(const tf_kernel *k, const double *p, const double *x0,
                             const tf_ode_options *ode, const tf_lyapunov_options *o,
                             bool saltation, tf_lyapunov_result *r, tf_error *err) {
  (void)saltation; /* always applied at a change of mode */
  return tf_lyapunov_switches(k, p, x0, ode, o, r, err);
}

/* Several switching functions run inside pws.h too, so they share this adapter.  Their
 * stationary states are not continued yet. */
const tf_route_ops tf_route_switches = {.name = "switches",
                                        .member = &member_ops,
                                        .stationary = TF_STATIONARY_NONE,
                                        .lyapunov = switches_spectrum,
                                        .lyapunov_method = "variational",
                                        .section_resets = true,
                                        .pws_sections = true};
