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
 * first evaluation) is the stepper's own. */
#include "impact_lanes.h"

#include <stdlib.h>

#include "flow_lanes.h"
#include "rk_driver.h"
#include "status.h"

typedef struct impact_lanes {
  tf_lanes L;
  tf_poincare *const *engines;
  tf_impact_lane_member *m;
  double t0, t_end;
} impact_lanes;

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
      L->steppers[l] =
          tf_event_loop_lane_stepper(tf_poincare_loop(I->engines[l]), &(double){0}, &(double){0});
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
    tf_event_loop *loop = tf_poincare_loop(I->engines[l]);
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
    const double *x = I->m[L->slot[l]].x;
    for (size_t i = 0; i < L->n; i++) {
      L->x[i * L->w + l] = x[i];
      L->k[0][i * L->w + l] = s->k[0][i];
    }
    L->t[l] = t, L->t_limit[l] = t_limit;
    L->h[l] = s->h, L->log_prev[l] = s->log_err_prev;
    L->hmin[l] = tf_rk_hmin_floor(s, t);
    L->code[l] = 0;
    return true;
  }
}

/* The end of lane l's step (st: tf_rk_step_with's status; accepted: moved on) handed to its
 * member's loop: its events and whatever follows them. */
static void stepped(impact_lanes *I, int l, tf_ode_status st, bool accepted, double log_err) {
  tf_lanes *L = &I->L;
  tf_stepper *s = L->steppers[l];
  tf_event_loop *loop = tf_poincare_loop(I->engines[l]);
  double *x = I->m[L->slot[l]].x;
  if (accepted) {
    L->pair->to_stepper(L, l, s);
    tf_lanes_move_on(L, l, L->hs[l], log_err);
    for (size_t i = 0; i < L->n; i++) x[i] = L->x[i * L->w + l];
    s->fsal_valid = true;
    s->h = L->h[l], s->log_err_prev = L->log_prev[l];
    s->stats.steps++;
    tf_event_loop_set_time(loop, L->t[l]);
  } else if (st == TF_ODE_MODEL_FAILED) {
    s->model_code = L->code[l];
  }
  if (!tf_event_loop_stepped(loop, st)) member_over(I, l);
}

static void decide(impact_lanes *I, int l) {
  bool accepted;
  double log_err = 0.0;
  const tf_ode_status st = tf_lanes_judge(&I->L, l, &accepted, &log_err);
  if (st != TF_ODE_OK || accepted) {
    stepped(I, l, st, accepted, log_err);
    next_step(I, l);
  }
}

/* Lane l's member to its end on its own stepper, from where the lanes left it (mid-step after
 * the loop's top, the step size proposed after any rejected attempts). */
static void run_alone(impact_lanes *I, int l) {
  tf_event_loop *loop = tf_poincare_loop(I->engines[l]);
  I->L.steppers[l]->h = I->L.h[l];
  if (tf_event_loop_take_step(loop))
    while (tf_event_loop_iterate(loop)) continue;
  member_over(I, l);
}

/* Once the queue is empty and few lanes are busy, an attempt of all lanes costs more than the
 * busy members' own steps: they finish alone. */
static bool tail(impact_lanes *I) {
  tf_lanes *L = &I->L;
  if (L->queue < L->count) return false;
  int busy = 0;
  for (int l = 0; l < L->w; l++) busy += L->slot[l] >= 0;
  if (busy > L->w / 4) return false;
  for (int l = 0; l < L->w; l++)
    if (L->slot[l] >= 0) run_alone(I, l);
  return true;
}

/* auto is off here: the lanes take only the steps, and with the field and the event screening
 * still each member's own, they do not yet beat one member at a time (docs/BENCHMARKS.md,
 * the valve). */
int tf_impact_lanes_width(const tf_ode_options *ode, int lanes) {
  const tf_lane_pair *pair = tf_lane_pair_of(ode);
  if (lanes <= 1 || !pair || !pair->to_stepper) return 1;
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
  if (w > 16 || !L->pair || !L->pair->to_stepper || !tf_lanes_alloc(L)) {
    tf_lanes_free(L);
    for (size_t i = 0; i < count; i++)
      tf_poincare_run(engines[0], m[i].p, t0, m[i].x, t_end, m[i].rec, NULL, NULL, 0);
    return;
  }
  for (int l = 0; l < w; l++) L->slot[l] = -1, next_step(&I, l);
  while (!tail(&I) && tf_lanes_plan(L)) {
    tf_lanes_attempt(L);
    for (int l = 0; l < w; l++)
      if (L->slot[l] >= 0) decide(&I, l);
  }
  tf_lanes_free(L);
}
