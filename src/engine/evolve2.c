/* evolve2.c — see evolve2.h.  The modes' fields, event functions and transitions, run by
 * event_loop.c's step loop.  The structure holds the workspace and is reused across members. */
#include "evolve2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_loop.h"
#include "status.h"

struct tf_evolve2 {
  tf_codim2_sys sys;
  tf_codim2_kernel_ctx kctx;
  size_t n;
  tf_evolve2_options opt;
  tf_event_loop *loop;
  tf_c2_mode mode;
  double d_ref[2];
  bool sliding_failed;
  /* the first refusal of field2 outside the stepper's stages (a classification, a departure,
   * the rolling event function): sys.refusal points here; it ends the run as the model's
   * failure */
  int refused;
  bool probing;  /* mode_field is evaluating the tangent dynamics (tangent_rhs) */
  long renewals; /* of d_ref at a zero of <h, d_ref> away from Sigma, in this run */
  tf_c2_event_fn on_event;
  tf_c2_step_fn on_step;
  void *ctx;
  tf_evolve2_result *res; /* of the run in progress */
  /* tangent vectors for Lyapunov exponents (m = 0: off): the stepper's state is x (n)
   * followed by m tangent vectors (n each) */
  size_t m, na;
  double *aug, *dense, *probe, *f1, *f2;
};

tf_evolve2_options tf_evolve2_default_options(void) {
  tf_evolve2_options o = {.ode = tf_ode_default_options()};
  o.event_tol = 1e-12;
  o.sigma_tol = 1e-8;
  o.slave_radius = 1e-6;
  o.slave_lag = 1e-9;
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
    /* The state is slaved only on the way out (R > 0 along the limit direction).  On the
     * way in the direction converges to the limit direction by itself, and forcing it there
     * while h still points elsewhere makes the arrival event <h, d_ref> = 0 miss Sigma: the
     * onset of rolling then moved with slave_radius (and stalled for radii above 1e-5).
     * The tangent dynamics (probing) stays slaved: the exact one relaxes the direction at a
     * rate |V'|/r, which no explicit step follows as r -> 0; the difference lasts a time of
     * order r before the saltation at arrival. */
    const double phi = slaved_angle(e, t, x, atan2(e->d_ref[1], e->d_ref[0]));
    double R = 1;
    if (!e->probing) tf_codim2_rv(&e->sys, t, x, phi, &R, NULL);
    if (R > 0 || r == 0.0) {
      dir[0] = cos(phi), dir[1] = sin(phi);
      return;
    }
  }
  if (r == 0.0) {
    dir[0] = e->d_ref[0], dir[1] = e->d_ref[1];
    return;
  }
  const double s = h[0] * e->d_ref[0] + h[1] * e->d_ref[1] < 0 ? -1.0 : 1.0;
  dir[0] = s * h[0] / r, dir[1] = s * h[1] / r;
}

/* A refusal met here is the stage's (the stepper retries a positive one with a smaller step),
 * not the run's: it is returned, and the run's record left as it was. */
static int mode_field(tf_evolve2 *e, double t, const double *x, double *dx) {
  const int before = e->refused;
  e->refused = 0;
  int rc;
  if (e->mode == TF_C2_SLIP) {
    double dir[2];
    slip_direction(e, t, x, dir);
    rc = e->sys.field2(t, x, dir, e->sys.ctx, dx);
  } else {
    tf_codim2_sliding s;
    const bool failed = tf_codim2_sliding_vector(&e->sys, t, x, &s) != 0;
    memcpy(dx, s.Fs, e->n * sizeof *dx);
    rc = 0;
    if (failed && !e->refused) e->sliding_failed = true;
  }
  rc = tf_model_code_join(rc, e->refused);
  e->refused = before;
  return rc;
}

/* The variational equation q' = Df(x) q of the current mode by central differences along q
 * (evolve.c's scheme: two field evaluations per vector, no Jacobian needed). */
static int tangent_rhs(tf_evolve2 *e, double t, const double *x, const double *q, double *dq) {
  const size_t n = e->n;
  double norm = 0, scale = 0;
  for (size_t i = 0; i < n; i++) norm += q[i] * q[i], scale = fmax(scale, fabs(x[i]));
  norm = sqrt(norm);
  if (norm == 0) {
    memset(dq, 0, n * sizeof *dq);
    return 0;
  }
  const double h = 1e-7 * fmax(1.0, scale) / norm;
  e->probing = true;
  for (size_t i = 0; i < n; i++) e->probe[i] = x[i] + h * q[i];
  const int rc = mode_field(e, t, e->probe, e->f1);
  for (size_t i = 0; i < n; i++) e->probe[i] = x[i] - h * q[i];
  const int rc2 = mode_field(e, t, e->probe, e->f2);
  e->probing = false;
  for (size_t i = 0; i < n; i++) dq[i] = (e->f1[i] - e->f2[i]) / (2 * h);
  return tf_model_code_join(rc, rc2);
}

static int rhs(double t, const double *x, void *ctx, double *dx) {
  tf_evolve2 *e = ctx;
  int rc = mode_field(e, t, x, dx);
  for (size_t c = 0; c < e->m; c++)
    rc = tf_model_code_join(rc, tangent_rhs(e, t, x, x + e->n + c * e->n, dx + e->n + c * e->n));
  return rc;
}

/* --- events: one function per mode, positive inside the mode's domain -------------------- */

static int event_values(void *ctx, double t, const double *x, double *g) {
  tf_evolve2 *e = ctx;
  if (e->mode == TF_C2_SLIP) {
    double h[2];
    tf_codim2_frame(&e->sys, x, h, NULL, NULL);
    g[0] = h[0] * e->d_ref[0] + h[1] * e->d_ref[1];
    return 1;
  }
  tf_codim2_point pt;
  tf_codim2_classify(&e->sys, t, x, &pt);
  g[0] = pt.region == TF_CODIM2_SPIRAL ? -1.0 : -pt.R_max;
  return 1;
}

/* The field for the event functions' slope when landing on an event: an evaluation off the
 * trajectory says nothing of whether the sliding vector is unique on it. */
static void current_field(void *ctx, double t, const double *x, double *dx) {
  tf_evolve2 *e = ctx;
  const bool failed = e->sliding_failed;
  const int rc = mode_field(e, t, x, dx);
  tf_model_code_keep(&e->refused, rc); /* at a located event: no step to shrink */
  e->sliding_failed = failed;
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
  if (e->refused) return -1; /* no verdict on fields the model refused */
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
    double after[TF_MAX_DIM];
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
  if (e->refused) return -1; /* no verdict on fields the model refused */
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
  double n1[TF_MAX_DIM], n2[TF_MAX_DIM], before[TF_MAX_DIM];
  tf_codim2_frame(&e->sys, x, NULL, n1, n2);
  tf_codim2_limit(&e->sys, t, x, phi_in, before);
  const double c = cos(phi_in), sn = sin(phi_in);
  double grad[TF_MAX_DIM], perp[TF_MAX_DIM], denom = 0;
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

/* While rolling, the tangent vectors live on Sigma: the sliding field is tangent to it, so
 * tangent vectors stay tangent, and components off Sigma only appear as the completions QR
 * adds once the saltation at arrival has collapsed the normal directions.  Those are removed
 * before every QR (a neighbour off Sigma returns to it in a time of order its distance), so
 * the normal directions come out with exponents near log(1e-300)/interval: -infinity. */
static void project_tangents(void *ctx, double *x) {
  tf_evolve2 *e = ctx;
  if (e->mode != TF_C2_ROLL) return;
  const size_t n = e->n;
  double n1[TF_MAX_DIM], n2[TF_MAX_DIM];
  tf_codim2_frame(&e->sys, x, NULL, n1, n2);
  for (size_t k = 0; k < e->m; k++) {
    double *q = x + n + k * n, a = 0, b = 0;
    for (size_t i = 0; i < n; i++) a += n1[i] * q[i], b += n2[i] * q[i];
    for (size_t i = 0; i < n; i++) q[i] -= a * n1[i] + b * n2[i];
  }
}

/* --- the loop's hooks ----------------------------------------------------------------------- */

/* Renews the reference direction before each slipping step: the field is the same for the old
 * and the new one wherever both point to the same side, so the stepper's first stage stays
 * valid. */
static void renew_reference(void *ctx, double t, const double *x) {
  tf_evolve2 *e = ctx;
  if (e->mode != TF_C2_SLIP) return;
  double h[2];
  tf_codim2_frame(&e->sys, x, h, NULL, NULL);
  const double r = hypot(h[0], h[1]);
  if (r < e->opt.slave_radius)
    slip_direction(e, t, x, e->d_ref);
  else
    e->d_ref[0] = h[0] / r, e->d_ref[1] = h[1] / r;
}

static int check_sliding(void *ctx) {
  tf_evolve2 *e = ctx;
  if (e->refused) return TF_MEMBER_FAILED;
  if (!e->sliding_failed) return TF_MEMBER_OK;
  e->res->failure = "the sliding vector is not unique here (Theorem 2.17 does not apply)";
  return TF_MEMBER_FAILED;
}

static int transition_of(tf_evolve2 *e, double t, double *x) {
  if (e->mode == TF_C2_SLIP) {
    double h[2];
    tf_codim2_frame(&e->sys, x, h, NULL, NULL);
    const double r = hypot(h[0], h[1]);
    if (r > e->opt.sigma_tol) {
      /* not Sigma: the slip direction turned through 90 degrees within the step */
      e->d_ref[0] = h[0] / r, e->d_ref[1] = h[1] / r;
      return ++e->renewals > e->opt.max_events ? TF_MEMBER_ZENO : TF_MEMBER_OK;
    }
    return arrive(e, e->res, t, x) ? TF_MEMBER_FAILED : TF_MEMBER_OK;
  }
  tf_codim2_point pt;
  tf_codim2_classify(&e->sys, t, x, &pt);
  if (e->refused) return TF_MEMBER_FAILED;
  e->mode = TF_C2_SLIP;
  set_direction(e, pt.phi_R_max);
  emit(e, e->res, TF_C2_ROLL_END, t, x, pt.phi_R_max);
  return TF_MEMBER_OK;
}

/* A transition decided on a field the model refused is no transition: the run fails. */
static int transition(void *ctx, int which, double t, double *x) {
  (void)which;
  tf_evolve2 *e = ctx;
  const int status = transition_of(e, t, x);
  return e->refused ? TF_MEMBER_FAILED : status;
}

static void step_done(void *ctx, double t0, double t1) {
  tf_evolve2 *e = ctx;
  if (e->on_step) e->on_step(e->ctx, e, t0, t1);
}

static const tf_event_loop_ops loop_ops = {.rhs = rhs,
                                           .field = current_field,
                                           .events = event_values,
                                           .transition = transition,
                                           .before_step = renew_reference,
                                           .after_step = check_sliding,
                                           .on_step = step_done,
                                           .before_qr = project_tangents};

/* --- the driver ----------------------------------------------------------------------------- */

static void free_workspace(tf_evolve2 *e) {
  tf_event_loop_destroy(e->loop);
  free(e->aug);
  e->loop = NULL, e->aug = NULL;
}

int tf_evolve2_enable_tangent(tf_evolve2 *e, int vectors, double interval) {
  free_workspace(e);
  const size_t n = e->n, m = vectors > 0 ? (size_t)vectors : 0, na = n + n * m;
  if (m > n) return -1;
  e->m = m, e->na = na;
  const tf_event_loop_options lo = {.ode = e->opt.ode,
                                    .event_tol = e->opt.event_tol,
                                    .max_event_rate = e->opt.max_event_rate,
                                    .max_events = e->opt.max_events,
                                    .qr_interval = interval > 0 ? interval : 1.0};
  e->loop = tf_event_loop_create(n, m, &loop_ops, e, &lo);
  e->aug = calloc(2 * na + 3 * n, sizeof *e->aug); /* aug, dense; probe, f1, f2 */
  if (!e->loop || !e->aug) return -1;
  e->dense = e->aug + na;
  e->probe = e->aug + 2 * na, e->f1 = e->probe + n, e->f2 = e->f1 + n;
  return 0;
}

tf_evolve2 *tf_evolve2_create(const tf_kernel *k, const double *params,
                              const tf_evolve2_options *opts) {
  if (k->kind != TF_MODEL_CODIM2) return NULL;
  tf_evolve2 *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  tf_codim2_from_kernel(&e->sys, &e->kctx, k, params);
  e->sys.refusal = &e->refused;
  e->n = k->dim;
  e->opt = opts ? *opts : tf_evolve2_default_options();
  if (tf_evolve2_enable_tangent(e, 0, 1.0)) {
    tf_evolve2_destroy(e);
    return NULL;
  }
  return e;
}

void tf_evolve2_destroy(tf_evolve2 *e) {
  if (!e) return;
  free_workspace(e);
  free(e);
}

void tf_evolve2_set_callbacks(tf_evolve2 *e, tf_c2_event_fn on_event, tf_c2_step_fn on_step,
                              void *ctx) {
  e->on_event = on_event, e->on_step = on_step, e->ctx = ctx;
}

void tf_evolve2_dense(const tf_evolve2 *e, double t, double *x) {
  tf_stepper_dense(tf_event_loop_stepper(e->loop), t, e->dense);
  memcpy(x, e->dense, e->n * sizeof *x);
}

tf_c2_mode tf_evolve2_mode(const tf_evolve2 *e) {
  return e->mode;
}

void tf_evolve2_request_stop(tf_evolve2 *e) {
  tf_event_loop_request_stop(e->loop);
}

tf_evolve2_result tf_evolve2_run(tf_evolve2 *e, double t0, double *x_io, double t_end) {
  tf_evolve2_result res = {.status = TF_MEMBER_OK, .t = t0, .first_roll_time = NAN};
  double *x = e->aug; /* x, then the tangent vectors */
  e->sliding_failed = false;
  e->refused = 0;
  e->renewals = 0;
  memcpy(x, x_io, e->n * sizeof *x);
  if (!tf_state_finite(x, e->n)) {
    res.status = TF_MEMBER_NONFINITE;
    return res;
  }
  if (start_mode(e, &res, t0, x) || e->refused) {
    res.status = e->refused ? tf_kernel_member_failed(e->kctx.k, e->refused, t0) : TF_MEMBER_FAILED;
    memcpy(x_io, x, e->n * sizeof *x);
    return res;
  }
  e->res = &res;
  const tf_event_loop_result r = tf_event_loop_run(e->loop, t0, x, t_end, &res.events);
  e->res = NULL;
  const int code = r.model_code ? r.model_code : e->refused;
  res.status = code ? tf_kernel_member_failed(e->kctx.k, code, r.t) : r.status;
  res.work = r.work;
  if (r.lyapunov) {
    memcpy(res.lyapunov, r.lyapunov, e->m * sizeof *res.lyapunov);
    res.tangent_time = r.tangent_time;
  }
  memcpy(x_io, x, e->n * sizeof *x);
  res.t = r.t;
  res.mode = e->mode;
  return res;
}
