/* pws.c — see pws.h. */
#include "pws.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "event_loop.h"
#include "flow.h"
#include "integrator_settings.h"
#include "member_engine.h"
#include "rng.h"
#include "sampling.h"
#include "status.h"
#include "switches.h"

size_t tf_pws_exit_width(const tf_pws *pws) {
  return 4 + pws->model.kernel->dim;
}
size_t tf_pws_event_width(const tf_pws *pws) {
  return 4 + pws->model.kernel->dim;
}

static int read_filippov_options(tf_pws *pws, tf_config *cfg, tf_error *err) {
  pws->opts = tf_evolve_default_options();
  const double d_event_tol = 1e-12, d_rate = 1e5, d_capture = 1e-6, d_meet_tol = 1e-8,
               d_departure = 1e-9;
  const long long d_max_events = 1000000;
  long long max_events;
  tf_integrator_settings set;
  if (tf_integrator_settings_read(cfg, pws->t0, true, false, &set, err)) return -1;
  tf_integrator_take_ode(&set, &pws->opts.ode);
  /* The modes' fields are continued across the switching surface, with a kink there where a
   * field takes |h| (the wheel's slip law): the step's dense output, which interpolates across
   * the kink, moved the Fig. 5 event times by 3e-4 (DOPRI5 at rtol 1e-10, against 2.6e-8 with
   * retakes; docs/BENCHMARKS.md). */
  if (pws->opts.ode.dense_landing)
    return tf_config_fail_key(
        cfg, "integrator.landing", err,
        "dense is not taken by Filippov models: a mode's field continued across the switching "
        "surface may have a kink at the event (the wheel's |h|), where the step's dense output "
        "is not accurate (Fig. 5 event times off by 3e-4 at rtol 1e-10); remove the key");
  pws->t_end = set.t_end;
  pws->lanes = set.lanes;
  if (tf_config_get_double(cfg, "filippov.event_tol", &d_event_tol, 1e-16, 1e-3,
                           &pws->opts.event_tol, err) ||
      tf_config_get_double(cfg, "filippov.max_event_rate", &d_rate, 1.0, INFINITY,
                           &pws->opts.max_event_rate, err) ||
      tf_config_get_int(cfg, "filippov.max_events", &d_max_events, 1, LLONG_MAX, &max_events,
                        err) ||
      tf_config_get_double(cfg, "filippov.capture_radius", &d_capture, 1e-14, 1.0,
                           &pws->opts.capture_radius, err) ||
      tf_config_get_double(cfg, "filippov.intersection_tol", &d_meet_tol, 1e-14, 1e-3,
                           &pws->opts.meet_tol, err) ||
      tf_config_get_double(cfg, "filippov.intersection_departure", &d_departure, 1e-14, 1e-3,
                           &pws->opts.meet_departure, err))
    return -1;
  pws->opts.max_events = (long)max_events;
  return 0;
}

static int read_logging(tf_pws *pws, tf_config *cfg, tf_error *err) {
  const long long d_exits = 64, d_events = 64;
  long long exits, events;
  if (tf_config_get_int(cfg, "exit.max_logged", &d_exits, 0, 100000, &exits, err) ||
      tf_config_get_int(cfg, "output.event_log", &d_events, 0, 100000, &events, err) ||
      tf_member_read_trajectory_samples(cfg, &pws->trajectory_samples, err))
    return -1;
  pws->max_logged_exits = (long)exits;
  pws->max_logged_events = (long)events;
  return 0;
}

/* Finds the model's two-fold (if the kernel proposes one) and prepares the exit policy. */
static int find_twofold(tf_pws *pws, tf_config *cfg, tf_error *err) {
  const tf_kernel *k = pws->model.kernel;
  double guess[TF_MAX_DIM], x[TF_MAX_DIM];
  /* several switching functions: no two-fold of one surface to start at */
  const tf_filippov_ops *f = k->kind == TF_MODEL_FILIPPOV ? k->filippov : NULL;
  if (!f || !f->twofold_guess || f->twofold_guess(pws->model.params, guess)) {
    if (pws->at_twofold) {
      char where[256];
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'initial.at_twofold': model '%s' has no two-fold to start at",
                          tf_config_where(cfg, "initial.at_twofold", where, sizeof where), k->name);
    }
    return 0;
  }
  int iterations;
  if (tf_twofold_locate(k, pws->model.params, guess, 1e-12, 50, x, &iterations, err)) {
    /* the search starts from the kernel's guess for these parameters: they are the input */
    char where[256], why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.params': %s (the search starts from model '%s''s guess "
                        "for these parameters)",
                        tf_config_where(cfg, "model.params", where, sizeof where), why, k->name);
  }
  if (tf_twofold_analyze(k, pws->model.params, x, &pws->twofold, err))
    return tf_config_fail_key(cfg, "model.params", err, "%s", err->msg); /* it copies first */
  pws->has_twofold = true;
  if (!pws->twofold.nondeterministic) {
    if (pws->at_twofold) {
      char where[256];
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'initial.at_twofold': the two-fold of '%s' is %s, not "
                          "nondeterministic; there is no exit to choose",
                          tf_config_where(cfg, "initial.at_twofold", where, sizeof where), k->name,
                          tf_twofold_class_name(pws->twofold.cls));
    }
    return 0;
  }
  return tf_exit_policy_setup(&pws->policy, k, pws->model.params, &pws->twofold, err);
}

int tf_pws_from_config(tf_pws *pws, tf_config *cfg, MPI_Comm comm, tf_stop_token *stop,
                       tf_error *err) {
  memset(pws, 0, sizeof *pws);
  const bool d_false = false;
  const long long d_seed = 1;
  long long seed;
  if (tf_model_from_config(&pws->model, cfg, comm,
                           TF_KIND_BIT(TF_MODEL_FILIPPOV) | TF_KIND_BIT(TF_MODEL_SWITCHES),
                           "ensemble", err) ||
      tf_initial_from_config(cfg, pws->model.kernel, pws->x0, &pws->spread, &pws->t0, err) ||
      tf_config_get_bool(cfg, "initial.at_twofold", &d_false, &pws->at_twofold, err) ||
      read_filippov_options(pws, cfg, err) || read_logging(pws, cfg, err) ||
      tf_config_get_int(cfg, "ensemble.seed", &d_seed, 0, LLONG_MAX, &seed, err) ||
      tf_exit_policy_from_config(&pws->policy, cfg, err) ||
      tf_intersection_policy_from_config(&pws->choice, cfg, &pws->policy, err) ||
      find_twofold(pws, cfg, err))
    return -1;
  pws->seed = (uint64_t)seed;
  pws->opts.ode.stop = stop; /* before the engines copy the options */
  pws->opts.meet_escape_distance = pws->choice.escape_distance;
  pws->opts.meet_escape_margin = pws->policy.margin;
  if (pws->model.kernel->kind == TF_MODEL_SWITCHES) {
    tf_switches_options so = tf_switches_default_options();
    so.ode = pws->opts.ode, so.event_tol = pws->opts.event_tol;
    so.max_event_rate = pws->opts.max_event_rate, so.max_events = pws->opts.max_events;
    so.sigma_tol = pws->opts.meet_tol;
    pws->switches = tf_switches_create(pws->model.kernel, pws->model.params, &so);
    return pws->switches ? 0 : tf_fail(err, "cannot set up the event-driven integrator");
  }
  pws->evolve = tf_evolve_create(pws->model.kernel, pws->model.params, &pws->opts);
  if (!pws->evolve) return tf_fail(err, "cannot set up the event-driven integrator");
  if (pws->has_twofold)
    tf_evolve_set_twofold(pws->evolve, pws->twofold.x, pws->twofold.nondeterministic);
  return 0;
}

void tf_pws_destroy(tf_pws *pws) {
  tf_evolve_destroy(pws->evolve);
  tf_switches_destroy(pws->switches);
  tf_exit_policy_destroy(&pws->policy);
  tf_intersection_policy_destroy(&pws->choice);
  tf_model_destroy(&pws->model);
  memset(pws, 0, sizeof *pws);
}

/* --- one member ----------------------------------------------------------------------------- */

typedef struct member_run {
  tf_pws *pws;
  tf_evolve *evolve; /* the member's engine (one switching function), else NULL */
  uint64_t member;
  tf_pws_record *rec;
  long logged_events, next_sample;
  bool replay_exhausted;
  int choice_code; /* TF_DRAW_* of the rule behind the choice being made */
} member_run;

/* One draw in the log: (t, u, side, kind, state), kind TF_DRAW_*. */
static void log_exit(member_run *mr, double t, double u, int side, int kind, const double *x) {
  const long v = mr->rec->visits++;
  if (v >= mr->pws->max_logged_exits) return;
  const size_t w = tf_pws_exit_width(mr->pws), n = mr->pws->model.kernel->dim;
  double *slot = mr->rec->exits + (size_t)v * w;
  slot[0] = t, slot[1] = u, slot[2] = side, slot[3] = kind;
  memcpy(slot + 4, x, n * sizeof *x);
}

static int choose_exit(member_run *mr, double t, double *x, int *side) {
  const double u =
      tf_exit_policy_draw(&mr->pws->policy, mr->pws->seed, mr->member, mr->rec->visits);
  if (isnan(u)) {
    mr->replay_exhausted = true;
    return -1;
  }
  tf_exit_policy_point(&mr->pws->policy, u, x, side);
  log_exit(mr, t, u, *side, TF_DRAW_TWOFOLD_EXIT, x);
  return 0;
}

static int on_exit(void *ctx, long visit, double t, const double *x, double *x_out, int *side) {
  (void)visit, (void)x; /* the member's own visit count includes a start at the two-fold */
  return choose_exit(ctx, t, x_out, side);
}

/* A nondeterministic departure from an intersection of switching surfaces: chosen by the
 * intersection policy, numbered and logged like a two-fold exit (same stream, same log, so
 * replay covers both), with the event that uses it. */
static int on_choice(void *ctx, const tf_meet_arrival *a, double *u) {
  member_run *mr = ctx;
  if (tf_intersection_policy_choose(&mr->pws->choice, mr->pws->seed, mr->member, mr->rec->visits, a,
                                    u, &mr->choice_code)) {
    mr->replay_exhausted = true;
    return -1;
  }
  return 0;
}

/* A nondeterministic mode of a model with several switching functions: a draw of the exit
 * policy (the departures are modes, not limit directions). */
static int on_switch_choice(void *ctx, double *u) {
  member_run *mr = ctx;
  mr->choice_code = TF_DRAW_CHOICE_UNIFORM;
  *u = tf_exit_policy_draw(&mr->pws->policy, mr->pws->seed, mr->member, mr->rec->visits);
  if (isnan(*u)) {
    mr->replay_exhausted = true;
    return -1;
  }
  return 0;
}

static void on_event(void *ctx, const tf_event *ev) {
  member_run *mr = ctx;
  const tf_pws_watch *watch = mr->pws->watch;
  if (watch && watch->event) watch->event(watch->ctx, ev->t, ev->from, ev->to, ev->x);
  if (ev->kind == TF_EVENT_MEET_CHOICE) log_exit(mr, ev->t, ev->u, ev->to, mr->choice_code, ev->x);
  if (mr->logged_events >= mr->pws->max_logged_events) return;
  const size_t w = tf_pws_event_width(mr->pws), n = mr->pws->model.kernel->dim;
  double *slot = mr->rec->events + (size_t)mr->logged_events++ * w;
  slot[0] = ev->t, slot[1] = ev->kind, slot[2] = ev->from, slot[3] = ev->to;
  memcpy(slot + 4, ev->x, n * sizeof *ev->x);
}

/* Several switching functions: the same log, in the codim-1 engine's words (a contact sticking
 * is sliding on its surface); modes are tf_sw_mode_code. */
static const tf_event_kind switches_kinds[TF_SW_EVENT_KIND_COUNT] = {
    [TF_SW_ARRIVE] = TF_EVENT_SLIDE_START,
    [TF_SW_CROSS] = TF_EVENT_CROSSING,
    [TF_SW_RELEASE] = TF_EVENT_SLIDE_END,
    [TF_SW_CHOICE] = TF_EVENT_MEET_CHOICE,
    [TF_SW_UNDEFINED] = TF_EVENT_MEET_UNDEFINED};

static void on_switches_event(void *ctx, const tf_sw_event *ev) {
  const tf_event e = {switches_kinds[ev->kind], ev->t,           ev->x,
                      (tf_mode)ev->from,        (tf_mode)ev->to, ev->u};
  on_event(ctx, &e);
}

static void fill_nan(double *v, size_t n) {
  for (size_t i = 0; i < n; i++) v[i] = NAN;
}

static double sample_time(const tf_pws *pws, long i) {
  const long last = pws->trajectory_samples - 1;
  return i == last ? pws->t_end : pws->t0 + (pws->t_end - pws->t0) * (double)i / (double)last;
}

void tf_pws_dense(const tf_pws *pws, double ts, double *x) {
  if (pws->switches)
    tf_switches_dense(pws->switches, ts, x);
  else
    tf_evolve_dense(pws->evolve, ts, x);
}

void tf_pws_last_step(const tf_pws *pws, double step[2]) {
  const tf_stepper *s =
      pws->switches ? tf_switches_stepper(pws->switches) : tf_evolve_stepper(pws->evolve);
  step[0] = tf_stepper_last_step_start(s), step[1] = tf_stepper_last_step_end(s);
}

static void sample_step(member_run *mr, double ta, double tb) {
  const tf_pws *pws = mr->pws;
  const size_t n = pws->model.kernel->dim;
  for (; mr->next_sample < pws->trajectory_samples; mr->next_sample++) {
    const double ts = sample_time(pws, mr->next_sample);
    if (ts > tb || ts < ta) break;
    double *row = mr->rec->trajectory + (size_t)mr->next_sample * n;
    if (mr->evolve)
      tf_evolve_dense(mr->evolve, ts, row);
    else
      tf_pws_dense(pws, ts, row);
    /* the loop ends the run at its next step */
    if (tf_stop_point(pws->opts.ode.stop)) {
      mr->next_sample++;
      break;
    }
  }
}

/* The samples a stopping step took beyond the stop are not the member's: NaN again. */
static void unsample_after(member_run *mr, double t_stop) {
  const size_t n = mr->pws->model.kernel->dim;
  for (; mr->next_sample > 0 && sample_time(mr->pws, mr->next_sample - 1) > t_stop;
       mr->next_sample--)
    fill_nan(mr->rec->trajectory + (size_t)(mr->next_sample - 1) * n, n);
}

static void watched_step(member_run *mr, double ta, double tb) {
  tf_pws *pws = mr->pws;
  const tf_pws_watch *watch = pws->watch;
  if (pws->trajectory_samples > 0) sample_step(mr, ta, tb);
  if (pws->on_step && !(watch && watch->stop)) pws->on_step(pws->on_step_ctx, ta, tb);
  if (!watch || !watch->step || watch->stop) return;
  watch->step(watch->ctx, pws, ta, tb);
  if (!watch->stop) return;
  if (pws->trajectory_samples > 0) unsample_after(mr, watch->t_stop);
  if (pws->switches)
    tf_switches_request_stop(pws->switches);
  else
    tf_evolve_request_stop(pws->evolve);
}

/* A member its watch stopped ends where the watch said (the engine ran to a step end after
 * it, integrating and logging nothing beyond). */
static int watched_end(const tf_pws *pws, int status, double *x, tf_pws_record *rec) {
  const tf_pws_watch *watch = pws->watch;
  if (!watch || !watch->stop) return status;
  memcpy(x, watch->x_stop, pws->model.kernel->dim * sizeof *x);
  rec->t_final = watch->t_stop;
  return TF_MEMBER_OK;
}

static void on_step(void *ctx, const tf_evolve *e, double ta, double tb) {
  (void)e;
  watched_step(ctx, ta, tb);
}

static void on_switches_step(void *ctx, const tf_switches *s, double ta, double tb) {
  (void)s;
  watched_step(ctx, ta, tb);
}

/* Whether a member's steps are seen by anyone (samples or a watch). */
static bool steps_watched(const tf_pws *pws) {
  return pws->trajectory_samples > 0 || pws->on_step || (pws->watch && pws->watch->step);
}

static int run_switches(tf_pws *pws, member_run *mr, double *x, tf_pws_record *rec) {
  tf_switches_set_callbacks(pws->switches, on_switches_event, on_switch_choice,
                            steps_watched(pws) ? on_switches_step : NULL, mr);
  const tf_switches_result r = tf_switches_run(pws->switches, pws->t0, x, pws->t_end);
  rec->t_final = r.t;
  rec->work = r.work;
  rec->final_mode = tf_sw_mode_code(pws->model.kernel->switches->nswitches, r.mode);
  memset(rec->counts, 0, sizeof rec->counts);
  for (int i = 0; i < TF_SW_EVENT_KIND_COUNT; i++) rec->counts[switches_kinds[i]] += r.counts[i];
  return r.status;
}

const char *tf_pws_mode_name(const tf_pws *pws, int mode, char *buf, size_t n) {
  if (!pws->switches) return tf_mode_name((tf_mode)mode);
  static const char *const names[3] = {"slip-", "stick", "slip+"};
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < pws->model.kernel->switches->nswitches && len < n; i++, mode /= 3)
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", names[mode % 3]);
  return buf;
}

/* A member's start: its logs cleared, its initial state (an exit from the two-fold: *side the
 * side it leaves to) into x and its record; false if it could not start (status failed). */
static bool begin_member(member_run *mr, double *x, int *side) {
  tf_pws *pws = mr->pws;
  tf_pws_record *rec = mr->rec;
  const size_t n = pws->model.kernel->dim;
  fill_nan(rec->exits, (size_t)pws->max_logged_exits * tf_pws_exit_width(pws));
  fill_nan(rec->events, (size_t)pws->max_logged_events * tf_pws_event_width(pws));
  fill_nan(rec->trajectory, (size_t)pws->trajectory_samples * n);
  rec->visits = 0;
  *side = 0;
  if (pws->at_twofold) {
    if (choose_exit(mr, pws->t0, x, side)) return false;
  } else if (!pws->sampling || !tf_sampling_state(pws->sampling, mr->member, x)) {
    memcpy(x, pws->x0, n * sizeof *x);
    if (pws->spread > 0) {
      double z[TF_MAX_DIM];
      tf_rng_normals((tf_rng_key){pws->seed, mr->member}, 0, TF_RNG_INITIAL, n, z);
      for (size_t i = 0; i < n; i++) x[i] += pws->spread * z[i];
    }
  }
  memcpy(rec->initial_state, x, n * sizeof *x);
  if (pws->trajectory_samples > 0) {
    memcpy(rec->trajectory, x, n * sizeof *x);
    mr->next_sample = 1;
  }
  if (pws->watch) pws->watch->stop = false;
  return true;
}

/* The member's engine set up for its run (callbacks to mr) and begun from (t0, x). */
static void begin_evolve(member_run *mr, const double *x, int side) {
  tf_pws *pws = mr->pws;
  tf_evolve *e = mr->evolve;
  tf_evolve_set_callbacks(e, on_event, on_exit, mr);
  tf_evolve_set_choice(e, on_choice);
  tf_evolve_set_step_callback(e, steps_watched(pws) ? on_step : NULL);
  tf_evolve_begin(e, pws->t0, x, pws->t_end, side);
}

/* The end of the member's run on its engine: its record filled, its status. */
static int end_evolve(member_run *mr, double *x) {
  tf_pws *pws = mr->pws;
  tf_pws_record *rec = mr->rec;
  const tf_evolve_result r = tf_evolve_end(mr->evolve, x);
  rec->t_final = r.t;
  const int status = watched_end(pws, r.status, x, rec);
  memcpy(rec->final_state, x, pws->model.kernel->dim * sizeof *x);
  rec->work = r.work;
  rec->final_mode = r.mode;
  memcpy(rec->counts, r.counts, sizeof rec->counts);
  if (pws->at_twofold) rec->counts[TF_EVENT_EXIT]++;
  return status;
}

int tf_pws_run_member(tf_pws *pws, uint64_t member, tf_pws_record *rec) {
  const size_t n = pws->model.kernel->dim;
  member_run mr = {.pws = pws, .evolve = pws->evolve, .member = member, .rec = rec};
  double x[TF_MAX_DIM];
  int side;
  if (!begin_member(&mr, x, &side)) return TF_MEMBER_FAILED;
  if (pws->switches) {
    const int status = watched_end(pws, run_switches(pws, &mr, x, rec), x, rec);
    memcpy(rec->final_state, x, n * sizeof *x);
    return status;
  }
  begin_evolve(&mr, x, side);
  tf_event_loop_drive(tf_evolve_loop(pws->evolve));
  return end_evolve(&mr, x);
}

/* --- members side by side ------------------------------------------------------------------- */

struct tf_pws_lane {
  member_run mr;
  double x[TF_MAX_DIM];
};

tf_pws_lane *tf_pws_lane_create(tf_pws *pws) {
  if (!tf_pws_lanes_possible(pws)) return NULL;
  tf_pws_lane *lane = calloc(1, sizeof *lane);
  if (!lane) return NULL;
  lane->mr.pws = pws;
  lane->mr.evolve = tf_evolve_create(pws->model.kernel, pws->model.params, &pws->opts);
  if (!lane->mr.evolve) {
    free(lane);
    return NULL;
  }
  if (pws->has_twofold)
    tf_evolve_set_twofold(lane->mr.evolve, pws->twofold.x, pws->twofold.nondeterministic);
  return lane;
}

void tf_pws_lane_destroy(tf_pws_lane *lane) {
  if (!lane) return;
  tf_evolve_destroy(lane->mr.evolve);
  free(lane);
}

bool tf_pws_lanes_possible(const tf_pws *pws) {
  return pws->evolve && !pws->watch;
}

bool tf_pws_lane_begin(tf_pws_lane *lane, uint64_t member, tf_pws_record *rec) {
  member_run *mr = &lane->mr;
  tf_pws *pws = mr->pws;
  *mr = (member_run){.pws = pws, .evolve = mr->evolve, .member = member, .rec = rec};
  int side;
  if (!begin_member(mr, lane->x, &side)) return false;
  begin_evolve(mr, lane->x, side);
  return true;
}

tf_evolve *tf_pws_lane_evolve(tf_pws_lane *lane) {
  return lane->mr.evolve;
}

int tf_pws_lane_end(tf_pws_lane *lane) {
  return end_evolve(&lane->mr, lane->x);
}
