/* impact_lanes.c — members of an impact or Poincaré run side by side in lanes (poincare.h,
 * flow_lanes.h): the valve's bifurcation scan.
 *
 * Each lane has its member's own engine (tf_poincare: its event loop, stepper, impact state and
 * recorder).  The lanes take only the step itself, the stages and error norms of all lanes at
 * once; everything around it is the member's scalar event loop: the top of a step
 * (tf_event_loop_top: the budget, the stop, the bound on the step after a reset), and after
 * each accepted step, its events (the screening of the step, location, landing, impact,
 * chattering, sticking, section crossing, stop), handed the step in the stepper exactly as
 * tf_rk_step_with leaves it (the pair's to_stepper).  The field is the member's own (its
 * stepper's, in the engine's current mode) and its evaluations are counted there.  So every
 * number of a member, its counts included, is that of tf_poincare_run alone, whatever shares
 * its lanes.  A step the lanes cannot take as the stepper would (after a refusal, before a
 * first evaluation) is the stepper's own.
 *
 * A model with lane callbacks (tf_impact_ops: rhs_lanes, surface_lanes, rate_lanes) lets the
 * lanes do more, with the same numbers: its field is evaluated for all lanes at once with each
 * lane's parameters, and each accepted step's event functions are screened in the lanes on the
 * samples the member's loop would take (find_event: the cubic Hermite samples, the same
 * arithmetic), so that only a step in which an event function changes sign goes to the
 * member's loop (its stepper handed the step then, and the loop told to look on the dense
 * output at once, as its own cheap pass would decide); a step without one only moves the
 * member on (tf_impact_quiet_step), its stepper's state staying the lanes' until the loop
 * needs it. */
#include "impact_lanes.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "checkpoint.h"
#include "flow_lanes.h"
#include "rk_driver.h"
#include "status.h"

/* What the screening of a step needs of the lanes' views (look): the event functions' offsets
 * and the section's sign, lane by lane, and what is the spec's (the same in every lane: the
 * model's operations, the section's kind, component and level, and which event functions are
 * state components, component_of). */
typedef struct screening {
  const tf_impact_ops *ops;
  int nimpacts, component;
  tf_section_kind section;
  double level;
  double offset[TF_EVENT_LOOP_MAX_FUNCTIONS][TF_LANES_MAX], sign[TF_LANES_MAX];
  double t1[TF_LANES_MAX]; /* where each lane's step ends */
  bool change[TF_LANES_MAX];
  /* the state component each event function is (-1: not one), and whether all are */
  int is_component[TF_EVENT_LOOP_MAX_FUNCTIONS];
  bool bounded;
} screening;

typedef struct impact_lanes {
  tf_lanes L;
  tf_poincare *const *engines;
  tf_impact_lane_member *m;
  double t0, t_end;
  tf_impact_lane_view view[TF_LANES_MAX]; /* each lane's member's, at the top of its step */
  screening sc;                           /* the screening of the lanes' steps (look, screen) */
  bool screened[TF_LANES_MAX];            /* whether lane l screens its member's events (look) */
  bool quiet[TF_LANES_MAX];               /* the step attempted changes no event's sign */
  bool seen[TF_LANES_MAX];                /* ... or, screened, changes one */
  /* whether lane l's member may take a quiet step in sort_lanes: screened, every surface armed
   * (no rearming due) and the step's limit the loop's own (no one-shot bound); the steps its
   * budget had left then (look), and the quiet steps taken since its loop's top (sync) */
  bool straight[TF_LANES_MAX];
  long room[TF_LANES_MAX], pending[TF_LANES_MAX];
  int samples; /* the loop's event samples per step */
  size_t np;
  /* the screening's batch of samples (TF_LANES_MAX / w samples of every lane side by side:
   * sample b of lane l at b * w + l), n * TF_LANES_MAX, and each lane's parameters for every
   * sample of a batch, np * TF_LANES_MAX; the lanes' parameters, np * w (L->params) */
  double *xs, *batch_params;
} impact_lanes;

static tf_event_loop *loop_of(impact_lanes *I, int l) {
  return tf_poincare_loop(I->engines[l]);
}

/* Whether lane l screens its member's events itself (else every accepted step goes to the
 * member's loop). */
static bool screens(const impact_lanes *I, int l) {
  const tf_impact_lane_view *v = &I->view[l];
  return v->screen && I->L.params_rhs && (v->nimpacts == 0 || v->ops->surface_lanes) &&
         (v->section != TF_SECTION_EXTREMUM || v->ops->rate_lanes);
}

/* Lane l's view of its member at the top of a step. */
static void look(impact_lanes *I, int l) {
  const tf_impact_lane_view *v = &I->view[l];
  tf_impact_lane_view_of(tf_poincare_impact(I->engines[l]), &I->view[l]);
  I->L.own_field[l] = !v->free_flight;
  I->screened[l] = screens(I, l);
  I->sc.sign[l] = v->sign;
  for (int j = 0; j < v->nimpacts; j++) I->sc.offset[j][l] = v->offset[j];
  double t_limit;
  tf_event_loop_plain_bounds(loop_of(I, l), &t_limit, &I->room[l]);
  bool armed = true;
  for (int j = 0; j < v->nimpacts; j++) armed &= v->offset[j] == 0.0;
  I->straight[l] = I->screened[l] && armed && I->L.t_limit[l] == t_limit;
}

/* Lane l's member brought up to the lane: the quiet steps sort_lanes took for it since its
 * loop's top, counted in its stepper and loop, its state, and its loop at the lane's top.  The
 * state is needed although an accepted step's hand back overwrites it after: the loop's top
 * at the lane's t (tf_event_loop_quiet_steps) keeps it as the start of the step the lane is in,
 * from which a landing retakes that step (stepped); a refused or failed step leaves it as the
 * member's final state; run_alone steps from it.  Only quiet_step, whose next top keeps the new
 * state, leaves the copy unused. */
static void sync(impact_lanes *I, int l) {
  const long k = I->pending[l];
  if (!k) return;
  tf_lanes *L = &I->L;
  double *x = I->m[L->slot[l]].x; /* the loop's state */
  for (size_t i = 0; i < L->n; i++) x[i] = L->x[i * L->w + l];
  L->steppers[l]->stats.steps += k;
  tf_event_loop_quiet_steps(loop_of(I, l), k, L->t[l]);
  I->pending[l] = 0;
}

static void member_over(impact_lanes *I, int l) {
  tf_impact_lane_member *m = &I->m[I->L.slot[l]];
  tf_poincare_end(I->engines[l], m->rec);
  I->L.slot[l] = -1;
}

/* The next member of the queue into lane l, begun; false when the queue is empty. */
static bool load(impact_lanes *I, int l) {
  tf_lanes *L = &I->L;
  while (L->queue < L->count) {
    tf_impact_lane_member *m = &I->m[L->queue];
    L->slot[l] = (long)L->queue++;
    if (tf_poincare_begin(I->engines[l], m->p, I->t0, m->x, I->t_end, m->rec)) {
      L->steppers[l] = tf_event_loop_lane_stepper(loop_of(I, l), &(double){0}, &(double){0});
      for (size_t j = 0; L->params && j < I->np; j++) {
        L->params[j * (size_t)L->w + l] = m->p[j];
        for (int b = 0; b < TF_LANES_MAX / L->w; b++)
          I->batch_params[j * TF_LANES_MAX + (size_t)(b * L->w + l)] = m->p[j];
      }
      return true;
    }
    member_over(I, l);
  }
  L->slot[l] = -1;
  return false;
}

/* Lane l at the top of a step of its member's loop, its state taken from the loop's stepper;
 * steps the lanes cannot take are the stepper's.  False once the lane is empty for good. */
static bool next_step(impact_lanes *I, int l) {
  tf_lanes *L = &I->L;
  for (;;) {
    if (L->slot[l] < 0 && !load(I, l)) return false;
    tf_event_loop *loop = loop_of(I, l);
    if (!tf_event_loop_top(loop)) {
      member_over(I, l);
      continue;
    }
    double t, t_limit;
    tf_stepper *s = tf_event_loop_lane_stepper(loop, &t, &t_limit);
    if (!s->fsal_valid || s->model_code) { /* the stepper's own step: a reset or a refusal */
      if (!tf_event_loop_take_step(loop)) member_over(I, l);
      continue;
    }
    tf_lanes_take_over(L, l, s, I->m[L->slot[l]].x, t, t_limit);
    look(I, l);
    return true;
  }
}

/* The steps the screening samples: lane l's start and end states x0 and x1 and the field
 * there f0 and f1 (component i at [i * w + l]), its step h, its start t and end t1. */
typedef struct step_set {
  const double *x0, *x1, *f0, *f1, *h, *t, *t1;
} step_set;

/* Per lane of set, for the samples at tb: theta = (tb - t) / h (0 where the lane is empty),
 * 1 - theta, their product and difference, in tf_rk_hermite's arithmetic. */
typedef struct hermite_weights {
  double th[TF_LANES_MAX], th1[TF_LANES_MAX], prod[TF_LANES_MAX], diff[TF_LANES_MAX];
} hermite_weights;

static inline __attribute__((always_inline)) void hermite_weights_w(const step_set *set,
                                                                    const int w,
                                                                    const double *restrict tb,
                                                                    hermite_weights *hw) {
  for (int l = 0; l < w; l += 4) {
    const v4d zero = {0.0}, one = {1.0, 1.0, 1.0, 1.0};
    v4d h, t0, t1;
    LOADV(h, set->h + l), LOADV(t0, set->t + l), LOADV(t1, tb + l);
    const v4i taken = h > zero;
    const v4d a = SELECTV(taken, (t1 - t0) / SELECTV(taken, h, one), zero), b = 1.0 - a;
    const v4d ab = a * b, a_b = a - b;
    STOREV(hw->th + l, a), STOREV(hw->th1 + l, b), STOREV(hw->prod + l, ab);
    STOREV(hw->diff + l, a_b);
  }
}

/* The n components of the states of set at the weights' times on the cubic Hermite
 * interpolant, in tf_rk_hermite's arithmetic: component i of lane l into xs[i * stride + l]. */
static inline __attribute__((always_inline)) void hermite_w(const step_set *set, const size_t n,
                                                            const int w, const hermite_weights *hw,
                                                            double *restrict xs, const int stride) {
  const double *restrict x0 = set->x0, *restrict x1 = set->x1, *restrict f0 = set->f0;
  const double *restrict f1 = set->f1, *restrict hs = set->h;
  for (size_t i = 0; i < n; i++)
    for (int l = 0; l < w; l += 4) { /* four lanes at a time (flow_lanes.h's vectors) */
      const size_t q = i * (size_t)w + l;
      v4d a, b, h, prod, diff, y0, y1, g0, g1;
      LOADV(a, hw->th + l), LOADV(b, hw->th1 + l), LOADV(h, hs + l);
      LOADV(prod, hw->prod + l), LOADV(diff, hw->diff + l);
      LOADV(y0, x0 + q), LOADV(y1, x1 + q), LOADV(g0, f0 + q), LOADV(g1, f1 + q);
      const v4d y = b * y0 + a * y1 + prod * (diff * (y1 - y0) + h * (b * g0 - a * g1));
      STOREV(xs + i * (size_t)stride + l, y);
    }
}

/* change[l] |= g went from >= 0 (at the sample before: g_prev) to < 0; g_prev = g. */
static inline __attribute__((always_inline)) void sign_changes_w(const int w,
                                                                 const double *restrict g,
                                                                 double *restrict g_prev,
                                                                 v4i *restrict change) {
  const v4d zero = {0.0};
  for (int l = 0; l < w; l += 4) {
    v4d now, before;
    LOADV(now, g + l), LOADV(before, g_prev + l);
    change[l / 4] |= (now < zero) & (before >= zero);
    STOREV(g_prev + l, now);
  }
}

/* The times of sample s of find_event (1 <= s <= S) in the steps of set: t + (t1 - t) s / S,
 * and t1 itself for s = S. */
static inline __attribute__((always_inline)) void sample_times_w(const step_set *set, const int S,
                                                                 const int s, const int w,
                                                                 double *restrict tb) {
  if (s == S) {
    for (int l = 0; l < w; l++) tb[l] = set->t1[l];
    return;
  }
  for (int l = 0; l < w; l += 4) {
    v4d t0, t_end;
    LOADV(t0, set->t + l), LOADV(t_end, set->t1 + l);
    const v4d ts = t0 + (t_end - t0) * (double)s / (double)S;
    STOREV(tb + l, ts);
  }
}

/* The lanes' event functions at the samples s = 1 .. S of find_event (at width w) and whether
 * any goes from >= 0 to < 0 between samples: sc->change.  The sample s = 0 decides nothing:
 * find_event counts a start on the boundary as inside (g_prev = fmax(g, 0) >= 0 always).  The
 * model's event functions take TF_LANES_MAX / w samples of every lane at once (fewer calls,
 * each on independent values); past S, the last sample stands in, its values unused. */
static inline __attribute__((always_inline)) void sample_changes_w(impact_lanes *I,
                                                                   const step_set *set,
                                                                   const int w) {
  enum { BATCH = TF_LANES_MAX };
  screening *sc = &I->sc;
  const int B = BATCH / w;
  const int S = I->samples, ns = sc->nimpacts, c = sc->component;
  double tb[BATCH], val[BATCH], g[TF_LANES_MAX];
  double g_prev[TF_EVENT_LOOP_MAX_FUNCTIONS + 1][TF_LANES_MAX];
  v4i change[TF_LANES_MAX / 4] = {{0}};
  hermite_weights hw;
  for (int j = 0; j <= ns; j++)
    for (int l = 0; l < w; l++) g_prev[j][l] = 0.0;
  for (int s0 = 1; s0 <= S; s0 += B) {
    for (int b = 0; b < B; b++) {
      sample_times_w(set, S, s0 + b < S ? s0 + b : S, w, tb + b * w);
      hermite_weights_w(set, w, tb + b * w, &hw);
      hermite_w(set, I->L.n, w, &hw, I->xs + b * w, BATCH);
    }
    const int nb = S - s0 + 1 < B ? S - s0 + 1 : B;
    for (int j = 0; j < ns; j++) {
      sc->ops->surface_lanes(j, BATCH, I->xs, I->batch_params, val);
      for (int b = 0; b < nb; b++) {
        for (int l = 0; l < w; l++) g[l] = val[b * w + l] + sc->offset[j][l];
        sign_changes_w(w, g, g_prev[j], change);
      }
    }
    if (sc->section == TF_SECTION_EXTREMUM)
      sc->ops->rate_lanes(c, BATCH, tb, I->xs, I->batch_params, val);
    else if (sc->section == TF_SECTION_LEVEL)
      for (int q = 0; q < BATCH; q++) val[q] = I->xs[(size_t)c * BATCH + q] - sc->level;
    else
      continue;
    for (int b = 0; b < nb; b++) {
      for (int l = 0; l < w; l++) g[l] = sc->sign[l] * val[b * w + l];
      sign_changes_w(w, g, g_prev[ns], change);
    }
  }
  for (int l = 0; l < w; l++) sc->change[l] = change[l / 4][l % 4] != 0;
}

/* The state component event function j is, unchanged, or -1 (tf_impact_ops.surface_component,
 * rate_component; a level section's is x_c - level, whose sign is that of x_c - level exactly). */
static int component_of(const screening *sc, int j) {
  const tf_impact_ops *ops = sc->ops;
  if (j < sc->nimpacts) return ops->surface_component ? ops->surface_component[j] : -1;
  if (sc->section == TF_SECTION_LEVEL) return sc->component;
  if (sc->section != TF_SECTION_EXTREMUM || !ops->rate_component) return -1;
  return ops->rate_component[sc->component];
}

/* The screening where every event function is a state component c (component_of, bounded):
 * which lanes' samples could change an event function's sign is decided without the samples,
 * and only a vector of lanes holding such a lane is sampled, those components alone (the event
 * functions' values those the model's would give: the component, unchanged, with the same
 * arithmetic after them).  A vector of vw lanes at a time; S samples a step (a constant where
 * the caller passes one).
 *
 * The decision: a sample of lane l changes sign as sign (x_c + offset) < 0 (a sum or difference
 * of two doubles rounds to a value of its exact sign), with offset the surface's (0 or
 * contact_tol), 0 for an extremum (sign the lane's) or -level, and x_c the cubic Hermite
 * interpolant H at theta as hermite_w computes it.  H's Bernstein control points are x0,
 * x0 + h f0 / 3, x1 - h f1 / 3 and x1 (component c), and on [0, 1] H lies between the least and
 * the largest.  Where sign (P + offset) >= margin for every control point P, no sample is < 0,
 * so none changes sign: the samples' answer, without them.  The margin, with S = |x0| + |x1| +
 * |h f0| + |h f1| + |offset| and u = 2^-53:
 * - the sample's rounding: hermite_w's expression, every operation rounded, is H(theta) within
 *   gamma_9 times the expression in absolute values (at most 9 roundings bear on one term, b's
 *   twice; Higham, Accuracy and Stability, ch. 3), which for theta <= 9/8 is at most 10 S: under
 *   91 u S;
 * - the rounding of the control points (1/3 rounded too) and of P + offset here: under 6 u S;
 * - the samples' theta lies in [0, theta_max] (each operation from s to theta is monotone, and
 *   the largest is that of the sample S - 1 or S, at t1), and theta_max may pass 1 by eps (t + h
 *   rounded): H moves there from H(1) = x1 by at most eps 3 max |P_(i+1) - P_i| (1 + 2 eps)^2
 *   <= 9.4 eps S for eps <= 1/8 (beyond, the samples are taken);
 * so margin = (256 u + 16 eps) S, above that bound, (97 u + 9.4 eps) S, with room, plus 1e-300
 * for results below DBL_MIN.  NaN
 * and infinity fail the comparisons: those lanes are sampled. */
static inline __attribute__((always_inline)) void screen_bounded(impact_lanes *I, const int w,
                                                                 const int vw, const int S) {
  const tf_lanes *L = &I->L;
  screening *sc = &I->sc;
  const int ns = sc->nimpacts, nf = ns + (sc->section != TF_SECTION_NONE);
  const size_t fs = (size_t)L->pair->fsal_stage, stride = (size_t)w;
  const double *restrict x0s = L->x, *restrict x1s = L->x_new, *restrict f0s = L->k[0];
  const double *restrict f1s = L->k[fs], *restrict hs = L->hs, *restrict ts = L->t;
  const double *restrict t1s = sc->t1, level = sc->level;
  const double third = 1.0 / 3.0; /* rounded: the margin covers it (no division per lane) */
  const bool is_level = sc->section == TF_SECTION_LEVEL;
  TF_LANES_VECTORS(vw, {
    const vd zero = {0.0}, one = zero + 1.0;
    for (int l = 0; l < w; l += VW) {
      vd h, t0, t1, sign;
      LOADV(h, hs + l), LOADV(t0, ts + l), LOADV(t1, t1s + l), LOADV(sign, sc->sign + l);
      const vi taken = h > zero;
      const vd hd = SELECTV(taken, h, one);
      { /* the samples' largest theta, as the samples below take it: one division, as
         * rounding a quotient by h > 0 is monotone in the dividend (NaN: the same choice) */
        const vd tb = t0 + (t1 - t0) * (double)(S - 1) / (double)S;
        const vd d1 = t1 - t0, d0 = tb - t0, d = SELECTV(d1 > d0, d1, d0);
        const vd over = SELECTV(taken, d / hd, zero) - one;
        const vd eps = SELECTV(over > zero, over, zero);
        const vd slack = 256.0 * (DBL_EPSILON / 2) + 16.0 * eps;
        vi clear = eps <= 0.125;
        for (int j = 0; j < nf; j++) {
          const size_t q = (size_t)sc->is_component[j] * stride + (size_t)l;
          vd x0, x1, f0, f1, offset, s = one;
          LOADV(x0, x0s + q), LOADV(x1, x1s + q), LOADV(f0, f0s + q), LOADV(f1, f1s + q);
          if (j < ns)
            LOADV(offset, sc->offset[j] + l);
          else
            offset = zero - (is_level ? level : 0.0), s = sign;
          const vd hf0 = h * f0, hf1 = h * f1, p1 = x0 + hf0 * third, p2 = x1 - hf1 * third;
          const vd lo01 = SELECTV(x0 < p1, x0, p1), lo23 = SELECTV(p2 < x1, p2, x1);
          const vd hi01 = SELECTV(x0 > p1, x0, p1), hi23 = SELECTV(p2 > x1, p2, x1);
          const vd lo = SELECTV(lo01 < lo23, lo01, lo23), hi = SELECTV(hi01 > hi23, hi01, hi23);
          const vd least = SELECTV(s > zero, lo + offset, zero - (hi + offset));
          const vd size = FABSV(x0) + FABSV(x1) + FABSV(hf0) + FABSV(hf1) + FABSV(offset);
          clear &= least >= slack * size + 1e-300;
        }
        bool any = false;
        for (int k = 0; k < VW; k++) sc->change[l + k] = false, any |= I->quiet[l + k] & !clear[k];
        if (!any) continue;
      }
      /* the samples s = 1 .. S as find_event takes them (sample_times_w, hermite_weights_w,
       * hermite_w, sign_changes_w: the same operations); s = 0 decides nothing */
      /* whether each function's sample before was >= 0 (kept as masks: gcc compares a vector
       * of memory element by element) */
      vd add[TF_EVENT_LOOP_MAX_FUNCTIONS];
      vi change = {0}, was_nonneg[TF_EVENT_LOOP_MAX_FUNCTIONS + 1];
      for (int j = 0; j < nf; j++) {
        was_nonneg[j] = change - 1;
        if (j < ns) LOADV(add[j], sc->offset[j] + l);
      }
      for (int s = 1; s <= S; s++) {
        const vd tb = s == S ? t1 : t0 + (t1 - t0) * (double)s / (double)S;
        const vd a = SELECTV(taken, (tb - t0) / hd, zero), b = 1.0 - a;
        const vd prod = a * b, diff = a - b;
        for (int j = 0; j < nf; j++) {
          const size_t q = (size_t)sc->is_component[j] * stride + (size_t)l;
          vd y0, y1, g0, g1, g;
          LOADV(y0, x0s + q), LOADV(y1, x1s + q), LOADV(g0, f0s + q), LOADV(g1, f1s + q);
          const vd y = b * y0 + a * y1 + prod * (diff * (y1 - y0) + h * (b * g0 - a * g1));
          if (j < ns)
            g = y + add[j];
          else if (is_level)
            g = sign * (y - level);
          else
            g = sign * y;
          change |= (g < zero) & was_nonneg[j];
          was_nonneg[j] = g >= zero;
        }
      }
      for (int k = 0; k < VW; k++) sc->change[l + k] = change[k] != 0;
    }
  });
}

/* The screening of the lanes' steps at width w, vectors of vw lanes (I->sc.change): bounded
 * (every event function a state component) or on the model's event functions. */
static inline __attribute__((always_inline)) void screen_w(impact_lanes *I, const int w,
                                                           const int vw) {
  const tf_lanes *L = &I->L;
  const bool bounded = I->sc.bounded;
  if (bounded && I->samples == 8) return screen_bounded(I, w, vw, 8); /* DOP853's */
  if (bounded) return screen_bounded(I, w, vw, I->samples);
  const step_set all = {L->x, L->x_new, L->k[0], L->k[L->pair->fsal_stage], L->hs, L->t, I->sc.t1};
  sample_changes_w(I, &all, w);
}

/* screen_w at the lanes' width and vectors, as the lanes' attempts (flow_lanes.h) */
TF_LANES_BY_WIDTH(screen_lanes, &I->L, (impact_lanes *const I), (I), screen_w(I, w, vw);)

/* The lanes' event functions on the samples find_event would take of each lane's step just
 * attempted (the cubic Hermite interpolant, in tf_rk_hermite's arithmetic, at its sample
 * times), and whether any changes sign the way find_event looks for: sc->change of the lanes
 * that screen (I->quiet so far), read by sort_lanes. */
static void screen(impact_lanes *I) {
  tf_lanes *L = &I->L;
  const int w = L->w;
  screening *sc = &I->sc;
  bool any = false;
  for (int l = 0; l < w; l++) {
    I->quiet[l] = L->slot[l] >= 0 && I->screened[l];
    any |= I->quiet[l];
    sc->t1[l] = L->last[l] ? L->t_limit[l] : L->t[l] + L->hs[l];
  }
  if (any) screen_lanes(I);
}

/* Lane l's accepted step, screened without an event: the member moves on as its loop would
 * move it (its stepper keeps the lanes' step until the loop needs it: hand_over), and the lane
 * goes on at the top of the next step. */
static void quiet_step(impact_lanes *I, int l, double log_err) {
  tf_lanes *L = &I->L;
  tf_stepper *s = L->steppers[l];
  tf_event_loop *loop = loop_of(I, l);
  double *x = I->m[L->slot[l]].x;
  sync(I, l);
  tf_lanes_move_on(L, l, L->hs[l], log_err);
  for (size_t i = 0; i < L->n; i++) x[i] = L->x[i * L->w + l];
  s->stats.steps++;
  tf_impact_quiet_step(tf_poincare_impact(I->engines[l]), L->t[l], x);
  if (!tf_event_loop_top(loop)) {
    member_over(I, l);
    next_step(I, l);
    return;
  }
  double t, t_limit;
  tf_event_loop_lane_stepper(loop, &t, &t_limit);
  L->t_limit[l] = t_limit;
  L->hmin[l] = tf_rk_hmin_floor(s, t);
  look(I, l);
}

/* Lane l's state at the top of its step into its member's stepper, for the stepper to take the
 * step (what a quiet step left in the lanes only: the first-same-as-last stage, the step size
 * and the PI memory). */
static void hand_over(impact_lanes *I, int l) {
  tf_lanes *L = &I->L;
  tf_stepper *s = L->steppers[l];
  for (size_t i = 0; i < L->n; i++) s->k[0][i] = L->k[0][i * L->w + l];
  s->h = L->h[l], s->log_err_prev = L->log_prev[l];
}

/* The end of lane l's step (st: tf_rk_step_with's status; accepted: moved on) handed to its
 * member's loop: its events and whatever follows them. */
static void stepped(impact_lanes *I, int l, tf_ode_status st, bool accepted, double log_err) {
  tf_lanes *L = &I->L;
  tf_stepper *s = L->steppers[l];
  tf_event_loop *loop = loop_of(I, l);
  sync(I, l);
  if (accepted) {
    tf_lanes_hand_back(L, l, s, L->pair->to_stepper, I->m[L->slot[l]].x, log_err);
    tf_event_loop_set_time(loop, L->t[l]);
    if (I->seen[l]) tf_event_loop_change_seen(loop); /* its cheap pass would see it too */
  } else if (st == TF_ODE_MODEL_FAILED) {
    s->model_code = L->code[l];
  }
  if (!tf_event_loop_stepped(loop, st)) member_over(I, l);
}

static void decide(impact_lanes *I, int l) {
  bool accepted;
  double log_err = 0.0;
  const tf_ode_status st = tf_lanes_judge(&I->L, l, &accepted, &log_err);
  if (st == TF_ODE_OK && !accepted) return;
  if (st == TF_ODE_OK && I->quiet[l]) return quiet_step(I, l, log_err);
  stepped(I, l, st, accepted, log_err);
  next_step(I, l);
}

/* Lane l's member to its end on its own stepper, from where the lanes left it (mid-step after
 * the loop's top, the step size proposed after any rejected attempts). */
static void run_alone(impact_lanes *I, int l) {
  tf_event_loop *loop = loop_of(I, l);
  sync(I, l);
  hand_over(I, l);
  if (tf_event_loop_take_step(loop)) tf_event_loop_drive(loop);
  member_over(I, l);
}

/* The bytes of the lanes' bools (0 or 1) as a vector of long: lane k's at bit 8 k of a
 * little-endian word (gcc 12 widens a vector of chars element by element). */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "lane k's byte at bit 8 k");
static const long long byte_shift[8] = {0, 8, 16, 24, 32, 40, 48, 56};
#define LOAD_BOOLS(v, p)                                              \
  do {                                                                \
    uint64_t word_ = 0;                                               \
    vi shift_;                                                        \
    memcpy(&word_, (p), sizeof(v) / 8);                               \
    LOADV(shift_, byte_shift);                                        \
    (v) = (((__typeof__(v)){0} + (long long)word_) >> shift_) & 0xff; \
  } while (0)

/* sort_lanes' flags of the lanes: seen and quiet after the screening, and 1 or 0 in busy, and
 * where controlled (else 0) in plain and again (a rejection to retry).  Its statements in the
 * function itself (TF_LANES_BY_WIDTH), where screen_bounded's are in an inline function: those
 * happen to survive gcc 12's lowering for the baseline. */
TF_LANES_BY_WIDTH(
    flags, &I->L,
    (impact_lanes *const I, bool controlled, long *restrict plain, long *restrict busy,
     long *restrict again),
    (I, controlled, plain, busy, again), {
      const tf_lanes *L = &I->L;
      TF_LANES_VECTORS(vw, {
        typedef signed char vb __attribute__((vector_size(VW))); /* bool's bytes */
        typedef int vn __attribute__((vector_size(4 * VW)));
        const vd one = (vd){0.0} + 1.0, largest = one * DBL_MAX;
        const vi zero = {0}, bit = zero + 1;
        for (int l = 0; l < w; l += VW) {
          vi slot, finite, pending, room, quiet, change, straight, last;
          vd err, h_next, hmin;
          vn code;
          LOADV(slot, L->slot + l), LOADV(finite, L->finite + l), LOADV(pending, I->pending + l);
          LOADV(room, I->room + l), LOADV(err, L->err + l), LOADV(h_next, L->h_next + l);
          LOADV(hmin, L->hmin + l), LOADV(code, L->code + l);
          LOAD_BOOLS(quiet, I->quiet + l);
          LOAD_BOOLS(change, I->sc.change + l);
          LOAD_BOOLS(straight, I->straight + l);
          LOAD_BOOLS(last, L->last + l);
          const vi in = slot >= zero, was = quiet != zero;
          const vi seen = was & (change != zero), now = was & ~seen;
          const vi ok = (__builtin_convertvector(code, vi) == zero) & (finite != zero);
          /* NaN: none of the comparisons of doubles holds */
          const vi accepted = err <= one, finite_err = err <= largest, above = h_next >= hmin;
          const vi p =
              in & now & (straight != zero) & ok & accepted & (last == zero) & (pending + 1 < room);
          const vi a = in & ok & ~accepted & finite_err & above;
          const vb seen_b = __builtin_convertvector(seen & bit, vb);
          const vb now_b = __builtin_convertvector(now & bit, vb);
          const vi in_b = in & bit;
          const vi p_b = controlled ? p & bit : zero, a_b = controlled ? a & bit : zero;
          STOREV(I->seen + l, seen_b), STOREV(I->quiet + l, now_b), STOREV(plain + l, p_b);
          STOREV(busy + l, in_b), STOREV(again + l, a_b);
        }
      });
    })

/* The lanes after an attempt (flags): each screened lane's step quiet or seen to change
 * an event function's sign (screen), and
 * - plain[l]: an accepted step, quiet, whose member goes straight on: a plain step
 *   (tf_lanes_plain_moves: accepted, finite, not the last), straight (look), with steps left in
 *   the budget.  Their members' loops would only count the step, move on and prepare the next
 *   one, which changes none of the lane's view: the lanes move them in one pass and leave the
 *   loops' part to sync, when a loop is needed again.  The stop is polled once for them all;
 * - the lanes rejected by the error norm alone (no refusal, finite, err > 1) whose next step
 *   stays above its floor: tf_lanes_judge's rejection (counted, the step the controller
 *   proposed) without a call per lane; the lane tries again.
 * Returns the lanes left to decide: the busy ones neither plain nor retried, a bit each. */
_Static_assert(TF_LANES_MAX <= 32, "a bit per lane");
static uint32_t sort_lanes(impact_lanes *I, long *plain) {
  tf_lanes *L = &I->L;
  const int w = L->w;
  const bool controlled = tf_lanes_plain_pair(L); /* err and h_next are the controller's */
  long busy[TF_LANES_MAX], again[TF_LANES_MAX], any = 0;
  flags(I, controlled, plain, busy, again);
  uint32_t in = 0, retry = 0;
  for (int l = 0; l < w; l++)
    any |= plain[l], in |= (uint32_t)busy[l] << l, retry |= (uint32_t)again[l] << l;
  if (any && tf_stop_poll(L->stop)) any = 0; /* none where not controlled */
  uint32_t moved = 0;
  if (any) {
    tf_lanes_plain_moves(L, plain);
    for (int l = 0; l < w; l++) I->pending[l] += plain[l], moved |= (uint32_t)plain[l] << l;
  }
  for (uint32_t r = retry; r; r &= r - 1) {
    const int l = __builtin_ctz(r);
    L->steppers[l]->stats.rejected++, L->rejected[l]++;
    L->h[l] = L->h_next[l];
  }
  return in & ~moved & ~retry;
}

/* Once few lanes are busy, they finish alone (tf_lanes_tail_due). */
static bool tail(impact_lanes *I) {
  tf_lanes *L = &I->L;
  if (!tf_lanes_tail_due(L)) return false;
  for (int l = 0; l < L->w; l++)
    if (L->slot[l] >= 0) run_alone(I, l);
  return true;
}

/* The lanes' memory, and the model's lanes field with its parameters where it has one. */
static bool lanes_alloc(impact_lanes *I) {
  tf_lanes *L = &I->L;
  tf_impact_lane_view v;
  tf_impact_lane_view_of(tf_poincare_impact(I->engines[0]), &v);
  I->np = v.nparams;
  screening *sc = &I->sc; /* the spec's part */
  sc->ops = v.ops, sc->nimpacts = v.nimpacts, sc->component = v.component;
  sc->section = v.section, sc->level = v.level;
  sc->bounded = v.ops != NULL;
  for (int j = 0; j < sc->nimpacts + (sc->section != TF_SECTION_NONE); j++)
    sc->bounded &= v.ops && (sc->is_component[j] = component_of(sc, j)) >= 0;
  I->samples = tf_stepper_type_samples(L->ode->type);
  I->xs = calloc((L->n + I->np) * TF_LANES_MAX + I->np * (size_t)L->w, sizeof *I->xs);
  if (!I->xs || !tf_lanes_alloc(L)) return false;
  I->batch_params = I->xs + L->n * TF_LANES_MAX;
  L->params_rhs = v.ops ? v.ops->rhs_lanes : NULL;
  if (L->params_rhs) L->params = I->batch_params + I->np * TF_LANES_MAX;
  return true;
}

static void lanes_free(impact_lanes *I) {
  tf_lanes_free(&I->L);
  free(I->xs);
}

/* Whether the lanes take a member's steps and screen its events themselves (screens): a model
 * with the lane callbacks, and event functions the lanes can compute (tf_impact_lane_view_of). */
static bool screened_model(const tf_kernel *k, const tf_impact_options *o) {
  const tf_impact_ops *ops = k->kind == TF_MODEL_IMPACT ? k->impact : NULL;
  return ops && ops->rhs_lanes && ops->surface_lanes &&
         (o->section != TF_SECTION_EXTREMUM || ops->rate_lanes) &&
         o->section != TF_SECTION_FUNCTION && o->section_reset.count == 0;
}

/* auto takes lanes only where they screen the events themselves: elsewhere they take only
 * the steps, and with the field and the event screening each member's own they do not beat
 * one member at a time (docs/BENCHMARKS.md, the valve).  It takes two vectors' worth: each
 * stage waits on the one before, and two independent vectors per component hide part of that
 * latency (at 256 valve points 16 lanes cost 0.92 of 8 on AVX-512). */
int tf_impact_lanes_width(const tf_kernel *k, const tf_impact_options *o, int lanes) {
  const tf_lane_pair *pair = tf_lane_pair_of(&o->loop.ode);
  if (lanes == 1 || !pair || !pair->to_stepper) return 1;
  if (lanes == 0) return screened_model(k, o) ? 2 * tf_lanes_auto_width() : 1;
  return lanes;
}

void tf_impact_run_lanes(tf_poincare *const *engines, int w, const tf_ode_options *ode, size_t dim,
                         double t0, double t_end, tf_impact_lane_member *m, size_t count) {
  tf_stepper *steppers[TF_LANES_MAX];
  impact_lanes I = {.L = {.pair = tf_lane_pair_of(ode),
                          .ode = ode,
                          .steppers = steppers,
                          .w = w,
                          .n = dim,
                          .count = count,
                          .stop = ode->stop},
                    .engines = engines,
                    .m = m,
                    .t0 = t0,
                    .t_end = t_end};
  tf_lanes *L = &I.L;
  if (!L->pair || !L->pair->to_stepper || !lanes_alloc(&I)) { /* a bad w: tf_lanes_alloc's */
    lanes_free(&I);
    for (size_t i = 0; i < count; i++)
      tf_poincare_run(engines[0], m[i].p, t0, m[i].x, t_end, m[i].rec, NULL, NULL, 0);
    return;
  }
  for (int l = 0; l < w; l++) L->slot[l] = -1, next_step(&I, l);
  long plain[TF_LANES_MAX];
  while (!tail(&I) && tf_lanes_plan(L)) {
    tf_lanes_attempt(L);
    screen(&I);
    for (uint32_t rest = sort_lanes(&I, plain); rest; rest &= rest - 1)
      decide(&I, __builtin_ctz(rest)); /* in the order of the lanes, as the queue is taken */
  }
  lanes_free(&I);
}
