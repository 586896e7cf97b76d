/* flowmeter.c — the rotating ball flowmeter (Antali 2017, chapter 4): a ball driven by a
 * swirling flow round the edge of a cylindrical vessel, in contact with the bottom (P+) and
 * the wall (P-), Coulomb friction at both.
 *
 * State x = (u1+, u1-, u2, v) (4.23): slip velocities along the motion at the bottom and at
 * the wall, the common sideways slip u2 (u_a = u2 sqrt(2)/2, 4.11), and the speed v of the
 * centre.  The kernel gives F_SS with the slip directions d± of the two contacts
 * (tf_two_contact_ops.field_dual): T± = -mu N± d± (4.24-4.25), the normal forces solved from
 * (4.22), N+ = m (g - mu d-_2 v^2/d)/(1 + mu^2 d+_2 d-_2),  N- = m (v^2/d + g mu d+_2)/(...) (4.26)
 *   u1+' = -c(v - v_f) + v u2/d + (1 + j)/j T1+/m + T1-/m,  u1-' = -c(v - v_f)
 *          + (1 + j)/j T1-/m + T1+/m,  u2' = v(v - u1+)/d + (T2+ + T2-)/(j m),
 *   v' = -c(v - v_f) + (T1+ + T1-)/m                                                  (4.27)
 * and src/engine/dual_contact.c derives the cases SR, RS, RR.  J = j m r^2 (thesis errata), the
 * drag coefficient c has units 1/s.  Defaults: Example 4.4 (polyamide ball in water:
 * g = 1.35 m/s^2 reduced, c = 0.039 1/s, d such that mu_fold = (c^2 d/(4 g))^(1/3) = 0.03),
 * mu = 0.1, so mu_fold < mu < j (Fig. 4.6). */
#include <math.h>
#include <stddef.h>

#include "twofold/model.h"

enum { R, D, J, G, MU, C, VF };

static const tf_param params[] = {
    {"r", 0.005, 1e-12, INFINITY, "radius of the ball (m; enters the spin output only)", false},
    {"d", 0.096, 1e-12, INFINITY, "inner radius of the vessel minus r (m)", false},
    {"j", 0.4, 1e-6, 2.0 / 3.0, "moment of inertia / (m r^2): 2/5 solid sphere", false},
    {"g", 1.35, 1e-12, INFINITY, "gravity reduced by buoyancy (m/s^2)", false},
    {"mu", 0.1, 1e-9, INFINITY, "friction coefficient (static = dynamic)", false},
    {"c", 0.039, 0.0, INFINITY, "linear drag coefficient per unit mass (1/s)", false},
    {"v_f", 0.3, -INFINITY, INFINITY, "flow velocity round the vessel at the ball (m/s)", false},
};

static const char *const state_names[] = {"u1p", "u1m", "u2", "v"};
static const double initial[] = {0.0, 0.0, 0.0, 0.0};
static const char *const output_names[] = {"v", "omega_w", "slip_bottom", "slip_wall"};

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

/* F_SS with the directions of the state's own slip velocities (0 where a slip vanishes, as
 * a naive integrator would see it). */
static int rhs(double t, const double *x, const double *p, double *dx) {
  const double sp = hypot(x[0], x[2]), sm = hypot(x[1], x[2]);
  const double dp[2] = {sp > 0 ? x[0] / sp : 0, sp > 0 ? x[2] / sp : 0};
  const double dm[2] = {sm > 0 ? x[1] / sm : 0, sm > 0 ? x[2] / sm : 0};
  return field_dual(t, x, dp, dm, p, dx);
}

static void outputs(const double *x, const double *p, double *out) {
  out[0] = x[3];
  out[1] = (x[3] - x[0]) / p[R]; /* (4.9) */
  out[2] = hypot(x[0], x[2]);
  out[3] = hypot(x[1], x[2]);
}

static const tf_two_contact_ops ops = {
    TF_OPS_SIZE(tf_two_contact_ops),
    .rhs = rhs,
    .field_dual = field_dual,
    .contact_index = {0, 1, 2},
};

const tf_model_def tf_kernel_flowmeter = {
    TF_MODEL_HEAD,
    .name = "flowmeter",
    .doc = "rotating ball flowmeter: dual-point contact, cases SS/SR/RS/RR (Antali 2017 ch. 4)",
    .kind = TF_MODEL_TWO_CONTACT,
    .dim = 4,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .noutputs = sizeof output_names / sizeof output_names[0],
    .output_names = output_names,
    .outputs = outputs,
    .two_contact = &ops,
};
