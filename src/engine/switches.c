/* switches.c — see switches.h.  The modes' fields, event functions and transitions, run by
 * event_loop.c's step loop; one member at a time, the structure reused across members. */
#include "switches.h"

#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_loop.h"
#include "status.h"

enum { MAXM = TF_SWITCHES_MAX };

struct tf_switches {
  const tf_kernel *k;
  const tf_switches_ops *ops;
  const double *p;
  size_t n;
  int m;
  tf_switches_options opt;
  tf_event_loop *loop;
  signed char mode[MAXM];
  bool singular; /* the multipliers' system of the current mode was singular at some x */
  bool stop;     /* tf_switches_request_stop */
  tf_sw_event_fn on_event;
  tf_sw_choice_fn on_choice;
  tf_sw_step_fn on_step;
  void *ctx;
  tf_switches_result *res;
  double stick_since; /* start of the current mode, for the sticking times */
  size_t nv, na;      /* tangent vectors, and n + n nv */
  double *aug, *f1, *f2, *probe, *jac;
};

tf_switches_options tf_switches_default_options(void) {
  tf_switches_options o = {.ode = tf_ode_default_options()};
  o.event_tol = 1e-12;
  o.max_event_rate = 1e6;
  o.max_events = 1000000;
  o.sigma_tol = 1e-8; /* filippov.intersection_tol's default */
  return o;
}

const char *tf_sw_event_kind_name(tf_sw_event_kind k) {
  static const char *const names[TF_SW_EVENT_KIND_COUNT] = {"stick", "cross", "release", "choice",
                                                            "undefined"};
  return k < TF_SW_EVENT_KIND_COUNT ? names[k] : "?";
}

int tf_sw_mode_code(int m, const signed char *mode) {
  int code = 0;
  for (int i = m - 1; i >= 0; i--) code = 3 * code + mode[i] + 1;
  return code;
}

/* --- the field of a mode ------------------------------------------------------------------- */

/* Solves a k x k system (k <= 4) in place by GSL's LU with partial pivoting; false if the
 * matrix is singular to working precision (a pivot below 1e-13 of its largest entry). */
static bool solve_small(int k, double *a, double *b) {
  if (k == 0) return true;
  double big = 0;
  for (int i = 0; i < k * k; i++) big = fmax(big, fabs(a[i]));
  if (!(big > 0)) return false;
  gsl_matrix_view m = gsl_matrix_view_array(a, (size_t)k, (size_t)k);
  gsl_vector_view v = gsl_vector_view_array(b, (size_t)k);
  size_t order[MAXM];
  gsl_permutation perm = {(size_t)k, order};
  int sign;
  if (gsl_linalg_LU_decomp(&m.matrix, &perm, &sign)) return false;
  for (int i = 0; i < k; i++)
    if (!(fabs(a[i * k + i]) > 1e-13 * big)) return false;
  return gsl_linalg_LU_svx(&m.matrix, &perm, &v.vector) == 0;
}

static double dot(size_t n, const double *a, const double *b) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* The signs of `mode` at x with the sticking contacts' multipliers filled in: the values that
 * keep grad h_i . f = 0 for every sticking i.  Because f is affine in s, grad h_i . f is affine
 * in lambda: k + 1 field evaluations give the system.  False if it is singular (s holds NaN
 * for the sticking contacts then). */
static bool mode_signs(const tf_switches *sw, double t, const double *x, const signed char *mode,
                       double *s) {
  int stuck[MAXM], k = 0;
  for (int i = 0; i < sw->m; i++) {
    s[i] = mode[i];
    if (mode[i] == 0) stuck[k++] = i;
  }
  if (k == 0) return true;
  double grad[MAXM][TF_MAX_DIM], f0[TF_MAX_DIM], fj[TF_MAX_DIM], a[MAXM * MAXM], b[MAXM];
  const size_t n = sw->n;
  for (int r = 0; r < k; r++) sw->ops->switching(stuck[r], x, sw->p, grad[r]);
  sw->ops->field(t, x, s, sw->p, f0);
  for (int r = 0; r < k; r++) b[r] = -dot(n, grad[r], f0);
  for (int c = 0; c < k; c++) {
    s[stuck[c]] = 1;
    sw->ops->field(t, x, s, sw->p, fj);
    s[stuck[c]] = 0;
    for (size_t i = 0; i < n; i++) fj[i] -= f0[i];
    for (int r = 0; r < k; r++) a[r * k + c] = dot(n, grad[r], fj);
  }
  /* a model that returns NaN or Inf here is not singular: its NaN multipliers make the field
   * NaN, and the member stops as nonfinite */
  if (!tf_state_finite(a, (size_t)(k * k)) || !tf_state_finite(b, (size_t)k)) {
    for (int c = 0; c < k; c++) s[stuck[c]] = NAN;
    return true;
  }
  const bool ok = solve_small(k, a, b);
  for (int c = 0; c < k; c++) s[stuck[c]] = ok ? b[c] : NAN;
  return ok;
}

/* The field of `mode` at x: 0, or the model's refusal. */
static int field_of(tf_switches *sw, const signed char *mode, double t, const double *x,
                    double *dx) {
  double s[MAXM];
  if (!mode_signs(sw, t, x, mode, s)) sw->singular = true;
  return sw->ops->field(t, x, s, sw->p, dx);
}

static bool any_stuck(const tf_switches *sw) {
  for (int i = 0; i < sw->m; i++)
    if (sw->mode[i] == 0) return true;
  return false;
}

/* The variational equation q' = Df(x) q of the current mode.  With every contact slipping and
 * the model's exact Jacobian, one evaluation serves all vectors; a sticking mode's field also
 * moves through its multipliers, whose derivative the model does not give, so it takes central
 * differences along each vector. */
static void tangent_rhs(tf_switches *sw, double t, const double *x, double *dx) {
  const size_t n = sw->n;
  if (sw->ops->field_jacobian && !any_stuck(sw)) {
    double s[MAXM];
    for (int i = 0; i < sw->m; i++) s[i] = sw->mode[i];
    sw->ops->field_jacobian(t, x, s, sw->p, sw->jac);
    for (size_t c = 0; c < sw->nv; c++) {
      const double *q = x + n + c * n;
      for (size_t i = 0; i < n; i++) dx[n + c * n + i] = dot(n, sw->jac + i * n, q);
    }
    return;
  }
  double scale = 0;
  for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(x[i]));
  for (size_t c = 0; c < sw->nv; c++) {
    const double *q = x + n + c * n;
    double *dq = dx + n + c * n;
    const double norm = sqrt(dot(n, q, q));
    if (norm == 0) {
      for (size_t i = 0; i < n; i++) dq[i] = 0;
      continue;
    }
    const double h = 1e-7 * fmax(1.0, scale) / norm;
    for (size_t i = 0; i < n; i++) sw->probe[i] = x[i] + h * q[i];
    field_of(sw, sw->mode, t, sw->probe, sw->f1);
    for (size_t i = 0; i < n; i++) sw->probe[i] = x[i] - h * q[i];
    field_of(sw, sw->mode, t, sw->probe, sw->f2);
    for (size_t i = 0; i < n; i++) dq[i] = (sw->f1[i] - sw->f2[i]) / (2 * h);
  }
}

/* The tangents' probes refuse only where the state nearly does: the state's answer is kept. */
static int rhs(double t, const double *x, void *ctx, double *dx) {
  tf_switches *sw = ctx;
  const int rc = field_of(sw, sw->mode, t, x, dx);
  if (sw->nv) tangent_rhs(sw, t, x, dx);
  return rc;
}

static void current_field(void *ctx, double t, const double *x, double *dx) {
  field_of(ctx, ((tf_switches *)ctx)->mode, t, x, dx);
}

/* One per contact, positive while the mode lasts: s_i h_i while slipping, 1 - lambda_i^2 while
 * sticking (the multiplier reaching +-1, where the sticking field meets a slip field). */
static int event_values(void *ctx, double t, const double *x, double *g) {
  tf_switches *sw = ctx;
  double s[MAXM];
  if (any_stuck(sw) && !mode_signs(sw, t, x, sw->mode, s)) sw->singular = true;
  for (int i = 0; i < sw->m; i++)
    g[i] = sw->mode[i] ? sw->mode[i] * sw->ops->switching(i, x, sw->p, NULL) : 1 - s[i] * s[i];
  return sw->m;
}

/* --- transitions --------------------------------------------------------------------------- */

/* The gradients of the sticking contacts' switching functions at x (rows of grad) and, if h is
 * not NULL, their values; returns how many contacts stick in `mode`. */
static int stuck_normals(const tf_switches *sw, const signed char *mode, const double *x,
                         double grad[][TF_MAX_DIM], double *h) {
  int k = 0;
  for (int i = 0; i < sw->m; i++)
    if (mode[i] == 0) {
      const double hi = sw->ops->switching(i, x, sw->p, grad[k]);
      if (h) h[k] = hi;
      k++;
    }
  return k;
}

/* v -= G^T (G G^T)^-1 r for the k gradients G: with r = h(x) a Newton step onto the surfaces,
 * with r = G q the part of q across them (least squares, so for several sticking contacts the
 * result lies on, or in the tangent space of, their intersection).  r is overwritten. */
static void remove_normal(const tf_switches *sw, int k, double grad[][TF_MAX_DIM], double *r,
                          double *v) {
  double a[MAXM * MAXM];
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++) a[i * k + j] = dot(sw->n, grad[i], grad[j]);
  if (!solve_small(k, a, r)) return;
  for (int i = 0; i < k; i++)
    for (size_t j = 0; j < sw->n; j++) v[j] -= r[i] * grad[i][j];
}

/* Moves x onto the surfaces of the sticking contacts (Newton along their gradients): an event
 * located to event_tol leaves h_i of that size, which would otherwise stay. */
static void project(const tf_switches *sw, const signed char *mode, double *x) {
  for (int it = 0; it < 3; it++) {
    double grad[MAXM][TF_MAX_DIM], h[MAXM];
    const int k = stuck_normals(sw, mode, x, grad, h);
    bool zero = true;
    for (int r = 0; r < k; r++) zero = zero && h[r] == 0;
    if (zero) return;
    remove_normal(sw, k, grad, h, x);
  }
}

/* How far mode `cand` is from consistent at x (0: consistent): sticking multipliers beyond 1,
 * slipping contacts on their surface moving towards the other side.  Negative: the multiplier
 * system is singular there. */
static double violation(tf_switches *sw, double t, const double *x, const signed char *cand,
                        const bool *on, int released) {
  double s[MAXM], f[TF_MAX_DIM], grad[TF_MAX_DIM], v = 0;
  if (!mode_signs(sw, t, x, cand, s)) return -1;
  sw->ops->field(t, x, s, sw->p, f);
  if (!tf_state_finite(f, sw->n)) return NAN; /* the model's field is not finite here */
  for (int i = 0; i < sw->m; i++) {
    if (!on[i] || i == released) continue; /* a release is a tangency: its rate is 0 there */
    if (cand[i] == 0) {
      v = fmax(v, fabs(s[i]) - 1);
    } else {
      sw->ops->switching(i, x, sw->p, grad);
      v = fmax(v, -cand[i] * dot(sw->n, grad, f));
    }
  }
  return v;
}

static void emit(tf_switches *sw, tf_sw_event_kind kind, double t, const double *x, int contact,
                 const signed char *from, const signed char *to, int choices, double u) {
  sw->res->counts[kind]++;
  sw->res->events++;
  if (!sw->on_event) return;
  const tf_sw_event ev = {
      kind, t, x, contact, tf_sw_mode_code(sw->m, from), tf_sw_mode_code(sw->m, to), choices, u};
  sw->on_event(sw->ctx, &ev);
}

/* The next mode at x: contacts in `on` take any of their three modes, the others keep
 * sw->mode, and the contact whose event fired leaves its mode: a slipping one sticks or crosses,
 * a sticking one whose multiplier saturated slips to that side (released >= 0; the slip field
 * is tangent to the surface there, so its rate cannot decide).  Candidates with no violation
 * are consistent: one continues, several are a choice.  Failing those, one within a
 * rounding-size margin continues (an event is located just past its root, where a deciding
 * rate is itself of that size); none is ill-posed, several undefined.  Returns a
 * tf_member_status; the mode goes to next. */
static int select_mode(tf_switches *sw, double t, double *x, const bool *on, int fired,
                       int released, signed char *next) {
  int free_idx[MAXM], nf = 0;
  for (int i = 0; i < sw->m; i++)
    if (on[i] && i != released) free_idx[nf++] = i;
  int total = 1;
  for (int i = 0; i < nf; i++) total *= 3;
  signed char cands[81][MAXM];
  double viol[81], scale = 0, f[TF_MAX_DIM];
  bool singular = false, nonfinite = false;
  signed char release_side = 0; /* the side the released contact's multiplier saturated at */
  if (released >= 0) {
    double s[MAXM];
    mode_signs(sw, t, x, sw->mode, s);
    release_side = s[released] < 0 ? -1 : 1;
  }
  for (int c = 0; c < total; c++) {
    memcpy(cands[c], sw->mode, sizeof cands[c]);
    for (int i = 0, code = c; i < nf; i++, code /= 3)
      cands[c][free_idx[i]] = (signed char)(code % 3 - 1);
    if (released >= 0) cands[c][released] = release_side;
    if (fired >= 0 && sw->mode[fired] != 0 && cands[c][fired] == sw->mode[fired]) {
      viol[c] = INFINITY; /* it has just left that side */
      continue;
    }
    double xc[TF_MAX_DIM];
    memcpy(xc, x, sw->n * sizeof *x);
    project(sw, cands[c], xc);
    viol[c] = violation(sw, t, xc, cands[c], on, released);
    singular = singular || viol[c] < 0;
    nonfinite = nonfinite || isnan(viol[c]);
  }
  field_of(sw, sw->mode, t, x, f);
  for (size_t i = 0; i < sw->n; i++) scale = fmax(scale, fabs(f[i]));
  const double margin = 1e-9 * (1 + scale);
  int found[81], nfound = 0;
  bool strict = true;
  for (int pass = 0; pass < 2 && nfound == 0; pass++) {
    strict = pass == 0;
    for (int c = 0; c < total; c++)
      if (viol[c] >= 0 && viol[c] <= (strict ? 0 : margin)) found[nfound++] = c;
  }
  if (nfound == 1) {
    memcpy(next, cands[found[0]], MAXM);
    return TF_MEMBER_OK;
  }
  double u = NAN;
  if (nfound > 1 && strict && sw->on_choice && sw->on_choice(sw->ctx, &u) == 0 && u > 0 && u < 1) {
    const int pick = found[(int)(u * nfound) < nfound ? (int)(u * nfound) : nfound - 1];
    memcpy(next, cands[pick], MAXM);
    emit(sw, TF_SW_CHOICE, t, x, fired, sw->mode, next, nfound, u);
    return TF_MEMBER_OK;
  }
  if (nfound == 0 && nonfinite) return TF_MEMBER_NONFINITE;
  memcpy(next, sw->mode, MAXM);
  emit(sw, TF_SW_UNDEFINED, t, x, fired, sw->mode, sw->mode, nfound, NAN);
  if (nfound > 1 && !strict) return TF_MEMBER_CODIM2; /* degenerate: only rounding separates */
  /* none consistent: the sticking law contradicts the slip limits; several and no chooser,
   * or a singular system: a point where the model leaves the motion open */
  return nfound == 0 && !singular ? TF_MEMBER_ILL_POSED : TF_MEMBER_CODIM2;
}

/* q <- q + (f_after - f_before) (grad g . q) / (grad g . f_before) for the event surface of
 * contact `which`: h_which for an arrival; a release keeps the field continuous (the multiplier
 * at +-1 is the slip side's value), so its saltation is the identity. */
static void saltation(tf_switches *sw, double t, double *x, int which, const signed char *from,
                      const signed char *to) {
  if (!sw->nv || from[which] == 0) return;
  double grad[TF_MAX_DIM], before[TF_MAX_DIM], after[TF_MAX_DIM];
  const size_t n = sw->n;
  sw->ops->switching(which, x, sw->p, grad);
  field_of(sw, from, t, x, before);
  field_of(sw, to, t, x, after);
  const double denom = dot(n, grad, before);
  if (denom == 0.0) return; /* grazing: unbounded; leave q */
  for (size_t c = 0; c < sw->nv; c++) {
    double *q = x + n + c * n;
    const double d = dot(n, grad, q);
    for (size_t i = 0; i < n; i++) q[i] += (after[i] - before[i]) * d / denom;
  }
}

static void count_collapse(tf_switches *sw, const signed char *mode) {
  int k = 0;
  for (int i = 0; i < sw->m; i++) k += mode[i] == 0;
  if (k > sw->res->collapsed) sw->res->collapsed = k;
}

static void close_stick_time(tf_switches *sw, double t) {
  for (int i = 0; i < sw->m; i++)
    if (sw->mode[i] == 0) sw->res->stick_time[i] += t - sw->stick_since;
  sw->stick_since = t;
}

static int transition(void *ctx, int which, double t, double *x) {
  tf_switches *sw = ctx;
  if (sw->stop) return TF_MEMBER_PENDING;
  bool on[MAXM];
  for (int i = 0; i < sw->m; i++)
    on[i] = i == which || sw->mode[i] == 0 ||
            fabs(sw->ops->switching(i, x, sw->p, NULL)) <= sw->opt.sigma_tol;
  signed char next[MAXM];
  const int status = select_mode(sw, t, x, on, which, sw->mode[which] == 0 ? which : -1, next);
  if (status != TF_MEMBER_OK) return status;
  if (sw->mode[which] != 0)
    emit(sw, next[which] == 0 ? TF_SW_ARRIVE : TF_SW_CROSS, t, x, which, sw->mode, next, 1, NAN);
  else
    emit(sw, TF_SW_RELEASE, t, x, which, sw->mode, next, 1, NAN);
  saltation(sw, t, x, which, sw->mode, next);
  project(sw, next, x);
  close_stick_time(sw, t);
  memcpy(sw->mode, next, MAXM);
  count_collapse(sw, next);
  return TF_MEMBER_OK;
}

/* q minus its part across the sticking contacts' surfaces (normals from stuck_normals). */
static void project_vector(const tf_switches *sw, int k, double grad[][TF_MAX_DIM], double *q) {
  double r[MAXM];
  for (int i = 0; i < k; i++) r[i] = dot(sw->n, grad[i], q);
  remove_normal(sw, k, grad, r, q);
}

/* While contacts stick, the tangent vectors live in the tangent space of their surfaces: the
 * saltation put them there; the projection before each QR removes what drift adds. */
static void project_tangents(void *ctx, double *x) {
  tf_switches *sw = ctx;
  double grad[MAXM][TF_MAX_DIM];
  const int k = stuck_normals(sw, sw->mode, x, grad, NULL);
  if (!k) return;
  for (size_t c = 0; c < sw->nv; c++) project_vector(sw, k, grad, x + sw->n + c * sw->n);
}

/* Where a run (a Lyapunov block) starts its tangent vectors.  After a run that ended ok, where
 * the last one left them (`continued`, the loop's frame: event_loop.h).
 * The first run starts from a fixed generic frame (the same in every run: results stay
 * reproducible), not the identity, which is wrong here twice over: with contacts sticking,
 * some coordinate vectors lie in directions the sticking kills, and the QR would order a dead
 * vector before a live one; with fewer vectors than dimensions, the span of the first
 * coordinate vectors contains the direction that a contact's arrival on its surface kills
 * (e_v1 in span(e_x1, e_v1)), so a live exponent would collapse.  Either frame is projected
 * into the tangent space of the sticking surfaces and orthonormalised (Gram-Schmidt), as many
 * vectors as are independent; the others keep the identity's columns and die with the
 * sticking (counted in `collapsed`). */
static void start_tangents(void *ctx, double *x, bool continued) {
  tf_switches *sw = ctx;
  if (!continued && !any_stuck(sw) && sw->nv == sw->n) return;
  const size_t n = sw->n, kept = continued ? sw->nv : 0;
  double basis[TF_MAX_DIM][TF_MAX_DIM], grad[MAXM][TF_MAX_DIM];
  const int k = stuck_normals(sw, sw->mode, x, grad, NULL);
  size_t live = 0;
  for (size_t j = 0; j < kept + n && live < sw->nv; j++) {
    double *q = basis[live];
    if (j < kept)
      memcpy(q, x + n + j * n, n * sizeof *q);
    else
      for (size_t i = 0; i < n; i++)
        q[i] = sin(1.0 + 0.7548776662466927 * (double)((j - kept + 1) * (i + 1)));
    project_vector(sw, k, grad, q);
    for (size_t b = 0; b < live; b++) {
      const double d = dot(n, basis[b], q);
      for (size_t i = 0; i < n; i++) q[i] -= d * basis[b][i];
    }
    const double norm = sqrt(dot(n, q, q));
    if (norm < 1e-8) continue;
    for (size_t i = 0; i < n; i++) q[i] /= norm;
    live++;
  }
  memset(x + n, 0, n * sw->nv * sizeof *x); /* the dead ones: the identity's columns */
  for (size_t c = live; c < sw->nv; c++) x[n + c * n + c] = 1.0;
  for (size_t c = 0; c < live; c++) memcpy(x + n + c * n, basis[c], n * sizeof *x);
}

/* A singular multiplier system met inside a mode (two sticking contacts whose constraints
 * became dependent) leaves the sticking motion open: stop there, do not integrate NaN. */
static int after_step(void *ctx) {
  const tf_switches *sw = ctx;
  return sw->singular ? TF_MEMBER_CODIM2 : sw->stop ? TF_MEMBER_PENDING : TF_MEMBER_OK;
}

static void step_done(void *ctx, double t0, double t1) {
  tf_switches *sw = ctx;
  if (sw->on_step) sw->on_step(sw->ctx, sw, t0, t1);
}

static const tf_event_loop_ops loop_ops = {.rhs = rhs,
                                           .field = current_field,
                                           .events = event_values,
                                           .transition = transition,
                                           .after_step = after_step,
                                           .on_step = step_done,
                                           .before_qr = project_tangents,
                                           .start_tangents = start_tangents};

/* --- the driver ---------------------------------------------------------------------------- */

tf_switches *tf_switches_create(const tf_kernel *k, const double *params,
                                const tf_switches_options *opts) {
  if (k->kind != TF_MODEL_SWITCHES) return NULL;
  tf_switches *sw = calloc(1, sizeof *sw);
  if (!sw) return NULL;
  sw->k = k;
  sw->ops = k->switches;
  sw->p = params;
  sw->n = k->dim;
  sw->m = k->switches->nswitches;
  sw->opt = opts ? *opts : tf_switches_default_options();
  if (tf_switches_enable_tangent(sw, 0, 1.0)) {
    tf_switches_destroy(sw);
    return NULL;
  }
  return sw;
}

static void free_tangent(tf_switches *sw) {
  tf_event_loop_destroy(sw->loop);
  free(sw->aug);
  sw->loop = NULL, sw->aug = NULL;
}

int tf_switches_enable_tangent(tf_switches *sw, int vectors, double interval) {
  free_tangent(sw);
  const size_t n = sw->n, nv = vectors > 0 ? (size_t)vectors : 0, na = n + n * nv;
  sw->nv = nv, sw->na = na;
  const tf_event_loop_options lo = {.ode = sw->opt.ode,
                                    .event_tol = sw->opt.event_tol,
                                    .max_event_rate = sw->opt.max_event_rate,
                                    .max_events = sw->opt.max_events,
                                    .qr_interval = interval};
  sw->loop = tf_event_loop_create(n, nv, &loop_ops, sw, &lo);
  /* aug, f1, f2, probe, jac */
  sw->aug = calloc(na + 3 * n + n * n, sizeof *sw->aug);
  if (!sw->loop || !sw->aug) return -1;
  sw->f1 = sw->aug + na, sw->f2 = sw->f1 + n, sw->probe = sw->f2 + n, sw->jac = sw->probe + n;
  return 0;
}

void tf_switches_destroy(tf_switches *sw) {
  if (!sw) return;
  free_tangent(sw);
  free(sw);
}

void tf_switches_set_callbacks(tf_switches *sw, tf_sw_event_fn on_event, tf_sw_choice_fn on_choice,
                               tf_sw_step_fn on_step, void *ctx) {
  sw->on_event = on_event, sw->on_choice = on_choice, sw->on_step = on_step, sw->ctx = ctx;
}

void tf_switches_dense(const tf_switches *sw, double t, double *x) {
  tf_stepper_dense(tf_switches_stepper(sw), t, x);
}

const tf_stepper *tf_switches_stepper(const tf_switches *sw) {
  return tf_event_loop_stepper(sw->loop);
}

void tf_switches_request_stop(tf_switches *sw) {
  sw->stop = true;
}

tf_switches_result tf_switches_run(tf_switches *sw, double t0, double *x_io, double t_end) {
  tf_switches_result res = {.status = TF_MEMBER_OK, .t = t0};
  double *x = sw->aug;
  memcpy(x, x_io, sw->n * sizeof *x);
  sw->res = &res;
  sw->singular = false, sw->stop = false;
  sw->stick_since = t0;
  /* the first mode: contacts off their surfaces slip to their side, those on it are decided
   * like after an event */
  bool on[MAXM], any = false;
  for (int i = 0; i < sw->m; i++) {
    const double h = sw->ops->switching(i, x, sw->p, NULL);
    on[i] = fabs(h) <= sw->opt.sigma_tol;
    sw->mode[i] = h < 0 ? -1 : 1;
    any = any || on[i];
  }
  int status = TF_MEMBER_OK;
  if (any) {
    signed char next[MAXM];
    status = select_mode(sw, t0, x, on, -1, -1, next);
    if (status == TF_MEMBER_OK) memcpy(sw->mode, next, MAXM), project(sw, sw->mode, x);
  }
  if (status == TF_MEMBER_OK && tf_state_finite(x, sw->n)) {
    count_collapse(sw, sw->mode);
    const tf_event_loop_result r = tf_event_loop_run(sw->loop, t0, x, t_end, &res.events);
    res.status = r.model_code ? tf_kernel_member_failed(sw->k, r.model_code, r.t) : r.status;
    res.t = r.t, res.work = r.work;
    res.segments = r.segments;
    if (r.lyapunov) {
      memcpy(res.lyapunov, r.lyapunov, sw->nv * sizeof *res.lyapunov);
      res.tangent_time = r.tangent_time;
    }
    close_stick_time(sw, res.t);
  } else {
    res.status = status != TF_MEMBER_OK ? status : TF_MEMBER_NONFINITE;
  }
  if (!sw->nv) res.collapsed = 0;
  memcpy(res.mode, sw->mode, sizeof res.mode);
  memcpy(x_io, x, sw->n * sizeof *x);
  sw->res = NULL;
  return res;
}
