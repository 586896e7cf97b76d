/* member_flow.c — the member-engine adapter of smooth flows, SDEs, PETSc TS and impact systems
 * (flow.h; impact kernels and flows recorded at events run inside it on poincare.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "member_engine.h"
#include "physical_initial.h"
#include "routes.h"
#include "status.h"

typedef struct flow_engine {
  tf_flow flow;
} flow_engine;

static const char *const fingerprint[] = {
    "job",           "model",          "initial", "integrator", "ensemble.member",
    "ensemble.seed", "output.samples", "impact",  "poincare",   NULL};

static void fill_layout(tf_member_layout *l, const tf_flow *flow) {
  l->kernel = flow->kernel;
  l->params = flow->params;
  l->dim = flow->kernel->dim;
  l->t0 = flow->t0, l->t_end = flow->t_end;
  l->counts_jacobians = flow->method == TF_METHOD_PETSC_TS;
  l->stops_inside = flow->method == TF_METHOD_PETSC_TS;
  l->calls_mpi = flow->method == TF_METHOD_PETSC_TS;
  l->samples_doc = "state at the sample times (samples x dim)";
  l->fingerprint = fingerprint;
  l->traced_integrator = l->integrator;
  l->batch = flow->method == TF_METHOD_PETSC_TS ? flow->batch : 1;
  l->counts_impacts = flow->poincare != NULL;
  l->poincare_slots = flow->poincare && flow->poincare_spec.record ? flow->poincare_spec.count : 0;
  snprintf(l->integrator, sizeof l->integrator, "%s", tf_flow_integrator_name(flow));
  l->lanes = tf_flow_lanes(flow);
}

/* settings.step: the step just accepted is the one ops->dense interpolates. */
static void seen_step(void *ctx, double ta, double tb) {
  tf_member_engine *e = ctx;
  e->dense_valid = true;
  e->settings.step(e->settings.ctx, e, ta, tb);
}

static int create(tf_member_engine *e, tf_config *cfg, const tf_kernel *k,
                  const tf_member_settings *s, tf_error *err) {
  (void)k, (void)s;
  flow_engine *fe = calloc(1, sizeof *fe);
  if (!(e->impl = fe)) return tf_fail(err, "out of memory");
  const bool state_given = tf_config_has(cfg, "initial.state");
  tf_flow *flow = &fe->flow;
  tf_member_settings *own = &e->settings;
  if (tf_flow_from_config(flow, cfg, s->comm, s->stop, err) ||
      tf_physical_initial_from_config(cfg, flow->kernel, flow->params, state_given, flow->x0,
                                      err) ||
      tf_member_member_keys(own, cfg, err) || tf_member_output_keys(own, cfg, err))
    return -1;
  e->layout.samples = own->samples;
  if (own->samples == TF_MEMBER_SAMPLES_FROM_CONFIG &&
      tf_member_read_trajectory_samples(cfg, &e->layout.samples, err))
    return -1;
  fill_layout(&e->layout, flow);
  const bool batched = flow->method == TF_METHOD_PETSC_TS && flow->batch > 1;
  if (tf_member_sampling(e, cfg, flow->x0, flow->params, flow->seed, flow->spread, false,
                         batched ? "PETSc TS solves a batch of members with one set of "
                                   "parameters; set integrator.ts.batch: 1 to sample them"
                                 : NULL,
                         err))
    return -1;
  flow->sampling = e->sampling;
  /* a member's drawn parameters are the flow's while it runs: members that draw their own
   * cannot share the flow side by side */
  if (e->layout.sampled_params > 0) flow->lanes = 1, e->layout.lanes = 1;
  if (!s->step) return 0;
  const bool sde = flow->method != TF_METHOD_DOPRI5 && flow->method != TF_METHOD_PETSC_TS;
  if (sde && flow->kernel->dim > TF_MAX_DIM)
    return tf_fail(err,
                   "route 'flow': a step hook keeps the ends of an SDE member's grid step for its "
                   "dense output, at most %d components (model '%s' has %zu)",
                   TF_MAX_DIM, flow->kernel->name, flow->kernel->dim);
  if (flow->method == TF_METHOD_PETSC_TS && !tf_flow_ts_interpolates(flow))
    return tf_fail(err,
                   "route 'flow': PETSc TS type '%s' (with integrator.ts.options and the command "
                   "line's -ts_* options) has no interpolation inside a step, so a step hook "
                   "has no dense output; choose one that has, such as rosw with the default "
                   "-ts_rosw_type ra34pw2",
                   flow->ts_type);
  /* lanes have no one stepper to interpolate: members one by one */
  flow->on_step = seen_step, flow->on_step_ctx = e, flow->lanes = 1, e->layout.lanes = 1;
  return 0;
}

typedef struct sample_sink {
  const tf_member_buffers *b;
  size_t dim;
  long n, taken;
} sample_sink;

static void record_sample(void *ctx, double t, const double *x) {
  sample_sink *s = ctx;
  if (s->taken >= s->n) return;
  if (s->b->sample_t) s->b->sample_t[s->taken] = t;
  if (s->b->sample_x) memcpy(s->b->sample_x + (size_t)s->taken * s->dim, x, s->dim * sizeof *x);
  s->taken++;
}

static void impact_extra(const tf_flow *flow, tf_member_result *r) {
  const tf_poincare_record *pr = &flow->poincare_rec;
  r->tag = TF_MEMBER_EXTRA_IMPACT;
  r->extra.impact.counts = pr->result;
  r->poincare.samples = pr->samples;
  r->poincare.recorded = pr->recorded;
  r->poincare.period = pr->period;
  r->failure = pr->result.message[0] ? pr->result.message : NULL;
}

/* Before a member runs: its initial state, samples cleared, the sink taking them. */
static bool begin_member(tf_member_engine *e, uint64_t member, const tf_member_buffers *b,
                         sample_sink *sink) {
  tf_flow *flow = &((flow_engine *)e->impl)->flow;
  const size_t n = flow->kernel->dim;
  if (b->initial) tf_flow_initial_state(flow, member, b->initial);
  const long samples = e->layout.samples;
  *sink = (sample_sink){b, n, samples, 0};
  if (b->sample_x)
    for (size_t i = 0; i < (size_t)samples * n; i++) b->sample_x[i] = NAN;
  return samples > 0 && (b->sample_x || b->sample_t);
}

static void end_member(tf_member_engine *e, const tf_flow_result *fr, bool sampled,
                       const sample_sink *sink, tf_member_result *r) {
  tf_flow *flow = &((flow_engine *)e->impl)->flow;
  r->status = fr->status;
  /* A PETSc TS batch is solved for several members at once, so the solve that stopped may be
   * another member's: every member of a stopped run is not done (computed again on resume). */
  if (tf_stop_requested(e->settings.stop) && (!sampled || sink->taken < sink->n))
    r->status = TF_MEMBER_PENDING;
  r->t = fr->t_final;
  r->work = fr->work;
  r->sample_rows = sink->taken;
  if (flow->poincare) impact_extra(flow, r);
}

/* The flow's dense output (tf_flow_dense): the stepper's continuous extension (DOPRI5 and
 * every stepper type of integrator.method), the impact engine's inside a step cut at events
 * (impact kernels, flows recorded at events), PETSc TS's interpolant of the member's slot
 * inside a step hook only (the TS is gone after its solve), and for an SDE scheme, which has
 * none of its own, the linear interpolant of the grid step's ends (kept while a hook watches). */
static int dense(const tf_member_engine *e, double t, double *x, double step[2]) {
  const tf_flow *flow = &((const flow_engine *)e->impl)->flow;
  tf_flow_last_step(flow, step);
  return tf_flow_dense(flow, t, x);
}

static void run(tf_member_engine *e, uint64_t member, const tf_member_buffers *b,
                tf_member_result *r) {
  tf_flow *flow = &((flow_engine *)e->impl)->flow;
  double scratch[TF_MAX_DIM];
  double *final = b->final ? b->final : scratch;
  sample_sink sink;
  const bool sampled = begin_member(e, member, b, &sink);
  const tf_flow_result fr = tf_flow_run_member(flow, member, final, sampled ? record_sample : NULL,
                                               &sink, sampled ? sink.n : 0);
  end_member(e, &fr, sampled, &sink, r);
  e->dense_valid = fr.work.steps > 0;
}

/* Members side by side in lanes where the flow has them (flow.h), else one by one. */
static void run_many(tf_member_engine *e, size_t count, const uint64_t *members,
                     const tf_member_buffers *b, tf_member_result *r) {
  tf_flow *flow = &((flow_engine *)e->impl)->flow;
  const size_t n = flow->kernel->dim;
  tf_flow_lane_member *m = calloc(count, sizeof *m);
  sample_sink *sinks = calloc(count, sizeof *sinks);
  double *scratch = calloc(count * n, sizeof *scratch);
  if (tf_flow_lanes(flow) <= 1 || !m || !sinks || !scratch) {
    for (size_t i = 0; i < count; i++) run(e, members[i], &b[i], &r[i]);
  } else {
    bool sampled = false;
    for (size_t i = 0; i < count; i++) {
      sampled = begin_member(e, members[i], &b[i], &sinks[i]);
      m[i] = (tf_flow_lane_member){.member = members[i],
                                   .x = b[i].final ? b[i].final : scratch + i * n,
                                   .sample = sampled ? record_sample : NULL,
                                   .sample_ctx = &sinks[i]};
    }
    tf_flow_run_lanes(flow, m, count, sampled ? e->layout.samples : 0, e->settings.computing);
    for (size_t i = 0; i < count; i++)
      end_member(e, &m[i].result, m[i].sample != NULL, &sinks[i], &r[i]);
  }
  free(m), free(sinks), free(scratch);
}

static void destroy(tf_member_engine *e) {
  flow_engine *fe = e->impl;
  if (!fe) return;
  tf_flow_destroy(&fe->flow);
  free(fe);
}

static void report(const tf_member_engine *e, const tf_member_result *r, const double *final,
                   tf_json *j) {
  (void)e, (void) final;
  if (r->tag != TF_MEMBER_EXTRA_IMPACT) return;
  const tf_impact_result *ir = &r->extra.impact.counts; /* what happened at the constraints */
  tf_json_integer(j, "impacts", ir->impacts);
  tf_json_integer(j, "chattering_episodes", ir->chatters);
  tf_json_integer(j, "releases", ir->releases);
  tf_json_integer(j, "section_crossings", ir->sections);
  tf_json_number(j, "stick_time", ir->stick_time);
  if (ir->message[0]) tf_json_string(j, "failure", ir->message);
}

static const tf_member_ops member_ops = {
    .name = "flow",
    .create = create,
    .run = run,
    .run_many = run_many,
    .dense = dense,
    .destroy = destroy,
    .report = report,
};

static int flow_spectrum(const tf_kernel *k, const double *p, const double *x0,
                         const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                         tf_lyapunov_result *r, tf_error *err) {
  (void)saltation; /* no events */
  return tf_lyapunov_flow(k, p, x0, ode, o, r, err);
}
/* Impact systems and flows whose state a section resets run on the impact engine (poincare.h). */
static int impact_spectrum(const tf_kernel *k, const double *p, const double *x0,
                           const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                           tf_lyapunov_result *r, tf_error *err) {
  (void)saltation; /* the reset's saltation is always applied */
  return tf_lyapunov_impact(k, p, x0, ode, o, r, err);
}

const tf_route_ops tf_route_flow = {.name = TF_ROUTE_SMOOTH_FLOW,
                                    .member = &member_ops,
                                    .smooth_field = true,
                                    .stationary = TF_STATIONARY_SMOOTH,
                                    .lyapunov = flow_spectrum,
                                    .lyapunov_method = "variational",
                                    .lyapunov_resets = impact_spectrum,
                                    .section_resets = true};

/* Impact systems run inside flow.h (on poincare.h), so they share this adapter.  The stationary
 * quantity would run the free flight alone, through the walls. */
const tf_route_ops tf_route_impact = {
    .name = "impact",
    .member = &member_ops,
    .impacts = true,
    .smooth_field = true,
    .stationary = TF_STATIONARY_NONE,
    .lyapunov = impact_spectrum,
    .lyapunov_method = "variational",
    .collapse_why =
        "sticking on an impact constraint (after chattering or a plastic impact) maps "
        "every tangent vector into its tangent space",
    .lyapunov_resets = impact_spectrum,
    .section_resets = true};
