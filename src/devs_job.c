/* devs_job.c — see devs_job.h. */
#include "devs_job.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

enum { COL_GRID, COL_LAMBDA1, COL_ELEMENTS, COL_SERIES, COL_XMEAN, COL_VALID, NCOLS };

typedef struct devs_job {
  bool scan;
  tf_model model;
  long long seed;
  bool generic;
  long long blocks;
  bool series; /* compute Wolf's estimate */
  series_options so;
  /* scan */
  tf_param_grid grid;
  double *scratch;
  tf_ensemble_spec spec;
  tf_column cols[NCOLS];
} devs_job;

bool tf_devs_job_wanted(tf_run *run) {
  if (!tf_config_has(run->cfg, "model.name")) return false;
  const char *name;
  tf_error err;
  if (tf_config_get_string(run->cfg, "model.name", NULL, NULL, &name, &err)) return false;
  const tf_kernel *k = tf_kernel_find(name);
  return k && k->devs;
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
  if (tf_config_get_int(cfg, "devs.seed", &d_seed, 0, LLONG_MAX, &job->seed, err) ||
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
static double series_estimate(const devs_job *job, const double *X, uint64_t n) {
  const uint64_t use = n < (uint64_t)job->so.samples ? n : (uint64_t)job->so.samples;
  return tf_wolf(X + (n - use), (size_t)use, job->so.embedding, (int)job->so.theiler,
                 (int)job->so.evolve, job->so.min_scale, job->so.max_scale);
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
  if (tf_model_from_config(&job->model, run->cfg, TF_KERNEL_MAP, "lyapunov", err) ||
      read_common(run, job, 10000, err) ||
      tf_config_get_int(run->cfg, "lyapunov.blocks", &d_blocks, 1, 10000, &job->blocks, err) ||
      tf_job_output_from_config(run, NULL, NULL, err))
    return -1;
  const uint64_t steps = tf_devs_param_steps(job->model.kernel, job->model.params);
  if ((uint64_t)job->blocks > steps) {
    char where[256];
    return tf_fail(err,
                   "%s: key 'lyapunov.blocks': %lld blocks need at least as many steps "
                   "(model.params.steps = %llu)",
                   tf_config_where(run->cfg, "lyapunov.blocks", where, sizeof where), job->blocks,
                   (unsigned long long)steps);
  }
  return 0;
}

typedef struct devs_outcome {
  double lambda1, error, elements, series, x_mean, seconds;
  double cpu_seconds, local_updates; /* this rank's CPU time and element updates */
  double *block_values, *running;
  double *X; /* the last `recorded` values */
  uint64_t recorded, first_recorded;
  uint64_t nonfinite_step; /* 0: none */
} devs_outcome;

/* CPU seconds of this process: on a shared machine the rate per CPU second is the rate of
 * one core, whatever else is running. */
static double cpu_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs the ensemble: transient, then `steps` measured steps in job->blocks blocks with the
 * tangent norm taken at every block end.  Collective over the DEVS's communicator. */
static int run_ensemble(const devs_job *job, const double *p, uint64_t member, MPI_Comm comm,
                        tf_progress *progress, devs_outcome *o, tf_error *err) {
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
  const uint64_t total = transient + steps;
  /* progress in chunks that keep the bar moving but are long enough to amortise reductions */
  const uint64_t grain = total / 200 > 64 ? total / 200 / 64 * 64 : 64;
  const double t0 = MPI_Wtime(), c0 = cpu_time();
  int rc = 0;
  for (uint64_t done = 0; rc == 0 && done < transient;) {
    const uint64_t n = transient - done < grain ? transient - done : grain;
    rc = tf_devs_advance(d, n, NULL, err);
    done += n;
    if (progress) tf_progress_update(progress, done, false);
  }
  tf_devs_reset_tangent(d);
  double x_sum = 0, prev_log = 0, mean_log = 0;
  for (uint64_t b = 0; rc == 0 && b < nb; b++) {
    const uint64_t from = steps * b / nb, to = steps * (b + 1) / nb;
    for (uint64_t i = from; rc == 0 && i < to;) {
      uint64_t n = to - i < chunk_max ? to - i : chunk_max;
      if (n > grain) n = grain;
      rc = tf_devs_advance(d, n, chunk, err);
      for (uint64_t j = 0; j < n; j++) {
        const uint64_t step = i + j;
        x_sum += chunk[j];
        if (!isfinite(chunk[j]) && !o->nonfinite_step) o->nonfinite_step = transient + step + 1;
        if (step >= o->first_recorded) o->X[step - o->first_recorded] = chunk[j];
      }
      i += n;
      if (progress) tf_progress_update(progress, transient + i, false);
    }
    double log_norm;
    tf_devs_tangent(d, &log_norm, &mean_log);
    o->block_values[b] = (log_norm - prev_log) / (double)(to - from);
    o->running[b] = log_norm / (double)to;
    prev_log = log_norm;
  }
  o->seconds = MPI_Wtime() - t0;
  o->cpu_seconds = cpu_time() - c0;
  o->local_updates = (double)tf_devs_local(d) * (double)total;
  tf_devs_destroy(d);
  free(chunk);
  if (rc) return -1;
  o->lambda1 = prev_log / (double)steps;
  o->elements = mean_log / (double)steps;
  double mean = 0, var = 0;
  for (uint64_t b = 0; b < nb; b++) mean += o->block_values[b];
  mean /= (double)nb;
  for (uint64_t b = 0; b < nb; b++) var += pow(o->block_values[b] - mean, 2);
  o->error = nb > 1 ? sqrt(var / (double)(nb - 1) / (double)nb) : NAN;
  o->x_mean = x_sum / (double)steps;
  o->series = job->series ? series_estimate(job, o->X, o->recorded) : NAN;
  return 0;
}

static void free_outcome(devs_outcome *o) {
  free(o->X), free(o->block_values), free(o->running);
}

/* Opened before computing, so that a run refused for its output (an existing file without
 * --overwrite) costs nothing. */
static hid_t open_lyapunov(tf_run *run, tf_error *err) {
  static const char *const fingerprint_paths[] = {"job", "model", "devs", "lyapunov", NULL};
  bool resumed;
  run->overwrite = run->overwrite || run->resume; /* one computation: nothing to resume */
  run->resume = false;
  return tf_results_open(run, fingerprint_paths, &resumed, err);
}

static int write_lyapunov(tf_run *run, hid_t file, const devs_job *job, const devs_outcome *o,
                          tf_error *err) {
  const uint64_t nb = (uint64_t)job->blocks;
  int rc = tf_results_write_model(file, job->model.kernel, job->model.params);
  hid_t g = tf_h5_group(file, "devs");
  rc |= tf_h5_write_small(g, "X", H5T_NATIVE_DOUBLE, o->recorded, o->X,
                          "measured signal X_i = sum_k x_i^k after each measured step "
                          "(the last steps; attribute first_step)") |
        tf_h5_attr_int(g, "first_step", (long long)o->first_recorded) |
        tf_h5_attr_int(g, "seed", job->seed) | tf_h5_attr_double(g, "X_mean", o->x_mean);
  H5Gclose(g);
  g = tf_h5_group(file, "lyapunov");
  rc |= tf_h5_write_small(g, "blocks", H5T_NATIVE_DOUBLE, nb, o->block_values,
                          "lambda_1 of the full state over each block of steps") |
        tf_h5_write_small(g, "running", H5T_NATIVE_DOUBLE, nb, o->running,
                          "running lambda_1 after each block") |
        tf_h5_attr_double(g, "lambda1", o->lambda1) |
        tf_h5_attr_double(g, "lambda1_error", o->error) |
        tf_h5_attr_double(g, "lambda1_elements", o->elements) |
        tf_h5_attr_double(g, "lambda1_series", o->series) |
        tf_h5_attr_string(g, "series_estimator", "wolf");
  H5Gclose(g);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0, &close_err)) return *err = close_err, -1;
  return rc ? tf_fail(err, "writing /devs and /lyapunov to '%s' failed", run->output_path) : 0;
}

int tf_devs_lyapunov_execute(tf_run *run, tf_error *err) {
  devs_job *job = run->job_data;
  const tf_kernel *k = job->model.kernel;
  const double *p = job->model.params;
  job->series = true;
  const uint64_t n = tf_devs_param_n(k, p), steps = tf_devs_param_steps(k, p),
                 transient = tf_devs_param_transient(k, p);
  hid_t file = open_lyapunov(run, err);
  if (file < 0) return -1;
  tf_progress progress;
  if (run->rank == 0)
    tf_progress_start(&progress, "steps", transient + steps, 0, run->quiet, run->progress_mode);
  devs_outcome o;
  int rc = run_ensemble(job, p, 0, run->comm, run->rank == 0 ? &progress : NULL, &o, err);
  if (run->rank == 0 && rc == 0) tf_progress_finish(&progress, transient + steps);
  if (rc == 0 && o.nonfinite_step)
    rc = tf_fail(err, "model '%s': the ensemble state became non-finite at step %llu", k->name,
                 (unsigned long long)o.nonfinite_step);
  if (rc) {
    tf_error close_err;
    tf_results_close(run, file, false, &close_err);
    return free_outcome(&o), -1;
  }
  const double updates = (double)n * (double)(steps + transient);
  tf_json_string(run->summary, "model", k->name);
  tf_json_string(run->summary, "method", "devs");
  tf_json_number(run->summary, "lambda1", o.lambda1);
  tf_json_number(run->summary, "lambda1_error", o.error);
  tf_json_number(run->summary, "lambda1_elements", o.elements);
  tf_json_number(run->summary, "lambda1_series", o.series);
  tf_json_number(run->summary, "X_mean", o.x_mean);
  tf_json_integer(run->summary, "N", (long long)n);
  tf_json_number(run->summary, "q", p[k->devs->q]);
  tf_json_integer(run->summary, "steps", (long long)steps);
  tf_json_integer(run->summary, "transient", (long long)transient);
  tf_json_bool(run->summary, "vectorised", k->devs->fast != TF_DEVS_GENERIC && !job->generic);
  tf_json_integer(run->summary, "bytes_per_element",
                  (long long)(2 * sizeof(double) + sizeof(int32_t)));
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
      tf_model_from_config(&job->model, run->cfg, TF_KERNEL_MAP, "scan", err) ||
      read_common(run, job, 4000, err) ||
      tf_config_get_int(run->cfg, "lyapunov.blocks", &d_blocks, 1, 10000, &job->blocks, err) ||
      tf_config_get_bool(run->cfg, "scan.series", &d_series, &job->series, err) ||
      tf_param_grid_from_config(&job->grid, run->cfg, "scan", &job->model, false, err))
    return -1;
  long long chunk;
  if (tf_config_get_int(run->cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  const tf_devs_layout *L = job->model.kernel->devs;
  const int fixed[] = {L->steps, L->transient};
  for (int i = 0; i < 2; i++)
    if (job->grid.x.index == fixed[i] || job->grid.y.index == fixed[i]) {
      char where[256];
      return tf_fail(err, "%s: key 'scan': a DEVS scan cannot vary '%s'",
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
  job->cols[COL_SERIES] = (tf_column){"lambda1_series", TF_COLUMN_F64, 1,
                                      "Wolf et al. (1985) from the signal X_i (NaN if off)"};
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
  const int rc = run_ensemble(job, job->scratch, 0, MPI_COMM_SELF, NULL, &o, &err);
  const uint64_t n = tf_devs_param_n(job->model.kernel, job->scratch);
  int status = rc ? TF_MEMBER_FAILED : o.nonfinite_step ? TF_MEMBER_NONFINITE : TF_MEMBER_OK;
  if (status == TF_MEMBER_OK) {
    *(double *)row[COL_LAMBDA1] = o.lambda1;
    *(double *)row[COL_ELEMENTS] = o.elements;
    *(double *)row[COL_SERIES] = o.series;
    *(double *)row[COL_XMEAN] = o.x_mean / (double)n;
  }
  free_outcome(&o);
  return status;
}

static int scan_report(tf_run *run, hid_t file, devs_job *job, tf_error *err) {
  double best[3] = {-INFINITY, NAN, NAN};
  int rc = 0;
  if (run->rank == 0) {
    const uint64_t n = job->spec.members;
    double *l1 = malloc(n * sizeof *l1), *grid = malloc(n * 2 * sizeof *grid);
    hid_t dl = H5Dopen2(file, "members/lambda1", H5P_DEFAULT);
    hid_t dg = H5Dopen2(file, "members/grid", H5P_DEFAULT);
    rc = !l1 || !grid || dl < 0 || dg < 0 || tf_h5_read_rows(dl, H5T_NATIVE_DOUBLE, 1, 0, n, l1) ||
         tf_h5_read_rows(dg, H5T_NATIVE_DOUBLE, 2, 0, n, grid);
    for (uint64_t i = 0; !rc && i < n; i++)
      if (l1[i] > best[0]) best[0] = l1[i], best[1] = grid[2 * i], best[2] = grid[2 * i + 1];
    if (dl >= 0) H5Dclose(dl);
    if (dg >= 0) H5Dclose(dg);
    free(l1), free(grid);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
  MPI_Bcast(best, 3, MPI_DOUBLE, 0, run->comm);
  if (rc) return tf_fail(err, "cannot read back the scan from '%s'", run->output_path);
  tf_json_number(run->summary, "lambda1_max", best[0]);
  tf_json_numbers(run->summary, "lambda1_max_at", best + 1, job->grid.y.index >= 0 ? 2 : 1);
  return 0;
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
  if (rc) rc = tf_fail(err, "cannot describe the scan in '%s'", run->output_path);
  job->spec.run = scan_point;
  job->spec.ctx = job;
  tf_ensemble_outcome out = {0};
  if (rc == 0) rc = tf_ensemble_execute(run, file, &job->spec, resumed, &out, err);
  tf_json_string(run->summary, "model", job->model.kernel->name);
  tf_json_string(run->summary, "quantity", "lyapunov");
  tf_json_string(run->summary, "method", "devs");
  tf_json_integer(run->summary, "points", (long long)job->spec.members);
  tf_json_integer(run->summary, "failed",
                  (long long)(out.done - (uint64_t)out.status_counts[TF_MEMBER_OK]));
  if (rc == 0 && out.complete && scan_report(run, file, job, err)) rc = -1;
  return tf_ensemble_finish(run, file, &out, rc, err);
}

void tf_devs_job_destroy(tf_run *run) {
  devs_job *job = run->job_data;
  if (!job) return;
  if (job->scan) tf_param_grid_destroy(&job->grid);
  tf_model_destroy(&job->model);
  free(job->scratch);
  free(job);
  run->job_data = NULL;
}
