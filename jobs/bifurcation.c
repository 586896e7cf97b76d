/* bifurcation.c — job `bifurcation`: bifurcation diagrams of a DEVS, X/N versus a parameter
 * (Feldstein & Kuzmin 1998, Figs. 6 and 7).
 *
 * Every point of the x axis is one ensemble run for `transient` steps, after which the
 * `steps` values of X_i / N are recorded.  Optional panels repeat the diagram for a list of
 * values of another parameter (q = 0.05, 0.5, 1 for Fig. 6; N = 10, 30, 50 for Fig. 7).
 * Point m is (x_i, panel j) with i = m % nx, j = m / nx; each point is one member of the
 * scheduler, so the diagram is spread over ranks, resumable and identical on any rank
 * count.  All points use the same random streams (devs.seed, member 0).
 * Config: model (a DEVS kernel), bifurcation.x.{param,min,max,points},
 * bifurcation.panels.{param,values}, devs.seed, devs.path, ensemble.chunk, output.
 * Output: /members/{grid (x value, panel value or NaN), samples (steps values of X_i / N),
 * valid, events (with poincare.*: tf_devs_events_find on the samples)}, /bifurcation/x,
 * /bifurcation/panels; root attributes x_param, panel_param. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devs.h"
#include "ensemble.h"
#include "h5io.h"
#include "job.h"
#include "model.h"
#include "param_grid.h"
#include "results.h"
#include "status.h"

enum { COL_GRID, COL_SAMPLES, COL_VALID, COL_EVENTS, NCOLS };
enum { MAX_PANELS = 64, MAX_SAMPLES = 100000 };

typedef struct bifurcation_job {
  tf_model model;
  tf_param_grid grid;
  int panel_index; /* -1: one panel */
  const char *panel_param;
  double panels[MAX_PANELS];
  size_t npanels;
  long long seed;
  bool generic;
  uint64_t steps;
  double *scratch;
  tf_devs_events *events; /* poincare.*: on each point's samples */
  tf_ensemble_spec spec;
  tf_column cols[NCOLS];
} bifurcation_job;

static int read_panels(tf_run *run, bifurcation_job *job, tf_error *err) {
  tf_config *cfg = run->cfg;
  const tf_kernel *k = job->model.kernel;
  job->panel_index = -1;
  job->npanels = 1;
  job->panels[0] = NAN;
  if (!tf_config_has(cfg, "bifurcation.panels")) return 0;
  const char *names[64] = {0};
  for (size_t i = 0; i < k->nparams && i < 63; i++) names[i] = k->params[i].name;
  char where[256];
  if (tf_config_get_string(cfg, "bifurcation.panels.param", NULL, names, &job->panel_param, err) ||
      tf_config_get_double_array(cfg, "bifurcation.panels.values", NULL, 0, 0, job->panels,
                                 MAX_PANELS, &job->npanels, err))
    return -1;
  job->panel_index = tf_kernel_param_index(k, job->panel_param);
  const tf_param *p = &k->params[job->panel_index];
  if (job->panel_index == job->grid.x.index || job->panel_index == k->devs->steps ||
      job->panel_index == k->devs->transient || p->derived)
    return tf_fail_code(
        err, TF_ERR_CONFIG, "%s: key 'bifurcation.panels.param': panels cannot vary '%s'",
        tf_config_where(cfg, "bifurcation.panels.param", where, sizeof where), job->panel_param);
  for (size_t i = 0; i < job->npanels; i++)
    if (!(job->panels[i] >= p->min && job->panels[i] <= p->max))
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'bifurcation.panels.values': %g is outside [%g, %g] for '%s'",
                          tf_config_where(cfg, "bifurcation.panels.values", where, sizeof where),
                          job->panels[i], p->min, p->max, job->panel_param);
  return 0;
}

static int setup(tf_run *run, tf_error *err) {
  bifurcation_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  char where[256];
  if (tf_model_from_config(&job->model, run->cfg, run->comm, TF_KINDS_DISCRETE, "bifurcation", err))
    return -1;
  const tf_kernel *k = job->model.kernel;
  if (k->kind != TF_MODEL_DEVS)
    return tf_fail_code(
        err, TF_ERR_CONFIG, "%s: key 'model.name': job 'bifurcation' needs a DEVS model (%s)",
        tf_config_where(run->cfg, "model.name", where, sizeof where), "devs-logistic, devs-load");
  static const char *const paths[] = {"auto", "generic", NULL};
  const char *path;
  const long long d_seed = 1, d_chunk = 1;
  long long chunk;
  if (tf_param_grid_from_config(&job->grid, run->cfg, "bifurcation", &job->model, false, err) ||
      read_panels(run, job, err) || tf_devs_events_from_config(&job->events, run->cfg, k, err) ||
      tf_config_get_int(run->cfg, "devs.seed", &d_seed, 0, LLONG_MAX, &job->seed, err) ||
      tf_config_get_string(run->cfg, "devs.path", "auto", paths, &path, err) ||
      tf_config_get_int(run->cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  if (job->grid.y.index >= 0)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'bifurcation.y': use bifurcation.panels for a second parameter",
                        tf_config_where(run->cfg, "bifurcation.y", where, sizeof where));
  if (job->grid.x.index == k->devs->steps || job->grid.x.index == k->devs->transient)
    return tf_fail_code(
        err, TF_ERR_CONFIG, "%s: key 'bifurcation.x.param': the diagram cannot vary '%s'",
        tf_config_where(run->cfg, "bifurcation.x.param", where, sizeof where), job->grid.x.param);
  job->generic = strcmp(path, "generic") == 0;
  job->steps = tf_devs_param_steps(k, job->model.params);
  if (job->steps > MAX_SAMPLES)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.params.steps': a diagram records every step; at most %d",
                        tf_config_where(run->cfg, "model.params.steps", where, sizeof where),
                        MAX_SAMPLES);
  job->scratch = calloc(k->nparams, sizeof *job->scratch);
  if (!job->scratch) return tf_fail(err, "out of memory");
  job->cols[COL_GRID] = (tf_column){"grid", TF_COLUMN_F64, 2, "x value, panel value (NaN)"};
  job->cols[COL_SAMPLES] =
      (tf_column){"samples", TF_COLUMN_F64, job->steps, "X_i / N after each recorded step"};
  job->cols[COL_VALID] = (tf_column){"valid", TF_COLUMN_I64, 1, "1 if the model accepts the point"};
  job->spec.members = (uint64_t)job->grid.x.points * job->npanels;
  job->spec.chunk = (uint64_t)chunk;
  job->spec.ncols = job->events ? NCOLS : COL_EVENTS;
  job->cols[COL_EVENTS] = (tf_column){
      "events", TF_COLUMN_F64, 2 * (uint64_t)tf_devs_events_count(job->events),
      "events of poincare.event on the samples: poincare.count rows (sample index, X/N), NaN "
      "past the last"};
  job->spec.cols = job->cols;
  return 0;
}

static int run_point(void *ctx, uint64_t member, void *const *row) {
  bifurcation_job *job = ctx;
  const tf_kernel *k = job->model.kernel;
  const uint64_t nx = (uint64_t)job->grid.x.points;
  double *grid = row[COL_GRID], *samples = row[COL_SAMPLES];
  for (uint64_t i = 0; i < job->steps; i++) samples[i] = NAN;
  for (long long i = 0; i < 2 * tf_devs_events_count(job->events); i++)
    ((double *)row[COL_EVENTS])[i] = NAN;
  bool valid = tf_param_grid_point(&job->grid, member % nx, job->scratch, grid);
  grid[1] = job->panels[member / nx];
  if (job->panel_index >= 0) {
    tf_error perr;
    job->scratch[job->panel_index] = grid[1];
    valid = valid && (!k->prepare || k->prepare(job->scratch, &perr) == 0);
  }
  *(int64_t *)row[COL_VALID] = valid;
  if (!valid) return TF_MEMBER_FAILED;
  tf_error err;
  tf_devs *d =
      tf_devs_create(k, job->scratch, (uint64_t)job->seed, 0, job->generic, MPI_COMM_SELF, &err);
  if (!d) return TF_MEMBER_FAILED;
  int rc = tf_devs_advance(d, tf_devs_param_transient(k, job->scratch), NULL, &err) ||
           tf_devs_advance(d, job->steps, samples, &err);
  const double n = (double)tf_devs_size(d);
  tf_devs_destroy(d);
  if (rc) return TF_MEMBER_FAILED;
  bool finite = true;
  for (uint64_t i = 0; i < job->steps; i++)
    samples[i] /= n, finite = finite && isfinite(samples[i]);
  if (job->events)
    tf_devs_events_find(job->events, samples, job->steps, 0, job->scratch, row[COL_EVENTS]);
  return finite ? TF_MEMBER_OK : TF_MEMBER_NONFINITE;
}

static int describe(hid_t file, const bifurcation_job *job) {
  int rc = tf_h5_attr_string(file, "model", job->model.kernel->name) |
           tf_h5_attr_string(file, "x_param", job->grid.x.param) |
           tf_h5_attr_string(file, "panel_param", job->panel_index >= 0 ? job->panel_param : "");
  hid_t g = tf_h5_group(file, "bifurcation");
  if (g < 0) return -1;
  rc |= tf_h5_write_small(g, "x", H5T_NATIVE_DOUBLE, (uint64_t)job->grid.x.points,
                          job->grid.x.values, "x grid (point m has i = m % nx)") |
        tf_h5_write_small(g, "panels", H5T_NATIVE_DOUBLE, job->npanels, job->panels,
                          "panel values (point m has j = m / nx); NaN: one panel");
  H5Gclose(g);
  return rc;
}

static int execute(tf_run *run, tf_error *err) {
  bifurcation_job *job = run->job_data;
  static const char *const fingerprint_paths[] = {"job", "model", "devs", "bifurcation", NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  int rc = describe(file, job) | tf_results_write_model(file, job->model.kernel, job->model.params);
  if (rc)
    rc = tf_fail_code(err, TF_ERR_IO, "cannot describe the diagram in '%s'", run->output_path);
  job->spec.run = run_point;
  job->spec.ctx = job;
  tf_ensemble_outcome out = {0};
  if (rc == 0) rc = tf_ensemble_execute(run, &file, &job->spec, resumed, &out, err);
  tf_json_string(run->summary, "model", job->model.kernel->name);
  tf_json_integer(run->summary, "points", (long long)job->spec.members);
  tf_json_integer(run->summary, "panels", (long long)job->npanels);
  tf_json_integer(run->summary, "samples_per_point", (long long)job->steps);
  tf_json_integer(run->summary, "failed", tf_member_failures(out.status_counts));
  return tf_ensemble_finish(run, file, &out, rc, err);
}

static void destroy(tf_run *run) {
  bifurcation_job *job = run->job_data;
  if (!job) return;
  tf_param_grid_destroy(&job->grid);
  tf_model_destroy(&job->model);
  free(job->scratch);
  tf_devs_events_destroy(job->events);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_bifurcation = {
    .name = "bifurcation",
    .doc = "bifurcation diagram of a DEVS: X/N versus a parameter, optional panels",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .splittable = true,
    .kinds = TF_KIND_BIT(TF_MODEL_DEVS),
};
