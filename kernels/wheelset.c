/* wheelset.c — a railway wheelset on two rails with Coulomb friction at both wheel-rail
 * contacts (Antali 2017, chapter 5): linearised kinematic oscillation (chapter 1) plus
 * slipping, so that dual-point rolling (the kinematic oscillation) can give way to slipping.
 *
 * State x = (y, Psi, u1+, u1-, u_a) (5.31): lateral displacement, normalised yaw Psi = b psi,
 * the longitudinal slip velocities of the two contacts and their common lateral slip.  The
 * kernel gives F_SS with the slip directions d± = (d1, da) of the contacts given
 * (tf_two_contact_ops.field_dual); the Coulomb forces are T1± = -C m d1±, T2± = -C m da±
 * (5.35-5.36) and y'    = omega_L eta Psi + u_a,   Psi' = -(omega_L/eta) y - (u1+ - u1-)/2 (5.32)
 *   u1+'  = (alpha_psi^2 - omega_L^2) Psi - (omega_L/eta) u_a
 *           - (M_phi + M_psi) C d1+ - (M_phi - M_psi) C d1-
 *   u1-'  = -(alpha_psi^2 - omega_L^2) Psi + (omega_L/eta) u_a
 *           - (M_phi - M_psi) C d1+ - (M_phi + M_psi) C d1-
 *   u_a'  = -(alpha_y^2 - omega_L^2) y + omega_L eta (u1+ - u1-)/2 - C (da+ + da-)   (5.34)
 * The last term of u_a' enters with +: it follows from (5.32) and the lateral equation of
 * (5.23), y'' = -omega_L^2 y - omega_L eta (u1+ - u1-)/2 + u_a'; the printed (5.34), (5.37)
 * and (5.44) carry a sign typo there (thesis errata).  src/engine/dual_contact.c derives the cases
 * SR, RS and RR (5.39-5.42) from F_SS, and from them the conditions of slipping of §5.4.
 *
 * Parameters are the thesis' composed ones (Table 5.1).  Defaults: Example 5.2 (a high-speed
 * vehicle, data of Wu and Chi): alpha_y = 63.2 1/s, alpha_psi = 93.6 1/s, M_psi = 1.64,
 * C = mu F_load/(2m) = 10.29 N/kg (mu = 0.15, F_load/m = 137.2 N/kg).  The example states
 * omega_L only through speeds: the resonances omega_L = alpha_y, alpha_psi at 236.1 and
 * 349.3 km/h give omega_L/v = 0.9642 1/m, and the crossing omega_L1 of (5.66) at 283.3 km/h
 * gives eta = 1.04 (its table is not in the text).  M_phi does not enter the conditions of
 * slipping, only the slipping motion; the example does not give it (2: a uniform disc).
 * With omega_per_v or eta given as 0 they are derived from the profile geometry by (1.56):
 *   a01 = v (b - h r)/b,  b10 = -v h R_w (b + R_r h/sqrt(1 + h^2))/(b r (b - h r)(R_w - R_r))
 *   omega_L = sqrt(-a01 b10) (Meijaard's formula 1.57),  eta = sqrt(-a01/(b^2 b10)).
 *
 * Physical initial conditions: initial.amplitude (ybar) and initial.phase_deg (theta) put
 * the wheelset on the rolling trajectory (5.61) y^2 + eta^2 Psi^2 = ybar^2 at
 * y = ybar cos theta, Psi = -(ybar/eta) sin theta, rolling at both contacts. */
#include <math.h>
#include <stddef.h>

#include "twofold/model.h"

enum {
  V,
  OMEGA_PER_V,
  OMEGA_L,
  ETA,
  ALPHA_Y,
  ALPHA_PSI,
  M_PSI,
  M_PHI,
  MU,
  LOAD,
  H,
  B,
  RR,
  RW,
  RRAIL
};

static const tf_param params[] = {
    {"v", 200.0 / 3.6, 0.0, INFINITY, "speed along the track (m/s)", false},
    {"omega_per_v", 0.9642, 0.0, INFINITY,
     "omega_L / v (1/m); 0 = derive from the geometry by (1.57)", true},
    {"omega_L", 0.0, 0.0, INFINITY,
     "angular frequency of the kinematic oscillation (1/s); 0 = v * omega_per_v", true},
    {"eta", 1.04, 0.0, INFINITY, "geometric factor sqrt(-a01/(b^2 b10)); 0 = derive by (1.56)",
     true},
    {"alpha_y", 63.2, 0.0, INFINITY, "sqrt(k_y/m): lateral natural angular frequency (1/s)", false},
    {"alpha_psi", 93.6, 0.0, INFINITY, "sqrt(k_psi/J_psi): yaw natural angular frequency (1/s)",
     false},
    {"M_psi", 1.64, 1e-9, INFINITY, "m b^2 / J_psi", false},
    {"M_phi", 2.0, 1e-9, INFINITY, "m r^2 / J_phi (enters the slipping motion only)", false},
    {"mu", 0.15, 1e-9, INFINITY, "friction coefficient wheel-rail (static = dynamic)", false},
    {"load_per_mass", 137.2, 1e-9, INFINITY, "axle load / wheelset mass F_load/m (N/kg)", false},
    {"h", 0.05, 1e-9, 1.0, "conicity tan(delta) (geometry route only)", false},
    {"b", 0.7465, 1e-6, INFINITY, "half-distance of the contact points (m; geometry route)", false},
    {"r", 0.4575, 1e-6, INFINITY, "rolling radius (m; geometry route)", false},
    {"R_w", 0.5, 1e-6, INFINITY, "wheel profile radius of curvature (m; geometry route)", false},
    {"R_r", 0.3, 1e-6, INFINITY, "rail profile radius of curvature (m; geometry route)", false},
};

static const char *const state_names[] = {"y", "Psi", "u1p", "u1m", "ua"};
static const double initial[] = {0.005, 0.0, 0.0, 0.0, 0.0};

static const tf_param initial_params[] = {
    {"amplitude", 0.005, 0.0, INFINITY, "amplitude ybar of the kinematic oscillation (m)", false},
    {"phase_deg", 0.0, -360.0, 360.0, "phase theta: y = ybar cos theta (degrees)", false},
};

static const char *const output_names[] = {"amplitude", "slip_ratio", "slip_plus", "slip_minus"};

static int prepare(double *p, tf_error *err) {
  if (p[OMEGA_PER_V] == 0.0 || p[ETA] == 0.0) {
    const double h = p[H], b = p[B], r = p[RR], root = sqrt(1.0 + h * h);
    if (!(b > h * r))
      return tf_model_fail(err, "the geometry route needs b > h r (got b = %g, h r = %g)", b,
                           h * r);
    if (!(p[RW] > p[RRAIL]))
      return tf_model_fail(err, "the geometry route needs R_w > R_r (got R_w = %g, R_r = %g)",
                           p[RW], p[RRAIL]);
    const double a01 = (b - h * r) / b; /* per unit speed (1.56) */
    const double b10 =
        -h * p[RW] * (b + p[RRAIL] * h / root) / (b * r * (b - h * r) * (p[RW] - p[RRAIL]));
    if (p[OMEGA_PER_V] == 0.0) p[OMEGA_PER_V] = sqrt(-a01 * b10);
    if (p[ETA] == 0.0) p[ETA] = sqrt(-a01 / (b * b * b10));
  }
  if (p[OMEGA_L] == 0.0) p[OMEGA_L] = p[V] * p[OMEGA_PER_V];
  if (!(p[OMEGA_L] > 0.0))
    return tf_model_fail(err, "omega_L must be positive (give v > 0 or omega_L)");
  return 0;
}

static double friction_C(const double *p) {
  return 0.5 * p[MU] * p[LOAD]; /* C = mu F_load/(2m), Table 5.1 */
}

static int field_dual(double t, const double *x, const double *dp, const double *dm,
                      const double *p, double *dx) {
  (void)t;
  const double w = p[OMEGA_L], eta = p[ETA], C = friction_C(p);
  const double ky = p[ALPHA_Y] * p[ALPHA_Y] - w * w, kpsi = p[ALPHA_PSI] * p[ALPHA_PSI] - w * w;
  const double sum = p[M_PHI] + p[M_PSI], diff = p[M_PHI] - p[M_PSI];
  const double y = x[0], psi = x[1], up = x[2], um = x[3], ua = x[4];
  dx[0] = w * eta * psi + ua;
  dx[1] = -w / eta * y - 0.5 * (up - um);
  dx[2] = kpsi * psi - w / eta * ua - sum * C * dp[0] - diff * C * dm[0];
  dx[3] = -kpsi * psi + w / eta * ua - diff * C * dp[0] - sum * C * dm[0];
  dx[4] = -ky * y + w * eta * 0.5 * (up - um) - C * (dp[1] + dm[1]);
  return 0;
}

/* F_SS with the directions of the state's own slip velocities (0 where a slip vanishes, as
 * a naive integrator would see it). */
static int rhs(double t, const double *x, const double *p, double *dx) {
  const double sp = hypot(x[2], x[4]), sm = hypot(x[3], x[4]);
  const double dp[2] = {sp > 0 ? x[2] / sp : 0, sp > 0 ? x[4] / sp : 0};
  const double dm[2] = {sm > 0 ? x[3] / sm : 0, sm > 0 ? x[4] / sm : 0};
  return field_dual(t, x, dp, dm, p, dx);
}

static void initial_state(const double *ip, const double *p, double *x) {
  const double th = ip[1] * M_PI / 180.0;
  x[0] = ip[0] * cos(th);
  x[1] = -ip[0] / p[ETA] * sin(th);
  x[2] = x[3] = x[4] = 0.0;
}

/* amplitude: the ybar of the rolling ellipse (5.61) through the state; slip_ratio: the
 * left side of Proposition 5.1 (5.59) over its right side, square-rooted (dual rolling can
 * persist where it is below 1); slip_plus/minus: slip speeds |v±| of the contacts. */
static void outputs(const double *x, const double *p, double *out) {
  const double w = p[OMEGA_L];
  const double q = (p[ALPHA_Y] * p[ALPHA_Y] - w * w) * x[0];
  const double s = (p[ALPHA_PSI] * p[ALPHA_PSI] - w * w) * x[1] / p[M_PSI];
  out[0] = hypot(x[0], p[ETA] * x[1]);
  out[1] = hypot(q, s) / (2.0 * friction_C(p));
  out[2] = hypot(x[2], x[4]);
  out[3] = hypot(x[3], x[4]);
}

static const tf_two_contact_ops ops = {
    TF_OPS_SIZE(tf_two_contact_ops),
    .rhs = rhs,
    .field_dual = field_dual,
    .contact_index = {2, 3, 4},
};

const tf_model_def tf_kernel_wheelset = {
    TF_MODEL_HEAD,
    .name = "wheelset",
    .doc = "railway wheelset, Coulomb friction at both rails: rolling/slipping (Antali 2017 ch. 5)",
    .kind = TF_MODEL_TWO_CONTACT,
    .dim = 5,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .prepare = prepare,
    .ninitial = sizeof initial_params / sizeof initial_params[0],
    .initial_params = initial_params,
    .initial_state = initial_state,
    .noutputs = sizeof output_names / sizeof output_names[0],
    .output_names = output_names,
    .outputs = outputs,
    .two_contact = &ops,
};
