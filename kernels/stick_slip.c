/* stick_slip.c — a harmonically forced oscillator on a moving belt with Coulomb friction:
 *     x' = v,  v' = -x - 2 zeta v - mu sign(v - vb) + a cos(theta),  theta' = omega.
 * Sigma = {v = vb}: the mass sticks to the belt while the spring, damping and forcing stay
 * within the friction bound.  The phase theta makes it autonomous.  With eps > 0 sign() is
 * replaced by tanh((v - vb) / eps), a smooth (stiff) flow whose Lyapunov exponents approach
 * the Filippov system's as eps -> 0 — the reference for saltation matrices. */
#include <math.h>

#include "twofold/model.h"

enum { ZETA, MU, VB, AMP, OMEGA, EPS };

static const tf_param params[] = {
    {"zeta", 0.05, 0.0, INFINITY, "damping ratio", false},
    {"mu", 0.6, 0.0, INFINITY, "friction force bound", false},
    {"vb", 0.5, -INFINITY, INFINITY, "belt speed", false},
    {"a", 2.0, 0.0, INFINITY, "forcing amplitude", false},
    {"omega", 1.25, 1e-12, INFINITY, "forcing frequency", false},
    {"eps", 0.0, 0.0, INFINITY, "smoothing of sign(); 0 = the Filippov system", false},
};

static const char *const state_names[] = {"x", "v", "theta"};
static const double initial[] = {0.2, 0.0, 0.0};

static double spring_and_forcing(const double *x, const double *p) {
  return -x[0] - 2 * p[ZETA] * x[1] + p[AMP] * cos(x[2]);
}

static double switching(const double *x, const double *p, double *grad) {
  if (grad) grad[0] = 0.0, grad[1] = 1.0, grad[2] = 0.0;
  return x[1] - p[VB];
}

static int slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1];
  dx[1] = spring_and_forcing(x, p) - p[MU] * side;
  dx[2] = p[OMEGA];
  return 0;
}

/* Exact tangent dynamics in slip: the friction force is constant on each side. */
static void slip_jacobian(double t, const double *x, int side, const double *p, double *j) {
  (void)t, (void)side;
  j[0] = 0, j[1] = 1, j[2] = 0;
  j[3] = -1, j[4] = -2 * p[ZETA], j[5] = -p[AMP] * sin(x[2]);
  j[6] = 0, j[7] = 0, j[8] = 0;
}

/* The smoothed flow (used when eps > 0 through the flow jobs). */
static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  const double s = p[EPS] > 0 ? tanh((x[1] - p[VB]) / p[EPS]) : (x[1] > p[VB]) - (x[1] < p[VB]);
  dx[0] = x[1];
  dx[1] = spring_and_forcing(x, p) - p[MU] * s;
  dx[2] = p[OMEGA];
  return 0;
}

static void jacobian(double t, const double *x, const double *p, double *j) {
  (void)t;
  const double z = p[EPS] > 0 ? (x[1] - p[VB]) / p[EPS] : 0.0;
  const double ds = p[EPS] > 0 ? 1.0 / (p[EPS] * cosh(z) * cosh(z)) : 0.0;
  j[0] = 0, j[1] = 1, j[2] = 0;
  j[3] = -1, j[4] = -2 * p[ZETA] - p[MU] * ds, j[5] = -p[AMP] * sin(x[2]);
  j[6] = 0, j[7] = 0, j[8] = 0;
}

static bool smoothed(const double *p) {
  return p[EPS] > 0;
}

static const tf_flow_ops smooth = {
    TF_OPS_SIZE(tf_flow_ops),
    .rhs = rhs,
    .jacobian = jacobian,
};

static const tf_filippov_ops ops = {
    TF_OPS_SIZE(tf_filippov_ops),   .switching = switching, .slip = slip,
    .slip_jacobian = slip_jacobian, .smoothed = smoothed,   .smooth = &smooth,
};

const tf_model_def tf_kernel_stick_slip = {
    TF_MODEL_HEAD,
    .name = "stick-slip",
    .doc = "forced oscillator on a moving belt with Coulomb friction (eps > 0: tanh-smoothed)",
    .kind = TF_MODEL_FILIPPOV,
    .dim = 3,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .filippov = &ops,
    .autonomous = true,
};
