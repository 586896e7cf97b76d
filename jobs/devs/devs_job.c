/* devs_job.c — see devs_job.h. */
#include "devs_job.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint.h"
#include "devs.h"
#include "ensemble.h"
#include "h5io.h"
#include "model.h"
#include "param_grid.h"
#include "progress.h"
#include "results.h"
#include "status.h"
#include "timeseries.h"

enum { MAX_RECORDED = 10000000 }; /* X_i kept for output: the last 1e7 steps at most */

typedef struct series_options {
  long long samples, evolve, theiler;
  double min_scale, max_scale;
  tf_embedding embedding;
} series_options;

enum { COL_GRID, COL_LAMBDA1, COL_ELEMENTS, COL_SERIES, COL_STRETCH, COL_XMEAN, COL_VALID, NCOLS };

typedef struct devs_job {
  bool scan;
  tf_model model;
  long long seed;
  bool generic;
  long long blocks;
  bool series; /* compute Wolf's estimate */
  series_options so;
  tf_devs_events *events; /* poincare.*, lyapunov only: on xbar = X_i / N */
  /* scan */
  tf_param_grid grid;
  double *scratch;
  tf_ensemble_spec spec;
  tf_column cols[NCOLS];
} devs_job;

bool tf_devs_job_wanted(tf_run *run) {
  if (!tf_config_has(run->cfg, "model.name") && !tf_config_has(run->cfg, "model.library") &&
      !tf_config_has(run->cfg, "model.source"))
    return false;
  const tf_kernel *k = tf_model_peek(run->cfg, run->comm);
  return k && k->kind == TF_MODEL_DEVS;
}

/* devs.seed, devs.path and the time-series keys (the lyapunov job's names and defaults for
 * maps: Wolf on a 2-D delay embedding, one-step evolution, scales 0.1%..3% of the extent). */
static int read_common(tf_run *run, devs_job *job, long long d_samples, tf_error *err) {
  tf_config *cfg = run->cfg;
  static const char *const paths[] = {"auto", "generic", NULL};
  const char *path;
  const long long d_seed = 1, d_dim = 2, d_delay = 1, d_evolve = 1, d_theiler = 5;
  const double d_min = 0.001, d_max = 0.03;
  long long dim, delay;
  const tf_kernel *k = job->model.kernel;
  if ((job->scan ? tf_devs_refuse_events(cfg, k, "scan", err)
                 : tf_devs_events_from_config(&job->events, cfg, k, err)) ||
      tf_config_get_int(cfg, "devs.seed", &d_seed, 0, LLONG_MAX, &job->seed, err) ||
      tf_config_get_string(cfg, "devs.path", "auto", paths, &path, err) ||
      tf_config_get_int(cfg, "lyapunov.series.samples", &d_samples, 100, 1000000, &job->so.samples,
                        err) ||
      tf_config_get_int(cfg, "lyapunov.embedding.dimension", &d_dim, 1, 64, &dim, err) ||
      tf_config_get_int(cfg, "lyapunov.embedding.delay", &d_delay, 1, 100000, &delay, err) ||
      tf_config_get_int(cfg, "lyapunov.embedding.theiler", &d_theiler, 0, 1000000, &job->so.theiler,
                        err) ||
      tf_config_get_int(cfg, "lyapunov.wolf.evolve", &d_evolve, 1, 100000, &job->so.evolve, err) ||
      tf_config_get_double(cfg, "lyapunov.wolf.min_scale", &d_min, 0, 1, &job->so.min_scale, err) ||
      tf_config_get_double(cfg, "lyapunov.wolf.max_scale", &d_max, 1e-9, 1, &job->so.max_scale,
                           err))
    return -1;
  job->generic = strcmp(path, "generic") == 0;
  job->so.embedding = (tf_embedding){(int)dim, (int)delay, 1.0};
  return 0;
}

/* Wolf et al. (1985) on the last `samples` values of X (the paper's experimental method). */
/* Wolf's estimate from the signal X_i (timeseries.h): frozen steps dropped and the result
 * scaled back to steps, NaN where the signal is not deterministic at the embedding (the
 * check says so; reported as series_meaningful and series_stretch). */
static double series_estimate(const devs_job *job, const double *X, uint64_t n,
                              tf_series_check *check) {
  const uint64_t use = n < (uint64_t)job->so.samples ? n : (uint64_t)job->so.samples;
  const double v = tf_series_exponent(X + (n - use), (size_t)use, job->so.embedding,
                                      (int)job->so.theiler, 0, (int)job->so.evolve,
                                      job->so.min_scale, job->so.max_scale, 0, 0, 0, NULL, check);
  return check->meaningful ? v : NAN;
}

static devs_job *new_job(tf_run *run, bool scan, tf_error *err) {
  devs_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory"), NULL;
  job->scan = scan;
  run->job_data = job;
  return job;
}

/* ---------------------------------------------------------------- lyapunov ---------- */

int tf_devs_lyapunov_setup(tf_run *run, tf_error *err) {
  devs_job *job = new_job(run, false, err);
  if (!job) return -1;
  const long long d_blocks = 10;
  if (tf_model_from_config(&job->model, run->cfg, run->comm, TF_KIND_BIT(TF_MODEL_DEVS), "lyapunov",
                           err) ||
      read_common(run, job, 10000, err) ||
      tf_config_get_int(run->cfg, "lyapunov.blocks", &d_blocks, 1, 10000, &job->blocks, err) ||
      tf_job_output_from_config(run, NULL, NULL, err))
    return -1;
  const uint64_t steps = tf_devs_param_steps(job->model.kernel, job->model.params);
  if ((uint64_t)job->blocks > steps) {
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'lyapunov.blocks': %lld blocks need at least as many steps "
                        "(model.params.steps = %llu)",
                        tf_config_where(run->cfg, "lyapunov.blocks", where, sizeof where),
                        job->blocks, (unsigned long long)steps);
  }
  return 0;
}

/* Where a run stands; saved in a checkpoint with the elements' state. */
typedef struct devs_position {
  uint64_t done;        /* steps taken, transient included */
  uint64_t blocks_done; /* measured blocks whose tangent norm has been taken */
  double x_sum, prev_log, mean_log;
  /* the tangent's log norm and mean log |v_k| where the transient ended: it runs through the
   * transient (from all ones), so averaging starts from a vector aligned with the dynamics */
  double start_log, start_mean;
  uint64_t nonfinite_step; /* 0: none */
} devs_position;

typedef struct devs_outcome {
  double lambda1, error, elements, series, x_mean, seconds;
  tf_series_check series_check;
  double cpu_seconds, local_updates; /* this rank's CPU time and element updates */
  uint64_t steps_run;                /* steps taken by this run */
  double *block_values, *running;
  double *X; /* the last `recorded` values */
  uint64_t recorded, first_recorded;
  devs_position pos;
} devs_outcome;

/* What a run of the lyapunov job adds to run_ensemble: stop requests become a checkpoint
 * in the results file, and a checkpoint found there on --resume is the starting point. */
typedef struct devs_checkpointing {
  tf_run *run;
  hid_t file;
  bool restore;
} devs_checkpointing;

/* CPU seconds of this process: on a shared machine the rate per CPU second is the rate of
 * one core, whatever else is running. */
static double cpu_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { STATE_PIECE = 1 << 20 }; /* rows per collective write of a state table */

/* A per-element table of this rank's slice, written collectively in pieces (every rank makes
 * the same number of calls, with no rows once its slice is written). */
static int write_state(hid_t g, const char *name, hid_t type, size_t size, uint64_t n,
                       uint64_t first, uint64_t count, const void *buf, MPI_Comm comm) {
  hid_t ds = tf_h5_create_table(g, name, type, n, 1, 0, "checkpoint: one value per element");
  if (ds < 0) return -1;
  uint64_t pieces = (count + STATE_PIECE - 1) / STATE_PIECE, max_pieces;
  MPI_Allreduce(&pieces, &max_pieces, 1, MPI_UINT64_T, MPI_MAX, comm);
  uint64_t *ids = malloc(STATE_PIECE * sizeof *ids);
  int rc = ids == NULL;
  for (uint64_t piece = 0; piece < max_pieces; piece++) {
    const uint64_t off = piece * STATE_PIECE;
    const size_t len =
        (size_t)(off < count ? (count - off < STATE_PIECE ? count - off : STATE_PIECE) : 0);
    for (size_t i = 0; ids && i < len; i++) ids[i] = first + off + i;
    rc |= tf_h5_write_rows(ds, type, 1, len, ids, (const char *)buf + off * size);
  }
  free(ids);
  H5Dclose(ds);
  return rc;
}

static int read_state(hid_t g, const char *name, hid_t type, uint64_t first, uint64_t count,
                      void *buf) {
  hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
  const int rc = ds < 0 || (count && tf_h5_read_rows(ds, type, 1, first, count, buf));
  if (ds >= 0) H5Dclose(ds);
  return rc ? -1 : 0;
}

/* /devs/checkpoint: x, m and e of every element, the position, and what has been measured
 * so far (X_i, block exponents).  Collective. */
static int write_checkpoint(hid_t file, tf_devs *d, const devs_outcome *o, uint64_t transient,
                            MPI_Comm comm) {
  double *x, *m;
  int64_t *e;
  const uint64_t first = tf_devs_state(d, &x, &m, &e), count = tf_devs_local(d);
  const uint64_t n = tf_devs_size(d);
  hid_t parent = tf_h5_group(file, "devs");
  if (H5Lexists(parent, "checkpoint", H5P_DEFAULT) > 0)
    H5Ldelete(parent, "checkpoint", H5P_DEFAULT);
  hid_t g = tf_h5_group(file, "devs/checkpoint");
  const devs_position *pos = &o->pos;
  const uint64_t measured = pos->done > transient ? pos->done - transient : 0;
  const uint64_t kept = measured > o->first_recorded ? measured - o->first_recorded : 0;
  const double X0 = 0;
  int rc = g < 0 || write_state(g, "x", H5T_NATIVE_DOUBLE, sizeof *x, n, first, count, x, comm) ||
           write_state(g, "m", H5T_NATIVE_DOUBLE, sizeof *m, n, first, count, m, comm) ||
           write_state(g, "e", H5T_NATIVE_INT64, sizeof *e, n, first, count, e, comm);
  rc = rc || tf_h5_attr_int(g, "done", (long long)pos->done) ||
       tf_h5_attr_int(g, "blocks_done", (long long)pos->blocks_done) ||
       tf_h5_attr_int(g, "nonfinite_step", (long long)pos->nonfinite_step) ||
       tf_h5_attr_double(g, "x_sum", pos->x_sum) ||
       tf_h5_attr_double(g, "prev_log", pos->prev_log) ||
       tf_h5_attr_double(g, "mean_log", pos->mean_log) ||
       tf_h5_attr_double(g, "start_log", pos->start_log) ||
       tf_h5_attr_double(g, "start_mean", pos->start_mean) ||
       tf_h5_write_small(g, "X", H5T_NATIVE_DOUBLE, kept ? kept : 1, kept ? o->X : &X0,
                         "X_i recorded so far") ||
       tf_h5_write_small(g, "blocks", H5T_NATIVE_DOUBLE, pos->blocks_done ? pos->blocks_done : 1,
                         pos->blocks_done ? o->block_values : &X0, "block exponents so far") ||
       tf_h5_write_small(g, "running", H5T_NATIVE_DOUBLE, pos->blocks_done ? pos->blocks_done : 1,
                         pos->blocks_done ? o->running : &X0, "running exponents so far");
  if (g >= 0) H5Gclose(g);
  H5Gclose(parent);
  return rc ? -1 : 0;
}

static int read_checkpoint(hid_t file, tf_devs *d, devs_outcome *o, uint64_t transient) {
  double *x, *m;
  int64_t *e;
  const uint64_t first = tf_devs_state(d, &x, &m, &e), count = tf_devs_local(d);
  hid_t g = H5Gopen2(file, "devs/checkpoint", H5P_DEFAULT);
  if (g < 0) return -1;
  long long done, blocks_done, nonfinite;
  devs_position *pos = &o->pos;
  int rc = read_state(g, "x", H5T_NATIVE_DOUBLE, first, count, x) ||
           read_state(g, "m", H5T_NATIVE_DOUBLE, first, count, m) ||
           read_state(g, "e", H5T_NATIVE_INT64, first, count, e) ||
           tf_h5_attr_read_int(g, "done", &done) ||
           tf_h5_attr_read_int(g, "blocks_done", &blocks_done) ||
           tf_h5_attr_read_int(g, "nonfinite_step", &nonfinite);
  if (!rc) {
    pos->done = (uint64_t)done, pos->blocks_done = (uint64_t)blocks_done;
    pos->nonfinite_step = (uint64_t)nonfinite;
    hid_t a;
    const char *names[] = {"x_sum", "prev_log", "mean_log", "start_log", "start_mean"};
    double *dst[] = {&pos->x_sum, &pos->prev_log, &pos->mean_log, &pos->start_log,
                     &pos->start_mean};
    for (int i = 0; i < 5 && !rc; i++) {
      a = tf_h5_attr_open_single(g, names[i]);
      rc = a < 0 || H5Aread(a, H5T_NATIVE_DOUBLE, dst[i]) < 0;
      if (a >= 0) H5Aclose(a);
    }
    const uint64_t measured = pos->done > transient ? pos->done - transient : 0;
    const uint64_t kept = measured > o->first_recorded ? measured - o->first_recorded : 0;
    const struct {
      const char *name;
      double *buf;
      uint64_t n;
    } arrays[] = {{"X", o->X, kept},
                  {"blocks", o->block_values, pos->blocks_done},
                  {"running", o->running, pos->blocks_done}};
    for (int i = 0; i < 3 && !rc; i++)
      if (arrays[i].n)
        rc = read_state(g, arrays[i].name, H5T_NATIVE_DOUBLE, 0, arrays[i].n, arrays[i].buf);
    tf_devs_set_step(d, pos->done);
  }
  H5Gclose(g);
  return rc ? -1 : 0;
}

/* True on every rank if any rank was asked to stop (signal, time limit, or --stop-after counted
 * in steps done in this run). */
static bool stop_requested(const devs_checkpointing *ck, uint64_t steps_in_run) {
  if (!ck) return false;
  int stop = tf_checkpoint_should_stop(ck->run->start_time, ck->run->time_limit) ||
             (ck->run->stop_after > 0 && steps_in_run >= (uint64_t)ck->run->stop_after),
      any;
  MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_LOR, ck->run->comm);
  return any;
}

/* Runs the ensemble: transient, then `steps` measured steps in job->blocks blocks with the
 * tangent norm taken at every block end.  Collective over the DEVS's communicator.
 * Returns 0 when done, 1 when stopped with a checkpoint written (ck only), -1 on error. */
static int run_ensemble(const devs_job *job, const double *p, uint64_t member, MPI_Comm comm,
                        tf_progress *progress, const devs_checkpointing *ck, devs_outcome *o,
                        tf_error *err) {
  const tf_kernel *k = job->model.kernel;
  const uint64_t steps = tf_devs_param_steps(k, p), transient = tf_devs_param_transient(k, p);
  const uint64_t nb = (uint64_t)(job->blocks > 0 ? job->blocks : 1);
  memset(o, 0, sizeof *o);
  o->recorded = steps < MAX_RECORDED ? steps : MAX_RECORDED;
  o->first_recorded = steps - o->recorded;
  o->X = malloc(o->recorded * sizeof *o->X);
  o->block_values = malloc(nb * sizeof *o->block_values);
  o->running = malloc(nb * sizeof *o->running);
  const uint64_t chunk_max = 1 << 16;
  double *chunk = malloc(chunk_max * sizeof *chunk);
  tf_devs *d = NULL;
  if (!o->X || !o->block_values || !o->running || !chunk) {
    free(chunk);
    return tf_fail(err, "out of memory for %llu recorded steps", (unsigned long long)o->recorded);
  }
  d = tf_devs_create(k, p, (uint64_t)job->seed, member, job->generic, comm, err);
  if (!d) return free(chunk), -1;
  devs_position *pos = &o->pos;
  if (ck && ck->restore && read_checkpoint(ck->file, d, o, transient)) {
    tf_devs_destroy(d), free(chunk);
    return tf_fail_code(err, TF_ERR_CONFIG, "cannot read the checkpoint in '%s'",
                        ck->run->output_path);
  }
  const uint64_t total = transient + steps, start = pos->done;
  /* progress in chunks that keep the bar moving but are long enough to amortise reductions */
  const uint64_t grain = total / 200 > 64 ? total / 200 / 64 * 64 : 64;
  const double t0 = MPI_Wtime(), c0 = cpu_time();
  int rc = 0;
  bool stopped = false;
  while (rc == 0 && !stopped && pos->done < transient) {
    const uint64_t n = transient - pos->done < grain ? transient - pos->done : grain;
    rc = tf_devs_advance(d, n, NULL, err);
    pos->done += n;
    if (pos->done == transient) { /* part of the checkpointed state */
      tf_devs_tangent(d, &pos->start_log, &pos->start_mean);
      pos->prev_log = pos->start_log;
    }
    if (progress) tf_progress_update(progress, pos->done, false);
    stopped = stop_requested(ck, pos->done - start);
  }
  if (transient == 0 && start == 0) tf_devs_reset_tangent(d);
  for (uint64_t b = pos->blocks_done; rc == 0 && !stopped && b < nb; b++) {
    const uint64_t from = steps * b / nb, to = steps * (b + 1) / nb;
    for (uint64_t i = pos->done - transient; rc == 0 && !stopped && i < to;) {
      uint64_t n = to - i < chunk_max ? to - i : chunk_max;
      if (n > grain) n = grain;
      rc = tf_devs_advance(d, n, chunk, err);
      for (uint64_t j = 0; j < n; j++) {
        const uint64_t step = i + j;
        pos->x_sum += chunk[j];
        if (!isfinite(chunk[j]) && !pos->nonfinite_step) pos->nonfinite_step = transient + step + 1;
        if (step >= o->first_recorded) o->X[step - o->first_recorded] = chunk[j];
      }
      i += n;
      pos->done += n;
      if (progress) tf_progress_update(progress, pos->done, false);
      if (i == to) {
        double log_norm;
        tf_devs_tangent(d, &log_norm, &pos->mean_log);
        o->block_values[b] = (log_norm - pos->prev_log) / (double)(to - from);
        o->running[b] = (log_norm - pos->start_log) / (double)to;
        pos->prev_log = log_norm;
        pos->blocks_done = b + 1;
      }
      stopped = stop_requested(ck, pos->done - start);
    }
  }
  o->seconds = MPI_Wtime() - t0;
  o->cpu_seconds = cpu_time() - c0;
  o->steps_run = pos->done - start;
  o->local_updates = (double)tf_devs_local(d) * (double)o->steps_run;
  if (rc == 0 && stopped && pos->done < total) {
    rc = write_checkpoint(ck->file, d, o, transient, comm);
    if (rc)
      tf_fail_code(err, TF_ERR_IO, "cannot write the checkpoint to '%s'", ck->run->output_path);
    tf_devs_destroy(d), free(chunk);
    return rc ? -1 : 1;
  }
  tf_devs_destroy(d);
  free(chunk);
  if (rc) return -1;
  o->lambda1 = (pos->prev_log - pos->start_log) / (double)steps;
  o->elements = (pos->mean_log - pos->start_mean) / (double)steps;
  double mean = 0, var = 0;
  for (uint64_t b = 0; b < nb; b++) mean += o->block_values[b];
  mean /= (double)nb;
  for (uint64_t b = 0; b < nb; b++) var += pow(o->block_values[b] - mean, 2);
  o->error = nb > 1 ? sqrt(var / (double)(nb - 1) / (double)nb) : NAN;
  /* X_mean is the time average of X/N wherever it is reported (lyapunov and scan alike) */
  o->x_mean = pos->x_sum / (double)steps / (double)tf_devs_param_n(k, p);
  o->series_check = (tf_series_check){NAN, NAN, false};
  o->series = job->series ? series_estimate(job, o->X, o->recorded, &o->series_check) : NAN;
  return 0;
}

static void free_outcome(devs_outcome *o) {
  free(o->X), free(o->block_values), free(o->running);
}

/* Opened before computing, so that a run refused for its output (an existing file without
 * --overwrite) costs nothing. */
static hid_t open_lyapunov(tf_run *run, bool *restore, tf_error *err) {
  static const char *const fingerprint_paths[] = {"job", "model", "devs", "lyapunov", NULL};
  bool resumed;
  *restore = false;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0 || !resumed) return file;
  /* --resume continues from the checkpoint of an interrupted run, or starts afresh */
  if (H5Lexists(file, "devs", H5P_DEFAULT) > 0 &&
      H5Lexists(file, "devs/checkpoint", H5P_DEFAULT) > 0) {
    *restore = true;
    return file;
  }
  H5Fclose(file);
  run->resume = false, run->overwrite = true;
  return tf_results_open(run, fingerprint_paths, &resumed, err);
}

/* /devs/events: the events of xbar = X_i / N on the recorded steps, from the same X on every
 * rank (written collectively as X is). */
static int write_events(hid_t g, const devs_job *job, const devs_outcome *o) {
  if (!job->events) return 0;
  const long long count = tf_devs_events_count(job->events);
  const double n = (double)tf_devs_param_n(job->model.kernel, job->model.params);
  double *rows = malloc((size_t)count * 2 * sizeof *rows);
  double *xbar = malloc((o->recorded ? o->recorded : 1) * sizeof *xbar);
  int rc = -1;
  if (rows && xbar) {
    for (uint64_t i = 0; i < o->recorded; i++) xbar[i] = o->X[i] / n;
    const long long found = tf_devs_events_find(job->events, xbar, o->recorded, o->first_recorded,
                                                job->model.params, rows);
    hid_t ds = -1;
    rc = tf_h5_write_small_matrix(g, "events", H5T_NATIVE_DOUBLE, (uint64_t)count, 2, rows,
                                  "events of poincare.event on xbar = X/N: rows (step, xbar), "
                                  "step as /devs/X's row + first_step; NaN past the last") ||
         (ds = H5Dopen2(g, "events", H5P_DEFAULT)) < 0 || tf_h5_attr_int(ds, "recorded", found);
    if (ds >= 0) H5Dclose(ds);
  }
  free(rows), free(xbar);
  return rc ? -1 : 0;
}

static int write_lyapunov(tf_run *run, hid_t file, const devs_job *job, const devs_outcome *o,
                          tf_error *err) {
  const uint64_t nb = (uint64_t)job->blocks;
  int rc = tf_results_write_model(file, job->model.kernel, job->model.params);
  hid_t g = tf_h5_group(file, "devs");
  if (H5Lexists(g, "checkpoint", H5P_DEFAULT) > 0) H5Ldelete(g, "checkpoint", H5P_DEFAULT);
  rc |= tf_h5_write_small(g, "X", H5T_NATIVE_DOUBLE, o->recorded, o->X,
                          "measured signal X_i = sum_k x_i^k after each measured step "
                          "(the last steps; attribute first_step)") |
        tf_h5_attr_int(g, "first_step", (long long)o->first_recorded) |
        tf_h5_attr_int(g, "seed", job->seed) | tf_h5_attr_double(g, "X_mean", o->x_mean);
  rc |= write_events(g, job, o);
  H5Gclose(g);
  g = tf_h5_group(file, "lyapunov");
  rc |= tf_h5_write_small_matrix(g, "blocks", H5T_NATIVE_DOUBLE, nb, 1, o->block_values,
                                 "lambda_1 of the full state over each block of steps") |
        tf_h5_write_small_matrix(g, "running", H5T_NATIVE_DOUBLE, nb, 1, o->running,
                                 "running lambda_1 after each block") |
        tf_h5_attr_double(g, "lambda1", o->lambda1) |
        tf_h5_attr_double(g, "lambda1_error", o->error) |
        tf_h5_attr_double(g, "lambda1_elements", o->elements) |
        tf_h5_attr_double(g, "lambda1_series", o->series) |
        tf_h5_attr_int(g, "series_meaningful", o->series_check.meaningful) |
        tf_h5_attr_double(g, "series_stretch", o->series_check.stretch) |
        tf_h5_attr_double(g, "series_update_fraction", o->series_check.update_fraction) |
        tf_h5_attr_string(g, "series_estimator", "wolf");
  H5Gclose(g);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0, &close_err)) return *err = close_err, -1;
  return rc ? tf_fail_code(err, TF_ERR_IO, "writing /devs and /lyapunov to '%s' failed",
                           run->output_path)
            : 0;
}

int tf_devs_lyapunov_execute(tf_run *run, tf_error *err) {
  devs_job *job = run->job_data;
  const tf_kernel *k = job->model.kernel;
  const double *p = job->model.params;
  job->series = true;
  const uint64_t n = tf_devs_param_n(k, p), steps = tf_devs_param_steps(k, p),
                 transient = tf_devs_param_transient(k, p);
  devs_checkpointing ck = {.run = run};
  hid_t file = open_lyapunov(run, &ck.restore, err);
  if (file < 0) return -1;
  ck.file = file;
  tf_progress progress;
  if (run->rank == 0)
    tf_progress_start(&progress, "steps", transient + steps, 0, run->quiet, run->progress_mode);
  devs_outcome o;
  int rc = run_ensemble(job, p, 0, run->comm, run->rank == 0 ? &progress : NULL, &ck, &o, err);
  if (run->rank == 0 && rc >= 0) tf_progress_finish(&progress, o.pos.done);
  if (rc == 1) { /* stopped: the checkpoint is in the file; --resume continues */
    tf_json_integer(run->summary, "steps_done", (long long)o.pos.done);
    free_outcome(&o);
    run->outcome = TF_RUN_INTERRUPTED;
    return tf_results_close(run, file, false, err) ? -1 : 0;
  }
  if (rc == 0 && o.pos.nonfinite_step)
    rc = tf_fail(err, "model '%s': the ensemble state became non-finite at step %llu", k->name,
                 (unsigned long long)o.pos.nonfinite_step);
  if (rc) {
    tf_error close_err;
    tf_results_close(run, file, false, &close_err);
    return free_outcome(&o), -1;
  }
  const double updates = (double)n * (double)o.steps_run; /* this run's (resumed: the rest) */
  tf_json_string(run->summary, "model", k->name);
  tf_json_string(run->summary, "method", "devs");
  tf_json_number(run->summary, "lambda1", o.lambda1);
  tf_json_number(run->summary, "lambda1_error", o.error);
  tf_json_number(run->summary, "lambda1_elements", o.elements);
  tf_json_number(run->summary, "lambda1_series", o.series);
  tf_json_bool(run->summary, "series_meaningful", o.series_check.meaningful);
  tf_json_number(run->summary, "series_stretch", o.series_check.stretch);
  tf_json_number(run->summary, "series_update_fraction", o.series_check.update_fraction);
  tf_json_number(run->summary, "X_mean", o.x_mean);
  tf_json_integer(run->summary, "N", (long long)n);
  tf_json_number(run->summary, "q", p[k->devs->q]);
  tf_json_integer(run->summary, "steps", (long long)steps);
  tf_json_integer(run->summary, "transient", (long long)transient);
  tf_json_bool(run->summary, "vectorised", tf_devs_model_vectorised(k) && !job->generic);
  tf_json_integer(run->summary, "bytes_per_element",
                  (long long)(2 * sizeof(double) + sizeof(int64_t)));
  tf_json_number(run->summary, "devs_seconds", o.seconds);
  tf_json_number(run->summary, "element_updates_per_second", updates / o.seconds);
  tf_json_number(run->summary, "element_updates_per_second_per_rank",
                 updates / o.seconds / run->size);
  tf_json_number(run->summary, "element_updates_per_cpu_second", o.local_updates / o.cpu_seconds);
  if (run->rank == 0 && !run->json && !run->quiet)
    printf(
        "DEVS '%s', N = %llu, q = %g: lambda_1 = %.6f ± %.1e (full state), %.6f (mean "
        "element), %.6f (Wolf on X_i); %.3g element-updates/s\n",
        k->name, (unsigned long long)n, p[k->devs->q], o.lambda1, o.error, o.elements, o.series,
        updates / o.seconds);
  rc = write_lyapunov(run, file, job, &o, err);
  free_outcome(&o);
  return rc;
}

/* ---------------------------------------------------------------- scan -------------- */

int tf_devs_scan_setup(tf_run *run, tf_error *err) {
  devs_job *job = new_job(run, true, err);
  if (!job) return -1;
  static const char *const quantities[] = {"lyapunov", NULL};
  const char *quantity;
  const long long d_chunk = 1, d_blocks = 10;
  const bool d_series = true;
  if (tf_config_get_string(run->cfg, "scan.quantity", "lyapunov", quantities, &quantity, err) ||
      tf_model_from_config(&job->model, run->cfg, run->comm, TF_KIND_BIT(TF_MODEL_DEVS), "scan",
                           err) ||
      read_common(run, job, 4000, err) ||
      tf_config_get_int(run->cfg, "lyapunov.blocks", &d_blocks, 1, 10000, &job->blocks, err) ||
      tf_config_get_bool(run->cfg, "scan.series", &d_series, &job->series, err) ||
      tf_param_grid_from_config(&job->grid, run->cfg, "scan", &job->model, false, err))
    return -1;
  long long chunk;
  if (tf_config_get_int(run->cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  const uint64_t steps = tf_devs_param_steps(job->model.kernel, job->model.params);
  if ((uint64_t)job->blocks > steps) {
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'lyapunov.blocks': %lld blocks need at least as many steps "
                        "(model.params.steps = %llu)",
                        tf_config_where(run->cfg, "lyapunov.blocks", where, sizeof where),
                        job->blocks, (unsigned long long)steps);
  }
  const tf_devs_ops *L = job->model.kernel->devs;
  const int fixed[] = {L->steps, L->transient};
  for (int i = 0; i < 2; i++)
    if (job->grid.x.index == fixed[i] || job->grid.y.index == fixed[i]) {
      char where[256];
      return tf_fail_code(err, TF_ERR_CONFIG, "%s: key 'scan': a DEVS scan cannot vary '%s'",
                          tf_config_where(run->cfg, "scan", where, sizeof where),
                          job->model.kernel->params[fixed[i]].name);
    }
  job->scratch = calloc(job->model.kernel->nparams, sizeof *job->scratch);
  if (!job->scratch) return tf_fail(err, "out of memory");
  job->cols[COL_GRID] = (tf_column){"grid", TF_COLUMN_F64, 2, "scan.x value, scan.y value (NaN)"};
  job->cols[COL_LAMBDA1] =
      (tf_column){"lambda1", TF_COLUMN_F64, 1, "lambda_1 of the full state (tangent dynamics)"};
  job->cols[COL_ELEMENTS] =
      (tf_column){"lambda1_elements", TF_COLUMN_F64, 1, "mean over elements of their exponents"};
  job->cols[COL_SERIES] =
      (tf_column){"lambda1_series", TF_COLUMN_F64, 1,
                  "Wolf et al. (1985) from the signal X_i (NaN if off or not meaningful: "
                  "series_stretch above 10)"};
  job->cols[COL_STRETCH] = (tf_column){
      "series_stretch", TF_COLUMN_F64, 1,
      "median one-step stretch of nearest neighbours in the embedding of X_i "
      "(about |f'| for a deterministic signal; above 10 the estimate is not meaningful)"};
  job->cols[COL_XMEAN] = (tf_column){"X_mean", TF_COLUMN_F64, 1, "time average of X_i / N"};
  job->cols[COL_VALID] = (tf_column){"valid", TF_COLUMN_I64, 1, "1 if the model accepts the point"};
  job->spec.members = tf_param_grid_points(&job->grid);
  job->spec.chunk = (uint64_t)chunk;
  job->spec.ncols = NCOLS;
  job->spec.cols = job->cols;
  return 0;
}

static int scan_point(void *ctx, uint64_t member, void *const *row) {
  devs_job *job = ctx;
  const bool valid = tf_param_grid_point(&job->grid, member, job->scratch, row[COL_GRID]);
  *(int64_t *)row[COL_VALID] = valid;
  for (int c = COL_LAMBDA1; c <= COL_XMEAN; c++) *(double *)row[c] = NAN;
  if (!valid) return TF_MEMBER_FAILED;
  devs_outcome o;
  tf_error err;
  /* member 0 at every point: common random numbers make the curve smooth in the parameter */
  const int rc = run_ensemble(job, job->scratch, 0, MPI_COMM_SELF, NULL, NULL, &o, &err);
  int status = rc ? TF_MEMBER_FAILED : o.pos.nonfinite_step ? TF_MEMBER_NONFINITE : TF_MEMBER_OK;
  if (status == TF_MEMBER_OK) {
    *(double *)row[COL_LAMBDA1] = o.lambda1;
    *(double *)row[COL_ELEMENTS] = o.elements;
    *(double *)row[COL_SERIES] = o.series;
    *(double *)row[COL_STRETCH] = o.series_check.stretch;
    *(double *)row[COL_XMEAN] = o.x_mean;
  }
  free_outcome(&o);
  return status;
}

int tf_devs_scan_execute(tf_run *run, tf_error *err) {
  devs_job *job = run->job_data;
  static const char *const fingerprint_paths[] = {"job", "model", "devs", "lyapunov", "scan", NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  int rc = tf_results_write_model(file, job->model.kernel, job->model.params) |
           tf_h5_attr_string(file, "model", job->model.kernel->name) |
           tf_h5_attr_string(file, "scan_x_param", job->grid.x.param);
  hid_t g = tf_h5_group(file, "scan");
  rc |= g < 0 || tf_h5_write_small(g, "x", H5T_NATIVE_DOUBLE, (uint64_t)job->grid.x.points,
                                   job->grid.x.values, "scan.x grid (point m has i = m % nx)");
  if (job->grid.y.index >= 0)
    rc |= tf_h5_attr_string(file, "scan_y_param", job->grid.y.param) |
          tf_h5_write_small(g, "y", H5T_NATIVE_DOUBLE, (uint64_t)job->grid.y.points,
                            job->grid.y.values, "scan.y grid (point m has j = m / nx)");
  if (g >= 0) H5Gclose(g);
  if (rc) rc = tf_fail_code(err, TF_ERR_IO, "cannot describe the scan in '%s'", run->output_path);
  job->spec.run = scan_point;
  job->spec.ctx = job;
  tf_ensemble_outcome out = {0};
  if (rc == 0) rc = tf_ensemble_execute(run, &file, &job->spec, resumed, &out, err);
  tf_json_string(run->summary, "model", job->model.kernel->name);
  tf_json_string(run->summary, "quantity", "lyapunov");
  tf_json_string(run->summary, "method", "devs");
  tf_json_integer(run->summary, "points", (long long)job->spec.members);
  tf_json_integer(run->summary, "failed", tf_member_failures(out.status_counts));
  tf_param_grid_max best = {"lambda1", 1, job->spec.members, &job->grid};
  return tf_ensemble_finish_summarized(run, file, &out, rc, tf_param_grid_report_max, &best, err);
}

void tf_devs_job_destroy(tf_run *run) {
  devs_job *job = run->job_data;
  if (!job) return;
  if (job->scan) tf_param_grid_destroy(&job->grid);
  tf_model_destroy(&job->model);
  tf_devs_events_destroy(job->events);
  free(job->scratch);
  free(job);
  run->job_data = NULL;
}
