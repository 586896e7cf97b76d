/* singularity.h — two-fold singularities of a Filippov system: where they are and what
 * kind they are (Szalai & Jeffrey 2014, section IV; Jeffrey & Colombo 2009).
 *
 * A two-fold is a point of Sigma where both fields are tangent to it:
 *     h(x) = 0,  L+(x) = h_x·f(x, +1) = 0,  L-(x) = h_x·f(x, -1) = 0.
 * Its type follows from the curvatures K^{ab} = grad(L_a)·f(x, b) (eq 22): Teixeira
 * (invisible from both sides) iff K++ < 0 < K--; then J1 = K-+/sqrt(-K++ K--) and
 * J2 = -K+-/sqrt(-K++ K--) (eq 30) split it into three cases, and case 1 (J1 < 0, J2 < 0,
 * J1 J2 > 1) makes the sliding flow enter the singularity and the future nonunique. */
#ifndef TF_SINGULARITY_H
#define TF_SINGULARITY_H

#include <stdbool.h>

#include "error.h"
#include "filippov.h"

typedef enum tf_twofold_class {
  TF_TWOFOLD_TEIXEIRA_CASE1, /* nondeterministic */
  TF_TWOFOLD_TEIXEIRA_CASE2,
  TF_TWOFOLD_TEIXEIRA_CASE3, /* J1 J2 < 1 */
  TF_TWOFOLD_VISIBLE,        /* K++ > 0 > K-- */
  TF_TWOFOLD_VISIBLE_INVISIBLE,
  TF_TWOFOLD_DEGENERATE /* a curvature vanishes or J1 J2 = 1 */
} tf_twofold_class;

typedef struct tf_twofold {
  double x[TF_MAX_DIM];
  double K_pp, K_pm, K_mp, K_mm;
  double J1, J2;         /* NaN unless Teixeira */
  double eigenvalues[2]; /* of [[J1, 1], [1, J2]] (eq 30), NaN unless Teixeira */
  double f_plus[TF_MAX_DIM], f_minus[TF_MAX_DIM];  /* f(x*, ±1) */
  double grad_lp[TF_MAX_DIM], grad_lm[TF_MAX_DIM]; /* grad L± at x* */
  bool teixeira, nondeterministic;
  tf_twofold_class cls;
} tf_twofold;

/* Newton (minimum-norm steps for dim > 3) on (h, L+, L-) = 0 from `guess`.  Fails with a
 * message if it does not converge to |residual| < tol within max_iter iterations, or if the
 * model refuses its slip field where the search needs it (naming the model and the point). */
int tf_twofold_locate(const tf_kernel *k, const double *p, const double *guess, double tol,
                      int max_iter, double *x, int *iterations, tf_error *err);

/* Curvatures, J1, J2, eigenvalues and the class at a two-fold x.  Fails with a message, and no
 * class, where the model refuses its slip field at x or next to it. */
int tf_twofold_analyze(const tf_kernel *k, const double *p, const double *x, tf_twofold *out,
                       tf_error *err);

const char *tf_twofold_class_name(tf_twofold_class c);

#endif
