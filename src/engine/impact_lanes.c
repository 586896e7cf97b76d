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

#include <math.h>
#include <stdlib.h>

#include "flow_lanes.h"
#include "rk_driver.h"
#include "status.h"

typedef struct impact_lanes {
  tf_lanes L;
  tf_poincare *const *engines;
  tf_impact_lane_member *m;
  double t0, t_end;
  tf_impact_lane_view view[TF_LANES_MAX]; /* each lane's member's, at the top of its step */
  bool quiet[TF_LANES_MAX];               /* the step attempted changes no event's sign */
  bool seen[TF_LANES_MAX];                /* ... or, screened, changes one */
  int samples;                            /* the loop's event samples per step */
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
  tf_impact_lane_view_of(tf_poincare_impact(I->engines[l]), &I->view[l]);
  I->L.own_field[l] = !I->view[l].free_flight;
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

/* The lanes' states at times tb[l] in the step just attempted (before it moves on) on the
 * cubic Hermite interpolant, in tf_rk_hermite's arithmetic: component i of lane l into
 * xs[i * stride + l]. */
static inline __attribute__((always_inline)) void hermite_w(const tf_lanes *L, const int w,
                                                            const double *restrict tb,
                                                            double *restrict xs, const int stride) {
  const double *restrict x0 = L->x, *restrict x1 = L->x_new, *restrict f0 = L->k[0];
  const double *restrict f1 = L->k[L->pair->fsal_stage];
  /* per lane: theta, 1 - theta, their product and difference (the same in every component) */
  double th[TF_LANES_MAX], th1[TF_LANES_MAX], prod[TF_LANES_MAX], diff[TF_LANES_MAX];
  for (int l = 0; l < w; l += 4) { /* theta = (tb - t) / h, 0 where the lane is empty */
    const v4d zero = {0.0}, one = {1.0, 1.0, 1.0, 1.0};
    v4d h, t0, t1;
    LOAD4(h, L->hs + l), LOAD4(t0, L->t + l), LOAD4(t1, tb + l);
    const v4i taken = h > zero;
    const v4d a = SELECT4(taken, (t1 - t0) / SELECT4(taken, h, one), zero), b = 1.0 - a;
    const v4d ab = a * b, a_b = a - b;
    STORE4(th + l, a), STORE4(th1 + l, b), STORE4(prod + l, ab), STORE4(diff + l, a_b);
  }
  for (size_t i = 0; i < L->n; i++)
    for (int l = 0; l < w; l++) {
      const size_t q = i * (size_t)w + l;
      const double a = th[l], b = th1[l], h = L->hs[l];
      xs[i * (size_t)stride + l] =
          b * x0[q] + a * x1[q] +
          prod[l] * (diff[l] * (x1[q] - x0[q]) + h * (b * f0[q] - a * f1[q]));
    }
}

/* What the screening of a step needs of each lane's view (look): the event functions' offsets
 * and the section's sign, lane by lane, and the section's kind, which is the spec's. */
typedef struct screening {
  const tf_impact_ops *ops;
  int nimpacts, component;
  tf_section_kind section;
  double level;
  double offset[TF_EVENT_LOOP_MAX_FUNCTIONS][TF_LANES_MAX], sign[TF_LANES_MAX];
  double t1[TF_LANES_MAX]; /* where each lane's step ends */
  bool change[TF_LANES_MAX];
} screening;

/* change[l] |= g went from >= 0 (at the sample before: g_prev) to < 0; g_prev = g. */
static inline __attribute__((always_inline)) void sign_changes_w(const int w,
                                                                 const double *restrict g,
                                                                 double *restrict g_prev,
                                                                 v4i *restrict change) {
  const v4d zero = {0.0};
  for (int l = 0; l < w; l += 4) {
    v4d now, before;
    LOAD4(now, g + l), LOAD4(before, g_prev + l);
    change[l / 4] |= (now < zero) & (before >= zero);
    STORE4(g_prev + l, now);
  }
}

/* The lanes' event functions at the samples s = 1 .. S of find_event (at width w) and whether
 * any goes from >= 0 to < 0 between samples: sc->change.  The sample s = 0 decides nothing:
 * find_event counts a start on the boundary as inside (g_prev = fmax(g, 0) >= 0 always).  The
 * model's event functions take TF_LANES_MAX / w samples of every lane at once (fewer calls,
 * each on independent values); past S, the last sample stands in, its values unused. */
static inline __attribute__((always_inline)) void sample_changes_w(impact_lanes *I, screening *sc,
                                                                   const int w) {
  enum { BATCH = TF_LANES_MAX };
  const int B = BATCH / w;
  const tf_lanes *L = &I->L;
  const int S = I->samples, ns = sc->nimpacts, c = sc->component;
  const double *restrict t = L->t, *restrict t1 = sc->t1;
  double tb[BATCH], val[BATCH], g[TF_LANES_MAX];
  double g_prev[TF_EVENT_LOOP_MAX_FUNCTIONS + 1][TF_LANES_MAX];
  v4i change[TF_LANES_MAX / 4] = {{0}};
  for (int j = 0; j <= ns; j++)
    for (int l = 0; l < w; l++) g_prev[j][l] = 0.0;
  for (int s0 = 1; s0 <= S; s0 += B) {
    for (int b = 0; b < B; b++) {
      const int s = s0 + b < S ? s0 + b : S;
      double *restrict tbb = tb + b * w;
      if (s == S)
        for (int l = 0; l < w; l++) tbb[l] = t1[l];
      else
        for (int l = 0; l < w; l += 4) { /* t + (t1 - t) s / S */
          v4d t0, t_end;
          LOAD4(t0, t + l), LOAD4(t_end, t1 + l);
          const v4d ts = t0 + (t_end - t0) * (double)s / (double)S;
          STORE4(tbb + l, ts);
        }
      hermite_w(L, w, tbb, I->xs + b * w, BATCH);
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

#define SAMPLE_CHANGES_WIDTH(w)                                                     \
  TF_LANES_TARGETS static void sample_changes_##w(impact_lanes *I, screening *sc) { \
    sample_changes_w(I, sc, w);                                                     \
  }
SAMPLE_CHANGES_WIDTH(4)
SAMPLE_CHANGES_WIDTH(8)
SAMPLE_CHANGES_WIDTH(16)

/* The lanes' event functions on the samples find_event would take of each lane's step just
 * attempted (the cubic Hermite interpolant, in tf_rk_hermite's arithmetic, at its sample
 * times), and whether any changes sign the way find_event looks for: I->quiet. */
static void screen(impact_lanes *I) {
  tf_lanes *L = &I->L;
  const int w = L->w;
  screening sc = {0};
  const tf_impact_lane_view *v0 = NULL;
  for (int l = 0; l < w; l++) {
    const tf_impact_lane_view *v = &I->view[l];
    I->quiet[l] = L->slot[l] >= 0 && screens(I, l);
    I->seen[l] = false;
    if (I->quiet[l] && !v0) v0 = v;
    sc.t1[l] = L->last[l] ? L->t_limit[l] : L->t[l] + L->hs[l];
    sc.sign[l] = v->sign;
    for (int j = 0; j < v->nimpacts; j++) sc.offset[j][l] = v->offset[j];
  }
  if (!v0) return;
  sc.ops = v0->ops; /* the section is the spec's: every lane's the same */
  sc.nimpacts = v0->nimpacts, sc.component = v0->component;
  sc.section = v0->section, sc.level = v0->level;
  (w == 4 ? sample_changes_4 : w == 8 ? sample_changes_8 : sample_changes_16)(I, &sc);
  for (int l = 0; l < w; l++)
    if (I->quiet[l] && sc.change[l]) I->quiet[l] = false, I->seen[l] = true;
}

/* Lane l's accepted step, screened without an event: the member moves on as its loop would
 * move it (its stepper keeps the lanes' step until the loop needs it: hand_over), and the lane
 * goes on at the top of the next step. */
static void quiet_step(impact_lanes *I, int l, double log_err) {
  tf_lanes *L = &I->L;
  tf_stepper *s = L->steppers[l];
  tf_event_loop *loop = loop_of(I, l);
  double *x = I->m[L->slot[l]].x;
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
  hand_over(I, l);
  if (tf_event_loop_take_step(loop)) tf_event_loop_drive(loop);
  member_over(I, l);
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
  tf_stepper *steppers[16];
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
  if (w > TF_LANES_MAX || !L->pair || !L->pair->to_stepper || !lanes_alloc(&I)) {
    lanes_free(&I);
    for (size_t i = 0; i < count; i++)
      tf_poincare_run(engines[0], m[i].p, t0, m[i].x, t_end, m[i].rec, NULL, NULL, 0);
    return;
  }
  for (int l = 0; l < w; l++) L->slot[l] = -1, next_step(&I, l);
  while (!tail(&I) && tf_lanes_plan(L)) {
    tf_lanes_attempt(L);
    screen(&I);
    for (int l = 0; l < w; l++)
      if (L->slot[l] >= 0) decide(&I, l);
  }
  lanes_free(&I);
}
