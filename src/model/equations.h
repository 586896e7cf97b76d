/* equations.h — a model written as equations in the config (`model.equations`), turned into C.
 *
 * Users who do not write C still need their own Filippov system or flow to run as fast as a
 * built-in kernel, with exact derivatives.  So the equations are not interpreted: they are
 * parsed (expr.h), differentiated symbolically, and printed as a C plugin in the format of
 * include/twofold/model.h, which the plugin loader compiles with twofold's own compiler and
 * flags.  Generated: rhs and its exact Jacobian, diagonal noise and dg_i/dx_i (flows); the
 * switching function with its exact gradient, the slip field of each side and its exact
 * Jacobian (Filippov); with `switching` a mapping of sign names, the switching functions with
 * their exact gradients and one field affine in the signs with its exact Jacobian at fixed
 * signs (several switching functions; the affinity is checked symbolically, since the engine
 * solves for the multipliers of sticking contacts as a linear system); the parameter table
 * with defaults, bounds and docs; state names; the default initial state.
 *
 * sign() of the state is refused in a Filippov model's fields and switching functions (a
 * switching surface hidden from the event detection) and warned about in a flow.
 *
 * The source depends only on the equations (not on the config's path or the locale), so an
 * unchanged model hashes to the same cache entry and is compiled once. */
#ifndef TF_EQUATIONS_H
#define TF_EQUATIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* True if the config gives its model as equations. */
bool tf_equations_present(const tf_config *cfg);

/* Reads model.equations (every key marked used) and returns the generated C source
 * (malloc'd) and the model's name (valid while cfg lives).  Errors name file:line, the key
 * and, inside an expression, the column.  Running out of memory is such an error too. */
int tf_equations_source(tf_config *cfg, char **source, const char **name, tf_error *err);

/* Warnings about a model that reads correctly: a flow whose field has sign() of the state (a
 * jump it will not locate; the message points to 'switching').  One line per equation, each
 * naming file:line, key and column, into text[0..n).  Returns how many (0 if none, if the
 * model does not read or if memory runs out). */
int tf_equations_warnings(tf_config *cfg, char *text, size_t n);

/* The same, written to dir/equations-<name>-<hash of the source>.c (created under a
 * temporary name and renamed into place, so concurrent writers of the same model are safe);
 * the file's path goes to path[0..n). */
int tf_equations_write(tf_config *cfg, const char *dir, char *path, size_t n, const char **name,
                       tf_error *err);

#endif
