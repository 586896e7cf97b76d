/* fold.c — job `fold`: the branch of stationary states through a given one, continued in a
 * parameter, with its folds located; optionally the first fold followed in a second
 * parameter to the end of the fold curve (src/geometry/fold.h).
 *
 * Config: model (its rhs is the field: a smooth flow, a Filippov model run as its own smooth
 * flow, or a two-contact body slipping at both contacts), initial.state (near a stationary state at
 * the model's value of the parameter), fold.{parameter, direction (up/down), min, max, points,
 * step, step_max, tol}, fold.track.{parameter, to, steps, end_state}.  Output: /fold/branch (points
 * x (1 + n + 1): p, x, largest real part of the eigenvalues), /fold/folds (the same rows for the
 * folds), /fold/curve (points x (2 + n): q, p, x); JSON: branch_points, folds (parameter values),
 * branch_end (range, points, or stalled where the field stops being smooth, e.g. a
 * slip velocity vanishes), fold_state, fold_curve_points, curve_end (the last q reached),
 * curve_end_bracket (the first q where the fold was not found), end_state_value (the end state
 * there) and curve_end_extrapolated (where the end state vanishes, from the last two points). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "h5io.h"
#include "job.h"
#include "model.h"
#include "results.h"
#include "routes.h"

enum { MAX_POINTS = 100000 };

/* the kinds with a smooth field: a Filippov model's only where its parameters make it its
 * own flow (checked in setup) */
enum { KINDS = TF_KINDS_CONTINUOUS & ~TF_KIND_BIT(TF_MODEL_SWITCHES) };

typedef struct fold_job {
  tf_model model;
  tf_fold_problem pb;
  tf_fold_options opt;
  double x0[TF_MAX_DIM];
  double p0;
  int dir;
  long long points;
  int iq, end_state; /* tracking: second parameter and the state that ends the curve (-1) */
  double q_to;
  long long steps;
} fold_job;

static int state_index(const tf_kernel *k, const char *name) {
  for (size_t i = 0; i < k->dim; i++)
    if (k->state_names && strcmp(k->state_names[i], name) == 0) return (int)i;
  return -1;
}

static int setup(tf_run *run, tf_error *err) {
  fold_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  job->iq = job->end_state = -1;
  if (tf_model_from_config(&job->model, run->cfg, run->comm, KINDS, "fold", err)) return -1;
  const tf_kernel *k = job->model.kernel;
  char where[256];
  /* a Filippov model has a smooth field only where its parameters make it its own flow */
  if (!tf_route_ops_for(k, job->model.params)->smooth_field)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.params': model '%s' runs as a Filippov system with these "
                        "parameters, and job fold continues a smooth field (set the parameter that "
                        "makes it its own smooth flow)",
                        tf_config_where(run->cfg, "model.params", where, sizeof where), k->name);
  const char *pname, *dir;
  static const char *const dirs[] = {"up", "down", NULL};
  tf_fold_options *o = &job->opt;
  *o = tf_fold_default_options();
  const tf_fold_options d = *o;
  const long long d_points = 2000;
  const double d_inf = INFINITY, d_minf = -INFINITY;
  size_t nx = 0;
  if (tf_config_get_string(run->cfg, "fold.parameter", NULL, NULL, &pname, err) ||
      tf_config_get_string(run->cfg, "fold.direction", "up", dirs, &dir, err) ||
      tf_config_get_double(run->cfg, "fold.min", &d_minf, -INFINITY, INFINITY, &o->p_min, err) ||
      tf_config_get_double(run->cfg, "fold.max", &d_inf, -INFINITY, INFINITY, &o->p_max, err) ||
      tf_config_get_int(run->cfg, "fold.points", &d_points, 2, MAX_POINTS, &job->points, err) ||
      tf_config_get_double(run->cfg, "fold.step", &d.step, 1e-12, 1e3, &o->step, err) ||
      tf_config_get_double(run->cfg, "fold.step_max", &d.step_max, 1e-12, 1e3, &o->step_max, err) ||
      tf_config_get_double(run->cfg, "fold.tol", &d.tol, 1e-15, 1e-3, &o->tol, err) ||
      tf_config_get_double_array(run->cfg, "initial.state", NULL, 0, k->dim, job->x0, TF_MAX_DIM,
                                 &nx, err) ||
      tf_job_output_from_config(run, NULL, NULL, err))
    return -1;
  const int ip = tf_kernel_param_index(k, pname);
  if (ip < 0)
    return tf_fail_code(
        err, TF_ERR_CONFIG, "%s: key 'fold.parameter': model '%s' has no parameter '%s'",
        tf_config_where(run->cfg, "fold.parameter", where, sizeof where), k->name, pname);
  if (tf_fold_problem_init(&job->pb, k, job->model.params, ip))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.name': model '%s' has no smooth field with at most %d "
                        "states (job fold continues F(x, p) = 0 of the kernel's rhs)",
                        tf_config_where(run->cfg, "model.name", where, sizeof where), k->name,
                        TF_MAX_DIM);
  if (!(o->p_min < o->p_max))
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: key 'fold.max': must exceed fold.min",
                        tf_config_where(run->cfg, "fold.max", where, sizeof where));
  if (o->step_max < o->step)
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: key 'fold.step_max': must be at least fold.step",
                        tf_config_where(run->cfg, "fold.step_max", where, sizeof where));
  job->p0 = job->model.params[ip];
  job->dir = strcmp(dir, "up") == 0 ? 1 : -1;
  if (!tf_config_has(run->cfg, "fold.track")) return 0;
  const char *qname, *ename;
  const long long d_steps = 100;
  if (tf_config_get_string(run->cfg, "fold.track.parameter", NULL, NULL, &qname, err) ||
      tf_config_get_double(run->cfg, "fold.track.to", NULL, -INFINITY, INFINITY, &job->q_to, err) ||
      tf_config_get_int(run->cfg, "fold.track.steps", &d_steps, 1, MAX_POINTS, &job->steps, err) ||
      tf_config_get_string(run->cfg, "fold.track.end_state", "", NULL, &ename, err))
    return -1;
  job->iq = tf_kernel_param_index(k, qname);
  if (job->iq < 0 || job->iq == ip)
    return tf_fail_code(
        err, TF_ERR_CONFIG, "%s: key 'fold.track.parameter': '%s' is not another parameter of '%s'",
        tf_config_where(run->cfg, "fold.track.parameter", where, sizeof where), qname, k->name);
  if (*ename && (job->end_state = state_index(k, ename)) < 0)
    return tf_fail_code(
        err, TF_ERR_CONFIG, "%s: key 'fold.track.end_state': model '%s' has no state '%s'",
        tf_config_where(run->cfg, "fold.track.end_state", where, sizeof where), ename, k->name);
  return 0;
}

/* One table of `width` doubles per row, written by rank 0. */
static int write_table(tf_run *run, hid_t g, const char *name, const double *rows, size_t n,
                       size_t width, const char *doc) {
  const hid_t d = tf_h5_create_table(g, name, H5T_NATIVE_DOUBLE, n, width, 0, doc);
  if (d < 0) return -1;
  uint64_t *ids = malloc((n ? n : 1) * sizeof *ids);
  if (!ids) return H5Dclose(d), -1;
  for (size_t i = 0; i < n; i++) ids[i] = i;
  const size_t mine = run->rank == 0 ? n : 0;
  const int rc = tf_h5_write_rows(d, H5T_NATIVE_DOUBLE, width, mine, ids, rows);
  free(ids);
  H5Dclose(d);
  return rc;
}

static void row(const tf_fold_point *pt, size_t n, double *out) {
  out[0] = pt->p;
  memcpy(out + 1, pt->x, n * sizeof *out);
  out[n + 1] = pt->max_real;
}

/* The fold curve: the fold followed in q from its value towards q_to; where the fold is not
 * found (or the end state changes sign) the step is halved, so the last point closes in on
 * the end of the curve. */
static size_t track(fold_job *job, const tf_fold_point *first, double *curve, double *q_end,
                    double *q_fail) {
  tf_fold_problem *pb = &job->pb;
  const size_t n = pb->n;
  const double q0 = pb->params[job->iq];
  double q = q0, dq = (job->q_to - q0) / (double)job->steps;
  tf_fold_point cur = *first, prev = *first;
  size_t count = 0;
  const double sign0 = job->end_state >= 0 ? copysign(1.0, first->x[job->end_state]) : 0;
  *q_fail = NAN;
  for (int halvings = 0; halvings < 20 && (job->q_to - q) * dq > 0;) {
    const double qn = fabs(job->q_to - q) < fabs(dq) ? job->q_to : q + dq;
    pb->params[job->iq] = qn;
    double reach = 0;
    for (size_t i = 0; i < n; i++) reach = fmax(reach, fabs(cur.x[i] - prev.x[i]));
    reach = fmax(4 * fmax(reach, fabs(cur.p - prev.p)), job->opt.step_max);
    tf_fold_point next;
    const bool ok = tf_fold_follow(pb, &cur, reach, &job->opt, &next) == 0 &&
                    (sign0 == 0 || copysign(1.0, next.x[job->end_state]) == sign0);
    if (!ok) {
      *q_fail = qn;
      dq *= 0.5, halvings++;
      continue;
    }
    prev = cur, cur = next, q = qn;
    double *r = curve + count * (n + 2);
    r[0] = q, r[1] = cur.p;
    memcpy(r + 2, cur.x, n * sizeof *r);
    if (++count >= MAX_POINTS) break;
  }
  pb->params[job->iq] = q0;
  *q_end = q;
  return count;
}

/* Where the end state would vanish: the line through the last two points of the curve (the
 * follow stops short of it, where a slip of about 1e-6 of the state's size makes the field's
 * derivatives too steep for the corrector); NaN without an end state. */
static double end_extrapolated(const fold_job *job, const double *curve, size_t nc) {
  const size_t w = job->pb.n + 2;
  if (job->end_state < 0 || nc < 2) return NAN;
  const double *b = curve + (nc - 1) * w;
  for (size_t i = nc - 1; i-- > 0;) {
    const double *a = curve + i * w;
    const double ea = a[2 + job->end_state], eb = b[2 + job->end_state];
    if (fabs(b[0] - a[0]) > 1e-3 * fabs(b[0]) * 1e-3 && ea != eb)
      return b[0] - eb * (b[0] - a[0]) / (eb - ea);
  }
  return NAN;
}

static int execute(tf_run *run, tf_error *err) {
  fold_job *job = run->job_data;
  const tf_kernel *k = job->model.kernel;
  tf_fold_problem *pb = &job->pb;
  const size_t n = k->dim;
  if (tf_fold_stationary(pb, job->p0, job->x0, &job->opt)) {
    char where[256];
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'initial.state': not near a stationary state of '%s' at %s = %.17g "
        "(Newton on F(x, p) = 0 did not converge; start from a stationary state, "
        "e.g. a scan point or a trajectory's final_state)",
        tf_config_where(run->cfg, "initial.state", where, sizeof where), k->name,
        k->params[pb->ip].name, job->p0);
  }
  tf_fold_point *branch = malloc((size_t)job->points * sizeof *branch);
  double *rows = malloc((size_t)job->points * (n + 2) * sizeof *rows);
  double *folds = malloc((size_t)job->points * (n + 2) * sizeof *folds);
  double *curve = job->iq >= 0 ? malloc((size_t)MAX_POINTS * (n + 2) * sizeof *curve) : NULL;
  if (!branch || !rows || !folds || (job->iq >= 0 && !curve)) {
    free(branch), free(rows), free(folds), free(curve);
    return tf_fail(err, "out of memory");
  }
  tf_fold_end end = TF_FOLD_END_POINTS;
  const long np = tf_fold_continue(pb, job->p0, job->x0, job->dir, &job->opt, branch,
                                   (size_t)job->points, &end);
  static const char *const end_names[] = {"range", "points", "stalled"};
  size_t nf = 0, first_fold = 0;
  for (long i = 0; i < np; i++) {
    row(&branch[i], n, rows + i * (n + 2));
    if (branch[i].fold && nf++ == 0) first_fold = (size_t)i;
    if (branch[i].fold) row(&branch[i], n, folds + (nf - 1) * (n + 2));
  }
  size_t nc = 0;
  double q_end = NAN, q_fail = NAN;
  if (job->iq >= 0 && nf > 0) nc = track(job, &branch[first_fold], curve, &q_end, &q_fail);
  tf_json *j = run->summary;
  tf_json_string(j, "model", k->name);
  tf_json_string(j, "parameter", k->params[pb->ip].name);
  tf_json_integer(j, "branch_points", np);
  tf_json_string(j, "branch_end", end_names[end]);
  double fp[64];
  const size_t nshow = nf < 64 ? nf : 64;
  for (size_t i = 0; i < nshow; i++) fp[i] = folds[i * (n + 2)];
  tf_json_numbers(j, "folds", fp, nshow);
  if (nf) tf_json_numbers(j, "fold_state", folds + 1, n);
  if (job->iq >= 0) {
    tf_json_integer(j, "fold_curve_points", (long long)nc);
    tf_json_number(j, "curve_end", nc ? q_end : NAN);
    tf_json_number(j, "curve_end_bracket", q_fail);
    if (nc && job->end_state >= 0)
      tf_json_number(j, "end_state_value", curve[(nc - 1) * (n + 2) + 2 + job->end_state]);
    tf_json_number(j, "curve_end_extrapolated", end_extrapolated(job, curve, nc));
  }
  if (run->rank == 0 && !run->quiet && !run->json) {
    printf("'%s': %ld branch points in %s (%s), %zu fold(s)", k->name, np, k->params[pb->ip].name,
           end == TF_FOLD_END_STALLED ? "stalled: the field is not smooth ahead"
           : end == TF_FOLD_END_RANGE ? "to the end of the range"
                                      : "point limit",
           nf);
    for (size_t i = 0; i < nshow; i++) printf("%s%.12g", i ? ", " : " at ", fp[i]);
    printf("\n");
    if (job->iq >= 0)
      printf("fold curve: %zu points in %s, ends near %s = %.12g\n", nc, k->params[job->iq].name,
             k->params[job->iq].name, q_end);
  }
  static const char *const fingerprint_paths[] = {"job", "model", "initial", "fold", NULL};
  bool resumed;
  run->overwrite = run->overwrite || run->resume;
  run->resume = false;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  int rc = file < 0 ? -1 : 0;
  if (file >= 0) {
    tf_results_write_model(file, k, job->model.params);
    hid_t g = tf_h5_group(file, "fold");
    rc = write_table(run, g, "branch", rows, (size_t)(np > 0 ? np : 0), n + 2,
                     "branch points: parameter, state, largest real part of the eigenvalues") |
         write_table(run, g, "folds", folds, nf, n + 2, "folds: the same columns") |
         tf_h5_attr_string(g, "parameter", k->params[pb->ip].name);
    if (job->iq >= 0)
      rc |= write_table(run, g, "curve", curve, nc, n + 2,
                        "fold curve: second parameter, parameter, state") |
            tf_h5_attr_string(g, "track_parameter", k->params[job->iq].name) |
            tf_h5_attr_double(g, "curve_end", nc ? q_end : NAN);
    H5Gclose(g);
    tf_error close_err;
    if (tf_results_close(run, file, rc == 0, &close_err))
      *err = close_err, rc = -1;
    else if (rc)
      rc = tf_fail_code(err, TF_ERR_IO, "writing /fold to '%s' failed", run->output_path);
  }
  free(branch), free(rows), free(folds), free(curve);
  return rc;
}

static void destroy(tf_run *run) {
  fold_job *job = run->job_data;
  if (!job) return;
  tf_model_destroy(&job->model);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_fold = {
    .name = "fold",
    .doc =
        "a branch of stationary states continued in a parameter, its folds located, the "
        "first followed in a second parameter",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .kinds = KINDS,
};
