/* ball_spring.c — a ball on a rough floor, its centre tied to a fixed point by an isotropic
 * spring: the two-dimensional version of Antali's Example 2.7 (disk and spring), and a model
 * in which rolling ends by itself, so both transitions of the codim-2 engine occur.
 *
 * State x = (w_y, w_z, v_y, v_z, u_y, u_z): centre position and velocity, contact-point
 * velocity.  With inertia J = j m r^2 about the centre (j = 2/5 solid ball, 1/2 the disk of
 * Example 2.7 when the motion stays on a line) and viscous drag K on the centre:
 *   w' = v,  v' = -k/m w - K/m v - mu g u/|u|,  u' = -k/m w - K/m v - (1 + 1/j) mu g u/|u|.
 * Sigma = {u = 0}.  Rolling (the sliding field) is v' = -(k w + K v)/(m (1 + j)), and it
 * lasts while the friction it needs, |k w + K v| j/(1 + j), stays below mu m g: with K = 0
 * rolling ends where |w| reaches w_c = (1 + j) mu m g/(j k) (3 mu g m/k for j = 1/2, the
 * strip of Example 2.7). */
#include <math.h>
#include <stddef.h>

#include "twofold/model.h"

enum { M, KS, MU, G, J, KV };

static const tf_param params[] = {
    {"m", 1.0, 1e-12, INFINITY, "mass", false},
    {"k", 1.0, 0.0, INFINITY, "spring stiffness", false},
    {"mu", 0.3, 1e-12, INFINITY, "friction coefficient (static = dynamic)", false},
    {"g", 9.81, 1e-12, INFINITY, "gravitational acceleration", false},
    {"j", 0.4, 1e-6, 10.0, "moment of inertia / (m r^2): 2/5 solid ball, 1/2 disk", false},
    {"K", 0.0, 0.0, INFINITY, "viscous drag on the centre", false},
};

static const char *const state_names[] = {"w_y", "w_z", "v_y", "v_z", "u_y", "u_z"};
static const double initial[] = {0.0, 0.0, 0.0, 0.0, 1.0, 0.0};
static const char *const output_names[] = {"distance", "speed", "slip_speed"};

static void sigma2(const double *x, const double *p, double *h, double *grad) {
  (void)p;
  h[0] = x[4], h[1] = x[5];
  if (!grad) return;
  for (int i = 0; i < 12; i++) grad[i] = 0.0;
  grad[4] = 1.0, grad[6 + 5] = 1.0;
}

static int field2(double t, const double *x, const double *dir, const double *p, double *dx) {
  (void)t;
  const double f = p[MU] * p[G], ratio = 1.0 + 1.0 / p[J];
  for (int i = 0; i < 2; i++) {
    const double load = -(p[KS] * x[i] + p[KV] * x[2 + i]) / p[M];
    dx[i] = x[2 + i];
    dx[2 + i] = load - f * dir[i];
    dx[4 + i] = load - ratio * f * dir[i];
  }
  return 0;
}

static int rhs(double t, const double *x, const double *p, double *dx) {
  const double s = hypot(x[4], x[5]);
  const double dir[2] = {s > 0 ? x[4] / s : 0.0, s > 0 ? x[5] / s : 0.0};
  return field2(t, x, dir, p, dx);
}

static void outputs(const double *x, const double *p, double *out) {
  (void)p;
  out[0] = hypot(x[0], x[1]);
  out[1] = hypot(x[2], x[3]);
  out[2] = hypot(x[4], x[5]);
}

static const tf_codim2_ops ops = {
    TF_OPS_SIZE(tf_codim2_ops),
    .rhs = rhs,
    .sigma2 = sigma2,
    .field2 = field2,
};

const tf_model_def tf_kernel_ball_spring = {
    TF_MODEL_HEAD,
    .name = "ball-spring",
    .doc = "ball on a rough floor tied by a spring: 2-D Example 2.7, rolling starts and ends",
    .kind = TF_MODEL_CODIM2,
    .dim = 6,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .noutputs = sizeof output_names / sizeof output_names[0],
    .output_names = output_names,
    .outputs = outputs,
    .codim2 = &ops,
};
