/* model_def.h — the one checker of model definitions, plugins' and built-ins' alike.
 *
 * The engine runs on the public tf_model_def itself (kernel.h), so a definition is
 * validated completely before it is used: a plugin's mistakes must surface as a message
 * naming the field, never as a crash deep inside an integrator.  Built-ins pass the same
 * checker (tests/unit/test_model_def.c). */
#ifndef TF_MODEL_DEF_H
#define TF_MODEL_DEF_H

#include "kernel.h"
#include "max_dim.h"
#include "twofold/model.h"

/* The engine's limits on what a model may declare besides its dimension (TF_MAX_DIM). */
enum { TF_MODEL_MAX_PARAMS = 64, TF_MODEL_MAX_EXTRA = 16 };

/* 0 if `def` is a valid definition, else -1 with err naming the field; `origin` (e.g.
 * "library 'm.so'") starts every error message. */
int tf_model_def_check(const tf_model_def *def, const char *origin, tf_error *err);

#endif
