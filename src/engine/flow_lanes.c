/* flow_lanes.c — members of a smooth flow integrated side by side (flow.h, lanes): the driver
 * of any explicit pair (flow_lanes.h), and DOPRI5's attempt.
 *
 * One member's step is a chain: each stage waits on the one before, and a small system's
 * stages are a few multiplications, so a core mostly waits.  W members in W lanes, the state
 * in structure of arrays (component i of lane l at [i * W + l]), let the stage sums run over
 * the lanes in loops the compiler vectorises, and hide each other's latency.
 *
 * Lanes never share a step: each keeps its own t, h, error norm, accept/reject and PI memory,
 * and its dense output is evaluated from its own stages.  Every lane does the operations of
 * the scalar stepper (dopri5.c, dop853.c) and ode.c for its member in the same order (the
 * coefficients are one copy, dopri5_coeffs.h and dop853_coeffs.h; the build does not contract
 * multiply-adds), and the starting step is ode.c's own code on the scalar stepper: a member's
 * numbers are tf_flow_run_member's bit for bit, whatever shares its lanes.  A finished lane
 * takes the next member of the queue at once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_point.h"
#include "dopri5_coeffs.h"
#include "flow_lanes.h"
#include "rk_driver.h"
#include "rosenbrock.h"
#include "status.h"

typedef tf_lanes lanes;

/* ---- DOPRI5's vectorised stages --------------------------------------------------------- */

/* out = x + h (sum_j a_rj k_j), in dopri5.c's order (axpy_stages). */
static inline __attribute__((always_inline)) void stage_row(const lanes *L, const int w,
                                                            const int vw, const size_t n, int row,
                                                            double *restrict out) {
  tf_lanes_stage_sum(L, w, vw, n, row, A + row * STAGES, L->k, out);
}

static void join_code(int *code, int rc) {
  if (rc && (*code == 0 || (rc < 0 && *code > 0))) *code = rc; /* as tf_rk_eval */
}

/* The lanes field's refusals in the attempt's evaluations joined, in their order, into the codes
 * of the busy lanes it evaluated (not an own_field member's, joined as it is evaluated).  Read
 * once the attempt is done, not after each evaluation: a load of a code just stored by the field
 * (often by a memset of the whole array) waits until the store reaches the cache. */
static void join_lane_codes(lanes *L) {
  const int n = L->evals * L->w;
  int any = 0;
  for (int i = 0; i < n; i++) any |= L->rc[i];
  for (int i = 0; any && i < n; i++) {
    const int l = i % L->w;
    if (L->rc[i] && L->slot[l] >= 0 && !L->own_field[l]) join_code(&L->code[l], L->rc[i]);
  }
}

/* This evaluation's refusals, one per lane. */
static int *eval_codes(lanes *L) {
  return L->rc + L->evals++ * L->w;
}

/* Lane l's field through its member's own stepper. */
static void eval_own_field(lanes *L, int l, const double *xs, double *dx) {
  const int w = L->w;
  tf_stepper *s = L->steppers[l];
  for (size_t i = 0; i < L->n; i++) L->gather[i] = xs[i * w + l];
  join_code(&L->code[l], s->f(L->tc[l], L->gather, s->ctx, L->out));
  for (size_t i = 0; i < L->n; i++) dx[i * w + l] = L->out[i];
}

/* The lanes field with each lane's parameters; lanes whose member's field is not the model's
 * rhs (own_field) through their steppers. */
static void eval_params_field(lanes *L, const double *xs, double *dx) {
  const int w = L->w;
  L->params_rhs(w, L->tc, xs, L->params, dx, eval_codes(L));
  uint64_t own[TF_LANES_MAX / 8], any = 0; /* the flags 8 at a time: mostly none is set */
  memcpy(own, L->own_field, sizeof own);
  for (int i = 0; i < TF_LANES_MAX / 8; i++) any |= own[i];
  if (!any) return;
  for (int l = 0; l < w; l++)
    if (L->slot[l] >= 0 && L->own_field[l]) eval_own_field(L, l, xs, dx);
}

void tf_lanes_eval(lanes *L, const double *xs, double *dx) {
  const int w = L->w;
  if (L->params_rhs) return eval_params_field(L, xs, dx);
  if (L->steppers) {
    for (int l = 0; l < w; l++)
      if (L->slot[l] >= 0) eval_own_field(L, l, xs, dx);
    return;
  }
  if (L->smooth_lanes) {
    const tf_flow *flow = L->flow;
    tf_smooth_rhs_lanes(flow->kernel, flow->params, &flow->smoothing, w, L->tc, xs, dx,
                        eval_codes(L));
    return;
  }
  if (L->lane_rhs) {
    L->lane_rhs(w, L->tc, xs, L->flow->params, dx, eval_codes(L)); /* a crash: the last loaded */
    return;
  }
  for (int l = 0; l < w; l++) {
    if (L->slot[l] < 0) continue;
    if (L->computing) L->computing(L->m[L->slot[l]].member);
    for (size_t i = 0; i < L->n; i++) L->gather[i] = xs[i * w + l];
    tf_crash_point_publish(&L->tc[l], L->gather, (int)L->n); /* a crash names this call's point */
    join_code(&L->code[l], tf_flow_drift(L->tc[l], L->gather, L->flow, L->out));
    for (size_t i = 0; i < L->n; i++) dx[i * w + l] = L->out[i];
  }
  tf_crash_point_publish(NULL, NULL, 0);
}

/* dopri5.c's attempt: six new stages, k[6] f at the 5th-order solution x_new. */
static inline __attribute__((always_inline)) void attempt_w(lanes *L, const int w, const int vw,
                                                            const size_t n) {
  stage_row(L, w, vw, n, 1, L->stage); /* rows as constants: each sum unrolls */
  tf_lanes_stage_times(L, w, C[1]);
  tf_lanes_eval(L, L->stage, L->k[1]);
  stage_row(L, w, vw, n, 2, L->stage);
  tf_lanes_stage_times(L, w, C[2]);
  tf_lanes_eval(L, L->stage, L->k[2]);
  stage_row(L, w, vw, n, 3, L->stage);
  tf_lanes_stage_times(L, w, C[3]);
  tf_lanes_eval(L, L->stage, L->k[3]);
  stage_row(L, w, vw, n, 4, L->stage);
  tf_lanes_stage_times(L, w, C[4]);
  tf_lanes_eval(L, L->stage, L->k[4]);
  stage_row(L, w, vw, n, 5, L->stage);
  tf_lanes_stage_times(L, w, 1.0); /* t + h: C[5] is 1 (t + 1.0 h is t + h exactly) */
  tf_lanes_eval(L, L->stage, L->k[5]);
  stage_row(L, w, vw, n, 6, L->x_new);
  tf_lanes_eval(L, L->x_new, L->k[6]);
}

/* dopri5.c's error_norm and tf_rk_weighted_rms, per lane, components summed in order, a vector
 * of lanes at a time. */
static inline __attribute__((always_inline)) void error_norms_w(lanes *L, const int w, const int vw,
                                                                const size_t n) {
  const double atol = L->ode->atol, rtol = L->ode->rtol;
  const double *restrict k0 = L->k[0], *restrict k2 = L->k[2], *restrict k3 = L->k[3],
                         *restrict k4 = L->k[4], *restrict k5 = L->k[5], *restrict k6 = L->k[6];
  const double *restrict x = L->x, *restrict xn = L->x_new, *restrict hs = L->hs;
  double mean[TF_LANES_MAX];
  TF_LANES_VECTORS(vw, {
    vd sum[TF_LANES_MAX / VW] = {{0}};
    for (size_t i = 0; i < n; i++)
      for (int l = 0; l < w; l += VW) {
        const size_t q = i * w + l;
        vd c0, c2, c3, c4, c5, c6, h, a0, a1;
        LOADV(c0, k0 + q), LOADV(c2, k2 + q), LOADV(c3, k3 + q), LOADV(c4, k4 + q);
        LOADV(c5, k5 + q), LOADV(c6, k6 + q), LOADV(h, hs + l);
        const vd v = h * (E[0] * c0 + E[2] * c2 + E[3] * c3 + E[4] * c4 + E[5] * c5 + E[6] * c6);
        LOADV(a0, x + q), LOADV(a1, xn + q);
        a0 = FABSV(a0), a1 = FABSV(a1);
        const vd scale = atol + rtol * SELECTV(a0 > a1, a0, a1);
        sum[l / VW] += (v / scale) * (v / scale);
      }
    for (int l = 0; l < w; l += VW) {
      const vd m = sum[l / VW] / (double)n;
      STOREV(mean + l, m);
    }
  });
  for (int l = 0; l < w; l++) L->err[l] = sqrt(mean[l]); /* vector roots: no errno here */
}

/* one attempt of every lane and its error norm: step */
TF_LANES_STEP

/* dopri5.c's build_dense and dense_at for lane l at ts in the step just taken (before x and
 * k[0] move on), into L->out. */
static void dense_lane(lanes *L, int l, double ts, double t_old, double h, bool first) {
  (void)first;
  const double theta = h > 0 ? (ts - t_old) / h : 0.0, theta1 = 1.0 - theta;
  for (size_t i = 0; i < L->n; i++) {
    const size_t q = i * L->w + l;
    double *const *k = L->k;
    const double x = L->x[q], dx = L->x_new[q] - x, bspl = h * k[0][q] - dx;
    const double c3 = dx - h * k[6][q] - bspl;
    const double c4 = h * (D[0] * k[0][q] + D[2] * k[2][q] + D[3] * k[3][q] + D[4] * k[4][q] +
                           D[5] * k[5][q] + D[6] * k[6][q]);
    L->out[i] = x + theta * (dx + theta1 * (bspl + theta * (c3 + theta1 * c4)));
  }
}

void tf_lanes_dopri5_to_stepper(lanes *L, int l, tf_stepper *s) {
  const double t_old = L->t[l], h = L->hs[l];
  double *const *k = L->k;
  for (size_t i = 0; i < L->n; i++) {
    const size_t q = i * L->w + l;
    for (int j = 1; j < STAGES - 1; j++) s->k[j][i] = k[j][q];
    s->k[0][i] = k[STAGES - 1][q], s->k[STAGES - 1][i] = k[0][q];
    s->x_new[i] = L->x_new[q];
    if (s->dense_off) continue;
    const double x = L->x[q], dx = L->x_new[q] - x, bspl = h * k[0][q] - dx;
    s->cont[0][i] = x;
    s->cont[1][i] = dx;
    s->cont[2][i] = bspl;
    s->cont[3][i] = dx - h * k[6][q] - bspl;
    s->cont[4][i] = h * (D[0] * k[0][q] + D[2] * k[2][q] + D[3] * k[3][q] + D[4] * k[4][q] +
                         D[5] * k[5][q] + D[6] * k[6][q]);
  }
  s->dense_state = s->dense_off ? TF_DENSE_NONE : TF_DENSE_READY;
  s->t_prev = t_old, s->h_prev = h;
  s->t_last = L->last[l] ? L->t_limit[l] : t_old + h;
  s->model_code = 0;
}

const tf_lane_pair tf_lanes_dopri5 = {.type = "dopri5",
                                      .stages = STAGES,
                                      .fsal_stage = STAGES - 1,
                                      .attempt = step,
                                      .dense = dense_lane};

/* ---- the driver ------------------------------------------------------------------------- */

void tf_lanes_attempt(lanes *L) {
  L->evals = 0;
  L->pair->attempt(L);
  join_lane_codes(L);
  if (L->steppers) /* each lane's evaluations, counted as tf_rk_eval counts them */
    for (int l = 0; l < L->w; l++)
      if (L->slot[l] >= 0) L->steppers[l]->stats.rhs_evals += L->pair->stages - 1;
}

static void finish(lanes *L, int l, int status) {
  tf_flow_lane_member *m = &L->m[L->slot[l]];
  m->result.status = status;
  m->result.t_final = L->t[l];
  m->result.work.steps = L->steps[l];
  m->result.work.rejected = L->rejected[l];
  for (size_t i = 0; i < L->n; i++) m->x[i] = L->x[i * L->w + l];
  L->slot[l] = -1;
}

static void failed(lanes *L, int l) {
  finish(L, l, tf_kernel_member_failed(L->flow->kernel, L->code[l], L->t[l]));
}

/* When lane l's member takes its next sample (infinity: never), for plain_steps. */
static void next_sample_time(lanes *L, int l) {
  const tf_flow_lane_member *m = &L->m[L->slot[l]];
  const long next = L->next[l];
  L->t_sample[l] = m->sample && next < L->n_samples
                       ? tf_flow_sample_time(L->flow, next, L->n_samples)
                       : INFINITY;
}

/* Samples due in the step just taken, from t_old to t_new (run_dopri5's loop); false if the
 * run was told to stop at one. */
static bool take_samples(lanes *L, int l, double t_old, double h, double t_new) {
  tf_flow_lane_member *m = &L->m[L->slot[l]];
  const tf_flow *flow = L->flow;
  bool first = true;
  for (long *next = &L->next[l];
       m->sample && *next < L->n_samples && tf_flow_sample_time(flow, *next, L->n_samples) <= t_new;
       ++*next) {
    const double ts = tf_flow_sample_time(flow, *next, L->n_samples);
    if (ts == t_new)
      for (size_t i = 0; i < L->n; i++) L->out[i] = L->x_new[i * L->w + l];
    else
      L->pair->dense(L, l, ts, t_old, h, first), first = false;
    m->sample(m->sample_ctx, ts, L->out);
    if (tf_stop_point(L->stop)) return *next + 1 >= L->n_samples;
  }
  next_sample_time(L, l);
  return true;
}

void tf_lanes_move_on(lanes *L, int l, double h, double log_err) {
  L->t[l] = L->last[l] ? L->t_limit[l] : L->t[l] + h;
  for (size_t i = 0; i < L->n; i++) {
    const size_t q = i * L->w + l;
    L->x[q] = L->x_new[q];
    L->k[0][q] = L->k[L->pair->fsal_stage][q]; /* first same as last */
  }
  L->at_start[l] = true;
  const double log_prev = L->log_prev[l];
  if (!L->ode->fixed_step) {
    L->log_prev[l] = log_err > TF_RK_LOG_1E4 ? log_err : TF_RK_LOG_1E4; /* fmax: no NaN */
    /* the controller's proposal (tf_lanes_control_w), kept over a truncated last step's */
    if (!L->last[l] || L->h_next[l] > L->h[l]) L->h[l] = L->h_next[l];
  }
  if (L->pair->moved_on) L->pair->moved_on(L, l, h, log_prev);
}

void tf_lanes_hand_back(lanes *L, int l, tf_stepper *s,
                        void (*to_stepper)(lanes *, int, tf_stepper *), double *x, double log_err) {
  to_stepper(L, l, s);
  tf_lanes_move_on(L, l, L->hs[l], log_err);
  for (size_t i = 0; i < L->n; i++) x[i] = L->x[i * L->w + l];
  s->fsal_valid = true;
  s->h = L->h[l], s->log_err_prev = L->log_prev[l];
  s->stats.steps++;
}

void tf_lanes_take_over(lanes *L, int l, const tf_stepper *s, const double *x, double t,
                        double t_limit) {
  for (size_t i = 0; i < L->n; i++) {
    L->x[i * L->w + l] = x[i];
    L->k[0][i * L->w + l] = s->k[0][i];
  }
  L->t[l] = t, L->t_limit[l] = t_limit;
  L->h[l] = s->h, L->log_prev[l] = s->log_err_prev;
  L->hmin[l] = tf_rk_hmin_floor(s, t);
  L->code[l] = 0;
}

bool tf_lanes_tail_due(const lanes *L) {
  if (L->queue < L->count) return false;
  int busy = 0;
  for (int l = 0; l < L->w; l++) busy += L->slot[l] >= 0;
  return busy <= L->w / 4;
}

tf_ode_status tf_lanes_judge(lanes *L, int l, bool *accept, double *log_err) {
  const tf_ode_options *o = L->ode;
  const double h = L->hs[l], err = o->fixed_step ? 0.0 : L->err[l];
  *accept = false;
  if (L->code[l] < 0) return TF_ODE_MODEL_FAILED;
  const bool refused = L->code[l] > 0;
  L->code[l] = 0;
  const bool finite = isfinite(err) && L->finite[l]; /* tf_lanes_finite_w's */
  tf_counts *stats = L->steppers ? &L->steppers[l]->stats : &(tf_counts){0};
  if (refused || !finite) {
    if (o->fixed_step || !(h > L->hmin[l]))
      return refused ? TF_ODE_STEP_UNDERFLOW : TF_ODE_NONFINITE;
    L->h[l] = 0.25 * h;
    stats->rejected++, L->rejected[l]++;
    return TF_ODE_OK;
  }
  *log_err = o->fixed_step ? 0.0 : L->log_err[l]; /* tf_lanes_control_w's */
  if (err <= 1.0) {
    *accept = true;
    return TF_ODE_OK;
  }
  stats->rejected++, L->rejected[l]++;
  L->h[l] = L->h_next[l]; /* h / min(fac_hi, exp(expo1 log_err) / safety) */
  if (!(L->h[l] >= L->hmin[l])) return isnan(L->h[l]) ? TF_ODE_NONFINITE : TF_ODE_STEP_UNDERFLOW;
  return TF_ODE_OK;
}

/* The accepted step of lane l: samples, then the solution and the PI controller. */
static void accept(lanes *L, int l, double h, double log_err) {
  const double t_old = L->t[l], t_new = L->last[l] ? L->t_limit[l] : t_old + h;
  const bool go_on = take_samples(L, l, t_old, h, t_new);
  tf_lanes_move_on(L, l, h, log_err);
  if (!go_on) {
    L->stopped = true;
    finish(L, l, TF_MEMBER_PENDING);
  }
}

/* After an attempt: accept, reject or end lane l as tf_rk_step_with and run_dopri5 would. */
static void decide(lanes *L, int l) {
  bool accepted;
  double log_err;
  const tf_ode_status st = tf_lanes_judge(L, l, &accepted, &log_err);
  if (st == TF_ODE_MODEL_FAILED) return failed(L, l);
  if (st != TF_ODE_OK)
    return finish(L, l, st == TF_ODE_NONFINITE ? TF_MEMBER_NONFINITE : TF_MEMBER_STEP_UNDERFLOW);
  if (accepted) accept(L, l, L->hs[l], log_err);
}

/* The next member of the queue into lane l, started as run_dopri5 starts one (the starting
 * step is ode.c's, on the scalar stepper); false when the queue is empty. */
static bool load(lanes *L, int l) {
  tf_flow *flow = L->flow;
  tf_stepper *s = flow->stepper;
  while (L->queue < L->count) {
    tf_flow_lane_member *m = &L->m[L->queue];
    m->result = (tf_flow_result){.status = TF_MEMBER_OK, .t_final = flow->t0};
    L->slot[l] = (long)L->queue++;
    if (L->stopped) {
      m->result.status = TF_MEMBER_PENDING;
      continue;
    }
    tf_flow_initial_state(flow, m->member, m->x);
    if (!tf_state_finite(m->x, L->n)) {
      m->result.status = TF_MEMBER_NONFINITE;
      continue;
    }
    if (L->computing) L->computing(m->member);
    tf_stepper_setup(s, tf_flow_drift, flow, &flow->ode);
    double t0 = flow->t0;
    tf_crash_point_publish(&t0, m->x, (int)L->n); /* the starting step calls the model */
    tf_stepper_reset(s, flow->t0, m->x);
    tf_crash_point_publish(NULL, NULL, 0);
    L->next[l] = 0;
    if (m->sample && L->n_samples > 0) {
      m->sample(m->sample_ctx, flow->t0, m->x), L->next[l] = 1;
      if (tf_stop_point(L->stop)) {
        L->stopped = true;
        if (L->n_samples > 1) m->result.status = TF_MEMBER_PENDING;
        continue;
      }
    }
    for (size_t i = 0; i < L->n; i++) {
      L->x[i * L->w + l] = m->x[i];
      L->k[0][i * L->w + l] = s->k[0][i];
    }
    L->t[l] = flow->t0, L->t_limit[l] = flow->t_end;
    L->h[l] = s->h, L->log_prev[l] = s->log_err_prev;
    L->code[l] = s->model_code;
    L->steps[l] = L->rejected[l] = 0;
    L->at_start[l] = true;
    next_sample_time(L, l);
    if (L->pair->loaded) L->pair->loaded(L, l);
    return true;
  }
  L->slot[l] = -1;
  return false;
}

/* The top of run_dopri5's loop and of tf_rk_step_with for lane l; false if it ended there. */
static bool start_step(lanes *L, int l) {
  const tf_flow *flow = L->flow;
  if (!(L->t[l] < flow->t_end)) return finish(L, l, TF_MEMBER_OK), false;
  if (L->steps[l] >= flow->ode.max_steps) return finish(L, l, TF_MEMBER_MAX_STEPS), false;
  if (tf_stop_poll(L->stop)) {
    L->stopped = true;
    return finish(L, l, TF_MEMBER_PENDING), false;
  }
  L->steps[l]++;
  if (L->code[l]) return failed(L, l), false;
  L->hmin[l] = tf_rk_hmin_floor(flow->stepper, L->t[l]);
  L->at_start[l] = false;
  return true;
}

static inline __attribute__((always_inline)) void plain_moves_with(lanes *L, const long *plain,
                                                                   double hmin, const int vw) {
  const int w = L->w;
  double *restrict x = L->x, *restrict k0 = L->k[0];
  const double *restrict x_new = L->x_new, *restrict k_last = L->k[L->pair->fsal_stage];
  /* a vector of lanes at a time (flow_lanes.h's); take: all ones where plain */
  TF_LANES_VECTORS(vw, {
    const vd one = (vd){0.0} + 1.0, log_1e4 = one * TF_RK_LOG_1E4, tiny = one * 1e-14;
    vi take[TF_LANES_MAX / VW];
    for (int l = 0; l < w; l += VW) {
      memcpy(&take[l / VW], plain + l, sizeof(vi));
      take[l / VW] = -take[l / VW];
    }
    for (size_t i = 0; i < L->n; i++)
      for (int l = 0; l < w; l += VW) {
        const size_t q = i * (size_t)w + l;
        vd a, b;
        LOADV(a, x_new + q), LOADV(b, x + q);
        a = SELECTV(take[l / VW], a, b), STOREV(x + q, a);
        LOADV(a, k_last + q), LOADV(b, k0 + q);
        a = SELECTV(take[l / VW], a, b), STOREV(k0 + q, a);
      }
    for (int l = 0; l < w; l += VW) {
      const vi m = take[l / VW];
      vd t, hs, le, h_next, h, log_prev, floor;
      vi steps;
      LOADV(t, L->t + l), LOADV(hs, L->hs + l), LOADV(le, L->log_err + l);
      LOADV(h_next, L->h_next + l), LOADV(h, L->h + l), LOADV(log_prev, L->log_prev + l);
      LOADV(floor, L->hmin + l), LOADV(steps, L->steps + l);
      const vd t1 = t + hs, at = FABSV(t1);
      const vd floor1 = hmin > 0 ? one * hmin : tiny * SELECTV(at > one, at, one);
      t = SELECTV(m, t1, t), STOREV(L->t + l, t);
      log_prev = SELECTV(m, SELECTV(le > log_1e4, le, log_1e4), log_prev);
      STOREV(L->log_prev + l, log_prev);
      h = SELECTV(m, h_next, h), STOREV(L->h + l, h);
      floor = SELECTV(m, floor1, floor), STOREV(L->hmin + l, floor);
      steps -= m, STOREV(L->steps + l, steps);
    }
  });
}

TF_LANES_TARGETS static void plain_moves_narrow(lanes *L, const long *plain, double hmin) {
  plain_moves_with(L, plain, hmin, 4);
}

TF_LANES_WIDE static void plain_moves_wide(lanes *L, const long *plain, double hmin) {
  plain_moves_with(L, plain, hmin, 8);
}

void tf_lanes_plain_moves(lanes *L, const long *plain) {
  (L->wide ? plain_moves_wide : plain_moves_narrow)(L, plain, L->ode->hmin);
}

/* The lanes whose attempt was accepted and whose member goes straight on to its next step
 * (plain[l]): no refusal, finite, err <= 1, not the last step, no sample due, steps left, no
 * stop, a pair without moved_on; their moves in one pass (tf_lanes_plain_moves).  The stop (a
 * signal or the time limit) is polled once for them all, as if at one instant: it ends members
 * at a step's start either way. */
static void plain_steps(lanes *L, long *plain) {
  const int w = L->w;
  const tf_ode_options *o = L->ode;
  long any = 0;
  if (!tf_lanes_plain_pair(L)) {
    for (int l = 0; l < w; l++) plain[l] = 0;
    return;
  }
  for (int l = 0; l < w; l++) {
    const double t_new = L->t[l] + L->hs[l];
    plain[l] = L->slot[l] >= 0 && L->code[l] == 0 && L->finite[l] && L->err[l] <= 1.0 &&
               !L->last[l] && L->t_sample[l] > t_new && L->steps[l] < o->max_steps;
    any |= plain[l];
  }
  if (!any) return;
  if (tf_stop_poll(L->stop)) { /* the lanes' own path stops them */
    for (int l = 0; l < w; l++) plain[l] = 0;
    return;
  }
  tf_lanes_plain_moves(L, plain);
}

/* Lane l holding a member in the middle of a step, or empty once the queue is. */
static void settle(lanes *L, int l) {
  for (;;) {
    if (L->slot[l] < 0 && !load(L, l)) return;
    if (!L->at_start[l] || start_step(L, l)) return;
  }
}

/* Every lane's step as tf_rk_step_with takes it (empty lanes: 0), without a branch per lane:
 * which lanes are busy or take their last step is each lane's own. */
bool tf_lanes_plan(lanes *L) {
  const double hmax = L->ode->hmax;
  long any = 0;
  for (int l = 0; l < L->w; l++) {
    const long busy = L->slot[l] >= 0;
    const double t = L->t[l], t_limit = L->t_limit[l], h0 = L->h[l];
    const double h = hmax > 0 && !(h0 <= hmax) ? hmax : h0; /* fmin (h0 NaN: hmax) */
    const bool last = t + h >= t_limit;
    L->last[l] = busy ? last : L->last[l];
    L->hs[l] = busy ? (last ? t_limit - t : h) : 0.0;
    any |= busy;
  }
  return any;
}

/* ---- setup ------------------------------------------------------------------------------ */

static bool has_avx512(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

int tf_lanes_auto_width(void) {
  return has_avx512() ? 8 : 4;
}

/* The lane pair of the flow's stepper type, NULL if it has none. */
const tf_lane_pair *tf_lane_pair_of(const tf_ode_options *ode) {
  static const tf_lane_pair *const pairs[] = {&tf_lanes_dopri5, &tf_lanes_dop853};
  const tf_stepper_type *type = tf_stepper_type_of(ode);
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
    if (type == tf_stepper_type_find(pairs[i]->type)) return pairs[i];
  return NULL;
}

/* The flow's lane pair: an explicit pair's, or a Rosenbrock type's for a field with an exact
 * Jacobian that does not depend on t (flow_lanes_rosenbrock.c evaluates neither df/dt nor
 * differences); NULL if none. */
static const tf_lane_pair *lane_pair(const tf_flow *flow) {
  const tf_stepper_type *type = tf_stepper_type_of(&flow->ode);
  if (!tf_rosenbrock_tableau(type)) return tf_lane_pair_of(&flow->ode);
  if (!tf_flow_has_jacobian(flow) || !flow->kernel->autonomous) return NULL;
  return type == tf_stepper_type_find(tf_lanes_rodas4.type) ? &tf_lanes_rodas4 : &tf_lanes_ros3p;
}

/* auto: an explicit pair takes two vectors' worth of lanes (each stage waits on the one before,
 * and a second independent vector per component hides part of that wait: on Lorenz, 16 lanes
 * cost 0.87 of 8 on AVX-512, the smoothed Jeffrey oscillator the same, docs/BENCHMARKS.md); a
 * Rosenbrock pair, whose lanes hold n x n matrices each, one vector's worth. */
int tf_flow_lanes(const tf_flow *flow) {
  if (flow->method != TF_METHOD_DOPRI5 || flow->poincare || flow->lanes == 1) return 1;
  const tf_lane_pair *pair = lane_pair(flow);
  if (!pair) return 1;
  return flow->lanes ? flow->lanes : (pair->linear ? 1 : 2) * tf_lanes_auto_width();
}

/* A linearly implicit pair's arrays (flow_lanes.h), one allocation behind L->jac. */
static bool alloc_linear(lanes *L) {
  if (!L->pair->linear) return true;
  const size_t n = L->n, w = (size_t)L->w;
  double *d = calloc(3 * n * n * w + w, sizeof *d);
  L->piv = calloc(n * w, sizeof *L->piv);
  L->rejected_before = calloc(w, sizeof *L->rejected_before);
  L->lin_current = calloc(w, sizeof *L->lin_current);
  if (!d || !L->piv || !L->rejected_before || !L->lin_current) return free(d), false;
  L->jac = d, L->lu = d + n * n * w, L->jac_new = d + 2 * n * n * w, L->h_acc = d + 3 * n * n * w;
  return true;
}

bool tf_lanes_alloc(lanes *L) {
  if (L->w != 4 && L->w != 8 && L->w != 16) { /* the attempts are compiled for these alone */
    fprintf(stderr, "twofold: internal error: %d lanes (the lanes engine runs 4, 8 or 16)\n", L->w);
    abort();
  }
  L->wide = L->w % 8 == 0 && has_avx512(); /* once, not at every attempt */
  const size_t n = L->n, w = (size_t)L->w;
  const int stages = L->pair->stages;
  double *d = calloc(((size_t)stages + 3) * n * w + 11 * w + 2 * n, sizeof *d);
  L->code = calloc((1 + TF_LANES_MAX_STAGES) * w, sizeof *L->code);
  L->slot = calloc(5 * w, sizeof *L->slot);
  L->at_start = calloc(2 * w, sizeof *L->at_start);
  if (!d || !L->code || !L->slot || !L->at_start || !alloc_linear(L)) return false;
  L->control = &tf_stepper_type_of(L->ode)->control;
  L->x = d, d += n * w;
  for (int j = 0; j < stages; j++) L->k[j] = d, d += n * w;
  L->stage = d, d += n * w;
  L->x_new = d, d += n * w;
  double **per_lane[] = {&L->t,    &L->t_limit, &L->h,       &L->hs,     &L->tc,      &L->log_prev,
                         &L->hmin, &L->err,     &L->log_err, &L->h_next, &L->t_sample};
  for (size_t i = 0; i < sizeof per_lane / sizeof *per_lane; i++) *per_lane[i] = d, d += w;
  L->gather = d, d += n;
  L->out = d;
  L->rc = L->code + w;
  L->steps = L->slot + w, L->next = L->slot + 2 * w, L->rejected = L->slot + 3 * w;
  L->finite = L->slot + 4 * w;
  L->last = L->at_start + w;
  return true;
}

void tf_lanes_free(lanes *L) {
  free(L->jac);
  free(L->piv);
  free(L->rejected_before);
  free(L->lin_current);
  free(L->x);
  free(L->code);
  free(L->slot);
  free(L->at_start);
}

/* Without memory for lanes, members run one by one: the same numbers. */
static void run_one_by_one(tf_flow *flow, tf_flow_lane_member *m, size_t count, long n_samples) {
  for (size_t i = 0; i < count; i++)
    m[i].result = tf_flow_run_member(flow, m[i].member, m[i].x, m[i].sample, m[i].sample_ctx,
                                     m[i].sample ? n_samples : 0);
}

void tf_flow_run_lanes(tf_flow *flow, tf_flow_lane_member *m, size_t count, long n_samples,
                       void (*computing)(uint64_t member)) {
  const tf_flow_ops *smooth = tf_model_smooth(flow->kernel);
  lanes L = {
      .flow = flow,
      .pair = lane_pair(flow),
      .ode = &flow->ode,
      .lane_rhs = smooth && !flow->smoothing_on ? smooth->rhs_lanes : NULL,
      .smooth_lanes = flow->smoothing_on && tf_smooth_has_lanes(flow->kernel, &flow->smoothing),
      .w = tf_flow_lanes(flow),
      .n = flow->kernel->dim,
      .m = m,
      .count = count,
      .n_samples = n_samples,
      .stop = flow->ode.stop,
      .computing = computing};
  if (L.w <= 1 || !tf_lanes_alloc(&L)) {
    tf_lanes_free(&L);
    run_one_by_one(flow, m, count, n_samples);
    return;
  }
  for (int l = 0; l < L.w; l++) L.slot[l] = -1, settle(&L, l);
  long plain[TF_LANES_MAX];
  while (tf_lanes_plan(&L)) {
    tf_lanes_attempt(&L);
    plain_steps(&L, plain);
    for (int l = 0; l < L.w; l++) {
      if (L.slot[l] < 0 || plain[l]) continue;
      decide(&L, l);
      settle(&L, l);
    }
  }
  tf_lanes_free(&L);
}
