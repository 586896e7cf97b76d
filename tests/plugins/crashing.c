/* crashing.c — a model that fails the process, one way per macro, once x > 1.5:
 *   SEGV   writes through a null pointer
 *   ABORT  calls abort()
 *   LOOP   never returns
 * Without a macro it is the decaying flow x' = -r x, which never fails. */
#include <stdlib.h>

#include "twofold/model.h"

static const tf_param params[] = {{"r", 1.0, 0.0, 2.0, "decay rate", false}};
static const char *const names[] = {"x"};
static const double initial[] = {1.0};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  if (x[0] > 1.5) {
#if defined(SEGV)
    *(volatile int *)0 = 1;
#elif defined(ABORT)
    abort();
#elif defined(LOOP)
    for (volatile int spin = 1; spin;) {
    }
#endif
  }
  dx[0] = -p[0] * x[0];
  return 0;
}

static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs};
static const tf_model_def def = {TF_MODEL_HEAD, .name = "crashing",   .kind = TF_MODEL_FLOW,
                                 .dim = 1,      .state_names = names, .initial = initial,
                                 .nparams = 1,  .params = params,     .flow = &ops};
TWOFOLD_MODELS(&def);
