/* observable.h — a number a user writes about a model's state, as text.
 *
 * Reductions of a member's end (output.reduce) and event functions (poincare.function) are
 * expressions in the language of model.equations (expr.h) of the state components by name,
 * the model's named outputs, its parameters and t, resolved in that order.  This is the one
 * place that binds those names to values, so every such expression means the same thing. */
#ifndef TF_OBSERVABLE_H
#define TF_OBSERVABLE_H

#include "error.h"
#include "kernel.h"

typedef struct tf_observable tf_observable;

/* Parses `text` for model k.  NULL on a syntax error or an unknown name, with err saying
 * "column C: what" and the names known (the caller prefixes file, line and key), or on
 * running out of memory. */
tf_observable *tf_observable_parse(const tf_kernel *k, const char *text, tf_error *err);

/* The value at time t, state x (k's dim) and parameters p. */
double tf_observable_eval(tf_observable *o, double t, const double *x, const double *p);

void tf_observable_destroy(tf_observable *o);

#endif
