/* disk_spring.c — a disk on a rough floor, its centre tied to a wall by a spring
 * (Antali 2017, Example 2.7, eqs 2.11-2.13): a mechanical Filippov system with exact answers.
 *
 * State x = (w, v, u): centre position, centre velocity, contact-point velocity;
 * Sigma = {u = 0} (rolling).  Slip fields: w' = v, v' = -k/m w - mu g sign(u),
 * u' = -k/m w - 3 mu g sign(u).  Rolling (sliding on Sigma) happens iff |w| < 3 mu g m / k,
 * and the sliding field is the rolling dynamics v' = -2/3 k/m w. */
#include <math.h>

#include "twofold/model.h"

enum { M, K, MU, G };

static const tf_param params[] = {
    {"m", 1.0, 1e-12, INFINITY, "mass of the disk", false},
    {"k", 1.0, 0.0, INFINITY, "spring stiffness", false},
    {"mu", 0.3, 0.0, INFINITY, "friction coefficient (static = dynamic)", false},
    {"g", 9.81, 0.0, INFINITY, "gravitational acceleration", false},
};

static const char *const state_names[] = {"w", "v", "u"};
static const double initial[] = {0.0, 0.0, 1.0};

static double switching(const double *x, const double *p, double *grad) {
  (void)p;
  if (grad) grad[0] = 0.0, grad[1] = 0.0, grad[2] = 1.0;
  return x[2];
}

static int slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t;
  const double spring = -p[K] / p[M] * x[0], friction = p[MU] * p[G] * side;
  dx[0] = x[1];
  dx[1] = spring - friction;
  dx[2] = spring - 3 * friction;
  return 0;
}

static const tf_filippov_ops ops = {
    TF_OPS_SIZE(tf_filippov_ops),
    .switching = switching,
    .slip = slip,
};

const tf_model_def tf_kernel_disk_spring = {
    TF_MODEL_HEAD,
    .name = "disk-spring",
    .doc = "disk rolling/slipping on a floor, tied by a spring (Antali 2017, Example 2.7)",
    .kind = TF_MODEL_FILIPPOV,
    .dim = 3,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .filippov = &ops,
};
