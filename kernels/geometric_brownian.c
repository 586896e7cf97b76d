/* geometric_brownian.c — dx = a x dt + b x dW.
 *
 * Multiplicative noise with an exact pathwise solution x0 exp((a - b^2/2) t + b W_t): the
 * standard test of strong and weak convergence order of SDE schemes. */
#include "twofold/model.h"

#include <math.h>

enum { A, B };

static const tf_param params[] = {
    {"a", 1.0, -INFINITY, INFINITY, "drift rate", false},
    {"b", 0.5, 0.0, INFINITY, "volatility", false},
};

static const double initial[] = {1.0};
static const char *const state_names[] = {"x"};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = p[A] * x[0];
  return 0;
}

static void jacobian(double t, const double *x, const double *p, double *j) {
  (void)t, (void)x;
  j[0] = p[A];
}

static int diffusion(double t, const double *x, const double *p, double *g) {
  (void)t;
  g[0] = p[B] * x[0];
  return 0;
}

static int diffusion_dx(double t, const double *x, const double *p, double *dg) {
  (void)t, (void)x;
  dg[0] = p[B];
  return 0;
}

static const tf_flow_ops ops = {
    TF_OPS_SIZE(tf_flow_ops),     .rhs = rhs, .jacobian = jacobian, .diffusion = diffusion,
    .diffusion_dx = diffusion_dx,
};

const tf_model_def tf_kernel_geometric_brownian = {
    TF_MODEL_HEAD,
    .name = "geometric-brownian",
    .doc = "geometric Brownian motion (exact pathwise solution; SDE order tests)",
    .kind = TF_MODEL_FLOW,
    .dim = 1,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .flow = &ops,
};
