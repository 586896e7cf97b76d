/* pressure_valve.c — a pressure-relief valve against its seat (Hős & Champneys 2012), the
 * impact-oscillator benchmark of the MPGOS GPU ensemble solver (Hegedűs et al.).
 *
 * Dimensionless valve lift x, its velocity v and the chamber pressure p:
 *   x' = v,  v' = -kappa v - (x + delta) + p,  p' = beta (q - x sqrt(p)),
 * with the flow rate q as the usual bifurcation parameter.  The seat is the impact surface
 * x = 0; an impact reverses the velocity with restitution r.  A valve resting on its seat
 * (x = v = 0) stays there while the seat pushes, i.e. while the pressure is below the spring's
 * preload delta; the pressure meanwhile builds up at beta q.
 *
 * p >= 0: at p = 0 the field gives p' = beta q > 0, so the set p >= 0 is invariant and a
 * negative p can come only from rounding or a step's error.  sqrt(p) is continued by
 * sqrt(max(p, 0)) there (continuous, and exact on the invariant set) rather than producing NaN;
 * q must be positive (bounds below), which is what makes p = 0 repelling. */
#include <math.h>

#include "twofold/model.h"

enum { KAPPA, BETA, DELTA, R, Q };

static const tf_param params[] = {
    {"kappa", 1.25, 0.0, INFINITY, "damping", false},
    {"beta", 20.0, 1e-12, INFINITY, "compressibility of the chamber", false},
    {"delta", 10.0, 0.0, INFINITY, "spring preload", false},
    {"r", 0.8, 0.0, 1.0, "coefficient of restitution at the seat", false},
    {"q", 1.0, 1e-12, INFINITY, "flow rate into the chamber", false},
};

static const char *const state_names[] = {"x", "v", "p"};
static const double initial[] = {0.2, 0.0, 0.0};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1];
  dx[1] = -p[KAPPA] * x[1] - (x[0] + p[DELTA]) + x[2];
  dx[2] = p[BETA] * (p[Q] - x[0] * sqrt(x[2] > 0.0 ? x[2] : 0.0)); /* NaN: 0, as fmax */
  return 0;
}

/* One component of rhs, with rhs's arithmetic (the extrema of a Poincare section). */
static double rate(int i, double t, const double *x, const double *p) {
  double dx[3];
  if (i == 0) return x[1];
  rhs(t, x, p, dx);
  return dx[i];
}

/* The lanes' versions (twofold/model.h): rhs, rate and seat with their operations in their
 * order, lane by lane; state component c of lane l at x[c * lanes + l], parameter j at
 * p[j * lanes + l].  The loops vectorise: sqrt is exact in IEEE arithmetic, so the vector
 * square root gives the scalar's bits, and this file is compiled without errno for math
 * functions (CMakeLists.txt), without which gcc keeps a scalar sqrt for its errno path. */
#define LANES_TARGETS __attribute__((target_clones("avx512f", "avx2", "default")))

static inline __attribute__((always_inline)) void rhs_lanes_n(const int lanes,
                                                              const double *restrict x,
                                                              const double *restrict p,
                                                              double *restrict dx,
                                                              int *restrict code) {
  for (int l = 0; l < lanes; l++) {
    const double x0 = x[l], x1 = x[lanes + l], x2 = x[2 * lanes + l];
    const double x2_plus = x2 > 0.0 ? x2 : 0.0; /* NaN: 0, as fmax */
    dx[l] = x1;
    dx[lanes + l] = -p[KAPPA * lanes + l] * x1 - (x0 + p[DELTA * lanes + l]) + x2;
    dx[2 * lanes + l] = p[BETA * lanes + l] * (p[Q * lanes + l] - x0 * sqrt(x2_plus));
    code[l] = 0;
  }
}

/* the engine's widths as constants: the loop is then straight vector code */
LANES_TARGETS static void rhs_lanes(int lanes, const double *t, const double *restrict x,
                                    const double *restrict p, double *restrict dx,
                                    int *restrict code) {
  (void)t;
  if (lanes == 16)
    rhs_lanes_n(16, x, p, dx, code);
  else if (lanes == 8)
    rhs_lanes_n(8, x, p, dx, code);
  else
    rhs_lanes_n(lanes, x, p, dx, code);
}

LANES_TARGETS static void rate_lanes(int i, int lanes, const double *t, const double *restrict x,
                                     const double *p, double *restrict out) {
  double dx[3 * TF_LANES_MAX];
  int code[TF_LANES_MAX];
  if (i == 0) {
    for (int l = 0; l < lanes; l++) out[l] = x[lanes + l];
    return;
  }
  rhs_lanes(lanes, t, x, p, dx, code);
  for (int l = 0; l < lanes; l++) out[l] = dx[i * lanes + l];
}

LANES_TARGETS static void seat_lanes(int i, int lanes, const double *restrict x, const double *p,
                                     double *restrict h) {
  (void)i, (void)p;
  for (int l = 0; l < lanes; l++) h[l] = x[l];
}

static double seat(int i, const double *x, const double *p, double *grad) {
  (void)i, (void)p;
  if (grad) grad[0] = 1.0, grad[1] = 0.0, grad[2] = 0.0;
  return x[0];
}

static void reset(int i, const double *x, const double *p, double *xp, double *jac) {
  (void)i;
  xp[0] = x[0], xp[1] = -p[R] * x[1], xp[2] = x[2];
  if (jac) {
    for (int k = 0; k < 9; k++) jac[k] = 0.0;
    jac[0] = 1.0, jac[4] = -p[R], jac[8] = 1.0;
  }
}

static void stick(int i, const double *x, const double *p, double *xs) {
  (void)i, (void)p;
  xs[0] = 0.0, xs[1] = 0.0, xs[2] = x[2];
}

static int on_seat(int i, double t, const double *x, const double *p, double *dx, double *force) {
  (void)i, (void)t;
  dx[0] = 0.0, dx[1] = 0.0, dx[2] = p[BETA] * p[Q];
  *force = p[DELTA] - x[2]; /* the seat's force: the preload not yet balanced by the pressure */
  return 0;
}

/* the seat is x itself, and x's rate is v itself (rhs, rate) */
static const int seat_component[] = {0}, rate_component[] = {1, -1, -1};

static const tf_impact_ops ops = {
    TF_OPS_SIZE(tf_impact_ops),
    .rhs = rhs,
    .nimpacts = 1,
    .surface = seat,
    .reset = reset,
    .stick = stick,
    .constrained_motion = on_seat,
    .rate = rate,
    .rhs_lanes = rhs_lanes,
    .surface_lanes = seat_lanes,
    .rate_lanes = rate_lanes,
    .surface_component = seat_component,
    .rate_component = rate_component,
};

const tf_model_def tf_kernel_pressure_valve = {
    TF_MODEL_HEAD,
    .name = "pressure_valve",
    .doc = "pressure-relief valve with impacts on its seat (Hos & Champneys; MPGOS benchmark)",
    .kind = TF_MODEL_IMPACT,
    .dim = 3,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .impact = &ops,
};
