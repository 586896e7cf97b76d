/* devs_logistic.c — DEVS of logistic maps (Feldstein & Kuzmin 1998, bifurcation section):
 * N elements x^k; at every step each follows x -> mu x (1 - x) with probability q and keeps
 * its value otherwise; the signal is X_i = sum_k x_i^k.
 *
 * The tangent dynamics of the whole state is diagonal, and every element samples the same
 * invariant measure between its updates, so lambda_1 of the full state tends to q times
 * the single map's exponent (slowly: the finite-time maximum over N elements dominates the
 * norm).  After the first period doubling each element sits on one of the two points of
 * the 2-cycle with its own phase, so X/N takes N + 1 values. */
#include <math.h>

#include "twofold/model.h"

enum { N, Q, MU, STEPS, TRANSIENT };

static const tf_param params[] = {
    {"N", 10, 1, 1e9, "number of elements", false},
    {"q", 0.5, 0.0, 1.0, "probability that an element follows the map at a step", false},
    {"mu", 3.9, 0.0, 4.0, "growth parameter of the logistic element", false},
    {"steps", 10000, 1, 1e13, "measured steps (after the transient)", false},
    {"transient", 1000, 0, 1e13, "steps discarded before measuring", false},
};

static const char *const state_names[] = {"x"};
static const double initial[] = {0.3};

static int prepare(double *p, tf_error *err) {
  static const char *const names[] = {"N", "q", "mu", "steps", "transient"};
  const int whole[] = {N, STEPS, TRANSIENT};
  for (int i = 0; i < 3; i++)
    if (p[whole[i]] != floor(p[whole[i]]))
      return tf_model_fail(err, "%s = %g must be a whole number", names[whole[i]], p[whole[i]]);
  return 0;
}

/* The element, written exactly as the engine's logistic tile computes it (declared below), so
 * the tile and this map through its pointer give the same bits. */
static int map(const double *x, const double *p, double *out) {
  out[0] = p[MU] * x[0] * (1.0 - x[0]);
  return 0;
}

static void map_jacobian(const double *x, const double *p, double *j) {
  j[0] = p[MU] * (1.0 - 2.0 * x[0]);
}

static const tf_devs_ops ops = {
    TF_OPS_SIZE(tf_devs_ops),
    .map = map,
    .map_jacobian = map_jacobian,
    .n = N,
    .q = Q,
    .steps = STEPS,
    .transient = TRANSIENT,
    .initial_min = 0.0,
    .initial_max = 1.0,
    .tile = TF_DEVS_TILE_LOGISTIC,
    .tile_param = MU,
};

const tf_model_def tf_kernel_devs_logistic = {
    TF_MODEL_HEAD,
    .name = "devs-logistic",
    .doc = "DEVS: N logistic maps, each updated with probability q per step",
    .kind = TF_MODEL_DEVS,
    .dim = 1,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .prepare = prepare,
    .devs = &ops,
};
