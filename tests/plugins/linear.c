/* linear.c — several out-of-tree models in one library, for the plugin tests (so model.name
 * is needed to choose):
 *  - "linear3": the flow x' = A x with A = [[a, 0, 0], [s, b, 0], [0, s, c]], whose exact
 *    solution is expm(A t) x0 and whose Lyapunov exponents are a, b, c (the eigenvalues; lower
 *    triangular, so that the engine's QR starting from the identity has to turn the tangent
 *    vectors towards the eigenvectors instead of reading the diagonal off at once);
 *  - "quadratic-map": x -> 4 x (1 - x) (conjugate to the tent map, Lyapunov exponent ln 2),
 *    given without its Jacobian so the engine differentiates it;
 *  - "devs-growth": a DEVS of N elements x -> r x (1 - x), each updated with probability q per
 *    step, the same computation as the built-in devs-logistic (written the same way, so the
 *    engine's generic path must give the built-in's bits). */
#include <math.h>

#include "twofold/model.h"

enum { A, B, C, S };

static const tf_param linear_params[] = {
    {"a", -0.1, -INFINITY, INFINITY, "A[0][0]", false},
    {"b", -0.3, -INFINITY, INFINITY, "A[1][1]", false},
    {"c", -0.7, -INFINITY, INFINITY, "A[2][2]", false},
    {"s", 2.0, -INFINITY, INFINITY, "coupling below the diagonal", false},
};
static const char *const linear_names[] = {"x", "y", "z"};
static const double linear_initial[] = {1.0, -0.5, 0.25};

static int linear_rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = p[A] * x[0];
  dx[1] = p[S] * x[0] + p[B] * x[1];
  dx[2] = p[S] * x[1] + p[C] * x[2];
  return 0;
}

static void linear_jacobian(double t, const double *x, const double *p, double *j) {
  (void)t, (void)x;
  j[0] = p[A], j[1] = 0, j[2] = 0;
  j[3] = p[S], j[4] = p[B], j[5] = 0;
  j[6] = 0, j[7] = p[S], j[8] = p[C];
}

static const tf_flow_ops linear_ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = linear_rhs,
                                       .jacobian = linear_jacobian};

static const tf_model_def linear3 = {
    TF_MODEL_HEAD,
    .name = "linear3",
    .doc = "linear flow with a lower-triangular matrix",
    .kind = TF_MODEL_FLOW,
    .dim = 3,
    .state_names = linear_names,
    .initial = linear_initial,
    .nparams = sizeof linear_params / sizeof linear_params[0],
    .params = linear_params,
    .flow = &linear_ops,
};

static const char *const map_names[] = {"x"};
static const double map_initial[] = {0.3};

static int quadratic(const double *x, const double *p, double *out) {
  (void)p;
  out[0] = 4.0 * x[0] * (1.0 - x[0]);
  return 0;
}

static const tf_map_ops map_ops = {TF_OPS_SIZE(tf_map_ops), .map = quadratic};

static const tf_model_def quadratic_map = {
    TF_MODEL_HEAD, .name = "quadratic-map",  .doc = "x -> 4 x (1 - x)", .kind = TF_MODEL_MAP,
    .dim = 1,      .state_names = map_names, .initial = map_initial,    .map = &map_ops,
};

enum { DN, DQ, DR, DSTEPS, DTRANSIENT };

static const tf_param devs_params[] = {
    {"N", 10, 1, 1e9, "number of elements", false},
    {"q", 0.5, 0.0, 1.0, "probability that an element follows the map at a step", false},
    {"r", 3.9, 0.0, 4.0, "growth parameter of the element", false},
    {"steps", 10000, 1, 1e13, "measured steps (after the transient)", false},
    {"transient", 1000, 0, 1e13, "steps discarded before measuring", false},
};

static int growth(const double *x, const double *p, double *out) {
  out[0] = p[DR] * x[0] * (1.0 - x[0]);
  return 0;
}

static void growth_jacobian(const double *x, const double *p, double *j) {
  j[0] = p[DR] * (1.0 - 2.0 * x[0]);
}

static const tf_devs_ops devs_ops = {TF_OPS_SIZE(tf_devs_ops),
                                     .map = growth,
                                     .map_jacobian = growth_jacobian,
                                     .n = DN,
                                     .q = DQ,
                                     .steps = DSTEPS,
                                     .transient = DTRANSIENT,
                                     .initial_min = 0.0,
                                     .initial_max = 1.0};

static const tf_model_def devs_growth = {
    TF_MODEL_HEAD,
    .name = "devs-growth",
    .doc = "DEVS: N logistic elements, each updated with probability q per step",
    .kind = TF_MODEL_DEVS,
    .dim = 1,
    .state_names = map_names,
    .initial = map_initial,
    .nparams = sizeof devs_params / sizeof devs_params[0],
    .params = devs_params,
    .devs = &devs_ops,
};

TWOFOLD_MODELS(&linear3, &quadratic_map, &devs_growth);
