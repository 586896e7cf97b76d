/* evolve.c — see evolve.h.  One member at a time: the structure holds the workspace and is
 * reused across members. */
#include "evolve.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_locate.h"
#include "status.h"

enum { SAMPLES_PER_STEP = 4, MAX_EVENT_FUNCTIONS = 3 };

struct tf_evolve {
  const tf_kernel *k;
  const double *p;
  size_t n;
  tf_evolve_options opt;
  tf_dopri5 *stepper;
  tf_mode mode;
  bool has_twofold, nondeterministic;
  double twofold[TF_FILIPPOV_MAX_DIM];
  tf_event_fn on_event;
  tf_exit_fn on_exit;
  tf_step_fn on_step;
  void *ctx;
  gsl_root_fsolver *root;
  /* tangent dynamics for Lyapunov exponents (m = 0: off): the stepper's state is
   * x (n) followed by m tangent vectors (n each) */
  size_t m, na;
  double interval;
  bool saltation;
  double *aug, *work, *f1, *f2, *probe, *sample, *start;
  gsl_matrix *qr_a, *qr_q, *qr_r;
  gsl_vector *qr_tau;
};

tf_evolve_options tf_evolve_default_options(void) {
  tf_evolve_options o = {.ode = tf_ode_default_options()};
  o.event_tol = 1e-12;
  o.max_event_rate = 1e6;
  o.max_events = 1000000;
  o.capture_radius = 1e-6;
  return o;
}

const char *tf_event_kind_name(tf_event_kind k) {
  static const char *const names[TF_EVENT_KIND_COUNT] = {"crossing", "slide_start", "slide_end",
                                                         "twofold", "exit"};
  return k < TF_EVENT_KIND_COUNT ? names[k] : "?";
}

const char *tf_mode_name(tf_mode m) {
  return m == TF_MODE_SLIDING ? "sliding" : m == TF_MODE_SLIP_PLUS ? "slip+" : "slip-";
}

/* --- right-hand sides per mode ------------------------------------------------------------ */

static double sliding_multiplier(double lp, double lm) {
  /* h_x·f(x, lambda) = ((1 + lambda) L+ + (1 - lambda) L-) / 2 = 0 */
  const double denom = lm - lp;
  return denom != 0.0 ? (lp + lm) / denom : 0.0;
}

static void mode_field(const tf_evolve *e, tf_mode mode, double t, const double *x, double *dx) {
  if (mode != TF_MODE_SLIDING) {
    e->k->slip(t, x, mode, e->p, dx);
    return;
  }
  double lp, lm;
  tf_filippov_tangencies(e->k, e->p, x, &lp, &lm);
  tf_filippov_field(e->k, e->p, x, sliding_multiplier(lp, lm), dx);
}

/* The variational equation q' = Df(x) q of the current mode, by central differences along
 * q itself (2 evaluations per vector, no Jacobian needed). */
static void tangent_rhs(tf_evolve *e, double t, const double *x, const double *q, double *dq) {
  const size_t n = e->n;
  double norm = 0, scale = 0;
  for (size_t i = 0; i < n; i++) norm += q[i] * q[i], scale = fmax(scale, fabs(x[i]));
  norm = sqrt(norm);
  if (norm == 0) {
    for (size_t i = 0; i < n; i++) dq[i] = 0;
    return;
  }
  const double h = 1e-7 * fmax(1.0, scale) / norm;
  for (size_t i = 0; i < n; i++) e->probe[i] = x[i] + h * q[i];
  mode_field(e, e->mode, t, e->probe, e->f1);
  for (size_t i = 0; i < n; i++) e->probe[i] = x[i] - h * q[i];
  mode_field(e, e->mode, t, e->probe, e->f2);
  for (size_t i = 0; i < n; i++) dq[i] = (e->f1[i] - e->f2[i]) / (2 * h);
}

static void rhs(double t, const double *x, void *ctx, double *dx) {
  tf_evolve *e = ctx;
  mode_field(e, e->mode, t, x, dx);
  for (size_t c = 0; c < e->m; c++) tangent_rhs(e, t, x, x + e->n + c * e->n, dx + e->n + c * e->n);
}

/* --- event functions: positive inside the current mode's domain -------------------------- */

static int event_values(tf_evolve *e, const double *x, double *g) {
  if (e->mode != TF_MODE_SLIDING) {
    g[0] = e->mode * e->k->switching(x, e->p, NULL);
    return 1;
  }
  double lp, lm;
  tf_filippov_tangencies(e->k, e->p, x, &lp, &lm);
  g[0] = -lp;
  g[1] = lm;
  if (!e->has_twofold || !e->nondeterministic) return 2;
  double d2 = 0;
  for (size_t i = 0; i < e->n; i++) d2 += (x[i] - e->twofold[i]) * (x[i] - e->twofold[i]);
  g[2] = d2 - e->opt.capture_radius * e->opt.capture_radius;
  return 3;
}

typedef struct root_ctx {
  tf_evolve *e;
  int which;
} root_ctx;

static double event_at(double t, void *params) {
  root_ctx *rc = params;
  double g[MAX_EVENT_FUNCTIONS];
  tf_dopri5_dense(rc->e->stepper, t, rc->e->work);
  event_values(rc->e, rc->e->work, g);
  return g[rc->which];
}

/* The root of event function `which` in (ta, tb] where it changes from >= 0 to < 0. */
static double locate(tf_evolve *e, int which, double ta, double tb) {
  root_ctx rc = {e, which};
  return tf_event_locate(e->root, event_at, &rc, ta, tb, e->opt.event_tol);
}

/* Finds the earliest event in the last step [t0, t1]: sign changes of any event function
 * between samples of the dense output.  Returns the event index or -1. */
static int find_event(tf_evolve *e, double t0, double t1, double *te) {
  double g_prev[MAX_EVENT_FUNCTIONS], g[MAX_EVENT_FUNCTIONS];
  double *x = e->sample; /* dense output fills all na components */
  tf_dopri5_dense(e->stepper, t0, x);
  const int m = event_values(e, x, g_prev);
  /* At the start of a step the state is on the domain's boundary after a transition:
   * count it as inside, so only a departure to the wrong side is an event. */
  for (int j = 0; j < m; j++) g_prev[j] = fmax(g_prev[j], 0.0);
  double ta = t0;
  for (int s = 1; s <= SAMPLES_PER_STEP; s++) {
    const double tb = s == SAMPLES_PER_STEP ? t1 : t0 + (t1 - t0) * s / SAMPLES_PER_STEP;
    tf_dopri5_dense(e->stepper, tb, x);
    event_values(e, x, g);
    int first = -1;
    double t_first = tb;
    for (int j = 0; j < m; j++) {
      if (!(g[j] < 0.0 && g_prev[j] >= 0.0)) continue;
      const double tj = locate(e, j, ta, tb);
      if (first < 0 || tj < t_first) first = j, t_first = tj;
    }
    if (first >= 0) {
      *te = t_first;
      return first;
    }
    memcpy(g_prev, g, sizeof g);
    ta = tb;
  }
  return -1;
}

/* Rate of change of event function `which` along the current mode's flow at x: a central
 * difference along the field (event functions are functions of the state only). */
static double event_slope(tf_evolve *e, int which, double t, const double *x) {
  const size_t n = e->n;
  double f[TF_FILIPPOV_MAX_DIM], y[TF_FILIPPOV_MAX_DIM], gp[MAX_EVENT_FUNCTIONS],
      gm[MAX_EVENT_FUNCTIONS];
  mode_field(e, e->mode, t, x, f);
  double fnorm = 0, scale = 1;
  for (size_t i = 0; i < n; i++) fnorm = fmax(fnorm, fabs(f[i])), scale = fmax(scale, fabs(x[i]));
  if (fnorm == 0.0) return 0.0;
  const double d = 1e-6 * scale / fnorm;
  for (size_t i = 0; i < n; i++) y[i] = x[i] + d * f[i];
  event_values(e, y, gp);
  for (size_t i = 0; i < n; i++) y[i] = x[i] - d * f[i];
  event_values(e, y, gm);
  return (gp[which] - gm[which]) / (2 * d);
}

/* Takes the step from t_start to the event located at *te, then corrects *te by Newton steps
 * on the integrated state.  The located time is a root of the dense output, whose error the
 * step control does not bound (4th order against the step's 5th); near a fold, where the
 * event function changes slowly, that error alone moves event times by ~1e-6 at rtol 1e-10.
 * A correction larger than a tenth of the step is a graze, not a located root: kept as is. */
static int land_on_event(tf_evolve *e, int which, double t_start, double t_step_end, double *te,
                         double *x) {
  if (tf_dopri5_step_to(e->stepper, t_start, e->start, e->na, *te, x)) return -1;
  const double max_shift = 0.1 * (t_step_end - t_start);
  for (int it = 0; it < 3; it++) {
    double g[MAX_EVENT_FUNCTIONS];
    event_values(e, x, g);
    const double slope = event_slope(e, which, *te, x);
    if (!(slope < 0.0)) break; /* event functions fall through their events */
    const double dt = -g[which] / slope;
    if (!(fabs(dt) > e->opt.event_tol) || fabs(dt) > max_shift || *te + dt <= t_start) break;
    *te += dt;
    if (tf_dopri5_step_to(e->stepper, t_start, e->start, e->na, *te, x)) return -1;
  }
  /* Continue from just past the root, where the event function has changed sign: from the
   * root itself round-off decides on which side the next mode starts, and at a fold (sliding
   * ending where the field turns tangent) it starts on the wrong one and falls back at once. */
  for (int k = 0; k < 12; k++) {
    double g[MAX_EVENT_FUNCTIONS];
    event_values(e, x, g);
    if (g[which] < 0.0) break;
    *te += ldexp(e->opt.event_tol, k);
    if (tf_dopri5_step_to(e->stepper, t_start, e->start, e->na, *te, x)) return -1;
  }
  return 0;
}

/* --- transitions ---------------------------------------------------------------------------- */

/* Newton along grad h: puts a point located to event_tol exactly onto Sigma. */
static void project_to_sigma(const tf_evolve *e, double *x) {
  double grad[TF_FILIPPOV_MAX_DIM];
  for (int it = 0; it < 3; it++) {
    const double h = e->k->switching(x, e->p, grad);
    double g2 = 0;
    for (size_t i = 0; i < e->n; i++) g2 += grad[i] * grad[i];
    if (g2 == 0.0 || h == 0.0) return;
    for (size_t i = 0; i < e->n; i++) x[i] -= h * grad[i] / g2;
  }
}

tf_mode tf_evolve_initial_mode(const tf_evolve *e, const double *x) {
  const double h = e->k->switching(x, e->p, NULL);
  if (h > 0) return TF_MODE_SLIP_PLUS;
  if (h < 0) return TF_MODE_SLIP_MINUS;
  double lp, lm;
  tf_filippov_tangencies(e->k, e->p, x, &lp, &lm);
  const tf_sigma_region r = tf_filippov_region(lp, lm);
  if (r == TF_SIGMA_SLIDING) return TF_MODE_SLIDING;
  if (r == TF_SIGMA_CROSSING_DOWN) return TF_MODE_SLIP_MINUS;
  return TF_MODE_SLIP_PLUS; /* crossing up; escaping and boundary points leave upward */
}

static void emit(tf_evolve *e, tf_evolve_result *res, tf_event_kind kind, double t, const double *x,
                 tf_mode from, tf_mode to) {
  res->counts[kind]++;
  res->events++;
  if (e->on_event) {
    const tf_event ev = {kind, t, x, from, to};
    e->on_event(e->ctx, &ev);
  }
}

/* Arrival on Sigma from slip side s: cross if the other side's field carries on through,
 * slide otherwise (the arriving side's field points into Sigma by construction). */
static tf_mode arrive(tf_evolve *e, tf_evolve_result *res, double t, double *x) {
  const tf_mode from = e->mode;
  project_to_sigma(e, x);
  double lp, lm;
  tf_filippov_tangencies(e->k, e->p, x, &lp, &lm);
  const double other = from == TF_MODE_SLIP_PLUS ? lm : lp;
  if (from * other < 0) {
    emit(e, res, TF_EVENT_CROSSING, t, x, from, (tf_mode)-from);
    return (tf_mode)-from;
  }
  emit(e, res, TF_EVENT_SLIDE_START, t, x, from, TF_MODE_SLIDING);
  return TF_MODE_SLIDING;
}

static int twofold_exit(tf_evolve *e, tf_evolve_result *res, double t, double *x, tf_mode *mode) {
  emit(e, res, TF_EVENT_TWOFOLD, t, x, TF_MODE_SLIDING, TF_MODE_SLIDING);
  if (!e->on_exit) return -1;
  double out[TF_FILIPPOV_MAX_DIM];
  int side = 1;
  if (e->on_exit(e->ctx, res->counts[TF_EVENT_TWOFOLD] - 1, t, x, out, &side)) return -1;
  memcpy(x, out, e->n * sizeof *x);
  *mode = side > 0 ? TF_MODE_SLIP_PLUS : TF_MODE_SLIP_MINUS;
  emit(e, res, TF_EVENT_EXIT, t, x, TF_MODE_SLIDING, *mode);
  return 0;
}

/* --- the driver ------------------------------------------------------------------------------ */

tf_evolve *tf_evolve_create(const tf_kernel *k, const double *params,
                            const tf_evolve_options *opts) {
  if (k->dim > TF_FILIPPOV_MAX_DIM || !k->switching || !k->slip) return NULL;
  tf_evolve *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->k = k;
  e->p = params;
  e->n = k->dim;
  e->opt = opts ? *opts : tf_evolve_default_options();
  e->root = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  if (!e->root || tf_evolve_enable_tangent(e, 0, 1.0, true)) {
    tf_evolve_destroy(e);
    return NULL;
  }
  return e;
}

static void free_tangent(tf_evolve *e) {
  tf_dopri5_destroy(e->stepper);
  free(e->aug);
  if (e->qr_a) gsl_matrix_free(e->qr_a), gsl_matrix_free(e->qr_q), gsl_matrix_free(e->qr_r);
  if (e->qr_tau) gsl_vector_free(e->qr_tau);
  e->stepper = NULL, e->aug = NULL, e->qr_a = NULL, e->qr_tau = NULL;
}

int tf_evolve_enable_tangent(tf_evolve *e, int vectors, double interval, bool saltation) {
  free_tangent(e);
  const size_t n = e->n, m = vectors > 0 ? (size_t)vectors : 0, na = n + n * m;
  e->m = m, e->na = na, e->interval = interval, e->saltation = saltation;
  e->stepper = tf_dopri5_create(na);
  e->aug = calloc(7 * na, sizeof *e->aug); /* aug, work, f1, f2, probe, sample, start */
  if (!e->stepper || !e->aug) return -1;
  e->work = e->aug + na, e->f1 = e->aug + 2 * na, e->f2 = e->aug + 3 * na;
  e->probe = e->aug + 4 * na, e->sample = e->aug + 5 * na, e->start = e->aug + 6 * na;
  if (m > 0) {
    e->qr_a = gsl_matrix_alloc(n, m), e->qr_q = gsl_matrix_alloc(n, n);
    e->qr_r = gsl_matrix_alloc(n, m), e->qr_tau = gsl_vector_alloc(m < n ? m : n);
  }
  tf_dopri5_setup(e->stepper, rhs, e, &e->opt.ode);
  return 0;
}

void tf_evolve_destroy(tf_evolve *e) {
  if (!e) return;
  free_tangent(e);
  if (e->root) gsl_root_fsolver_free(e->root);
  free(e);
}

void tf_evolve_set_twofold(tf_evolve *e, const double *x, bool nondeterministic) {
  e->has_twofold = true;
  e->nondeterministic = nondeterministic;
  memcpy(e->twofold, x, e->n * sizeof *x);
}

void tf_evolve_set_callbacks(tf_evolve *e, tf_event_fn on_event, tf_exit_fn on_exit, void *ctx) {
  e->on_event = on_event;
  e->on_exit = on_exit;
  e->ctx = ctx;
}

void tf_evolve_set_step_callback(tf_evolve *e, tf_step_fn on_step) {
  e->on_step = on_step;
}

void tf_evolve_dense(const tf_evolve *e, double t, double *x) {
  tf_dopri5_dense(e->stepper, t, x);
}

/* Zeno check: more events in the last window than the rate allows. */
static bool event_storm(const tf_evolve *e, const tf_evolve_result *res, double *window_start,
                        long *window_events, double t) {
  if (res->events >= e->opt.max_events) return true;
  const long in_window = res->events - *window_events;
  if (in_window < 100) return false;
  const bool storm = (double)in_window > e->opt.max_event_rate * (t - *window_start);
  *window_start = t;
  *window_events = res->events;
  return storm;
}

/* An event storm on Sigma where the kernel's second switching function vanishes too is no
 * numerical failure but the end of what one switching surface can describe (the wheel's
 * full stick): say so in the member's status. */
static bool at_codim2_point(const tf_evolve *e, const double *x) {
  if (!e->k->secondary_switching) return false;
  double scale = 1;
  for (size_t i = 0; i < e->n; i++) scale += fabs(x[i]);
  const double tol = 1e-8 * scale;
  return fabs(e->k->switching(x, e->p, NULL)) <= tol &&
         fabs(e->k->secondary_switching(x, e->p)) <= tol;
}

/* --- tangent vectors ------------------------------------------------------------------------ */

/* Saltation at a transition on Sigma (Müller 1995; di Bernardo et al. 2008):
 *   q <- q + (f_after - f_before) (grad h · q) / (grad h · f_before),
 * with the sliding field as f_after when sliding starts; leaving sliding is the identity. */
static void apply_saltation(tf_evolve *e, double t, const double *x, tf_mode from, tf_mode to) {
  if (!e->m || !e->saltation || from == TF_MODE_SLIDING) return;
  double grad[TF_FILIPPOV_MAX_DIM], before[TF_FILIPPOV_MAX_DIM], after[TF_FILIPPOV_MAX_DIM];
  const size_t n = e->n;
  e->k->switching(x, e->p, grad);
  mode_field(e, from, t, x, before);
  mode_field(e, to, t, x, after);
  double denom = 0;
  for (size_t i = 0; i < n; i++) denom += grad[i] * before[i];
  if (denom == 0.0) return; /* grazing: the correction is unbounded; leave q */
  for (size_t c = 0; c < e->m; c++) {
    double *q = e->aug + n + c * n, dot = 0;
    for (size_t i = 0; i < n; i++) dot += grad[i] * q[i];
    for (size_t i = 0; i < n; i++) q[i] += (after[i] - before[i]) * dot / denom;
  }
}

static void reset_tangents(tf_evolve *e) {
  memset(e->aug + e->n, 0, e->n * e->m * sizeof *e->aug);
  for (size_t c = 0; c < e->m; c++) e->aug[e->n + c * e->n + c] = 1.0;
}

/* Householder QR of the tangent vectors; adds log |R_cc| to sums. */
static int orthonormalize(tf_evolve *e, double *sums) {
  const size_t n = e->n, m = e->m;
  double *q = e->aug + n;
  for (size_t c = 0; c < m; c++)
    for (size_t i = 0; i < n; i++) gsl_matrix_set(e->qr_a, i, c, q[c * n + i]);
  if (gsl_linalg_QR_decomp(e->qr_a, e->qr_tau) ||
      gsl_linalg_QR_unpack(e->qr_a, e->qr_tau, e->qr_q, e->qr_r))
    return -1;
  for (size_t c = 0; c < m; c++) {
    const double rcc = gsl_matrix_get(e->qr_r, c, c);
    sums[c] += log(fmax(fabs(rcc), 1e-300));
    const double sign = rcc < 0 ? -1.0 : 1.0;
    for (size_t i = 0; i < n; i++) q[c * n + i] = sign * gsl_matrix_get(e->qr_q, i, c);
  }
  return 0;
}

tf_evolve_result tf_evolve_run(tf_evolve *e, double t0, double *x_io, double t_end, int side) {
  tf_evolve_result res = {.status = TF_MEMBER_OK, .t = t0};
  double t = t0, window_start = t0;
  long window_events = 0;
  double *x = e->aug; /* x, then the tangent vectors */
  memcpy(x, x_io, e->n * sizeof *x);
  reset_tangents(e);
  double segment_sums[TF_FILIPPOV_MAX_DIM] = {0}, total_sums[TF_FILIPPOV_MAX_DIM] = {0};
  double segment_start = t0, total_time = 0, next_qr = e->m ? t0 + e->interval : INFINITY;
  e->mode = side > 0   ? TF_MODE_SLIP_PLUS
            : side < 0 ? TF_MODE_SLIP_MINUS
                       : tf_evolve_initial_mode(e, x);
  if (e->mode == TF_MODE_SLIDING) project_to_sigma(e, x);
  tf_dopri5_reset(e->stepper, t, x);
  while (t < t_end) {
    if (res.steps >= e->opt.ode.max_steps) {
      res.status = TF_MEMBER_MAX_STEPS;
      break;
    }
    const double t_start = t;
    memcpy(e->start, x, e->na * sizeof *x);
    const tf_ode_status st = tf_dopri5_step(e->stepper, &t, x, fmin(t_end, next_qr));
    res.steps++;
    if (st != TF_ODE_OK) {
      res.status = st == TF_ODE_NONFINITE ? TF_MEMBER_NONFINITE : TF_MEMBER_STEP_UNDERFLOW;
      break;
    }
    double te;
    const int which = find_event(e, t_start, t, &te);
    if (which < 0) {
      if (e->on_step) e->on_step(e->ctx, e, t_start, t);
      if (t >= next_qr) {
        if (orthonormalize(e, segment_sums)) {
          res.status = TF_MEMBER_FAILED;
          break;
        }
        next_qr = t + e->interval;
        tf_dopri5_restart(e->stepper, t, x);
      }
      continue;
    }
    if (e->on_step) e->on_step(e->ctx, e, t_start, te);
    const double te_located = te;
    if (land_on_event(e, which, t_start, t, &te, x)) {
      res.status = TF_MEMBER_STEP_UNDERFLOW;
      break;
    }
    if (e->on_step && te > te_located) e->on_step(e->ctx, e, te_located, te);
    t = te;
    tf_mode next = e->mode;
    if (e->mode != TF_MODE_SLIDING) {
      next = arrive(e, &res, t, x);
    } else if (which == 2) {
      if (twofold_exit(e, &res, t, x, &next)) {
        res.status = TF_MEMBER_FAILED;
        break;
      }
      /* the flow is not differentiable through the singularity: close the segment */
      if (e->m && !orthonormalize(e, segment_sums)) {
        for (size_t c = 0; c < e->m; c++) total_sums[c] += segment_sums[c], segment_sums[c] = 0;
        total_time += t - segment_start;
        segment_start = t;
        res.segments++;
        reset_tangents(e);
        next_qr = t + e->interval;
      }
    } else {
      next = which == 0 ? TF_MODE_SLIP_PLUS : TF_MODE_SLIP_MINUS;
      emit(e, &res, TF_EVENT_SLIDE_END, t, x, TF_MODE_SLIDING, next);
    }
    apply_saltation(e, t, x, e->mode, next);
    e->mode = next;
    if (!tf_state_finite(x, e->na)) {
      res.status = TF_MEMBER_NONFINITE;
      break;
    }
    if (event_storm(e, &res, &window_start, &window_events, t)) {
      res.status = at_codim2_point(e, x) ? TF_MEMBER_CODIM2 : TF_MEMBER_ZENO;
      break;
    }
    tf_dopri5_restart(e->stepper, t, x);
  }
  if (e->m && res.status == TF_MEMBER_OK && !orthonormalize(e, segment_sums)) {
    for (size_t c = 0; c < e->m; c++) total_sums[c] += segment_sums[c];
    total_time += t - segment_start;
    res.segments++;
    for (size_t c = 0; c < e->m; c++)
      res.lyapunov[c] = total_time > 0 ? total_sums[c] / total_time : NAN;
    res.tangent_time = total_time;
  }
  memcpy(x_io, x, e->n * sizeof *x);
  res.t = t;
  res.mode = e->mode;
  res.rhs_evals = tf_dopri5_stats(e->stepper).rhs_evals;
  return res;
}
