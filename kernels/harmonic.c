/* harmonic.c — the harmonic oscillator x'' = -omega^2 x as a first-order system.
 *
 * Exact solution x = x0 cos(omega t) + v0/omega sin(omega t): the reference for the order
 * and dense-output accuracy of the Runge–Kutta integrator. */
#include "twofold/model.h"

#include <math.h>

enum { OMEGA };

static const tf_param params[] = {
    {"omega", 1.0, 0.0, INFINITY, "angular frequency", false},
};

static const double initial[] = {1.0, 0.0};
static const char *const state_names[] = {"x", "v"};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1];
  dx[1] = -p[OMEGA] * p[OMEGA] * x[0];
  return 0;
}

static void jacobian(double t, const double *x, const double *p, double *j) {
  (void)t, (void)x;
  j[0] = 0.0, j[1] = 1.0;
  j[2] = -p[OMEGA] * p[OMEGA], j[3] = 0.0;
}

static const tf_flow_ops ops = {
    TF_OPS_SIZE(tf_flow_ops),
    .rhs = rhs,
    .jacobian = jacobian,
};

const tf_model_def tf_kernel_harmonic = {
    TF_MODEL_HEAD,
    .name = "harmonic",
    .doc = "harmonic oscillator (exact solution; integrator accuracy tests)",
    .kind = TF_MODEL_FLOW,
    .dim = 2,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .flow = &ops,
};
