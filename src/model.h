/* model.h — the `model:` section of a config: which kernel, with which parameters.
 *
 * Every parameter of the kernel's table is read (default, bounds and all) so that the
 * config as run lists them; then the kernel's prepare() fills in derived parameters and
 * checks cross-parameter conditions.  Jobs state which kinds of kernel they accept. */
#ifndef TF_MODEL_H
#define TF_MODEL_H

#include "config.h"
#include "kernel.h"

typedef struct tf_model {
  const tf_kernel *kernel;
  double *params; /* kernel->nparams values, derived ones filled in */
} tf_model;

/* `kind` is the kernel kind the job needs; a model of another kind is an error naming the
 * job's need.  `job` is used in that message. */
int tf_model_from_config(tf_model *model, tf_config *cfg, tf_kernel_kind kind, const char *job,
                         tf_error *err);
void tf_model_destroy(tf_model *model);

#endif
