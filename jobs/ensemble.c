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
 * Output: /members/final_state and /members/initial_state (members x dim), with model.sample
 * /members/parameters (the drawn parameters, attribute names: sampling.h),
 * /members/t_final, /members/steps, /members/done, /members/status; Filippov models add
 * /members/rhs_evals, /members/events (counts per kind), /members/twofold_visits (where a
 * nondeterministic two-fold is located),
 * /members/final_mode and the logs /members/exits, /members/event_log and
 * /members/trajectory (fixed slots per member, NaN-padded); impact kernels (and flows with
 * poincare.event) add /members/impacts, /members/stick_time and, when recording,
 * /members/poincare, /members/poincare_recorded, /members/poincare_period (Filippov models and
 * bodies under friction with poincare.event: those and /members/poincare_mode): every column of
 * member_columns.c the engine produces, in its order.  output.columns keeps only the tables it
 * names, and may name the opt-in ones (/members/rejected_steps); output.reduce adds a float64
 * column per named expression of the member's end (member_reduce.h).  /summary holds the mean,
 * standard deviation, min and max of the final state over the members that finished ok (computed in
 * member order on rank 0, so the numbers do not depend on the rank count). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble.h"
#include "evolve.h" /* the event kinds of the Filippov totals */
#include "guard.h"
#include "h5io.h"
#include "job.h"
#include "member_columns.h"
#include "member_engine.h"
#include "member_reduce.h"
#include "replay_log.h"
#include "results.h"

enum { REDUCTIONS_MAX = 16 };

typedef struct ensemble_job {
  tf_member_engine *engine;
  tf_member_columns columns; /* the tables written (output.columns), in member_columns.c's order */
  tf_member_reduce *reduce;  /* output.reduce, or NULL */
  double *final;             /* the final state a reduction reads where final_state is not
                              * written (dim values) */
  tf_column cols[TF_MEMBER_COLUMNS_MAX + REDUCTIONS_MAX]; /* columns, then reductions */
  tf_ensemble_spec spec;
  char state_names[512];
} ensemble_job;

/* Names a reduction may not take: every table an ensemble may write. */
static const char *const *taken_names(void) {
  static const char *taken[TF_MEMBER_COLUMNS_MAX + 5];
  size_t n = 0;
  for (const char *c; (c = tf_member_column_name(n)) && n < TF_MEMBER_COLUMNS_MAX; n++)
    taken[n] = c;
  taken[n++] = "status", taken[n++] = "done", taken[n++] = "checksum", taken[n++] = "failure";
  taken[n] = NULL;
  return taken;
}

/* output.columns: the tables of `all` the config keeps (all but the opt-in ones if the key is
 * absent). */
static int pick_columns(tf_run *run, ensemble_job *job, tf_error *err) {
  tf_member_columns all;
  if (!tf_config_has(run->cfg, "output.columns")) {
    if (tf_member_columns_pick_all(&job->columns, job->engine, false))
      return tf_fail_code(err, TF_ERR_INTERNAL, "internal error: too many output columns");
    return 0;
  }
  if (tf_member_columns_pick_all(&all, job->engine, true))
    return tf_fail_code(err, TF_ERR_INTERNAL, "internal error: too many output columns");
  const char *wanted[TF_MEMBER_COLUMNS_MAX];
  size_t n = 0;
  if (tf_config_get_string_array(run->cfg, "output.columns", wanted, TF_MEMBER_COLUMNS_MAX, &n,
                                 err))
    return -1;
  const char *keep[TF_MEMBER_COLUMNS_MAX + 1];
  size_t kept = 0;
  for (size_t i = 0; i < all.n; i++)
    for (size_t j = 0; j < n; j++)
      if (strcmp(all.cols[i].name, wanted[j]) == 0) {
        keep[kept++] = all.cols[i].name;
        break;
      }
  keep[kept] = NULL;
  for (size_t j = 0; j < n; j++) {
    if (tf_member_columns_find(&all, wanted[j]) >= 0) continue;
    char where[512], list[512] = "";
    for (size_t i = 0; i < all.n; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
               all.cols[i].name);
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'output.columns': '%s' is not a table this ensemble writes (it "
                        "writes %s; status, done and checksum always)",
                        tf_config_where(run->cfg, "output.columns", where, sizeof where), wanted[j],
                        list);
  }
  return tf_member_columns_pick(&job->columns, job->engine, keep)
             ? tf_fail_code(err, TF_ERR_INTERNAL, "internal error: an unknown output column")
             : 0;
}

/* The scheduler's columns: the tables, then one float64 per reduction. */
static int lay_out(tf_run *run, ensemble_job *job, tf_error *err) {
  const tf_member_layout *l = &job->engine->layout;
  if (pick_columns(run, job, err) ||
      tf_member_reduce_from_config(run->cfg, l->kernel, taken_names(), &job->reduce, err))
    return -1;
  const size_t nr = tf_member_reduce_count(job->reduce);
  memcpy(job->cols, job->columns.cols, job->columns.n * sizeof *job->cols);
  for (size_t i = 0; i < nr; i++)
    job->cols[job->columns.n + i] =
        (tf_column){tf_member_reduce_name(job->reduce, i), TF_COLUMN_F64, 1,
                    tf_member_reduce_doc(job->reduce, i)};
  job->spec.cols = job->cols;
  job->spec.ncols = job->columns.n + nr;
  if (nr && tf_member_columns_find(&job->columns, "final_state") < 0 &&
      !(job->final = calloc(l->dim, sizeof *job->final)))
    return tf_fail(err, "out of memory");
  return 0;
}

/* ensemble.chunk and output.*: read by the engine where ensembles have always read them */
static int output_keys(tf_config *cfg, void *ctx, tf_error *err) {
  tf_run *run = ctx;
  ensemble_job *job = run->job_data;
  const long long d_chunk = 0;
  long long chunk;
  if (tf_config_get_int(cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  job->spec.chunk = (uint64_t)chunk;
  return 0;
}

static int setup(tf_run *run, tf_error *err) {
  ensemble_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  const long long d_members = 1000;
  long long members;
  if (tf_config_get_int(run->cfg, "ensemble.members", &d_members, 1, 1000000000LL, &members, err))
    return -1;
  const tf_member_settings settings = {.members = (uint64_t)members,
                                       .samples = TF_MEMBER_SAMPLES_FROM_CONFIG,
                                       .stop = &run->stop,
                                       .comm = run->comm,
                                       .output_keys = output_keys,
                                       .computing = tf_guard_member,
                                       .ctx = run,
                                       .read_replays = tf_replay_logs_read};
  if (tf_member_engine_create(run->cfg, &settings, &job->engine, err) || lay_out(run, job, err))
    return -1;
  tf_join_state_names(job->engine->layout.kernel, job->state_names, sizeof job->state_names);
  job->spec.members = (uint64_t)members;
  return 0;
}

/* The member's reductions into their slots, after the tables' (row[columns.n ...]). */
static void reduce_member(const ensemble_job *job, const double *final, const tf_member_result *r,
                          void *const *row) {
  const size_t nr = tf_member_reduce_count(job->reduce);
  if (!nr) return;
  double v[REDUCTIONS_MAX];
  tf_member_reduce_eval(job->reduce, final, r->t, job->engine->layout.params, v);
  for (size_t i = 0; i < nr; i++) *(double *)row[job->columns.n + i] = v[i];
}

static int run_member(void *ctx, uint64_t member, void *const *row) {
  ensemble_job *job = ctx;
  tf_member_buffers b = {0};
  tf_member_columns_bind(&job->columns, row, &b);
  if (!b.final) b.final = job->final; /* NULL unless a reduction reads it */
  tf_member_result r;
  tf_member_engine_run(job->engine, member, &b, &r);
  if (r.status == TF_MEMBER_PENDING) return r.status; /* computed again on resume */
  tf_member_columns_fill(&job->columns, &job->engine->layout, &r, row);
  reduce_member(job, b.final, &r, row);
  return r.status;
}

/* A chunk's members side by side (the engine's lanes), each as run_member computes it. */
static void run_chunk(void *ctx, size_t n, const uint64_t *members, void *const *rows,
                      int *status) {
  ensemble_job *job = ctx;
  const size_t ncols = job->spec.ncols, dim = job->engine->layout.dim;
  tf_member_buffers *b = calloc(n, sizeof *b);
  tf_member_result *r = calloc(n, sizeof *r);
  double *finals = job->final ? malloc(n * dim * sizeof *finals) : NULL;
  if (!b || !r || (job->final && !finals)) {
    for (size_t i = 0; i < n; i++) status[i] = run_member(ctx, members[i], rows + i * ncols);
  } else {
    for (size_t i = 0; i < n; i++) {
      tf_member_columns_bind(&job->columns, rows + i * ncols, &b[i]);
      if (!b[i].final && finals) b[i].final = finals + i * dim;
    }
    tf_member_engine_run_many(job->engine, n, members, b, r);
    for (size_t i = 0; i < n; i++) {
      status[i] = r[i].status;
      if (r[i].status == TF_MEMBER_PENDING) continue; /* computed again on resume */
      tf_member_columns_fill(&job->columns, &job->engine->layout, &r[i], rows + i * ncols);
      reduce_member(job, b[i].final, &r[i], rows + i * ncols);
    }
  }
  free(b), free(r), free(finals);
}

/* Statistics of a table of floats (final states, a reduction) over ok members, read back in
 * member order. */
typedef struct final_stats {
  double mean[64], std[64], min[64], max[64];
  long long n_ok;
} final_stats;

static int compute_stats(hid_t file, const char *path, uint64_t members, size_t dim,
                         final_stats *st) {
  hid_t xs = H5Dopen2(file, path, H5P_DEFAULT);
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

/* /summary/<name>_{mean,std,min,max} of each reduction over the ok members. */
static int summarize_reductions(tf_run *run, hid_t file, ensemble_job *job, tf_error *err) {
  hid_t g = tf_h5_group(file, "summary");
  int rc = g < 0;
  for (size_t i = 0; !rc && i < tf_member_reduce_count(job->reduce); i++) {
    const char *name = tf_member_reduce_name(job->reduce, i);
    char path[128], mean[96], std[96], min[96], max[96];
    snprintf(path, sizeof path, "members/%s", name);
    final_stats st;
    if (compute_stats(file, path, job->spec.members, 1, &st)) {
      rc = tf_fail_code(err, TF_ERR_IO, "cannot read back /%s from '%s'", path, run->output_path);
      break;
    }
    snprintf(mean, sizeof mean, "%s_mean", name), snprintf(std, sizeof std, "%s_std", name);
    snprintf(min, sizeof min, "%s_min", name), snprintf(max, sizeof max, "%s_max", name);
    rc = tf_h5_write_small(g, mean, H5T_NATIVE_DOUBLE, 1, st.mean, "mean over ok members") |
         tf_h5_write_small(g, std, H5T_NATIVE_DOUBLE, 1, st.std,
                           "sample standard deviation over ok members") |
         tf_h5_write_small(g, min, H5T_NATIVE_DOUBLE, 1, st.min, NULL) |
         tf_h5_write_small(g, max, H5T_NATIVE_DOUBLE, 1, st.max, NULL);
    if (rc)
      rc = tf_fail_code(err, TF_ERR_IO, "cannot write /summary/%s_* to '%s'", name,
                        run->output_path);
  }
  if (g >= 0) H5Gclose(g);
  return rc ? -1 : 0;
}

static bool writes(const ensemble_job *job, const char *column) {
  return tf_member_columns_find(&job->columns, column) >= 0;
}

static int write_summary(tf_run *run, hid_t file, ensemble_job *job, const tf_ensemble_outcome *out,
                         tf_error *err) {
  const size_t dim = job->engine->layout.dim;
  hid_t g = tf_h5_group(file, "summary");
  int rc = tf_h5_write_small(g, "status_counts", H5T_NATIVE_LLONG, (size_t)out->statuses,
                             out->status_counts, "members per status, in the order of the enum");
  H5Gclose(g);
  if (rc) return tf_fail_code(err, TF_ERR_IO, "cannot write /summary to '%s'", run->output_path);
  if (!writes(job, "final_state")) return 0; /* output.columns left it out */
  final_stats st;
  if (dim > 64)
    return tf_fail_code(err, TF_ERR_INTERNAL, "summary supports at most 64 state components");
  if ((rc = compute_stats(file, "members/final_state", job->spec.members, dim, &st)))
    return tf_fail_code(err, TF_ERR_IO, "cannot read back results from '%s'", run->output_path);
  g = tf_h5_group(file, "summary");
  rc = tf_h5_write_small(g, "final_state_mean", H5T_NATIVE_DOUBLE, dim, st.mean,
                         "mean final state over ok members") |
       tf_h5_write_small(g, "final_state_std", H5T_NATIVE_DOUBLE, dim, st.std,
                         "sample standard deviation of the final state over ok members") |
       tf_h5_write_small(g, "final_state_min", H5T_NATIVE_DOUBLE, dim, st.min, NULL) |
       tf_h5_write_small(g, "final_state_max", H5T_NATIVE_DOUBLE, dim, st.max, NULL);
  H5Gclose(g);
  if (rc) return tf_fail_code(err, TF_ERR_IO, "cannot write /summary to '%s'", run->output_path);
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
  if (rc)
    return tf_fail_code(err, TF_ERR_IO, "cannot read back the event counts from '%s'",
                        run->output_path);
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
  if (job->engine->layout.counts_visits) /* a model without a two-fold never arrives at one */
    tf_json_integer(run->summary, "twofold_visits", totals[TF_EVENT_TWOFOLD]);
  tf_json_integer(run->summary, "members_at_rest", totals[TF_EVENT_MEET_REST]);
  tf_json_counts(run->summary, "events", names, totals, TF_EVENT_KIND_COUNT);
  tf_json_number(run->summary, "rhs_per_event",
                 all > 0 ? (double)totals[TF_EVENT_KIND_COUNT] / (double)all : 0.0);
  return rc ? tf_fail_code(err, TF_ERR_IO, "cannot write /summary/events to '%s'", run->output_path)
            : 0;
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
  if (rc)
    return tf_fail_code(err, TF_ERR_IO, "cannot read back the step counts from '%s'",
                        run->output_path);
  tf_json_integer(run->summary, "steps", totals[0]);
  tf_json_integer(run->summary, "jacobian_evals", totals[1]);
  tf_json_integer(run->summary, "ts_batch", job->engine->layout.batch);
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
  if (write_summary(run, file, job, c->out, err) || summarize_reductions(run, file, job, err))
    return -1;
  /* totals of tables output.columns kept */
  const tf_member_layout *l = &job->engine->layout;
  if (l->counts_kinds && writes(job, "events") && writes(job, "rhs_evals") &&
      filippov_totals(run, file, job, err))
    return -1;
  if (l->counts_jacobians && writes(job, "steps") && writes(job, "jacobian_evals") &&
      ts_totals(run, file, job, err))
    return -1;
  return 0;
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
  if (run->isolate && job->engine->layout.calls_mpi) {
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "--isolate (run.isolate): integrator '%s' calls MPI inside a member, which a "
        "worker process must not; use integrator.method: dopri5, or run without "
        "--isolate",
        job->engine->layout.integrator);
  }
  /* the tables written, where the config chooses them (files of configs without the keys keep
   * the fingerprint they always had) */
  const char *paths[sizeof fingerprint_paths / sizeof *fingerprint_paths + 2];
  size_t np = 0;
  for (const char *const *p = fingerprint_paths; *p; p++) paths[np++] = *p;
  if (tf_config_has(run->cfg, "output.columns")) paths[np++] = "output.columns";
  if (tf_config_has(run->cfg, "output.reduce")) paths[np++] = "output.reduce";
  paths[np] = NULL;
  bool resumed;
  hid_t file = tf_results_open(run, paths, &resumed, err);
  if (file < 0) return -1;
  const tf_member_layout *l = &job->engine->layout;
  tf_h5_attr_string(file, "model", l->kernel->name);
  tf_results_write_model(file, l->kernel, l->params);
  tf_h5_attr_names(file, "state_names", job->state_names);
  job->spec.run = run_member;
  if (job->engine->layout.lanes > 1) job->spec.run_chunk = run_chunk;
  /* PETSc TS batches: claims of whole batches, ~32 per rank, so no batch is split */
  const uint64_t batch = (uint64_t)l->batch;
  if (batch > 1 && job->spec.chunk == 0) {
    const uint64_t per = job->spec.members / ((uint64_t)run->size * 32 * batch);
    job->spec.chunk = batch * (per > 0 ? per : 1);
  }
  /* lanes: claims of at least four lanes' worth of members, so that a chunk keeps its lanes
   * full (the scheduler's ~32 claims per rank would give a small ensemble chunks of a few) */
  const uint64_t least = 4 * (uint64_t)l->lanes;
  if (l->lanes > 1 && job->spec.chunk == 0) {
    const uint64_t per = job->spec.members / ((uint64_t)run->size * 32);
    job->spec.chunk = per > least ? (per < 256 ? per : 256) : least;
  }
  job->spec.ctx = job;
  tf_ensemble_outcome out;
  /* a batch of PETSc TS members is one long solve: it polls signals and the time limit every
   * step (--stop-after still counts members, in the scheduler) */
  if (l->stops_inside) tf_stop_arm(&run->stop, run->start_time, run->time_limit, 0, 0);
  int rc = tf_ensemble_execute(run, &file, &job->spec, resumed, &out, err);
  tf_stop_disarm(&run->stop);
  if (rc == 0) tf_member_columns_describe(&job->columns, job->engine, file, "members");
  tf_json_string(run->summary, "model", l->kernel->name);
  tf_json_string(run->summary, "integrator", l->integrator);
  /* the width members ran at, said where the config chose it (the default never changes a
   * result, so summaries of configs without the key stay as they were) */
  if (tf_config_has(run->cfg, "integrator.lanes"))
    tf_json_integer(run->summary, "lanes", l->lanes > 1 ? l->lanes : 1);
  tf_json_integer(run->summary, "members", (long long)job->spec.members);
  tf_json_integer(run->summary, "failed", tf_member_failures(out.status_counts));
  const char *names[TF_MEMBER_STATUS_COUNT - 1];
  for (int s = 1; s < TF_MEMBER_STATUS_COUNT; s++) names[s - 1] = tf_member_status_name(s);
  tf_json_counts(run->summary, "status_counts", names, out.status_counts + 1,
                 (size_t)out.statuses - 1);
  summary_ctx ctx = {job, &out};
  return tf_ensemble_finish_summarized(run, file, &out, rc, summarize, &ctx, err);
}

static void destroy(tf_run *run) {
  ensemble_job *job = run->job_data;
  if (!job) return;
  tf_member_engine_destroy(job->engine);
  tf_member_reduce_destroy(job->reduce);
  free(job->final);
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
    .kinds = TF_KINDS_CONTINUOUS | TF_KIND_BIT(TF_MODEL_MAP),
};
