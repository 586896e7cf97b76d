/* bouncing_ball.c — a ball on a harmonically vibrating table, the classic impact oscillator.
 *
 * The table's height is s(t) = A sin(omega t); the ball flies under gravity, y'' = -g, and hits
 * the table with Newton's restitution, y'+ - s' = -r (y'- - s').  Time is a state component
 * (tau, tau' = 1) so that the impact surface h = y - A sin(omega tau) and the reset are functions
 * of the state alone.  A ball resting on the table moves with it while the table's
 * acceleration is above -g; the contact force per unit mass is g + s''.  With A = 0 the table
 * is fixed: flights of 2 v / g and chattering sequences accumulating at 2 v0 / (g (1 - r)). */
#include <math.h>

#include "twofold/model.h"

enum { G, R, A, OMEGA };

static const tf_param params[] = {
    {"g", 9.81, 0.0, INFINITY, "gravitational acceleration", false},
    {"r", 0.8, 0.0, 1.0, "coefficient of restitution", false},
    {"A", 0.0, 0.0, INFINITY, "table amplitude", false},
    {"omega", 1.0, 0.0, INFINITY, "table angular frequency", false},
};

static const char *const state_names[] = {"y", "v", "tau"};
static const double initial[] = {0.0, 1.0, 0.0};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t, (void)x;
  dx[0] = x[1];
  dx[1] = -p[G];
  dx[2] = 1.0;
  return 0;
}

static void jacobian(double t, const double *x, const double *p, double *j) {
  (void)t, (void)x, (void)p;
  for (int i = 0; i < 9; i++) j[i] = 0.0;
  j[1] = 1.0;
}

static double surface(int i, const double *x, const double *p, double *grad) {
  (void)i;
  const double ph = p[OMEGA] * x[2];
  if (grad) grad[0] = 1.0, grad[1] = 0.0, grad[2] = -p[A] * p[OMEGA] * cos(ph);
  return x[0] - p[A] * sin(ph);
}

static void reset(int i, const double *x, const double *p, double *xp, double *jac) {
  (void)i;
  const double ph = p[OMEGA] * x[2], w = p[OMEGA];
  const double table_v = p[A] * w * cos(ph);
  xp[0] = x[0];
  xp[1] = table_v - p[R] * (x[1] - table_v);
  xp[2] = x[2];
  if (jac) {
    for (int k = 0; k < 9; k++) jac[k] = 0.0;
    jac[0] = 1.0, jac[8] = 1.0;
    jac[4] = -p[R];
    jac[5] = -(1 + p[R]) * p[A] * w * w * sin(ph);
  }
}

static void stick(int i, const double *x, const double *p, double *xs) {
  (void)i;
  const double ph = p[OMEGA] * x[2];
  xs[0] = p[A] * sin(ph);
  xs[1] = p[A] * p[OMEGA] * cos(ph);
  xs[2] = x[2];
}

static int constrained_motion(int i, double t, const double *x, const double *p, double *dx,
                              double *force) {
  (void)i, (void)t;
  const double ph = p[OMEGA] * x[2], w2 = p[OMEGA] * p[OMEGA];
  dx[0] = x[1];
  dx[1] = -p[A] * w2 * sin(ph);
  dx[2] = 1.0;
  *force = p[G] - p[A] * w2 * sin(ph);
  return 0;
}

static const tf_impact_ops ops = {
    TF_OPS_SIZE(tf_impact_ops),
    .rhs = rhs,
    .jacobian = jacobian,
    .nimpacts = 1,
    .surface = surface,
    .reset = reset,
    .stick = stick,
    .constrained_motion = constrained_motion,
};

const tf_model_def tf_kernel_bouncing_ball = {
    TF_MODEL_HEAD,
    .name = "bouncing_ball",
    .doc = "ball on a harmonically vibrating table (impact oscillator; chattering, sticking)",
    .kind = TF_MODEL_IMPACT,
    .dim = 3,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .impact = &ops,
};
