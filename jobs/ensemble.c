/* ensemble.c — job `ensemble`: many members of one model, final states to HDF5.
 *
 * Smooth models run through flow.h (DOPRI5, PETSc TS or an SDE scheme), Filippov models
 * through pws.h (event-driven, with exits at a nondeterministic two-fold) unless they are
 * smoothed (model.smoothing, or smoothed by their own parameters): then through flow.h.
 * Bodies under spatial friction (codimension-2 kernels and two-contact bodies) run through
 * contact_run.h from the member's initial state (initial.state/spread as for flows, or the
 * kernel's physical initial.* keys), with the codim2.* keys; they add /members/rhs_evals,
 * /members/events (their count) and /members/final_mode (roll/slip or the kinematic case).
 * Config: model, initial, integrator, ensemble.members/seed/chunk, output; for Filippov
 * models also filippov.*, exit.*, output.event_log, output.trajectory_samples.
 * Output: /members/final_state and /members/initial_state (members x dim),
 * /members/t_final, /members/steps, /members/done, /members/status; Filippov models add
 * /members/rhs_evals, /members/events (counts per kind), /members/twofold_visits,
 * /members/final_mode and the logs /members/exits, /members/event_log and
 * /members/trajectory (fixed slots per member, NaN-padded); impact kernels (and flows with
 * poincare.event) add /members/impacts, /members/stick_time and, when recording,
 * /members/poincare, /members/poincare_recorded, /members/poincare_period.  /summary holds
 * the mean, standard deviation, min and max of the final state over the members that finished ok
 * (computed in member order on rank 0, so the numbers do not depend on the rank count). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "contact_run.h"
#include "ensemble.h"
#include "flow.h"
#include "h5io.h"
#include "job.h"
#include "physical_initial.h"
#include "pws.h"
#include "results.h"

/* Column order; the Filippov columns follow the common ones. */
enum {
  COL_FINAL,
  COL_INITIAL,
  COL_T_FINAL,
  COL_STEPS,
  COL_JACOBIANS, /* PETSc TS members only */
  COMMON_COLUMNS,
  COL_RHS = COMMON_COLUMNS,
  COL_EVENTS,
  COL_VISITS,
  COL_MODE,
  COL_EXITS,
  COL_EVENT_LOG,
  COL_TRAJECTORY,
  COL_IMPACTS, /* impact kernels and flows recorded at events (poincare.h) */
  COL_STICK,
  COL_POINCARE,
  COL_RECORDED,
  COL_PERIOD,
  MAX_COLUMNS
};

typedef struct ensemble_job {
  const tf_kernel *kernel;
  bool filippov;
  bool contact; /* codim-2 kernel or two-contact body: contact_run.h */
  tf_contact_options contact_opts;
  tf_flow flow;
  tf_pws pws;
  tf_ensemble_spec spec;
  tf_column cols[MAX_COLUMNS];
  int col_of[MAX_COLUMNS]; /* position of each column in cols[], -1 if absent */
  char state_names[512];
  long flow_samples; /* output.trajectory_samples for smooth members */
} ensemble_job;

static void add_column(ensemble_job *job, int id, tf_column c) {
  if (c.width == 0) return; /* a log switched off */
  job->col_of[id] = (int)job->spec.ncols;
  job->cols[job->spec.ncols++] = c;
}

static void filippov_columns(ensemble_job *job) {
  const tf_pws *pws = &job->pws;
  const size_t n = job->kernel->dim;
  add_column(job, COL_RHS,
             (tf_column){"rhs_evals", TF_COLUMN_I64, 1, "right-hand side evaluations"});
  add_column(job, COL_EVENTS,
             (tf_column){"events", TF_COLUMN_I64, TF_EVENT_KIND_COUNT,
                         "events per kind (attribute kinds)"});
  add_column(
      job, COL_VISITS,
      (tf_column){"twofold_visits", TF_COLUMN_I64, 1, "arrivals at the nondeterministic two-fold"});
  add_column(job, COL_MODE,
             (tf_column){"final_mode", TF_COLUMN_I64, 1,
                         pws->switches ? "mode at t_final: sum over switching functions i of "
                                         "(s_i + 1) 3^i, s_i -1 slip-, 0 stick, 1 slip+"
                                       : "mode at t_final: -1 slip-, 0 sliding, 1 slip+"});
  add_column(
      job, COL_EXITS,
      (tf_column){"exits", TF_COLUMN_F64, (uint64_t)pws->max_logged_exits * tf_pws_exit_width(pws),
                  "exit choices, slots of (t, u, side, state) (attribute fields)"});
  add_column(job, COL_EVENT_LOG,
             (tf_column){"event_log", TF_COLUMN_F64,
                         (uint64_t)pws->max_logged_events * tf_pws_event_width(pws),
                         "first events, slots of (t, kind, from, to, state)"});
  add_column(job, COL_TRAJECTORY,
             (tf_column){"trajectory", TF_COLUMN_F64, (uint64_t)pws->trajectory_samples * n,
                         "state at equally spaced times (samples x dim per member)"});
}

static void contact_columns(ensemble_job *job) {
  add_column(job, COL_RHS,
             (tf_column){"rhs_evals", TF_COLUMN_I64, 1, "right-hand side evaluations"});
  add_column(job, COL_EVENTS,
             (tf_column){"events", TF_COLUMN_I64, 1,
                         "events (arrivals at and departures from the contact sets)"});
  add_column(job, COL_MODE,
             (tf_column){"final_mode", TF_COLUMN_I64, 1,
                         "mode or kinematic case at t_final (attribute modes)"});
}

/* Bodies under spatial friction: the event-driven engines of contact_run.h, DOPRI5 only. */
static int contact_setup(tf_run *run, ensemble_job *job, bool state_given, tf_error *err) {
  if (tf_physical_initial_from_config(run->cfg, job->kernel, job->flow.params, state_given,
                                      job->flow.x0, err) ||
      tf_contact_options_from_config(run->cfg, &job->flow.ode, &job->contact_opts, err))
    return -1;
  if (job->flow.method != TF_METHOD_DOPRI5) {
    char where[256];
    return tf_fail(err,
                   "%s: key 'integrator.method': model '%s' runs on the event-driven "
                   "codimension-2 engine (dopri5)",
                   tf_config_where(run->cfg, "integrator.method", where, sizeof where),
                   job->kernel->name);
  }
  return 0;
}

static void event_columns(ensemble_job *job) {
  const tf_poincare_spec *s = &job->flow.poincare_spec;
  add_column(job, COL_IMPACTS,
             (tf_column){"impacts", TF_COLUMN_I64, 4,
                         "impacts, chattering episodes completed, releases from sticking, "
                         "section crossings"});
  add_column(job, COL_STICK,
             (tf_column){"stick_time", TF_COLUMN_F64, 1, "time spent sticking on a constraint"});
  if (!s->record) return;
  add_column(job, COL_POINCARE,
             (tf_column){"poincare", TF_COLUMN_F64, (uint64_t)s->count * (1 + job->kernel->dim),
                         "state at the recorded events: slots of (t, state), NaN-padded"});
  add_column(job, COL_RECORDED,
             (tf_column){"poincare_recorded", TF_COLUMN_I64, 1, "slots filled by events"});
  add_column(job, COL_PERIOD,
             (tf_column){"poincare_period", TF_COLUMN_I64, 1,
                         "period of the recorded values at the early stop (0: none); the slots "
                         "after poincare_recorded continue that period"});
}

static int setup(tf_run *run, tf_error *err) {
  ensemble_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  for (int i = 0; i < MAX_COLUMNS; i++) job->col_of[i] = -1;
  const long long d_members = 1000, d_chunk = 0;
  long long members, chunk;
  if (tf_config_get_int(run->cfg, "ensemble.members", &d_members, 1, 1000000000LL, &members, err))
    return -1;
  const tf_kernel *k;
  if (tf_model_kernel(run->cfg, &k, err)) return -1;
  const bool state_given = tf_config_has(run->cfg, "initial.state");
  const tf_route route = k ? tf_flow_route(run->cfg, k) : TF_ROUTE_FLOW;
  job->filippov = route == TF_ROUTE_FILIPPOV || route == TF_ROUTE_SWITCHES; /* on pws.h */
  if (job->filippov ? tf_pws_from_config(&job->pws, run->cfg, (uint64_t)members, err)
                    : tf_flow_from_config(&job->flow, run->cfg, err))
    return -1;
  job->kernel = job->filippov ? job->pws.model.kernel : job->flow.kernel;
  job->contact = !job->filippov && tf_contact_kernel(job->kernel);
  if (job->contact && contact_setup(run, job, state_given, err)) return -1;
  if (tf_config_get_int(run->cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  const size_t n = job->kernel->dim;
  add_column(job, COL_FINAL,
             (tf_column){"final_state", TF_COLUMN_F64, n, "state at t_final (members x dim)"});
  add_column(job, COL_INITIAL,
             (tf_column){"initial_state", TF_COLUMN_F64, n,
                         "state at initial.time, perturbation or exit included (members x dim)"});
  add_column(job, COL_T_FINAL, (tf_column){"t_final", TF_COLUMN_F64, 1, "time reached"});
  add_column(job, COL_STEPS, (tf_column){"steps", TF_COLUMN_I64, 1, "integrator steps taken"});
  if (!job->filippov && job->flow.method == TF_METHOD_PETSC_TS)
    add_column(job, COL_JACOBIANS,
               (tf_column){"jacobian_evals", TF_COLUMN_I64, 1,
                           "Jacobian evaluations (PETSc TS; with integrator.ts.batch > 1 the "
                           "counts, like steps, are those of the member's batch)"});
  if (job->filippov) filippov_columns(job);
  if (job->contact) contact_columns(job);
  const long long d_samples = 0;
  long long samples = 0;
  if (!job->filippov && !job->contact &&
      tf_config_get_int(run->cfg, "output.trajectory_samples", &d_samples, 0, 1000000, &samples,
                        err))
    return -1;
  if (samples == 1)
    return tf_fail(err, "key 'output.trajectory_samples': expected 0 (none) or >= 2, got 1");
  job->flow_samples = (long)samples;
  if (!job->filippov && samples > 0)
    add_column(job, COL_TRAJECTORY,
               (tf_column){"trajectory", TF_COLUMN_F64, (uint64_t)samples * n,
                           "state at equally spaced times (samples x dim per member)"});
  if (!job->filippov && job->flow.poincare) event_columns(job);
  tf_join_state_names(job->kernel, job->state_names, sizeof job->state_names);
  job->spec.members = (uint64_t)members;
  job->spec.chunk = (uint64_t)chunk;
  job->spec.cols = job->cols;
  return 0;
}

static void *slot(const ensemble_job *job, void *const *row, int id) {
  return job->col_of[id] >= 0 ? row[job->col_of[id]] : NULL;
}

typedef struct trajectory_slot {
  double *x;
  size_t dim;
  long n, taken;
} trajectory_slot;
static void record_sample(void *ctx, double t, const double *x) {
  (void)t;
  trajectory_slot *s = ctx;
  if (s->taken < s->n) memcpy(s->x + (size_t)s->taken++ * s->dim, x, s->dim * sizeof *x);
}

static int run_flow_member(void *ctx, uint64_t member, void *const *row) {
  ensemble_job *job = ctx;
  tf_flow_initial_state(&job->flow, member, row[COL_INITIAL]);
  trajectory_slot traj = {slot(job, row, COL_TRAJECTORY), job->kernel->dim, job->flow_samples, 0};
  if (traj.x)
    for (size_t i = 0; i < (size_t)traj.n * traj.dim; i++) traj.x[i] = NAN;
  const tf_flow_result r =
      tf_flow_run_member(&job->flow, member, row[COL_FINAL], traj.x ? record_sample : NULL, &traj,
                         traj.x ? traj.n : 0);
  /* a PETSc TS solve cut short by a stop request: not done (computed again on resume) */
  if (tf_checkpoint_stopped()) return TF_MEMBER_PENDING;
  *(double *)row[COL_T_FINAL] = r.t_final;
  *(int64_t *)row[COL_STEPS] = r.steps;
  if (job->col_of[COL_JACOBIANS] >= 0) *(int64_t *)slot(job, row, COL_JACOBIANS) = r.jacobian_evals;
  if (job->flow.poincare) {
    const tf_poincare_record *pr = &job->flow.poincare_rec;
    int64_t *counts = slot(job, row, COL_IMPACTS);
    counts[0] = pr->result.impacts, counts[1] = pr->result.chatters;
    counts[2] = pr->result.releases, counts[3] = pr->result.sections;
    *(double *)slot(job, row, COL_STICK) = pr->result.stick_time;
    if (job->flow.poincare_spec.record) {
      memcpy(slot(job, row, COL_POINCARE), pr->samples,
             (size_t)job->flow.poincare_spec.count * (1 + job->kernel->dim) * sizeof(double));
      *(int64_t *)slot(job, row, COL_RECORDED) = pr->recorded;
      *(int64_t *)slot(job, row, COL_PERIOD) = pr->period;
    }
  }
  return r.status;
}

static int run_contact_member(void *ctx, uint64_t member, void *const *row) {
  ensemble_job *job = ctx;
  double *x = row[COL_FINAL];
  tf_flow_initial_state(&job->flow, member, row[COL_INITIAL]);
  memcpy(x, row[COL_INITIAL], job->kernel->dim * sizeof *x);
  const tf_contact_result r = tf_contact_run(job->kernel, job->flow.params, &job->contact_opts,
                                             job->flow.t0, x, job->flow.t_end, NULL);
  *(double *)row[COL_T_FINAL] = r.t;
  *(int64_t *)row[COL_STEPS] = r.steps;
  *(int64_t *)slot(job, row, COL_RHS) = r.rhs_evals;
  *(int64_t *)slot(job, row, COL_EVENTS) = r.events;
  *(int64_t *)slot(job, row, COL_MODE) = r.mode;
  return r.status;
}

static int run_filippov_member(void *ctx, uint64_t member, void *const *row) {
  ensemble_job *job = ctx;
  tf_pws_record rec = {.final_state = row[COL_FINAL],
                       .initial_state = row[COL_INITIAL],
                       .exits = slot(job, row, COL_EXITS),
                       .events = slot(job, row, COL_EVENT_LOG),
                       .trajectory = slot(job, row, COL_TRAJECTORY)};
  const int status = tf_pws_run_member(&job->pws, member, &rec);
  *(double *)row[COL_T_FINAL] = rec.t_final;
  *(int64_t *)row[COL_STEPS] = rec.steps;
  *(int64_t *)slot(job, row, COL_RHS) = rec.rhs_evals;
  int64_t *events = slot(job, row, COL_EVENTS);
  for (int i = 0; i < TF_EVENT_KIND_COUNT; i++) events[i] = rec.counts[i];
  *(int64_t *)slot(job, row, COL_VISITS) = rec.counts[TF_EVENT_TWOFOLD];
  *(int64_t *)slot(job, row, COL_MODE) = rec.final_mode;
  return status;
}

/* Statistics of final states over ok members, read back in member order. */
typedef struct final_stats {
  double mean[64], std[64], min[64], max[64];
  long long n_ok;
} final_stats;

static int compute_stats(hid_t file, uint64_t members, size_t dim, final_stats *st) {
  hid_t xs = H5Dopen2(file, "members/final_state", H5P_DEFAULT);
  hid_t ss = H5Dopen2(file, "members/status", H5P_DEFAULT);
  hid_t status_type = tf_h5_status_type();
  const uint64_t block = 65536;
  double *x = malloc(block * dim * sizeof *x);
  uint8_t *status = malloc(block);
  double *sum = calloc(dim, sizeof *sum), *sum2 = calloc(dim, sizeof *sum2);
  int rc = xs < 0 || ss < 0 || !x || !status || !sum || !sum2;
  for (size_t i = 0; i < dim; i++) st->min[i] = INFINITY, st->max[i] = -INFINITY;
  st->n_ok = 0;
  /* Welford's update keeps the variance accurate for large ensembles. */
  for (uint64_t start = 0; start < members && !rc; start += block) {
    const uint64_t n = members - start < block ? members - start : block;
    rc = tf_h5_read_rows(xs, H5T_NATIVE_DOUBLE, dim, start, n, x) ||
         tf_h5_read_rows(ss, status_type, 1, start, n, status);
    for (uint64_t m = 0; m < n && !rc; m++) {
      if (status[m] != TF_MEMBER_OK) continue;
      st->n_ok++;
      for (size_t i = 0; i < dim; i++) {
        const double v = x[m * dim + i], delta = v - sum[i];
        sum[i] += delta / (double)st->n_ok;
        sum2[i] += delta * (v - sum[i]);
        st->min[i] = fmin(st->min[i], v);
        st->max[i] = fmax(st->max[i], v);
      }
    }
  }
  for (size_t i = 0; i < dim; i++) {
    st->mean[i] = st->n_ok ? sum[i] : NAN;
    st->std[i] = st->n_ok > 1 ? sqrt(sum2[i] / (double)(st->n_ok - 1)) : NAN;
  }
  free(x), free(status), free(sum), free(sum2);
  if (xs >= 0) H5Dclose(xs);
  if (ss >= 0) H5Dclose(ss);
  H5Tclose(status_type);
  return rc;
}

static int write_summary(tf_run *run, hid_t file, ensemble_job *job, const tf_ensemble_outcome *out,
                         tf_error *err) {
  const size_t dim = job->kernel->dim;
  final_stats st;
  int rc = 0;
  if (dim > 64) return tf_fail(err, "summary supports at most 64 state components");
  if ((rc = compute_stats(file, job->spec.members, dim, &st)))
    return tf_fail(err, "cannot read back results from '%s'", run->output_path);
  hid_t g = tf_h5_group(file, "summary");
  rc = tf_h5_write_small(g, "final_state_mean", H5T_NATIVE_DOUBLE, dim, st.mean,
                         "mean final state over ok members") |
       tf_h5_write_small(g, "final_state_std", H5T_NATIVE_DOUBLE, dim, st.std,
                         "sample standard deviation of the final state over ok members") |
       tf_h5_write_small(g, "final_state_min", H5T_NATIVE_DOUBLE, dim, st.min, NULL) |
       tf_h5_write_small(g, "final_state_max", H5T_NATIVE_DOUBLE, dim, st.max, NULL) |
       tf_h5_write_small(g, "status_counts", H5T_NATIVE_LLONG, TF_MEMBER_STATUS_COUNT,
                         out->status_counts, "members per status, in the order of the enum");
  H5Gclose(g);
  if (rc) return tf_fail(err, "cannot write /summary to '%s'", run->output_path);
  tf_json_numbers(run->summary, "final_state_mean", st.mean, dim);
  tf_json_numbers(run->summary, "final_state_std", st.std, dim);
  return 0;
}

/* Event totals of a Filippov ensemble, summed in member order from the file. */
static int filippov_totals(tf_run *run, hid_t file, ensemble_job *job, tf_error *err) {
  long long totals[TF_EVENT_KIND_COUNT + 2] = {0}; /* kinds, rhs evals, steps */
  int rc = 0;
  {
    hid_t ev = H5Dopen2(file, "members/events", H5P_DEFAULT);
    hid_t rhs = H5Dopen2(file, "members/rhs_evals", H5P_DEFAULT);
    const uint64_t block = 65536;
    int64_t *buf = malloc(block * TF_EVENT_KIND_COUNT * sizeof *buf);
    rc = ev < 0 || rhs < 0 || !buf;
    for (uint64_t start = 0; !rc && start < job->spec.members; start += block) {
      const uint64_t n = job->spec.members - start < block ? job->spec.members - start : block;
      rc = tf_h5_read_rows(ev, H5T_NATIVE_INT64, TF_EVENT_KIND_COUNT, start, n, buf);
      for (uint64_t i = 0; !rc && i < n * TF_EVENT_KIND_COUNT; i++)
        totals[i % TF_EVENT_KIND_COUNT] += buf[i];
      rc = rc || tf_h5_read_rows(rhs, H5T_NATIVE_INT64, 1, start, n, buf);
      for (uint64_t i = 0; !rc && i < n; i++) totals[TF_EVENT_KIND_COUNT] += buf[i];
    }
    free(buf);
    if (ev >= 0) H5Dclose(ev);
    if (rhs >= 0) H5Dclose(rhs);
  }
  if (rc) return tf_fail(err, "cannot read back the event counts from '%s'", run->output_path);
  hid_t g = tf_h5_group(file, "summary");
  rc = tf_h5_write_small(g, "events", H5T_NATIVE_LLONG, TF_EVENT_KIND_COUNT, totals,
                         "events per kind over all members") |
       tf_h5_write_small(g, "members_at_rest", H5T_NATIVE_LLONG, 1, &totals[TF_EVENT_MEET_REST],
                         "members that came to rest on an intersection of switching surfaces "
                         "(the wheel's persistent full stick) and stayed to the end");
  H5Gclose(g);
  const char *names[TF_EVENT_KIND_COUNT];
  long long all = 0;
  for (int i = 0; i < TF_EVENT_KIND_COUNT; i++) {
    names[i] = tf_event_kind_name(i);
    all += totals[i];
  }
  tf_json_integer(run->summary, "twofold_visits", totals[TF_EVENT_TWOFOLD]);
  tf_json_integer(run->summary, "members_at_rest", totals[TF_EVENT_MEET_REST]);
  tf_json_counts(run->summary, "events", names, totals, TF_EVENT_KIND_COUNT);
  tf_json_number(run->summary, "rhs_per_event",
                 all > 0 ? (double)totals[TF_EVENT_KIND_COUNT] / (double)all : 0.0);
  return rc ? tf_fail(err, "cannot write /summary/events to '%s'", run->output_path) : 0;
}

/* Step and Jacobian totals of PETSc TS members, summed in member order. */
static int ts_totals(tf_run *run, hid_t file, ensemble_job *job, tf_error *err) {
  long long totals[2] = {0};
  int rc = 0;
  {
    const char *names[2] = {"members/steps", "members/jacobian_evals"};
    const uint64_t block = 65536;
    int64_t *buf = malloc(block * sizeof *buf);
    rc = !buf;
    for (int c = 0; c < 2 && !rc; c++) {
      hid_t d = H5Dopen2(file, names[c], H5P_DEFAULT);
      rc = d < 0;
      for (uint64_t start = 0; !rc && start < job->spec.members; start += block) {
        const uint64_t n = job->spec.members - start < block ? job->spec.members - start : block;
        rc = tf_h5_read_rows(d, H5T_NATIVE_INT64, 1, start, n, buf);
        for (uint64_t i = 0; !rc && i < n; i++) totals[c] += buf[i];
      }
      if (d >= 0) H5Dclose(d);
    }
    free(buf);
  }
  if (rc) return tf_fail(err, "cannot read back the step counts from '%s'", run->output_path);
  tf_json_integer(run->summary, "steps", totals[0]);
  tf_json_integer(run->summary, "jacobian_evals", totals[1]);
  tf_json_integer(run->summary, "ts_batch", job->flow.batch);
  return 0;
}

typedef struct summary_ctx {
  ensemble_job *job;
  const tf_ensemble_outcome *out;
} summary_ctx;

/* /summary of a complete ensemble, on rank 0 (tf_results_close_summarized). */
static int summarize(tf_run *run, hid_t file, void *ctx, tf_error *err) {
  const summary_ctx *c = ctx;
  ensemble_job *job = c->job;
  if (write_summary(run, file, job, c->out, err)) return -1;
  if (job->filippov && filippov_totals(run, file, job, err)) return -1;
  if (job->col_of[COL_JACOBIANS] >= 0 && ts_totals(run, file, job, err)) return -1;
  return 0;
}

/* Names of the fields in the log slots, for readers of the file. */
static void describe_logs(hid_t file, const ensemble_job *job) {
  if (job->contact) {
    hid_t d = H5Dopen2(file, "members/final_mode", H5P_DEFAULT);
    if (d >= 0) tf_h5_attr_string(d, "modes", tf_contact_modes_doc(job->kernel)), H5Dclose(d);
    return;
  }
  if (!job->filippov) {
    hid_t d = job->flow_samples > 0 ? H5Dopen2(file, "members/trajectory", H5P_DEFAULT) : -1;
    if (d >= 0) {
      tf_h5_attr_int(d, "samples", job->flow_samples);
      tf_h5_attr_double(d, "t0", job->flow.t0);
      tf_h5_attr_double(d, "t_end", job->flow.t_end);
      H5Dclose(d);
    }
    return;
  }
  char state[512], fields[640], kinds[256] = "";
  snprintf(state, sizeof state, "%s", job->state_names);
  for (int i = 0; i < TF_EVENT_KIND_COUNT; i++)
    snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s", i ? "," : "",
             tf_event_kind_name(i));
  hid_t d = H5Dopen2(file, "members/events", H5P_DEFAULT);
  if (d >= 0) tf_h5_attr_string(d, "kinds", kinds), H5Dclose(d);
  if ((d = H5Dopen2(file, "members/exits", H5P_DEFAULT)) >= 0) {
    snprintf(fields, sizeof fields, "t,u,side,kind,%s", state);
    tf_h5_attr_string(d, "fields", fields);
    tf_h5_attr_int(d, "slot_width", (long long)tf_pws_exit_width(&job->pws));
    tf_pws_describe_rules(&job->pws, d, file);
    H5Dclose(d);
  }
  if ((d = H5Dopen2(file, "members/event_log", H5P_DEFAULT)) >= 0) {
    snprintf(fields, sizeof fields, "t,kind,from,to,%s", state);
    tf_h5_attr_string(d, "fields", fields);
    tf_h5_attr_string(d, "kinds", kinds);
    tf_h5_attr_int(d, "slot_width", (long long)tf_pws_event_width(&job->pws));
    H5Dclose(d);
  }
  if ((d = H5Dopen2(file, "members/trajectory", H5P_DEFAULT)) >= 0) {
    tf_h5_attr_int(d, "samples", job->pws.trajectory_samples);
    tf_h5_attr_double(d, "t0", job->pws.t0);
    tf_h5_attr_double(d, "t_end", job->pws.t_end);
    H5Dclose(d);
  }
}

static int execute(tf_run *run, tf_error *err) {
  ensemble_job *job = run->job_data;
  static const char *const fingerprint_paths[] = {"job",
                                                  "model",
                                                  "initial",
                                                  "integrator",
                                                  "filippov",
                                                  "exit",
                                                  "intersection",
                                                  "codim2",
                                                  "ensemble.members",
                                                  "ensemble.seed",
                                                  "output.event_log",
                                                  "output.trajectory_samples",
                                                  "impact",
                                                  "poincare",
                                                  NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  tf_h5_attr_string(file, "model", job->kernel->name);
  tf_results_write_model(file, job->kernel,
                         job->filippov ? job->pws.model.params : job->flow.params);
  tf_h5_attr_string(file, "state_names", job->state_names);
  job->spec.run = job->filippov  ? run_filippov_member
                  : job->contact ? run_contact_member
                                 : run_flow_member;
  /* PETSc TS batches: claims of whole batches, ~32 per rank, so no batch is split */
  const uint64_t batch =
      !job->filippov && job->flow.method == TF_METHOD_PETSC_TS ? (uint64_t)job->flow.batch : 1;
  if (batch > 1 && job->spec.chunk == 0) {
    const uint64_t per = job->spec.members / ((uint64_t)run->size * 32 * batch);
    job->spec.chunk = batch * (per > 0 ? per : 1);
  }
  job->spec.ctx = job;
  tf_ensemble_outcome out;
  /* a batch of PETSc TS members is one long solve: it polls signals and the time limit every
   * step (--stop-after still counts members, in the scheduler) */
  if (!job->filippov && job->flow.method == TF_METHOD_PETSC_TS)
    tf_checkpoint_arm(run->start_time, run->time_limit, 0, 0);
  int rc = tf_ensemble_execute(run, &file, &job->spec, resumed, &out, err);
  tf_checkpoint_disarm();
  if (rc == 0) describe_logs(file, job);
  tf_json_string(run->summary, "model", job->kernel->name);
  char integrator[96];
  if (job->filippov)
    snprintf(integrator, sizeof integrator, "%s+events",
             tf_stepper_type_name(job->pws.opts.ode.type));
  else if (job->contact)
    snprintf(integrator, sizeof integrator, "%s+%s", tf_stepper_type_name(job->flow.ode.type),
             tf_contact_is_dual(job->kernel) ? "two-contact" : "codim2");
  else
    snprintf(integrator, sizeof integrator, "%s", tf_flow_integrator_name(&job->flow));
  tf_json_string(run->summary, "integrator", integrator);
  tf_json_integer(run->summary, "members", (long long)job->spec.members);
  tf_json_integer(run->summary, "failed", tf_member_failures(out.status_counts));
  const char *names[TF_MEMBER_STATUS_COUNT - 1];
  for (int s = 1; s < TF_MEMBER_STATUS_COUNT; s++) names[s - 1] = tf_member_status_name(s);
  tf_json_counts(run->summary, "status_counts", names, out.status_counts + 1,
                 TF_MEMBER_STATUS_COUNT - 1);
  summary_ctx ctx = {job, &out};
  return tf_ensemble_finish_summarized(run, file, &out, rc, summarize, &ctx, err);
}

static void destroy(tf_run *run) {
  ensemble_job *job = run->job_data;
  if (!job) return;
  if (job->filippov)
    tf_pws_destroy(&job->pws);
  else
    tf_flow_destroy(&job->flow);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_ensemble = {
    .name = "ensemble",
    .doc = "many members of one model from perturbed initial states; final states and statistics",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .splittable = true,
    .kinds = TF_KINDS_CONTINUOUS,
};
