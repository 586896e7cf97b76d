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
#include "max_dim.h"

typedef struct tf_observable tf_observable;

/* Parses `text` for model k.  NULL on a syntax error or an unknown name, with err saying
 * "column C: what" and the names known (the caller prefixes file, line and key), or on
 * running out of memory. */
tf_observable *tf_observable_parse(const tf_kernel *k, const char *text, tf_error *err);

/* The value at time t, state x (k's dim) and parameters p. */
double tf_observable_eval(tf_observable *o, double t, const double *x, const double *p);

void tf_observable_destroy(tf_observable *o);

/* Prepares the exact derivatives of o (expr.h: tf_expr_diff) for tf_observable_gradient.
 * Fails, err saying why (the caller prefixes file, line and key), if o names one of the
 * model's outputs: a C callback gives its value only. */
int tf_observable_differentiate(tf_observable *o, tf_error *err);

/* grad = do/dx (k's dim) at (t, x, p); returns do/dt.  After tf_observable_differentiate. */
double tf_observable_gradient(tf_observable *o, double t, const double *x, const double *p,
                              double *grad);

/* A reset map as text: new values of `count` state components (by index), each an expression
 * as above.  The texts belong to the caller (a config's strings). */
typedef struct tf_reset_spec {
  int count;
  int component[TF_MAX_DIM];
  const char *expr[TF_MAX_DIM];
} tf_reset_spec;

typedef struct tf_reset_map tf_reset_map;

/* Parses every expression of s for model k; NULL as tf_observable_parse (err about the first
 * expression that fails; the caller names its key). */
tf_reset_map *tf_reset_map_parse(const tf_kernel *k, const tf_reset_spec *s, tf_error *err);

/* out = the reset of (t, x, p): every expression evaluated on x before any is applied, the
 * components not named copied from x.  out and x may be the same array. */
void tf_reset_map_apply(tf_reset_map *r, double t, const double *x, const double *p, double *out);

/* tf_observable_differentiate for every expression of r. */
int tf_reset_map_differentiate(tf_reset_map *r, tf_error *err);

/* jac = dR/dx (dim x dim, row-major: identity rows for the components not named) and
 * rate = dR/dt (dim) at (t, x, p).  After tf_reset_map_differentiate. */
void tf_reset_map_jacobian(tf_reset_map *r, double t, const double *x, const double *p, double *jac,
                           double *rate);

void tf_reset_map_destroy(tf_reset_map *r);

#endif
