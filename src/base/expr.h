/* expr.h — the expression language of models written as equations in a config.
 *
 * People who do not write C give their vector field as text ("-k*x - mu*sign(v)").  The
 * engine needs more than the field: exact Jacobians (for Lyapunov spectra and stiff solvers),
 * the switching function's gradient, dg/dx of noise.  So expressions are parsed into a tree
 * that can be differentiated symbolically and printed back as C, rather than interpreted.
 *
 * Grammar (usual precedence; ^ binds tighter than unary minus and is right-associative, so
 * -x^2 is -(x^2) and 2^3^2 is 2^9; ** is a synonym of ^):
 *   expr    = term {("+" | "-") term}
 *   term    = unary {("*" | "/") unary}
 *   unary   = ("-" | "+") unary | power
 *   power   = primary [("^" | "**") unary]
 *   primary = number | name | name "(" expr {"," expr} ")" | "(" expr ")"
 * Numbers are decimal (1, 0.5, .5, 2e-3); names are [A-Za-z_][A-Za-z0-9_]*, resolved against a
 * table given by the caller (states, parameters, t).
 *
 * Functions: sin cos tan asin acos atan sinh cosh tanh exp log sqrt abs sign (one argument),
 * atan2(y, x), pow(a, b), min(a, b), max(a, b).  Where a function is not differentiable the
 * derivative is the one that holds almost everywhere, extended by one side:
 *   d abs(u) = sign(u) du          (0 at u = 0)
 *   d sign(u) = 0                  (the jump is the switching surface's business, not the field's)
 *   d min(a, b) = a <= b ? da : db (a's side at a tie), max likewise with a >= b.
 *
 * Simplification while building: constant folding (when the result is finite), x+0, x-0,
 * 0-x, x*1, x*0 (0, even for x infinite: the field is assumed finite where it is used), x/1,
 * 0/x, x^1, x^0, -(-x). */
#ifndef TF_EXPR_H
#define TF_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef enum tf_expr_op {
  TF_EX_NUM,
  TF_EX_VAR,
  TF_EX_NEG,
  TF_EX_ADD,
  TF_EX_SUB,
  TF_EX_MUL,
  TF_EX_DIV,
  TF_EX_POW,
  TF_EX_CALL,
  TF_EX_SELECT /* arg[0] <= arg[1] ? arg[2] : arg[3] (derivatives of min and max) */
} tf_expr_op;

typedef enum tf_expr_fn {
  TF_FN_SIN,
  TF_FN_COS,
  TF_FN_TAN,
  TF_FN_ASIN,
  TF_FN_ACOS,
  TF_FN_ATAN,
  TF_FN_SINH,
  TF_FN_COSH,
  TF_FN_TANH,
  TF_FN_EXP,
  TF_FN_LOG,
  TF_FN_SQRT,
  TF_FN_ABS,
  TF_FN_SIGN,
  TF_FN_ATAN2,
  TF_FN_POW,
  TF_FN_MIN,
  TF_FN_MAX,
  TF_FN_COUNT
} tf_expr_fn;

typedef struct tf_expr {
  tf_expr_op op;
  double value;  /* TF_EX_NUM */
  int var;       /* TF_EX_VAR: index into the caller's name table */
  tf_expr_fn fn; /* TF_EX_CALL */
  int column;    /* 1-based column in the source text (0 for nodes made by derivation) */
  int nargs;
  struct tf_expr *arg[4];
} tf_expr;

/* Every node of a set of expressions lives in one pool, freed at once: derivatives share
 * subtrees with their expressions.  tf_expr_pool_new returns NULL if memory runs out.  A pool
 * that once could not grow has failed for good: every later parse and derivative from it
 * fails too (trees it made before stay valid). */
typedef struct tf_expr_pool tf_expr_pool;
tf_expr_pool *tf_expr_pool_new(void);
void tf_expr_pool_free(tf_expr_pool *pool);
int tf_expr_pool_failed(const tf_expr_pool *pool);

/* True if s is a name as the language reads one: a letter or '_', then letters, digits or
 * '_' (ASCII, in any locale). */
bool tf_expr_is_identifier(const char *s);

/* Name of a function as written, and its index (-1 if `name` is none). */
const char *tf_expr_fn_name(tf_expr_fn fn);
int tf_expr_fn_find(const char *name, size_t len);

/* Parses `text`; names[0..nnames) are the variables.  On error returns NULL and writes
 * "column C: what" to err (the caller prefixes file, line and key), or "out of memory while
 * compiling model equations" when the pool fails. */
tf_expr *tf_expr_parse(tf_expr_pool *pool, const char *text, const char *const *names,
                       size_t nnames, tf_error *err);

/* d e / d var, simplified; NULL when the pool fails (out of memory). */
tf_expr *tf_expr_diff(tf_expr_pool *pool, const tf_expr *e, int var);

/* True if e contains variable var. */
int tf_expr_depends(const tf_expr *e, int var);

/* Value with the variables' values vals[var]. */
double tf_expr_eval(const tf_expr *e, const double *vals);

/* Appends e as a C expression to a growable buffer (*buf, *len, *cap; realloc'd), variable
 * var printed as c_names[var] ("x[0]", "p[2]", "t").  Numbers are printed with "%.17g" and
 * always as double literals ("2.0", not "2"); the text never depends on the locale.  Uses
 * only <math.h> and `tf_eq_sign` (which the generated file defines).  Returns -1 only if
 * memory runs out. */
int tf_expr_emit(const tf_expr *e, const char *const *c_names, char **buf, size_t *len,
                 size_t *cap);

/* A double as a C literal that reads back exactly: "%.17g", ".0" added to integers; "(-...)"
 * for negatives.  Returns -1 if v is not finite or the text does not round-trip. */
int tf_expr_format_double(double v, char *out, size_t n);

#endif
