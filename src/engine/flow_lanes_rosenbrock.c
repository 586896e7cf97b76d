/* flow_lanes_rosenbrock.c — the Rosenbrock types (rosenbrock.c: RODAS4, ROS3P) as lane pairs
 * (flow_lanes.h): small stiff members, the smoothed wheel's, side by side.
 *
 * Each lane does rosenbrock.c's operations for its member in their order: df/dx at the step's
 * start (once a step, kept over its rejected attempts), the factors of I / (h gamma) - df/dx
 * with partial pivoting, the stages and their solves, the solution, the error estimate, f at the
 * new solution, the weighted norm; the driver's PI controller (tf_lanes_control_w) and then
 * Gustafsson's prediction (tf_ros_predict).  The factorisation and solves run over four lanes at
 * a time (flow_lanes.h's vectors), each lane with its own pivots chosen by selects, so a member's
 * numbers are those of integrator.lanes 1 bit for bit, whatever shares its lanes.
 *
 * Only for a field with an exact Jacobian that does not depend on t (flow_lanes.c, lane_pair):
 * df/dt is 0 without an evaluation, as the scalar stepper takes it for an autonomous field.  A
 * lane whose matrix is singular is refused (retried smaller, as the scalar attempt is) and calls
 * no field until its next attempt. */
#include <math.h>
#include <string.h>

#include "flow_lanes.h"
#include "rk_driver.h"
#include "rosenbrock.h"
#include "smooth.h"

typedef tf_lanes lanes;

/* k[0] f at the step's start, k[1 .. stages] the stages u_i, then f at the new solution and the
 * error estimate */
enum { FSAL = TF_ROS_MAX_STAGES + 1, ERR = TF_ROS_MAX_STAGES + 2, SLOTS = ERR + 1 };

static const v4d ZERO4 = {0.0, 0.0, 0.0, 0.0};

/* A lane not to be evaluated (its factorisation failed) is parked: its slot negated, so that
 * tf_lanes_eval neither calls nor counts it. */
static void park(lanes *L, int l) {
  L->slot[l] = -2 - L->slot[l];
}
/* The parked lanes back, their entries in the attempt's refusals (L->rc, joined when the attempt
 * is done) cleared: the lanes field went over them, but they were not evaluated. */
static void unpark_all(lanes *L, const bool *parked) {
  for (int l = 0; l < L->w; l++) {
    if (!parked[l]) continue;
    park(L, l);
    for (int e = 0; e < L->evals; e++) L->rc[e * L->w + l] = 0;
  }
}

/* df/dx at each lane's step start, for the lanes whose step has none yet. */
static void linearise(lanes *L, const size_t n) {
  const int w = L->w;
  const size_t nn = n * n;
  bool any = false;
  for (int l = 0; l < w; l++) any = any || (L->slot[l] >= 0 && !L->lin_current[l]);
  if (!any) return;
  tf_flow *flow = L->flow;
  const tf_flow_ops *smooth = tf_model_smooth(flow->kernel);
  if (flow->smoothing_on && L->smooth_lanes) {
    tf_smooth_jacobian_lanes(flow->kernel, flow->params, &flow->smoothing, w, L->t, L->x,
                             L->jac_new);
  } else if (!flow->smoothing_on && smooth && smooth->jacobian_lanes) {
    smooth->jacobian_lanes(w, L->t, L->x, flow->params, L->jac_new);
  } else {
    double xl[TF_MAX_DIM], j[TF_MAX_DIM * TF_MAX_DIM];
    for (int l = 0; l < w; l++) {
      if (L->slot[l] < 0 || L->lin_current[l]) continue;
      for (size_t i = 0; i < n; i++) xl[i] = L->x[i * (size_t)w + (size_t)l];
      tf_flow_jacobian(L->t[l], xl, flow, j);
      for (size_t i = 0; i < nn; i++) L->jac_new[i * (size_t)w + (size_t)l] = j[i];
    }
  }
  for (int l = 0; l < w; l++) {
    if (L->slot[l] < 0 || L->lin_current[l]) continue;
    for (size_t i = 0; i < nn; i++)
      L->jac[i * (size_t)w + (size_t)l] = L->jac_new[i * (size_t)w + (size_t)l];
    L->lin_current[l] = true;
  }
}

/* rosenbrock.c's factorise and lu_factor_n for four lanes from lane l0: I / (h gamma) - J with
 * partial pivoting, each lane its own pivots; the lanes whose pivot is zero or not finite are
 * cleared in ok. */
static inline __attribute__((always_inline)) void factor4(lanes *L, const int w, const size_t n,
                                                          int l0, double gamma, v4i *ok) {
  double *m = L->lu;
  const double *jac = L->jac;
  v4d hv, a, b;
  LOADV(hv, L->hs + l0);
  const v4d diag = 1.0 / (hv * gamma);
  for (size_t i = 0; i < n * n; i++) {
    LOADV(a, jac + i * w + l0);
    a = -a;
    STOREV(m + i * w + l0, a);
  }
  for (size_t i = 0; i < n; i++) {
    LOADV(a, m + (i * n + i) * w + l0);
    a += diag;
    STOREV(m + (i * n + i) * w + l0, a);
  }
  *ok = (v4i){-1, -1, -1, -1};
  for (size_t k = 0; k < n; k++) {
    v4i p = {(long long)k, (long long)k, (long long)k, (long long)k};
    v4d best;
    LOADV(best, m + (k * n + k) * w + l0);
    best = FABSV(best);
    for (size_t i = k + 1; i < n; i++) {
      LOADV(a, m + (i * n + k) * w + l0);
      a = FABSV(a);
      const v4i bigger = a > best;
      p = (bigger & (long long)i) | (~bigger & p);
      best = SELECTV(bigger, a, best);
    }
    memcpy(L->piv + k * w + l0, &p, sizeof p);
    for (size_t i = k + 1; i < n; i++) { /* the rows swapped whole, lane by lane */
      const v4i swap = p == (long long)i;
      for (size_t j = 0; j < n; j++) {
        LOADV(a, m + (k * n + j) * w + l0), LOADV(b, m + (i * n + j) * w + l0);
        const v4d rk = SELECTV(swap, b, a), ri = SELECTV(swap, a, b);
        STOREV(m + (k * n + j) * w + l0, rk), STOREV(m + (i * n + j) * w + l0, ri);
      }
    }
    v4d pivot;
    LOADV(pivot, m + (k * n + k) * w + l0);
    const v4d size = FABSV(pivot);
    *ok &= (size > 0.0) & (size <= __DBL_MAX__);
    const v4d inv = 1.0 / pivot;
    STOREV(m + (k * n + k) * w + l0, inv);
    for (size_t i = k + 1; i < n; i++) {
      LOADV(a, m + (i * n + k) * w + l0);
      const v4d li = a * inv;
      STOREV(m + (i * n + k) * w + l0, li);
      for (size_t j = k + 1; j < n; j++) {
        LOADV(a, m + (i * n + j) * w + l0), LOADV(b, m + (k * n + j) * w + l0);
        a -= li * b;
        STOREV(m + (i * n + j) * w + l0, a);
      }
    }
  }
}

/* rosenbrock.c's lu_solve_n for four lanes from lane l0, in place of b (n * w). */
static inline __attribute__((always_inline)) void solve4(const lanes *L, const int w,
                                                         const size_t n, int l0, double *b) {
  const double *lu = L->lu;
  v4d a, c, acc;
  for (size_t k = 0; k < n; k++) {
    v4i p;
    memcpy(&p, L->piv + k * w + l0, sizeof p);
    for (size_t i = k + 1; i < n; i++) {
      const v4i swap = p == (long long)i;
      LOADV(a, b + k * w + l0), LOADV(c, b + i * w + l0);
      const v4d bk = SELECTV(swap, c, a), bi = SELECTV(swap, a, c);
      STOREV(b + k * w + l0, bk), STOREV(b + i * w + l0, bi);
    }
  }
  for (size_t i = 1; i < n; i++) {
    LOADV(acc, b + i * w + l0);
    for (size_t j = 0; j < i; j++) {
      LOADV(a, lu + (i * n + j) * w + l0), LOADV(c, b + j * w + l0);
      acc -= a * c;
    }
    STOREV(b + i * w + l0, acc);
  }
  for (size_t i = n; i-- > 0;) {
    LOADV(acc, b + i * w + l0);
    for (size_t j = i + 1; j < n; j++) {
      LOADV(a, lu + (i * n + j) * w + l0), LOADV(c, b + j * w + l0);
      acc -= a * c;
    }
    LOADV(a, lu + (i * n + i) * w + l0);
    acc = acc * a;
    STOREV(b + i * w + l0, acc);
  }
}

/* Stage i's right-hand side into u (holding the stage's field): u + h gamma_i df/dt +
 * sum_j (c_ij / h) u_j, df/dt being 0; then the solve.  The quotients c_ij / h once for all
 * components (the same divisions). */
static inline __attribute__((always_inline)) void stage_solve(lanes *L, const int w, const size_t n,
                                                              const tf_ros_tableau *tb, int i) {
  double *u = L->k[1 + i];
  const double *ci = tb->c + i * tb->stages;
  v4d a, h, kj, c_h[TF_ROS_MAX_STAGES];
  for (int l0 = 0; l0 < w; l0 += 4) {
    LOADV(h, L->hs + l0);
    const v4d hg = h * tb->gam[i];
    for (int j = 0; j < i; j++) c_h[j] = ci[j] / h;
    for (size_t r = 0; r < n; r++) {
      LOADV(a, u + r * w + l0);
      v4d acc = a + hg * ZERO4;
      for (int j = 0; j < i; j++) {
        LOADV(kj, L->k[1 + j] + r * w + l0);
        acc += c_h[j] * kj;
      }
      STOREV(u + r * w + l0, acc);
    }
    solve4(L, w, n, l0, u);
  }
}

/* The point of stage i: x + sum_j a_ij u_j. */
static inline __attribute__((always_inline)) void stage_point(lanes *L, const int w, const size_t n,
                                                              const tf_ros_tableau *tb, int i) {
  const double *ai = tb->a + i * tb->stages;
  v4d acc, kj;
  for (size_t q = 0; q < n * w; q += 4) {
    LOADV(acc, L->x + q);
    for (int j = 0; j < i; j++) {
      LOADV(kj, L->k[1 + j] + q);
      acc += ai[j] * kj;
    }
    STOREV(L->stage + q, acc);
  }
}

/* The solution x + sum_j m_j u_j into x_new and the error estimate sum_j e_j u_j into k[ERR]. */
static inline __attribute__((always_inline)) void solution(lanes *L, const int w, const size_t n,
                                                           const tf_ros_tableau *tb) {
  v4d xn, e, kj;
  for (size_t q = 0; q < n * w; q += 4) {
    LOADV(xn, L->x + q);
    e = ZERO4;
    for (int j = 0; j < tb->stages; j++) {
      LOADV(kj, L->k[1 + j] + q);
      xn += tb->m[j] * kj, e += tb->e[j] * kj;
    }
    STOREV(L->x_new + q, xn), STOREV(L->k[ERR] + q, e);
  }
}

/* tf_rk_weighted_rms of the error estimate, per lane, components summed in order. */
static inline __attribute__((always_inline)) void error_norms(lanes *L, const int w,
                                                              const size_t n) {
  const double atol = L->ode->atol, rtol = L->ode->rtol;
  v4d sum[TF_LANES_MAX / 4] = {{0}};
  for (size_t i = 0; i < n; i++)
    for (int l = 0; l < w; l += 4) {
      const size_t q = i * w + l;
      v4d v, a0, a1;
      LOADV(v, L->k[ERR] + q), LOADV(a0, L->x + q), LOADV(a1, L->x_new + q);
      a0 = FABSV(a0), a1 = FABSV(a1);
      const v4d scale = atol + rtol * SELECTV(a0 > a1, a0, a1);
      sum[l / 4] += (v / scale) * (v / scale);
    }
  for (int l = 0; l < w; l++) L->err[l] = sqrt(sum[l / 4][l % 4] / (double)n);
}

/* One attempt of every lane (rosenbrock.c's attempt_with), its error norm, whether its solution
 * is finite and the controller's proposal (tf_lanes_control_w), as the explicit pairs' step_w. */
static inline __attribute__((always_inline)) void attempt_wn(lanes *L, const int w, const size_t n,
                                                             const tf_ros_tableau *tb) {
  bool parked[TF_LANES_MAX] = {false};
  linearise(L, n);
  for (int l0 = 0; l0 < w; l0 += 4) {
    v4i ok;
    factor4(L, w, n, l0, tb->gamma, &ok);
    for (int l = l0; l < l0 + 4; l++) {
      if (ok[l - l0] || L->slot[l] < 0) continue;
      if (!L->code[l]) L->code[l] = 1; /* retried with a smaller step */
      park(L, l), parked[l] = true;
    }
  }
  for (int i = 0; i < tb->stages; i++) {
    double *u = L->k[1 + i];
    if (i == 0) {
      memcpy(u, L->k[0], n * w * sizeof *u);
    } else if (tb->same_field[i]) {
      memcpy(u, L->x_new, n * w * sizeof *u);
    } else {
      stage_point(L, w, n, tb, i);
      tf_lanes_stage_times(L, w, tb->alpha[i]);
      tf_lanes_eval(L, L->stage, L->x_new);
      memcpy(u, L->x_new, n * w * sizeof *u);
    }
    stage_solve(L, w, n, tb, i);
  }
  solution(L, w, n, tb);
  tf_lanes_stage_times(L, w, 1.0); /* t + h: t + 1.0 h is t + h exactly */
  tf_lanes_eval(L, L->x_new, L->k[FSAL]);
  unpark_all(L, parked);
  error_norms(L, w, n);
  tf_lanes_finite_w(L, w, n);
  tf_lanes_control_w(L, w);
}

/* The attempt at each width (TF_LANES_BY_WIDTH: its arrays are not vectors of vw lanes, so only
 * the target differs), with n a constant for 2, 3 and 4 components (the smoothed wheel and most
 * small stiff members). */
TF_LANES_BY_WIDTH(ros, L, (lanes *const L), (L), {
  const tf_ros_tableau *tb = tf_rosenbrock_tableau(tf_stepper_type_of(L->ode));
  switch (L->n) {
    case 2:
      return attempt_wn(L, w, 2, tb);
    case 3:
      return attempt_wn(L, w, 3, tb);
    case 4:
      return attempt_wn(L, w, 4, tb);
    default:
      return attempt_wn(L, w, L->n, tb);
  }
})

/* RODAS4's continuous extension (rosenbrock.c's build_with and rodas4_dense_at) of lane l's step
 * at ts, into L->out. */
static void rodas4_dense(lanes *L, int l, double ts, double t_old, double h, bool first) {
  (void)first;
  const tf_ros_tableau *tb = tf_rosenbrock_tableau(tf_stepper_type_of(L->ode));
  const double th = h > 0 ? (ts - t_old) / h : 0.0;
  for (size_t r = 0; r < L->n; r++) {
    const size_t q = r * L->w + l;
    double d2 = 0.0, d3 = 0.0;
    for (int j = 0; j < tb->stages; j++)
      d2 += tb->dense[j] * L->k[1 + j][q], d3 += tb->dense[tb->stages + j] * L->k[1 + j][q];
    L->out[r] = tf_ros_dense_value(L->x[q], L->x_new[q] - L->x[q], d2, d3, th);
  }
}

/* ROS3P's cubic Hermite interpolant (tf_rk_hermite) of lane l's step at ts, into L->out. */
static void hermite_dense(lanes *L, int l, double ts, double t_old, double h, bool first) {
  (void)first;
  const double th = h > 0 ? (ts - t_old) / h : 0.0, th1 = 1.0 - th;
  for (size_t r = 0; r < L->n; r++) {
    const size_t q = r * L->w + l;
    L->out[r] = tf_rk_hermite_value(th, th1, h, L->x[q], L->x_new[q], L->k[0][q], L->k[FSAL][q]);
  }
}

/* A new member: no step before, df/dx to take. */
static void loaded(lanes *L, int l) {
  L->lin_current[l] = false;
  L->h_acc[l] = 0.0;
  L->rejected_before[l] = 0;
}

/* rosenbrock.c's step after the driver's: Gustafsson's prediction (with the controller's exp,
 * libm's or controller_math fast's, as the scalar stepper's), then a new step (a new df/dx). */
static void moved_on(lanes *L, int l, double h, double log_prev) {
  const double h_acc = L->h_acc[l];
  const bool rejected = L->rejected[l] > L->rejected_before[l];
  L->lin_current[l] = false;
  L->h_acc[l] = h;
  L->rejected_before[l] = L->rejected[l];
  if (L->ode->fixed_step || L->last[l]) return;
  L->h[l] = tf_ros_predict(L->control, L->ode->fast_control, L->h[l], h, L->log_prev[l], h_acc,
                           log_prev, rejected);
}

const tf_lane_pair tf_lanes_rodas4 = {.type = "rodas4",
                                      .stages = SLOTS,
                                      .fsal_stage = FSAL,
                                      .attempt = ros,
                                      .dense = rodas4_dense,
                                      .linear = true,
                                      .loaded = loaded,
                                      .moved_on = moved_on};

const tf_lane_pair tf_lanes_ros3p = {.type = "ros3p",
                                     .stages = SLOTS,
                                     .fsal_stage = FSAL,
                                     .attempt = ros,
                                     .dense = hermite_dense,
                                     .linear = true,
                                     .loaded = loaded,
                                     .moved_on = moved_on};
