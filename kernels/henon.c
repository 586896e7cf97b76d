/* henon.c — the Hénon map (x, y) -> (1 - a x^2 + y, b x).
 *
 * The reference map for Lyapunov spectra: at a = 1.4, b = 0.3 the exponents are about
 * 0.4192 and -1.6232, and their sum is exactly ln b (the Jacobian determinant is -b). */
#include <math.h>

#include "twofold/model.h"

enum { A, B };

static const tf_param params[] = {
    {"a", 1.4, -INFINITY, INFINITY, "nonlinearity", false},
    {"b", 0.3, -INFINITY, INFINITY, "contraction (Jacobian determinant -b)", false},
};

static const char *const state_names[] = {"x", "y"};
static const double initial[] = {0.1, 0.1};

static int map(const double *x, const double *p, double *out) {
  out[0] = 1.0 - p[A] * x[0] * x[0] + x[1];
  out[1] = p[B] * x[0];
  return 0;
}

static void map_jacobian(const double *x, const double *p, double *j) {
  j[0] = -2.0 * p[A] * x[0], j[1] = 1.0;
  j[2] = p[B], j[3] = 0.0;
}

static const tf_map_ops ops = {
    TF_OPS_SIZE(tf_map_ops),
    .map = map,
    .map_jacobian = map_jacobian,
};

const tf_model_def tf_kernel_henon = {
    TF_MODEL_HEAD,
    .name = "henon",
    .doc = "Hénon map (x, y) -> (1 - a x^2 + y, b x)",
    .kind = TF_MODEL_MAP,
    .dim = 2,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .map = &ops,
};
