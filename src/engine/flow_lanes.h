/* flow_lanes.h — the lane driver's state, shared by the driver (flow_lanes.c) and the pairs it
 * runs (DOPRI5 in flow_lanes.c, DOP853 in flow_lanes_dop853.c, the Rosenbrock types in
 * flow_lanes_rosenbrock.c).  Internal to the
 * engine: the rest of the program sees tf_flow_run_lanes (flow.h).
 *
 * The driver is the pair's step control, queue and samples; a pair gives its attempt and error
 * norm for each width, its first-same-as-last stage and its dense output.  Every lane does the
 * operations of the scalar stepper for its member in the same order, so that a member's numbers
 * do not depend on what shares its lanes. */
#ifndef TF_FLOW_LANES_H
#define TF_FLOW_LANES_H

#include <float.h>
#include <math.h>
#include <string.h>

#include "flow.h"
#include "stepper_type.h"
#include "vmath.h"

/* Lanes' values as gcc's generic vectors, for the per-lane arithmetic of the lane loops (stage
 * sums, error norms, the impact screening): left to the compiler, their fully unrolled lane loops
 * came out mostly scalar.  Each element's operations are those of the scalar code in its order
 * (no multiply-add is contracted), so its bits, whatever the vector's width.  Four lanes fill a
 * 256-bit register, eight an AVX-512 one: code for eight-lane vectors is compiled for AVX-512
 * only (TF_LANES_WIDE), as gcc compares 512-bit vectors element by element without it. */
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4i __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));
typedef long long v8i __attribute__((vector_size(64)));

/* For vectors of either width: loads and stores without alignment; where m, a, else b; |a|
 * (macros: a function taking or returning these vectors would have an ABI that depends on the
 * target) */
#define LOADV(v, p) memcpy(&(v), (p), sizeof(v))
#define STOREV(p, v) memcpy((p), &(v), sizeof(v))
#define SELECTV(m, a, b) ((__typeof__(a))(((m) & (__typeof__(m))(a)) | (~(m) & (__typeof__(m))(b))))
#define FABSV(a) \
  ((__typeof__(a))((long long __attribute__((vector_size(sizeof(a)))))(a)&TF_NO_SIGN))
#define TF_NO_SIGN 0x7fffffffffffffffLL

/* The statements ... with vd, vi the vectors of VW lanes, VW the constant vw (8 or 4; the lane
 * loops step l by VW): only one branch is compiled. */
#define TF_LANES_VECTORS(vw, ...)             \
  do {                                        \
    if ((vw) == 8) {                          \
      typedef v8d vd;                         \
      typedef v8i vi __attribute__((unused)); \
      enum { VW = 8 };                        \
      __VA_ARGS__                             \
    } else {                                  \
      typedef v4d vd;                         \
      typedef v4i vi __attribute__((unused)); \
      enum { VW = 4 };                        \
      __VA_ARGS__                             \
    }                                         \
  } while (0)

/* the most stages an attempt of a lane pair fills (DOP853: 13, its extension is the scalar
 * stepper's) */
enum { TF_LANES_MAX_STAGES = 13 };

typedef struct tf_lanes tf_lanes;

typedef struct tf_lane_pair {
  const char *type;       /* the stepper type it runs (stepper_registry.c) */
  int stages, fsal_stage; /* k arrays an attempt fills; the first-same-as-last one */
  /* one attempt of every lane and its error norm into err, at the lanes' width */
  void (*attempt)(tf_lanes *L);
  /* the state at ts of lane l's step from t_old by h just attempted and accepted (before x and
   * k[0] move on) into L->out; first: the step's first sample */
  void (*dense)(tf_lanes *L, int l, double ts, double t_old, double h, bool first);
  /* optional: lane l's step just attempted and accepted (before the lane moves on) into the
   * scalar stepper s, as tf_rk_step_with leaves its own step (for a caller that goes on with
   * the scalar stepper: impact_lanes.c) */
  void (*to_stepper)(tf_lanes *L, int l, tf_stepper *s);
  /* A linearly implicit pair's (flow_lanes_rosenbrock.c): true for its arrays (tf_lanes: jac,
   * lu, ...); loaded: lane l just took a member; moved_on: lane l's step of h, accepted, has
   * just moved on (log_prev: the controller's memory before it). */
  bool linear;
  void (*loaded)(tf_lanes *L, int l);
  void (*moved_on)(tf_lanes *L, int l, double h, double log_prev);
} tf_lane_pair;

extern const tf_lane_pair tf_lanes_dopri5, tf_lanes_dop853, tf_lanes_rodas4, tf_lanes_ros3p;

/* DOPRI5's to_stepper: lane l's step, just accepted (before the lane moves on), into the scalar
 * stepper s as tf_rk_step_with leaves its own step (the extension built as dopri5.c builds it,
 * from the stages before the first-same-as-last swap; then the swap).  Not in the pair's table:
 * a caller that screens events on cubic Hermite samples (impact_lanes.c) takes only a pair
 * whose event loop samples those first (DOP853); the Filippov lanes (pws_lanes.c), which leave
 * every accepted step's events to the member's loop, take it. */
void tf_lanes_dopri5_to_stepper(tf_lanes *L, int l, tf_stepper *s);

struct tf_lanes {
  tf_flow *flow; /* a flow's members (flow_lanes.c), or NULL */
  const tf_lane_pair *pair;
  /* the options every lane's stepper was set up with (the flow's stepper, or each member's
   * holding a copy): so the step's floor the lanes take one by one from a stepper
   * (tf_rk_hmin_floor) and the one the plain moves take from ode->hmin are the same */
  const tf_ode_options *ode;
  const tf_rk_controller *control; /* the pair's step-size controller (set by tf_lanes_alloc) */
  /* w: each lane's member's own stepper, whose field and counts the lanes use (impact_lanes.c),
   * or NULL: the flow's field */
  tf_stepper **steppers;
  tf_lane_field_fn *lane_rhs; /* the model's lanes field, or NULL: its rhs lane by lane */
  bool smooth_lanes;          /* the flow's smoothed field in lanes (tf_smooth_rhs_lanes) */
  /* or a lanes field with each lane's parameters (params: parameter j of lane l at
   * [j * w + l]), for the lanes whose own_field is false (the others: their steppers') */
  tf_lane_params_field_fn *params_rhs;
  double *params;
  bool own_field[TF_LANES_MAX];
  int w;     /* 4, 8 or 16 (tf_lanes_alloc refuses any other) */
  bool wide; /* eight-lane vectors (TF_LANES_BY_WIDTH): w 8 or 16 on AVX-512 (tf_lanes_alloc) */
  size_t n;
  /* n * w each, structure of arrays: component i of lane l at [i * w + l] */
  double *x, *k[TF_LANES_MAX_STAGES], *stage, *x_new;
  /* w each: time, where the step must end at the latest, proposed step, step attempted, its
   * eval time, PI memory, the step's floor, error norm; the controller's log of the error norm
   * and the step it proposes next (for an accepted or a rejected attempt as the norm says),
   * taken for all lanes at once after each attempt (tf_lanes_control_w) */
  double *t, *t_limit, *h, *hs, *tc, *log_prev, *hmin, *err, *log_err, *h_next;
  double *t_sample;     /* w: the time of the lane's next sample, or infinity (flow_lanes.c) */
  double *gather, *out; /* n each, for the scalar field and samples */
  /* the model's refusal since the step began; each evaluation's of the attempt (w each, in
   * order: joined into code when the attempt is done, tf_lanes_attempt), and their count */
  int *code, *rc, evals;
  long *slot, *steps, *rejected, *next;
  long *finite; /* whether the attempt's x_new is finite in every component, per lane */
  bool *at_start, *last;
  /* a linearly implicit pair's (pair->linear), else NULL: df/dx at each lane's step start, the
   * factors of I / (h gamma) - df/dx and a new df/dx (n * n * w each, entry (i, j) of lane l at
   * [(i * n + j) * w + l]), the pivots (n * w); w each: whether jac is the step start's, the
   * step accepted before and the rejections counted when the step began */
  double *jac, *lu, *jac_new, *h_acc;
  long long *piv;
  long *rejected_before;
  bool *lin_current;
  tf_flow_lane_member *m;
  size_t count, queue;
  long n_samples;
  tf_stop_token *stop;
  bool stopped;
  void (*computing)(uint64_t member);
};

/* f at the lanes' stage times tc and states xs into dx (refusals joined into code; the
 * evaluations are counted in the lanes' steppers by tf_lanes_attempt, an attempt's worth at a
 * time). */
void tf_lanes_eval(tf_lanes *L, const double *xs, double *dx);

/* The driver's pieces, for the routes that run members in lanes (flow_lanes.c,
 * impact_lanes.c).  A route loads a lane (slot, t, t_limit, x, k[0], h, log_prev, hmin, code
 * 0), then repeats: plan (false: every lane empty), attempt (the stages, the error norms and
 * the controller's exp and log of every lane), and for each lane judge: a status
 * other than TF_ODE_OK ends the member's step as tf_rk_step_with ends it; accepted, move_on
 * takes the step (t, x, first-same-as-last, the PI controller), else the lane tries again. */
/* pair, w and n set; tf_lanes_free also after a failure; a width other than 4, 8 or 16 is an
 * internal error (the settings allow no other), reported and aborted on */
bool tf_lanes_alloc(tf_lanes *L);
void tf_lanes_free(tf_lanes *L);
bool tf_lanes_plan(tf_lanes *L);
void tf_lanes_attempt(tf_lanes *L);
tf_ode_status tf_lanes_judge(tf_lanes *L, int l, bool *accept, double *log_err);
void tf_lanes_move_on(tf_lanes *L, int l, double h, double log_err);
/* For the routes whose members keep their own event loop (impact_lanes.c, pws_lanes.c): an
 * accepted step of lane l handed to the member's own stepper s (to_stepper: the pair's), the
 * lane moved on and its new state copied to x (dim n). */
void tf_lanes_hand_back(tf_lanes *L, int l, tf_stepper *s,
                        void (*to_stepper)(tf_lanes *, int, tf_stepper *), double *x,
                        double log_err);
/* Lane l loaded from its member's stepper s at the top of a step at t (state x, dim n; the
 * step may not pass t_limit): the inverse of tf_lanes_hand_back. */
void tf_lanes_take_over(tf_lanes *L, int l, const tf_stepper *s, const double *x, double t,
                        double t_limit);
/* The moves of the lanes whose attempt was accepted and whose step is plain (plain[l] 1, else
 * 0): no refusal, finite, err <= 1, not the last step, a pair whose moves are the driver's
 * (tf_lanes_plain_pair).  For them, tf_lanes_judge, tf_lanes_move_on and the step's floor at the
 * new t (tf_rk_hmin_floor with L->ode->hmin) in one pass over the lanes, in vector registers: each
 * lane's operations and values are theirs (t + h, x_new and the first-same-as-last stage, the PI
 * memory fmax(log_err, log 1e-4), the proposed h, the floor 1e-14 max(1, |t|) or hmin; the
 * comparisons give fmax's values as t and log_err are not NaN here), and steps[l] counted. */
void tf_lanes_plain_moves(tf_lanes *L, const long *plain);
static inline bool tf_lanes_plain_pair(const tf_lanes *L) {
  return !L->ode->fixed_step && !L->pair->moved_on; /* else their moves are the lane's own */
}
/* Whether the queue is empty and at most a quarter of the lanes are busy: an attempt of all
 * lanes then costs more than the busy members' own steps, and they finish alone. */
bool tf_lanes_tail_due(const tf_lanes *L);
/* 8 on a CPU with AVX-512, else 4; the pair of a stepper type, NULL if it has none */
int tf_lanes_auto_width(void);
const tf_lane_pair *tf_lane_pair_of(const tf_ode_options *ode);

/* The lanes' stage times t + c h, four lanes at a time (as a plain loop gcc left it scalar where
 * the arrays might overlap: 16 multiplications and additions a stage). */
static inline __attribute__((always_inline)) void tf_lanes_stage_times(tf_lanes *L, const int w,
                                                                       double c) {
  int l = 0;
  for (; l + 4 <= w; l += 4) {
    v4d t, h;
    LOADV(t, L->t + l), LOADV(h, L->hs + l);
    const v4d tc = t + c * h;
    STOREV(L->tc + l, tc);
  }
  for (; l < w; l++) L->tc[l] = L->t[l] + c * L->hs[l];
}

/* Compiled for the vector units the CPU may have (the same operations on each: only their width
 * differs); TF_LANES_WIDE for AVX-512 alone, the code with eight-lane vectors, taken for the
 * widths 8 and 16 where L->wide (Lorenz and the valve scan in about 0.9 of the CPU time of
 * four-lane vectors on an Intel Xeon, docs/BENCHMARKS.md "eight-lane vectors"). */
#define TF_LANES_TARGETS __attribute__((target_clones("avx512f", "avx2", "default")))
#define TF_LANES_WIDE __attribute__((target("avx512f")))

/* The function `static void name params` (params: a parenthesised parameter list, args the
 * call passing it on) running the statements ..., compiled for each width of the lanes *lanes
 * (an expression of params): in them w is the width (4, 8 or 16) and vw the lanes of a vector,
 * both constants, so that the lane loops unroll.  Each width is compiled with four-lane vectors
 * in clones for the vector units the CPU may have (TF_LANES_TARGETS), and the widths 8 and 16
 * also with eight-lane vectors for AVX-512 alone (TF_LANES_WIDE), taken where lanes->wide: the
 * same operations on each element, so the same bits.  A macro, not an inline function the
 * variants call, for the statements to be compiled for their target alone: gcc 12 lowers an
 * always_inline function's vector comparisons and conversions for the file's baseline first
 * (element by element). */
#define TF_LANES_AT(name, targets, W, VW, params, ...) \
  targets static void name params {                    \
    enum { w = W, vw = VW };                           \
    __VA_ARGS__                                        \
  }
#define TF_LANES_BY_WIDTH(name, lanes, params, args, ...)                \
  TF_LANES_AT(name##_4, TF_LANES_TARGETS, 4, 4, params, __VA_ARGS__)     \
  TF_LANES_AT(name##_8, TF_LANES_TARGETS, 8, 4, params, __VA_ARGS__)     \
  TF_LANES_AT(name##_8_wide, TF_LANES_WIDE, 8, 8, params, __VA_ARGS__)   \
  TF_LANES_AT(name##_16, TF_LANES_TARGETS, 16, 4, params, __VA_ARGS__)   \
  TF_LANES_AT(name##_16_wide, TF_LANES_WIDE, 16, 8, params, __VA_ARGS__) \
  static void name params {                                              \
    const tf_lanes *const lanes_ = (lanes);                              \
    if (lanes_->w == 4)                                                  \
      name##_4 args;                                                     \
    else if (lanes_->w == 8)                                             \
      (lanes_->wide ? name##_8_wide : name##_8) args;                    \
    else                                                                 \
      (lanes_->wide ? name##_16_wide : name##_16) args;                  \
  }

/* A stage's state out = x + h (sum_q a[q] k[q]) over nk stages, summed in their order, a vector
 * of vw lanes at a time: the pairs' stage rows (inlined where w, a and nk are constants: the sum
 * unrolls). */
static inline __attribute__((always_inline)) void tf_lanes_stage_sum(const tf_lanes *L, const int w,
                                                                     const int vw, const size_t n,
                                                                     int nk, const double *a,
                                                                     double *const *k_of,
                                                                     double *restrict out) {
  const double *restrict x = L->x, *restrict hs = L->hs;
  const double *restrict k[TF_LANES_MAX_STAGES];
  for (int q = 0; q < nk; q++) k[q] = k_of[q];
  TF_LANES_VECTORS(vw, {
    for (size_t i = 0; i < n; i++)
      for (int l = 0; l < w; l += VW) {
        const size_t p = i * w + l;
        vd acc = {0.0}, kq, xp, h;
        for (int q = 0; q < nk; q++) {
          LOADV(kq, k[q] + p);
          acc += a[q] * kq;
        }
        LOADV(xp, x + p), LOADV(h, hs + l);
        const vd sum = xp + h * acc;
        STOREV(out + p, sum);
      }
  });
}

/* tf_rk_step_with's controller for the lanes just attempted (fast: vmath.h's exp and log, else
 * libm's, lane by lane for the busy lanes only): log_err, log max(err, 1e-16), and h_next, the
 * step proposed after an accepted attempt (err <= 1: h / clamp(exp(expo1 log_err - beta
 * log_prev) / safety)) or after a rejected one (h / min(fac_hi, exp(expo1 log_err) / safety)).
 * Its comparisons give fmin's and fmax's values: no operand is NaN but a NaN err's, whose lane
 * ends unaccepted (tf_lanes_judge).  In three passes: the logs, the exponents and the exps, then
 * the rest; libm's calls (exact) stay one per busy lane, but the arithmetic around them, its two
 * divisions above all, runs in vector registers (the same operations on each element: the same
 * bits), not between the calls.  Empty lanes get log 0 and exp 1 (values nobody reads). */
static inline __attribute__((always_inline)) void tf_lanes_control_with(tf_lanes *L, const int w,
                                                                        const bool fast) {
  const tf_rk_controller *c = L->control;
  const double expo1 = c->expo1, beta = c->beta, safety = c->safety;
  const double fac_lo = c->fac_lo, fac_hi = c->fac_hi;
  const double *restrict err = L->err, *restrict log_prev = L->log_prev, *restrict hs = L->hs;
  const long *restrict slot = L->slot;
  double *restrict log_err = L->log_err, *restrict h_next = L->h_next;
  double arg[TF_LANES_MAX], fac[TF_LANES_MAX];
  for (int l = 0; l < w; l++) {
    const double e = tf_vmath_pick(err[l] > 1e-16, err[l], 1e-16);
    log_err[l] = fast ? tf_vmath_log1(e) : slot[l] < 0 ? 0.0 : log(e);
  }
  for (int l = 0; l < w; l++) { /* both exponents, then one chosen: no branch */
    const double arg_accepted = expo1 * log_err[l] - beta * log_prev[l];
    arg[l] = tf_vmath_pick(err[l] <= 1.0, arg_accepted, expo1 * log_err[l]);
  }
  for (int l = 0; l < w; l++)
    fac[l] = fast ? tf_vmath_exp1(arg[l]) : slot[l] < 0 ? 1.0 : exp(arg[l]);
  for (int l = 0; l < w; l++) {
    const double f = fac[l] / safety;
    const double below_hi = tf_vmath_pick(f < fac_hi, f, fac_hi);
    const double clamped = tf_vmath_pick(below_hi > fac_lo, below_hi, fac_lo);
    h_next[l] = hs[l] / tf_vmath_pick(err[l] <= 1.0, clamped, below_hi);
  }
}

/* finite[l]: every component of lane l's x_new finite (|v| <= DBL_MAX: false for inf and NaN),
 * all lanes at once for tf_lanes_judge (n: L->n, a constant where the caller is compiled for
 * one dimension). */
static inline __attribute__((always_inline)) void tf_lanes_finite_w(tf_lanes *L, const int w,
                                                                    const size_t n) {
  long *restrict finite = L->finite;
  const double *restrict x_new = L->x_new;
  for (int l = 0; l < w; l++) finite[l] = 1;
  for (size_t i = 0; i < n; i++)
    for (int l = 0; l < w; l++) finite[l] &= fabs(x_new[i * w + l]) <= DBL_MAX;
}

static inline __attribute__((always_inline)) void tf_lanes_control_w(tf_lanes *L, const int w) {
  if (L->ode->fixed_step) return; /* no controller */
  if (L->ode->fast_control)
    tf_lanes_control_with(L, w, true);
  else
    tf_lanes_control_with(L, w, false);
}

/* A pair's attempt, step: its file's attempt_w(L, w, vw, n) and error_norms_w(L, w, vw, n) and
 * the controller, compiled for each width and vector (TF_LANES_BY_WIDTH) and for the dimensions
 * 1 to 6 as constants (the loops over the components unroll and their addresses are constants:
 * the same operations in the same order, so the same bits); other dimensions take L->n. */
#define TF_LANES_STEP_N(L, w, vw, n) \
  do {                               \
    attempt_w(L, w, vw, n);          \
    error_norms_w(L, w, vw, n);      \
    tf_lanes_finite_w(L, w, n);      \
    tf_lanes_control_w(L, w);        \
  } while (0)
#define TF_LANES_STEP_CASE(L, n)  \
  case n:                         \
    TF_LANES_STEP_N(L, w, vw, n); \
    break;
#define TF_LANES_STEP                                    \
  TF_LANES_BY_WIDTH(step, L, (tf_lanes *const L), (L), { \
    switch (L->n) {                                      \
      TF_LANES_STEP_CASE(L, 1)                           \
      TF_LANES_STEP_CASE(L, 2)                           \
      TF_LANES_STEP_CASE(L, 3)                           \
      TF_LANES_STEP_CASE(L, 4)                           \
      TF_LANES_STEP_CASE(L, 5)                           \
      TF_LANES_STEP_CASE(L, 6)                           \
      default:                                           \
        TF_LANES_STEP_N(L, w, vw, L->n);                 \
    }                                                    \
  })

#endif
