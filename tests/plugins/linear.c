/* linear.c — two out-of-tree models in one library, for the plugin tests (so model.name
 * is needed to choose):
 *  - "linear3": the flow x' = A x with A = [[a, 0, 0], [s, b, 0], [0, s, c]], whose exact
 *    solution is expm(A t) x0 and whose Lyapunov exponents are a, b, c (the eigenvalues; lower
 *    triangular, so that the engine's QR starting from the identity has to turn the tangent
 *    vectors towards the eigenvectors instead of reading the diagonal off at once);
 *  - "quadratic-map": x -> 4 x (1 - x) (conjugate to the tent map, Lyapunov exponent ln 2),
 *    given without its Jacobian so the engine differentiates it. */
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

static void linear_rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = p[A] * x[0];
  dx[1] = p[S] * x[0] + p[B] * x[1];
  dx[2] = p[S] * x[1] + p[C] * x[2];
}

static void linear_jacobian(double t, const double *x, const double *p, double *j) {
  (void)t, (void)x;
  j[0] = p[A], j[1] = 0, j[2] = 0;
  j[3] = p[S], j[4] = p[B], j[5] = 0;
  j[6] = 0, j[7] = p[S], j[8] = p[C];
}

static const tf_flow_ops linear_ops = {.rhs = linear_rhs, .jacobian = linear_jacobian};

static const tf_model_def linear3 = {
    .abi = TWOFOLD_MODEL_ABI,
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

static void quadratic(const double *x, const double *p, double *out) {
  (void)p;
  out[0] = 4.0 * x[0] * (1.0 - x[0]);
}

static const tf_map_ops map_ops = {.map = quadratic};

static const tf_model_def quadratic_map = {
    .abi = TWOFOLD_MODEL_ABI,
    .name = "quadratic-map",
    .doc = "x -> 4 x (1 - x)",
    .kind = TF_MODEL_MAP,
    .dim = 1,
    .state_names = map_names,
    .initial = map_initial,
    .map = &map_ops,
};

TWOFOLD_MODELS(&linear3, &quadratic_map);
