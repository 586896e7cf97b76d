/* evolve2.c — see evolve2.h.  The structure holds the workspace and is reused across
 * members. */
#include "evolve2.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_locate.h"
#include "status.h"

enum { SAMPLES_PER_STEP = 4 };

struct tf_evolve2 {
  tf_codim2_sys sys;
  tf_codim2_kernel_ctx kctx;
  size_t n;
  tf_evolve2_options opt;
  tf_dopri5 *stepper;
  tf_c2_mode mode;
  double d_ref[2];
  bool sliding_failed;
  tf_c2_event_fn on_event;
  tf_c2_step_fn on_step;
  void *ctx;
  gsl_root_fsolver *root;
  /* tangent vectors for Lyapunov exponents (m = 0: off): the stepper's state is x (n)
   * followed by m tangent vectors (n each) */
  size_t m, na;
  double interval;
  double *aug, *start, *sample, *dense, *probe, *f1, *f2;
  gsl_matrix *qr_a, *qr_q, *qr_r;
  gsl_vector *qr_tau;
};

tf_evolve2_options tf_evolve2_default_options(void) {
  tf_evolve2_options o = {.ode = tf_ode_default_options()};
  o.event_tol = 1e-12;
  o.sigma_tol = 1e-8;
  o.slave_radius = 1e-6;
  o.max_event_rate = 1e5;
  o.max_events = 1000000;
  return o;
}

const char *tf_c2_event_kind_name(tf_c2_event_kind k) {
  static const char *const names[TF_C2_EVENT_KIND_COUNT] = {"roll_start", "roll_end", "crossing"};
  return (unsigned)k < TF_C2_EVENT_KIND_COUNT ? names[k] : "?";
}

const char *tf_c2_mode_name(tf_c2_mode m) {
  return m == TF_C2_ROLL ? "roll" : "slip";
}

/* --- fields ----------------------------------------------------------------------------- */

/* Near Sigma the slip direction phi obeys phi' = V(phi)/r (eq 2.23): it relaxes to a
 * stable zero of V at a rate |V'|/r, which is unbounded as r -> 0.  An explicit integrator
 * leaving Sigma where rolling ends (r grows like t^2 from a neutral direction) would crawl
 * at steps of order r.  Below slave_radius the direction is therefore the limit direction
 * itself (the zero of V next to d_ref, by Newton): the outer solution of that fast
 * relaxation, exact to O(r). */
static double slaved_angle(const tf_evolve2 *e, double t, const double *x, double phi) {
  for (int it = 0; it < 6; it++) {
    double v, vp, vm;
    const double dphi = 1e-6;
    tf_codim2_rv(&e->sys, t, x, phi, NULL, &v);
    tf_codim2_rv(&e->sys, t, x, phi + dphi, NULL, &vp);
    tf_codim2_rv(&e->sys, t, x, phi - dphi, NULL, &vm);
    const double slope = (vp - vm) / (2 * dphi);
    if (!(fabs(slope) > 1e-300)) break;
    const double step = v / slope;
    phi -= fmax(-0.2, fmin(0.2, step));
    if (fabs(step) < 1e-14) break;
  }
  return phi;
}

/* The slip direction at x, continued through Sigma with the orientation of d_ref. */
static void slip_direction(const tf_evolve2 *e, double t, const double *x, double *dir) {
  double h[2];
  tf_codim2_frame(&e->sys, x, h, NULL, NULL);
  const double r = hypot(h[0], h[1]);
  if (r < e->opt.slave_radius) {
    const double phi = slaved_angle(e, t, x, atan2(e->d_ref[1], e->d_ref[0]));
    dir[0] = cos(phi), dir[1] = sin(phi);
    return;
  }
  if (r == 0.0) {
    dir[0] = e->d_ref[0], dir[1] = e->d_ref[1];
    return;
  }
  const double s = h[0] * e->d_ref[0] + h[1] * e->d_ref[1] < 0 ? -1.0 : 1.0;
  dir[0] = s * h[0] / r, dir[1] = s * h[1] / r;
}

static void mode_field(tf_evolve2 *e, double t, const double *x, double *dx) {
  if (e->mode == TF_C2_SLIP) {
    double dir[2];
    slip_direction(e, t, x, dir);
    e->sys.field2(t, x, dir, e->sys.ctx, dx);
    return;
  }
  tf_codim2_sliding s;
  if (tf_codim2_sliding_vector(&e->sys, t, x, &s)) e->sliding_failed = true;
  memcpy(dx, s.Fs, e->n * sizeof *dx);
}

/* The variational equation q' = Df(x) q of the current mode by central differences along q
 * (evolve.c's scheme: two field evaluations per vector, no Jacobian needed). */
static void tangent_rhs(tf_evolve2 *e, double t, const double *x, const double *q, double *dq) {
  const size_t n = e->n;
  double norm = 0, scale = 0;
  for (size_t i = 0; i < n; i++) norm += q[i] * q[i], scale = fmax(scale, fabs(x[i]));
  norm = sqrt(norm);
  if (norm == 0) {
    memset(dq, 0, n * sizeof *dq);
    return;
  }
  const double h = 1e-7 * fmax(1.0, scale) / norm;
  for (size_t i = 0; i < n; i++) e->probe[i] = x[i] + h * q[i];
  mode_field(e, t, e->probe, e->f1);
  for (size_t i = 0; i < n; i++) e->probe[i] = x[i] - h * q[i];
  mode_field(e, t, e->probe, e->f2);
  for (size_t i = 0; i < n; i++) dq[i] = (e->f1[i] - e->f2[i]) / (2 * h);
}

static void rhs(double t, const double *x, void *ctx, double *dx) {
  tf_evolve2 *e = ctx;
  mode_field(e, t, x, dx);
  for (size_t c = 0; c < e->m; c++) tangent_rhs(e, t, x, x + e->n + c * e->n, dx + e->n + c * e->n);
}

/* --- events: one function per mode, positive inside the mode's domain -------------------- */

static double event_value(tf_evolve2 *e, double t, const double *x) {
  if (e->mode == TF_C2_SLIP) {
    double h[2];
    tf_codim2_frame(&e->sys, x, h, NULL, NULL);
    return h[0] * e->d_ref[0] + h[1] * e->d_ref[1];
  }
  tf_codim2_point pt;
  tf_codim2_classify(&e->sys, t, x, &pt);
  return pt.region == TF_CODIM2_SPIRAL ? -1.0 : -pt.R_max;
}

static double event_at(double t, void *params) {
  tf_evolve2 *e = params;
  tf_dopri5_dense(e->stepper, t, e->sample);
  return event_value(e, t, e->sample);
}

/* The time in (ta, tb] where the event function goes from >= 0 to < 0 (evolve.c's rule for
 * a start on the boundary: the event is the first return to it). */
static double locate(tf_evolve2 *e, double ta, double tb) {
  return tf_event_locate(e->root, event_at, e, ta, tb, e->opt.event_tol);
}

static bool find_event(tf_evolve2 *e, double t0, double t1, double *te) {
  double g_prev = fmax(event_at(t0, e), 0.0), ta = t0;
  for (int s = 1; s <= SAMPLES_PER_STEP; s++) {
    const double tb = s == SAMPLES_PER_STEP ? t1 : t0 + (t1 - t0) * s / SAMPLES_PER_STEP;
    const double g = event_at(tb, e);
    if (g < 0.0 && g_prev >= 0.0) {
      *te = locate(e, ta, tb);
      return true;
    }
    g_prev = g, ta = tb;
  }
  return false;
}

/* --- transitions -------------------------------------------------------------------------- */

static void emit(tf_evolve2 *e, tf_evolve2_result *res, tf_c2_event_kind kind, double t,
                 const double *x, double phi) {
  res->counts[kind]++;
  res->events++;
  if (e->on_event) {
    const tf_c2_event ev = {kind, t, x, phi};
    e->on_event(e->ctx, &ev);
  }
}

static void set_direction(tf_evolve2 *e, double phi) {
  e->d_ref[0] = cos(phi), e->d_ref[1] = sin(phi);
}

/* The repelling limit direction to leave along: the one closest to `preferred`. */
static double leaving_direction(const tf_codim2_point *pt, double preferred) {
  if (pt->all_directions) return pt->phi_R_max;
  double best = pt->phi_R_max, best_cos = -2;
  for (int i = 0; i < pt->count; i++) {
    if (!(pt->R[i] > 0)) continue;
    const double c = cos(pt->phi[i] - preferred);
    if (c > best_cos) best_cos = c, best = pt->phi[i];
  }
  return best;
}

static bool rolls(const tf_codim2_point *pt) {
  return pt->region == TF_CODIM2_SLIDING || (pt->region == TF_CODIM2_TANGENCY && pt->R_max <= 0);
}

static void apply_saltation(tf_evolve2 *e, double t, const double *x, double phi_in,
                            const double *f_after, bool rolling);

/* Arrival at Sigma from slipping along d_ref: roll or pass. */
static int arrive(tf_evolve2 *e, tf_evolve2_result *res, double t, double *x) {
  const double phi_in = atan2(e->d_ref[1], e->d_ref[0]);
  tf_codim2_project(&e->sys, x);
  tf_codim2_point pt;
  tf_codim2_classify(&e->sys, t, x, &pt);
  if (rolls(&pt)) {
    if (e->m) {
      tf_codim2_sliding sv;
      tf_codim2_sliding_vector(&e->sys, t, x, &sv);
      apply_saltation(e, t, x, phi_in, sv.Fs, true);
    }
    e->mode = TF_C2_ROLL;
    if (isnan(res->first_roll_time)) res->first_roll_time = t;
    emit(e, res, TF_C2_ROLL_START, t, x, phi_in);
    return 0;
  }
  if (pt.region == TF_CODIM2_SPIRAL) {
    res->failure = "reached Sigma at a point with no limit direction (Theorem 2.15 silent)";
    return -1;
  }
  const double phi_out = leaving_direction(&pt, phi_in + M_PI);
  if (e->m) {
    double after[TF_CODIM2_MAX_DIM];
    tf_codim2_limit(&e->sys, t, x, phi_out, after);
    apply_saltation(e, t, x, phi_in, after, false);
  }
  set_direction(e, phi_out);
  emit(e, res, TF_C2_CROSSING, t, x, phi_in);
  return 0;
}

static int start_mode(tf_evolve2 *e, tf_evolve2_result *res, double t, double *x) {
  double h[2];
  tf_codim2_frame(&e->sys, x, h, NULL, NULL);
  const double r = hypot(h[0], h[1]);
  if (r > e->opt.sigma_tol) {
    e->mode = TF_C2_SLIP;
    e->d_ref[0] = h[0] / r, e->d_ref[1] = h[1] / r;
    return 0;
  }
  tf_codim2_project(&e->sys, x);
  tf_codim2_point pt;
  tf_codim2_classify(&e->sys, t, x, &pt);
  if (rolls(&pt)) {
    e->mode = TF_C2_ROLL;
    res->first_roll_time = t;
    return 0;
  }
  if (pt.region == TF_CODIM2_SPIRAL) {
    res->failure = "starts on Sigma at a point with no limit direction";
    return -1;
  }
  e->mode = TF_C2_SLIP;
  set_direction(e, pt.phi_R_max);
  emit(e, res, TF_C2_ROLL_END, t, x, pt.phi_R_max);
  return 0;
}

/* --- tangent vectors: saltation and re-orthonormalisation ----------------------------------- */

/* Arrival at Sigma along phi_in, continuing with f_after (the sliding vector when rolling
 * starts, F*(phi_out) when crossing).  The arrival time of a neighbour is set by
 * g = <h, n(phi_in)>, so the codim-1 saltation (Mueller 1995) applies with that g:
 *   q <- q + (f_after - F*(phi_in)) (grad g . q)/(grad g . F*(phi_in)).
 * The component of q along n(phi_in + pi/2) shrinks like |h| on the approach (neighbours
 * arrive along the same limit direction); what the finite-difference tangent dynamics left
 * of it is removed when rolling starts, so that q is tangent to Sigma. */
static void apply_saltation(tf_evolve2 *e, double t, const double *x, double phi_in,
                            const double *f_after, bool rolling) {
  if (!e->m) return;
  const size_t n = e->n;
  double n1[TF_CODIM2_MAX_DIM], n2[TF_CODIM2_MAX_DIM], before[TF_CODIM2_MAX_DIM];
  tf_codim2_frame(&e->sys, x, NULL, n1, n2);
  tf_codim2_limit(&e->sys, t, x, phi_in, before);
  const double c = cos(phi_in), sn = sin(phi_in);
  double grad[TF_CODIM2_MAX_DIM], perp[TF_CODIM2_MAX_DIM], denom = 0;
  for (size_t i = 0; i < n; i++) {
    grad[i] = c * n1[i] + sn * n2[i], perp[i] = -sn * n1[i] + c * n2[i];
    denom += grad[i] * before[i];
  }
  if (denom == 0.0) return; /* grazing: unbounded; leave q */
  for (size_t k = 0; k < e->m; k++) {
    double *q = e->aug + n + k * n, dot = 0, side = 0;
    for (size_t i = 0; i < n; i++) dot += grad[i] * q[i];
    for (size_t i = 0; i < n; i++) q[i] += (f_after[i] - before[i]) * dot / denom;
    if (!rolling) continue;
    for (size_t i = 0; i < n; i++) side += perp[i] * q[i];
    for (size_t i = 0; i < n; i++) q[i] -= side * perp[i];
  }
}

static void reset_tangents(tf_evolve2 *e) {
  memset(e->aug + e->n, 0, e->n * e->m * sizeof *e->aug);
  for (size_t c = 0; c < e->m; c++) e->aug[e->n + c * e->n + c] = 1.0;
}

/* While rolling, the tangent vectors live on Sigma: the sliding field is tangent to it, so
 * tangent vectors stay tangent, and components off Sigma only appear as the completions QR
 * adds once the saltation at arrival has collapsed the normal directions.  Those are removed
 * before every QR (a neighbour off Sigma returns to it in a time of order its distance), so
 * the normal directions come out with exponents near log(1e-300)/interval: -infinity. */
static void project_tangents(tf_evolve2 *e) {
  const size_t n = e->n;
  double n1[TF_CODIM2_MAX_DIM], n2[TF_CODIM2_MAX_DIM];
  tf_codim2_frame(&e->sys, e->aug, NULL, n1, n2);
  for (size_t k = 0; k < e->m; k++) {
    double *q = e->aug + n + k * n, a = 0, b = 0;
    for (size_t i = 0; i < n; i++) a += n1[i] * q[i], b += n2[i] * q[i];
    for (size_t i = 0; i < n; i++) q[i] -= a * n1[i] + b * n2[i];
  }
}

/* Householder QR (GSL) of the tangent vectors; adds log |R_cc| to sums. */
static int orthonormalize(tf_evolve2 *e, double *sums) {
  const size_t n = e->n, m = e->m;
  double *q = e->aug + n;
  if (e->mode == TF_C2_ROLL) project_tangents(e);
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

/* --- the driver ----------------------------------------------------------------------------- */

static void free_workspace(tf_evolve2 *e) {
  tf_dopri5_destroy(e->stepper);
  free(e->aug);
  if (e->qr_a) gsl_matrix_free(e->qr_a), gsl_matrix_free(e->qr_q), gsl_matrix_free(e->qr_r);
  if (e->qr_tau) gsl_vector_free(e->qr_tau);
  e->stepper = NULL, e->aug = NULL, e->qr_a = e->qr_q = e->qr_r = NULL, e->qr_tau = NULL;
}

int tf_evolve2_enable_tangent(tf_evolve2 *e, int vectors, double interval) {
  free_workspace(e);
  const size_t n = e->n, m = vectors > 0 ? (size_t)vectors : 0, na = n + n * m;
  if (m > n) return -1;
  e->m = m, e->na = na, e->interval = interval > 0 ? interval : 1.0;
  e->stepper = tf_dopri5_create(na);
  e->aug = calloc(4 * na + 3 * n, sizeof *e->aug); /* aug, start, sample, dense; probe, f1, f2 */
  if (!e->stepper || !e->aug) return -1;
  e->start = e->aug + na, e->sample = e->aug + 2 * na, e->dense = e->aug + 3 * na;
  e->probe = e->aug + 4 * na, e->f1 = e->probe + n, e->f2 = e->f1 + n;
  if (m > 0) {
    e->qr_a = gsl_matrix_alloc(n, m), e->qr_q = gsl_matrix_alloc(n, n);
    e->qr_r = gsl_matrix_alloc(n, m), e->qr_tau = gsl_vector_alloc(m);
    if (!e->qr_a || !e->qr_q || !e->qr_r || !e->qr_tau) return -1;
  }
  tf_dopri5_setup(e->stepper, rhs, e, &e->opt.ode);
  return 0;
}

tf_evolve2 *tf_evolve2_create(const tf_kernel *k, const double *params,
                              const tf_evolve2_options *opts) {
  if (!k->sigma2 || !k->field2 || k->dim > TF_CODIM2_MAX_DIM) return NULL;
  tf_evolve2 *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  tf_codim2_from_kernel(&e->sys, &e->kctx, k, params);
  e->n = k->dim;
  e->opt = opts ? *opts : tf_evolve2_default_options();
  e->root = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  if (!e->root || tf_evolve2_enable_tangent(e, 0, 1.0)) {
    tf_evolve2_destroy(e);
    return NULL;
  }
  return e;
}

void tf_evolve2_destroy(tf_evolve2 *e) {
  if (!e) return;
  free_workspace(e);
  if (e->root) gsl_root_fsolver_free(e->root);
  free(e);
}

void tf_evolve2_set_callbacks(tf_evolve2 *e, tf_c2_event_fn on_event, tf_c2_step_fn on_step,
                              void *ctx) {
  e->on_event = on_event, e->on_step = on_step, e->ctx = ctx;
}

void tf_evolve2_dense(const tf_evolve2 *e, double t, double *x) {
  tf_dopri5_dense(e->stepper, t, e->dense);
  memcpy(x, e->dense, e->n * sizeof *x);
}

tf_c2_mode tf_evolve2_mode(const tf_evolve2 *e) {
  return e->mode;
}

tf_evolve2_result tf_evolve2_run(tf_evolve2 *e, double t0, double *x_io, double t_end) {
  tf_evolve2_result res = {.status = TF_MEMBER_OK, .t = t0, .first_roll_time = NAN};
  double t = t0, window_start = t0;
  long window_events = 0, renewals = 0;
  double *x = e->aug; /* x, then the tangent vectors */
  double sums[TF_CODIM2_MAX_DIM] = {0}, next_qr = e->m ? t0 + e->interval : INFINITY;
  e->sliding_failed = false;
  memcpy(x, x_io, e->n * sizeof *x);
  reset_tangents(e);
  if (!tf_state_finite(x, e->n)) {
    res.status = TF_MEMBER_NONFINITE;
    return res;
  }
  if (start_mode(e, &res, t, x)) {
    res.status = TF_MEMBER_FAILED;
    memcpy(x_io, x, e->n * sizeof *x);
    return res;
  }
  tf_dopri5_reset(e->stepper, t, x);
  while (t < t_end) {
    if (res.steps >= e->opt.ode.max_steps) {
      res.status = TF_MEMBER_MAX_STEPS;
      break;
    }
    const double t_start = t;
    memcpy(e->start, x, e->na * sizeof *x);
    if (e->mode == TF_C2_SLIP) {
      /* Renew the reference direction: the field is the same for the old and the new one
       * wherever both point to the same side, so the stepper's first stage stays valid. */
      double h[2];
      tf_codim2_frame(&e->sys, x, h, NULL, NULL);
      const double r = hypot(h[0], h[1]);
      if (r < e->opt.slave_radius)
        slip_direction(e, t, x, e->d_ref);
      else
        e->d_ref[0] = h[0] / r, e->d_ref[1] = h[1] / r;
    }
    const tf_ode_status st = tf_dopri5_step(e->stepper, &t, x, fmin(t_end, next_qr));
    res.steps++;
    if (e->sliding_failed) {
      res.status = TF_MEMBER_FAILED;
      res.failure = "the sliding vector is not unique here (Theorem 2.17 does not apply)";
      break;
    }
    if (st != TF_ODE_OK) {
      res.status = st == TF_ODE_NONFINITE ? TF_MEMBER_NONFINITE : TF_MEMBER_STEP_UNDERFLOW;
      break;
    }
    double te;
    if (!find_event(e, t_start, t, &te)) {
      if (e->on_step) e->on_step(e->ctx, e, t_start, t);
      if (t >= next_qr) {
        if (orthonormalize(e, sums)) {
          res.status = TF_MEMBER_FAILED;
          break;
        }
        next_qr = t + e->interval;
        tf_dopri5_restart(e->stepper, t, x);
      }
      continue;
    }
    if (e->on_step) e->on_step(e->ctx, e, t_start, te);
    if (tf_dopri5_step_to(e->stepper, t_start, e->start, e->na, te, x)) {
      res.status = TF_MEMBER_STEP_UNDERFLOW;
      break;
    }
    t = te;
    if (e->mode == TF_C2_SLIP) {
      double h[2];
      tf_codim2_frame(&e->sys, x, h, NULL, NULL);
      const double r = hypot(h[0], h[1]);
      if (r > e->opt.sigma_tol) {
        /* not Sigma: the slip direction turned through 90 degrees within the step */
        e->d_ref[0] = h[0] / r, e->d_ref[1] = h[1] / r;
        if (++renewals > e->opt.max_events) {
          res.status = TF_MEMBER_ZENO;
          break;
        }
      } else if (arrive(e, &res, t, x)) {
        res.status = TF_MEMBER_FAILED;
        break;
      }
    } else {
      tf_codim2_point pt;
      tf_codim2_classify(&e->sys, t, x, &pt);
      e->mode = TF_C2_SLIP;
      set_direction(e, pt.phi_R_max);
      emit(e, &res, TF_C2_ROLL_END, t, x, pt.phi_R_max);
    }
    if (!tf_state_finite(x, e->na)) {
      res.status = TF_MEMBER_NONFINITE;
      break;
    }
    const long in_window = res.events - window_events;
    if (res.events >= e->opt.max_events ||
        (in_window >= 100 && (double)in_window > e->opt.max_event_rate * (t - window_start))) {
      res.status = TF_MEMBER_ZENO;
      break;
    }
    if (in_window >= 100) window_start = t, window_events = res.events;
    tf_dopri5_restart(e->stepper, t, x);
  }
  if (e->m && res.status == TF_MEMBER_OK && !orthonormalize(e, sums)) {
    for (size_t c = 0; c < e->m; c++) res.lyapunov[c] = t > t0 ? sums[c] / (t - t0) : NAN;
    res.tangent_time = t - t0;
  }
  memcpy(x_io, x, e->n * sizeof *x);
  res.t = t;
  res.mode = e->mode;
  res.rhs_evals = tf_dopri5_stats(e->stepper).rhs_evals;
  return res;
}
