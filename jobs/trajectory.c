/* trajectory.c — job `trajectory`: one member, sampled in time.
 *
 * Traces member ensemble.member (default 0) of the same problem an `ensemble` job would
 * run, so its last sample equals that member's final state in an ensemble file.
 * Output: /trajectory/t (samples) and /trajectory/state (samples x dim), sampled at
 * output.samples equally spaced times (dense output for DOPRI5, the nearest step for SDE
 * schemes).  Runs on rank 0; other ranks only join the collective file operations.
 *
 * Codimension-2 kernels (2-D Coulomb friction; twofold/model.h tf_codim2_ops) run on the
 * event-driven engine of evolve2.h with the keys codim2.{sigma_tol, slave_radius,
 * event_tol, max_event_rate, max_events} and output.event_log (events kept); the file adds
 * /trajectory/mode (0 roll, 1 slip per sample) and /trajectory/events (rows of t, kind,
 * phi, state; attribute kinds), the JSON adds rolling_onset_time (first arrival at Sigma in
 * the sliding region, null if none), final_mode, events per kind and final_<output> for the
 * kernel's named outputs; lyapunov.exponents (0) > 0 propagates that many tangent vectors
 * through the saltation matrices of evolve2.c (QR every lyapunov.interval) and adds the
 * exponents of the run as "lyapunov".  Bodies with two contacts (twofold/model.h
 * tf_two_contact_ops, e.g. the flowmeter) run on dual_contact.h with the same keys (both through
 * contact_run.h): /trajectory/mode holds the kinematic case per sample (0 SS, 1 SR, 2 RS, 3 RR), an
 * event row is (t, kind, case after, state) with kinds 0 to_SS, 1 to_SR, 2 to_RS, 3 to_RR, 4
 * crossing, and the JSON has final_case, events per kind and time_in (time spent in SS, SR, RS,
 * RR).  Kernels with physical initial conditions (tf_model_def.initial_params) accept
 * initial.<name> instead of initial.state.
 *
 * Filippov kernels without model.smoothing run on the event-driven engine of pws.h, exactly as
 * member ensemble.member of an ensemble (same initial state, two-fold exits and choices at
 * intersections drawn from (ensemble.seed, member), so `exit.replay` of an ensemble file
 * replays it; ensemble.members sizes a replay): the file adds /trajectory/events (rows of t,
 * kind, mode before, mode after, state; attribute kinds, at most output.event_log) and
 * /trajectory/exits (t, u, side, kind, state of every draw: pws.h), the JSON events per kind,
 * final_mode and twofold_visits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "contact_run.h"
#include "flow.h"
#include "h5io.h"
#include "job.h"
#include "physical_initial.h"
#include "pws.h"
#include "results.h"
#include "status.h"

typedef struct trajectory_job {
  tf_flow flow;
  long long member, samples;
  int compression;
  double *t, *x;
  long n_taken;
  char state_names[512];
  /* codimension-2 kernels */
  bool codim2, dual;
  tf_contact_options c2opts;
  long long max_logged;
  double *events, *modes;
  long n_events, next_sample;
  tf_contact_result c2res;
  /* event-driven Filippov members */
  bool filippov;
  tf_pws pws;
  tf_pws_record rec;
  int status;
} trajectory_job;

static int filippov_setup(tf_run *run, trajectory_job *job, tf_error *err) {
  const long long d_member = 0, d_samples = 1001, d_members = 1;
  long long members;
  if (tf_config_get_int(run->cfg, "ensemble.member", &d_member, 0, LLONG_MAX, &job->member, err) ||
      tf_config_get_int(run->cfg, "ensemble.members", &d_members, 1, LLONG_MAX, &members, err) ||
      tf_config_get_int(run->cfg, "output.samples", &d_samples, 2, 100000000LL, &job->samples,
                        err) ||
      tf_pws_from_config(&job->pws, run->cfg, (uint64_t)members, err) ||
      tf_job_output_from_config(run, &job->compression, NULL, err))
    return -1;
  tf_config_mark_used(run->cfg, "output.trajectory_samples");
  tf_config_mark_used(run->cfg, "ensemble.chunk");
  tf_config_mark_used(run->cfg, "output.flush_interval");
  job->pws.trajectory_samples = job->samples;
  const tf_kernel *k = job->pws.model.kernel;
  tf_join_state_names(k, job->state_names, sizeof job->state_names);
  const size_t n = k->dim;
  job->rec = (tf_pws_record){
      .final_state = calloc(n, sizeof(double)),
      .initial_state = calloc(n, sizeof(double)),
      .exits = calloc((size_t)job->pws.max_logged_exits * tf_pws_exit_width(&job->pws) + 1,
                      sizeof(double)),
      .events = calloc((size_t)job->pws.max_logged_events * tf_pws_event_width(&job->pws) + 1,
                       sizeof(double)),
      .trajectory = calloc((size_t)job->samples * n, sizeof(double))};
  if (!job->rec.final_state || !job->rec.initial_state || !job->rec.exits || !job->rec.events ||
      !job->rec.trajectory)
    return tf_fail(err, "out of memory for %lld samples", job->samples);
  return 0;
}

static int codim2_setup(tf_run *run, trajectory_job *job, tf_error *err) {
  const long long d_log = 64;
  if (tf_contact_options_from_config(run->cfg, &job->flow.ode, &job->c2opts, err) ||
      tf_config_get_int(run->cfg, "output.event_log", &d_log, 0, 1000000, &job->max_logged, err))
    return -1;
  if (!job->dual) { /* Lyapunov exponents through the saltation of evolve2.c */
    const long long d_exp = 0;
    const double d_int = 0.1;
    long long exponents;
    if (tf_config_get_int(run->cfg, "lyapunov.exponents", &d_exp, 0,
                          (long long)job->flow.kernel->dim, &exponents, err) ||
        tf_config_get_double(run->cfg, "lyapunov.interval", &d_int, 1e-9, INFINITY,
                             &job->c2opts.lyapunov_interval, err))
      return -1;
    job->c2opts.exponents = (int)exponents;
  }
  if (job->flow.method != TF_METHOD_DOPRI5) {
    char where[256];
    return tf_fail(err,
                   "%s: key 'integrator.method': model '%s' runs on the event-driven "
                   "codimension-2 engine (dopri5)",
                   tf_config_where(run->cfg, "integrator.method", where, sizeof where),
                   job->flow.kernel->name);
  }
  return 0;
}

static int setup(tf_run *run, tf_error *err) {
  trajectory_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  const long long d_member = 0, d_samples = 1001;
  const bool state_given = tf_config_has(run->cfg, "initial.state");
  const tf_kernel *k;
  if (tf_model_kernel(run->cfg, &k, err)) return -1;
  const tf_route route = k ? tf_flow_route(run->cfg, k) : TF_ROUTE_FLOW;
  job->filippov = route == TF_ROUTE_FILIPPOV || route == TF_ROUTE_SWITCHES; /* on pws.h */
  if (job->filippov) return filippov_setup(run, job, err);
  if (tf_flow_from_config(&job->flow, run->cfg, err) ||
      tf_physical_initial_from_config(run->cfg, job->flow.kernel, job->flow.params, state_given,
                                      job->flow.x0, err) ||
      tf_config_get_int(run->cfg, "ensemble.member", &d_member, 0, LLONG_MAX, &job->member, err) ||
      tf_config_get_int(run->cfg, "output.samples", &d_samples, 2, 100000000LL, &job->samples,
                        err) ||
      tf_job_output_from_config(run, &job->compression, NULL, err))
    return -1;
  tf_join_state_names(job->flow.kernel, job->state_names, sizeof job->state_names);
  job->dual = tf_contact_is_dual(job->flow.kernel);
  job->codim2 = tf_contact_kernel(job->flow.kernel);
  if (job->codim2 && codim2_setup(run, job, err)) return -1;
  /* An ensemble config turned into a trajectory (--set job=trajectory) keeps its ensemble
   * size and chunking; they are meaningless here, not wrong. */
  tf_config_mark_used(run->cfg, "ensemble.members");
  tf_config_mark_used(run->cfg, "ensemble.chunk");
  tf_config_mark_used(run->cfg, "output.flush_interval");
  return 0;
}

static void record(void *ctx, double t, const double *x) {
  trajectory_job *job = ctx;
  if (job->n_taken >= job->samples) return;
  const size_t dim = job->flow.kernel->dim;
  job->t[job->n_taken] = t;
  memcpy(job->x + (size_t)job->n_taken * dim, x, dim * sizeof *x);
  job->n_taken++;
}

/* --- codimension-2 members ---------------------------------------------------------------- */

enum { EVENT_HEAD = 3 }; /* t, kind, phi; then the state */

static void on_event(void *ctx, const tf_contact_event *ev) {
  trajectory_job *job = ctx;
  if (job->n_events >= job->max_logged) return;
  const size_t dim = job->flow.kernel->dim, w = EVENT_HEAD + dim;
  double *row = job->events + (size_t)job->n_events++ * w;
  row[0] = ev->t, row[1] = ev->kind, row[2] = ev->detail;
  memcpy(row + EVENT_HEAD, ev->x, dim * sizeof *ev->x);
}

static double sample_time(const tf_flow *flow, long i, long n) {
  return i == n - 1 ? flow->t_end
                    : flow->t0 + (flow->t_end - flow->t0) * (double)i / (double)(n - 1);
}

static void on_step(void *ctx, const tf_contact *c, double ta, double tb) {
  trajectory_job *job = ctx;
  const size_t dim = job->flow.kernel->dim;
  for (; job->next_sample < job->samples; job->next_sample++) {
    const double ts = sample_time(&job->flow, job->next_sample, job->samples);
    if (ts > tb || ts < ta) break;
    tf_contact_dense(c, ts, job->x + (size_t)job->next_sample * dim);
    job->t[job->next_sample] = ts;
    job->modes[job->next_sample] = tf_contact_mode(c);
    if (tf_checkpoint_stop_point()) { /* the loop ends the run at its next step */
      job->next_sample++;
      break;
    }
  }
}

static tf_flow_result run_codim2(trajectory_job *job, double *final) {
  tf_flow_initial_state(&job->flow, (uint64_t)job->member, final);
  job->next_sample = 0; /* sample 0 too comes from the first step's dense output */
  const tf_contact_hooks hooks = {on_event, on_step, job};
  job->c2res = tf_contact_run(job->flow.kernel, job->flow.params, &job->c2opts, job->flow.t0, final,
                              job->flow.t_end, &hooks);
  job->n_taken = job->next_sample;
  return (tf_flow_result){
      .status = job->c2res.status, .t_final = job->c2res.t, .steps = job->c2res.steps};
}

static int write_codim2(const trajectory_job *job, hid_t g, bool writer) {
  const size_t dim = job->flow.kernel->dim, w = EVENT_HEAD + dim;
  const uint64_t rows = (uint64_t)job->n_taken, erows = (uint64_t)job->n_events;
  hid_t dm = tf_h5_create_table(g, "mode", H5T_NATIVE_DOUBLE, rows, 1, job->compression,
                                job->dual ? "kinematic case at the sample times: 0 SS, 1 SR, "
                                            "2 RS, 3 RR"
                                          : "mode at the sample times: 0 roll (on Sigma), 1 slip");
  hid_t de = tf_h5_create_table(g, "events", H5T_NATIVE_DOUBLE, erows, w, job->compression,
                                job->dual ? "events: t, kind, case after, state"
                                          : "events: t, kind, phi (limit direction), state");
  uint64_t *ids = malloc(((rows > erows ? rows : erows) + 1) * sizeof *ids);
  for (uint64_t i = 0; ids && i < (rows > erows ? rows : erows); i++) ids[i] = i;
  int rc = dm < 0 || de < 0 || !ids ||
           tf_h5_write_rows(dm, H5T_NATIVE_DOUBLE, 1, writer ? rows : 0, ids, job->modes) ||
           tf_h5_write_rows(de, H5T_NATIVE_DOUBLE, w, writer ? erows : 0, ids, job->events);
  if (de >= 0) tf_h5_attr_string(de, "kinds", tf_contact_event_kinds_doc(job->flow.kernel));
  free(ids);
  if (dm >= 0) H5Dclose(dm);
  if (de >= 0) H5Dclose(de);
  return rc;
}

static void report_outputs(tf_json *j, const trajectory_job *job, const double *final) {
  const tf_kernel *k = job->flow.kernel;
  double out[16];
  if (!k->outputs || k->noutputs > 16) return;
  k->outputs(final, job->flow.params, out);
  for (size_t i = 0; i < k->noutputs; i++) {
    char key[128];
    snprintf(key, sizeof key, "final_%s", k->output_names[i]);
    tf_json_number(j, key, out[i]);
  }
}

static void report_dual(tf_run *run, const trajectory_job *job, const double *final) {
  tf_json *j = run->summary;
  tf_json_string(j, "final_case", tf_dc_case_name(job->c2res.dual.final_case));
  const char *names[TF_DC_EVENT_KIND_COUNT];
  long long counts[TF_DC_EVENT_KIND_COUNT];
  for (int i = 0; i < TF_DC_EVENT_KIND_COUNT; i++)
    names[i] = tf_dc_event_kind_name((tf_dc_event_kind)i), counts[i] = job->c2res.dual.counts[i];
  tf_json_counts(j, "events", names, counts, TF_DC_EVENT_KIND_COUNT);
  tf_json_numbers(j, "time_in", job->c2res.dual.time_in, TF_DC_CASE_COUNT);
  tf_json_integer(j, "rhs_evals", job->c2res.dual.rhs_evals);
  if (job->c2res.dual.failure) tf_json_string(j, "failure", job->c2res.dual.failure);
  report_outputs(j, job, final);
}

static void report_codim2(tf_run *run, const trajectory_job *job, const double *final) {
  if (job->dual) {
    report_dual(run, job, final);
    return;
  }
  tf_json *j = run->summary;
  tf_json_number(j, "rolling_onset_time", job->c2res.c2.first_roll_time);
  tf_json_string(j, "final_mode", tf_c2_mode_name(job->c2res.c2.mode));
  const char *names[TF_C2_EVENT_KIND_COUNT];
  long long counts[TF_C2_EVENT_KIND_COUNT];
  for (int i = 0; i < TF_C2_EVENT_KIND_COUNT; i++)
    names[i] = tf_c2_event_kind_name((tf_c2_event_kind)i), counts[i] = job->c2res.c2.counts[i];
  tf_json_counts(j, "events", names, counts, TF_C2_EVENT_KIND_COUNT);
  tf_json_integer(j, "rhs_evals", job->c2res.c2.rhs_evals);
  if (job->c2res.c2.failure) tf_json_string(j, "failure", job->c2res.c2.failure);
  if (job->c2opts.exponents > 0)
    tf_json_numbers(j, "lyapunov", job->c2res.c2.lyapunov, (size_t)job->c2opts.exponents);
  report_outputs(j, job, final);
}

/* --- event-driven Filippov members ------------------------------------------------------- */

/* Rows of a NaN-padded log: how many are filled. */
static uint64_t logged_rows(const double *log, long slots, size_t width) {
  uint64_t rows = 0;
  while ((long)rows < slots && !isnan(log[rows * width])) rows++;
  return rows;
}

static int write_table(hid_t g, const char *name, const double *data, uint64_t rows, size_t width,
                       int compression, const char *doc, bool writer) {
  hid_t d = tf_h5_create_table(g, name, H5T_NATIVE_DOUBLE, rows, width, compression, doc);
  uint64_t *ids = malloc((rows ? rows : 1) * sizeof *ids);
  for (uint64_t i = 0; ids && i < rows; i++) ids[i] = i;
  const int rc =
      d < 0 || !ids || tf_h5_write_rows(d, H5T_NATIVE_DOUBLE, width, writer ? rows : 0, ids, data);
  free(ids);
  if (d >= 0) H5Dclose(d);
  return rc;
}

/* The member's run on rank 0, stoppable at every sample (checkpoint.h: a signal, --time-limit,
 * or --stop-after counting samples).  Returns on every rank whether it was stopped; the
 * samples taken are then written with complete = 0, and --resume runs the member again (a
 * trajectory is one computation). */
static int compute(tf_run *run, trajectory_job *job, tf_flow_result *res, double *final) {
  if (run->rank == 0 && run->resume && !run->quiet)
    fprintf(stderr,
            "twofold: the trajectory job is one computation: --resume runs it again from "
            "the beginning\n");
  int stopped = 0;
  if (run->rank == 0) {
    tf_checkpoint_arm(run->start_time, run->time_limit, run->stop_after, run->pause_after);
    if (job->filippov)
      job->status = tf_pws_run_member(&job->pws, (uint64_t)job->member, &job->rec);
    else if (job->codim2)
      *res = run_codim2(job, final);
    else
      *res =
          tf_flow_run_member(&job->flow, (uint64_t)job->member, final, record, job, job->samples);
    stopped = tf_checkpoint_stopped() && (job->filippov ? job->rec.t_final < job->pws.t_end
                                          : job->codim2 ? job->next_sample < job->samples
                                                        : job->n_taken < job->samples);
    tf_checkpoint_disarm();
  }
  MPI_Bcast(&stopped, 1, MPI_INT, 0, run->comm);
  return stopped;
}

static void interrupted(tf_run *run) {
  run->exit_code = TF_EXIT_INTERRUPTED;
  run->restarts = true;
}

static int execute_filippov(tf_run *run, trajectory_job *job, tf_error *err) {
  tf_pws *pws = &job->pws;
  const tf_kernel *k = pws->model.kernel;
  const size_t dim = k->dim, ew = tf_pws_event_width(pws), xw = tf_pws_exit_width(pws);
  const int stopped = compute(run, job, NULL, NULL);
  MPI_Bcast(&job->status, 1, MPI_INT, 0, run->comm);
  MPI_Bcast(&job->rec.t_final, 1, MPI_DOUBLE, 0, run->comm);
  MPI_Bcast(&job->rec.steps, 1, MPI_LONG, 0, run->comm);
  MPI_Bcast(&job->rec.final_mode, 1, MPI_INT, 0, run->comm);
  MPI_Bcast(job->rec.counts, TF_EVENT_KIND_COUNT, MPI_LONG, 0, run->comm);
  MPI_Bcast(job->rec.final_state, (int)dim, MPI_DOUBLE, 0, run->comm);
  const uint64_t samples = (uint64_t)job->samples;
  uint64_t erows = logged_rows(job->rec.events, pws->max_logged_events, ew);
  uint64_t xrows = logged_rows(job->rec.exits, pws->max_logged_exits, xw);
  MPI_Bcast(&erows, 1, MPI_UINT64_T, 0, run->comm);
  MPI_Bcast(&xrows, 1, MPI_UINT64_T, 0, run->comm);
  double *t = malloc(samples * sizeof *t);
  if (!t) return tf_fail(err, "out of memory for %lld samples", job->samples);
  for (uint64_t i = 0; i < samples; i++)
    t[i] = i + 1 == samples ? pws->t_end
                            : pws->t0 + (pws->t_end - pws->t0) * (double)i / (double)(samples - 1);
  static const char *const fingerprint_paths[] = {
      "job",          "model",           "initial",       "integrator",     "filippov", "exit",
      "intersection", "ensemble.member", "ensemble.seed", "output.samples", NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) {
    free(t);
    return -1;
  }
  tf_h5_attr_string(file, "model", k->name);
  tf_h5_attr_string(file, "state_names", job->state_names);
  hid_t g = tf_h5_group(file, "trajectory");
  if (resumed) /* a trajectory is one piece of work: redo it */
    for (const char *const *name = (const char *const[]){"t", "state", "events", "exits", NULL};
         *name; name++)
      if (H5Lexists(g, *name, H5P_DEFAULT) > 0) H5Ldelete(g, *name, H5P_DEFAULT);
  const bool writer = run->rank == 0;
  char kinds[256] = "";
  for (int i = 0; i < TF_EVENT_KIND_COUNT; i++)
    snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s", i ? "," : "",
             tf_event_kind_name((tf_event_kind)i));
  int rc =
      write_table(g, "t", t, samples, 1, job->compression, "sample times", writer) ||
      write_table(g, "state", job->rec.trajectory, samples, dim, job->compression,
                  "state at the sample times (samples x dim; NaN after a stop)", writer) ||
      write_table(g, "events", job->rec.events, erows, ew, job->compression,
                  "events: t, kind, mode before, mode after (-1 slip-, 0 sliding, 1 slip+, "
                  "2 rest, 3 along the intersection), state",
                  writer) ||
      write_table(
          g, "exits", job->rec.exits, xrows, xw, job->compression,
          "draws: t, u, side, kind (0 two-fold exit; a choice at an intersection by the rule 1 "
          "uniform, 2 weighted, 3 regularised), state",
          writer);
  if (!rc) {
    hid_t d = H5Dopen2(g, "events", H5P_DEFAULT);
    if (d >= 0) tf_h5_attr_string(d, "kinds", kinds), H5Dclose(d);
    if ((d = H5Dopen2(g, "exits", H5P_DEFAULT)) >= 0)
      tf_pws_describe_rules(&job->pws, d, g), H5Dclose(d);
  }
  tf_h5_attr_string(g, "status", stopped ? "interrupted" : tf_member_status_name(job->status));
  tf_h5_attr_int(g, "member", job->member);
  tf_h5_attr_int(g, "steps", job->rec.steps);
  H5Gclose(g);
  free(t);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0 && !stopped, &close_err) && rc == 0)
    *err = close_err, rc = -1;
  else if (rc)
    tf_fail(err, "writing the trajectory to '%s' failed", run->output_path);
  if (stopped) interrupted(run);
  tf_json *j = run->summary;
  tf_json_string(j, "model", k->name);
  char integrator[32];
  snprintf(integrator, sizeof integrator, "%s+events",
           tf_stepper_type_name(job->pws.opts.ode.type));
  tf_json_string(j, "integrator", integrator);
  tf_json_integer(j, "member", job->member);
  tf_json_string(j, "member_status", tf_member_status_name(job->status));
  tf_json_integer(j, "steps", job->rec.steps);
  tf_json_integer(j, "samples", (long long)samples);
  tf_json_number(j, "t_final", job->rec.t_final);
  tf_json_numbers(j, "final_state", job->rec.final_state, dim);
  char mode[64];
  tf_json_string(j, "final_mode",
                 tf_pws_mode_name(&job->pws, job->rec.final_mode, mode, sizeof mode));
  tf_json_integer(j, "twofold_visits", job->rec.counts[TF_EVENT_TWOFOLD]);
  const char *names[TF_EVENT_KIND_COUNT];
  long long counts[TF_EVENT_KIND_COUNT];
  for (int i = 0; i < TF_EVENT_KIND_COUNT; i++)
    names[i] = tf_event_kind_name((tf_event_kind)i), counts[i] = job->rec.counts[i];
  tf_json_counts(j, "events", names, counts, TF_EVENT_KIND_COUNT);
  return rc;
}

static int execute(tf_run *run, tf_error *err) {
  trajectory_job *job = run->job_data;
  if (job->filippov) return execute_filippov(run, job, err);
  const size_t dim = job->flow.kernel->dim;
  const uint64_t n = (uint64_t)job->samples;
  tf_flow_result res = {0};
  double *final = calloc(dim, sizeof *final);
  if (run->rank == 0) {
    job->t = malloc(n * sizeof *job->t);
    job->x = malloc(n * dim * sizeof *job->x);
    job->modes = malloc(n * sizeof *job->modes);
    job->events = malloc(((size_t)job->max_logged + 1) * (EVENT_HEAD + dim) * sizeof *job->events);
    if (!job->t || !job->x || !final || !job->modes || !job->events)
      return tf_fail(err, "out of memory for %llu samples", job->samples);
  }
  const int stopped = compute(run, job, &res, final);
  MPI_Bcast(&res, sizeof res, MPI_BYTE, 0, run->comm);
  if (job->codim2) {
    MPI_Bcast(&job->c2res, sizeof job->c2res, MPI_BYTE, 0, run->comm);
    MPI_Bcast(&job->n_events, 1, MPI_LONG, 0, run->comm);
    if (run->rank != 0) /* a pointer is meaningless elsewhere */
      job->c2res.c2.failure = NULL, job->c2res.dual.failure = NULL, job->c2res.failure = NULL;
  }
  MPI_Bcast(final, (int)dim, MPI_DOUBLE, 0, run->comm);
  MPI_Bcast(&job->n_taken, 1, MPI_LONG, 0, run->comm);
  tf_impact_result *ir = &job->flow.poincare_rec.result;
  if (job->flow.poincare) {
    MPI_Bcast(ir, sizeof *ir, MPI_BYTE, 0, run->comm);
    ir->lyapunov = NULL; /* no tangents here; a pointer is meaningless elsewhere anyway */
  }

  static const char *const fingerprint_paths[] = {
      "job",           "model",          "initial", "integrator", "ensemble.member",
      "ensemble.seed", "output.samples", "impact",  "poincare",   NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) {
    free(final);
    return -1;
  }
  tf_h5_attr_string(file, "model", job->flow.kernel->name);
  tf_h5_attr_string(file, "state_names", job->state_names);
  hid_t g = tf_h5_group(file, "trajectory");
  if (resumed) { /* a trajectory is one piece of work: redo it */
    H5Ldelete(g, "t", H5P_DEFAULT);
    H5Ldelete(g, "state", H5P_DEFAULT);
  }
  const uint64_t rows = (uint64_t)job->n_taken;
  hid_t dt =
      tf_h5_create_table(g, "t", H5T_NATIVE_DOUBLE, rows, 1, job->compression, "sample times");
  hid_t dx = tf_h5_create_table(g, "state", H5T_NATIVE_DOUBLE, rows, dim, job->compression,
                                "state at the sample times (samples x dim)");
  uint64_t *ids = malloc((rows ? rows : 1) * sizeof *ids);
  for (uint64_t i = 0; i < rows; i++) ids[i] = i;
  const size_t mine = run->rank == 0 ? rows : 0;
  int rc = dt < 0 || dx < 0 || !ids ||
           tf_h5_write_rows(dt, H5T_NATIVE_DOUBLE, 1, mine, ids, job->t) ||
           tf_h5_write_rows(dx, H5T_NATIVE_DOUBLE, dim, mine, ids, job->x);
  if (job->codim2 && rc == 0) rc = write_codim2(job, g, run->rank == 0);
  tf_h5_attr_string(g, "status", stopped ? "interrupted" : tf_member_status_name(res.status));
  tf_h5_attr_int(g, "member", job->member);
  tf_h5_attr_int(g, "steps", res.steps);
  free(ids);
  if (dt >= 0) H5Dclose(dt);
  if (dx >= 0) H5Dclose(dx);
  H5Gclose(g);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0 && !stopped, &close_err) && rc == 0)
    *err = close_err, rc = -1;
  else if (rc)
    tf_fail(err, "writing the trajectory to '%s' failed", run->output_path);
  if (stopped) interrupted(run);
  tf_json_string(run->summary, "model", job->flow.kernel->name);
  tf_json_string(run->summary, "integrator", tf_flow_integrator_name(&job->flow));
  tf_json_integer(run->summary, "member", job->member);
  tf_json_string(run->summary, "member_status", tf_member_status_name(res.status));
  tf_json_integer(run->summary, "steps", res.steps);
  tf_json_integer(run->summary, "samples", (long long)rows);
  tf_json_number(run->summary, "t_final", res.t_final);
  tf_json_numbers(run->summary, "final_state", final, dim);
  if (job->codim2) report_codim2(run, job, final);
  if (job->flow.poincare) { /* impact kernels: what happened at the constraints */
    tf_json_integer(run->summary, "impacts", ir->impacts);
    tf_json_integer(run->summary, "chattering_episodes", ir->chatters);
    tf_json_integer(run->summary, "releases", ir->releases);
    tf_json_integer(run->summary, "section_crossings", ir->sections);
    tf_json_number(run->summary, "stick_time", ir->stick_time);
    if (ir->message[0]) tf_json_string(run->summary, "failure", ir->message);
  }
  free(final);
  return rc;
}

static void destroy(tf_run *run) {
  trajectory_job *job = run->job_data;
  if (!job) return;
  if (job->filippov) {
    tf_pws_destroy(&job->pws);
    free(job->rec.final_state), free(job->rec.initial_state), free(job->rec.exits);
    free(job->rec.events), free(job->rec.trajectory);
  }
  tf_flow_destroy(&job->flow);
  free(job->t), free(job->x), free(job->modes), free(job->events);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_trajectory = {
    .name = "trajectory",
    .doc = "one member sampled in time (the same member an ensemble would run)",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .kinds = TF_KINDS_CONTINUOUS,
};
