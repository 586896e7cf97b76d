/* scan.c — job `scan`: a quantity over a grid of one or two model parameters.
 *
 * Each grid point is one member of the ensemble scheduler, so a scan is spread over ranks
 * with dynamic balance, resumable, and identical on any rank count.  The quantity today is
 * the Lyapunov spectrum (scan.quantity: lyapunov) of a flow, a map or a Filippov flow (event-driven
 * with saltation matrices, or smoothed where the parameters ask for it): lambda_1(mu) of the
 * logistic map, lambda versus the friction bound or the smoothing eps of the stick-slip
 * oscillator, or any spectrum versus a parameter.
 * Config: model, initial.state, integrator (flows), lyapunov.*, scan.quantity,
 * scan.x.{param,min,max,points}, optional scan.y.*, ensemble.chunk, output.
 * Output: /members/{grid (x, y; y NaN for one axis), spectrum, error, kaplan_yorke, valid},
 * /scan/x (and /scan/y), root attributes scan_x_param (scan_y_param).
 * JSON: points, lambda1_max with its location, and the scheduler's counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devs_job.h" /* DEVS models run on their own engine */
#include "ensemble.h"
#include "flow.h"
#include "h5io.h"
#include "job.h"
#include "lyapunov.h"
#include "model.h"
#include "param_grid.h"
#include "results.h"
#include "status.h"

enum { COL_GRID, COL_SPECTRUM, COL_ERROR, COL_KY, COL_VALID, NCOLS };

typedef struct scan_job {
  tf_model model;
  tf_param_grid grid;
  double x0[TF_LYAPUNOV_MAX_DIM];
  tf_ode_options ode;
  tf_lyapunov_options opt;
  bool saltation;
  double *scratch;
  tf_ensemble_spec spec;
  tf_column cols[NCOLS];
} scan_job;

static int setup(tf_run *run, tf_error *err) {
  if (tf_devs_job_wanted(run)) return tf_devs_scan_setup(run, err); /* DEVS: devs_job.c */
  scan_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  static const char *const quantities[] = {"lyapunov", NULL};
  const char *quantity, *name;
  if (tf_config_get_string(run->cfg, "scan.quantity", "lyapunov", quantities, &quantity, err) ||
      tf_config_get_string(run->cfg, "model.name", NULL, NULL, &name, err))
    return -1;
  const tf_kernel *k = tf_kernel_find(name);
  const bool is_map = k && k->kind == TF_KERNEL_MAP;
  if (tf_model_refuse_codim2(run->cfg, k, "scan", err) ||
      tf_model_from_config(&job->model, run->cfg, k ? k->kind : TF_KERNEL_FLOW, "scan", err))
    return -1;
  k = job->model.kernel;
  if (k->dim > TF_LYAPUNOV_MAX_DIM)
    return tf_fail(err, "model '%s' has %zu states; at most %d supported", k->name, k->dim,
                   TF_LYAPUNOV_MAX_DIM);
  double spread, t0;
  const long long d_chunk = 1;
  long long chunk;
  job->ode = tf_ode_default_options();
  if (tf_initial_from_config(run->cfg, k, job->x0, &spread, &t0, err) ||
      (!is_map && tf_ode_options_from_config(run->cfg, &job->ode, t0, NULL, err)) ||
      tf_lyapunov_options_from_config(run->cfg, k, &job->opt, err) ||
      tf_config_get_bool(run->cfg, "lyapunov.saltation", &(const bool){true}, &job->saltation,
                         err) ||
      tf_param_grid_from_config(&job->grid, run->cfg, "scan", &job->model, false, err) ||
      tf_config_get_int(run->cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  job->scratch = calloc(k->nparams, sizeof *job->scratch);
  if (!job->scratch) return tf_fail(err, "out of memory");
  const uint64_t m = (uint64_t)job->opt.exponents;
  job->cols[COL_GRID] = (tf_column){"grid", TF_COLUMN_F64, 2, "scan.x value, scan.y value (NaN)"};
  job->cols[COL_SPECTRUM] = (tf_column){"spectrum", TF_COLUMN_F64, m, "Lyapunov exponents"};
  job->cols[COL_ERROR] = (tf_column){"error", TF_COLUMN_F64, m, "their standard errors"};
  job->cols[COL_KY] = (tf_column){"kaplan_yorke", TF_COLUMN_F64, 1, "Kaplan-Yorke dimension"};
  job->cols[COL_VALID] = (tf_column){"valid", TF_COLUMN_I64, 1, "1 if the model accepts the point"};
  job->spec.members = tf_param_grid_points(&job->grid);
  job->spec.chunk = (uint64_t)chunk;
  job->spec.ncols = NCOLS;
  job->spec.cols = job->cols;
  return 0;
}

static void fill(double *v, size_t n, double value) {
  for (size_t i = 0; i < n; i++) v[i] = value;
}

static int run_point(void *ctx, uint64_t member, void *const *row) {
  scan_job *job = ctx;
  const tf_kernel *k = job->model.kernel;
  const size_t m = (size_t)job->opt.exponents;
  const bool valid = tf_param_grid_point(&job->grid, member, job->scratch, row[COL_GRID]);
  *(int64_t *)row[COL_VALID] = valid;
  fill(row[COL_SPECTRUM], m, NAN), fill(row[COL_ERROR], m, NAN), fill(row[COL_KY], 1, NAN);
  if (!valid) return TF_MEMBER_FAILED;
  tf_lyapunov_result r;
  tf_error err;
  const int rc =
      tf_lyapunov_any(k, job->scratch, job->x0, &job->ode, &job->opt, job->saltation, &r, &err);
  if (rc) return TF_MEMBER_FAILED;
  if (r.status == TF_MEMBER_OK) {
    memcpy(row[COL_SPECTRUM], r.spectrum, m * sizeof(double));
    memcpy(row[COL_ERROR], r.error, m * sizeof(double));
    *(double *)row[COL_KY] = r.kaplan_yorke;
  }
  free(r.blocks), free(r.running);
  return r.status;
}

static int describe(hid_t file, const scan_job *job) {
  int rc = tf_h5_attr_string(file, "model", job->model.kernel->name) |
           tf_h5_attr_string(file, "scan_x_param", job->grid.x.param);
  hid_t g = tf_h5_group(file, "scan");
  if (g < 0) return -1;
  rc |= tf_h5_write_small(g, "x", H5T_NATIVE_DOUBLE, (uint64_t)job->grid.x.points,
                          job->grid.x.values, "scan.x grid (point m has i = m % nx)");
  if (job->grid.y.index >= 0)
    rc |= tf_h5_attr_string(file, "scan_y_param", job->grid.y.param) |
          tf_h5_write_small(g, "y", H5T_NATIVE_DOUBLE, (uint64_t)job->grid.y.points,
                            job->grid.y.values, "scan.y grid (point m has j = m / nx)");
  H5Gclose(g);
  return rc;
}

static int execute(tf_run *run, tf_error *err) {
  if (tf_devs_job_wanted(run)) return tf_devs_scan_execute(run, err);
  scan_job *job = run->job_data;
  static const char *const fingerprint_paths[] = {"job",      "model", "initial", "integrator",
                                                  "lyapunov", "scan",  NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  int rc = describe(file, job) | tf_results_write_model(file, job->model.kernel, job->model.params);
  if (rc) rc = tf_fail(err, "cannot describe the scan in '%s'", run->output_path);
  job->spec.run = run_point;
  job->spec.ctx = job;
  tf_ensemble_outcome out = {0};
  if (rc == 0) rc = tf_ensemble_execute(run, file, &job->spec, resumed, &out, err);
  tf_json_string(run->summary, "model", job->model.kernel->name);
  tf_json_string(run->summary, "quantity", "lyapunov");
  tf_json_integer(run->summary, "points", (long long)job->spec.members);
  tf_json_integer(run->summary, "failed", tf_member_failures(out.status_counts));
  if (rc == 0 && out.complete &&
      tf_param_grid_report_max(run, file, "spectrum", (uint64_t)job->opt.exponents,
                               job->spec.members, &job->grid, err))
    rc = -1;
  return tf_ensemble_finish(run, file, &out, rc, err);
}

static void destroy(tf_run *run) {
  if (tf_devs_job_wanted(run)) return tf_devs_job_destroy(run);
  scan_job *job = run->job_data;
  if (!job) return;
  tf_param_grid_destroy(&job->grid);
  tf_model_destroy(&job->model);
  free(job->scratch);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_scan = {
    .name = "scan",
    .doc = "the Lyapunov spectrum over a grid of one or two model parameters, spread over ranks",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .splittable = true,
};
