/* contact.c — the codimension-2 and two-contact kinds as plugins, for the plugin tests:
 *  - "antali-plugin": Antali's (2017) extended Filippov example (eq 2.19), discontinuous on
 *    the line x1 = x2 = 0, F*(phi) = (-cos phi + x3, -sin phi, -cos phi - x3); on that line
 *    the sliding region is |x3| < 1 with sliding vector (0, 0, -2 x3) (2.35);
 *  - "flowmeter-plugin": the rotating ball flowmeter (Antali 2017, ch. 4), state (u1+, u1-,
 *    u2, v), given by its slipping-slipping field F_SS with the slip directions of the two
 *    contacts (the equations of kernels/flowmeter.c, written again here as a user would). */
#include <math.h>

#include "twofold/model.h"

static const char *const antali_names[] = {"x1", "x2", "x3"};
static const double antali_initial[] = {0.5, 0.3, 0.2};

static void sigma2(const double *x, const double *p, double *h, double *grad) {
  (void)p;
  h[0] = x[0], h[1] = x[1];
  if (!grad) return;
  for (int i = 0; i < 6; i++) grad[i] = 0.0;
  grad[0] = 1.0, grad[4] = 1.0;
}

static int field2(double t, const double *x, const double *dir, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = -dir[0] + x[2];
  dx[1] = -dir[1];
  dx[2] = -dir[0] - x[2];
  return 0;
}

static int antali_rhs(double t, const double *x, const double *p, double *dx) {
  const double rho = hypot(x[0], x[1]);
  const double dir[2] = {rho > 0 ? x[0] / rho : 0.0, rho > 0 ? x[1] / rho : 0.0};
  return field2(t, x, dir, p, dx);
}

static const tf_codim2_ops antali_ops = {TF_OPS_SIZE(tf_codim2_ops), .rhs = antali_rhs,
                                         .sigma2 = sigma2, .field2 = field2};

static const tf_model_def antali = {
    TF_MODEL_HEAD,
    .name = "antali-plugin",
    .doc = "Antali 2017 eq 2.19 as a plugin",
    .kind = TF_MODEL_CODIM2,
    .dim = 3,
    .state_names = antali_names,
    .initial = antali_initial,
    .codim2 = &antali_ops,
};

enum { R, D, J, G, MU, C, VF };

static const tf_param flow_params[] = {
    {"r", 0.005, 1e-12, INFINITY, "radius of the ball (m)", false},
    {"d", 0.096, 1e-12, INFINITY, "inner radius of the vessel minus r (m)", false},
    {"j", 0.4, 1e-6, 2.0 / 3.0, "moment of inertia / (m r^2)", false},
    {"g", 1.35, 1e-12, INFINITY, "gravity reduced by buoyancy (m/s^2)", false},
    {"mu", 0.1, 1e-9, INFINITY, "friction coefficient", false},
    {"c", 0.039, 0.0, INFINITY, "linear drag coefficient per unit mass (1/s)", false},
    {"v_f", 0.3, -INFINITY, INFINITY, "flow velocity (m/s)", false},
};
static const char *const flow_names[] = {"u1p", "u1m", "u2", "v"};

static int field_dual(double t, const double *x, const double *dp, const double *dm,
                      const double *p, double *dx) {
  (void)t;
  const double v = x[3], mu = p[MU], jj = p[J], cent = v * v / p[D];
  const double den = 1.0 + mu * mu * dp[1] * dm[1];
  const double Np = (p[G] - mu * dm[1] * cent) / den, Nm = (cent + p[G] * mu * dp[1]) / den;
  const double T1p = -mu * Np * dp[0], T2p = -mu * Np * dp[1];
  const double T1m = -mu * Nm * dm[0], T2m = -mu * Nm * dm[1];
  const double drag = -p[C] * (v - p[VF]);
  dx[0] = drag + v * x[2] / p[D] + (1 + jj) / jj * T1p + T1m;
  dx[1] = drag + (1 + jj) / jj * T1m + T1p;
  dx[2] = v * (v - x[0]) / p[D] + (T2p + T2m) / jj;
  dx[3] = drag + T1p + T1m;
  return 0;
}

static int flow_rhs(double t, const double *x, const double *p, double *dx) {
  const double sp = hypot(x[0], x[2]), sm = hypot(x[1], x[2]);
  const double dp[2] = {sp > 0 ? x[0] / sp : 0, sp > 0 ? x[2] / sp : 0};
  const double dm[2] = {sm > 0 ? x[1] / sm : 0, sm > 0 ? x[2] / sm : 0};
  return field_dual(t, x, dp, dm, p, dx);
}

static const tf_two_contact_ops flow_ops = {TF_OPS_SIZE(tf_two_contact_ops), .rhs = flow_rhs,
                                            .field_dual = field_dual, .contact_index = {0, 1, 2}};

static const tf_model_def flowmeter = {
    TF_MODEL_HEAD,
    .name = "flowmeter-plugin",
    .doc = "rotating ball flowmeter as a plugin",
    .kind = TF_MODEL_TWO_CONTACT,
    .dim = 4,
    .state_names = flow_names,
    .nparams = sizeof flow_params / sizeof flow_params[0],
    .params = flow_params,
    .two_contact = &flow_ops,
};

TWOFOLD_MODELS(&antali, &flowmeter);
