/* lyapunov.c — job `lyapunov`: the Lyapunov spectrum of a smooth flow, a map, a Filippov flow
 * or a body under 2-D (codimension-2) friction.
 *
 * Config: model (flow or map), initial.state, integrator.rtol/atol/h0/hmax/max_steps
 * (flows), lyapunov.exponents (default: all), lyapunov.transient, lyapunov.duration,
 * lyapunov.interval, lyapunov.blocks, lyapunov.jacobian (auto | finite-differences); for a
 * flow or an impact model, a poincare section whose events reset the state (poincare.h).
 * Output: /lyapunov/{spectrum, error, blocks, running} and attributes kaplan_yorke_dimension,
 * volume_rate; JSON: spectrum (descending), spectrum_error, kaplan_yorke_dimension,
 * spectrum_sum and volume_rate (time average of tr J, or of log |det J| for maps: equal to
 * the sum when all exponents are computed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "contact_run.h"
#include "devs/devs_job.h" /* DEVS models run on their own engine */
#include "flow.h"
#include "h5io.h"
#include "integrator_settings.h"
#include "job.h"
#include "lyapunov.h"
#include "model.h"
#include "physical_initial.h"
#include "poincare.h"
#include "results.h"
#include "routes.h"
#include "status.h"
#include "timeseries.h"

typedef struct lyapunov_job {
  tf_model model;
  double x0[TF_MAX_DIM];
  tf_ode_options ode;
  tf_lyapunov_options opt;
  bool filippov, saltation;
  bool contact; /* codimension-2 kernel: evolve2.c through contact_run.c */
  tf_contact_options contact_opts;
  bool smoothing_on; /* model.smoothing: the smoothed field of a Filippov kernel */
  tf_smoothing smoothing;
  tf_poincare_spec events; /* a section that resets the state (opt.events) */
  /* time-series estimators */
  int estimator; /* 0 benettin, 1 wolf, 2 rosenstein */
  int component;
  long long samples, horizon, fit_lo, fit_hi, evolve, theiler;
  double series_dt, min_scale, max_scale;
  tf_embedding embedding;
} lyapunov_job;

/* lyapunov.estimator and, for the time-series estimators, the series and embedding keys. */
static int read_estimator(tf_run *run, lyapunov_job *job, tf_error *err) {
  tf_config *cfg = run->cfg;
  const tf_kernel *k = job->model.kernel;
  static const char *const estimators[] = {"benettin", "wolf", "rosenstein", NULL};
  const char *est, *component;
  if (tf_config_get_string(cfg, "lyapunov.estimator", "benettin", estimators, &est, err)) return -1;
  job->estimator = strcmp(est, "wolf") == 0 ? 1 : strcmp(est, "rosenstein") == 0 ? 2 : 0;
  if (job->estimator == 0) return 0;
  if (tf_route_ops_for(k, NULL)->impacts)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'lyapunov.estimator': model '%s' has impacts; its exponents come "
                        "from the tangent dynamics with saltation (benettin), not from a sampled "
                        "series",
                        tf_config_where(cfg, "lyapunov.estimator", (char[256]){0}, 256), k->name);
  const char *names[TF_MAX_DIM + 1] = {0};
  for (size_t i = 0; i < k->dim; i++) names[i] = k->state_names[i];
  /* Defaults that work for the reference systems: flows sampled at dt = 0.01 (Lorenz: the
   * linear part of <ln d(k)> spans about 1 to 3 time units), maps every iteration. */
  const bool map = tf_route_ops_for(k, NULL)->iterates;
  const long long d_samples = 10000, d_dim = map ? 2 : 3, d_delay = map ? 1 : 10,
                  d_horizon = map ? 20 : 400, d_lo = map ? 1 : 100, d_hi = map ? 8 : 300,
                  d_evolve = map ? 1 : 20, d_theiler = map ? 5 : 100;
  const double d_dt = map ? 1.0 : 0.01, d_min = 0.001, d_max = 0.03;
  long long dim, delay;
  if (tf_config_get_string(cfg, "lyapunov.series.component", k->state_names[0], names, &component,
                           err) ||
      tf_config_get_int(cfg, "lyapunov.series.samples", &d_samples, 100, 10000000, &job->samples,
                        err) ||
      tf_config_get_double(cfg, "lyapunov.series.dt", &d_dt, 1e-9, INFINITY, &job->series_dt,
                           err) ||
      tf_config_get_int(cfg, "lyapunov.embedding.dimension", &d_dim, 1, 64, &dim, err) ||
      tf_config_get_int(cfg, "lyapunov.embedding.delay", &d_delay, 1, 100000, &delay, err) ||
      tf_config_get_int(cfg, "lyapunov.embedding.theiler", &d_theiler, 0, 1000000, &job->theiler,
                        err) ||
      tf_config_get_int(cfg, "lyapunov.rosenstein.horizon", &d_horizon, 2, 100000, &job->horizon,
                        err) ||
      tf_config_get_int(cfg, "lyapunov.rosenstein.fit_from", &d_lo, 0, 100000, &job->fit_lo, err) ||
      tf_config_get_int(cfg, "lyapunov.rosenstein.fit_to", &d_hi, 1, 100000, &job->fit_hi, err) ||
      tf_config_get_int(cfg, "lyapunov.wolf.evolve", &d_evolve, 1, 100000, &job->evolve, err) ||
      tf_config_get_double(cfg, "lyapunov.wolf.min_scale", &d_min, 0, 1, &job->min_scale, err) ||
      tf_config_get_double(cfg, "lyapunov.wolf.max_scale", &d_max, 1e-9, 1, &job->max_scale, err))
    return -1;
  job->component = tf_kernel_state_index(k, component);
  job->embedding = (tf_embedding){(int)dim, (int)delay, job->series_dt};
  if (map && job->series_dt != 1.0) {
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'lyapunov.series.dt': maps are sampled every iteration (1)",
                        tf_config_where(cfg, "lyapunov.series.dt", where, sizeof where));
  }
  if (job->fit_hi <= job->fit_lo || job->fit_hi >= job->horizon) {
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'lyapunov.rosenstein.fit_to': expected fit_from < fit_to < "
                        "horizon (%lld < %lld < %lld)",
                        tf_config_where(cfg, "lyapunov.rosenstein.fit_to", where, sizeof where),
                        job->fit_lo, job->fit_hi, job->horizon);
  }
  return 0;
}

/* The measured signal: one state component sampled every series_dt after the transient. */
static double *make_series(const lyapunov_job *job, tf_error *err) {
  const tf_kernel *k = job->model.kernel;
  const size_t n = (size_t)job->samples;
  double *s = malloc(n * sizeof *s), x[TF_MAX_DIM], y[TF_MAX_DIM];
  if (!s) return tf_fail(err, "out of memory"), NULL;
  memcpy(x, job->x0, k->dim * sizeof *x);
  if (tf_route_ops_for(k, NULL)->iterates) {
    tf_map_fn *map = tf_model_map(k);
    int refused = 0;
    for (long i = 0; i < (long)job->opt.transient && !refused; i++)
      refused = map(x, job->model.params, y), memcpy(x, y, sizeof x);
    for (size_t i = 0; i < n && !refused && !tf_stop_point(job->ode.stop); i++) {
      s[i] = x[job->component];
      refused = map(x, job->model.params, y);
      memcpy(x, y, sizeof x);
    }
    if (!refused) return s;
    char why[512];
    tf_kernel_failure_message(k, refused, why, sizeof why);
    free(s);
    return tf_fail(err, "model '%s' failed while the series was made: %s", k->name, why), NULL;
  }
  tf_flow flow = {.kernel = k,
                  .params = job->model.params,
                  .x0 = x,
                  .t0 = 0,
                  .t_end = job->opt.transient,
                  .method = TF_METHOD_DOPRI5,
                  .ode = job->ode,
                  .smoothing_on = job->smoothing_on,
                  .smoothing = job->smoothing};
  flow.stepper = tf_stepper_create(k->dim);
  flow.work = calloc(4 * k->dim, sizeof *flow.work);
  tf_flow_result r = tf_flow_run_member(&flow, 0, x, NULL, NULL, 0);
  /* a sample is a stop point; a run cut short inside (checkpoint.h) gives no sample */
  for (size_t i = 0; i < n && r.status == TF_MEMBER_OK && !tf_stop_requested(job->ode.stop) &&
                     !tf_stop_point(job->ode.stop);
       i++) {
    s[i] = x[job->component];
    flow.t0 = 0, flow.t_end = job->series_dt;
    memcpy(y, x, sizeof y);
    flow.x0 = y;
    r = tf_flow_run_member(&flow, 0, x, NULL, NULL, 0);
  }
  tf_stepper_destroy(flow.stepper);
  free(flow.work);
  if (r.status != TF_MEMBER_OK) return free(s), tf_fail(err, "the trajectory failed"), NULL;
  return s;
}

static int setup(tf_run *run, tf_error *err) {
  if (tf_devs_job_wanted(run)) return tf_devs_lyapunov_setup(run, err); /* DEVS: devs/devs_job.c */
  lyapunov_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  const tf_kernel *k;
  if (tf_model_kernel(run->cfg, run->comm, &k, err)) return -1;
  const bool is_map = tf_route_ops_for(k, NULL)->iterates;
  if (tf_contact_refuse_dual_lyapunov(run->cfg, k, "the lyapunov job", err)) return -1;
  if (tf_model_from_config(&job->model, run->cfg, run->comm, TF_KINDS_ALL, "lyapunov", err))
    return -1;
  k = job->model.kernel;
  double spread, t0;
  job->ode = tf_ode_default_options();
  job->ode.stop = &run->stop; /* before the contact options copy it */
  const bool state_given = tf_config_has(run->cfg, "initial.state");
  if (tf_initial_from_config(run->cfg, k, job->x0, &spread, &t0, err) ||
      tf_physical_initial_from_config(run->cfg, k, job->model.params, state_given, job->x0, err) ||
      (!is_map && tf_integrator_ode_from_config(run->cfg, t0, NULL, &job->ode, err)) ||
      tf_lyapunov_options_from_config(run->cfg, k, &job->opt, err) ||
      tf_config_get_bool(run->cfg, "lyapunov.saltation", &(const bool){true}, &job->saltation,
                         err) ||
      read_estimator(run, job, err) || tf_job_output_from_config(run, NULL, NULL, err))
    return -1;
  job->contact = tf_contact_kernel(k);
  if (job->contact) {
    if (tf_contact_options_from_config(run->cfg, &job->ode, &job->contact_opts, err)) return -1;
    if (job->estimator || tf_smoothing_requested(run->cfg)) {
      const char *key = job->estimator ? "lyapunov.estimator" : "model.smoothing";
      char where[256];
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key '%s': model '%s' (2-D slip) runs with lyapunov.estimator "
                          "benettin and no model.smoothing",
                          tf_config_where(run->cfg, key, where, sizeof where), key, k->name);
    }
  }
  job->filippov = tf_lyapunov_is_filippov(k, job->model.params);
  if (tf_smoothing_requested(run->cfg)) {
    if (tf_smoothing_from_config(run->cfg, k, &job->smoothing, err)) return -1;
    job->smoothing_on = true;
    job->filippov = false;
  }
  if (tf_poincare_reset_from_config(&job->events, run->cfg, k, &job->ode, "the lyapunov job", err))
    return -1;
  if (job->events.record) {
    if (job->estimator)
      return tf_config_fail_key(run->cfg, "lyapunov.estimator", err,
                                "a series estimator measures no reset of the state "
                                "(poincare.action: reset); write benettin");
    job->opt.events = &job->events.impact;
  }
  if (!is_map && tf_kernel_is_noisy(k, job->x0, job->model.params)) {
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.params': model '%s' has noise with these parameters; the "
                        "lyapunov job "
                        "computes spectra of deterministic flows (set its noise to 0)",
                        tf_config_where(run->cfg, "model.params", where, sizeof where), k->name);
  }
  return 0;
}

/* The job's file, opened over whatever was there (a spectrum is not resumed but computed
 * again), with the model written; -1 on failure. */
static hid_t open_output(tf_run *run, const lyapunov_job *job, tf_error *err) {
  static const char *const fingerprint_paths[] = {"job",      "model",  "initial", "integrator",
                                                  "lyapunov", "codim2", NULL};
  bool resumed;
  run->overwrite = run->overwrite || run->resume;
  run->resume = false;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file >= 0) tf_results_write_model(file, job->model.kernel, job->model.params);
  return file;
}

static int write_file(tf_run *run, const lyapunov_job *job, const tf_lyapunov_result *r,
                      tf_error *err) {
  hid_t file = open_output(run, job, err);
  if (file < 0) return -1;
  const int m = job->opt.exponents, b = job->opt.blocks;
  hid_t g = tf_h5_group(file, "lyapunov");
  int rc = tf_h5_write_small(g, "spectrum", H5T_NATIVE_DOUBLE, (uint64_t)m, r->spectrum,
                             "Lyapunov exponents, descending") |
           tf_h5_write_small(g, "error", H5T_NATIVE_DOUBLE, (uint64_t)m, r->error,
                             "standard error from the spread of the block averages") |
           tf_h5_write_small_matrix(g, "blocks", H5T_NATIVE_DOUBLE, (uint64_t)b, (uint64_t)m,
                                    r->blocks, "block averages, blocks x exponents (in QR order)") |
           tf_h5_write_small_matrix(g, "running", H5T_NATIVE_DOUBLE, (uint64_t)b, (uint64_t)m,
                                    r->running,
                                    "running averages after each block, blocks x exponents") |
           tf_h5_attr_double(g, "kaplan_yorke_dimension", r->kaplan_yorke) |
           tf_h5_attr_double(g, "volume_rate", r->volume_rate);
  H5Gclose(g);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0, &close_err)) return *err = close_err, -1;
  return rc ? tf_fail_code(err, TF_ERR_IO, "writing /lyapunov to '%s' failed", run->output_path)
            : 0;
}

/* The incomplete file of a stopped run: opened over whatever was there (the spectrum is not
 * resumed but computed again), the model written; `fill` adds what was done. */
static int write_stopped(tf_run *run, const lyapunov_job *job,
                         int (*fill)(hid_t g, const lyapunov_job *job, const void *arg),
                         const void *arg, tf_error *err) {
  hid_t file = open_output(run, job, err);
  if (file < 0) return -1;
  hid_t g = tf_h5_group(file, "lyapunov");
  const int rc = fill(g, job, arg);
  H5Gclose(g);
  tf_error close_err;
  if (tf_results_close(run, file, false, &close_err)) return *err = close_err, -1;
  if (rc) return tf_fail_code(err, TF_ERR_IO, "writing /lyapunov to '%s' failed", run->output_path);
  tf_json_string(run->summary, "model", job->model.kernel->name);
  run->outcome = TF_RUN_INTERRUPTED;
  run->restarts = true;
  return 0;
}

static int fill_blocks(hid_t g, const lyapunov_job *job, const void *arg) {
  const tf_lyapunov_result *r = arg;
  const int m = job->opt.exponents, b = r->blocks_done;
  int rc = tf_h5_attr_int(g, "blocks_done", b);
  if (b > 0) /* stopped inside the first block (or the transient): no block to keep */
    rc |= tf_h5_write_small_matrix(g, "blocks", H5T_NATIVE_DOUBLE, (uint64_t)b, (uint64_t)m,
                                   r->blocks,
                                   "block averages of the blocks done, blocks_done x exponents") |
          tf_h5_write_small_matrix(g, "running", H5T_NATIVE_DOUBLE, (uint64_t)b, (uint64_t)m,
                                   r->running, "running averages after each block done");
  return rc;
}

/* Stopped between blocks (signal, --time-limit, --stop-after counting blocks): the blocks
 * done so far are written with complete = 0; there is no spectrum.  Nothing of the tangent
 * state is kept, so --resume computes the spectrum again from the start. */
static int write_partial(tf_run *run, const lyapunov_job *job, const tf_lyapunov_result *r,
                         tf_error *err) {
  if (write_stopped(run, job, fill_blocks, r, err)) return -1;
  tf_json_integer(run->summary, "blocks_done", r->blocks_done);
  return 0;
}

/* The one trajectory of the spectrum failed: its course is fixed by the config, so the
 * message names the keys to change and the exit status is that of bad input. */
static int failed_run(tf_run *run, int status, const char *why, tf_error *err) {
  char where[256];
  if (why[0]) { /* a limit of the method at these parameters */
    tf_fail_code(err, TF_ERR_CONFIG, "%s: key 'model.params': %s",
                 tf_config_where(run->cfg, "model.params", where, sizeof where), why);
    return -1;
  }
  const char *key = status == TF_MEMBER_MAX_STEPS        ? "integrator.max_steps"
                    : status == TF_MEMBER_STEP_UNDERFLOW ? "integrator.atol"
                    : status == TF_MEMBER_NONFINITE      ? "model.params"
                                                         : "lyapunov.duration";
  const char *advice =
      status == TF_MEMBER_MAX_STEPS ? "raise it, or shorten lyapunov.transient and duration"
      : status == TF_MEMBER_STEP_UNDERFLOW
          ? "integrator.rtol and atol ask for more than double precision gives"
          : "the state left the region where the model is defined, or the step control "
            "failed (model.params, initial.state, integrator.rtol and atol)";
  tf_fail_code(err, TF_ERR_CONFIG,
               "%s: key '%s': the trajectory of the spectrum ended with status %s before the "
               "spectrum converged; %s",
               tf_config_where(run->cfg, key, where, sizeof where), key,
               tf_member_status_name(status), advice);
  return -1;
}

static int fill_estimator(hid_t g, const lyapunov_job *job, const void *arg) {
  (void)arg;
  return tf_h5_attr_string(g, "estimator", job->estimator == 1 ? "wolf" : "rosenstein");
}

/* Stopped while the series was measured (a sample is the unit of --stop-after): an
 * incomplete file that says so; --resume measures the series again. */
static int write_partial_series(tf_run *run, const lyapunov_job *job, tf_error *err) {
  return write_stopped(run, job, fill_estimator, NULL, err);
}

static int execute_series(tf_run *run, lyapunov_job *job, tf_error *err) {
  double lambda = NAN, curve_buf[1];
  tf_series_check check = {NAN, NAN, false};
  int rc = 0;
  double *curve = job->estimator == 2 ? calloc((size_t)job->horizon, sizeof *curve) : curve_buf;
  int stopped = 0;
  if (run->rank == 0) {
    tf_stop_arm(&run->stop, run->start_time, run->time_limit, run->stop_after, run->pause_after);
    double *s = make_series(job, err);
    stopped = tf_stop_requested(&run->stop);
    tf_stop_disarm(&run->stop);
    rc = s == NULL;
    if (!rc && !stopped)
      lambda = tf_series_exponent(s, (size_t)job->samples, job->embedding, (int)job->theiler,
                                  job->estimator == 1 ? 0 : 1, (int)job->evolve, job->min_scale,
                                  job->max_scale, (int)job->horizon, (int)job->fit_lo,
                                  (int)job->fit_hi, job->estimator == 2 ? curve : NULL, &check);
    free(s);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
  MPI_Bcast(&stopped, 1, MPI_INT, 0, run->comm);
  MPI_Bcast(&lambda, 1, MPI_DOUBLE, 0, run->comm);
  MPI_Bcast(&check, sizeof check, MPI_BYTE, 0, run->comm);
  if (rc) return run->rank == 0 ? -1 : tf_fail(err, "see rank 0");
  if (stopped) { /* the series is not kept: the estimate needs all of it */
    if (job->estimator == 2) free(curve);
    return write_partial_series(run, job, err);
  }
  if (job->estimator == 2) MPI_Bcast(curve, (int)job->horizon, MPI_DOUBLE, 0, run->comm);
  const char *name = job->estimator == 1 ? "wolf" : "rosenstein";
  tf_json_string(run->summary, "model", job->model.kernel->name);
  tf_json_string(run->summary, "method", name);
  tf_json_number(run->summary, "lambda1", lambda);
  tf_json_bool(run->summary, "series_meaningful", check.meaningful);
  tf_json_number(run->summary, "series_stretch", check.stretch);
  hid_t file = open_output(run, job, err);
  if (file < 0) return job->estimator == 2 ? (free(curve), -1) : -1;
  hid_t g = tf_h5_group(file, "lyapunov");
  rc = tf_h5_attr_double(g, "lambda1", lambda) | tf_h5_attr_string(g, "estimator", name);
  if (job->estimator == 2)
    rc |= tf_h5_write_small(g, "divergence", H5T_NATIVE_DOUBLE, (uint64_t)job->horizon, curve,
                            "<ln d(k)> over k samples (Rosenstein)");
  H5Gclose(g);
  if (job->estimator == 2) free(curve);
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0, &close_err)) return *err = close_err, -1;
  if (run->rank == 0 && !run->json && !run->quiet)
    printf("lambda_1 of '%s' from a time series (%s): %.6f\n", job->model.kernel->name, name,
           lambda);
  return rc ? tf_fail_code(err, TF_ERR_IO, "writing /lyapunov failed") : 0;
}

/* The method as the JSON summary names it: the route's, unless the job changed it. */
static const char *method_name(const lyapunov_job *job, const tf_route_ops *route) {
  if (job->smoothing_on) return "smoothed-variational";
  if (job->filippov && !job->saltation) return "events-no-saltation";
  return route->lyapunov_method;
}

static int execute(tf_run *run, tf_error *err) {
  if (tf_devs_job_wanted(run)) return tf_devs_lyapunov_execute(run, err);
  lyapunov_job *job = run->job_data;
  const tf_kernel *k = job->model.kernel;
  if (job->estimator) return execute_series(run, job, err);
  tf_lyapunov_result r;
  /* One computation: rank 0 does it (a scan distributes many of them over ranks). */
  int rc = 0;
  const double begin = MPI_Wtime();
  if (run->rank == 0 && run->resume && !run->quiet)
    fprintf(stderr,
            "twofold: the lyapunov job is one computation: --resume starts it again from "
            "the beginning\n");
  tf_stop_arm(&run->stop, run->start_time, run->time_limit, run->stop_after, run->pause_after);
  job->opt.stop = &run->stop;
  if (run->rank == 0)
    rc = job->contact ? tf_lyapunov_contact(k, job->model.params, job->x0, &job->contact_opts,
                                            &job->opt, &r, err)
         : job->smoothing_on ? tf_lyapunov_smoothed(k, job->model.params, &job->smoothing, job->x0,
                                                    &job->ode, &job->opt, &r, err)
                             : tf_lyapunov_any(k, job->model.params, job->x0, &job->ode, &job->opt,
                                               job->saltation, &r, err);
  tf_stop_disarm(&run->stop);
  const double compute_seconds = MPI_Wtime() - begin;
  MPI_Bcast(&rc, 1, MPI_INT, 0, run->comm);
  if (rc) return run->rank == 0 ? -1 : tf_fail(err, "see rank 0");
  const size_t nb = (size_t)job->opt.blocks * (size_t)job->opt.exponents;
  if (run->rank != 0) {
    memset(&r, 0, sizeof r);
    r.blocks = calloc(nb, sizeof *r.blocks);
    r.running = calloc(nb, sizeof *r.running);
  }
  double *blocks = r.blocks, *running = r.running;
  MPI_Bcast(&r, sizeof r, MPI_BYTE, 0, run->comm);
  r.blocks = blocks, r.running = running;
  MPI_Bcast(r.blocks, (int)nb, MPI_DOUBLE, 0, run->comm);
  MPI_Bcast(r.running, (int)nb, MPI_DOUBLE, 0, run->comm);
  if (r.interrupted) {
    rc = write_partial(run, job, &r, err);
    free(r.blocks), free(r.running);
    return rc;
  }
  const int m = job->opt.exponents;
  double sum = 0;
  for (int i = 0; i < m; i++) sum += r.spectrum[i];
  tf_json_string(run->summary, "model", k->name);
  tf_json_string(run->summary, "member_status", r.status == 1 ? "ok" : "failed");
  tf_json_numbers(run->summary, "spectrum", r.spectrum, (size_t)m);
  tf_json_numbers(run->summary, "spectrum_error", r.error, (size_t)m);
  tf_json_number(run->summary, "kaplan_yorke_dimension", r.kaplan_yorke);
  tf_json_number(run->summary, "spectrum_sum", sum);
  tf_json_number(run->summary, "volume_rate", r.volume_rate);
  /* the computation alone (no config, file or MPI start-up): what benchmarks compare */
  tf_json_number(run->summary, "compute_seconds", compute_seconds);
  tf_json_integer(run->summary, "steps", r.steps);
  const tf_route_ops *route = tf_route_ops_for(k, job->model.params);
  tf_json_string(run->summary, "method", method_name(job, route));
  if (job->filippov) tf_json_integer(run->summary, "segments", r.segments);
  /* JSON has no -inf (the spectrum shows null there): say how many and why */
  const char *why = route->collapse_why ? route->collapse_why
                    : r.collapsed == 1 ? "arrivals in sliding map every tangent vector into T Sigma"
                                       : "arrivals in sliding on several switching surfaces at "
                                         "once map every tangent vector into the tangent space "
                                         "of their intersection";
  if (r.collapsed) {
    tf_json_integer(run->summary, "collapsed_directions", r.collapsed);
    char text[320];
    snprintf(text, sizeof text, "%s: the smallest %s -inf", why,
             r.collapsed == 1 ? "exponent is" : "exponents are");
    tf_json_string(run->summary, "collapsed_why", text);
  }
  if (r.status != TF_MEMBER_OK) {
    free(r.blocks), free(r.running);
    return failed_run(run, r.status, r.why, err);
  }
  if (run->rank == 0 && !run->json && !run->quiet) {
    printf("Lyapunov spectrum of '%s':", k->name);
    for (int i = 0; i < m; i++) printf(" %.6f ± %.1e", r.spectrum[i], r.error[i]);
    printf("\nKaplan-Yorke dimension %.4f; sum %.6f, volume rate %.6f\n", r.kaplan_yorke, sum,
           r.volume_rate);
    if (r.collapsed)
      printf("the smallest %s -inf: %s (the flow collapses %d direction%s)\n",
             r.collapsed == 1 ? "exponent is" : "exponents are", why, r.collapsed,
             r.collapsed == 1 ? "" : "s");
  }
  rc = write_file(run, job, &r, err);
  free(r.blocks), free(r.running);
  return rc;
}

static void destroy(tf_run *run) {
  if (tf_devs_job_wanted(run)) return tf_devs_job_destroy(run);
  lyapunov_job *job = run->job_data;
  if (!job) return;
  tf_model_destroy(&job->model);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_lyapunov = {
    .name = "lyapunov",
    .doc =
        "Lyapunov spectrum of a flow, a map, a Filippov or codim-2 flow (saltation) or a DEVS "
        "(Benettin + QR)",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .kinds = TF_KINDS_ALL & ~TF_KIND_BIT(TF_MODEL_TWO_CONTACT),
};
