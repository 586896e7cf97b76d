/* codim2_point.c — job `codim2-point`: the extended Filippov analysis (Antali 2017, ch. 2)
 * at one point of the codimension-2 discontinuity of a codim-2 model.
 *
 * Config: model (a kernel with sigma2/field2), initial.state or the model's physical initial
 * conditions (the point; projected onto Sigma), analysis.time, analysis.curve_samples,
 * output.  Output: /codim2/{point, phi, R, V, limit_directions, R_limit, sliding_vector,
 * Fbar, F_A, F_B} with attributes region, decomposition, a, b, det.  JSON: point, region,
 * all_directions, limit_directions, R_limit, decomposition, a, b, Fbar, F_A, F_B,
 * sliding_vector (null where Theorem 2.17 does not give one).
 *
 * For a body with two contacts (twofold/model.h tf_two_contact_ops, e.g. the flowmeter) the point
 * is put on Sigma_RR (both contacts rolling) and the job reports Proposition 3.3's ingredients
 * there: JSON lp_sr, lm_sr (e1+ . F_SR from either side: rolling persists against SR while lp_sr <
 * 0 < lm_sr), lp_rs, lm_rs (the same for RS), R_hat_max with phi_plus, phi_minus and
 * double_directions (the limit directions of the double discontinuity, 3.42-3.43; rolling persists
 * against SS while R_hat_max < 0), F_RR and rolls (all three hold); file: /dual with the same as
 * attributes and F_RR. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codim2.h"
#include "dual_contact.h"
#include "flow.h"
#include "h5io.h"
#include "job.h"
#include "model.h"
#include "results.h"

/* the kinds with a discontinuity set of codimension 2 */
enum { KINDS = TF_KIND_BIT(TF_MODEL_CODIM2) | TF_KIND_BIT(TF_MODEL_TWO_CONTACT) };

typedef struct point_job {
  tf_model model;
  double x[TF_MAX_DIM];
  double t;
  long long curve_samples;
} point_job;

static int setup(tf_run *run, tf_error *err) {
  point_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  if (tf_model_from_config(&job->model, run->cfg, run->comm, KINDS, "codim2-point", err)) return -1;
  const tf_kernel *k = job->model.kernel;
  char where[256];
  const bool state_given = tf_config_has(run->cfg, "initial.state");
  bool physical = false;
  for (size_t i = 0; i < k->ninitial; i++) {
    char path[256];
    snprintf(path, sizeof path, "initial.%s", k->initial_params[i].name);
    physical = physical || tf_config_has(run->cfg, path);
  }
  double spread, t0;
  const double d_time = 0.0;
  const long long d_samples = 361;
  if (tf_initial_from_config(run->cfg, k, job->x, &spread, &t0, err) ||
      tf_config_get_double(run->cfg, "analysis.time", &d_time, -INFINITY, INFINITY, &job->t, err) ||
      tf_config_get_int(run->cfg, "analysis.curve_samples", &d_samples, 2, 1000000,
                        &job->curve_samples, err) ||
      tf_job_output_from_config(run, NULL, NULL, err))
    return -1;
  if (physical) {
    if (state_given)
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'initial.state': give either initial.state or the physical "
                          "initial conditions of model '%s', not both",
                          tf_config_where(run->cfg, "initial.state", where, sizeof where), k->name);
    double ip[16];
    for (size_t i = 0; i < k->ninitial && i < 16; i++) {
      const tf_param *q = &k->initial_params[i];
      char path[256];
      snprintf(path, sizeof path, "initial.%s", q->name);
      if (tf_config_get_double(run->cfg, path, &q->def, q->min, q->max, &ip[i], err)) return -1;
    }
    k->initial_state(ip, job->model.params, job->x);
  }
  if (k->kind == TF_MODEL_TWO_CONTACT) {
    for (int i = 0; i < 3; i++) job->x[k->two_contact->contact_index[i]] = 0.0; /* Sigma_RR */
    return 0;
  }
  tf_codim2_sys sys;
  tf_codim2_kernel_ctx kctx;
  tf_codim2_from_kernel(&sys, &kctx, k, job->model.params);
  tf_codim2_project(&sys, job->x);
  return 0;
}

static int execute_dual(tf_run *run, point_job *job, tf_error *err) {
  const tf_kernel *k = job->model.kernel;
  const size_t n = k->dim;
  tf_dual *d = tf_dual_create(k, job->model.params, NULL);
  if (!d) return tf_fail(err, "cannot set up the dual-contact engine for '%s'", k->name);
  tf_dc_rr_point a;
  tf_dual_rr_analysis(d, job->t, job->x, &a);
  tf_dual_destroy(d);
  const bool rolls = a.lp_sr < 0 && a.lm_sr > 0 && a.lp_rs < 0 && a.lm_rs > 0 &&
                     (a.directions == 0 || a.R_max < 0);
  tf_json *j = run->summary;
  tf_json_string(j, "model", k->name);
  tf_json_numbers(j, "point", job->x, n);
  tf_json_number(j, "lp_sr", a.lp_sr);
  tf_json_number(j, "lm_sr", a.lm_sr);
  tf_json_number(j, "lp_rs", a.lp_rs);
  tf_json_number(j, "lm_rs", a.lm_rs);
  tf_json_integer(j, "double_directions", a.directions);
  tf_json_number(j, "R_hat_max", a.R_max);
  tf_json_number(j, "phi_plus", a.directions ? a.phi_plus : NAN);
  tf_json_number(j, "phi_minus", a.directions ? a.phi_minus : NAN);
  tf_json_numbers(j, "F_RR", a.F_rr, n);
  tf_json_bool(j, "rolls", rolls);
  if (run->rank == 0 && !run->quiet && !run->json)
    printf(
        "'%s' rolling at both contacts: e1+.F_SR = %.6g / %.6g, e1-.F_RS = %.6g / %.6g, "
        "max R^ = %.6g over %d double limit directions: %s\n",
        k->name, a.lp_sr, a.lm_sr, a.lp_rs, a.lm_rs, a.R_max, a.directions,
        rolls ? "dual rolling persists" : "it starts slipping");
  static const char *const fingerprint_paths[] = {"job", "model", "initial", "analysis", NULL};
  bool resumed;
  run->overwrite = run->overwrite || run->resume;
  run->resume = false;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  tf_results_write_model(file, k, job->model.params);
  hid_t g = tf_h5_group(file, "dual");
  int rc = tf_h5_write_small(g, "point", H5T_NATIVE_DOUBLE, n, job->x, "the point (on Sigma_RR)") |
           tf_h5_write_small(g, "F_RR", H5T_NATIVE_DOUBLE, n, a.F_rr, "rolling-rolling field") |
           tf_h5_attr_double(g, "lp_sr", a.lp_sr) | tf_h5_attr_double(g, "lm_sr", a.lm_sr) |
           tf_h5_attr_double(g, "lp_rs", a.lp_rs) | tf_h5_attr_double(g, "lm_rs", a.lm_rs) |
           tf_h5_attr_double(g, "R_hat_max", a.R_max) |
           tf_h5_attr_int(g, "double_directions", a.directions) | tf_h5_attr_int(g, "rolls", rolls);
  H5Gclose(g);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0, &close_err)) return *err = close_err, -1;
  if (rc) return tf_fail_code(err, TF_ERR_IO, "writing /dual to '%s' failed", run->output_path);
  return 0;
}

static int execute(tf_run *run, tf_error *err) {
  point_job *job = run->job_data;
  if (job->model.kernel->kind == TF_MODEL_TWO_CONTACT) return execute_dual(run, job, err);
  const tf_kernel *k = job->model.kernel;
  const double *p = job->model.params;
  const size_t n = k->dim, m = (size_t)job->curve_samples;
  tf_codim2_sys sys;
  tf_codim2_kernel_ctx kctx;
  tf_codim2_from_kernel(&sys, &kctx, k, p);
  tf_codim2_point pt;
  tf_codim2_classify(&sys, job->t, job->x, &pt);
  tf_codim2_sliding s;
  const int sliding_ok = tf_codim2_sliding_vector(&sys, job->t, job->x, &s) == 0;

  tf_json *j = run->summary;
  tf_json_string(j, "model", k->name);
  tf_json_numbers(j, "point", job->x, n);
  tf_json_string(j, "region", tf_codim2_region_name(pt.region));
  tf_json_bool(j, "all_directions", pt.all_directions);
  tf_json_numbers(j, "limit_directions", pt.phi, (size_t)pt.count);
  tf_json_numbers(j, "R_limit", pt.R, (size_t)pt.count);
  tf_json_number(j, "R_max", pt.R_max);
  tf_json_number(j, "R_min", pt.R_min);
  tf_json_string(j, "decomposition", tf_codim2_decomposition_name(s.how));
  tf_json_number(j, "a", s.a);
  tf_json_number(j, "b", s.b);
  tf_json_numbers(j, "Fbar", s.Fbar, n);
  tf_json_numbers(j, "F_A", s.FA, n);
  tf_json_numbers(j, "F_B", s.FB, n);
  tf_json_numbers(j, "sliding_vector", s.Fs, n);
  if (run->rank == 0 && !run->quiet && !run->json) {
    printf("'%s' at a point of Sigma: %s region", k->name, tf_codim2_region_name(pt.region));
    if (pt.all_directions) printf(" (every direction is a limit direction)");
    printf("\n");
    for (int i = 0; i < pt.count; i++)
      printf("  limit direction phi = %.10g  R = %.10g (%s)\n", pt.phi[i], pt.R[i],
             pt.R[i] < 0   ? "attracting"
             : pt.R[i] > 0 ? "repelling"
                           : "neutral");
    if (sliding_ok) {
      printf("  sliding vector (Theorem 2.17, %s):", tf_codim2_decomposition_name(s.how));
      for (size_t i = 0; i < n; i++) printf(" %.10g", s.Fs[i]);
      printf("\n");
    } else {
      printf("  no unique sliding vector (%s)\n", tf_codim2_decomposition_name(s.how));
    }
  }

  static const char *const fingerprint_paths[] = {"job", "model", "initial", "analysis", NULL};
  bool resumed;
  run->overwrite = run->overwrite || run->resume;
  run->resume = false;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  double *phi = malloc(m * sizeof *phi), *R = malloc(m * sizeof *R), *V = malloc(m * sizeof *V);
  int rc = !phi || !R || !V;
  for (size_t i = 0; !rc && i < m; i++) {
    phi[i] = 2 * M_PI * (double)i / (double)(m - 1);
    tf_codim2_rv(&sys, job->t, job->x, phi[i], &R[i], &V[i]);
  }
  tf_results_write_model(file, k, p);
  hid_t g = tf_h5_group(file, "codim2");
  if (!rc)
    rc = tf_h5_write_small(g, "point", H5T_NATIVE_DOUBLE, n, job->x, "the point (on Sigma)") |
         tf_h5_write_small(g, "phi", H5T_NATIVE_DOUBLE, m, phi, "direction angles") |
         tf_h5_write_small(g, "R", H5T_NATIVE_DOUBLE, m, R, "R(phi) (eq 2.24)") |
         tf_h5_write_small(g, "V", H5T_NATIVE_DOUBLE, m, V, "V(phi) (eq 2.24)") |
         tf_h5_write_small(g, "sliding_vector", H5T_NATIVE_DOUBLE, n, s.Fs, "Theorem 2.17") |
         tf_h5_write_small(g, "Fbar", H5T_NATIVE_DOUBLE, n, s.Fbar, "mean of F*") |
         tf_h5_write_small(g, "F_A", H5T_NATIVE_DOUBLE, n, s.FA, "eq 2.28") |
         tf_h5_write_small(g, "F_B", H5T_NATIVE_DOUBLE, n, s.FB, "eq 2.28") |
         tf_h5_attr_string(g, "region", tf_codim2_region_name(pt.region)) |
         tf_h5_attr_string(g, "decomposition", tf_codim2_decomposition_name(s.how)) |
         tf_h5_attr_double(g, "a", s.a) | tf_h5_attr_double(g, "b", s.b) |
         tf_h5_attr_double(g, "det", s.det) |
         tf_h5_attr_int(g, "all_directions", pt.all_directions);
  if (!rc && pt.count > 0) /* HDF5 refuses empty datasets here: absent means none */
    rc = tf_h5_write_small(g, "limit_directions", H5T_NATIVE_DOUBLE, (size_t)pt.count, pt.phi,
                           "zeros of V") |
         tf_h5_write_small(g, "R_limit", H5T_NATIVE_DOUBLE, (size_t)pt.count, pt.R,
                           "R at the limit directions");
  H5Gclose(g);
  free(phi), free(R), free(V);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0, &close_err)) return *err = close_err, -1;
  if (rc) return tf_fail_code(err, TF_ERR_IO, "writing /codim2 to '%s' failed", run->output_path);
  return 0;
}

static void destroy(tf_run *run) {
  point_job *job = run->job_data;
  if (!job) return;
  tf_model_destroy(&job->model);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_codim2_point = {
    .name = "codim2-point",
    .doc =
        "limit directions, sliding/crossing and the sliding vector at a point of a codim-2 Sigma",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .kinds = KINDS,
};
