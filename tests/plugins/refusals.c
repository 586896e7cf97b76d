/* refusals.c — models that use the int returns of field callbacks, and one compiled as if
 * against an older header (tests/scripts/model_refusals.py):
 *   old-decay    x' = -r x, its definition and table shorter than this header's: the size
 *                fields end before `failure` and before `diffusion`, and the members past them
 *                hold garbage the engine must never read (as memory after an older plugin's
 *                struct would)
 *   sqrt-decay   x' = -sqrt(x), refusing x < 0 (outside its domain: the step is retried)
 *   ceiling      x' = r x, failing fatally (code -7) once x > 1.5, with its message
 *   ceiling-filippov  the same field as the slip field of a Filippov model (its switching
 *                surface x = 10 is never reached), for the event-driven route */
#include <math.h>
#include <stddef.h>

#include "twofold/model.h"

static const char *const names[] = {"x"};
static const double one[] = {1.0};
static const tf_param rate[] = {{"r", 1.0, 0.0, 10.0, "rate", false}};

static int decay(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = -p[0] * x[0];
  return 0;
}

/* tf_flow_ops as an older header could have had it: rhs and jacobian only */
static const tf_flow_ops old_ops = {
    .size = offsetof(tf_flow_ops, diffusion), .rhs = decay, .diffusion = (tf_field_fn *)1};

static const tf_model_def old_decay = {
    .size = offsetof(tf_model_def, failure),
    .abi = TWOFOLD_MODEL_ABI,
    .name = "old-decay",
    .kind = TF_MODEL_FLOW,
    .dim = 1,
    .state_names = names,
    .initial = one,
    .nparams = 1,
    .params = rate,
    .flow = &old_ops,
    .failure = (const char *(*)(int))1,
};

static int sqrt_decay(double t, const double *x, const double *p, double *dx) {
  (void)t, (void)p;
  if (x[0] < 0) return 1; /* nothing written: the engine must not use dx */
  dx[0] = -sqrt(x[0]);
  return 0;
}

static const tf_flow_ops sqrt_ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = sqrt_decay};

static const tf_model_def sqrt_model = {
    TF_MODEL_HEAD,        .name = "sqrt-decay", .kind = TF_MODEL_FLOW, .dim = 1,
    .state_names = names, .initial = one,       .flow = &sqrt_ops,
};

enum { ABOVE_CEILING = -7 };

static int growth(double t, const double *x, const double *p, double *dx) {
  (void)t;
  if (x[0] > 1.5) return ABOVE_CEILING;
  dx[0] = p[0] * x[0];
  return 0;
}

static const char *ceiling_failure(int code) {
  return code == ABOVE_CEILING ? "x rose above the calibrated range (x > 1.5)" : NULL;
}

static const tf_flow_ops growth_ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = growth};

static const tf_model_def ceiling = {
    TF_MODEL_HEAD,         .name = "ceiling",
    .kind = TF_MODEL_FLOW, .dim = 1,
    .state_names = names,  .initial = one,
    .nparams = 1,          .params = rate,
    .flow = &growth_ops,   .failure = ceiling_failure,
};

static double far_surface(const double *x, const double *p, double *grad) {
  (void)p;
  if (grad) grad[0] = 1.0;
  return x[0] - 10.0;
}

static int growth_slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)side;
  return growth(t, x, p, dx);
}

static const tf_filippov_ops growth_filippov = {TF_OPS_SIZE(tf_filippov_ops),
                                                .switching = far_surface, .slip = growth_slip};

static const tf_model_def ceiling_filippov = {
    TF_MODEL_HEAD,
    .name = "ceiling-filippov",
    .kind = TF_MODEL_FILIPPOV,
    .dim = 1,
    .state_names = names,
    .initial = one,
    .nparams = 1,
    .params = rate,
    .filippov = &growth_filippov,
    .failure = ceiling_failure,
};

TWOFOLD_MODELS(&old_decay, &sqrt_model, &ceiling, &ceiling_filippov);
