/* ornstein_uhlenbeck.c — dx = theta (mu - x) dt + sigma dW.
 *
 * The simplest SDE with a closed-form law at every time (Gaussian, known mean and
 * variance), so ensemble statistics can be checked against exact values. */
#include "twofold/model.h"

#include <math.h>

enum { THETA, MU, SIGMA };

static const tf_param params[] = {
    {"theta", 1.0, 0.0, INFINITY, "mean-reversion rate", false},
    {"mu", 0.0, -INFINITY, INFINITY, "long-term mean", false},
    {"sigma", 1.0, 0.0, INFINITY, "noise amplitude", false},
};

static const double initial[] = {0.0};
static const char *const state_names[] = {"x"};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = p[THETA] * (p[MU] - x[0]);
  return 0;
}

static void jacobian(double t, const double *x, const double *p, double *j) {
  (void)t, (void)x;
  j[0] = -p[THETA];
}

static int diffusion(double t, const double *x, const double *p, double *g) {
  (void)t, (void)x;
  g[0] = p[SIGMA];
  return 0;
}

static int diffusion_dx(double t, const double *x, const double *p, double *dg) {
  (void)t, (void)x, (void)p;
  dg[0] = 0.0;
  return 0;
}

static const tf_flow_ops ops = {
    TF_OPS_SIZE(tf_flow_ops),     .rhs = rhs, .jacobian = jacobian, .diffusion = diffusion,
    .diffusion_dx = diffusion_dx,
};

const tf_model_def tf_kernel_ornstein_uhlenbeck = {
    TF_MODEL_HEAD,
    .name = "ornstein-uhlenbeck",
    .doc = "Ornstein-Uhlenbeck process (exact Gaussian law; a reference SDE)",
    .kind = TF_MODEL_FLOW,
    .dim = 1,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .flow = &ops,
};
