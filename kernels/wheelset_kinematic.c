/* wheelset_kinematic.c — kinematic (pure dual-point rolling) oscillation of a railway
 * wheelset with exact profile geometry (Antali 2017, chapter 1).
 *
 * Why a kernel of its own: the chapter-5 `wheelset` kernel uses the linearised kinematics,
 * whose frequency cannot depend on the amplitude.  Here the contact geometry is solved
 * exactly at every evaluation, so the frequency of the closed orbits around the centre
 * y = psi = 0 changes with the amplitude as omega_N = omega_L (1 + beta ybar^2 + ...) (1.41).
 *
 * Geometry (1.13)-(1.15): identical rails and wheels on both sides; profiles z = c(U) with
 * c(0) = 0, c'(0) = h and the radius of curvature R(U) = -(1 + c'^2)^(3/2) / c'' having the
 * value R, slope R' and second derivative R'' at the nominal contact point (1.55).  The
 * profiles are the quartic Taylor polynomials that match these exactly (the thesis' (1.60) is
 * their small-h form; its c'''' has R_w^2 where the dimensions need R_w^3); beta depends on
 * nothing beyond them, higher derivatives change only O(ybar^4) terms.
 *
 * Dynamics: with the cyclic w and phi set to 0 (1.24), the contact constraints (1.46)-(1.47)
 * are solved by Newton for the roll angle, the vertical displacement and the contact
 * coordinates U_r, U_w on both sides (V_w from the first of (1.47), V_r is not needed), and
 * the rolling conditions give ydot and psidot by (1.49)-(1.50), times the speed v.
 *
 * State (u, p, time) over the phase theta: y = ybar u and psi = ybar p, so that initial state
 * (1, 0, 0) is the oscillation of amplitude ybar whatever ybar is (a grid over ybar is a grid
 * over amplitudes).  The engine's independent variable is theta, the polar angle of
 * (u, -p a01 / omega_L) (a circle in the linear limit), and the time is a state: theta turns
 * by exactly 2 pi per period on every closed orbit around the centre, so a run to
 * theta = 2 pi N ends after exactly N periods, at t = N T(ybar) -- the period measured by the
 * integration alone, with no event location and no partial period left over. */
#include "twofold/model.h"

#include <math.h>
#include <string.h>

enum { V, RADIUS, B, H, RW, RR, DRW, DRR, DDRW, DDRR, YBAR, NPARAMS };

/* Default profile data: Example 1.2 as far as the text gives it (omega_L = 30.15 1/s,
 * beta = -2.0e-6 1/mm^2 for R_w' = 0 and 2.4e-3 1/mm^2 with R_w', rail of constant
 * curvature); its table (Fig. 1.10) is missing from the text, and these values give all
 * three by the thesis' formulas (1.57), (1.62) and (1.64) (docs/CONFIG.md). */
static const tf_param params[] = {
    {"v", 58.0, 1e-9, INFINITY, "speed along the track (m/s)", false},
    {"r", 0.4, 1e-6, INFINITY, "nominal rolling radius (m)", false},
    {"b", 0.75, 1e-6, INFINITY, "half-distance of the nominal contact points (m)", false},
    {"h", 0.04, 1e-6, 1.0, "conicity, tan of the contact angle at the nominal point", false},
    {"R_w", 0.5, 1e-6, INFINITY, "wheel profile radius of curvature at the nominal point (m)",
     false},
    {"R_r", 0.25, 1e-6, INFINITY, "rail profile radius of curvature at the nominal point (m)",
     false},
    {"dR_w", 24.0, -1e6, 1e6, "dR_w/dU_w at the nominal point (dimensionless)", false},
    {"dR_r", 0.0, -1e6, 1e6, "dR_r/dU_r at the nominal point (dimensionless)", false},
    {"ddR_w", 0.0, -1e9, 1e9, "d2R_w/dU_w2 at the nominal point (1/m)", false},
    {"ddR_r", 0.0, -1e9, 1e9, "d2R_r/dU_r2 at the nominal point (1/m)", false},
    {"ybar", 0.002, 1e-9, 0.1,
     "length unit of the state: y = ybar u (the amplitude from (1, 0, 0))", false},
};

static const double initial[] = {1.0, 0.0, 0.0};
static const char *const state_names[] = {"u", "p", "time"};
static const char *const output_names[] = {"y", "psi"};

/* Taylor coefficients c(U) = h U + c2 U^2/2 + c3 U^3/6 + c4 U^4/24 of a profile whose radius
 * of curvature has value R, slope R1 and second derivative R2 at U = 0 (derived from
 * R = -(1 + c'^2)^(3/2) / c'' and its first two derivatives). */
typedef struct profile {
  double h, c2, c3, c4;
} profile;

static profile make_profile(double h, double R, double R1, double R2) {
  const double s = sqrt(1.0 + h * h), s3 = s * s * s;
  profile c = {h, -s3 / R, (R1 * s3 + 3.0 * h * s3 * s) / (R * R), 0.0};
  c.c4 = s3 *
         (R * R2 - 2.0 * R1 * R1 - 9.0 * R1 * h * s - 15.0 * h * h * h * h - 18.0 * h * h - 3.0) /
         (R * R * R);
  return c;
}

static double c0(const profile *c, double u) {
  return u * (c->h + u * (c->c2 / 2.0 + u * (c->c3 / 6.0 + u * c->c4 / 24.0)));
}

static double c1(const profile *c, double u) {
  return c->h + u * (c->c2 + u * (c->c3 / 2.0 + u * c->c4 / 6.0));
}

/* Curvature -c'' / (1 + c'^2)^(3/2) (1/R; positive where the profile bulges upwards). */
static double curvature(const profile *c, double u) {
  const double d1 = c1(c, u), d2 = c->c2 + u * (c->c3 + u * c->c4 / 2.0);
  return -d2 / pow(1.0 + d1 * d1, 1.5);
}

/* The linear coefficients (1.56) and omega_L (1.31): only the scale of theta's plane. */
static void linear(const double *p, double *a01, double *omega_l) {
  const double h = p[H], r = p[RADIUS], b = p[B], s = sqrt(1.0 + h * h);
  *a01 = p[V] * (b - h * r) / b;
  const double b10 =
      -p[V] * h * p[RW] * (b + p[RR] * h / s) / (b * r * (b - h * r) * (p[RW] - p[RR]));
  *omega_l = sqrt(-*a01 * b10);
}

/* Contact unknowns X = (theta_roll, z, U_r+, U_r-, U_w+, U_w-). */
enum { NX = 6 };

typedef struct geometry {
  profile w, r;
  double radius, b, y, psi;
} geometry;

static double wheel_angle(const geometry *g, double uw, double side) {
  return asin(-side * c1(&g->w, uw) * tan(g->psi)); /* first of (1.47) */
}

/* 1 - cos x without cancellation. */
static double one_minus_cos(double x) {
  const double s = sin(0.5 * x);
  return 2.0 * s * s;
}

/* The remaining constraints (1.46) (lateral and vertical) and (1.47) (second) per side.  The
 * terms of size b and r that cancel in the central position are cancelled by hand, so that
 * rounding is relative to the displacements, not to the wheelset's size. */
static void residual(const geometry *g, const double *x, double *e) {
  const double th = x[0], z = x[1], ct = cos(th), st = sin(th), cp = cos(g->psi), sp = sin(g->psi),
               cpct1 = -one_minus_cos(g->psi) - cp * one_minus_cos(th);
  for (int k = 0; k < 2; k++) {
    const double side = k == 0 ? 1.0 : -1.0, ur = x[2 + k], uw = x[4 + k];
    const double vw = wheel_angle(g, uw, side), cw = c0(&g->w, uw), a = cw - g->radius;
    const double sv = sin(vw), cv = cos(vw), ctcv1 = -one_minus_cos(th) - ct * one_minus_cos(vw);
    const double lat = a * sp * sv + side * (uw + g->b) * cp;
    e[3 * k] = g->y + a * sp * sv * ct - a * st * cv + side * ((uw - ur) + (uw + g->b) * cpct1);
    e[3 * k + 1] = z + lat * st + cw * ct * cv - c0(&g->r, ur) - g->radius * ctcv1;
    const double cr1 = c1(&g->r, ur), tt = st / ct;
    e[3 * k + 2] = c1(&g->w, uw) * (cr1 * tt + side) + cv * cp * (tt - side * cr1);
  }
}

/* Gaussian elimination with partial pivoting; a is NX x NX row-major, b the right side. */
static int solve(double *a, double *b) {
  for (int c = 0; c < NX; c++) {
    int piv = c;
    for (int i = c + 1; i < NX; i++)
      if (fabs(a[i * NX + c]) > fabs(a[piv * NX + c])) piv = i;
    if (a[piv * NX + c] == 0.0) return -1;
    if (piv != c) {
      for (int j = 0; j < NX; j++) {
        const double t = a[c * NX + j];
        a[c * NX + j] = a[piv * NX + j], a[piv * NX + j] = t;
      }
      const double t = b[c];
      b[c] = b[piv], b[piv] = t;
    }
    for (int i = c + 1; i < NX; i++) {
      const double f = a[i * NX + c] / a[c * NX + c];
      for (int j = c; j < NX; j++) a[i * NX + j] -= f * a[c * NX + j];
      b[i] -= f * b[c];
    }
  }
  for (int i = NX - 1; i >= 0; i--) {
    double s = b[i];
    for (int j = i + 1; j < NX; j++) s -= a[i * NX + j] * b[j];
    b[i] = s / a[i * NX + i];
  }
  return 0;
}

/* Newton on the constraints from the first-order solution (1.53).  The Jacobian is a
 * forward difference: its error only slows the convergence, not the converged point, and
 * the iteration runs until the step is at rounding level, so the field is as smooth as the
 * geometry. */
static int contact(const geometry *g, const double *p, double *x) {
  const double h = p[H], s = sqrt(1.0 + h * h), bh = g->b - h * g->radius, dr = p[RW] - p[RR];
  x[0] = h / bh * g->y, x[1] = 0.0;
  const double kr = p[RR] * (g->b + p[RW] * h / s) / (bh * dr),
               kw = p[RW] * (g->b + p[RR] * h / s) / (bh * dr);
  x[2] = -kr * g->y, x[3] = kr * g->y, x[4] = -kw * g->y, x[5] = kw * g->y;
  double e[NX], e2[NX], jac[NX * NX], xs[NX], step = INFINITY, last = 0.0;
  for (int it = 0; it < 40; it++) {
    residual(g, x, e);
    for (int j = 0; j < NX; j++) {
      memcpy(xs, x, sizeof xs);
      const double d = 1e-7 * fmax(fabs(x[j]), 1e-3 * fabs(g->y) + 1e-12);
      xs[j] += d;
      residual(g, xs, e2);
      for (int i = 0; i < NX; i++) jac[i * NX + j] = (e2[i] - e[i]) / d;
    }
    if (solve(jac, e)) return -1;
    double size = 0.0;
    step = 0.0;
    for (int i = 0; i < NX; i++) {
      x[i] -= e[i];
      step = fmax(step, fabs(e[i]));
      size = fmax(size, fabs(x[i]));
    }
    if (!isfinite(step)) return -1;
    if (step <= 1e-13 * size || step == 0.0) return 0;
    last = size;
  }
  return step <= 1e-9 * last ? 0 : -1;
}

/* ydot and psidot at (y, psi) by (1.49)-(1.50); NaN if the contact cannot be solved. */
static void velocity(const double *p, double y, double psi, double *ydot, double *psidot) {
  geometry g = {make_profile(p[H], p[RW], p[DRW], p[DDRW]),
                make_profile(p[H], p[RR], p[DRR], p[DDRR]),
                p[RADIUS],
                p[B],
                y,
                psi};
  double x[NX];
  /* A single contact point per side needs the rail more curved than the wheel there: where
   * the profiles become conformal the contact point jumps (or a second one appears) and
   * this model ends, so the member stops as nonfinite instead of following another root. */
  if (contact(&g, p, x) || !(curvature(&g.w, x[4]) < curvature(&g.r, x[2])) ||
      !(curvature(&g.w, x[5]) < curvature(&g.r, x[3]))) {
    *ydot = *psidot = NAN;
    return;
  }
  const double th = x[0], ct = cos(th), st = sin(th), cp = cos(psi), sp = sin(psi);
  /* Z is kept shifted by r cos(roll) (Zs = Z + r ct): its difference between the sides is
   * a small quantity computed without cancelling r. */
  double W[2], Y[2], Zs[2];
  for (int k = 0; k < 2; k++) {
    const double side = k == 0 ? 1.0 : -1.0, uw = x[4 + k];
    const double vw = wheel_angle(&g, uw, side), cw = c0(&g.w, uw);
    const double fx = (cw - g.radius) * sin(vw), fy = side * (g.b + uw),
                 fzs = cw * cos(vw) + g.radius * one_minus_cos(vw); /* fz + r */
    const double rx = cp * fx - sp * fy, ry = sp * fx + cp * fy;    /* yaw, then roll */
    W[k] = rx, Y[k] = ct * ry - st * (fzs - g.radius), Zs[k] = st * ry + ct * fzs;
  }
  const double rc = g.radius * ct;
  const double den = Y[0] * Zs[1] - Y[1] * Zs[0] - rc * (Y[0] - Y[1]);
  *ydot = p[V] * (Zs[0] * W[1] - Zs[1] * W[0] - rc * (W[1] - W[0])) / den;
  *psidot = p[V] * ((Y[0] - Y[1]) * st - (Zs[0] - Zs[1]) * ct) / den;
}

/* The independent variable is the phase theta, so the field is the time derivative divided
 * by dtheta/dt, which is close to omega_L on the small orbits this model is for; where it
 * is not positive theta no longer counts periods and the member stops as nonfinite. */
static int rhs(double theta, const double *x, const double *p, double *dx) {
  (void)theta;
  const double ybar = p[YBAR];
  double ydot, psidot, a01, omega_l;
  velocity(p, ybar * x[0], ybar * x[1], &ydot, &psidot);
  linear(p, &a01, &omega_l);
  const double k = a01 / omega_l, Y = x[0], Q = -k * x[1], dY = ydot / ybar,
               dQ = -k * psidot / ybar;
  double rate = (Y * dQ - Q * dY) / (Y * Y + Q * Q); /* dtheta/dt */
  if (!(rate > 0.0)) rate = NAN; /* theta would stop counting periods: end the member */
  dx[0] = dY / rate, dx[1] = psidot / ybar / rate, dx[2] = 1.0 / rate;
  return 0;
}

static int prepare(double *p, tf_error *err) {
  if (p[B] <= p[H] * p[RADIUS])
    return tf_model_fail(err, "needs b > h r (got b = %g, h r = %g)", p[B], p[H] * p[RADIUS]);
  if (p[RW] <= p[RR])
    return tf_model_fail(err,
                         "needs R_w > R_r, a wheel profile less curved than the rail's (got "
                         "R_w = %g, R_r = %g)",
                         p[RW], p[RR]);
  return 0;
}

static void outputs(const double *x, const double *p, double *out) {
  out[0] = p[YBAR] * x[0], out[1] = p[YBAR] * x[1];
}

static const tf_flow_ops ops = {
    TF_OPS_SIZE(tf_flow_ops),
    .rhs = rhs,
};

const tf_model_def tf_kernel_wheelset_kinematic = {
    TF_MODEL_HEAD,
    .name = "wheelset-kinematic",
    .doc = "railway wheelset rolling at both contacts, exact profile geometry (Antali 2017 ch. 1)",
    .kind = TF_MODEL_FLOW,
    .dim = 3,
    .state_names = state_names,
    .initial = initial,
    .nparams = NPARAMS,
    .params = params,
    .prepare = prepare,
    .noutputs = 2,
    .output_names = output_names,
    .outputs = outputs,
    .flow = &ops,
};
