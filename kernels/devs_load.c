/* devs_load.c — the DEVS friction model of Feldstein & Kuzmin (1998): N contact spots, each
 * in contact (updated) with probability q = P, the normal load, and following
 *     xi x (1 - x)          for X2 < x < X1,
 *     a exp(X1 - x)         for x >= X1,
 *     a exp(x - X2)         for x <= X2,
 * with xi = mu / P (the continuous-contact growth parameter falls as 1/P) and
 * X1,2 = (xi +- sqrt(xi^2 - 4 a xi)) / (2 xi) the points where xi x (1 - x) = a, so the
 * element is continuous and cannot leak to infinity.  X1,2 are real only for xi >= 4a;
 * other parameters are rejected.  lambda_1(P) of the full state is the paper's Fig. 5; the
 * tangent map is diagonal, so it equals P times the element map's exponent at xi = mu / P for
 * any N, which is why no mu reproduces the paper's description of that figure (docs/DEVS.md). */
#include <math.h>

#include "twofold/model.h"

enum { N, MU, P, A, STEPS, TRANSIENT, XI, X1, X2 };

static const tf_param params[] = {
    {"N", 100, 1, 1e9, "number of elements (contact spots)", false},
    {"mu", 3.9, 1e-9, 1e6, "growth parameter at unit load (xi = mu / P)", false},
    {"P", 0.5, 1e-9, 1.0, "normal load; also the update probability q", false},
    {"a", 0.1, 1e-12, 1e6, "height of the exponential tails", false},
    {"steps", 10000, 1, 1e13, "measured steps (after the transient)", false},
    {"transient", 1000, 0, 1e13, "steps discarded before measuring", false},
    {"xi", 0, 0, INFINITY, "element growth parameter mu / P (derived)", true},
    {"X1", 0, -INFINITY, INFINITY, "upper junction (derived)", true},
    {"X2", 0, -INFINITY, INFINITY, "lower junction (derived)", true},
};

static const char *const state_names[] = {"x"};
static const double initial[] = {0.3};

static int prepare(double *p, tf_error *err) {
  static const char *const names[] = {"N", "mu", "P", "a", "steps", "transient"};
  const int whole[] = {N, STEPS, TRANSIENT};
  for (int i = 0; i < 3; i++)
    if (p[whole[i]] != floor(p[whole[i]]))
      return tf_model_fail(err, "%s = %g must be a whole number", names[whole[i]], p[whole[i]]);
  const double xi = p[MU] / p[P], disc = xi * xi - 4.0 * p[A] * xi;
  if (!(disc >= 0))
    return tf_model_fail(
        err,
        "X1,2 = (xi +- sqrt(xi^2 - 4 a xi)) / (2 xi) are not real: xi = mu / P = %g "
        "< 4 a = %g (raise mu, lower P or lower a)",
        xi, 4.0 * p[A]);
  p[XI] = xi;
  p[X1] = (xi + sqrt(disc)) / (2.0 * xi);
  p[X2] = (xi - sqrt(disc)) / (2.0 * xi);
  return 0;
}

static int map(const double *x, const double *p, double *out) {
  const double v = x[0];
  out[0] = v >= p[X1]   ? p[A] * exp(p[X1] - v)
           : v <= p[X2] ? p[A] * exp(v - p[X2])
                        : p[XI] * v * (1.0 - v);
  return 0;
}

static void map_jacobian(const double *x, const double *p, double *j) {
  const double v = x[0];
  j[0] = v >= p[X1]   ? -p[A] * exp(p[X1] - v)
         : v <= p[X2] ? p[A] * exp(v - p[X2])
                      : p[XI] * (1.0 - 2.0 * v);
}

static const tf_devs_ops ops = {
    TF_OPS_SIZE(tf_devs_ops),
    .map = map,
    .map_jacobian = map_jacobian,
    .n = N,
    .q = P,
    .steps = STEPS,
    .transient = TRANSIENT,
    .initial_min = 0.0,
    .initial_max = 1.0,
};

const tf_model_def tf_kernel_devs_load = {
    TF_MODEL_HEAD,
    .name = "devs-load",
    .doc =
        "DEVS friction model: N spots, contact probability P, element xi x(1-x) with "
        "exponential tails",
    .kind = TF_MODEL_DEVS,
    .dim = 1,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .prepare = prepare,
    .devs = &ops,
};
