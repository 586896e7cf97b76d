/* pws_lanes.c — members of a Filippov ensemble side by side in lanes (pws.h, flow_lanes.h): the
 * wheel's Fig. 5 ensemble.
 *
 * Each lane has its member's own engine (tf_pws_lane: its evolve, event loop, stepper, logs and
 * draws).  The lanes take only the step itself, the stages and error norms of all lanes at once,
 * with the field of each member's current mode: a model's lanes slip field (tf_filippov_ops
 * slip_lanes, with each lane's parameters and side) for the members in a slip mode, the member's
 * own field through its stepper for the others (sliding, along the intersection).  Everything
 * around the step is the member's scalar event loop, as in impact_lanes.c: the top of a step
 * (tf_event_loop_top: the budget, the stop), and after each accepted step, handed to the
 * member's stepper as tf_rk_step_with leaves it (the pair's to_stepper), its events
 * (tf_event_loop_stepped: the screening of the switching functions on the dense output, the
 * location, landing, transition — crossings, sliding, two-fold exits and the intersection's
 * draws — and the samples).  Every evaluation is counted in the member's own stepper, so every
 * number of a member, its counts included, is that of tf_pws_run_member alone, whatever shares
 * its lanes.  A step the lanes cannot take as the stepper would (after a refusal, before a
 * first evaluation) is the stepper's own. */
#include "pws_lanes.h"

#include <stdlib.h>

#include "event_loop.h"
#include "flow_lanes.h"
#include "rk_driver.h"
#include "status.h"

typedef struct pws_lanes {
  tf_lanes L;
  tf_pws_lane *lane[TF_LANES_MAX];
  tf_pws_lane_member *m;
  size_t np; /* the model's parameters; each lane's side after them */
  void (*to_stepper)(tf_lanes *L, int l, tf_stepper *s);
  void (*computing)(uint64_t member);
} pws_lanes;

static tf_event_loop *loop_of(pws_lanes *P, int l) {
  return tf_evolve_loop(tf_pws_lane_evolve(P->lane[l]));
}

static void member_over(pws_lanes *P, int l) {
  tf_lanes *L = &P->L;
  P->m[L->slot[l]].status = tf_pws_lane_end(P->lane[l]);
  L->slot[l] = -1;
  if (L->params) L->params[P->np * (size_t)L->w + (size_t)l] = 0; /* the slip field skips it */
}

/* The next member of the queue into lane l, begun; false when the queue is empty. */
static bool load(pws_lanes *P, int l) {
  tf_lanes *L = &P->L;
  while (L->queue < L->count) {
    tf_pws_lane_member *m = &P->m[L->queue];
    L->slot[l] = (long)L->queue++;
    if (P->computing) P->computing(m->member);
    if (tf_pws_lane_begin(P->lane[l], m->member, m->rec)) {
      L->steppers[l] = tf_event_loop_lane_stepper(loop_of(P, l), &(double){0}, &(double){0});
      return true;
    }
    m->status = TF_MEMBER_FAILED;
    L->slot[l] = -1;
  }
  L->slot[l] = -1;
  return false;
}

/* Lane l's field for the step: the lanes slip field on the member's side, or its own. */
static void choose_field(pws_lanes *P, int l) {
  tf_lanes *L = &P->L;
  const int side = L->params_rhs ? tf_evolve_slip_side(tf_pws_lane_evolve(P->lane[l])) : 0;
  L->own_field[l] = side == 0;
  if (L->params) L->params[P->np * (size_t)L->w + (size_t)l] = side;
}

/* Lane l at the top of a step of its member's loop, its state taken from the loop's stepper;
 * steps the lanes cannot take are the stepper's.  False once the lane is empty for good. */
static bool next_step(pws_lanes *P, int l) {
  tf_lanes *L = &P->L;
  for (;;) {
    if (L->slot[l] < 0 && !load(P, l)) return false;
    tf_event_loop *loop = loop_of(P, l);
    if (!tf_event_loop_top(loop)) {
      member_over(P, l);
      continue;
    }
    double t, t_limit;
    tf_stepper *s = tf_event_loop_lane_stepper(loop, &t, &t_limit);
    if (!s->fsal_valid || s->model_code) { /* the stepper's own step: a reset or a refusal */
      if (!tf_event_loop_take_step(loop)) member_over(P, l);
      continue;
    }
    tf_lanes_take_over(L, l, s, tf_evolve_state(tf_pws_lane_evolve(P->lane[l])), t, t_limit);
    choose_field(P, l);
    return true;
  }
}

/* The end of lane l's step (st: tf_rk_step_with's status; accepted: moved on) handed to its
 * member's loop: its events and whatever follows them. */
static void stepped(pws_lanes *P, int l, tf_ode_status st, bool accepted, double log_err) {
  tf_lanes *L = &P->L;
  tf_stepper *s = L->steppers[l];
  tf_event_loop *loop = loop_of(P, l);
  if (accepted) {
    tf_lanes_hand_back(L, l, s, P->to_stepper, tf_evolve_state(tf_pws_lane_evolve(P->lane[l])),
                       log_err);
    tf_event_loop_set_time(loop, L->t[l]);
  } else if (st == TF_ODE_MODEL_FAILED) {
    s->model_code = L->code[l];
  }
  if (!tf_event_loop_stepped(loop, st)) member_over(P, l);
}

static void decide(pws_lanes *P, int l) {
  bool accepted;
  double log_err = 0.0;
  const tf_ode_status st = tf_lanes_judge(&P->L, l, &accepted, &log_err);
  if (st == TF_ODE_OK && !accepted) return; /* the lane tries again with a smaller step */
  stepped(P, l, st, accepted, log_err);
  next_step(P, l);
}

/* Lane l's member to its end on its own stepper, from where the lanes left it (mid-step after
 * the loop's top, the step size proposed after any rejected attempts). */
static void run_alone(pws_lanes *P, int l) {
  tf_lanes *L = &P->L;
  tf_stepper *s = L->steppers[l];
  tf_event_loop *loop = loop_of(P, l);
  s->h = L->h[l], s->log_err_prev = L->log_prev[l];
  if (tf_event_loop_take_step(loop)) tf_event_loop_drive(loop);
  member_over(P, l);
}

/* Once few lanes are busy, they finish alone (tf_lanes_tail_due). */
static bool tail(pws_lanes *P) {
  tf_lanes *L = &P->L;
  if (!tf_lanes_tail_due(L)) return false;
  for (int l = 0; l < L->w; l++)
    if (L->slot[l] >= 0) run_alone(P, l);
  return true;
}

/* The pair's to_stepper (DOPRI5's is not in its table: flow_lanes.h). */
static void (*to_stepper_of(const tf_lane_pair *pair))(tf_lanes *, int, tf_stepper *) {
  if (pair == &tf_lanes_dopri5) return tf_lanes_dopri5_to_stepper;
  return pair ? pair->to_stepper : NULL;
}

int tf_pws_lanes_width(const tf_pws *pws, int lanes) {
  if (lanes == 1 || !tf_pws_lanes_possible(pws) || !to_stepper_of(tf_lane_pair_of(&pws->opts.ode)))
    return 1;
  if (lanes == 0) return pws->model.kernel->filippov->slip_lanes ? tf_lanes_auto_width() : 1;
  return lanes;
}

/* The lanes' memory and the model's lanes slip field with its parameters (the same for every
 * member), each lane's side after them. */
static bool lanes_alloc(pws_lanes *P, const tf_pws *pws) {
  tf_lanes *L = &P->L;
  P->np = pws->model.kernel->nparams;
  if (!tf_lanes_alloc(L)) return false;
  L->params_rhs = pws->model.kernel->filippov->slip_lanes;
  if (!L->params_rhs) return true;
  L->params = calloc((P->np + 1) * (size_t)L->w, sizeof *L->params);
  if (!L->params) return false;
  for (size_t j = 0; j < P->np; j++)
    for (int l = 0; l < L->w; l++) L->params[j * (size_t)L->w + (size_t)l] = pws->model.params[j];
  return true;
}

static void lanes_free(pws_lanes *P) {
  free(P->L.params);
  tf_lanes_free(&P->L);
  for (int l = 0; l < TF_LANES_MAX; l++) tf_pws_lane_destroy(P->lane[l]);
}

/* Without memory for lanes, the members one by one: the same numbers. */
static void run_one_by_one(tf_pws *pws, tf_pws_lane_member *m, size_t count,
                           void (*computing)(uint64_t member)) {
  for (size_t i = 0; i < count; i++) {
    if (computing) computing(m[i].member);
    m[i].status = tf_pws_run_member(pws, m[i].member, m[i].rec);
  }
}

void tf_pws_run_lanes(tf_pws *pws, int w, tf_pws_lane_member *m, size_t count,
                      void (*computing)(uint64_t member)) {
  tf_stepper *steppers[TF_LANES_MAX];
  const tf_lane_pair *pair = tf_lane_pair_of(&pws->opts.ode);
  pws_lanes P = {.L = {.pair = pair,
                       .ode = &pws->opts.ode,
                       .steppers = steppers,
                       .w = w,
                       .n = pws->model.kernel->dim,
                       .count = count,
                       .stop = pws->opts.ode.stop},
                 .m = m,
                 .to_stepper = to_stepper_of(pair),
                 .computing = computing};
  tf_lanes *L = &P.L;
  bool ready = P.to_stepper && lanes_alloc(&P, pws); /* a bad w: tf_lanes_alloc's */
  for (int l = 0; ready && l < w; l++) ready = (P.lane[l] = tf_pws_lane_create(pws)) != NULL;
  if (!ready) {
    lanes_free(&P);
    run_one_by_one(pws, m, count, computing);
    return;
  }
  for (int l = 0; l < w; l++) L->slot[l] = -1, next_step(&P, l);
  while (!tail(&P) && tf_lanes_plan(L)) {
    tf_lanes_attempt(L);
    for (int l = 0; l < w; l++)
      if (L->slot[l] >= 0) decide(&P, l);
  }
  lanes_free(&P);
}
