/* model.h — the `model:` section of a config: which kernel, with which parameters.
 *
 * The kernel is a built-in (kernels/) or a plugin's model (plugin.h).
 * Every parameter of the kernel's table is read (default, bounds and all) so that the
 * config as run lists them; then the kernel's prepare() fills in derived parameters and
 * checks cross-parameter conditions.  Jobs state which kinds of kernel they accept. */
#ifndef TF_MODEL_H
#define TF_MODEL_H

#include <mpi.h>

#include "config.h"
#include "kernel.h"
#include "kinds.h"

typedef struct tf_model {
  const tf_kernel *kernel;
  double *params; /* kernel->nparams values, derived ones filled in */
} tf_model;

/* The kernel the section names: model.name among the built-ins, or a model of the plugin
 * given by model.library (a shared library) or model.source (a C file, compiled once into a
 * cache; collective over comm, the run's communicator, under MPI), with model.name optional
 * when the plugin has one model.  Relative paths are relative to the config file's directory.
 * Errors name file, line, key. */
int tf_model_kernel(tf_config *cfg, MPI_Comm comm, const tf_kernel **k, tf_error *err);
/* The same without an error: NULL if the section names no valid model (tf_model_from_config
 * then says why).  For jobs that choose their path by the kind of model before reading it. */
const tf_kernel *tf_model_peek(tf_config *cfg, MPI_Comm comm);

/* `kinds` is the set of kinds the job takes (kinds.h: TF_KIND_BIT, TF_KINDS_*); a model of
 * another kind is an error naming what the job takes.  `job` is used in that message. */
int tf_model_from_config(tf_model *model, tf_config *cfg, MPI_Comm comm, unsigned kinds,
                         const char *job, tf_error *err);
void tf_model_destroy(tf_model *model);

#endif
