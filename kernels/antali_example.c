/* antali_example.c — the worked extended Filippov system of Antali (2017), Examples 2.9,
 * 2.16 and 2.18: a field in R^3 discontinuous on the line x1 = x2 = 0,
 *   F(x) = (-x1/rho + x3, -x2/rho, -x1/rho - x3),  rho = sqrt(x1^2 + x2^2)        (2.19)
 * (the second component with the minus sign, as (2.20), (2.25) and F_B in (2.34) require).
 * On Sigma: F*(phi) = (-cos phi + x3, -sin phi, -cos phi - x3), R = -1 + x3 cos phi,
 * V = -x3 sin phi; limit directions 0 and pi; sliding region |x3| < 1; sliding vector
 * (0, 0, -2 x3) (2.35). */
#include <math.h>
#include <stddef.h>

#include "twofold/model.h"

static const char *const state_names[] = {"x1", "x2", "x3"};
static const double initial[] = {0.5, 0.3, 0.2};

static void sigma2(const double *x, const double *p, double *h, double *grad) {
  (void)p;
  h[0] = x[0], h[1] = x[1];
  if (!grad) return;
  for (int i = 0; i < 6; i++) grad[i] = 0.0;
  grad[0] = 1.0, grad[3 + 1] = 1.0;
}

static int field2(double t, const double *x, const double *dir, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = -dir[0] + x[2];
  dx[1] = -dir[1];
  dx[2] = -dir[0] - x[2];
  return 0;
}

static int rhs(double t, const double *x, const double *p, double *dx) {
  const double rho = hypot(x[0], x[1]);
  const double dir[2] = {rho > 0 ? x[0] / rho : 0.0, rho > 0 ? x[1] / rho : 0.0};
  return field2(t, x, dir, p, dx);
}

static const tf_codim2_ops ops = {
    TF_OPS_SIZE(tf_codim2_ops),
    .rhs = rhs,
    .sigma2 = sigma2,
    .field2 = field2,
};

const tf_model_def tf_kernel_antali_example = {
    TF_MODEL_HEAD,
    .name = "antali-example",
    .doc = "the extended Filippov system of Antali 2017, Examples 2.9/2.16/2.18 (eq 2.19)",
    .kind = TF_MODEL_CODIM2,
    .dim = 3,
    .state_names = state_names,
    .initial = initial,
    .nparams = 0,
    .params = NULL,
    .codim2 = &ops,
};
