/* broken.c — faulty plugins for the error-path tests, one per macro:
 *   BAD_ABI        exports an ABI number this twofold does not have
 *   ABI_2          exports ABI 2, the layout before the size fields
 *   NO_ABI         exports the model list but no ABI number
 *   KIND_MISMATCH  declares a Filippov model but gives a flow table
 *   BAD_DEFAULT    a parameter default outside its bounds
 *   NAME_CLASH     a model named like a built-in one
 *   DUPLICATE      the same model listed twice
 *   WRONG_JACOBIAN a flow whose Jacobian has one wrong entry (model check must say FAIL)
 *   NAN_FIELD      a flow whose field is NaN for x > 1 (members there fail, others go on)
 * The models are otherwise the decaying flow x' = -r x. */
#include <math.h>

#include "twofold/model.h"

static const tf_param params[] = {
#ifdef BAD_DEFAULT
    {"r", 5.0, 0.0, 2.0, "decay rate", false},
#else
    {"r", 1.0, 0.0, 2.0, "decay rate", false},
#endif
};
static const char *const names[] = {"x", "y"};
static const double initial[] = {1.0, 0.5};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
#ifdef NAN_FIELD
  if (x[0] > 1.0) {
    dx[0] = dx[1] = NAN;
    return 0;
  }
#endif
  dx[0] = -p[0] * x[0] + x[1] * x[1];
  dx[1] = -p[0] * x[1];
  return 0;
}

static void jacobian(double t, const double *x, const double *p, double *j) {
  (void)t;
  j[0] = -p[0];
#ifdef WRONG_JACOBIAN
  j[1] = x[1]; /* should be 2 x[1] */
#else
  j[1] = 2 * x[1];
#endif
  j[2] = 0, j[3] = -p[0];
}

static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs, .jacobian = jacobian};

static const tf_model_def def = {
    TF_MODEL_HEAD,
#ifdef NAME_CLASH
    .name = "lorenz",
#else
    .name = "decay",
#endif
    .doc = "x' = -r x + y^2, y' = -r y",
#ifdef KIND_MISMATCH
    .kind = TF_MODEL_FILIPPOV,
#else
    .kind = TF_MODEL_FLOW,
#endif
    .dim = 2,
    .state_names = names,
    .initial = initial,
    .nparams = 1,
    .params = params,
    .flow = &ops,
};

#if defined(BAD_ABI)
const int twofold_model_abi = TWOFOLD_MODEL_ABI + 98;
const tf_model_def *const twofold_model_list[] = {&def, NULL};
#elif defined(ABI_2)
const int twofold_model_abi = 2;
const tf_model_def *const twofold_model_list[] = {&def, NULL};
#elif defined(DUPLICATE)
TWOFOLD_MODELS(&def, &def);
#elif defined(NO_ABI)
const tf_model_def *const twofold_model_list[] = {&def, NULL};
#else
TWOFOLD_MODELS(&def);
#endif
