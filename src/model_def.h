/* model_def.h — a public model definition (include/twofold/model.h) as an engine kernel.
 *
 * The public interface gives each kind of model its own table of operations so that a model
 * written outside twofold states exactly what it provides; the engine works on the one
 * internal struct tf_kernel.  This adapter is the only place that knows both, so a change
 * of either side is made here once.  A definition is validated completely before it is
 * used: a plugin's mistakes must surface as a message naming the field, never as a crash
 * deep inside an integrator. */
#ifndef TF_MODEL_DEF_H
#define TF_MODEL_DEF_H

#include "kernel.h"
#include "max_dim.h"
#include "twofold/model.h"

/* The engine's limits on what a model may declare besides its dimension (TF_MAX_DIM). */
enum { TF_MODEL_MAX_PARAMS = 64, TF_MODEL_MAX_EXTRA = 16 };

/* Validates `def` and builds the kernel (malloc'd, lives for the process).  `origin` (e.g.
 * "library 'm.so'") starts every error message. */
int tf_kernel_from_def(const tf_model_def *def, const char *origin, const tf_kernel **k,
                       tf_error *err);

#endif
