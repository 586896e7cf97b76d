/* syntax_error.c — a model source that does not compile (a missing semicolon on line 9), for
 * the test that the compiler's messages reach the user with this file's name and line. */
#include "twofold/model.h"

static const char *const names[] = {"x"};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = -x[0] return 0;
}

static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs};
static const tf_model_def def = {TF_MODEL_HEAD, .name = "broken",     .kind = TF_MODEL_FLOW,
                                 .dim = 1,      .state_names = names, .flow = &ops};
TWOFOLD_MODELS(&def);
