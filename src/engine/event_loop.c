/* event_loop.c — see event_loop.h.  One loop object per engine workspace, reused across
 * members. */
#include "event_loop.h"

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_roots.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "crash_point.h"
#include "event_locate.h"
#include "status.h"

/* Event functions are sampled at the stepper type's samples_per_step points of a step, to
 * catch two crossings inside one step (4 for DOPRI5; DOP853's steps are several times longer,
 * so it takes 8, on its cheap Hermite estimate first: find_event). */
enum { NEWTON_STEPS = 3, NUDGES = 12 };

struct tf_event_loop {
  size_t n, m, na;
  int samples; /* event samples per step */
  tf_event_loop_ops ops;
  void *ctx;
  tf_event_loop_options opt;
  tf_stepper *stepper;
  tf_drive drive; /* the outer loop's checks and hooks; max_steps the run's budget */
  gsl_root_fsolver *root;
  int which;        /* event function being located */
  bool change_seen; /* tf_event_loop_change_seen before the step's stepped */
  /* na each: the step's start, dense-output samples, the locator's evaluations;
   * n each: field and probe for the landing's slope */
  double *start, *sample, *work, *field, *probe;
  /* Lyapunov bookkeeping (m > 0) */
  gsl_matrix *qr_a, *qr_q, *qr_r;
  gsl_vector *qr_tau;
  double *segment_sums, *total_sums, *exponents;
  double segment_start, total_time, next_qr;
  int segments;
  double *frame;   /* n m: the tangent vectors where the last run ended */
  bool have_frame; /* ... if it ended ok: the next run continues them */
  /* the run in progress (tf_event_loop_begin .. end) */
  double t, t_end, t_start, t_limit, window_start;
  double *x;
  const long *events;
  long window_events;
  bool halt; /* tf_event_loop_request_stop */
  tf_event_loop_result res;
};

/* The hooks of the loop's drive (tf_event_loop_drive). */
static double drive_before(void *ctx, double t, const double *x, double t_end);
static int drive_accepted(void *ctx, const tf_stepper *s, double ta, double t, const double *x);

tf_event_loop *tf_event_loop_create(size_t n, size_t m, const tf_event_loop_ops *ops, void *ctx,
                                    const tf_event_loop_options *opts) {
  tf_event_loop *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  l->n = n, l->m = m, l->na = n + n * m;
  l->ops = *ops, l->ctx = ctx, l->opt = *opts;
  l->samples = tf_stepper_type_samples(opts->ode.type);
  l->stepper = tf_stepper_create(l->na);
  l->root = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  l->start = calloc(3 * l->na + 2 * n + 3 * (m + 1) + n * m, sizeof *l->start);
  if (!l->stepper || !l->root || !l->start) {
    tf_event_loop_destroy(l);
    return NULL;
  }
  l->sample = l->start + l->na, l->work = l->sample + l->na;
  l->field = l->work + l->na, l->probe = l->field + n;
  l->segment_sums = l->probe + n, l->total_sums = l->segment_sums + m + 1;
  l->exponents = l->total_sums + m + 1, l->frame = l->exponents + m + 1;
  if (m > 0) {
    l->qr_a = gsl_matrix_alloc(n, m), l->qr_q = gsl_matrix_alloc(n, n);
    l->qr_r = gsl_matrix_alloc(n, m), l->qr_tau = gsl_vector_alloc(m < n ? m : n);
    if (!l->qr_a || !l->qr_q || !l->qr_r || !l->qr_tau) {
      tf_event_loop_destroy(l);
      return NULL;
    }
  }
  tf_stepper_setup(l->stepper, ops->rhs, ctx, &l->opt.ode);
  l->drive = (tf_drive){.max_steps = l->opt.ode.max_steps > 0 ? l->opt.ode.max_steps : LONG_MAX,
                        .stop = l->opt.ode.stop,
                        .stop_first = true,
                        .before = drive_before,
                        .accepted = drive_accepted,
                        .ctx = l};
  return l;
}

void tf_event_loop_destroy(tf_event_loop *l) {
  if (!l) return;
  tf_stepper_destroy(l->stepper);
  if (l->root) gsl_root_fsolver_free(l->root);
  free(l->start);
  if (l->qr_a) gsl_matrix_free(l->qr_a);
  if (l->qr_q) gsl_matrix_free(l->qr_q);
  if (l->qr_r) gsl_matrix_free(l->qr_r);
  if (l->qr_tau) gsl_vector_free(l->qr_tau);
  free(l);
}

const tf_stepper *tf_event_loop_stepper(const tf_event_loop *l) {
  return l->stepper;
}

/* --- finding the event in a step ------------------------------------------------------------ */

static double event_at(double t, void *params) {
  tf_event_loop *l = params;
  double g[TF_EVENT_LOOP_MAX_FUNCTIONS];
  tf_stepper_dense(l->stepper, t, l->work);
  l->ops.events(l->ctx, t, l->work, g);
  return g[l->which];
}

/* The state at sample time t: on the dense output, or with `cheap` on the stepper's estimate
 * (tf_stepper_sample), which costs no evaluations where the dense output does (DOP853). */
static void sample_state(tf_event_loop *l, bool cheap, double t) {
  if (cheap)
    tf_stepper_sample(l->stepper, t, l->sample);
  else
    tf_stepper_dense(l->stepper, t, l->sample);
}

/* The earliest event in the step [t0, t1]: sign changes of any event function between samples
 * of the dense output, each located to event_tol.  Returns the event's index or -1.  Where the
 * dense output costs evaluations, the samples are first taken on the cheap estimate, and only
 * a sign change there makes the step look again on the dense output. */
static int find_event(tf_event_loop *l, double t0, double t1, double *te) {
  /* a caller that screened the cheap samples and saw a sign change: the dense output at once,
   * where the cheap pass would go on finding it */
  bool cheap = !tf_stepper_sample_is_exact(l->stepper) && !l->change_seen;
  l->change_seen = false;
again:;
  /* g_prev, g: the event functions at the samples ta, tb; raw_prev: g_prev as evaluated */
  double g_prev[TF_EVENT_LOOP_MAX_FUNCTIONS], g[TF_EVENT_LOOP_MAX_FUNCTIONS],
      raw_prev[TF_EVENT_LOOP_MAX_FUNCTIONS];
  sample_state(l, cheap, t0);
  const int count = l->ops.events(l->ctx, t0, l->sample, raw_prev);
  /* At the start of a step the state is on the domain's boundary after a transition: count it
   * as inside, so only a departure to the wrong side is an event. */
  for (int j = 0; j < count; j++) g_prev[j] = fmax(raw_prev[j], 0.0);
  double ta = t0;
  for (int s = 1; s <= l->samples; s++) {
    const double tb = s == l->samples ? t1 : t0 + (t1 - t0) * s / l->samples;
    sample_state(l, cheap, tb);
    l->ops.events(l->ctx, tb, l->sample, g);
    int first = -1;
    double t_first = tb;
    for (int j = 0; j < count; j++) {
      if (!(g[j] < 0.0 && g_prev[j] >= 0.0)) continue;
      if (cheap) {
        cheap = false;
        goto again;
      }
      l->which = j;
      /* the samples are on the dense output here (not cheap), as event_at evaluates */
      const double tj =
          tf_event_locate_from(l->root, event_at, l, ta, raw_prev[j], tb, g[j], l->opt.event_tol);
      if (first < 0 || tj < t_first) first = j, t_first = tj;
    }
    if (first >= 0) {
      *te = t_first;
      return first;
    }
    memcpy(g_prev, g, sizeof g);
    memcpy(raw_prev, g, sizeof g);
    ta = tb;
  }
  return -1;
}

/* --- landing on the event ------------------------------------------------------------------- */

static double event_value(tf_event_loop *l, int which, double t, const double *x) {
  double g[TF_EVENT_LOOP_MAX_FUNCTIONS];
  l->ops.events(l->ctx, t, x, g);
  return g[which];
}

/* Rate of change of event function `which` along the current mode's flow at x: a central
 * difference along the field. */
static double event_slope(tf_event_loop *l, int which, double t, const double *x) {
  const size_t n = l->n;
  double *f = l->field, *y = l->probe;
  l->ops.field(l->ctx, t, x, f);
  double fnorm = 0, scale = 1;
  for (size_t i = 0; i < n; i++) fnorm = fmax(fnorm, fabs(f[i])), scale = fmax(scale, fabs(x[i]));
  if (fnorm == 0.0) return 0.0;
  const double d = 1e-6 * scale / fnorm;
  for (size_t i = 0; i < n; i++) y[i] = x[i] + d * f[i];
  const double gp = event_value(l, which, t, y);
  for (size_t i = 0; i < n; i++) y[i] = x[i] - d * f[i];
  const double gm = event_value(l, which, t, y);
  return (gp - gm) / (2 * d);
}

/* The state x at time te of the step from t_start to t_step_end being landed in: the step
 * retaken to te under error control, or with integrator.landing dense its dense output, which
 * costs no step.  A time past the step's end is not on its dense output: there the step is
 * retaken, and every later state of the landing too (the retake replaced the dense output).
 * *retaken: a retake from this step's start has been made (the next may reuse its field). */
static int landing_state(tf_event_loop *l, double t_start, double t_step_end, double te, double *x,
                         bool *retaken) {
  if (l->opt.ode.dense_landing && !*retaken && te <= t_step_end) {
    tf_stepper_dense(l->stepper, te, x);
    return 0;
  }
  const bool again = *retaken;
  *retaken = true;
  return tf_stepper_step_to(l->stepper, t_start, l->start, l->na, te, x, again);
}

/* Takes the state at the event located at *te (landing_state), then corrects *te by Newton
 * steps on that state.  The located time is a root of the dense output, whose error the step
 * control does not bound (DOPRI5's is 4th order against the step's 5th); near a fold, where
 * the event function changes slowly, that error alone moves event times by ~1e-6 at rtol 1e-10.
 * So by default (landing retake) the state is the step retaken to the time under error
 * control; landing dense keeps the dense output's state, on which the corrections only refine
 * the located root (docs/CONFIG.md says where that is accurate enough).
 * A correction larger than a tenth of the step is a graze, not a located root: kept as is.
 * Event functions the engine does not call smooth (a distance to a codimension-2 set, whose
 * slope the central difference cannot resolve near it) keep the located time. */
static int land_on_event(tf_event_loop *l, int which, double t_start, double t_step_end, double *te,
                         double *x) {
  /* every retake after the first starts from the same point: the stepper keeps its field */
  bool retaken = false;
  if (landing_state(l, t_start, t_step_end, *te, x, &retaken)) return -1;
  const double max_shift = 0.1 * (t_step_end - t_start);
  const bool newton = !l->ops.smooth || l->ops.smooth(l->ctx, which);
  double g = NAN; /* the event function at (*te, x) where known */
  for (int it = 0; newton && it < NEWTON_STEPS; it++) {
    g = event_value(l, which, *te, x);
    const double slope = event_slope(l, which, *te, x);
    if (!(slope < 0.0)) break; /* event functions fall through their events */
    const double dt = -g / slope;
    if (!(fabs(dt) > l->opt.event_tol) || fabs(dt) > max_shift || *te + dt <= t_start) break;
    *te += dt, g = NAN;
    if (landing_state(l, t_start, t_step_end, *te, x, &retaken)) return -1;
  }
  /* Continue from just past the root, where the event function has changed sign: from the
   * root itself round-off decides on which side the next mode starts, and at a fold (sliding
   * ending where the field turns tangent) it starts on the wrong one and falls back at once. */
  for (int k = 0; k < NUDGES; k++, g = NAN) {
    if ((isnan(g) ? event_value(l, which, *te, x) : g) < 0.0) break;
    *te += ldexp(l->opt.event_tol, k);
    if (landing_state(l, t_start, t_step_end, *te, x, &retaken)) return -1;
  }
  return 0;
}

/* --- tangent vectors -------------------------------------------------------------------------- */

void tf_event_loop_generic_frame(size_t n, size_t m, double *v) {
  for (size_t c = 0; c < m; c++) {
    double *q = v + c * n;
    for (size_t i = 0; i < n; i++)
      q[i] = sin(1.0 + 0.7548776662466927 * (double)((c + 1) * (i + 1)));
    for (size_t b = 0; b < c; b++) {
      double d = 0;
      for (size_t i = 0; i < n; i++) d += v[b * n + i] * q[i];
      for (size_t i = 0; i < n; i++) q[i] -= d * v[b * n + i];
    }
    double norm = 0;
    for (size_t i = 0; i < n; i++) norm += q[i] * q[i];
    norm = sqrt(norm);
    for (size_t i = 0; i < n; i++) q[i] /= norm;
  }
}

/* The tangent vectors a run or segment starts from: the last run's frame if `continued` and
 * that run ended ok, else the generic frame; then the engine's adjustment. */
static void start_tangents(tf_event_loop *l, double *x, bool continued) {
  continued = continued && l->have_frame;
  if (continued)
    memcpy(x + l->n, l->frame, l->n * l->m * sizeof *x);
  else
    tf_event_loop_generic_frame(l->n, l->m, x + l->n);
  if (l->ops.start_tangents) l->ops.start_tangents(l->ctx, x, continued);
}

/* Householder QR of the tangent vectors; adds log |R_cc| to the segment's sums. */
static int orthonormalize(tf_event_loop *l, double *x) {
  const size_t n = l->n, m = l->m;
  if (l->ops.before_qr) l->ops.before_qr(l->ctx, x);
  double *q = x + n;
  for (size_t c = 0; c < m; c++)
    for (size_t i = 0; i < n; i++) gsl_matrix_set(l->qr_a, i, c, q[c * n + i]);
  if (gsl_linalg_QR_decomp(l->qr_a, l->qr_tau) ||
      gsl_linalg_QR_unpack(l->qr_a, l->qr_tau, l->qr_q, l->qr_r))
    return -1;
  for (size_t c = 0; c < m; c++) {
    const double rcc = gsl_matrix_get(l->qr_r, c, c);
    l->segment_sums[c] += log(fmax(fabs(rcc), 1e-300));
    const double sign = rcc < 0 ? -1.0 : 1.0;
    for (size_t i = 0; i < n; i++) q[c * n + i] = sign * gsl_matrix_get(l->qr_q, i, c);
  }
  return 0;
}

static void add_segment(tf_event_loop *l, double t) {
  for (size_t c = 0; c < l->m; c++) l->total_sums[c] += l->segment_sums[c], l->segment_sums[c] = 0;
  l->total_time += t - l->segment_start;
  l->segment_start = t;
  l->segments++;
}

void tf_event_loop_close_segment(tf_event_loop *l, double t, double *x) {
  if (!l->m || orthonormalize(l, x)) return;
  add_segment(l, t);
  start_tangents(l, x, false);
  l->next_qr = t + l->opt.qr_interval;
}

/* --- the loop --------------------------------------------------------------------------------- */

/* Zeno check: more events in the last window than the rate allows. */
static bool event_storm(const tf_event_loop *l, long events, double *window_start,
                        long *window_events, double t) {
  if (events >= l->opt.max_events) return true;
  const long in_window = events - *window_events;
  if (in_window < 100) return false;
  const bool storm = (double)in_window > l->opt.max_event_rate * (t - *window_start);
  *window_start = t;
  *window_events = events;
  return storm;
}

void tf_event_loop_begin(tf_event_loop *l, double t0, double *x, double t_end, const long *events) {
  l->res = (tf_event_loop_result){.status = TF_MEMBER_OK, .t = t0};
  l->t = t0, l->x = x, l->t_end = t_end, l->events = events;
  l->window_start = t0, l->window_events = 0;
  l->halt = false;
  tf_crash_point_publish(&l->t, x, (int)l->n);
  start_tangents(l, x, true);
  l->have_frame = false; /* taken: set again by a run that ends ok */
  for (size_t c = 0; c < l->m; c++) l->segment_sums[c] = l->total_sums[c] = 0;
  l->segment_start = t0, l->total_time = 0, l->segments = 0;
  l->next_qr = l->m ? t0 + l->opt.qr_interval : INFINITY;
  tf_stepper_reset(l->stepper, l->t, x);
}

/* The step from the top's state: its start kept (for the landing), the engine's before_step,
 * and its limit, the QR time and the engine's step_limit. */
static void prepare_step(tf_event_loop *l) {
  const tf_event_loop_ops *ops = &l->ops;
  l->t_start = l->t;
  memcpy(l->start, l->x, l->na * sizeof *l->x);
  if (ops->before_step) ops->before_step(l->ctx, l->t, l->x);
  l->t_limit = fmin(l->t_end, l->next_qr);
  if (ops->step_limit) {
    const double lim = ops->step_limit(l->ctx, l->t, l->x);
    if (lim > l->t) l->t_limit = fmin(l->t_limit, lim);
  }
}

/* Where the drive's checks end the run: at t_end ok; told to stop (the run's stop token,
 * checkpoint.h: a sample, a signal or the time limit) pending, not done; the budget spent. */
static void checks_ended(tf_event_loop *l, tf_drive_end end) {
  if (end == TF_DRIVE_STOPPED) l->res.status = TF_MEMBER_PENDING;
  if (end == TF_DRIVE_FAILED) l->res.status = TF_MEMBER_MAX_STEPS;
}

bool tf_event_loop_top(tf_event_loop *l) {
  tf_drive_end end;
  tf_ode_status st;
  if (!tf_drive_due(&l->drive, l->res.work.steps, l->t, l->t_end, &end, &st)) {
    checks_ended(l, end);
    return false;
  }
  prepare_step(l);
  return true;
}

void tf_event_loop_request_stop(tf_event_loop *l) {
  l->halt = true;
}

/* An observer of the steps stopped the run: it ends pending, before any transition. */
static bool halted(tf_event_loop *l) {
  if (!l->halt) return false;
  l->res.status = TF_MEMBER_PENDING;
  return true;
}

bool tf_event_loop_stepped(tf_event_loop *l, tf_ode_status st) {
  tf_event_loop_result *res = &l->res;
  const tf_event_loop_ops *ops = &l->ops;
  double *x = l->x;
  const double t_start = l->t_start;
  res->work.steps++;
  if (ops->after_step && (res->status = ops->after_step(l->ctx)) != TF_MEMBER_OK) return false;
  if (st != TF_ODE_OK) {
    res->status = tf_member_status_of_step(st);
    if (st == TF_ODE_MODEL_FAILED) res->model_code = tf_stepper_model_code(l->stepper);
    return false;
  }
  double te;
  const int which = find_event(l, t_start, l->t, &te);
  if (which < 0) {
    if (ops->on_step) ops->on_step(l->ctx, t_start, l->t);
    if (halted(l)) return false;
    bool moved = ops->project && ops->project(l->ctx, l->t, x);
    if (l->t >= l->next_qr) {
      if (orthonormalize(l, x)) {
        res->status = TF_MEMBER_FAILED;
        return false;
      }
      l->next_qr = l->t + l->opt.qr_interval;
      moved = true;
    }
    if (moved) tf_stepper_restart(l->stepper, l->t, x);
    return true;
  }
  if (ops->on_step) ops->on_step(l->ctx, t_start, te);
  if (halted(l)) return false;
  const double te_located = te;
  if (land_on_event(l, which, t_start, l->t, &te, x)) {
    res->model_code = tf_stepper_model_code(l->stepper); /* a fatal refusal on the way */
    res->status = res->model_code < 0 ? TF_MEMBER_FAILED : TF_MEMBER_STEP_UNDERFLOW;
    if (res->model_code > 0) res->model_code = 0;
    return false;
  }
  if (ops->on_step && te > te_located) ops->on_step(l->ctx, te_located, te);
  l->t = te;
  if (halted(l)) return false;
  if ((res->status = ops->transition(l->ctx, which, l->t, x)) != TF_MEMBER_OK) return false;
  if (!tf_state_finite(x, l->na)) {
    res->status = TF_MEMBER_NONFINITE;
    return false;
  }
  if (event_storm(l, *l->events, &l->window_start, &l->window_events, l->t)) {
    res->status = ops->storm_status ? ops->storm_status(l->ctx, x) : TF_MEMBER_ZENO;
    return false;
  }
  tf_stepper_restart(l->stepper, l->t, x);
  return true;
}

bool tf_event_loop_take_step(tf_event_loop *l) {
  return tf_event_loop_stepped(l, tf_stepper_step(l->stepper, &l->t, l->x, l->t_limit));
}

static double drive_before(void *ctx, double t, const double *x, double t_end) {
  (void)t, (void)x, (void)t_end; /* the loop's own: the drive steps l->t and l->x */
  tf_event_loop *l = ctx;
  prepare_step(l);
  return l->t_limit;
}

static int drive_accepted(void *ctx, const tf_stepper *s, double ta, double t, const double *x) {
  (void)s, (void)ta, (void)t, (void)x;
  return !tf_event_loop_stepped(ctx, TF_ODE_OK);
}

void tf_event_loop_drive(tf_event_loop *l) {
  tf_drive d = l->drive;
  d.max_steps -= l->res.work.steps; /* the budget left: every step call counts in stepped */
  tf_ode_status st;
  const tf_drive_end end = tf_stepper_drive(l->stepper, &l->t, l->x, l->t_end, &d, &st);
  /* a failed step (no step says max_steps, only the budget) goes to stepped: after_step, then
   * the step's status */
  if (end == TF_DRIVE_FAILED && st != TF_ODE_MAX_STEPS)
    tf_event_loop_stepped(l, st);
  else
    checks_ended(l, end);
}

tf_event_loop_result tf_event_loop_end(tf_event_loop *l) {
  tf_event_loop_result res = l->res;
  const double t = l->t;
  double *x = l->x;
  if (l->m && res.status == TF_MEMBER_OK && !orthonormalize(l, x)) {
    add_segment(l, t);
    for (size_t c = 0; c < l->m; c++)
      l->exponents[c] = l->total_time > 0 ? l->total_sums[c] / l->total_time : NAN;
    res.lyapunov = l->exponents;
    res.tangent_time = l->total_time;
    memcpy(l->frame, x + l->n, l->n * l->m * sizeof *x);
    l->have_frame = true;
  }
  res.segments = l->segments;
  res.t = t;
  res.work = tf_stepper_stats(l->stepper);
  res.work.steps = l->res.work.steps; /* the loop's own count */
  tf_crash_point_publish(NULL, NULL, 0);
  return res;
}

tf_event_loop_result tf_event_loop_run(tf_event_loop *l, double t0, double *x, double t_end,
                                       const long *events) {
  tf_event_loop_begin(l, t0, x, t_end, events);
  tf_event_loop_drive(l);
  return tf_event_loop_end(l);
}

tf_stepper *tf_event_loop_lane_stepper(tf_event_loop *l, double *t, double *t_limit) {
  *t = l->t, *t_limit = l->t_limit;
  return l->stepper;
}

void tf_event_loop_set_time(tf_event_loop *l, double t) {
  l->t = t;
}

void tf_event_loop_quiet_step(tf_event_loop *l, double t) {
  l->res.work.steps++;
  l->t = t;
}

void tf_event_loop_change_seen(tf_event_loop *l) {
  l->change_seen = true;
}

void tf_event_loop_plain_bounds(const tf_event_loop *l, double *t_limit, long *steps_left) {
  *t_limit = fmin(l->t_end, l->next_qr);
  *steps_left = l->drive.max_steps - l->res.work.steps;
}

void tf_event_loop_quiet_steps(tf_event_loop *l, long k, double t) {
  l->res.work.steps += k;
  l->t = t;
  prepare_step(l);
}
