/* belt.c — an out-of-tree Filippov model for the plugin tests: a mass on a spring, with
 * viscous damping, carried by a belt moving at vb under Coulomb friction (unit mass):
 *     x' = v,  v' = -k x - c v - mu sign(v - vb),   Sigma = {v = vb}.
 * On the belt the mass sticks while |k x + c vb| <= mu and leaves at x = (mu - c vb)/k
 * tangentially; below belt speed it then oscillates about x = mu/k with decaying amplitude
 * and (for c > 0 and the tests' parameters) never catches up with the belt again.  Every
 * phase is solvable in closed form, which is what the tests compare against.  Built both as
 * a library (cc -shared -fPIC -I include) and as model.source. */
#include <math.h>

#include "twofold/model.h"

enum { K, C, MU, VB };

static const tf_param params[] = {
    {"k", 1.0, 0.0, INFINITY, "spring stiffness", false},
    {"c", 0.1, 0.0, INFINITY, "viscous damping", false},
    {"mu", 1.0, 0.0, INFINITY, "Coulomb friction force", false},
    {"vb", 0.5, -INFINITY, INFINITY, "belt speed", false},
};
static const char *const state_names[] = {"x", "v"};
static const double initial[] = {0.2, 0.5};
static const char *const output_names[] = {"energy"};

static double switching(const double *x, const double *p, double *grad) {
  if (grad) grad[0] = 0.0, grad[1] = 1.0;
  return x[1] - p[VB];
}

static int slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1];
  dx[1] = -p[K] * x[0] - p[C] * x[1] - p[MU] * side;
  return 0;
}

static void slip_jacobian(double t, const double *x, int side, const double *p, double *j) {
  (void)t, (void)x, (void)side;
  j[0] = 0, j[1] = 1;
  j[2] = -p[K], j[3] = -p[C];
}

static void energy(const double *x, const double *p, double *out) {
  out[0] = 0.5 * x[1] * x[1] + 0.5 * p[K] * x[0] * x[0];
}

static const tf_filippov_ops ops = {
    TF_OPS_SIZE(tf_filippov_ops),
    .switching = switching,
    .slip = slip,
    .slip_jacobian = slip_jacobian,
};

static const tf_model_def belt = {
    TF_MODEL_HEAD,
    .name = "belt-friction",
    .doc = "spring-mass on a belt with Coulomb friction and viscous damping",
    .kind = TF_MODEL_FILIPPOV,
    .dim = 2,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .noutputs = 1,
    .output_names = output_names,
    .outputs = energy,
    .filippov = &ops,
};

TWOFOLD_MODELS(&belt);
