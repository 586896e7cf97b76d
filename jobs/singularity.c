/* singularity.c — job `singularity`: locate a two-fold of a Filippov model and classify it.
 *
 * Config: model (a Filippov kernel), singularity.guess (default: the kernel's own guess),
 * singularity.tolerance, singularity.max_iterations, output.
 * Output: /singularity/{twofold, K, J, eigenvalues, f_plus, f_minus} with attributes class,
 * teixeira, nondeterministic; /model attributes hold every parameter, derived ones included.
 * JSON: the derived parameters by name (kappa, k2 for the wheel), <state>star for each state
 * component that is not already a parameter (vstar), K_pp, K_pm, K_mp, K_mm, J1, J2,
 * teixeira, nondeterministic, class, twofold, eigenvalues. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5io.h"
#include "job.h"
#include "model.h"
#include "results.h"
#include "singularity.h"

typedef struct singularity_job {
  tf_model model;
  double guess[TF_MAX_DIM];
  bool guess_given; /* singularity.guess is in the config; else the model's own guess */
  double tolerance;
  long long max_iterations;
} singularity_job;

static int setup(tf_run *run, tf_error *err) {
  singularity_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  if (tf_model_from_config(&job->model, run->cfg, run->comm, TF_KIND_BIT(TF_MODEL_FILIPPOV),
                           "singularity", err))
    return -1;
  const tf_kernel *k = job->model.kernel;
  double def[TF_MAX_DIM] = {0};
  if (k->filippov->twofold_guess) k->filippov->twofold_guess(job->model.params, def);
  size_t n;
  const double d_tol = 1e-12;
  const long long d_iter = 50;
  job->guess_given = tf_config_has(run->cfg, "singularity.guess"); /* before its default */
  if (tf_config_get_double_array(run->cfg, "singularity.guess", def, k->dim, k->dim, job->guess,
                                 TF_MAX_DIM, &n, err) ||
      tf_config_get_double(run->cfg, "singularity.tolerance", &d_tol, 1e-15, 1.0, &job->tolerance,
                           err) ||
      tf_config_get_int(run->cfg, "singularity.max_iterations", &d_iter, 1, 10000,
                        &job->max_iterations, err) ||
      tf_job_output_from_config(run, NULL, NULL, err))
    return -1;
  return 0;
}

static int write_file(tf_run *run, const singularity_job *job, const tf_twofold *t, tf_error *err) {
  static const char *const fingerprint_paths[] = {"job", "model", "singularity", NULL};
  bool resumed;
  run->overwrite = run->overwrite || run->resume; /* one computation: nothing to resume */
  run->resume = false;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  const tf_kernel *k = job->model.kernel;
  const size_t n = k->dim;
  tf_results_write_model(file, k, job->model.params);
  hid_t g = tf_h5_group(file, "singularity");
  const double K[4] = {t->K_pp, t->K_pm, t->K_mp, t->K_mm}, J[2] = {t->J1, t->J2};
  int rc = tf_h5_write_small(g, "twofold", H5T_NATIVE_DOUBLE, n, t->x, "location x*") |
           tf_h5_write_small(g, "K", H5T_NATIVE_DOUBLE, 4, K, "K++, K+-, K-+, K-- (eq 22)") |
           tf_h5_write_small(g, "J", H5T_NATIVE_DOUBLE, 2, J, "J1, J2 (NaN unless K++ K-- < 0)") |
           tf_h5_write_small(g, "eigenvalues", H5T_NATIVE_DOUBLE, 2, t->eigenvalues,
                             "of [[J1, 1], [1, J2]]") |
           tf_h5_write_small(g, "f_plus", H5T_NATIVE_DOUBLE, n, t->f_plus, "f(x*, +1)") |
           tf_h5_write_small(g, "f_minus", H5T_NATIVE_DOUBLE, n, t->f_minus, "f(x*, -1)") |
           tf_h5_attr_string(g, "class", tf_twofold_class_name(t->cls)) |
           tf_h5_attr_int(g, "teixeira", t->teixeira) |
           tf_h5_attr_int(g, "nondeterministic", t->nondeterministic);
  H5Gclose(g);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0, &close_err)) return *err = close_err, -1;
  if (rc)
    return tf_fail_code(err, TF_ERR_IO, "writing /singularity to '%s' failed", run->output_path);
  return 0;
}

static void report(tf_run *run, const singularity_job *job, const tf_twofold *t, int iterations) {
  const tf_kernel *k = job->model.kernel;
  tf_json *j = run->summary;
  tf_json_string(j, "model", k->name);
  for (size_t i = 0; i < k->nparams; i++)
    if (k->params[i].derived) tf_json_number(j, k->params[i].name, job->model.params[i]);
  for (size_t i = 0; i < k->dim; i++) {
    char key[64];
    snprintf(key, sizeof key, "%sstar", k->state_names[i]);
    if (tf_kernel_param_index(k, key) < 0) tf_json_number(j, key, t->x[i]);
  }
  tf_json_numbers(j, "twofold", t->x, k->dim);
  tf_json_integer(j, "newton_iterations", iterations);
  tf_json_number(j, "K_pp", t->K_pp);
  tf_json_number(j, "K_pm", t->K_pm);
  tf_json_number(j, "K_mp", t->K_mp);
  tf_json_number(j, "K_mm", t->K_mm);
  tf_json_number(j, "J1", t->J1);
  tf_json_number(j, "J2", t->J2);
  tf_json_numbers(j, "eigenvalues", t->eigenvalues, 2);
  tf_json_bool(j, "teixeira", t->teixeira);
  tf_json_bool(j, "nondeterministic", t->nondeterministic);
  tf_json_string(j, "class", tf_twofold_class_name(t->cls));
}

static int execute(tf_run *run, tf_error *err) {
  singularity_job *job = run->job_data;
  const tf_kernel *k = job->model.kernel;
  double x[TF_MAX_DIM];
  int iterations = 0;
  if (tf_twofold_locate(k, job->model.params, job->guess, job->tolerance, (int)job->max_iterations,
                        x, &iterations, err)) {
    /* the search is set by the config: say which keys to change, and exit as bad input */
    char where[256], why[sizeof err->msg];
    /* without singularity.guess the guess is the model's own for its parameters */
    const char *key = job->guess_given ? "singularity.guess" : "model.params";
    snprintf(why, sizeof why, "%s", err->msg);
    tf_fail_code(err, TF_ERR_CONFIG,
                 "%s: key '%s': %s; the search is set by singularity.guess (default: the model's "
                 "guess from model.params), singularity.tolerance and singularity.max_iterations",
                 tf_config_where(run->cfg, key, where, sizeof where), key, why);
    return -1;
  }
  tf_twofold t;
  if (tf_twofold_analyze(k, job->model.params, x, &t, err))
    return tf_config_fail_key(run->cfg, "model.params", err, "%s", err->msg); /* copies first */
  report(run, job, &t, iterations);
  if (run->rank == 0 && !run->quiet && !run->json) {
    printf("two-fold of '%s' at", k->name);
    for (size_t i = 0; i < k->dim; i++) printf(" %s = %.10g", k->state_names[i], x[i]);
    printf(
        "\n  K++ = %.6g  K+- = %.6g  K-+ = %.6g  K-- = %.6g\n  J1 = %.6g  J2 = %.6g\n"
        "  class: %s%s\n",
        t.K_pp, t.K_pm, t.K_mp, t.K_mm, t.J1, t.J2, tf_twofold_class_name(t.cls),
        t.nondeterministic ? " (nondeterministic: the sliding flow enters it)" : "");
  }
  return write_file(run, job, &t, err);
}

static void destroy(tf_run *run) {
  singularity_job *job = run->job_data;
  if (!job) return;
  tf_model_destroy(&job->model);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_singularity = {
    .name = "singularity",
    .doc = "locate a two-fold of a Filippov model; curvatures K, J1, J2 and its class",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .kinds = TF_KIND_BIT(TF_MODEL_FILIPPOV),
};
