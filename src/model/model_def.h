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

/* True if a struct of `size` bytes (its own `size` member) holds `member` of `type`: the one
 * test of whether a model compiled against an older header has a member. */
#define TF_SIZE_COVERS(size, type, member) \
  ((size) >= offsetof(type, member) + sizeof(((type *)0)->member))

/* The definition as the engine reads it (*out, allocated for the life of the process): the
 * model's definition and tables copied as far as their sizes cover, the members appended
 * since (unknown to the model) NULL or 0.  A size of 0 or beyond this header's is an error
 * naming the table. */
int tf_model_def_adopt(const tf_model_def *def, const char *origin, const tf_model_def **out,
                       tf_error *err);
/* Frees an adopted definition (NULL: nothing); loaded models keep theirs for the process. */
void tf_model_def_release(const tf_model_def *adopted);

#endif
