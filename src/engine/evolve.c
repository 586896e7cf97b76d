/* evolve.c — see evolve.h.  The modes' fields, event functions and transitions, run by
 * event_loop.c's step loop.  One member at a time: the structure holds the workspace and is
 * reused across members. */
#include "evolve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_loop.h"
#include "intersection.h"
#include "status.h"

struct tf_evolve {
  const tf_kernel *k;
  const double *p;
  size_t n;
  tf_evolve_options opt;
  tf_event_loop *loop;
  tf_mode mode;
  bool has_twofold, nondeterministic;
  double twofold[TF_MAX_DIM];
  tf_event_fn on_event;
  tf_exit_fn on_exit;
  tf_choice_fn on_choice;
  tf_step_fn on_step;
  double g_sign; /* sign of the second switching function while sliding */
  void *ctx;
  tf_evolve_result *res; /* of the run in progress */
  tf_evolve_result run;  /* ... its storage (tf_evolve_begin .. end) */
  /* tangent dynamics for Lyapunov exponents (m = 0: off): the stepper's state is
   * x (n) followed by m tangent vectors (n each) */
  size_t m, na;
  bool saltation;
  bool tangent_collapsed; /* this run put the tangent vectors into T Sigma (sliding) */
  bool stop;              /* tf_evolve_request_stop */
  /* the first refusal of a field outside the stepper's stages (an arrival's tangencies, the
   * sliding law's event functions, the analysis at the intersection, a landing's slope, a
   * saltation): ends the run as the model's failure (after_step, transition) */
  int refused;
  double *aug, *f1, *f2, *probe;
  double *jac; /* n x n: the slip Jacobian of the current state, when the kernel gives it */
};

tf_evolve_options tf_evolve_default_options(void) {
  tf_evolve_options o = {.ode = tf_ode_default_options()};
  o.event_tol = 1e-12;
  o.max_event_rate = 1e6;
  o.max_events = 1000000;
  o.capture_radius = 1e-6;
  o.meet_tol = 1e-8;
  o.meet_departure = 1e-9;
  o.meet_escape_distance = 1e-4;
  o.meet_escape_margin = 0.05;
  return o;
}

const char *tf_event_kind_name(tf_event_kind k) {
  static const char *const names[TF_EVENT_KIND_COUNT] = {"crossing",
                                                         "slide_start",
                                                         "slide_end",
                                                         "twofold",
                                                         "exit",
                                                         "intersection_rest",
                                                         "intersection_pass",
                                                         "intersection_choice",
                                                         "intersection_undefined",
                                                         "intersection_slide"};
  return k < TF_EVENT_KIND_COUNT ? names[k] : "?";
}

const char *tf_mode_name(tf_mode m) {
  return m == TF_MODE_SLIDING      ? "sliding"
         : m == TF_MODE_SLIP_PLUS  ? "slip+"
         : m == TF_MODE_REST       ? "rest"
         : m == TF_MODE_ALONG_MEET ? "along_intersection"
                                   : "slip-";
}

/* --- right-hand sides per mode ------------------------------------------------------------ */

static double sliding_multiplier(double lp, double lm) {
  /* h_x·f(x, lambda) = ((1 + lambda) L+ + (1 - lambda) L-) / 2 = 0 */
  const double denom = lm - lp;
  return denom != 0.0 ? (lp + lm) / denom : 0.0;
}

/* The sticking law on Sigma may depend on the side of the second switching surface (the wheel's
 * M = sign(g) kappa F).  While sliding, that side is the mode's (g_sign), so the sliding field
 * continues smoothly across g = 0 and the step that finds the arrival at the intersection sees
 * no jump. */
static int stick_field(const tf_evolve *e, const double *x, double lambda, double *dx) {
  if (e->k->filippov->stick_side)
    return e->k->filippov->stick_side(0.0, x, lambda, e->g_sign < 0 ? -1 : 1, e->p, dx);
  return tf_filippov_field(e->k, e->p, x, lambda, dx);
}

/* L+ and L- of the sliding law (tf_filippov_tangencies, or the side-dependent stick field's):
 * the fields' joined refusal, a refused side's tangency NaN. */
static int sliding_tangencies(const tf_evolve *e, const double *x, double *lp, double *lm) {
  if (!e->k->filippov->stick_side) return tf_filippov_tangencies(e->k, e->p, x, lp, lm);
  double grad[TF_MAX_DIM], f[TF_MAX_DIM];
  e->k->filippov->switching(x, e->p, grad);
  *lp = *lm = 0;
  const int rc_plus = stick_field(e, x, 1, f);
  if (rc_plus)
    *lp = NAN;
  else
    for (size_t i = 0; i < e->n; i++) *lp += grad[i] * f[i];
  const int rc_minus = stick_field(e, x, -1, f);
  if (rc_minus)
    *lm = NAN;
  else
    for (size_t i = 0; i < e->n; i++) *lm += grad[i] * f[i];
  return tf_model_code_join(rc_plus, rc_minus);
}

/* A refusal outside the stepper's stages: the first is kept, and ends the run. */
static void note_refusal(tf_evolve *e, int code) {
  tf_model_code_keep(&e->refused, code);
}

static int mode_field(const tf_evolve *e, tf_mode mode, double t, const double *x, double *dx) {
  if (mode == TF_MODE_REST) {
    for (size_t i = 0; i < e->n; i++) dx[i] = 0;
    return 0;
  }
  if (mode == TF_MODE_ALONG_MEET) /* NaN where it is not unique: the member stops, nonfinite */
    return tf_meet_sliding_vector(e->k, e->p, t, x, dx);
  if (mode != TF_MODE_SLIDING) return e->k->filippov->slip(t, x, mode, e->p, dx);
  double lp, lm;
  const int rc = sliding_tangencies(e, x, &lp, &lm);
  if (rc) return rc;
  return stick_field(e, x, sliding_multiplier(lp, lm), dx);
}

/* The variational equation q' = Df(x) q of the current mode, by central differences along
 * q itself (2 evaluations per vector, no Jacobian needed). */
static int tangent_rhs(tf_evolve *e, double t, const double *x, const double *q, double *dq) {
  const size_t n = e->n;
  double norm = 0, scale = 0;
  for (size_t i = 0; i < n; i++) norm += q[i] * q[i], scale = fmax(scale, fabs(x[i]));
  norm = sqrt(norm);
  if (norm == 0) {
    for (size_t i = 0; i < n; i++) dq[i] = 0;
    return 0;
  }
  const double h = 1e-7 * fmax(1.0, scale) / norm;
  for (size_t i = 0; i < n; i++) e->probe[i] = x[i] + h * q[i];
  const int rc = mode_field(e, e->mode, t, e->probe, e->f1);
  for (size_t i = 0; i < n; i++) e->probe[i] = x[i] - h * q[i];
  const int rc2 = mode_field(e, e->mode, t, e->probe, e->f2);
  for (size_t i = 0; i < n; i++) dq[i] = (e->f1[i] - e->f2[i]) / (2 * h);
  return tf_model_code_join(rc, rc2);
}

/* In slip modes a kernel's exact Jacobian replaces the differences: one evaluation for all
 * vectors, and no truncation error in the exponents.  Sliding keeps the differences (its
 * field involves the multiplier, whose derivative the kernel does not give). */
static bool exact_tangent(const tf_evolve *e) {
  return e->k->filippov->slip_jacobian && !e->opt.tangent_differences &&
         (e->mode == TF_MODE_SLIP_PLUS || e->mode == TF_MODE_SLIP_MINUS);
}

static int rhs(double t, const double *x, void *ctx, double *dx) {
  tf_evolve *e = ctx;
  int rc = mode_field(e, e->mode, t, x, dx);
  if (e->m && exact_tangent(e)) {
    const size_t n = e->n;
    e->k->filippov->slip_jacobian(t, x, e->mode, e->p, e->jac);
    for (size_t c = 0; c < e->m; c++) {
      const double *q = x + n + c * n;
      double *dq = dx + n + c * n;
      for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t j = 0; j < n; j++) s += e->jac[i * n + j] * q[j];
        dq[i] = s;
      }
    }
    return rc;
  }
  for (size_t c = 0; c < e->m; c++)
    rc = tf_model_code_join(rc, tangent_rhs(e, t, x, x + e->n + c * e->n, dx + e->n + c * e->n));
  return rc;
}

/* --- event functions: positive inside the current mode's domain -------------------------- */

static int event_values(void *ctx, double t, const double *x, double *g) {
  tf_evolve *e = ctx;
  if (e->mode == TF_MODE_REST) return 0;
  if (e->mode == TF_MODE_ALONG_MEET) { /* every limit direction attracts: -max R > 0 */
    tf_meet m;
    tf_meet_classify(e->k, e->p, t, x, &m);
    note_refusal(e, m.model_code); /* after_step ends the run */
    g[0] = -1.0;
    for (int i = 0; i < m.count; i++) g[0] = i ? fmin(g[0], -m.dir[i].R) : -m.dir[i].R;
    return 1;
  }
  if (e->mode != TF_MODE_SLIDING) {
    g[0] = e->mode * e->k->filippov->switching(x, e->p, NULL);
    return 1;
  }
  double lp, lm;
  note_refusal(e, sliding_tangencies(e, x, &lp, &lm));
  g[0] = -lp;
  g[1] = lm;
  /* 2: the two-fold's capture sphere (a constant without one), 3: the intersection */
  g[2] = 1.0;
  if (e->has_twofold && e->nondeterministic) {
    double d2 = 0;
    for (size_t i = 0; i < e->n; i++) d2 += (x[i] - e->twofold[i]) * (x[i] - e->twofold[i]);
    g[2] = d2 - e->opt.capture_radius * e->opt.capture_radius;
  }
  if (!e->k->filippov->secondary_switching) return 3;
  g[3] = e->g_sign * e->k->filippov->secondary_switching(x, e->p, NULL);
  return 4;
}

static void current_field(void *ctx, double t, const double *x, double *dx) {
  tf_evolve *e = ctx;
  note_refusal(e, mode_field(e, e->mode, t, x, dx)); /* at a located event: no step to shrink */
}

/* --- transitions ---------------------------------------------------------------------------- */

/* Newton along grad h: puts a point located to event_tol exactly onto Sigma. */
static void project_to_sigma(const tf_evolve *e, double *x) {
  double grad[TF_MAX_DIM];
  for (int it = 0; it < 3; it++) {
    const double h = e->k->filippov->switching(x, e->p, grad);
    double g2 = 0;
    for (size_t i = 0; i < e->n; i++) g2 += grad[i] * grad[i];
    if (g2 == 0.0 || h == 0.0) return;
    for (size_t i = 0; i < e->n; i++) x[i] -= h * grad[i] / g2;
  }
}

/* tf_evolve_initial_mode, and the model's refusal of its fields on Sigma in *code. */
static tf_mode initial_mode(const tf_evolve *e, const double *x, int *code) {
  const double h = e->k->filippov->switching(x, e->p, NULL);
  *code = 0;
  if (h > 0) return TF_MODE_SLIP_PLUS;
  if (h < 0) return TF_MODE_SLIP_MINUS;
  double lp, lm;
  *code = tf_filippov_tangencies(e->k, e->p, x, &lp, &lm);
  const tf_sigma_region r = tf_filippov_region(lp, lm);
  if (r == TF_SIGMA_SLIDING) return TF_MODE_SLIDING;
  if (r == TF_SIGMA_CROSSING_DOWN) return TF_MODE_SLIP_MINUS;
  return TF_MODE_SLIP_PLUS; /* crossing up; escaping and boundary points leave upward */
}

tf_mode tf_evolve_initial_mode(const tf_evolve *e, const double *x) {
  int code;
  return initial_mode(e, x, &code);
}

static void emit(tf_evolve *e, tf_event_kind kind, double t, const double *x, tf_mode from,
                 tf_mode to, double u) {
  e->res->counts[kind]++;
  e->res->events++;
  if (e->on_event) {
    const tf_event ev = {kind, t, x, from, to, u};
    e->on_event(e->ctx, &ev);
  }
}

/* h_x . slip(x, side): the slip field's rate of h, continued onto Sigma from that side. */
static double slip_tangency(tf_evolve *e, const double *x, int side) {
  double grad[TF_MAX_DIM];
  e->k->filippov->switching(x, e->p, grad);
  const int rc = e->k->filippov->slip(0.0, x, side, e->p, e->f1);
  note_refusal(e, rc);
  if (rc) return NAN;
  double s = 0;
  for (size_t i = 0; i < e->n; i++) s += grad[i] * e->f1[i];
  return s;
}

static void start_sliding(tf_evolve *e, const double *x) {
  const double g = e->k->filippov->secondary_switching
                       ? e->k->filippov->secondary_switching(x, e->p, NULL)
                       : 1.0;
  e->g_sign = g < 0 ? -1.0 : 1.0;
}

/* The departure for draw u (evolve.h, tf_choice_fn): the direction taken, the state and the
 * side to continue on. */
static int departure_for(const tf_evolve *e, const tf_meet *m, double u, double *x, int *side) {
  const int share = (int)fmin(u * m->repelling, m->repelling - 1);
  int which = 0;
  for (int i = 0, seen = 0; i < m->count; i++)
    if (m->dir[i].R > 0 && seen++ == share) which = i;
  if (!m->dir[which].escaping) {
    tf_meet_departure(e->k, e->p, m, which, e->opt.meet_departure, x, side);
    return which;
  }
  const double v = u * m->repelling - share; /* in [0, 1) within the share */
  const double s = v < 0.5 ? 2 * v : 2 * v - 1, margin = e->opt.meet_escape_margin;
  tf_meet_departure(e->k, e->p, m, which,
                    e->opt.meet_escape_distance * (margin + (1 - 2 * margin) * s), x, side);
  *side = v < 0.5 ? -1 : 1;
  return which;
}

/* Arrival at the intersection of Sigma and the second switching surface: the extended Filippov
 * verdict there (intersection.h) and the departure it prescribes.  The event logs the point on
 * the intersection; the flow is not differentiable there, so the Lyapunov segment closes. */
static int meet(tf_evolve *e, double t, double *x, tf_mode *next) {
  const tf_mode from = e->mode;
  double before[TF_MAX_DIM];
  memcpy(before, x, e->n * sizeof *x);
  tf_meet_project(e->k, e->p, x);
  tf_meet m;
  tf_meet_classify(e->k, e->p, t, x, &m);
  if (m.model_code) {
    note_refusal(e, m.model_code);
    return TF_MEMBER_FAILED;
  }
  if (m.verdict == TF_MEET_REST || m.verdict == TF_MEET_SLIDE) {
    *next = m.verdict == TF_MEET_REST ? TF_MODE_REST : TF_MODE_ALONG_MEET;
    emit(e, m.verdict == TF_MEET_REST ? TF_EVENT_MEET_REST : TF_EVENT_MEET_SLIDE, t, x, from, *next,
         NAN);
    return TF_MEMBER_OK;
  }
  if (m.verdict == TF_MEET_UNDEFINED) {
    emit(e, TF_EVENT_MEET_UNDEFINED, t, x, from, from, NAN);
    return TF_MEMBER_CODIM2;
  }
  double u = 0.5;
  if (m.verdict == TF_MEET_CHOICE) {
    const tf_meet_arrival a = {
        e->k, e->p, t, x, &m, tf_meet_arrival_direction(&m, (int)from, e->g_sign, x, before, e->n)};
    if (!e->on_choice || e->on_choice(e->ctx, &a, &u)) return TF_MEMBER_FAILED;
  }
  double on_meet[TF_MAX_DIM];
  memcpy(on_meet, x, e->n * sizeof *x);
  int side;
  departure_for(e, &m, u, x, &side);
  *next = side > 0 ? TF_MODE_SLIP_PLUS : side < 0 ? TF_MODE_SLIP_MINUS : TF_MODE_SLIDING;
  if (*next == TF_MODE_SLIDING) start_sliding(e, x);
  if (m.verdict == TF_MEET_PASS)
    emit(e, TF_EVENT_MEET_PASS, t, on_meet, from, *next, NAN);
  else
    emit(e, TF_EVENT_MEET_CHOICE, t, on_meet, from, *next, u);
  tf_event_loop_close_segment(e->loop, t, x);
  return TF_MEMBER_OK;
}

/* Moving along the intersection, a limit direction has turned repelling (-max R = 0): leave
 * along it, as evolve2 leaves rolling along its most repelling direction (Theorem 2.15 would
 * call the point itself neutral). */
static int leave_meet(tf_evolve *e, double t, double *x, tf_mode *next) {
  tf_meet_project(e->k, e->p, x);
  tf_meet m;
  tf_meet_classify(e->k, e->p, t, x, &m);
  if (m.model_code) {
    note_refusal(e, m.model_code);
    return TF_MEMBER_FAILED;
  }
  if (m.count == 0) {
    emit(e, TF_EVENT_MEET_UNDEFINED, t, x, TF_MODE_ALONG_MEET, TF_MODE_ALONG_MEET, NAN);
    return TF_MEMBER_CODIM2;
  }
  int which = 0;
  for (int i = 1; i < m.count; i++)
    if (m.dir[i].R > m.dir[which].R) which = i;
  double on_meet[TF_MAX_DIM];
  memcpy(on_meet, x, e->n * sizeof *x);
  int side;
  tf_meet_departure(e->k, e->p, &m, which, e->opt.meet_departure, x, &side);
  *next = side > 0 ? TF_MODE_SLIP_PLUS : side < 0 ? TF_MODE_SLIP_MINUS : TF_MODE_SLIDING;
  if (*next == TF_MODE_SLIDING) start_sliding(e, x);
  emit(e, TF_EVENT_MEET_PASS, t, on_meet, TF_MODE_ALONG_MEET, *next, NAN);
  tf_event_loop_close_segment(e->loop, t, x);
  return TF_MEMBER_OK;
}

static bool near_meet(const tf_evolve *e, const double *x) {
  return e->k->filippov->secondary_switching && tf_meet_distance(e->k, e->p, x) <= e->opt.meet_tol;
}

/* Arrival on Sigma from slip side s: cross if the other side's field carries on through,
 * slide otherwise (the arriving side's field points into Sigma by construction). */
static tf_mode arrive(tf_evolve *e, double t, double *x, int *status) {
  const tf_mode from = e->mode;
  project_to_sigma(e, x);
  double lp, lm;
  const int rc = tf_filippov_tangencies(e->k, e->p, x, &lp, &lm);
  if (rc) { /* no verdict on fields the model refused */
    note_refusal(e, rc);
    *status = TF_MEMBER_FAILED;
    return from;
  }
  const double own = from == TF_MODE_SLIP_PLUS ? lp : lm,
               other = from == TF_MODE_SLIP_PLUS ? lm : lp;
  if (e->k->filippov->stick && from * own > 0 && from * slip_tangency(e, x, from) < 0) {
    /* The slip field brought the state here, yet the sticking law at the same friction limit
     * points away: the model's two laws disagree, and no Filippov solution continues. */
    *status = TF_MEMBER_ILL_POSED;
    return from;
  }
  if (from * other < 0) {
    emit(e, TF_EVENT_CROSSING, t, x, from, (tf_mode)-from, NAN);
    return (tf_mode)-from;
  }
  emit(e, TF_EVENT_SLIDE_START, t, x, from, TF_MODE_SLIDING, NAN);
  start_sliding(e, x);
  return TF_MODE_SLIDING;
}

static int twofold_exit(tf_evolve *e, double t, double *x, tf_mode *mode) {
  emit(e, TF_EVENT_TWOFOLD, t, x, TF_MODE_SLIDING, TF_MODE_SLIDING, NAN);
  if (!e->on_exit) return -1;
  double out[TF_MAX_DIM];
  int side = 1;
  if (e->on_exit(e->ctx, e->res->counts[TF_EVENT_TWOFOLD] - 1, t, x, out, &side)) return -1;
  memcpy(x, out, e->n * sizeof *x);
  *mode = side > 0 ? TF_MODE_SLIP_PLUS : TF_MODE_SLIP_MINUS;
  emit(e, TF_EVENT_EXIT, t, x, TF_MODE_SLIDING, *mode, NAN);
  return 0;
}

/* Saltation at a transition on Sigma (Müller 1995; di Bernardo et al. 2008):
 *   q <- q + (f_after - f_before) (grad h · q) / (grad h · f_before),
 * with the sliding field as f_after when sliding starts; leaving sliding is the identity. */
static void apply_saltation(tf_evolve *e, double t, const double *x, tf_mode from, tf_mode to) {
  if (!e->m || !e->saltation || from == TF_MODE_SLIDING || from > TF_MODE_SLIP_PLUS ||
      to > TF_MODE_SLIP_PLUS) /* none from sliding, none on the intersection */
    return;
  double grad[TF_MAX_DIM], before[TF_MAX_DIM], after[TF_MAX_DIM];
  const size_t n = e->n;
  e->k->filippov->switching(x, e->p, grad);
  const int rc =
      tf_model_code_join(mode_field(e, from, t, x, before), mode_field(e, to, t, x, after));
  if (rc) {
    note_refusal(e, rc);
    return;
  }
  double denom = 0;
  for (size_t i = 0; i < n; i++) denom += grad[i] * before[i];
  if (denom == 0.0) return; /* grazing: the correction is unbounded; leave q */
  for (size_t c = 0; c < e->m; c++) {
    double *q = e->aug + n + c * n, dot = 0;
    for (size_t i = 0; i < n; i++) dot += grad[i] * q[i];
    for (size_t i = 0; i < n; i++) q[i] += (after[i] - before[i]) * dot / denom;
  }
  if (to == TF_MODE_SLIDING) e->tangent_collapsed = true; /* every q now lies in T Sigma */
}

/* The transition at event `which` of the current mode (event_values' order). */
static int transition_of(tf_evolve *e, int which, double t, double *x) {
  if (e->stop) return TF_MEMBER_PENDING;
  tf_mode next = e->mode;
  if (e->mode == TF_MODE_ALONG_MEET) {
    const int status = leave_meet(e, t, x, &next);
    e->mode = next;
    return status;
  }
  if (e->mode != TF_MODE_SLIDING && near_meet(e, x)) {
    const int status = meet(e, t, x, &next);
    e->mode = next;
    return status;
  }
  if (e->mode != TF_MODE_SLIDING) {
    int status = TF_MEMBER_OK;
    next = arrive(e, t, x, &status);
    if (status != TF_MEMBER_OK) return status;
  } else if (which == 3) {
    const int status = meet(e, t, x, &next);
    e->mode = next;
    return status;
  } else if (which == 2) {
    if (twofold_exit(e, t, x, &next)) return TF_MEMBER_FAILED;
    /* the flow is not differentiable through the singularity: close the segment */
    tf_event_loop_close_segment(e->loop, t, x);
  } else {
    next = which == 0 ? TF_MODE_SLIP_PLUS : TF_MODE_SLIP_MINUS;
    emit(e, TF_EVENT_SLIDE_END, t, x, TF_MODE_SLIDING, next, NAN);
  }
  apply_saltation(e, t, x, e->mode, next);
  e->mode = next;
  return TF_MEMBER_OK;
}

/* A transition decided on a field the model refused is no transition: the run fails. */
static int transition(void *ctx, int which, double t, double *x) {
  tf_evolve *e = ctx;
  const int status = transition_of(e, which, t, x);
  return e->refused ? TF_MEMBER_FAILED : status;
}

/* An event storm on Sigma where the kernel's second switching function vanishes too is no
 * numerical failure but the end of what one switching surface can describe (the wheel's
 * full stick): say so in the member's status. */
static int storm_status(void *ctx, const double *x) {
  const tf_evolve *e = ctx;
  if (!e->k->filippov->secondary_switching) return TF_MEMBER_ZENO;
  double scale = 1;
  for (size_t i = 0; i < e->n; i++) scale += fabs(x[i]);
  const double tol = 1e-8 * scale;
  return fabs(e->k->filippov->switching(x, e->p, NULL)) <= tol &&
                 fabs(e->k->filippov->secondary_switching(x, e->p, NULL)) <= tol
             ? TF_MEMBER_CODIM2
             : TF_MEMBER_ZENO;
}

static int after_step(void *ctx) {
  const tf_evolve *e = ctx;
  if (e->refused) return TF_MEMBER_FAILED;
  return e->stop ? TF_MEMBER_PENDING : TF_MEMBER_OK;
}

static void step_done(void *ctx, double t0, double t1) {
  tf_evolve *e = ctx;
  if (e->on_step) e->on_step(e->ctx, e, t0, t1);
}

/* While sliding, the tangent vectors live in T Sigma: an arrival's saltation put them there,
 * and a run that starts sliding from the identity (the first Lyapunov block, or a segment
 * after a two-fold) has them projected there before each QR (orthogonally: the transverse part of a
 * perturbation dies on reaching Sigma, whichever side it came from). */
static void project_sliding_tangents(void *ctx, double *x) {
  tf_evolve *e = ctx;
  if (e->mode != TF_MODE_SLIDING || !e->m) return;
  double grad[TF_MAX_DIM], g2 = 0;
  const size_t n = e->n;
  e->k->filippov->switching(x, e->p, grad);
  for (size_t i = 0; i < n; i++) g2 += grad[i] * grad[i];
  if (!(g2 > 0)) return;
  for (size_t c = 0; c < e->m; c++) {
    double *q = x + n + c * n, dot = 0;
    for (size_t i = 0; i < n; i++) dot += grad[i] * q[i];
    for (size_t i = 0; i < n; i++) q[i] -= grad[i] * dot / g2;
  }
  e->tangent_collapsed = true;
}

static const tf_event_loop_ops loop_ops = {.rhs = rhs,
                                           .field = current_field,
                                           .events = event_values,
                                           .transition = transition,
                                           .after_step = after_step,
                                           .on_step = step_done,
                                           .storm_status = storm_status,
                                           .before_qr = project_sliding_tangents};

/* --- the driver ------------------------------------------------------------------------------ */

tf_evolve *tf_evolve_create(const tf_kernel *k, const double *params,
                            const tf_evolve_options *opts) {
  if (k->dim > TF_MAX_DIM || k->kind != TF_MODEL_FILIPPOV) return NULL;
  tf_evolve *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->k = k;
  e->p = params;
  e->n = k->dim;
  e->opt = opts ? *opts : tf_evolve_default_options();
  if (tf_evolve_enable_tangent(e, 0, 1.0, true)) {
    tf_evolve_destroy(e);
    return NULL;
  }
  return e;
}

static void free_tangent(tf_evolve *e) {
  tf_event_loop_destroy(e->loop);
  free(e->aug);
  e->loop = NULL, e->aug = NULL;
}

int tf_evolve_enable_tangent(tf_evolve *e, int vectors, double interval, bool saltation) {
  free_tangent(e);
  const size_t n = e->n, m = vectors > 0 ? (size_t)vectors : 0, na = n + n * m;
  e->m = m, e->na = na, e->saltation = saltation;
  const tf_event_loop_options lo = {.ode = e->opt.ode,
                                    .event_tol = e->opt.event_tol,
                                    .max_event_rate = e->opt.max_event_rate,
                                    .max_events = e->opt.max_events,
                                    .qr_interval = interval};
  e->loop = tf_event_loop_create(n, m, &loop_ops, e, &lo);
  e->aug = calloc(4 * na + n * n, sizeof *e->aug); /* aug, f1, f2, probe, jac */
  if (!e->loop || !e->aug) return -1;
  e->f1 = e->aug + na, e->f2 = e->aug + 2 * na, e->probe = e->aug + 3 * na;
  e->jac = e->aug + 4 * na;
  return 0;
}

void tf_evolve_destroy(tf_evolve *e) {
  if (!e) return;
  free_tangent(e);
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

void tf_evolve_set_choice(tf_evolve *e, tf_choice_fn on_choice) {
  e->on_choice = on_choice;
}

void tf_evolve_set_step_callback(tf_evolve *e, tf_step_fn on_step) {
  e->on_step = on_step;
}

void tf_evolve_request_stop(tf_evolve *e) {
  e->stop = true;
}

void tf_evolve_dense(const tf_evolve *e, double t, double *x) {
  tf_stepper_dense(tf_evolve_stepper(e), t, x);
}

const tf_stepper *tf_evolve_stepper(const tf_evolve *e) {
  return tf_event_loop_stepper(e->loop);
}

void tf_evolve_begin(tf_evolve *e, double t0, const double *x_io, double t_end, int side) {
  e->run = (tf_evolve_result){.status = TF_MEMBER_OK, .t = t0};
  double *x = e->aug; /* x, then the tangent vectors */
  memcpy(x, x_io, e->n * sizeof *x);
  int refused = 0; /* on Sigma, where the initial mode needs both fields */
  e->mode = side > 0   ? TF_MODE_SLIP_PLUS
            : side < 0 ? TF_MODE_SLIP_MINUS
                       : initial_mode(e, x, &refused);
  if (e->mode == TF_MODE_SLIDING) project_to_sigma(e, x), start_sliding(e, x);
  e->res = &e->run;
  e->tangent_collapsed = false, e->stop = false, e->refused = refused;
  /* fields refused where the first mode is decided: no step; tf_evolve_end says why */
  tf_event_loop_begin(e->loop, t0, x, refused ? t0 : t_end, &e->run.events);
}

tf_evolve_result tf_evolve_end(tf_evolve *e, double *x_io) {
  const tf_event_loop_result r = tf_event_loop_end(e->loop);
  tf_evolve_result res = e->run;
  const double *x = e->aug;
  res.tangent_collapsed = e->tangent_collapsed;
  e->res = NULL;
  const int code = r.model_code ? r.model_code : e->refused;
  res.status = code ? tf_kernel_member_failed(e->k, code, r.t) : r.status;
  res.work = r.work;
  res.segments = r.segments;
  if (r.lyapunov) {
    memcpy(res.lyapunov, r.lyapunov, e->m * sizeof *res.lyapunov);
    res.tangent_time = r.tangent_time;
  }
  memcpy(x_io, x, e->n * sizeof *x);
  res.t = r.t;
  res.mode = e->mode;
  return res;
}

tf_evolve_result tf_evolve_run(tf_evolve *e, double t0, double *x_io, double t_end, int side) {
  tf_evolve_begin(e, t0, x_io, t_end, side);
  tf_event_loop_drive(e->loop);
  return tf_evolve_end(e, x_io);
}

tf_event_loop *tf_evolve_loop(tf_evolve *e) {
  return e->loop;
}

double *tf_evolve_state(tf_evolve *e) {
  return e->aug;
}

int tf_evolve_slip_side(const tf_evolve *e) {
  if (e->m || (e->mode != TF_MODE_SLIP_PLUS && e->mode != TF_MODE_SLIP_MINUS)) return 0;
  return e->mode;
}
