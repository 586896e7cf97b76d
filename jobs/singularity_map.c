/* singularity_map.c — job `singularity-map`: where in a plane of two model parameters a
 * Filippov model has which kind of two-fold (Fig. 4 of Szalai & Jeffrey 2014 is this map for
 * the wheel over (rstar, omegastar)).
 *
 * A map is thousands of independent runs of the `singularity` job's computation, so every
 * grid point is one member of the ensemble scheduler: ranks balance dynamically, --resume
 * continues an interrupted map, and the file is bitwise the same on any number of ranks.
 *
 * Config: model (a Filippov kernel with a two-fold guess; its parameters are the base point),
 * map.x and map.y {param, min, max, points}, singularity.tolerance,
 * singularity.max_iterations, ensemble.chunk, output.
 * Member m is grid point (i, j) = (m % nx, m / nx), x_i = min + i (max - min) / (nx - 1).
 * Output: /members/{grid, derived, twofold, K, J, class, valid} (+ done, status); /map/x and
 * /map/y (the axes); /summary/class_counts; root attributes map_x_param, map_y_param,
 * derived_names, class_names.  Points whose kernel prepare() rejects the parameters are still
 * analysed (the conditions of Fig. 4 are drawn across the whole plane) and marked valid = 0;
 * points where Newton finds no two-fold get status failed, NaNs and class -1.  The base
 * point is checked like any model (tf_model_from_config), so it must itself be valid.
 * JSON: model, points, class_counts, failed, invalid, nondeterministic (case 1 and valid),
 * members_per_second. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble.h"
#include "h5io.h"
#include "job.h"
#include "model.h"
#include "param_grid.h"
#include "results.h"
#include "singularity.h"

/* tf_twofold_class has no count member; its last value is DEGENERATE. */
enum { CLASS_COUNT = TF_TWOFOLD_DEGENERATE + 1, CLASS_NONE = -1 };

/* Column slots of a row; `derived` is -1 for a kernel without derived parameters (a table
 * of width 0 is not worth the HDF5 corner cases). */
typedef struct column_index {
  int grid, derived, twofold, K, J, cls, valid;
} column_index;

typedef struct map_job {
  tf_model model;
  tf_param_grid grid;
  double *scratch; /* parameters of the member being computed */
  double tolerance;
  long long max_iterations;
  tf_ensemble_spec spec;
  tf_column cols[7];
  column_index col;
  char class_names[256];
} map_job;

static void define_columns(map_job *job) {
  const tf_kernel *k = job->model.kernel;
  size_t n = 0;
  tf_column *c = job->cols;
  job->col.grid = (int)n;
  c[n++] = (tf_column){"grid", TF_COLUMN_F64, 2, "values of map.x.param and map.y.param"};
  job->col.derived = -1;
  if (job->grid.nderived) {
    job->col.derived = (int)n;
    c[n++] = (tf_column){"derived", TF_COLUMN_F64, job->grid.nderived,
                         "derived parameters (root attribute derived_names); NaN if prepare() "
                         "failed before deriving one"};
  }
  job->col.twofold = (int)n;
  c[n++] = (tf_column){"twofold", TF_COLUMN_F64, k->dim, "location x* (NaN if not found)"};
  job->col.K = (int)n;
  c[n++] = (tf_column){"K", TF_COLUMN_F64, 4, "K++, K+-, K-+, K-- (eq 22)"};
  job->col.J = (int)n;
  c[n++] = (tf_column){"J", TF_COLUMN_F64, 2, "J1, J2 (NaN unless K++ K-- < 0)"};
  job->col.cls = (int)n;
  c[n++] = (tf_column){"class", TF_COLUMN_I64, 1,
                       "tf_twofold_class (root attribute class_names), -1 if not found"};
  job->col.valid = (int)n;
  c[n++] = (tf_column){"valid", TF_COLUMN_I64, 1, "1 if the model accepts the parameters"};
  job->spec.ncols = n;
  job->spec.cols = job->cols;
}

static int setup(tf_run *run, tf_error *err) {
  map_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  if (tf_model_from_config(&job->model, run->cfg, run->comm, TF_KIND_BIT(TF_MODEL_FILIPPOV),
                           "singularity-map", err))
    return -1;
  const tf_kernel *k = job->model.kernel;
  char where[256];
  if (!k->filippov->twofold_guess)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model': model '%s' has no two-fold guess, which the map needs "
                        "at every point",
                        tf_config_where(run->cfg, "model", where, sizeof where), k->name);
  if (tf_param_grid_from_config(&job->grid, run->cfg, "map", &job->model, true, err)) return -1;
  job->scratch = calloc(k->nparams, sizeof *job->scratch);
  if (!job->scratch) return tf_fail(err, "out of memory");
  if (job->grid.x.points * job->grid.y.points > 1000000000LL)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'map': a %lld x %lld map has more than 1e9 points",
                        tf_config_where(run->cfg, "map", where, sizeof where), job->grid.x.points,
                        job->grid.y.points);
  const double d_tol = 1e-12;
  const long long d_iter = 50, d_chunk = 0;
  long long chunk;
  if (tf_config_get_double(run->cfg, "singularity.tolerance", &d_tol, 1e-15, 1.0, &job->tolerance,
                           err) ||
      tf_config_get_int(run->cfg, "singularity.max_iterations", &d_iter, 1, 10000,
                        &job->max_iterations, err) ||
      tf_config_get_int(run->cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  define_columns(job);
  size_t len = 0;
  for (int c = 0; c < CLASS_COUNT; c++)
    len += (size_t)snprintf(job->class_names + len, sizeof job->class_names - len, "%s%s",
                            c ? "," : "", tf_twofold_class_name((tf_twofold_class)c));
  job->spec.members = (uint64_t)(job->grid.x.points * job->grid.y.points);
  job->spec.chunk = (uint64_t)chunk;
  return 0;
}

static void fill(double *v, size_t n, double value) {
  for (size_t i = 0; i < n; i++) v[i] = value;
}

static int run_member(void *ctx, uint64_t member, void *const *row) {
  map_job *job = ctx;
  const tf_kernel *k = job->model.kernel;
  double *p = job->scratch, *x = row[job->col.twofold], *K = row[job->col.K], *J = row[job->col.J];
  const bool valid = tf_param_grid_point(&job->grid, member, p, row[job->col.grid]);
  *(int64_t *)row[job->col.valid] = valid;
  for (size_t i = 0; job->col.derived >= 0 && i < job->grid.nderived; i++) {
    const int d = job->grid.derived[i];
    /* still 0 after a failed prepare(): it stopped before deriving this one */
    ((double *)row[job->col.derived])[i] =
        !valid && job->grid.rederive[d] && p[d] == 0.0 ? NAN : p[d];
  }
  double guess[TF_MAX_DIM];
  int iterations;
  tf_error err;
  tf_twofold t;
  /* no two-fold found, or the model refuses its field at or next to it */
  if (k->filippov->twofold_guess(p, guess) ||
      tf_twofold_locate(k, p, guess, job->tolerance, (int)job->max_iterations, x, &iterations,
                        &err) ||
      tf_twofold_analyze(k, p, x, &t, &err)) {
    fill(x, k->dim, NAN), fill(K, 4, NAN), fill(J, 2, NAN);
    *(int64_t *)row[job->col.cls] = CLASS_NONE;
    return TF_MEMBER_FAILED;
  }
  K[0] = t.K_pp, K[1] = t.K_pm, K[2] = t.K_mp, K[3] = t.K_mm;
  J[0] = t.J1, J[1] = t.J2;
  *(int64_t *)row[job->col.cls] = t.cls;
  return TF_MEMBER_OK;
}

/* Points per class (+ those without a two-fold), invalid points, and valid case-1 points,
 * read back in member order on rank 0 like every summary. */
typedef struct map_counts {
  long long cls[CLASS_COUNT + 1]; /* last: no two-fold found */
  long long invalid, nondeterministic;
} map_counts;

static int count_classes(hid_t file, const map_job *job, map_counts *mc) {
  hid_t cs = H5Dopen2(file, "members/class", H5P_DEFAULT);
  hid_t vs = H5Dopen2(file, "members/valid", H5P_DEFAULT);
  const uint64_t block = 65536, members = job->spec.members;
  int64_t *cls = malloc(block * sizeof *cls), *valid = malloc(block * sizeof *valid);
  int rc = cs < 0 || vs < 0 || !cls || !valid;
  memset(mc, 0, sizeof *mc);
  for (uint64_t start = 0; start < members && !rc; start += block) {
    const uint64_t n = members - start < block ? members - start : block;
    rc = tf_h5_read_rows(cs, H5T_NATIVE_INT64, 1, start, n, cls) ||
         tf_h5_read_rows(vs, H5T_NATIVE_INT64, 1, start, n, valid);
    for (uint64_t m = 0; m < n && !rc; m++) {
      const int64_t c = cls[m] >= 0 && cls[m] < CLASS_COUNT ? cls[m] : CLASS_COUNT;
      mc->cls[c]++;
      mc->invalid += !valid[m];
      mc->nondeterministic += valid[m] && c == TF_TWOFOLD_TEIXEIRA_CASE1;
    }
  }
  free(cls), free(valid);
  if (cs >= 0) H5Dclose(cs);
  if (vs >= 0) H5Dclose(vs);
  return rc;
}

typedef struct summary_ctx {
  const map_job *job;
  const tf_ensemble_outcome *out;
} summary_ctx;

/* A tf_results_summarize_fn: rank 0 on the closed file. */
static int write_summary(tf_run *run, hid_t file, void *ctx, tf_error *err) {
  const summary_ctx *c = ctx;
  const map_job *job = c->job;
  const tf_ensemble_outcome *out = c->out;
  map_counts mc;
  int rc = count_classes(file, job, &mc);
  if (rc)
    return tf_fail_code(err, TF_ERR_IO, "cannot read back results from '%s'", run->output_path);
  hid_t g = tf_h5_group(file, "summary");
  rc = tf_h5_write_small(g, "class_counts", H5T_NATIVE_LLONG, CLASS_COUNT + 1, mc.cls,
                         "points per class (root attribute class_names), then points without a "
                         "two-fold") |
       tf_h5_write_small(g, "status_counts", H5T_NATIVE_LLONG, (size_t)out->statuses,
                         out->status_counts, "members per status, in the order of the enum") |
       tf_h5_attr_int(g, "invalid", mc.invalid) |
       tf_h5_attr_int(g, "nondeterministic", mc.nondeterministic);
  H5Gclose(g);
  if (rc) return tf_fail_code(err, TF_ERR_IO, "cannot write /summary to '%s'", run->output_path);
  const char *names[CLASS_COUNT + 1];
  for (int c = 0; c < CLASS_COUNT; c++) names[c] = tf_twofold_class_name((tf_twofold_class)c);
  names[CLASS_COUNT] = "none";
  tf_json_counts(run->summary, "class_counts", names, mc.cls, CLASS_COUNT + 1);
  tf_json_integer(run->summary, "invalid", mc.invalid);
  tf_json_integer(run->summary, "nondeterministic", mc.nondeterministic);
  return 0;
}

/* Everything a reader needs to turn the member table back into a picture. */
static int write_map_description(hid_t file, const map_job *job) {
  const tf_axis *axes[2] = {&job->grid.x, &job->grid.y};
  const char *names[2] = {"x", "y"};
  int rc = tf_h5_attr_string(file, "model", job->model.kernel->name) |
           tf_h5_attr_string(file, "map_x_param", job->grid.x.param) |
           tf_h5_attr_string(file, "map_y_param", job->grid.y.param) |
           tf_h5_attr_names(file, "derived_names", job->grid.derived_names) |
           tf_h5_attr_names(file, "class_names", job->class_names);
  hid_t g = tf_h5_group(file, "map");
  if (g < 0) return -1;
  for (int a = 0; a < 2; a++)
    rc |= tf_h5_write_small(
              g, names[a], H5T_NATIVE_DOUBLE, (uint64_t)axes[a]->points, axes[a]->values,
              a ? "map.y grid (member m has j = m / nx)" : "map.x grid (member m has i = m % nx)") |
          tf_h5_attr_string(g, a ? "y_param" : "x_param", axes[a]->param);
  H5Gclose(g);
  return rc;
}

static int execute(tf_run *run, tf_error *err) {
  map_job *job = run->job_data;
  static const char *const fingerprint_paths[] = {"job", "model", "map", "singularity", NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  int rc = 0;
  if (write_map_description(file, job))
    rc =
        tf_fail_code(err, TF_ERR_IO, "cannot write the map's attributes to '%s'", run->output_path);
  job->spec.run = run_member;
  job->spec.ctx = job;
  tf_ensemble_outcome out = {0};
  if (rc == 0) rc = tf_ensemble_execute(run, &file, &job->spec, resumed, &out, err);
  tf_json_string(run->summary, "model", job->model.kernel->name);
  tf_json_integer(run->summary, "points", (long long)job->spec.members);
  tf_json_integer(run->summary, "failed", out.status_counts[TF_MEMBER_FAILED]);
  summary_ctx ctx = {job, &out};
  return tf_ensemble_finish_summarized(run, file, &out, rc, write_summary, &ctx, err);
}

static void destroy(tf_run *run) {
  map_job *job = run->job_data;
  if (!job) return;
  tf_model_destroy(&job->model);
  tf_param_grid_destroy(&job->grid);
  free(job->scratch);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_singularity_map = {
    .name = "singularity-map",
    .doc = "two-fold class over a grid of two model parameters (Fig. 4 of Szalai & Jeffrey 2014)",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .splittable = true,
    .kinds = TF_KIND_BIT(TF_MODEL_FILIPPOV),
};
