/* impact.c — see impact.h.  One engine per worker, reused across members. */
#include "impact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_reset.h"
#include "kinds.h"
#include "max_dim.h"
#include "observable.h"
#include "status.h"

enum { MODE_FREE = 0, MODE_STICK = 1, HISTORY = 16 };

struct tf_impact {
  const tf_kernel *k;
  size_t n, m;
  int nimpacts; /* 0 for a flow recorded at events */
  tf_impact_options o;
  tf_event_loop *loop;
  const double *p;
  int mode, stuck; /* stuck: the surface while sticking */
  int section_sign;
  /* a surface the state has just left by a release, a graze or a rebound too slow to clear
   * it: its event waits at
   * h = -contact_tol until h has exceeded +contact_tol, because at h ~ 0 rounding alone would
   * report the same contact again and again */
  bool armed[TF_EVENT_LOOP_MAX_FUNCTIONS];
  /* chattering: the last impacts on one surface (times, impact speeds) */
  int hist_surface, hist_count;
  double hist_t[HISTORY], hist_u[HISTORY];
  double step_limit;  /* one-shot bound on the step after a reset */
  double stick_start; /* start of the current sticking interval */
  tf_impact_result res;
  tf_observable *section_function; /* TF_SECTION_FUNCTION */
  bool resets;                     /* the section has a reset map */
  tf_event_reset reset;
  long storm_events; /* impacts and section resets: the loop's Zeno count */
  bool stop;         /* the observer asked to end the run */
  tf_impact_observer observer;
  void *observer_ctx;
  tf_impact_sampler sampler;
  void *sampler_ctx;
  long n_samples, next_sample;
  double sample_t0, sample_t1;
  tf_impact_step_fn step_hook;
  void *step_ctx;
  double last_step[2]; /* the step seen last; empty after an event */
  /* scratch: dim each, fd dim + dim m; proj dim x dim */
  double *f, *g, *y, *z, *grad, *gradp, *xplus, *jac, *fd, *proj;
};

void tf_impact_options_default(tf_impact_options *o) {
  o->complete_chattering = true;
  o->chatter_velocity = 1e-3;
  o->chatter_tol = 1e-2;
  o->chatter_impacts = 5;
  o->contact_tol = 1e-10;
  o->section = TF_SECTION_NONE;
  o->section_component = 0;
  o->section_level = 0.0;
  o->section_direction = 0;
  o->section_function = NULL;
  o->section_reset.count = 0;
}

/* --- fields ------------------------------------------------------------------------------ */

static int free_field(const tf_impact *e, double t, const double *x, double *dx) {
  return tf_model_rhs(e->k)(t, x, e->p, dx);
}

static double dot(const double *a, const double *b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* The motion while sticking on surface i into dx, the contact force into *force: the model's
 * code, by constrained_motion where the model has it (the older constrained cannot refuse). */
static int sticking_field(const tf_impact *e, int i, double t, const double *x, double *dx,
                          double *force) {
  const tf_impact_ops *ops = e->k->impact;
  if (ops->constrained_motion) return ops->constrained_motion(i, t, x, e->p, dx, force);
  *force = ops->constrained(i, t, x, e->p, dx);
  return 0;
}

/* The mode's field: 0, or the model's refusal (the stepper retries smaller or fails). */
static int field_of_mode(tf_impact *e, double t, const double *x, double *dx) {
  if (e->mode != MODE_STICK) return free_field(e, t, x, dx);
  double force;
  return sticking_field(e, e->stuck, t, x, dx, &force);
}

static void mode_field(void *ctx, double t, const double *x, double *dx) {
  field_of_mode(ctx, t, x, dx);
}

/* Jacobian of the mode's field into e->jac: the kernel's for free flight when it has one,
 * central differences otherwise (the constrained field has no analytic Jacobian). */
static void mode_jacobian(tf_impact *e, double t, const double *x) {
  const size_t n = e->n;
  if (e->mode == MODE_FREE && tf_model_jacobian(e->k)) {
    tf_model_jacobian(e->k)(t, x, e->p, e->jac);
    return;
  }
  memcpy(e->y, x, n * sizeof *x);
  for (size_t j = 0; j < n; j++) {
    const double d = 1e-7 * fmax(1.0, fabs(x[j]));
    e->y[j] = x[j] + d;
    mode_field(e, t, e->y, e->fd);
    e->y[j] = x[j] - d;
    mode_field(e, t, e->y, e->z);
    e->y[j] = x[j];
    for (size_t i = 0; i < n; i++) e->jac[i * n + j] = (e->fd[i] - e->z[i]) / (2 * d);
  }
}

static int loop_rhs(double t, const double *x, void *ctx, double *dx) {
  tf_impact *e = ctx;
  const size_t n = e->n;
  const int rc = field_of_mode(e, t, x, dx);
  if (!e->m) return rc;
  mode_jacobian(e, t, x);
  for (size_t c = 0; c < e->m; c++)
    for (size_t i = 0; i < n; i++) dx[n + c * n + i] = dot(e->jac + i * n, x + n + c * n, n);
  return rc;
}

/* The section function s(x): the derivative of a component or its distance to a level.  It
 * is evaluated at every event sample, so a model's rate of that one component is preferred to
 * the whole field. */
static double section_value(tf_impact *e, double t, const double *x) {
  const int c = e->o.section_component;
  if (e->o.section == TF_SECTION_EXTREMUM) {
    if (e->k->impact && e->k->impact->rate) return e->k->impact->rate(c, t, x, e->p);
    free_field(e, t, x, e->z);
    return e->z[c];
  }
  if (e->o.section == TF_SECTION_FUNCTION)
    return tf_observable_eval(e->section_function, t, x, e->p);
  return x[c] - e->o.section_level;
}

static int loop_events(void *ctx, double t, const double *x, double *g) {
  tf_impact *e = ctx;
  if (e->mode == MODE_STICK) {
    /* within a step whose stages the field accepted: no refusal expected here */
    (void)sticking_field(e, e->stuck, t, x, e->z, &g[0]);
    return 1;
  }
  const int ns = e->nimpacts;
  for (int i = 0; i < ns; i++)
    g[i] = e->k->impact->surface(i, x, e->p, NULL) + (e->armed[i] ? 0.0 : e->o.contact_tol);
  if (e->o.section == TF_SECTION_NONE) return ns;
  g[ns] = e->section_sign * section_value(e, t, x);
  if (e->resets) g[ns] += tf_event_reset_offset(&e->reset);
  return ns + 1;
}

/* The normal speed h_x f and its rate along the flow (central difference). */
static double normal_speed(tf_impact *e, int i, double t, const double *x) {
  e->k->impact->surface(i, x, e->p, e->grad);
  free_field(e, t, x, e->g);
  return dot(e->grad, e->g, e->n);
}

static double normal_acceleration(tf_impact *e, int i, double t, const double *x) {
  const size_t n = e->n;
  free_field(e, t, x, e->f);
  double fnorm = 0, scale = 1;
  for (size_t j = 0; j < n; j++)
    fnorm = fmax(fnorm, fabs(e->f[j])), scale = fmax(scale, fabs(x[j]));
  if (fnorm == 0.0) return 0.0;
  const double d = 1e-6 * scale / fnorm;
  for (size_t j = 0; j < n; j++) e->y[j] = x[j] + d * e->f[j];
  const double up = normal_speed(e, i, t, e->y);
  for (size_t j = 0; j < n; j++) e->y[j] = x[j] - d * e->f[j];
  const double down = normal_speed(e, i, t, e->y);
  return (up - down) / (2 * d);
}

/* A flight starting on surface i with normal speed w: bound the first step by half its
 * ballistic estimate, so the locator sees the state above the surface before it returns. */
static void bound_first_step(tf_impact *e, int i, double t, const double *x, double w) {
  const double a = normal_acceleration(e, i, t, x);
  e->step_limit = a < 0 && w > 0 ? t + w / -a : INFINITY;
}

static double loop_step_limit(void *ctx, double t, const double *x) {
  (void)t, (void)x;
  tf_impact *e = ctx;
  const double lim = e->step_limit;
  e->step_limit = INFINITY;
  return lim;
}

static int notify(tf_impact *e, tf_impact_event kind, int surface, double t, const double *x) {
  if (e->observer && e->observer(e->observer_ctx, kind, surface, t, x)) {
    e->stop = true;
    return TF_MEMBER_FAILED; /* ends the loop; tf_impact_run reports ok */
  }
  return TF_MEMBER_OK;
}

static void reset_section_sign(tf_impact *e, double t, const double *x) {
  if (e->o.section != TF_SECTION_NONE) e->section_sign = section_value(e, t, x) >= 0 ? 1 : -1;
  e->reset.armed = true;
}

static double section_at(void *ctx, double t, const double *x) {
  return section_value(ctx, t, x);
}

static void saltation(tf_impact *e, double *x, double u);

/* Before the section's reset at its event (t, x-), what the saltation of the reset needs
 * (saltation below): f- into e->f, the gradient of s into e->grad, dR/dx into e->jac and
 * dR/dt into e->gradp, all exact (observable.h).  Returns the rate of s along the flow,
 * grad s . f- + ds/dt: an event time moved by dt moves the state after it by
 * (dR/dx f- + dR/dt - f+) dt. */
static double section_reset_rate(tf_impact *e, double t, const double *x) {
  const size_t n = e->n;
  free_field(e, t, x, e->f);
  double s_t = 0;
  if (e->o.section == TF_SECTION_FUNCTION)
    s_t = tf_observable_gradient(e->section_function, t, x, e->p, e->grad);
  else /* a level (an extremum is refused with tangent vectors: tf_impact_create) */
    for (size_t i = 0; i < n; i++) e->grad[i] = i == (size_t)e->o.section_component;
  tf_reset_map_jacobian(e->reset.map, t, x, e->p, e->jac, e->gradp);
  return dot(e->grad, e->f, n) + s_t;
}

/* The section's reset at its event (t, x): the new state must be finite and admissible.
 * Tangent vectors cross by the saltation matrix of the reset. */
static int section_reset(tf_impact *e, double t, double *x) {
  const double u = e->m ? section_reset_rate(e, t, x) : 0;
  if (e->m && !(fabs(u) > 0 && isfinite(u))) {
    snprintf(e->res.message, sizeof e->res.message,
             "the event at t = %.9g crosses the section (poincare.event) at rate %g: no "
             "saltation matrix for the tangent vectors of its reset",
             t, u);
    return TF_MEMBER_FAILED;
  }
  int st = tf_event_reset_apply(&e->reset, e->p, section_at, e, t, x, &e->section_sign,
                                &e->step_limit, e->res.message, sizeof e->res.message);
  if (st == TF_MEMBER_OK && e->m) {
    free_field(e, t, x, e->g);
    for (size_t i = 0; i < e->n; i++) e->g[i] -= e->gradp[i]; /* f+ - dR/dt */
    saltation(e, x, u);
  }
  for (int i = 0; st == TF_MEMBER_OK && i < e->nimpacts; i++) {
    const double h = e->k->impact->surface(i, x, e->p, NULL);
    if (h < -e->o.contact_tol * fmax(1.0, fabs(x[0]))) {
      snprintf(e->res.message, sizeof e->res.message,
               "the reset map (poincare.reset) leaves the admissible set at t = %.9g (impact "
               "surface %d: h = %.3g < 0)",
               t, i, h);
      st = TF_MEMBER_FAILED;
    }
  }
  return st;
}

/* --- sticking -------------------------------------------------------------------------------- */

/* The contact force at x on surface i; NaN (nothing holds it: no sticking) where the model
 * refuses the state, so the member stays in free flight, whose field then decides. */
static double contact_force(tf_impact *e, int i, double t, const double *x) {
  double force;
  return sticking_field(e, i, t, x, e->z, &force) ? NAN : force;
}

/* --- tangent vectors on a constraint ------------------------------------------------------ */

/* P = d stick_i / dx at x on constraint i, by central differences, into e->proj.  stick maps a
 * state onto the constraint (stick o stick = stick), so on it P is a projection onto the
 * constraint's tangent space T M, and its trace is its rank, dim T M. */
static int stick_projection(tf_impact *e, int i, const double *x) {
  const size_t n = e->n;
  double trace = 0;
  memcpy(e->y, x, n * sizeof *x);
  for (size_t j = 0; j < n; j++) {
    const double d = 1e-7 * fmax(1.0, fabs(x[j]));
    e->y[j] = x[j] + d;
    e->k->impact->stick(i, e->y, e->p, e->fd);
    e->y[j] = x[j] - d;
    e->k->impact->stick(i, e->y, e->p, e->z);
    e->y[j] = x[j];
    for (size_t r = 0; r < n; r++) e->proj[r * n + j] = (e->fd[r] - e->z[r]) / (2 * d);
    trace += e->proj[j * n + j];
  }
  const long rank = lround(trace);
  return rank < 0 ? 0 : rank > (long)n ? (int)n : (int)rank;
}

/* The tangent vectors where the state sticks to constraint i: v <- P v.  A perturbation across
 * the constraint dies in finite time (the chattering sequence it would start ends at the same
 * accumulation), one along it is carried, and a shift along the flow stays one (P f- = f on
 * the constraint, where the free and the constrained field agree in the directions along it),
 * so P is the tangent map of the completed accumulation to first order.  The vectors are then
 * reordered, those that stay independent first (Gram-Schmidt), so that the QR orders the
 * exponents that die last; n - dim T M directions die (res.collapsed). */
static void tangents_onto_constraint(tf_impact *e, int i, double *x) {
  const size_t n = e->n, m = e->m;
  const int rank = stick_projection(e, i, x);
  if ((int)n - rank > e->res.collapsed) e->res.collapsed = (int)n - rank;
  double *basis = e->jac; /* free between right-hand sides: m vectors of n */
  bool taken[TF_MAX_DIM] = {false};
  size_t live = 0;
  for (size_t c = 0; c < m; c++) { /* v <- P v; the independent ones orthogonalised, in order */
    double *v = x + n + c * n, *q = basis + live * n;
    const double length = sqrt(dot(v, v, n)); /* before the projection: what it keeps of v */
    for (size_t r = 0; r < n; r++) q[r] = dot(e->proj + r * n, v, n);
    memcpy(v, q, n * sizeof *v);
    for (size_t b = 0; b < live; b++) {
      const double d = dot(basis + b * n, q, n) / dot(basis + b * n, basis + b * n, n);
      for (size_t r = 0; r < n; r++) q[r] -= d * basis[b * n + r];
    }
    /* (components along the vectors before it change no diagonal of the next QR) */
    const double norm = sqrt(dot(q, q, n));
    if (live < (size_t)rank && length > 0 && norm > 1e-8 * length) taken[c] = true, live++;
  }
  for (size_t c = 0; c < m; c++) /* the dependent ones after them, as projected: they die */
    if (!taken[c]) memcpy(basis + live++ * n, x + n + c * n, n * sizeof *x);
  memcpy(x + n, basis, m * n * sizeof *x);
}

static int enter_stick(tf_impact *e, int i, double *x, double t_from) {
  e->k->impact->stick(i, x, e->p, e->xplus);
  memcpy(x, e->xplus, e->n * sizeof *x);
  e->mode = MODE_STICK, e->stuck = i;
  e->stick_start = t_from;
  e->hist_count = 0;
  if (e->m) tangents_onto_constraint(e, i, x);
  return TF_MEMBER_OK;
}

/* After an impact on surface i at time t with impact speed u: if the last impacts decay
 * geometrically, complete the sequence and stick.  Returns true if it did. */
static bool complete_chattering(tf_impact *e, int i, double t, double *x, double u) {
  if (e->hist_surface != i) e->hist_count = 0, e->hist_surface = i;
  if (e->hist_count == HISTORY) {
    memmove(e->hist_t, e->hist_t + 1, (HISTORY - 1) * sizeof *e->hist_t);
    memmove(e->hist_u, e->hist_u + 1, (HISTORY - 1) * sizeof *e->hist_u);
    e->hist_count--;
  }
  e->hist_t[e->hist_count] = t, e->hist_u[e->hist_count] = u, e->hist_count++;
  const int need = e->o.chatter_impacts, c = e->hist_count;
  if (!e->o.complete_chattering || c < need || !(u < e->o.chatter_velocity)) return false;
  /* ratios of successive flight times and of successive impact speeds over the last `need`
   * impacts, all equal to the last flight-time ratio within the tolerance */
  const double *ht = e->hist_t + c - need, *hu = e->hist_u + c - need;
  const double rho = (ht[need - 1] - ht[need - 2]) / (ht[need - 2] - ht[need - 3]);
  if (!(rho > 0 && rho < 1)) return false;
  for (int j = 2; j < need; j++) {
    const double rt = (ht[j] - ht[j - 1]) / (ht[j - 1] - ht[j - 2]);
    if (!(fabs(rt / rho - 1) <= e->o.chatter_tol)) return false;
  }
  for (int j = 1; j < need; j++)
    if (!(fabs(hu[j] / hu[j - 1] / rho - 1) <= e->o.chatter_tol)) return false;
  e->k->impact->stick(i, x, e->p, e->xplus);
  if (!(contact_force(e, i, t, e->xplus) > 0)) return false; /* nothing holds it there */
  const double t_acc = t + (ht[need - 1] - ht[need - 2]) * rho / (1 - rho);
  enter_stick(e, i, x, t_acc);
  e->res.chatters++;
  return true;
}

/* --- transitions ----------------------------------------------------------------------------- */

/* Tangent vectors across a reset: y <- R_x y + (f+ - R_t - R_x f-) (h_x y) / u, with u the
 * rate h_x f- + h_t at which the event function h crosses zero (R_t = h_t = 0 at an impact). */
static void saltation(tf_impact *e, double *x, double u) {
  const size_t n = e->n;
  /* e->f: f-, e->g: f+ - R_t, e->grad: h_x at x-, e->jac: R_x */
  for (size_t i = 0; i < n; i++) e->y[i] = e->g[i] - dot(e->jac + i * n, e->f, n);
  for (size_t c = 0; c < e->m; c++) {
    double *v = x + n + c * n;
    const double hv = dot(e->grad, v, n) / u;
    for (size_t i = 0; i < n; i++) e->z[i] = dot(e->jac + i * n, v, n) + e->y[i] * hv;
    memcpy(v, e->z, n * sizeof *v);
  }
}

/* The landing leaves the state just past the root, h ~ -event_tol |h'|, and a reset that
 * keeps the position keeps it there: the next step would start outside and, while it is
 * shorter than the time to climb back, report the same contact again.  Move the state along
 * the post-impact field (normal speed w > 0) until h >= 0: a shift of the order of the event
 * tolerance. */
static void leave_surface(tf_impact *e, int i, double t, double *x, double w) {
  const size_t n = e->n;
  double h = e->k->impact->surface(i, x, e->p, NULL);
  if (h >= 0) return;
  free_field(e, t, x, e->f);
  double d = -h / w;
  for (int k = 0; k < 8 && h < 0; k++, d *= 2) {
    for (size_t j = 0; j < n; j++) e->y[j] = x[j] + d * e->f[j];
    h = e->k->impact->surface(i, e->y, e->p, NULL);
  }
  if (h >= 0) memcpy(x, e->y, n * sizeof *x);
}

static int impact(tf_impact *e, int i, double t, double *x) {
  const size_t n = e->n;
  e->k->impact->surface(i, x, e->p, e->grad);
  free_field(e, t, x, e->f);
  const double u = dot(e->grad, e->f, n);
  if (!(u < 0)) { /* a graze: the flow touched the surface without crossing */
    e->armed[i] = false;
    if (contact_force(e, i, t, x) > 0) return enter_stick(e, i, x, t);
    return TF_MEMBER_OK;
  }
  e->k->impact->reset(i, x, e->p, e->xplus, e->m ? e->jac : NULL);
  if (!tf_state_finite(e->xplus, n)) return TF_MEMBER_NONFINITE;
  free_field(e, t, e->xplus, e->g);
  e->k->impact->surface(i, e->xplus, e->p, e->gradp); /* the surface may be curved */
  const double w = dot(e->gradp, e->g, n);
  if (w < -e->o.contact_tol * fmax(1.0, -u)) {
    snprintf(e->res.message, sizeof e->res.message,
             "the reset map of impact surface %d leaves the admissible side at t = %.9g "
             "(normal speed %.3g before the impact, %.3g after it)",
             i, t, u, w);
    return TF_MEMBER_FAILED;
  }
  if (e->m) saltation(e, x, u);
  memcpy(x, e->xplus, n * sizeof *x);
  if (w > 0) leave_surface(e, i, t, x, w);
  e->res.impacts++, e->storm_events++;
  int st = notify(e, TF_IMPACT_HIT, i, t, x);
  if (st != TF_MEMBER_OK) return st;
  if (complete_chattering(e, i, t, x, -u))
    return notify(e, TF_IMPACT_ACCUMULATION, i, e->stick_start, x);
  if (w <= e->o.contact_tol * fmax(1.0, -u) && contact_force(e, i, t, x) > 0)
    return enter_stick(e, i, x, t); /* a plastic impact */
  /* a clear rebound needs no disarming (the first step is bounded instead); a rebound too
   * slow to leave the surface by contact_tol is disarmed like a graze */
  e->armed[i] = w > e->o.contact_tol * fmax(1.0, -u) * 1e3;
  bound_first_step(e, i, t, x, w);
  return TF_MEMBER_OK;
}

static int loop_transition(void *ctx, int which, double t, double *x) {
  tf_impact *e = ctx;
  e->last_step[0] = e->last_step[1] = t; /* the stepper restarts: no step since */
  int st = TF_MEMBER_OK;
  if (e->mode == MODE_STICK) {
    e->mode = MODE_FREE;
    e->armed[e->stuck] = false;
    e->res.stick_time += fmax(0.0, t - e->stick_start);
    e->res.releases++;
    st = notify(e, TF_IMPACT_RELEASE, e->stuck, t, x);
  } else if (which < e->nimpacts) {
    st = impact(e, which, t, x);
  } else {
    /* the section function went from section_sign * s > 0 to < 0 */
    const int crossing = -e->section_sign;
    if (e->o.section_direction == 0 || e->o.section_direction == crossing) {
      e->res.sections++;
      if (e->resets) { /* the reset sets the section's side and arming itself */
        e->storm_events++;
        st = section_reset(e, t, x);
        return st == TF_MEMBER_OK ? notify(e, TF_IMPACT_SECTION, -1, t, x) : st;
      }
      st = notify(e, TF_IMPACT_SECTION, -1, t, x);
    }
  }
  reset_section_sign(e, t, x);
  return st;
}

static int loop_storm(void *ctx, const double *x) {
  (void)ctx, (void)x;
  return TF_MEMBER_ZENO;
}

/* Re-arms the surfaces the state has left by more than contact_tol (x: the state). */
static void rearm(tf_impact *e, const double *x) {
  for (int i = 0; i < e->nimpacts; i++)
    if (!e->armed[i] && e->k->impact->surface(i, x, e->p, NULL) > e->o.contact_tol)
      e->armed[i] = true;
}

static void loop_on_step(void *ctx, double t0, double t1) {
  tf_impact *e = ctx;
  const tf_stepper *s = tf_event_loop_stepper(e->loop);
  if (e->mode == MODE_FREE) {
    tf_stepper_dense(s, t1, e->fd);
    rearm(e, e->fd);
    if (e->resets) tf_event_reset_rearm(&e->reset, e->section_sign * section_value(e, t1, e->fd));
  }
  for (; e->sampler && e->next_sample < e->n_samples; e->next_sample++) {
    const double ts = e->n_samples == 1
                          ? e->sample_t0
                          : e->sample_t0 + (e->sample_t1 - e->sample_t0) * (double)e->next_sample /
                                               (double)(e->n_samples - 1);
    if (ts > t1 || ts < t0) break;
    tf_stepper_dense(s, ts, e->fd);
    e->sampler(e->sampler_ctx, ts, e->fd);
  }
  e->last_step[0] = t0, e->last_step[1] = t1;
  if (e->step_hook) e->step_hook(e->step_ctx, t0, t1);
}

/* --- setup and run ---------------------------------------------------------------------------- */

/* While sticking, the constrained field's differences (off the constraint) turn the vectors
 * off its tangent space: back onto it before each QR. */
static void loop_before_qr(void *ctx, double *x) {
  tf_impact *e = ctx;
  if (e->mode == MODE_STICK) tangents_onto_constraint(e, e->stuck, x);
}

/* A run that starts on a constraint starts its vectors on it (the loop's frame, or its generic
 * one: event_loop.h).  (Called at the start of a run only: nothing closes a segment mid-run
 * here.) */
static void loop_start_tangents(void *ctx, double *x, bool continued) {
  tf_impact *e = ctx;
  (void)continued;
  if (e->mode == MODE_STICK) tangents_onto_constraint(e, e->stuck, x);
}

/* With tangent vectors, the exact derivatives of the section's reset and function. */
static bool saltation_ready(tf_impact *e, tf_error *why) {
  return !tf_reset_map_differentiate(e->reset.map, why) &&
         !(e->section_function && tf_observable_differentiate(e->section_function, why));
}

tf_impact *tf_impact_create(const tf_kernel *k, size_t m, const tf_impact_options *o) {
  /* a flow recorded at events runs here too, with no impact surfaces */
  const int nimpacts = k->kind == TF_MODEL_IMPACT ? (int)k->impact->nimpacts : 0;
  const bool resets = o->section_reset.count > 0;
  if (!tf_model_rhs(k) || nimpacts + 1 > TF_EVENT_LOOP_MAX_FUNCTIONS || k->dim > TF_MAX_DIM ||
      m > k->dim || (resets && m > 0 && o->section == TF_SECTION_EXTREMUM))
    return NULL;
  tf_impact *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  const size_t n = k->dim, na = n + n * m;
  e->k = k, e->n = n, e->m = m, e->o = *o, e->nimpacts = nimpacts;
  e->o.section_function = NULL; /* the caller's text, gone after this call */
  e->o.section_reset.count = 0;
  tf_error why;
  if ((o->section == TF_SECTION_FUNCTION &&
       !(e->section_function = tf_observable_parse(k, o->section_function, &why))) ||
      (resets && tf_event_reset_init(&e->reset, k, &o->section_reset, o->contact_tol)) ||
      (resets && m > 0 && !saltation_ready(e, &why))) {
    tf_observable_destroy(e->section_function);
    tf_event_reset_free(&e->reset);
    free(e);
    return NULL;
  }
  e->resets = resets;
  if (e->o.chatter_impacts < 3) e->o.chatter_impacts = 3;
  if (e->o.chatter_impacts > HISTORY) e->o.chatter_impacts = HISTORY;
  e->f = calloc(8 * n + 2 * n * n + na, sizeof *e->f);
  if (!e->f) {
    tf_impact_destroy(e);
    return NULL;
  }
  e->g = e->f + n, e->y = e->g + n, e->z = e->y + n, e->grad = e->z + n;
  e->gradp = e->grad + n, e->xplus = e->gradp + n, e->jac = e->xplus + n, e->fd = e->jac + n * n;
  e->proj = e->fd + n + na;
  const tf_event_loop_ops ops = {
      .rhs = loop_rhs,
      .field = mode_field,
      .events = loop_events,
      .transition = loop_transition,
      .on_step = loop_on_step,
      .storm_status = loop_storm,
      .step_limit = loop_step_limit,
      .before_qr = loop_before_qr,
      .start_tangents = loop_start_tangents,
  };
  e->loop = tf_event_loop_create(n, m, &ops, e, &e->o.loop);
  if (!e->loop) {
    tf_impact_destroy(e);
    return NULL;
  }
  return e;
}

void tf_impact_destroy(tf_impact *e) {
  if (!e) return;
  tf_event_loop_destroy(e->loop);
  tf_observable_destroy(e->section_function);
  tf_event_reset_free(&e->reset);
  free(e->f);
  free(e);
}

void tf_impact_set_observer(tf_impact *e, tf_impact_observer fn, void *ctx) {
  e->observer = fn, e->observer_ctx = ctx;
}

void tf_impact_set_sampler(tf_impact *e, tf_impact_sampler fn, void *ctx, long n_samples) {
  e->sampler = fn, e->sampler_ctx = ctx, e->n_samples = fn ? n_samples : 0;
}

void tf_impact_set_step_hook(tf_impact *e, tf_impact_step_fn fn, void *ctx) {
  e->step_hook = fn, e->step_ctx = ctx;
}

void tf_impact_dense(const tf_impact *e, double t, double *x) {
  double all[TF_MAX_DIM * (TF_MAX_DIM + 1)]; /* the state may carry tangent vectors */
  tf_stepper_dense(tf_event_loop_stepper(e->loop), t, all);
  memcpy(x, all, e->n * sizeof *x);
}

void tf_impact_last_step(const tf_impact *e, double step[2]) {
  step[0] = e->last_step[0], step[1] = e->last_step[1];
}

bool tf_impact_begin(tf_impact *e, const double *p, double t0, double *x, double t_end) {
  memset(&e->res, 0, sizeof e->res);
  e->last_step[0] = e->last_step[1] = t0;
  e->res.status = TF_MEMBER_OK, e->res.t = t0;
  e->p = p, e->mode = MODE_FREE, e->stuck = 0, e->stop = false;
  e->hist_count = 0, e->hist_surface = -1, e->step_limit = INFINITY;
  for (int i = 0; i < TF_EVENT_LOOP_MAX_FUNCTIONS; i++) e->armed[i] = true;
  e->next_sample = 0, e->sample_t0 = t0, e->sample_t1 = t_end;
  /* where the start lies: inside, on a constraint (flying off or sticking), or outside */
  for (int i = 0; i < e->nimpacts; i++) {
    const double h = e->k->impact->surface(i, x, p, NULL);
    const double scale = fmax(1.0, fabs(x[0]));
    /* a state that ended a previous run on a constraint (a Lyapunov block, a checkpoint) may
     * lie below it by the integration's drift: on it, not outside */
    const double drift = 100 * (e->o.loop.ode.rtol * scale + e->o.loop.ode.atol);
    if (h < -fmax(e->o.contact_tol * scale, drift)) {
      snprintf(
          e->res.message, sizeof e->res.message,
          "the initial state lies outside the admissible set (impact surface %d: h = %.3g < 0)", i,
          h);
      e->res.status = TF_MEMBER_FAILED;
      return false;
    }
    if (h > e->o.contact_tol * scale) continue;
    e->armed[i] = false;
    const double w = normal_speed(e, i, t0, x);
    if (fabs(w) <= e->o.contact_tol * scale && contact_force(e, i, t0, x) > 0) {
      e->mode = MODE_STICK, e->stuck = i, e->stick_start = t0;
      break;
    }
    if (w > 0) bound_first_step(e, i, t0, x, w);
  }
  reset_section_sign(e, t0, x);
  if (e->sampler && e->n_samples > 0 && t_end <= t0) e->sampler(e->sampler_ctx, t0, x);
  e->storm_events = 0;
  tf_event_loop_begin(e->loop, t0, x, t_end, &e->storm_events);
  return true;
}

tf_impact_result tf_impact_end(tf_impact *e) {
  const tf_event_loop_result r = tf_event_loop_end(e->loop);
  e->res.status = e->stop        ? TF_MEMBER_OK
                  : r.model_code ? tf_kernel_member_failed(e->k, r.model_code, r.t)
                                 : r.status;
  if (r.model_code && !e->stop) /* the model's own words for the member's failure */
    tf_kernel_failure_message(e->k, r.model_code, e->res.message, sizeof e->res.message);
  e->res.t = r.t;
  e->res.work = r.work;
  e->res.lyapunov = r.lyapunov, e->res.tangent_time = r.tangent_time, e->res.segments = r.segments;
  if (e->mode == MODE_STICK) e->res.stick_time += fmax(0.0, r.t - e->stick_start);
  return e->res;
}

tf_impact_result tf_impact_run(tf_impact *e, const double *p, double t0, double *x, double t_end) {
  if (!tf_impact_begin(e, p, t0, x, t_end)) return e->res;
  tf_event_loop_drive(e->loop);
  return tf_impact_end(e);
}

tf_impact_result tf_impact_refused(const tf_impact *e) {
  return e->res;
}

tf_event_loop *tf_impact_loop(tf_impact *e) {
  return e->loop;
}

/* The lanes may screen what loop_events computes only where it is a surface's value or a
 * component's rate or level: free flight without tangent vectors, samples, a step hook, a
 * section expression or a section reset (whose offsets and rearming are the loop's). */
void tf_impact_lane_view_of(const tf_impact *e, tf_impact_lane_view *v) {
  v->ops = e->k->kind == TF_MODEL_IMPACT ? e->k->impact : NULL;
  v->p = e->p, v->nparams = e->k->nparams;
  v->free_flight = e->mode == MODE_FREE && e->m == 0;
  v->screen = v->free_flight && !e->sampler && !e->step_hook && !e->resets &&
              e->o.section != TF_SECTION_FUNCTION;
  v->nimpacts = e->nimpacts;
  for (int i = 0; i < e->nimpacts; i++) v->offset[i] = e->armed[i] ? 0.0 : e->o.contact_tol;
  v->section = e->o.section;
  v->component = e->o.section_component;
  v->sign = e->section_sign, v->level = e->o.section_level;
}

/* loop_on_step after a step without an event, for the state a screened view allows (free
 * flight, no resets, no sampler): the rearming at the step's end. */
void tf_impact_quiet_step(tf_impact *e, double t, const double *x) {
  tf_event_loop_quiet_step(e->loop, t);
  rearm(e, x);
}
