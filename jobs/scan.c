/* scan.c — job `scan`: a quantity over a grid of one or two model parameters.
 *
 * scan.quantity: lyapunov (default).  Each grid point is one member of the ensemble
 * scheduler, so a scan is spread over ranks with dynamic balance, resumable, and identical on
 * any rank count.  The quantity is the Lyapunov spectrum of a flow, a map, a Filippov flow
 * (event-driven with saltation matrices, or smoothed where the parameters ask for it) or a
 * codimension-2 body (evolve2.c through contact_run.c, with codim2.*):
 * lambda_1(mu) of the logistic map, lambda versus the friction bound or the smoothing eps of the
 * stick-slip oscillator, or any spectrum versus a parameter.
 * Config: model, initial.state, integrator (flows), lyapunov.*, scan.quantity,
 * scan.x.{param,min,max,points}, optional scan.y.*, ensemble.chunk, output.
 * Output: /members/{grid (x, y; y NaN for one axis), spectrum, error, kaplan_yorke, valid},
 * /scan/x (and /scan/y), root attributes scan_x_param (scan_y_param).
 * JSON: points, lambda1_max with its location, and the scheduler's counts.
 *
 * scan.quantity: stationary.  A bifurcation diagram by simulation (Antali 2017, Figs 4.5-4.7):
 * each grid LINE (all x at one y; a 1-D scan is one line) is one member; along it the points
 * run one after the other, each from the previous point's final state (numerical
 * continuation), the first from initial.*, for scan.time, and stationary.h judges the end
 * (drift over the last scan.window, events there, scan.tolerance).  scan.continuation up,
 * down, or both (up, then down from the upper end: hysteresis).  Smooth flows, Filippov
 * kernels (evolve.c), codimension-2 and two-contact kernels (contact_run.h, with codim2.*).
 * A point that fails (or that the model rejects) is recorded and the next one continues from
 * the last state that ended ok.  Output per line, P = sweeps x nx points in run order:
 * /members/{y, x (P), direction (P: +1 up, -1 down), state (P x dim), drift, stationary,
 * mode, events, window_events, steps, point_status, valid (P each), outputs (P x noutputs)}.
 * JSON: points, lines, stationary, not_stationary, failed_points, final_modes, and for
 * `both` the bistable points (up and down sweeps end in different states) and their x range.
 *
 * scan.quantity: poincare.  Each grid point is one member run from initial.state and recorded
 * at events (poincare.h: impacts, extrema, level crossings): a bifurcation diagram such as the
 * pressure-relief valve's.  Output: /members/{grid, poincare, poincare_recorded,
 * poincare_period, impacts, stick_time, valid}.  Filippov models (one or several switching
 * functions) run on the event-driven engine of pws.h and are recorded at level crossings
 * (pws_section.h): /members/{grid, poincare, poincare_recorded, poincare_period,
 * poincare_mode, sliding, slides, events, work, valid}.  Impact kernels are refused by the
 * other quantities. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "contact_run.h"
#include "devs/devs_job.h" /* DEVS models run on their own engine */
#include "ensemble.h"
#include "flow.h"
#include "h5io.h"
#include "impact_lanes.h"
#include "integrator_settings.h"
#include "job.h"
#include "lyapunov.h"
#include "model.h"
#include "param_grid.h"
#include "physical_initial.h"
#include "poincare.h"
#include "progress.h"
#include "pws_section.h"
#include "results.h"
#include "routes.h"
#include "stationary.h"
#include "status.h"

enum { COL_GRID, COL_SPECTRUM, COL_ERROR, COL_KY, COL_VALID, NCOLS };

typedef struct scan_job {
  tf_model model;
  tf_param_grid grid;
  double x0[TF_MAX_DIM];
  tf_ode_options ode;
  tf_lyapunov_options opt;
  tf_poincare_spec events; /* a section that resets the state (opt.events) */
  bool saltation;
  bool contact; /* codimension-2 kernel: evolve2.c through contact_run.c */
  tf_contact_options contact_opts;
  double *scratch;
  tf_ensemble_spec spec;
  tf_column cols[NCOLS];
  struct stationary_scan *stat; /* scan.quantity: stationary; NULL for lyapunov */
  struct poincare_scan *pscan;  /* scan.quantity: poincare */
} scan_job;

/* scan.quantity: poincare (below) */
static int poincare_setup(tf_run *run, scan_job *job, tf_error *err);
static int poincare_execute(tf_run *run, scan_job *job, tf_error *err);
static void poincare_destroy(scan_job *job);

/* Impact kernels run only on the impact engine (impact.h), which the stationary quantity does
 * not use yet: refuse them rather than integrate through the walls. */
static int refuse_impacts(tf_config *cfg, const tf_kernel *k, const char *quantity, tf_error *err) {
  char where[256];
  if (!k || !tf_route_ops_for(k, NULL)->impacts) return 0;
  return tf_fail_code(
      err, TF_ERR_CONFIG,
      "%s: key 'scan.quantity': model '%s' has impacts, which scan.quantity %s does "
      "not handle yet; use scan.quantity poincare or lyapunov",
      tf_config_where(cfg, "scan.quantity", where, sizeof where), k->name, quantity);
}

/* scan.quantity: stationary (below) */
static int refuse_stationary_keys(tf_config *cfg, tf_error *err);
static int refuse_stationary_devs(tf_run *run, tf_error *err);
static int stationary_setup(tf_run *run, scan_job *job, tf_error *err);
static int stationary_execute(tf_run *run, scan_job *job, tf_error *err);
static void stationary_destroy(scan_job *job);

static int setup(tf_run *run, tf_error *err) {
  if (tf_devs_job_wanted(run)) { /* DEVS: devs/devs_job.c */
    if (refuse_stationary_devs(run, err)) return -1;
    return tf_devs_scan_setup(run, err);
  }
  scan_job *job = calloc(1, sizeof *job);
  if (!job) return tf_fail(err, "out of memory");
  run->job_data = job;
  static const char *const quantities[] = {"lyapunov", "stationary", "poincare", NULL};
  const char *quantity;
  const tf_kernel *k;
  if (tf_config_get_string(run->cfg, "scan.quantity", "lyapunov", quantities, &quantity, err) ||
      tf_model_kernel(run->cfg, run->comm, &k, err))
    return -1;
  if (strcmp(quantity, "poincare") == 0) return poincare_setup(run, job, err);
  if (strcmp(quantity, "stationary") == 0) {
    if (refuse_impacts(run->cfg, k, quantity, err)) return -1;
    return stationary_setup(run, job, err);
  }
  if (refuse_stationary_keys(run->cfg, err)) return -1;
  const bool is_map = tf_route_ops_for(k, NULL)->iterates;
  if (tf_contact_refuse_dual_lyapunov(run->cfg, k, "scan.quantity lyapunov", err) ||
      tf_model_from_config(&job->model, run->cfg, run->comm, TF_KINDS_ALL, "scan", err))
    return -1;
  k = job->model.kernel;
  double spread, t0;
  const long long d_chunk = 1;
  long long chunk;
  job->ode = tf_ode_default_options();
  job->contact = tf_contact_kernel(k);
  const bool state_given = tf_config_has(run->cfg, "initial.state");
  if (tf_initial_from_config(run->cfg, k, job->x0, &spread, &t0, err) ||
      tf_physical_initial_from_config(run->cfg, k, job->model.params, state_given, job->x0, err) ||
      (!is_map && tf_integrator_ode_from_config(run->cfg, t0, NULL, &job->ode, err)) ||
      (job->contact &&
       tf_contact_options_from_config(run->cfg, &job->ode, &job->contact_opts, err)) ||
      tf_lyapunov_options_from_config(run->cfg, k, &job->opt, err) ||
      tf_config_get_bool(run->cfg, "lyapunov.saltation", &(const bool){true}, &job->saltation,
                         err) ||
      tf_param_grid_from_config(&job->grid, run->cfg, "scan", &job->model, false, err) ||
      tf_config_get_int(run->cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err) ||
      tf_poincare_reset_from_config(&job->events, run->cfg, k, &job->ode, "scan.quantity lyapunov",
                                    err))
    return -1;
  if (job->events.record) job->opt.events = &job->events.impact;
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
  const int rc = job->contact ? tf_lyapunov_contact(k, job->scratch, job->x0, &job->contact_opts,
                                                    &job->opt, &r, &err)
                              : tf_lyapunov_any(k, job->scratch, job->x0, &job->ode, &job->opt,
                                                job->saltation, &r, &err);
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

/* --- scan.quantity: stationary ---------------------------------------------------------------- */

enum {
  SC_Y,
  SC_X,
  SC_DIRECTION,
  SC_STATE,
  SC_DRIFT,
  SC_STATIONARY,
  SC_MODE,
  SC_EVENTS,
  SC_WINDOW_EVENTS,
  SC_STEPS,
  SC_POINT_STATUS,
  SC_VALID,
  SC_OUTPUTS, /* only if the kernel names outputs */
  SC_NCOLS
};

enum { MAX_OUTPUTS = 16, MODE_OFFSET = 1, MODE_SLOTS = 8 }; /* Filippov modes start at -1 */

typedef struct stationary_scan {
  tf_run *run;
  tf_stationary_options opt;
  tf_stationary_engine engine;
  const char *continuation;
  int sweeps, first_direction; /* both: +1 then -1 */
  long long nx, points;        /* points per line: sweeps x nx */
  double t0, *x0, *params, *cont, *work;
  size_t noutputs;
  bool show_points; /* one line: a progress bar over its points */
  tf_column cols[SC_NCOLS];
} stationary_scan;

static const char *const stationary_keys[] = {"scan.continuation", "scan.time", "scan.window",
                                              "scan.tolerance", NULL};

/* A lyapunov scan given the keys of a stationary one: say so instead of "unknown key". */
static int refuse_stationary_keys(tf_config *cfg, tf_error *err) {
  char where[256];
  for (int i = 0; stationary_keys[i]; i++)
    if (tf_config_has(cfg, stationary_keys[i]))
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key '%s': applies to scan.quantity: stationary, but this scan "
                          "computes lyapunov",
                          tf_config_where(cfg, stationary_keys[i], where, sizeof where),
                          stationary_keys[i]);
  return 0;
}

static int refuse_stationary_devs(tf_run *run, tf_error *err) {
  static const char *const quantities[] = {"lyapunov", "stationary", NULL};
  const char *quantity, *name;
  char where[256];
  if (!tf_config_has(run->cfg, "scan.quantity")) return 0;
  if (tf_config_get_string(run->cfg, "scan.quantity", "lyapunov", quantities, &quantity, err) ||
      tf_config_get_string(run->cfg, "model.name", NULL, NULL, &name, err))
    return -1;
  if (strcmp(quantity, "stationary") != 0) return 0;
  return tf_fail_code(
      err, TF_ERR_CONFIG,
      "%s: key 'scan.quantity': model '%s' is a DEVS ensemble of maps, which has no "
      "stationary state of a flow to continue; 'stationary' needs a smooth, Filippov, "
      "codimension-2 or two-contact flow (use quantity lyapunov, or job bifurcation)",
      tf_config_where(run->cfg, "scan.quantity", where, sizeof where), name);
}

static int stationary_options(tf_config *cfg, const tf_kernel *k, stationary_scan *st,
                              tf_error *err) {
  static const char *const continuations[] = {"up", "down", "both", NULL};
  const double d_time = 100.0, d_window = 0.25, d_tol = 1e-6;
  tf_stationary_options *o = &st->opt;
  o->ode = tf_ode_default_options();
  o->ode.stop = &st->run->stop; /* before the contact options copy it */
  if (tf_integrator_ode_from_config(cfg, st->t0, NULL, &o->ode, err) ||
      (tf_contact_kernel(k) && tf_contact_options_from_config(cfg, &o->ode, &o->contact, err)) ||
      tf_config_get_double(cfg, "scan.time", &d_time, 1e-12, 1e15, &o->time, err) ||
      tf_config_get_double(cfg, "scan.window", &d_window, 1e-3, 1.0, &o->window, err) ||
      tf_config_get_double(cfg, "scan.tolerance", &d_tol, 0.0, INFINITY, &o->tolerance, err) ||
      tf_config_get_string(cfg, "scan.continuation", "up", continuations, &st->continuation, err))
    return -1;
  st->sweeps = strcmp(st->continuation, "both") == 0 ? 2 : 1;
  st->first_direction = strcmp(st->continuation, "down") == 0 ? -1 : 1;
  return 0;
}

static int stationary_initial(tf_config *cfg, const tf_kernel *k, const double *params,
                              stationary_scan *st, tf_error *err) {
  char where[256];
  double spread;
  const bool state_given = tf_config_has(cfg, "initial.state");
  if (tf_initial_from_config(cfg, k, st->x0, &spread, &st->t0, err) ||
      tf_physical_initial_from_config(cfg, k, params, state_given, st->x0, err))
    return -1;
  if (spread != 0.0)
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'initial.spread': a stationary scan starts its lines from initial.* "
        "exactly (got spread %g; use 0)",
        tf_config_where(cfg, "initial.spread", where, sizeof where), spread);
  for (size_t i = 0; i < k->dim; i++)
    if (!isfinite(st->x0[i]))
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'initial.state': component %zu is not finite",
                          tf_config_where(cfg, "initial.state", where, sizeof where), i);
  if (tf_kernel_is_noisy(k, st->x0, params))
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'model.name': model '%s' has noise here: its stationary state is a "
        "distribution, not a point, so scan.quantity stationary does not apply",
        tf_config_where(cfg, "model.name", where, sizeof where), k->name);
  return 0;
}

static void stationary_columns(stationary_scan *st, const tf_kernel *k) {
  const uint64_t P = (uint64_t)st->points;
  tf_column *c = st->cols;
  c[SC_Y] = (tf_column){"y", TF_COLUMN_F64, 1, "scan.y value of the line (NaN for one axis)"};
  c[SC_X] = (tf_column){"x", TF_COLUMN_F64, P, "scan.x value of each point, in run order"};
  c[SC_DIRECTION] =
      (tf_column){"direction", TF_COLUMN_I64, P, "sweep of each point: +1 up, -1 down"};
  c[SC_STATE] = (tf_column){"state", TF_COLUMN_F64, P * k->dim,
                            "final state of each point (points x dim, run order)"};
  c[SC_DRIFT] = (tf_column){"drift", TF_COLUMN_F64, P,
                            "max |x(t) - x(end)|_inf / max(1, |x(end)|_inf) over the window"};
  c[SC_STATIONARY] =
      (tf_column){"stationary", TF_COLUMN_I64, P,
                  "1 if the point ended ok, with no events in the window and drift <= tolerance"};
  c[SC_MODE] = (tf_column){"mode", TF_COLUMN_I64, P, tf_stationary_modes_doc(st->engine)};
  c[SC_EVENTS] = (tf_column){"events", TF_COLUMN_I64, P, "events during the point's run"};
  c[SC_WINDOW_EVENTS] =
      (tf_column){"window_events", TF_COLUMN_I64, P, "events inside the drift window"};
  c[SC_STEPS] = (tf_column){"steps", TF_COLUMN_I64, P, "integrator steps"};
  c[SC_POINT_STATUS] =
      (tf_column){"point_status", TF_COLUMN_I64, P, "member status of each point (status.h)"};
  c[SC_VALID] = (tf_column){"valid", TF_COLUMN_I64, P, "1 if the model accepts the point"};
  c[SC_OUTPUTS] = (tf_column){"outputs", TF_COLUMN_F64, P * (st->noutputs ? st->noutputs : 1),
                              "the kernel's named outputs at the final state (points x n)"};
}

static int stationary_setup(tf_run *run, scan_job *job, tf_error *err) {
  tf_config *cfg = run->cfg;
  char where[256];
  const tf_kernel *k;
  if (tf_model_kernel(cfg, run->comm, &k, err)) return -1;
  if (k && (k->kind == TF_MODEL_MAP || k->kind == TF_MODEL_DEVS))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'scan.quantity': 'stationary' continues stationary states of a "
                        "flow, but model '%s' is a map (scan its lyapunov exponents instead)",
                        tf_config_where(cfg, "scan.quantity", where, sizeof where), k->name);
  if (tf_model_from_config(&job->model, cfg, run->comm, TF_KINDS_ALL, "scan", err)) return -1;
  k = job->model.kernel;
  stationary_scan *st = calloc(1, sizeof *st);
  if (!st) return tf_fail(err, "out of memory");
  job->stat = st;
  st->run = run;
  st->engine = tf_stationary_engine_for(k, job->model.params);
  if (st->engine == TF_STATIONARY_NONE)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'scan.quantity': model '%s' has no flow to run to a stationary "
                        "state",
                        tf_config_where(cfg, "scan.quantity", where, sizeof where), k->name);
  st->x0 = calloc(k->dim, sizeof *st->x0);
  st->cont = calloc(k->dim, sizeof *st->cont);
  st->work = calloc(k->dim, sizeof *st->work);
  st->params = calloc(k->nparams, sizeof *st->params);
  if (!st->x0 || !st->cont || !st->work || !st->params) return tf_fail(err, "out of memory");
  st->noutputs = k->outputs && k->noutputs <= MAX_OUTPUTS ? k->noutputs : 0;
  const long long d_chunk = 1;
  long long chunk;
  if (stationary_initial(cfg, k, job->model.params, st, err) ||
      stationary_options(cfg, k, st, err) ||
      tf_param_grid_from_config(&job->grid, cfg, "scan", &job->model, false, err) ||
      tf_config_get_int(cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  st->nx = job->grid.x.points;
  st->points = st->sweeps * st->nx;
  stationary_columns(st, k);
  job->spec.members = (uint64_t)job->grid.y.points; /* one line each */
  st->show_points = job->spec.members == 1 && !run->quiet;
  job->spec.chunk = (uint64_t)chunk;
  job->spec.ncols = st->noutputs ? SC_NCOLS : SC_NCOLS - 1;
  job->spec.cols = st->cols;
  return 0;
}

static bool is_failure(int status) {
  return status != TF_MEMBER_OK && status != TF_MEMBER_CODIM2;
}

static void stationary_point_row(void *const *row, long long q, const tf_kernel *k,
                                 const stationary_scan *st) {
  const size_t dim = k->dim, no = st->noutputs;
  ((double *)row[SC_DRIFT])[q] = NAN;
  for (size_t i = 0; i < dim; i++) ((double *)row[SC_STATE])[(size_t)q * dim + i] = NAN;
  for (size_t i = 0; i < no; i++) ((double *)row[SC_OUTPUTS])[(size_t)q * no + i] = NAN;
  ((int64_t *)row[SC_STATIONARY])[q] = 0;
  ((int64_t *)row[SC_MODE])[q] = 0;
  ((int64_t *)row[SC_EVENTS])[q] = 0;
  ((int64_t *)row[SC_WINDOW_EVENTS])[q] = 0;
  ((int64_t *)row[SC_STEPS])[q] = 0;
}

/* One line: the points in run order, each continuing from the last state that ended ok. */
static int run_line(void *ctx, uint64_t line, void *const *row) {
  scan_job *job = ctx;
  stationary_scan *st = job->stat;
  const tf_kernel *k = job->model.kernel;
  const size_t dim = k->dim, no = st->noutputs;
  double xy[2];
  int line_status = TF_MEMBER_OK;
  long long points_run = 0;
  tf_progress progress;
  if (st->show_points)
    tf_progress_start(&progress, "points", (uint64_t)st->points, 0, false, st->run->progress_mode);
  memcpy(st->cont, st->x0, dim * sizeof *st->cont);
  *(double *)row[SC_Y] = job->grid.y.index >= 0 ? job->grid.y.values[line] : NAN;
  for (long long q = 0; q < st->points; q++) {
    const int direction = q < st->nx ? st->first_direction : -st->first_direction;
    const long long i = q % st->nx, xi = direction > 0 ? i : st->nx - 1 - i;
    const bool valid =
        tf_param_grid_point(&job->grid, line * (uint64_t)st->nx + (uint64_t)xi, st->params, xy);
    ((double *)row[SC_X])[q] = xy[0];
    ((int64_t *)row[SC_DIRECTION])[q] = direction;
    ((int64_t *)row[SC_VALID])[q] = valid;
    stationary_point_row(row, q, k, st);
    int status = TF_MEMBER_FAILED;
    if (valid) {
      memcpy(st->work, st->cont, dim * sizeof *st->work);
      const tf_stationary_result r = tf_stationary_point(k, st->params, &st->opt, st->t0, st->work);
      status = r.status;
      memcpy((double *)row[SC_STATE] + (size_t)q * dim, st->work, dim * sizeof *st->work);
      if (no) k->outputs(st->work, st->params, (double *)row[SC_OUTPUTS] + (size_t)q * no);
      ((double *)row[SC_DRIFT])[q] = r.drift;
      ((int64_t *)row[SC_STATIONARY])[q] = r.stationary;
      ((int64_t *)row[SC_MODE])[q] = r.mode;
      ((int64_t *)row[SC_EVENTS])[q] = r.events;
      ((int64_t *)row[SC_WINDOW_EVENTS])[q] = r.window_events;
      ((int64_t *)row[SC_STEPS])[q] = r.steps;
      if (r.status == TF_MEMBER_OK) memcpy(st->cont, st->work, dim * sizeof *st->cont);
    }
    if (tf_stop_requested(&st->run->stop)) { /* a signal or the time limit inside the point */
      line_status = TF_MEMBER_PENDING;
      break;
    }
    ((int64_t *)row[SC_POINT_STATUS])[q] = status;
    if (is_failure(status) && line_status == TF_MEMBER_OK) line_status = status;
    if (st->show_points) tf_progress_update(&progress, (uint64_t)q + 1, false);
    /* a line can be long (one-line scans are one member): stop between its points; the line
     * is then not done and --resume computes it again from its first point */
    points_run = q + 1;
    if (q + 1 < st->points && tf_stop_point(&st->run->stop)) {
      line_status = TF_MEMBER_PENDING;
      break;
    }
  }
  if (st->show_points) tf_progress_finish(&progress, (uint64_t)points_run);
  return line_status;
}

static int stationary_describe(hid_t file, const scan_job *job) {
  const stationary_scan *st = job->stat;
  const tf_kernel *k = job->model.kernel;
  char names[512], outputs[512] = "";
  tf_join_state_names(k, names, sizeof names);
  for (size_t i = 0, len = 0; i < st->noutputs && len < sizeof outputs; i++)
    len += (size_t)snprintf(outputs + len, sizeof outputs - len, "%s%s", i ? "," : "",
                            k->output_names[i]);
  return describe(file, job) | tf_h5_attr_string(file, "quantity", "stationary") |
         tf_h5_attr_string(file, "continuation", st->continuation) |
         tf_h5_attr_int(file, "sweeps", st->sweeps) |
         tf_h5_attr_int(file, "points_per_line", st->points) |
         tf_h5_attr_names(file, "state_names", names) |
         tf_h5_attr_names(file, "output_names", outputs) |
         tf_h5_attr_string(file, "modes", tf_stationary_modes_doc(st->engine)) |
         tf_h5_attr_double(file, "time", st->opt.time) |
         tf_h5_attr_double(file, "window", st->opt.window) |
         tf_h5_attr_double(file, "tolerance", st->opt.tolerance);
}

typedef struct stationary_summary {
  int rc;
  long long stationary, not_stationary, failed, bistable;
  long long modes[MODE_SLOTS];
  double bistable_min, bistable_max;
} stationary_summary;

static double inf_norm(const double *x, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
  return m;
}

/* Rank 0 reads the lines back in member order: counts, final modes and, for `both`, where
 * the two sweeps end in different states (mode, or more than 1000 tolerances apart). */
static void stationary_tally(hid_t file, const scan_job *job, stationary_summary *s) {
  const stationary_scan *st = job->stat;
  const size_t dim = job->model.kernel->dim, P = (size_t)st->points;
  const uint64_t lines = job->spec.members;
  double *x = malloc(lines * P * sizeof *x), *state = malloc(lines * P * dim * sizeof *state);
  int64_t *flag = malloc(lines * P * sizeof *flag), *mode = malloc(lines * P * sizeof *mode),
          *status = malloc(lines * P * sizeof *status);
  hid_t d[5] = {H5Dopen2(file, "members/x", H5P_DEFAULT),
                H5Dopen2(file, "members/state", H5P_DEFAULT),
                H5Dopen2(file, "members/stationary", H5P_DEFAULT),
                H5Dopen2(file, "members/mode", H5P_DEFAULT),
                H5Dopen2(file, "members/point_status", H5P_DEFAULT)};
  s->rc = !x || !state || !flag || !mode || !status || d[0] < 0 || d[1] < 0 || d[2] < 0 ||
          d[3] < 0 || d[4] < 0 || tf_h5_read_rows(d[0], H5T_NATIVE_DOUBLE, P, 0, lines, x) ||
          tf_h5_read_rows(d[1], H5T_NATIVE_DOUBLE, P * dim, 0, lines, state) ||
          tf_h5_read_rows(d[2], H5T_NATIVE_INT64, P, 0, lines, flag) ||
          tf_h5_read_rows(d[3], H5T_NATIVE_INT64, P, 0, lines, mode) ||
          tf_h5_read_rows(d[4], H5T_NATIVE_INT64, P, 0, lines, status);
  const double apart = fmax(1e3 * st->opt.tolerance, 1e-9);
  for (size_t q = 0; !s->rc && q < lines * P; q++) {
    if (is_failure((int)status[q])) {
      s->failed++;
      continue;
    }
    s->stationary += flag[q] != 0, s->not_stationary += flag[q] == 0;
    const long long slot = mode[q] + MODE_OFFSET;
    if (slot >= 0 && slot < MODE_SLOTS) s->modes[slot]++;
  }
  for (size_t l = 0; !s->rc && st->sweeps == 2 && l < lines; l++)
    for (size_t i = 0; i < (size_t)st->nx; i++) { /* point i of the up sweep, its x going down */
      const size_t a = l * P + i, b = l * P + (size_t)st->nx + ((size_t)st->nx - 1 - i);
      if (is_failure((int)status[a]) || is_failure((int)status[b])) continue;
      double diff = 0.0;
      for (size_t c = 0; c < dim; c++)
        diff = fmax(diff, fabs(state[a * dim + c] - state[b * dim + c]));
      if (mode[a] != mode[b] || diff > apart * fmax(1.0, inf_norm(state + a * dim, dim))) {
        s->bistable++;
        s->bistable_min = fmin(s->bistable_min, x[a]);
        s->bistable_max = fmax(s->bistable_max, x[a]);
      }
    }
  for (int i = 0; i < 5; i++)
    if (d[i] >= 0) H5Dclose(d[i]);
  free(x), free(state), free(flag), free(mode), free(status);
}

/* A tf_results_summarize_fn (ctx: the scan_job). */
static int stationary_report(tf_run *run, hid_t file, void *ctx, tf_error *err) {
  const scan_job *job = ctx;
  const stationary_scan *st = job->stat;
  stationary_summary s = {.bistable_min = INFINITY, .bistable_max = -INFINITY};
  stationary_tally(file, job, &s);
  if (s.rc)
    return tf_fail_code(err, TF_ERR_IO, "cannot read back the scan from '%s'", run->output_path);
  tf_json_integer(run->summary, "stationary", s.stationary);
  tf_json_integer(run->summary, "not_stationary", s.not_stationary);
  tf_json_integer(run->summary, "failed_points", s.failed);
  const char *names[MODE_SLOTS];
  long long counts[MODE_SLOTS];
  int n = 0;
  for (int i = 0; i < MODE_SLOTS; i++)
    if (s.modes[i]) {
      names[n] = tf_stationary_mode_name(st->engine, i - MODE_OFFSET);
      counts[n++] = s.modes[i];
    }
  tf_json_counts(run->summary, "final_modes", names, counts, (size_t)n);
  if (st->sweeps == 2) {
    tf_json_integer(run->summary, "bistable_points", s.bistable);
    const double range[2] = {s.bistable_min, s.bistable_max};
    if (s.bistable)
      tf_json_numbers(run->summary, "bistable_x", range, 2);
    else
      tf_json_numbers(run->summary, "bistable_x", NULL, 0);
  }
  return 0;
}

static int stationary_execute(tf_run *run, scan_job *job, tf_error *err) {
  static const char *const fingerprint_paths[] = {"job",    "model", "initial", "integrator",
                                                  "codim2", "scan",  NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  int rc = stationary_describe(file, job) |
           tf_results_write_model(file, job->model.kernel, job->model.params);
  if (rc) rc = tf_fail_code(err, TF_ERR_IO, "cannot describe the scan in '%s'", run->output_path);
  job->spec.run = run_line;
  job->spec.ctx = job;
  tf_ensemble_outcome out = {0};
  /* --stop-after counts points here (a line of many points may be all there is) */
  tf_stop_arm(&run->stop, run->start_time, run->time_limit, run->stop_after, 0);
  if (rc == 0) rc = tf_ensemble_execute(run, &file, &job->spec, resumed, &out, err);
  tf_stop_disarm(&run->stop);
  tf_json_string(run->summary, "model", job->model.kernel->name);
  tf_json_string(run->summary, "quantity", "stationary");
  tf_json_string(run->summary, "continuation", job->stat->continuation);
  tf_json_integer(run->summary, "lines", (long long)job->spec.members);
  tf_json_integer(run->summary, "points", (long long)job->spec.members * job->stat->points);
  tf_json_integer(run->summary, "failed", tf_member_failures(out.status_counts));
  return tf_ensemble_finish_summarized(run, file, &out, rc, stationary_report, job, err);
}

static void stationary_destroy(scan_job *job) {
  stationary_scan *st = job->stat;
  if (!st) return;
  free(st->x0), free(st->cont), free(st->work), free(st->params);
  free(st);
  job->stat = NULL;
}

static int execute(tf_run *run, tf_error *err) {
  if (tf_devs_job_wanted(run)) return tf_devs_scan_execute(run, err);
  scan_job *job = run->job_data;
  if (job->stat) return stationary_execute(run, job, err);
  if (job->pscan) return poincare_execute(run, job, err);
  static const char *const fingerprint_paths[] = {"job",      "model", "initial", "integrator",
                                                  "lyapunov", "scan",  NULL};
  bool resumed;
  hid_t file = tf_results_open(run, fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  int rc = describe(file, job) | tf_results_write_model(file, job->model.kernel, job->model.params);
  if (rc) rc = tf_fail_code(err, TF_ERR_IO, "cannot describe the scan in '%s'", run->output_path);
  job->spec.run = run_point;
  job->spec.ctx = job;
  tf_ensemble_outcome out = {0};
  if (rc == 0) rc = tf_ensemble_execute(run, &file, &job->spec, resumed, &out, err);
  tf_json_string(run->summary, "model", job->model.kernel->name);
  tf_json_string(run->summary, "quantity", "lyapunov");
  tf_json_integer(run->summary, "points", (long long)job->spec.members);
  tf_json_integer(run->summary, "failed", tf_member_failures(out.status_counts));
  tf_param_grid_max best = {"spectrum", (uint64_t)job->opt.exponents, job->spec.members,
                            &job->grid};
  return tf_ensemble_finish_summarized(run, file, &out, rc, tf_param_grid_report_max, &best, err);
}

/* --- scan.quantity: poincare ------------------------------------------------------------------ */

/* Each grid point is one member: a run from initial.state recorded at events (poincare.h),
 * e.g. x at impacts and extrema of the pressure-relief valve versus its flow rate. */
enum {
  PC_GRID,
  PC_SAMPLES,
  PC_RECORDED,
  PC_PERIOD,
  PC_COUNTS,
  PC_STICK,
  PC_WORK,
  PC_VALID,
  PC_NCOLS
};

/* Columns of a Filippov model's poincare scan (pws_section.h). */
enum {
  FS_GRID,
  FS_SAMPLES,
  FS_RECORDED,
  FS_PERIOD,
  FS_MODE,
  FS_SLIDING,
  FS_SLIDES,
  FS_EVENTS,
  FS_WORK,
  FS_VALID,
  FS_NCOLS
};

typedef struct poincare_scan {
  tf_poincare_spec spec;
  tf_poincare *engine;
  tf_poincare_record rec;
  double *x0, *x, t0, t_end;
  tf_column cols[PC_NCOLS];
  /* Filippov models: their engine, section and record instead */
  tf_pws *pws;
  tf_pws_section *section;
  tf_pws_section_record frec;
  tf_pws_record prec;
  double *logs; /* the member's unkept logs (pws.h) */
  tf_column fcols[FS_NCOLS];
  tf_stop_token *stop; /* the run's, which the engines poll */
  int lanes;           /* integrator.lanes: members side by side (impact_lanes.h), else 1 */
  tf_poincare *lane_engines[16];
} poincare_scan;

static int filippov_poincare_setup(tf_run *run, scan_job *job, tf_error *err);
static int poincare_lanes_setup(scan_job *job, int lanes, tf_error *err);

static int poincare_setup(tf_run *run, scan_job *job, tf_error *err) {
  tf_config *cfg = run->cfg;
  char where[256];
  const tf_kernel *peek = tf_model_peek(cfg, run->comm);
  if (peek && tf_route_ops_for(peek, NULL)->pws_sections)
    return filippov_poincare_setup(run, job, err);
  /* the event-driven DOPRI5 of impact.h: smooth flows and impact systems */
  if (tf_model_from_config(&job->model, cfg, run->comm,
                           TF_KIND_BIT(TF_MODEL_FLOW) | TF_KIND_BIT(TF_MODEL_IMPACT),
                           "scan with scan.quantity poincare", err))
    return -1;
  const tf_kernel *k = job->model.kernel;
  poincare_scan *ps = calloc(1, sizeof *ps);
  if (!ps) return tf_fail(err, "out of memory");
  job->pscan = ps;
  const bool chunk_given = tf_config_has(cfg, "ensemble.chunk"); /* before its default is read */
  ps->x0 = calloc(k->dim, sizeof *ps->x0), ps->x = calloc(k->dim, sizeof *ps->x);
  job->scratch = calloc(k->nparams, sizeof *job->scratch);
  if (!ps->x0 || !ps->x || !job->scratch) return tf_fail(err, "out of memory");
  double spread;
  const long long d_chunk = 1;
  long long chunk;
  tf_integrator_settings set;
  job->ode = tf_ode_default_options();
  job->ode.stop = ps->stop = &run->stop; /* before the Poincaré spec copies it */
  if (tf_initial_from_config(cfg, k, ps->x0, &spread, &ps->t0, err) ||
      tf_integrator_settings_read(cfg, ps->t0, true, false, &set, err))
    return -1;
  tf_integrator_take_ode(&set, &job->ode);
  ps->t_end = set.t_end;
  if (tf_poincare_from_config(&ps->spec, cfg, k, &job->ode, err) ||
      tf_param_grid_from_config(&job->grid, cfg, "scan", &job->model, false, err) ||
      tf_config_get_int(cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  if (!ps->spec.record)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'poincare.event' is required by scan.quantity poincare",
                        tf_config_where(cfg, "poincare", where, sizeof where));
  if (spread != 0.0)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.spread': a poincare scan starts every point from "
                        "initial.state exactly (got %g; use 0)",
                        tf_config_where(cfg, "initial.spread", where, sizeof where), spread);
  const uint64_t w = (uint64_t)ps->spec.count * (1 + k->dim);
  ps->rec.samples = calloc(w, sizeof *ps->rec.samples);
  ps->engine = tf_poincare_create(k, &ps->spec);
  if (!ps->rec.samples || !ps->engine) return tf_fail(err, "out of memory");
  if (poincare_lanes_setup(job, set.lanes, err)) return -1;
  tf_column *c = ps->cols;
  c[PC_GRID] = (tf_column){"grid", TF_COLUMN_F64, 2, "scan.x value, scan.y value (NaN)"};
  c[PC_SAMPLES] =
      (tf_column){"poincare", TF_COLUMN_F64, w,
                  "state at the recorded events: count slots of (t, state), NaN-padded"};
  c[PC_RECORDED] = (tf_column){"poincare_recorded", TF_COLUMN_I64, 1, "slots filled by events"};
  c[PC_PERIOD] = (tf_column){"poincare_period", TF_COLUMN_I64, 1,
                             "period found by the early stop (0: none); later slots continue it"};
  c[PC_COUNTS] = (tf_column){"impacts", TF_COLUMN_I64, 4,
                             "impacts, chattering episodes, releases, section crossings"};
  c[PC_STICK] = (tf_column){"stick_time", TF_COLUMN_F64, 1, "time spent sticking"};
  c[PC_WORK] = (tf_column){"work", TF_COLUMN_I64, 2,
                           "accepted integrator steps, right-hand-side evaluations of the stepper"};
  c[PC_VALID] = (tf_column){"valid", TF_COLUMN_I64, 1, "1 if the model accepts the point"};
  job->spec.members = tf_param_grid_points(&job->grid);
  job->spec.chunk = (uint64_t)chunk;
  job->spec.ncols = PC_NCOLS;
  job->spec.cols = ps->cols;
  /* lanes: claims of four lanes' worth of points unless the config says otherwise */
  if (ps->lanes > 1 && !chunk_given) job->spec.chunk = 4 * (uint64_t)ps->lanes;
  return 0;
}

/* integrator.lanes (0 auto, 1 off, else the width): an engine per lane where points run side by
 * side. */
static int poincare_lanes_setup(scan_job *job, int lanes, tf_error *err) {
  poincare_scan *ps = job->pscan;
  ps->lanes = tf_impact_lanes_width(job->model.kernel, &ps->spec.impact, lanes);
  for (int l = 0; ps->lanes > 1 && l < ps->lanes; l++)
    if (!(ps->lane_engines[l] = tf_poincare_create(job->model.kernel, &ps->spec)))
      return tf_fail(err, "out of memory");
  return 0;
}

/* Point `member`'s parameters into p and its row's defaults; false if the model refuses it. */
static bool poincare_prepare(scan_job *job, uint64_t member, void *const *row, double *p) {
  const size_t w = (size_t)job->pscan->spec.count * (1 + job->model.kernel->dim);
  const bool valid = tf_param_grid_point(&job->grid, member, p, row[PC_GRID]);
  *(int64_t *)row[PC_VALID] = valid;
  fill(row[PC_SAMPLES], w, NAN);
  *(int64_t *)row[PC_RECORDED] = 0, *(int64_t *)row[PC_PERIOD] = 0;
  memset(row[PC_COUNTS], 0, 4 * sizeof(int64_t));
  *(double *)row[PC_STICK] = NAN;
  memset(row[PC_WORK], 0, 2 * sizeof(int64_t));
  return valid;
}

/* A point's row from its run's record. */
static int poincare_fill(scan_job *job, void *const *row, const tf_poincare_record *rec) {
  poincare_scan *ps = job->pscan;
  const size_t w = (size_t)ps->spec.count * (1 + job->model.kernel->dim);
  if (tf_stop_requested(ps->stop)) return TF_MEMBER_PENDING;
  const tf_impact_result *r = &rec->result;
  memcpy(row[PC_SAMPLES], rec->samples, w * sizeof(double));
  *(int64_t *)row[PC_RECORDED] = rec->recorded, *(int64_t *)row[PC_PERIOD] = rec->period;
  int64_t *counts = row[PC_COUNTS];
  counts[0] = r->impacts, counts[1] = r->chatters, counts[2] = r->releases, counts[3] = r->sections;
  *(double *)row[PC_STICK] = r->stick_time;
  int64_t *work = row[PC_WORK];
  work[0] = r->work.steps, work[1] = r->work.rhs_evals;
  return r->status;
}

static int poincare_point(void *ctx, uint64_t member, void *const *row) {
  scan_job *job = ctx;
  poincare_scan *ps = job->pscan;
  const size_t dim = job->model.kernel->dim;
  if (!poincare_prepare(job, member, row, job->scratch)) return TF_MEMBER_FAILED;
  memcpy(ps->x, ps->x0, dim * sizeof *ps->x);
  tf_poincare_run(ps->engine, job->scratch, ps->t0, ps->x, ps->t_end, &ps->rec, NULL, NULL, 0);
  return poincare_fill(job, row, &ps->rec);
}

/* A claimed chunk's points side by side in lanes, each as poincare_point computes it. */
static void poincare_chunk(void *ctx, size_t n, const uint64_t *members, void *const *rows,
                           int *status) {
  scan_job *job = ctx;
  poincare_scan *ps = job->pscan;
  const size_t dim = job->model.kernel->dim, np = job->model.kernel->nparams;
  const size_t w = (size_t)ps->spec.count * (1 + dim);
  double *buf = calloc(n * (np + dim + w), sizeof *buf);
  tf_poincare_record *rec = calloc(n, sizeof *rec);
  tf_impact_lane_member *m = calloc(n, sizeof *m);
  if (!buf || !rec || !m) {
    for (size_t i = 0; i < n; i++) status[i] = poincare_point(ctx, members[i], rows + i * PC_NCOLS);
    free(buf), free(rec), free(m);
    return;
  }
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    double *p = buf + i * (np + dim + w), *x = p + np;
    rec[i].samples = x + dim;
    status[i] = TF_MEMBER_FAILED;
    if (!poincare_prepare(job, members[i], rows + i * PC_NCOLS, p)) continue;
    memcpy(x, ps->x0, dim * sizeof *x);
    m[count++] = (tf_impact_lane_member){.p = p, .x = x, .rec = &rec[i]};
  }
  tf_impact_run_lanes(ps->lane_engines, ps->lanes, &ps->spec.impact.loop.ode, dim, ps->t0,
                      ps->t_end, m, count);
  for (size_t i = 0; i < count; i++) {
    const size_t r = (size_t)(m[i].rec - rec);
    status[r] = poincare_fill(job, rows + r * PC_NCOLS, m[i].rec);
  }
  free(buf), free(rec), free(m);
}

/* A two-fold is located once, at model.params: a scan over the parameters would move it. */
static int refuse_twofold(tf_config *cfg, const tf_pws *pws, tf_error *err) {
  if (!pws->has_twofold && !pws->at_twofold) return 0;
  char where[256];
  return tf_fail_code(err, TF_ERR_CONFIG,
                      "%s: key 'model': model '%s' has a two-fold, located once at model.params, "
                      "so a scan "
                      "over its parameters cannot follow it; scan it with quantity lyapunov, or "
                      "run one ensemble per parameter value",
                      tf_config_where(cfg, "model", where, sizeof where), pws->model.kernel->name);
}

/* A Filippov model: its own engine (pws.h) and the section recorded on its steps. */
static int filippov_poincare_setup(tf_run *run, scan_job *job, tf_error *err) {
  tf_config *cfg = run->cfg;
  char where[256];
  poincare_scan *ps = calloc(1, sizeof *ps);
  if (!ps) return tf_fail(err, "out of memory");
  job->pscan = ps;
  ps->pws = calloc(1, sizeof *ps->pws);
  if (!ps->pws) return tf_fail(err, "out of memory");
  const long long d_chunk = 1;
  long long chunk;
  ps->stop = &run->stop;
  if (tf_pws_from_config(ps->pws, cfg, run->comm, ps->stop, err) ||
      tf_model_from_config(&job->model, cfg, run->comm,
                           TF_KIND_BIT(TF_MODEL_FILIPPOV) | TF_KIND_BIT(TF_MODEL_SWITCHES),
                           "scan with scan.quantity poincare", err))
    return -1;
  const tf_kernel *k = job->model.kernel;
  tf_ode_options ode = ps->pws->opts.ode;
  if (tf_poincare_from_config(&ps->spec, cfg, k, &ode, err) ||
      tf_param_grid_from_config(&job->grid, cfg, "scan", &job->model, false, err) ||
      tf_config_get_int(cfg, "ensemble.chunk", &d_chunk, 0, 1000000, &chunk, err) ||
      tf_job_output_from_config(run, &job->spec.compression, &job->spec.flush_interval, err))
    return -1;
  if (!ps->spec.record)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'poincare.event' is required by scan.quantity poincare",
                        tf_config_where(cfg, "poincare", where, sizeof where));
  if (ps->pws->spread != 0.0)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.spread': a poincare scan starts every point from "
                        "initial.state exactly (got %g; use 0)",
                        tf_config_where(cfg, "initial.spread", where, sizeof where),
                        ps->pws->spread);
  if (tf_pws_section_check(&ps->spec, cfg, ps->pws, err) || refuse_twofold(cfg, ps->pws, err))
    return -1;
  const tf_pws *pws = ps->pws;
  const uint64_t n = k->dim, w = (uint64_t)ps->spec.count * (1 + n);
  const uint64_t surfaces = (uint64_t)tf_pws_surfaces(pws);
  const uint64_t slides = (uint64_t)tf_pws_section_slide_slots(&ps->spec);
  const size_t logs = (size_t)pws->max_logged_exits * tf_pws_exit_width(pws) +
                      (size_t)pws->max_logged_events * tf_pws_event_width(pws) +
                      (size_t)pws->trajectory_samples * n + 2 * n + 1;
  ps->logs = calloc(logs, sizeof *ps->logs);
  job->scratch = calloc(k->nparams, sizeof *job->scratch);
  ps->section = tf_pws_section_create(ps->pws, &ps->spec);
  if (!ps->logs || !job->scratch || !ps->section) return tf_fail(err, "out of memory");
  tf_column *c = ps->fcols;
  c[FS_GRID] = (tf_column){"grid", TF_COLUMN_F64, 2, "scan.x value, scan.y value (NaN)"};
  c[FS_SAMPLES] =
      (tf_column){"poincare", TF_COLUMN_F64, w,
                  "state at the section crossings: count slots of (t, state), NaN-padded"};
  c[FS_RECORDED] = (tf_column){"poincare_recorded", TF_COLUMN_I64, 1, "slots filled by events"};
  c[FS_PERIOD] = (tf_column){"poincare_period", TF_COLUMN_I64, 1,
                             "period found by the early stop (0: none); later slots continue it"};
  c[FS_MODE] =
      (tf_column){"poincare_mode", TF_COLUMN_F64, (uint64_t)ps->spec.count,
                  "mode at each crossing (codes of /members/mode of an ensemble), NaN-padded"};
  c[FS_SLIDING] = (tf_column){"sliding", TF_COLUMN_F64, 3 * surfaces,
                              "per switching surface: sliding entries, exits, time sliding, from "
                              "the first recorded crossing to the last"};
  c[FS_SLIDES] = (tf_column){"slides", TF_COLUMN_F64, slides * (3 + n),
                             "sliding entries and exits in that window: slots of (t, surface, 1 "
                             "entry / 0 exit, state), NaN-padded"};
  c[FS_EVENTS] = (tf_column){"events", TF_COLUMN_I64, TF_EVENT_KIND_COUNT,
                             "events of the whole run per kind (evolve.h kinds)"};
  c[FS_WORK] = (tf_column){"work", TF_COLUMN_I64, 2,
                           "accepted integrator steps, right-hand-side evaluations of the stepper"};
  c[FS_VALID] = (tf_column){"valid", TF_COLUMN_I64, 1, "1 if the model accepts the point"};
  job->spec.members = tf_param_grid_points(&job->grid);
  job->spec.chunk = (uint64_t)chunk;
  job->spec.ncols = FS_NCOLS;
  job->spec.cols = ps->fcols;
  return 0;
}

static int filippov_poincare_point(void *ctx, uint64_t member, void *const *row) {
  scan_job *job = ctx;
  poincare_scan *ps = job->pscan;
  tf_pws *pws = ps->pws;
  const tf_kernel *k = job->model.kernel;
  const size_t n = k->dim;
  const bool valid = tf_param_grid_point(&job->grid, member, job->scratch, row[FS_GRID]);
  *(int64_t *)row[FS_VALID] = valid;
  *(int64_t *)row[FS_RECORDED] = 0, *(int64_t *)row[FS_PERIOD] = 0;
  fill(row[FS_SAMPLES], (size_t)ps->spec.count * (1 + n), NAN);
  fill(row[FS_MODE], (size_t)ps->spec.count, NAN);
  fill(row[FS_SLIDING], 3 * (size_t)tf_pws_surfaces(pws), NAN);
  fill(row[FS_SLIDES], (size_t)tf_pws_section_slide_slots(&ps->spec) * (3 + n), NAN);
  memset(row[FS_EVENTS], 0, TF_EVENT_KIND_COUNT * sizeof(int64_t));
  memset(row[FS_WORK], 0, 2 * sizeof(int64_t));
  if (!valid) return TF_MEMBER_FAILED;
  /* the engine holds a pointer to the model's parameters: this point's values go there */
  memcpy(pws->model.params, job->scratch, k->nparams * sizeof *job->scratch);
  double *logs = ps->logs;
  ps->prec = (tf_pws_record){.final_state = logs, .initial_state = logs + n};
  logs += 2 * n;
  ps->prec.exits = logs, logs += (size_t)pws->max_logged_exits * tf_pws_exit_width(pws);
  ps->prec.events = logs, logs += (size_t)pws->max_logged_events * tf_pws_event_width(pws);
  ps->prec.trajectory = logs;
  ps->frec = (tf_pws_section_record){.poincare.samples = row[FS_SAMPLES],
                                     .modes = row[FS_MODE],
                                     .sliding = row[FS_SLIDING],
                                     .slides = row[FS_SLIDES]};
  const int status = tf_pws_section_run(ps->section, member, &ps->prec, &ps->frec);
  if (tf_stop_requested(ps->stop)) return TF_MEMBER_PENDING;
  *(int64_t *)row[FS_RECORDED] = ps->frec.poincare.recorded;
  *(int64_t *)row[FS_PERIOD] = ps->frec.poincare.period;
  int64_t *events = row[FS_EVENTS], *work = row[FS_WORK];
  for (int i = 0; i < TF_EVENT_KIND_COUNT; i++) events[i] = ps->prec.counts[i];
  work[0] = ps->prec.work.steps, work[1] = ps->prec.work.rhs_evals;
  return status;
}

static int poincare_execute(tf_run *run, scan_job *job, tf_error *err) {
  static const char *const fingerprint_paths[] = {"job",  "model",    "initial", "integrator",
                                                  "scan", "poincare", "impact",  NULL};
  static const char *const filippov_fingerprint[] = {
      "job",  "model",        "initial", "integrator", "filippov",
      "exit", "intersection", "scan",    "poincare",   NULL};
  bool resumed;
  const tf_pws *pws = job->pscan->pws;
  hid_t file = tf_results_open(run, pws ? filippov_fingerprint : fingerprint_paths, &resumed, err);
  if (file < 0) return -1;
  int rc = describe(file, job) | tf_results_write_model(file, job->model.kernel, job->model.params);
  char names[512];
  tf_join_state_names(job->model.kernel, names, sizeof names);
  rc |= tf_h5_attr_names(file, "state_names", names);
  if (pws) {
    char kinds[256] = "";
    for (int i = 0; i < TF_EVENT_KIND_COUNT; i++)
      snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s", i ? "," : "",
               tf_event_kind_name((tf_event_kind)i));
    rc |= tf_h5_attr_names(file, "event_kinds", kinds) |
          tf_h5_attr_string(file, "modes",
                            pws->switches ? "sum over switching functions i of (s_i + 1) 3^i, "
                                            "s_i -1 slip-, 0 stick, 1 slip+"
                                          : "-1 slip-, 0 sliding, 1 slip+, 2 rest, 3 along "
                                            "the intersection");
  }
  if (rc) rc = tf_fail_code(err, TF_ERR_IO, "cannot describe the scan in '%s'", run->output_path);
  job->spec.run = pws ? filippov_poincare_point : poincare_point;
  if (!pws && job->pscan->lanes > 1) job->spec.run_chunk = poincare_chunk;
  job->spec.ctx = job;
  tf_ensemble_outcome out = {0};
  if (rc == 0) rc = tf_ensemble_execute(run, &file, &job->spec, resumed, &out, err);
  tf_json_string(run->summary, "model", job->model.kernel->name);
  tf_json_string(run->summary, "quantity", "poincare");
  tf_json_string(run->summary, "integrator", tf_stepper_type_name(job->ode.type));
  if (!pws && tf_config_has(run->cfg, "integrator.lanes")) /* as the ensemble job says it */
    tf_json_integer(run->summary, "lanes", job->pscan->lanes);
  tf_json_integer(run->summary, "points", (long long)job->spec.members);
  tf_json_integer(run->summary, "failed", tf_member_failures(out.status_counts));
  return tf_ensemble_finish(run, file, &out, rc, err);
}

static void poincare_destroy(scan_job *job) {
  poincare_scan *ps = job->pscan;
  if (!ps) return;
  tf_poincare_destroy(ps->engine);
  for (int l = 0; l < 16; l++) tf_poincare_destroy(ps->lane_engines[l]);
  free(ps->rec.samples), free(ps->x0), free(ps->x);
  tf_pws_section_destroy(ps->section);
  if (ps->pws) tf_pws_destroy(ps->pws);
  free(ps->pws), free(ps->logs);
  free(ps);
  job->pscan = NULL;
}

static void destroy(tf_run *run) {
  if (tf_devs_job_wanted(run)) return tf_devs_job_destroy(run);
  scan_job *job = run->job_data;
  if (!job) return;
  stationary_destroy(job);
  poincare_destroy(job);
  tf_param_grid_destroy(&job->grid);
  tf_model_destroy(&job->model);
  free(job->scratch);
  free(job);
  run->job_data = NULL;
}

const tf_job tf_job_scan = {
    .name = "scan",
    .doc =
        "the Lyapunov spectrum, or stationary states by continuation, over a grid of one or "
        "two model parameters, spread over ranks",
    .setup = setup,
    .execute = execute,
    .destroy = destroy,
    .splittable = true,
    .kinds = TF_KINDS_ALL,
};
