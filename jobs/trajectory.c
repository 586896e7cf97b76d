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
 * final_mode and (where a nondeterministic two-fold is located) twofold_visits.
 *
 * A member recorded at events (poincare.event: flows, maps, impact and Filippov models, bodies
 * under spatial friction) adds /trajectory/poincare (poincare.count slots of t, state, NaN-padded;
 * attributes recorded and period), and where the route has modes /trajectory/poincare_mode
 * (the mode at each; attribute modes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5io.h"
#include "job.h"
#include "member_columns.h"
#include "member_engine.h"
#include "replay_log.h"
#include "results.h"
#include "status.h"

typedef struct trajectory_job {
  tf_member_engine *engine;
  long long member, samples;
  int compression;
  char state_names[512];
  tf_member_buffers buf; /* rank 0's */
  tf_member_result res;
} trajectory_job;

/* The member's keys and output.*: read by the engine where its route has always read them. */
static int member_keys(tf_config *cfg, void *ctx, tf_member_settings *s, tf_error *err) {
  trajectory_job *job = ((tf_run *)ctx)->job_data;
  const long long d_member = 0, d_samples = 1001;
  if (tf_config_get_int(cfg, "ensemble.member", &d_member, 0, LLONG_MAX, &job->member, err) ||
      tf_config_get_int(cfg, "output.samples", &d_samples, 2, 100000000LL, &job->samples, err))
    return -1;
  s->samples = (long)job->samples;
  return 0;
}

static int output_keys(tf_config *cfg, void *ctx, tf_error *err) {
  (void)cfg;
  tf_run *run = ctx;
  return tf_job_output_from_config(run, &((trajectory_job *)run->job_data)->compression, NULL, err);
}

static int setup(tf_run *run, trajectory_job *job, tf_error *err) {
  const tf_member_settings settings = {.traced = true,
                                       .stop = &run->stop,
                                       .comm = run->comm,
                                       .member_keys = member_keys,
                                       .output_keys = output_keys,
                                       .ctx = run,
                                       .read_replays = tf_replay_logs_read};
  if (tf_member_engine_create(run->cfg, &settings, &job->engine, err)) return -1;
  /* An ensemble config turned into a trajectory (--set job=trajectory) keeps its ensemble
   * size, chunking and logs; they are meaningless here, not wrong. */
  tf_config_mark_used(run->cfg, "ensemble.members");
  tf_config_mark_used(run->cfg, "output.trajectory_samples");
  tf_config_mark_used(run->cfg, "ensemble.chunk");
  tf_config_mark_used(run->cfg, "output.flush_interval");
  tf_join_state_names(job->engine->layout.kernel, job->state_names, sizeof job->state_names);
  return 0;
}

static int setup_job(tf_run *run, tf_error *err) {
  trajectory_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  return setup(run, job, err);
}

/* Rank 0's buffers for the samples and logs of the member. */
static int allocate(trajectory_job *job, tf_error *err) {
  const tf_member_layout *l = &job->engine->layout;
  const size_t n = (size_t)job->samples;
  tf_member_buffers *b = &job->buf;
  b->final = calloc(l->dim, sizeof(double));
  b->sample_t = calloc(n, sizeof(double));
  b->sample_x = calloc(n * l->dim, sizeof(double));
  b->sample_mode = calloc(n, sizeof(double));
  b->exits = calloc((size_t)l->exit_slots * l->exit_width + 1, sizeof(double));
  b->event_log = calloc((size_t)l->event_slots * l->event_width + 1, sizeof(double));
  if (!b->final || !b->sample_t || !b->sample_x || !b->sample_mode || !b->exits || !b->event_log)
    return tf_fail(err, "out of memory for %lld samples", job->samples);
  return 0;
}

/* The member's run on rank 0, stoppable at every sample (a signal, --time-limit, or
 * --stop-after counting samples: the run's stop token).  Returns on every rank whether it was
 * stopped; the samples taken are then written with complete = 0, and --resume runs the member
 * again (a trajectory is one computation). */
static int compute(tf_run *run, trajectory_job *job) {
  if (run->rank == 0 && run->resume && !run->quiet)
    fprintf(stderr,
            "twofold: the trajectory job is one computation: --resume runs it again from "
            "the beginning\n");
  if (run->rank == 0) {
    tf_stop_arm(&run->stop, run->start_time, run->time_limit, run->stop_after, run->pause_after);
    tf_member_engine_run(job->engine, (uint64_t)job->member, &job->buf, &job->res);
    tf_stop_disarm(&run->stop);
  }
  tf_member_result_bcast(&job->res, 0, run->comm);
  return job->res.status == TF_MEMBER_PENDING;
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

/* The kinds of the logged events: their names as a list where the route names them, else
 * the route's description of its codes. */
static void describe_kinds(hid_t g, const tf_member_layout *l) {
  hid_t d = H5Dopen2(g, "events", H5P_DEFAULT);
  if (d < 0) return;
  if (l->event_kind_names)
    tf_h5_attr_strings(d, "kinds", l->event_kind_names, (size_t)l->event_kinds);
  else
    tf_h5_attr_string(d, "kinds", l->event_log_attr);
  H5Dclose(d);
}

/* The states recorded at the section's events (poincare.*), as an ensemble's columns of the
 * same names hold them: count slots, NaN-padded; the mode at each where the route has modes. */
static int write_section(hid_t g, const tf_member_layout *l, const tf_member_result *r, int z,
                         bool w) {
  const uint64_t slots = (uint64_t)l->poincare_slots;
  int rc = write_table(g, "poincare", r->poincare.samples, slots, 1 + l->dim, z,
                       "state at the recorded events: slots of (t, state), NaN-padded", w);
  if (!rc && l->poincare_mode_doc)
    rc = write_table(g, "poincare_mode", r->poincare.modes, slots, 1, z, l->poincare_mode_doc, w);
  hid_t d = rc ? -1 : H5Dopen2(g, "poincare", H5P_DEFAULT);
  if (d < 0) return rc;
  rc = tf_h5_attr_int(d, "recorded", r->poincare.recorded) |
       tf_h5_attr_int(d, "period", r->poincare.period);
  H5Dclose(d);
  if (!rc && l->modes_attr && l->poincare_mode_doc &&
      (d = H5Dopen2(g, "poincare_mode", H5P_DEFAULT)) >= 0)
    rc = tf_h5_attr_string(d, "modes", l->modes_attr), H5Dclose(d);
  return rc;
}

/* /trajectory: the samples, and the mode at them, events and draws where the route has them. */
static int write_tables(tf_run *run, const trajectory_job *job, hid_t g) {
  const tf_member_layout *l = &job->engine->layout;
  const tf_member_buffers *b = &job->buf;
  const tf_member_result *r = &job->res;
  const bool w = run->rank == 0;
  const uint64_t rows = (uint64_t)r->sample_rows;
  const int z = job->compression;
  int rc = write_table(g, "t", b->sample_t, rows, 1, z, "sample times", w) ||
           write_table(g, "state", b->sample_x, rows, l->dim, z, l->samples_doc, w);
  if (!rc && l->sample_mode_doc)
    rc = write_table(g, "mode", b->sample_mode, rows, 1, z, l->sample_mode_doc, w);
  if (!rc && l->event_log_doc)
    rc = write_table(g, "events", b->event_log, (uint64_t)r->event_rows, l->event_width, z,
                     l->event_log_doc, w);
  if (!rc && l->exit_width)
    rc = write_table(g, "exits", b->exits, (uint64_t)r->exit_rows, l->exit_width, z,
                     "draws: t, u, side, kind (0 two-fold exit; a choice at an intersection by "
                     "the rule 1 uniform, 2 weighted, 3 regularised), state",
                     w);
  if (!rc && l->poincare_slots > 0) rc = write_section(g, l, r, z, w);
  if (rc) return rc;
  if (l->event_log_doc) describe_kinds(g, l);
  hid_t d =
      l->exit_width && job->engine->ops->describe_draws ? H5Dopen2(g, "exits", H5P_DEFAULT) : -1;
  if (d >= 0) tf_member_columns_describe_draws(job->engine, d, g), H5Dclose(d);
  return 0;
}

static void report(tf_run *run, const trajectory_job *job, const double *final) {
  const tf_member_layout *l = &job->engine->layout;
  tf_json *j = run->summary;
  tf_json_string(j, "model", l->kernel->name);
  tf_json_string(j, "integrator", l->traced_integrator);
  tf_json_integer(j, "member", job->member);
  tf_json_string(j, "member_status", tf_member_status_name(job->res.status));
  tf_json_integer(j, "steps", job->res.work.steps);
  tf_json_integer(j, "samples", job->res.sample_rows);
  tf_json_number(j, "t_final", job->res.t);
  tf_json_numbers(j, "final_state", final, l->dim);
  tf_member_engine_report(job->engine, &job->res, final, j);
}

static int execute(tf_run *run, tf_error *err) {
  trajectory_job *job = run->job_data;
  const tf_member_layout *l = &job->engine->layout;
  double final[TF_MAX_DIM] = {0};
  if (run->rank == 0 && allocate(job, err)) return -1;
  const int stopped = compute(run, job);
  if (run->rank == 0) memcpy(final, job->buf.final, l->dim * sizeof *final);
  MPI_Bcast(final, (int)l->dim, MPI_DOUBLE, 0, run->comm);
  bool resumed;
  hid_t file = tf_results_open(run, l->fingerprint, &resumed, err);
  if (file < 0) return -1;
  tf_h5_attr_string(file, "model", l->kernel->name);
  tf_h5_attr_names(file, "state_names", job->state_names);
  hid_t g = tf_h5_group(file, "trajectory");
  if (resumed) /* a trajectory is one piece of work: redo it */
    for (const char *const *name = (const char *const[]){"t", "state", "mode", "events", "exits",
                                                         "poincare", "poincare_mode", NULL};
         *name; name++)
      if (H5Lexists(g, *name, H5P_DEFAULT) > 0) H5Ldelete(g, *name, H5P_DEFAULT);
  int rc = write_tables(run, job, g);
  tf_h5_attr_string(g, "status", stopped ? "interrupted" : tf_member_status_name(job->res.status));
  tf_h5_attr_int(g, "member", job->member);
  tf_h5_attr_int(g, "steps", job->res.work.steps);
  H5Gclose(g);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0 && !stopped, &close_err) && rc == 0)
    *err = close_err, rc = -1;
  else if (rc)
    tf_fail_code(err, TF_ERR_IO, "writing the trajectory to '%s' failed", run->output_path);
  if (stopped) {
    run->outcome = TF_RUN_INTERRUPTED;
    run->restarts = true;
  }
  report(run, job, final);
  return rc;
}

static void destroy(tf_run *run) {
  trajectory_job *job = run->job_data;
  if (!job) return;
  tf_member_engine_destroy(job->engine);
  tf_member_buffers *b = &job->buf;
  free(b->final), free(b->sample_t), free(b->sample_x), free(b->sample_mode);
  free(b->exits), free(b->event_log);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_trajectory = {
    .name = "trajectory",
    .doc = "one member sampled in time (the same member an ensemble would run)",
    .setup = setup_job,
    .execute = execute,
    .destroy = destroy,
    .kinds = TF_KINDS_CONTINUOUS | TF_KIND_BIT(TF_MODEL_MAP),
};
