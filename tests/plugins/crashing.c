/* crashing.c — a model that fails the process once x > 1.5, one way per macro or, without a
 * macro, per the parameter `way` (so one compiled object serves every way):
 *   SEGV   (way 1) writes through a null pointer
 *   ABORT  (way 2) calls abort()
 *   LOOP   (way 3) never returns
 *   EXIT   (way 4) calls exit(7)
 * Otherwise (way 0, the default) it is the decaying flow x' = -r x, which never fails. */
#include <stdlib.h>

#include "twofold/model.h"

#if defined(SEGV)
#define WAY 1
#elif defined(ABORT)
#define WAY 2
#elif defined(LOOP)
#define WAY 3
#elif defined(EXIT)
#define WAY 4
#else
#define WAY ((int)p[1])
#endif

static const tf_param params[] = {{"r", 1.0, 0.0, 2.0, "decay rate", false},
                                  {"way", 0.0, 0.0, 4.0, "how x > 1.5 fails (0: never)", false}};
static const char *const names[] = {"x"};
static const double initial[] = {1.0};

static void misbehave(int way) {
  if (way == 1) *(volatile int *)0 = 1;
  if (way == 2) abort();
  if (way == 3)
    for (volatile int spin = 1; spin;) {
    }
  if (way == 4) exit(7);
}

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  if (x[0] > 1.5) misbehave(WAY);
  dx[0] = -p[0] * x[0];
  return 0;
}

static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs};
static const tf_model_def def = {TF_MODEL_HEAD, .name = "crashing",   .kind = TF_MODEL_FLOW,
                                 .dim = 1,      .state_names = names, .initial = initial,
                                 .nparams = 2,  .params = params,     .flow = &ops};
TWOFOLD_MODELS(&def);
