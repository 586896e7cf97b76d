/* logistic.c — the logistic map x -> mu x (1 - x).
 *
 * Its Lyapunov exponent over mu traces the familiar bifurcation structure (chaotic bands
 * with negative windows).  Avoid mu = 4 as a reference: double-precision orbits collapse
 * onto 0 there within a few dozen steps. */
#include <math.h>

#include "twofold/model.h"

enum { MU };

static const tf_param params[] = {
    {"mu", 3.7, 0.0, 4.0, "growth parameter", false},
};

static const char *const state_names[] = {"x"};
static const double initial[] = {0.3};

static int map(const double *x, const double *p, double *out) {
  out[0] = p[MU] * x[0] * (1.0 - x[0]);
  return 0;
}

static void map_jacobian(const double *x, const double *p, double *j) {
  j[0] = p[MU] * (1.0 - 2.0 * x[0]);
}

static const tf_map_ops ops = {
    TF_OPS_SIZE(tf_map_ops),
    .map = map,
    .map_jacobian = map_jacobian,
};

const tf_model_def tf_kernel_logistic = {
    TF_MODEL_HEAD,
    .name = "logistic",
    .doc = "logistic map x -> mu x (1 - x)",
    .kind = TF_MODEL_MAP,
    .dim = 1,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .map = &ops,
};
