/* model_check.h — `twofold model check`: what a model claims, checked before anything runs.
 *
 * A wrong hand-written Jacobian does not crash anything: it silently gives wrong Lyapunov
 * exponents, wrong saltation and slow implicit steps.  So a model (built-in or plugin) is
 * evaluated at the config's initial state and every derivative it provides is compared with
 * central differences of the function it differentiates, entry by entry. */
#ifndef TF_MODEL_CHECK_H
#define TF_MODEL_CHECK_H

#include <stdio.h>

#include "kernel.h"

/* Relative error per entry above which a derivative check fails: |A - D| over the larger of
 * |A|, |D| and 1e-3 of the largest entry (so that entries that should be 0 are judged on the
 * matrix's scale, where central differences leave ~1e-10). */
#define TF_MODEL_CHECK_TOL 1e-5

/* Prints the report for kernel k with parameters p at (t, x) to out.  Returns the number of
 * failed checks (0: all passed). */
int tf_model_check(const tf_kernel *k, const char *origin, const double *p, double t,
                   const double *x, FILE *out);

#endif
