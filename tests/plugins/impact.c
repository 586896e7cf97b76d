/* impact.c — the impact kind as a plugin, for the plugin tests: "floor-ball", a ball
 * bouncing on a fixed floor with Newton's restitution (y'' = -g above y = 0, v -> -r v at
 * an impact), resting on the floor once its impacts have accumulated: the built-in
 * bouncing_ball with a table that does not move, written as a user would. */
#include <math.h>

#include "twofold/model.h"

enum { G, R };

static const tf_param params[] = {
    {"g", 9.81, 0.0, INFINITY, "gravitational acceleration", false},
    {"r", 0.8, 0.0, 1.0, "coefficient of restitution", false},
};
static const char *const names[] = {"y", "v"};
static const double initial[] = {0.0, 1.0};

static int fall(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1], dx[1] = -p[G];
  return 0;
}

static void fall_jacobian(double t, const double *x, const double *p, double *j) {
  (void)t, (void)x, (void)p;
  j[0] = 0.0, j[1] = 1.0, j[2] = 0.0, j[3] = 0.0;
}

static double height(int i, const double *x, const double *p, double *grad) {
  (void)i, (void)p;
  if (grad) grad[0] = 1.0, grad[1] = 0.0;
  return x[0];
}

static void bounce(int i, const double *x, const double *p, double *xp, double *jac) {
  (void)i;
  xp[0] = x[0], xp[1] = -p[R] * x[1];
  if (jac) jac[0] = 1.0, jac[1] = 0.0, jac[2] = 0.0, jac[3] = -p[R];
}

static void land(int i, const double *x, const double *p, double *xs) {
  (void)i, (void)x, (void)p;
  xs[0] = 0.0, xs[1] = 0.0;
}

static double rest(int i, double t, const double *x, const double *p, double *dx) {
  (void)i, (void)t, (void)x;
  dx[0] = 0.0, dx[1] = 0.0;
  return p[G]; /* the floor carries the weight */
}

static const tf_impact_ops ops = {TF_OPS_SIZE(tf_impact_ops),
                                  .rhs = fall,
                                  .jacobian = fall_jacobian,
                                  .nimpacts = 1,
                                  .surface = height,
                                  .reset = bounce,
                                  .stick = land,
                                  .constrained = rest};

static const tf_model_def ball = {
    TF_MODEL_HEAD,
    .name = "floor-ball",
    .doc = "ball bouncing on a fixed floor, as a plugin (impacts, chattering, rest)",
    .kind = TF_MODEL_IMPACT,
    .dim = 2,
    .state_names = names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .impact = &ops,
};

TWOFOLD_MODELS(&ball);
