/* kernel.h — what a model is inside the engine: the public tf_model_def, nothing more.
 *
 * Built-in models (one file in kernels/ each, defining `const tf_model_def tf_kernel_<file>`) are
 * written exactly like plugins, with one table of operations for their kind, so that the
 * engine has one model type and one checker (model_def.h) for both.  `tf_kernel` names that
 * type where the engine uses a model; which engine runs a kind, and the fields it reads, are
 * kinds.h's business.  The build generates the registry from the files in kernels/.
 *
 * Parameters are passed as a dense double array in the order of the parameter table. */
#ifndef TF_KERNEL_H
#define TF_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h" /* and twofold/model.h */

typedef tf_model_def tf_kernel;

/* The registry (generated). */
size_t tf_kernel_count(void);
const tf_kernel *tf_kernel_at(size_t i);
const tf_kernel *tf_kernel_find(const char *name);

/* Index of a state component by name, or -1. */
int tf_kernel_state_index(const tf_kernel *k, const char *name);

/* Index of a parameter by name, or -1. */
int tf_kernel_param_index(const tf_kernel *k, const char *name);

/* True if the model's noise is nonzero anywhere on the given state (checked at x). */
bool tf_kernel_is_noisy(const tf_kernel *k, const double *x, const double *p);

/* What a model's refusal means (twofold/model.h): the model's own message for a negative
 * code (its `failure`, where it has one), else "code N"; for a positive code, the state was
 * outside the model's domain where no smaller step could help. */
void tf_kernel_failure_message(const tf_kernel *k, int code, char *buf, size_t n);

/* Says on stderr that a member of k ended at t because the model refused (code != 0), and
 * returns TF_MEMBER_FAILED, the status the member ends with. */
int tf_kernel_member_failed(const tf_kernel *k, int code, double t);

/* "x,y,z": the state names joined by commas (for output attributes). */
void tf_join_state_names(const tf_kernel *k, char *buf, size_t n);

/* The state component `name` that config key `key` (a mapping keyed by component, such as
 * initial.sample.x or poincare.reset.v) stands for, or -1 with an error naming the file, line
 * and key and listing the model's components. */
typedef struct tf_config tf_config;
int tf_kernel_component_of_key(const tf_kernel *k, tf_config *cfg, const char *key,
                               const char *name, tf_error *err);

#endif
