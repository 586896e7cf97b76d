/* ball_pool.c — a ball rolling and slipping on the bottom of a pool (Antali 2017, §2.4.1,
 * eqs 2.36-2.45): the thesis' worked mechanical extended Filippov system.
 *
 * State x = (u_y, u_z, v_y, v_z): velocity of the contact point and of the centre.  Spatial
 * Coulomb friction -mu m g u/|u| at the contact and a viscous drag -K v on the centre:
 *   u' = -7/2 mu g u/|u| - K/m v,   v' = -mu g u/|u| - K/m v                       (2.39)
 * Sigma = {u = 0} (rolling).  The engine derives the rest; the thesis' answers are: limit
 * directions phi1 = atan2(v_z, v_y) (always attracting) and phi1 + pi (attracting iff
 * |v| < v_crit = 7 mu g m/(2 K), 2.43), rolling field v' = -5K/(7m) v (2.45).  K = 0 is the
 * billiard ball: it starts rolling at t = 2 v0/(7 mu g) with speed 5 v0/7.
 * Physical initial conditions: initial.speed and initial.direction_deg give the centre
 * velocity of a ball with no spin (contact point velocity equal to it). */
#include <math.h>
#include <stddef.h>

#include "twofold/model.h"

enum { M, RADIUS, MU, G, KV };

static const tf_param params[] = {
    {"m", 1.0, 1e-12, INFINITY, "mass of the ball", false},
    {"r", 0.05, 1e-12, INFINITY, "radius of the ball (enters the spin outputs only)", false},
    {"mu", 0.2, 1e-12, INFINITY, "friction coefficient (static = dynamic)", false},
    {"g", 9.81, 1e-12, INFINITY, "gravitational acceleration (reduced by buoyancy)", false},
    {"K", 0.0, 0.0, INFINITY, "viscous coefficient of the liquid on the centre (0: billiard)",
     false},
};

static const tf_param initial_params[] = {
    {"speed", 1.0, 0.0, INFINITY, "initial speed of the centre (no spin)", false},
    {"direction_deg", 0.0, -360.0, 360.0, "direction of the initial velocity, degrees from y",
     false},
};

static const char *const state_names[] = {"u_y", "u_z", "v_y", "v_z"};
static const double initial[] = {1.0, 0.0, 1.0, 0.0};
static const char *const output_names[] = {"speed", "slip_speed", "omega_y", "omega_z"};

static void sigma2(const double *x, const double *p, double *h, double *grad) {
  (void)p;
  h[0] = x[0], h[1] = x[1];
  if (!grad) return;
  for (int i = 0; i < 8; i++) grad[i] = 0.0;
  grad[0] = 1.0, grad[4 + 1] = 1.0;
}

static int field2(double t, const double *x, const double *dir, const double *p, double *dx) {
  (void)t;
  const double f = p[MU] * p[G], c = p[KV] / p[M];
  dx[0] = -3.5 * f * dir[0] - c * x[2];
  dx[1] = -3.5 * f * dir[1] - c * x[3];
  dx[2] = -f * dir[0] - c * x[2];
  dx[3] = -f * dir[1] - c * x[3];
  return 0;
}

/* The slipping field off Sigma (eq 2.39); on Sigma the direction is undefined and taken 0,
 * which is what a naive integrator sees. */
static int rhs(double t, const double *x, const double *p, double *dx) {
  const double s = hypot(x[0], x[1]);
  const double dir[2] = {s > 0 ? x[0] / s : 0.0, s > 0 ? x[1] / s : 0.0};
  return field2(t, x, dir, p, dx);
}

static void initial_state(const double *ip, const double *p, double *x) {
  (void)p;
  const double a = ip[1] * M_PI / 180.0;
  x[2] = ip[0] * cos(a), x[3] = ip[0] * sin(a);
  x[0] = x[2], x[1] = x[3];
}

static void outputs(const double *x, const double *p, double *out) {
  out[0] = hypot(x[2], x[3]);
  out[1] = hypot(x[0], x[1]);
  out[2] = (x[1] - x[3]) / p[RADIUS]; /* (2.36) */
  out[3] = -(x[0] - x[2]) / p[RADIUS];
}

static const tf_codim2_ops ops = {
    TF_OPS_SIZE(tf_codim2_ops),
    .rhs = rhs,
    .sigma2 = sigma2,
    .field2 = field2,
};

const tf_model_def tf_kernel_ball_pool = {
    TF_MODEL_HEAD,
    .name = "ball-pool",
    .doc =
        "ball slipping/rolling on the bottom of a pool, 2-D Coulomb friction (Antali 2017 2.4.1)",
    .kind = TF_MODEL_CODIM2,
    .dim = 4,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .ninitial = sizeof initial_params / sizeof initial_params[0],
    .initial_params = initial_params,
    .initial_state = initial_state,
    .noutputs = sizeof output_names / sizeof output_names[0],
    .output_names = output_names,
    .outputs = outputs,
    .codim2 = &ops,
};
