/* relay.c — a planar relay system with closed-form sliding and crossing:
 *     x' = y - a sign(x),  y' = 1 + b y     (Sigma = {x = 0}).
 * y evolves on its own, so on Sigma the Filippov multiplier is lambda = y / a: sliding
 * lasts while |y| < a and ends exactly when y = ±a, and every event time is known in closed
 * form (b = 0: roots of quadratics; b != 0: exponentials, which DOPRI5 does not integrate
 * exactly, so event errors follow the tolerance).  It is the reference problem for the
 * event machinery (and uses the convex-combination default: no stick()). */
#include <math.h>

#include "twofold/model.h"

enum { A, B, NPARAMS };

static const tf_param params[] = {
    {"a", 1.0, 1e-12, INFINITY, "relay amplitude", false},
    {"b", 0.0, -INFINITY, INFINITY, "growth rate of the driving variable y", false},
};

static const char *const state_names[] = {"x", "y"};
static const double initial[] = {0.3, 0.0};

static double switching(const double *x, const double *p, double *grad) {
  (void)p;
  if (grad) grad[0] = 1.0, grad[1] = 0.0;
  return x[0];
}

static int slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1] - side * p[A];
  dx[1] = 1.0 + p[B] * x[1];
  return 0;
}

/* slip for members side by side (twofold/model.h, slip_lanes): lane l's parameter j at
 * p[j * lanes + l] and its side after the parameters, slip's operations lane by lane. */
static void slip_lanes(int lanes, const double *t, const double *x, const double *p, double *dx,
                       int *code) {
  (void)t;
  const double *side = p + NPARAMS * lanes;
  for (int l = 0; l < lanes; l++) {
    dx[l] = x[lanes + l] - side[l] * p[A * lanes + l];
    dx[lanes + l] = 1.0 + p[B * lanes + l] * x[lanes + l];
    code[l] = 0;
  }
}

static void slip_jacobian(double t, const double *x, int side, const double *p, double *j) {
  (void)t, (void)x, (void)side;
  j[0] = 0, j[1] = 1;
  j[2] = 0, j[3] = p[B];
}

static const tf_filippov_ops ops = {
    TF_OPS_SIZE(tf_filippov_ops),   .switching = switching,   .slip = slip,
    .slip_jacobian = slip_jacobian, .slip_lanes = slip_lanes,
};

const tf_model_def tf_kernel_relay = {
    TF_MODEL_HEAD,
    .name = "relay",
    .doc = "planar relay x' = y - a sign(x), y' = 1 (exact event times; event tests)",
    .kind = TF_MODEL_FILIPPOV,
    .dim = 2,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .filippov = &ops,
    .autonomous = true,
};
