/* flow_lanes_dop853.c — DOP853's attempt in lanes (flow_lanes.h): dop853.c's stages, error
 * measure and sums, in its order, over the lanes in structure-of-arrays loops.  The continuous
 * extension (3 more evaluations, built only where a sample needs it) is the scalar stepper's own,
 * handed the lane's step: one copy of it, and the same numbers. */
#include <math.h>

#include "dop853_coeffs.h"
#include "flow_lanes.h"
#include "rk_driver.h"

/* out = x + h (sum_q a_sq k_jq) over row s's nonzero coefficients, as dop853.c's stage. */
static inline __attribute__((always_inline)) void stage_row(tf_lanes *L, const int w, const int vw,
                                                            const size_t n, int s,
                                                            double *restrict out) {
  double *k[9];
  for (int q = 0; q < DOP853_ROW[s].nk; q++) k[q] = L->k[DOP853_ROW[s].j[q]];
  tf_lanes_stage_sum(L, w, vw, n, DOP853_ROW[s].nk, DOP853_ROW[s].a, k, out);
}

/* dop853.c's attempt: twelve new stages, k[12] f at the 8th-order solution x_new. */
static inline __attribute__((always_inline)) void attempt_w(tf_lanes *L, const int w, const int vw,
                                                            const size_t n) {
#pragma GCC unroll 12
  for (int s = 1; s < 12; s++) {
    stage_row(L, w, vw, n, s, L->stage);
    tf_lanes_stage_times(L, w, DOP853_C[s]);
    tf_lanes_eval(L, L->stage, L->k[s]);
  }
  stage_row(L, w, vw, n, 12, L->x_new);
  tf_lanes_stage_times(L, w, 1.0); /* t + h: t + 1.0 h is t + h exactly */
  tf_lanes_eval(L, L->x_new, L->k[12]);
}

/* dop853.c's error_measure per lane: components summed in order, a vector of lanes
 * at a time. */
static inline __attribute__((always_inline)) void error_norms_w(tf_lanes *L, const int w,
                                                                const int vw, const size_t n) {
  const double atol = L->ode->atol, rtol = L->ode->rtol;
  const double *restrict x = L->x, *restrict xn = L->x_new;
  const double *restrict k[8];
  for (int q = 0; q < 8; q++) k[q] = L->k[DOP853_ERR_K[q]];
  double s5[TF_LANES_MAX], scaled[TF_LANES_MAX];
  TF_LANES_VECTORS(vw, {
    vd sum5[TF_LANES_MAX / VW] = {{0}}, sum3[TF_LANES_MAX / VW] = {{0}};
    for (size_t i = 0; i < n; i++)
      for (int l = 0; l < w; l += VW) {
        const size_t p = i * w + l;
        vd a0, a1, kq;
        LOADV(a0, x + p), LOADV(a1, xn + p);
        a0 = FABSV(a0), a1 = FABSV(a1);
        const vd scale = atol + rtol * SELECTV(a0 > a1, a0, a1);
        vd err5 = {0.0}, err3 = {0.0};
        for (int q = 0; q < 8; q++) {
          LOADV(kq, k[q] + p);
          err5 += DOP853_E5[q] * kq;
          err3 += DOP853_E3[q] * kq;
        }
        sum5[l / VW] += (err5 / scale) * (err5 / scale);
        sum3[l / VW] += (err3 / scale) * (err3 / scale);
      }
    for (int l = 0; l < w; l += VW) {
      const vd zero = {0.0}, one = zero + 1.0, denom = sum5[l / VW] + 0.01 * sum3[l / VW];
      const vd d = SELECTV(denom > zero, denom, one) * (double)n; /* NaN: 1, as !(denom > 0) */
      STOREV(s5 + l, sum5[l / VW]), STOREV(scaled + l, d);
    }
  });
  for (int l = 0; l < w; l++) /* vector roots: no errno here */
    L->err[l] = fabs(L->hs[l]) * s5[l] / sqrt(scaled[l]);
}

/* one attempt of every lane and its error norm: step */
TF_LANES_STEP

/* Lane l's step, just accepted (before the lane moves on), into the scalar stepper s as
 * tf_rk_step_with leaves it (after the first-same-as-last swap, the extension pending): its
 * dense output is then dop853.c's. */
static void to_stepper(tf_lanes *L, int l, tf_stepper *s) {
  const double t_old = L->t[l], h = L->hs[l];
  for (size_t i = 0; i < L->n; i++) {
    const size_t p = i * L->w + l;
    for (int j = 1; j < 12; j++) s->k[j][i] = L->k[j][p];
    s->k[0][i] = L->k[12][p], s->k[12][i] = L->k[0][p];
    s->cont[0][i] = L->x[p];
    s->x_new[i] = L->x_new[p];
  }
  s->t_prev = t_old, s->h_prev = h;
  s->t_last = L->last[l] ? L->t_limit[l] : t_old + h;
  s->dense_state = TF_DENSE_PENDING;
  s->model_code = 0;
}

static void dense(tf_lanes *L, int l, double ts, double t_old, double h, bool first) {
  (void)t_old, (void)h; /* the lane's own */
  tf_stepper *s = L->flow->stepper;
  if (first) to_stepper(L, l, s);
  if (L->computing) L->computing(L->m[L->slot[l]].member);
  tf_stepper_dense(s, ts, L->out);
  /* a refusal while building the extension fails the next step, as in the scalar run */
  if (s->model_code && !L->code[l]) L->code[l] = s->model_code;
}

const tf_lane_pair tf_lanes_dop853 = {.type = "dop853",
                                      .stages = 13,
                                      .fsal_stage = 12,
                                      .attempt = step,
                                      .dense = dense,
                                      .to_stepper = to_stepper};
