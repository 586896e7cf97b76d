/* slip_onset.c — job `slip-onset`: a body with two contacts (twofold/model.h tf_two_contact_ops,
 * e.g. the wheelset) started rolling at both contacts: does it start to slip before
 * integrator.t_end, when, and at which contact (Antali 2017, Proposition 3.3; §5.4 for the
 * wheelset).  With a `threshold` section: the largest value of one of the model's physical
 * initial conditions (threshold.initial, e.g. the wheelset's amplitude) for which it keeps
 * rolling up to t_end, by bisection on simulations (src/engine/slip_onset.h); with a `scan` axis
 * (scan.x.{param,min,max,points}) that threshold at every value of a model parameter, the
 * points shared out over the ranks.
 *
 * Keys: model, initial (initial.state or the model's physical initial conditions; the
 * slips must be 0), integrator (t_end the horizon, rtol, atol, hmax, ...),
 * codim2.{sigma_tol, slave_radius, event_tol, max_event_rate}, threshold.{initial, low,
 * high, rel_tol, abs_tol, probe}, scan.x.*, output.
 * JSON without threshold: slipped, slip_onset_time, slip_case (SS both contacts, SR only P+,
 * RS only P-), slipping_contacts, slip_state, departure_phi_plus/minus (the most repelling
 * double limit direction there, case SS), onset_<output> (the model's named outputs at the
 * departure, or at t_end if it kept rolling).  With threshold: threshold, threshold_low,
 * threshold_high, runs, and the onset of the run at threshold_high (1 + threshold.probe)
 * (just above the threshold the exit is tangent, where the conditions of Fig. 5.4 meet, so
 * the departure is characterised a little further out); with scan: scan_param,
 * scan_values, thresholds, onset_times, slip_cases (0 SS, 1 SR, 2 RS, -1 none), failed.
 * File: /slip_onset (attributes) or /threshold/{values, threshold, low, high, onset_time,
 * case, onset_state, failed}. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "contact_run.h"
#include "flow.h"
#include "h5io.h"
#include "job.h"
#include "model.h"
#include "param_grid.h"
#include "progress.h"
#include "results.h"
#include "slip_onset.h"
#include "status.h"

enum { MAX_INITIAL = 16 };

typedef struct slip_job {
  tf_flow flow;
  tf_model model; /* a view of flow's kernel and params for the scan axis */
  tf_evolve2_options opts;
  double x0[TF_MAX_DIM];
  double ip[MAX_INITIAL]; /* physical initial conditions, if the model has them */
  bool physical, threshold, scan;
  int varied; /* index of threshold.initial among the physical initial conditions */
  double low, high, rel_tol, abs_tol, probe;
  tf_param_grid grid;
  int compression;
} slip_job;

static int read_physical(tf_run *run, slip_job *job, bool state_given, tf_error *err) {
  const tf_kernel *k = job->flow.kernel;
  char path[256], where[256];
  bool any = false;
  for (size_t i = 0; i < k->ninitial; i++) {
    snprintf(path, sizeof path, "initial.%s", k->initial_params[i].name);
    any = any || tf_config_has(run->cfg, path);
  }
  job->physical = any || tf_config_has(run->cfg, "threshold");
  if (!job->physical) return 0;
  if (k->ninitial == 0 || k->ninitial > MAX_INITIAL)
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'threshold': model '%s' has no physical initial conditions to vary",
        tf_config_where(run->cfg, "threshold", where, sizeof where), k->name);
  if (state_given)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.state': give either initial.state or the physical "
                        "initial conditions of model '%s', not both",
                        tf_config_where(run->cfg, "initial.state", where, sizeof where), k->name);
  for (size_t i = 0; i < k->ninitial; i++) {
    const tf_param *q = &k->initial_params[i];
    snprintf(path, sizeof path, "initial.%s", q->name);
    if (tf_config_get_double(run->cfg, path, &q->def, q->min, q->max, &job->ip[i], err)) return -1;
  }
  return 0;
}

static int read_engine_options(tf_run *run, slip_job *job, tf_error *err) {
  tf_evolve2_options *o = &job->opts;
  *o = tf_evolve2_default_options();
  o->ode = job->flow.ode;
  const double d_sigma = o->sigma_tol, d_event = o->event_tol, d_rate = o->max_event_rate,
               d_slave = o->slave_radius;
  char where[256];
  if (tf_config_get_double(run->cfg, "codim2.sigma_tol", &d_sigma, 1e-15, 1e-2, &o->sigma_tol,
                           err) ||
      tf_config_get_double(run->cfg, "codim2.slave_radius", &d_slave, 0.0, 1.0, &o->slave_radius,
                           err) ||
      tf_config_get_double(run->cfg, "codim2.event_tol", &d_event, 1e-16, 1e-3, &o->event_tol,
                           err) ||
      tf_config_get_double(run->cfg, "codim2.max_event_rate", &d_rate, 1.0, INFINITY,
                           &o->max_event_rate, err) ||
      tf_contact_pair_check(run->cfg, &job->flow.ode, err))
    return -1;
  if (job->flow.method != TF_METHOD_DOPRI5)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'integrator.method': model '%s' runs on the event-driven "
                        "dual-contact engine (dopri5)",
                        tf_config_where(run->cfg, "integrator.method", where, sizeof where),
                        job->flow.kernel->name);
  return 0;
}

static int read_threshold(tf_run *run, slip_job *job, tf_error *err) {
  const tf_kernel *k = job->flow.kernel;
  char where[256];
  job->threshold = tf_config_has(run->cfg, "threshold");
  job->scan = tf_config_has(run->cfg, "scan");
  if (job->scan && !job->threshold)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'scan': a scan needs a threshold section (what to bisect)",
                        tf_config_where(run->cfg, "scan", where, sizeof where));
  if (!job->threshold) return 0;
  const char *names[MAX_INITIAL + 1] = {0};
  for (size_t i = 0; i < k->ninitial; i++) names[i] = k->initial_params[i].name;
  const char *which;
  const double d_low = 0.0, d_rel = 1e-6, d_abs = 0.0, d_probe = 0.01;
  if (tf_config_get_string(run->cfg, "threshold.initial", names[0], names, &which, err)) return -1;
  for (size_t i = 0; i < k->ninitial; i++)
    if (!strcmp(which, names[i])) job->varied = (int)i;
  const tf_param *q = &k->initial_params[job->varied];
  if (tf_config_get_double(run->cfg, "threshold.low", &d_low, q->min, q->max, &job->low, err) ||
      tf_config_get_double(run->cfg, "threshold.high", NULL, q->min, q->max, &job->high, err) ||
      tf_config_get_double(run->cfg, "threshold.rel_tol", &d_rel, 1e-15, 0.5, &job->rel_tol, err) ||
      tf_config_get_double(run->cfg, "threshold.abs_tol", &d_abs, 0.0, INFINITY, &job->abs_tol,
                           err) ||
      tf_config_get_double(run->cfg, "threshold.probe", &d_probe, 0.0, 1.0, &job->probe, err))
    return -1;
  if (!(job->high > job->low))
    return tf_fail_code(
        err, TF_ERR_CONFIG, "%s: key 'threshold.high': must exceed threshold.low = %g, got %g",
        tf_config_where(run->cfg, "threshold.high", where, sizeof where), job->low, job->high);
  if (job->scan) {
    job->model.kernel = k, job->model.params = job->flow.params;
    if (tf_param_grid_from_config(&job->grid, run->cfg, "scan", &job->model, false, err)) return -1;
  }
  return 0;
}

static int setup(tf_run *run, tf_error *err) {
  slip_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  char where[256];
  const bool state_given = tf_config_has(run->cfg, "initial.state"); /* before the defaults */
  /* a trajectory config run as slip-onset (--set job=slip-onset) keeps its sampling keys */
  tf_config_mark_used(run->cfg, "ensemble");
  tf_config_mark_used(run->cfg, "output.samples");
  tf_config_mark_used(run->cfg, "output.event_log");
  if (tf_job_output_from_config(run, &job->compression, NULL, err) ||
      tf_flow_from_config(&job->flow, run->cfg, run->comm, &run->stop, err))
    return -1;
  const tf_kernel *k = job->flow.kernel;
  if (k->kind != TF_MODEL_TWO_CONTACT)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.name': model '%s' is not a body with two contacts (job "
                        "slip-onset needs TF_MODEL_TWO_CONTACT, e.g. wheelset or flowmeter)",
                        tf_config_where(run->cfg, "model.name", where, sizeof where), k->name);
  if (read_physical(run, job, state_given, err) || read_engine_options(run, job, err) ||
      read_threshold(run, job, err))
    return -1;
  if (job->physical)
    k->initial_state(job->ip, job->flow.params, job->x0);
  else
    memcpy(job->x0, job->flow.x0, k->dim * sizeof *job->x0);
  for (int i = 0; i < 3 && !job->threshold; i++)
    if (!(fabs(job->x0[k->two_contact->contact_index[i]]) <= job->opts.sigma_tol))
      return tf_fail_code(
          err, TF_ERR_CONFIG,
          "%s: key 'initial.state': the start must roll at both contacts (state '%s' "
          "is %g, not 0)",
          tf_config_where(run->cfg, "initial.state", where, sizeof where),
          k->state_names[k->two_contact->contact_index[i]],
          job->x0[k->two_contact->contact_index[i]]);
  return 0;
}

/* The start for a value of the bisected initial condition under given parameters. */
typedef struct start_ctx {
  const slip_job *job;
  const double *params;
} start_ctx;

static void start_at(void *ctx, double s, double *x) {
  const start_ctx *c = ctx;
  double ip[MAX_INITIAL];
  memcpy(ip, c->job->ip, sizeof ip);
  ip[c->job->varied] = s;
  c->job->flow.kernel->initial_state(ip, c->params, x);
}

static const char *contacts_name(const tf_slip_onset *o) {
  if (!o->slipped) return "none";
  return o->to == TF_DC_SS ? "both" : o->to == TF_DC_SR ? "P+" : "P-";
}

static void report_onset(tf_run *run, const slip_job *job, const double *params,
                         const tf_slip_onset *o) {
  const tf_kernel *k = job->flow.kernel;
  tf_json *j = run->summary;
  tf_json_bool(j, "slipped", o->slipped);
  tf_json_number(j, "slip_onset_time", o->t);
  if (o->slipped)
    tf_json_string(j, "slip_case", tf_dc_case_name(o->to));
  else
    tf_json_number(j, "slip_case", NAN);
  tf_json_string(j, "slipping_contacts", contacts_name(o));
  tf_json_numbers(j, "slip_state", o->x, k->dim);
  double pp = NAN, pm = NAN;
  if (o->slipped && o->to == TF_DC_SS) {
    tf_dual *d = tf_dual_create(k, params, &job->opts);
    if (d) {
      tf_dc_rr_point a;
      double x[TF_MAX_DIM];
      memcpy(x, o->x, k->dim * sizeof *x);
      tf_dual_rr_analysis(d, o->t, x, &a);
      if (a.directions) pp = a.phi_plus, pm = a.phi_minus;
      tf_dual_destroy(d);
    }
  }
  tf_json_number(j, "departure_phi_plus", pp);
  tf_json_number(j, "departure_phi_minus", pm);
  double out[16];
  if (k->outputs && k->noutputs <= 16) {
    k->outputs(o->x, params, out);
    for (size_t i = 0; i < k->noutputs; i++) {
      char key[128];
      snprintf(key, sizeof key, "onset_%s", k->output_names[i]);
      tf_json_number(j, key, out[i]);
    }
  }
  tf_json_integer(j, "steps", o->steps);
  tf_json_string(j, "member_status", tf_member_status_name(o->status));
  if (o->failure) tf_json_string(j, "failure", o->failure);
}

static hid_t open_results(tf_run *run, slip_job *job, tf_error *err) {
  static const char *const fingerprint_paths[] = {"job",    "model",     "initial", "integrator",
                                                  "codim2", "threshold", "scan",    NULL};
  bool resumed;
  run->overwrite = run->overwrite || run->resume; /* one piece of work: redo it */
  run->resume = false;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file >= 0) tf_results_write_model(file, job->flow.kernel, job->flow.params);
  return file;
}

static int close_results(tf_run *run, hid_t file, int rc, tf_error *err) {
  tf_error close_err;
  if (tf_results_close(run, file, rc == 0, &close_err)) return *err = close_err, -1;
  if (rc)
    return tf_fail_code(err, TF_ERR_IO, "writing the results to '%s' failed", run->output_path);
  return 0;
}

static int execute_onset(tf_run *run, slip_job *job, tf_error *err) {
  const tf_kernel *k = job->flow.kernel;
  tf_slip_onset o;
  /* one run: a signal or the time limit ends it between two steps (the run's stop token) */
  tf_stop_arm(&run->stop, run->start_time, run->time_limit, 0, 0);
  const int failed = tf_slip_onset_run(k, job->flow.params, &job->opts, job->flow.t0, job->x0,
                                       job->flow.t_end, &o);
  int stopped = tf_stop_requested(&run->stop);
  tf_stop_disarm(&run->stop);
  MPI_Allreduce(MPI_IN_PLACE, &stopped, 1, MPI_INT, MPI_MAX, run->comm);
  if (stopped) {
    hid_t file = open_results(run, job, err);
    if (file < 0) return -1;
    tf_error close_err;
    if (tf_results_close(run, file, false, &close_err)) return *err = close_err, -1;
    run->outcome = TF_RUN_INTERRUPTED;
    run->restarts = true;
    return 0;
  }
  if (failed) return tf_fail(err, "model '%s': %s", k->name, o.failure);
  report_onset(run, job, job->flow.params, &o);
  if (run->rank == 0 && !run->quiet && !run->json) {
    if (o.slipped)
      printf("'%s' starts slipping at t = %.10g (case %s: %s contact%s)\n", k->name, o.t,
             tf_dc_case_name(o.to), contacts_name(&o), o.to == TF_DC_SS ? "s" : "");
    else
      printf("'%s' keeps rolling at both contacts up to t = %g\n", k->name, job->flow.t_end);
  }
  hid_t file = open_results(run, job, err);
  if (file < 0) return -1;
  hid_t g = tf_h5_group(file, "slip_onset");
  int rc = tf_h5_write_small(g, "start", H5T_NATIVE_DOUBLE, k->dim, job->x0, "initial state") |
           tf_h5_write_small(g, "slip_state", H5T_NATIVE_DOUBLE, k->dim, o.x,
                             "state at the departure from dual rolling (at t_end if none)") |
           tf_h5_attr_int(g, "slipped", o.slipped) | tf_h5_attr_double(g, "slip_onset_time", o.t) |
           tf_h5_attr_string(g, "slip_case", o.slipped ? tf_dc_case_name(o.to) : "none") |
           tf_h5_attr_string(g, "status", tf_member_status_name(o.status));
  H5Gclose(g);
  return close_results(run, file, rc, err);
}

typedef struct point_result {
  double threshold, low, high, onset_time, slip_case, failed, done;
} point_result;
enum { POINT_WIDTH = sizeof(point_result) / sizeof(double) };

static int execute_threshold(tf_run *run, slip_job *job, tf_error *err) {
  const tf_kernel *k = job->flow.kernel;
  const size_t dim = k->dim, np = job->scan ? (size_t)tf_param_grid_points(&job->grid) : 1;
  double *res = calloc(np * POINT_WIDTH, sizeof *res), *states = calloc(np * dim, sizeof *states);
  double *values = calloc(np, sizeof *values), *p = calloc(k->nparams, sizeof *p);
  if (!res || !states || !values || !p) {
    free(res), free(states), free(values), free(p);
    return tf_fail(err, "out of memory");
  }
  tf_slip_threshold single = {0};
  if (run->rank == 0 && run->resume && !run->quiet)
    fprintf(stderr,
            "twofold: the slip-onset job is one computation: --resume starts it again "
            "from the beginning\n");
  /* stoppable between bisection runs: points done so far are written (see `done`) */
  tf_stop_arm(&run->stop, run->start_time, run->time_limit, run->stop_after, run->pause_after);
  tf_progress progress;
  tf_progress_start(&progress, "slip-onset", np, 0, run->quiet || run->rank != 0,
                    run->progress_mode);
  for (size_t m = (size_t)run->rank; m < np; m += (size_t)run->size) {
    double xy[2] = {NAN, NAN};
    point_result *r = (point_result *)(res + m * POINT_WIDTH);
    bool valid = true;
    if (job->scan)
      valid = tf_param_grid_point(&job->grid, m, p, xy);
    else
      memcpy(p, job->flow.params, k->nparams * sizeof *p);
    values[m] = xy[0];
    tf_slip_threshold th = {0};
    const start_ctx ctx = {job, p};
    const int rc = valid ? tf_slip_threshold_find(k, p, &job->opts, job->flow.t0, job->flow.t_end,
                                                  start_at, (void *)&ctx, job->low, job->high,
                                                  job->rel_tol, job->abs_tol, &th)
                         : -1;
    if (!valid) th.failure = "the kernel rejects these parameters", th.threshold = NAN;
    /* Just above the threshold the exit from the rolling set is nearly tangent, where the
     * conditions for SR, RS and SS meet (Fig. 5.4): the departure is characterised by a run
     * a little further out, threshold.probe above the bracket. */
    if (rc == 0) {
      double x[TF_MAX_DIM];
      start_at((void *)&ctx, th.high * (1.0 + job->probe), x);
      if (tf_slip_onset_run(k, p, &job->opts, job->flow.t0, x, job->flow.t_end, &th.above) == 0)
        th.runs++;
    }
    r->threshold = rc ? NAN : th.threshold;
    r->low = th.low, r->high = th.high;
    r->onset_time = rc ? NAN : th.above.t;
    r->slip_case = rc || !th.above.slipped ? -1.0 : (double)th.above.to;
    if (th.interrupted) break;
    r->failed = rc != 0;
    r->done = 1;
    memcpy(states + m * dim, th.above.x, dim * sizeof *states);
    if (!job->scan) single = th;
    tf_progress_update(&progress, m + 1, false);
  }
  tf_progress_finish(&progress, np);
  int stopped = tf_stop_requested(&run->stop);
  tf_stop_disarm(&run->stop);
  MPI_Allreduce(MPI_IN_PLACE, &stopped, 1, MPI_INT, MPI_MAX, run->comm);
  MPI_Allreduce(MPI_IN_PLACE, res, (int)(np * POINT_WIDTH), MPI_DOUBLE, MPI_SUM, run->comm);
  MPI_Allreduce(MPI_IN_PLACE, states, (int)(np * dim), MPI_DOUBLE, MPI_SUM, run->comm);
  MPI_Allreduce(MPI_IN_PLACE, values, (int)np, MPI_DOUBLE, MPI_SUM, run->comm);
  for (size_t m = 0; stopped && m < np; m++)
    if (res[m * POINT_WIDTH + 6] != 1) {
      for (size_t c = 0; c + 1 < POINT_WIDTH; c++) res[m * POINT_WIDTH + c] = NAN;
      for (size_t i = 0; i < dim; i++) states[m * dim + i] = NAN;
    }

  tf_json *j = run->summary;
  tf_json_string(j, "model", k->name);
  tf_json_string(j, "threshold_initial", k->initial_params[job->varied].name);
  long long failed = 0;
  for (size_t m = 0; m < np; m++) failed += res[m * POINT_WIDTH + 5] == 1;
  if (stopped) {
    long long done = 0;
    for (size_t m = 0; m < np; m++) done += res[m * POINT_WIDTH + 6] == 1;
    tf_json_integer(j, "points_done", done);
    run->outcome = TF_RUN_INTERRUPTED;
    run->restarts = true;
  } else if (!job->scan) {
    if (run->size > 1) MPI_Bcast(&single, sizeof single, MPI_BYTE, 0, run->comm);
    if (failed) {
      free(res), free(states), free(values), free(p);
      return tf_fail(err, "no threshold for model '%s' in [%g, %g]: %s", k->name, job->low,
                     job->high, run->rank == 0 && single.failure ? single.failure : "see rank 0");
    }
    tf_json_number(j, "threshold", single.threshold);
    tf_json_number(j, "threshold_low", single.low);
    tf_json_number(j, "threshold_high", single.high);
    tf_json_integer(j, "runs", single.runs);
    single.above.failure = NULL;
    report_onset(run, job, job->flow.params, &single.above);
    if (run->rank == 0 && !run->quiet && !run->json)
      printf(
          "'%s' keeps rolling for %s < %.10g (bisection bracket [%.10g, %.10g], %d runs); "
          "above it slips at t = %.10g in case %s\n",
          k->name, k->initial_params[job->varied].name, single.threshold, single.low, single.high,
          single.runs, single.above.t, tf_dc_case_name(single.above.to));
  } else {
    double *th = malloc(np * sizeof *th), *ot = malloc(np * sizeof *ot),
           *cs = malloc(np * sizeof *cs);
    for (size_t m = 0; th && ot && cs && m < np; m++)
      th[m] = res[m * POINT_WIDTH], ot[m] = res[m * POINT_WIDTH + 3],
      cs[m] = res[m * POINT_WIDTH + 4];
    tf_json_string(j, "scan_param", job->grid.x.param);
    tf_json_numbers(j, "scan_values", values, np);
    if (th && ot && cs) {
      tf_json_numbers(j, "thresholds", th, np);
      tf_json_numbers(j, "onset_times", ot, np);
      tf_json_numbers(j, "slip_cases", cs, np);
    }
    tf_json_integer(j, "failed", failed);
    free(th), free(ot), free(cs);
  }

  hid_t file = open_results(run, job, err);
  if (file < 0) {
    free(res), free(states), free(values), free(p);
    return -1;
  }
  hid_t g = tf_h5_group(file, "threshold");
  double *col = malloc(np * sizeof *col);
  static const char *const names[POINT_WIDTH] = {"threshold", "low",    "high", "onset_time",
                                                 "case",      "failed", "done"};
  static const char *const docs[POINT_WIDTH] = {
      "largest value that keeps rolling up to t_end (bracket midpoint)",
      "bisection bracket: rolls throughout",
      "bisection bracket: slips",
      "time of the departure from dual rolling at high",
      "case entered: 0 SS, 1 SR, 2 RS",
      "1 if no threshold was found",
      "1 if the point was computed (0: the run was stopped first; NaN in the other columns)"};
  int rc = !col || tf_h5_write_small(g, "values", H5T_NATIVE_DOUBLE, np, values,
                                     "scan parameter values (NaN: no scan)");
  for (int c = 0; !rc && c < POINT_WIDTH; c++) {
    for (size_t m = 0; m < np; m++) col[m] = res[m * POINT_WIDTH + (size_t)c];
    rc = tf_h5_write_small(g, names[c], H5T_NATIVE_DOUBLE, np, col, docs[c]);
  }
  if (!rc)
    rc = tf_h5_write_small(g, "onset_state", H5T_NATIVE_DOUBLE, np * dim, states,
                           "state at that departure (points x dim, row-major)") |
         tf_h5_attr_string(g, "initial", k->initial_params[job->varied].name) |
         tf_h5_attr_string(g, "scan_param", job->scan ? job->grid.x.param : "") |
         tf_h5_attr_double(g, "t_end", job->flow.t_end);
  H5Gclose(g);
  free(col), free(res), free(states), free(values), free(p);
  if (stopped) {
    tf_error close_err;
    if (tf_results_close(run, file, false, &close_err)) return *err = close_err, -1;
    return rc ? tf_fail_code(err, TF_ERR_IO, "writing the results to '%s' failed", run->output_path)
              : 0;
  }
  return close_results(run, file, rc, err);
}

static int execute(tf_run *run, tf_error *err) {
  slip_job *job = run->job_data;
  if (!job->threshold) return execute_onset(run, job, err);
  return execute_threshold(run, job, err);
}

static void destroy(tf_run *run) {
  slip_job *job = run->job_data;
  if (!job) return;
  if (job->scan) tf_param_grid_destroy(&job->grid);
  tf_flow_destroy(&job->flow);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_slip_onset = {
    .name = "slip-onset",
    .doc = "when a body rolling at two contacts starts to slip; the largest amplitude without",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .kinds = TF_KIND_BIT(TF_MODEL_TWO_CONTACT),
};
