/* filippov.h — the local geometry of a Filippov system on its switching surface.
 *
 * For a kernel with switching function h and admissible fields f(x, lambda) on Sigma
 * (affine in lambda in [-1, 1]), everything the event machinery and the singularity
 * analysis need is derived here: the tangency functions L±(x) = h_x·f(x, ±1) (undivided,
 * so they stay well conditioned at a two-fold where the multiplier is 0/0), the sliding
 * multiplier, the sliding field, and the region of Sigma a point lies in. */
#ifndef TF_FILIPPOV_H
#define TF_FILIPPOV_H

#include "kernel.h"
#include "max_dim.h"

typedef enum tf_sigma_region {
  TF_SIGMA_CROSSING_UP,   /* both fields point to h > 0 */
  TF_SIGMA_CROSSING_DOWN, /* both fields point to h < 0 */
  TF_SIGMA_SLIDING,       /* attracting: L+ < 0 < L- */
  TF_SIGMA_ESCAPING,      /* repelling:  L- < 0 < L+ */
  TF_SIGMA_BOUNDARY       /* L+ = 0 or L- = 0 (fold, or two-fold if both) */
} tf_sigma_region;

/* f(x, lambda) on Sigma: the kernel's stick field, or the convex combination of slips. */
int tf_filippov_field(const tf_kernel *k, const double *p, const double *x, double lambda,
                      double *out);
/* L_side(x) = h_x(x)·f(x, side), side = ±1; NaN where the model refuses its field at x. */
double tf_filippov_tangency(const tf_kernel *k, const double *p, const double *x, int side);
/* Both tangencies at once (one gradient evaluation).  Returns the fields' joined refusal
 * (model.h), the refused side's tangency NaN. */
int tf_filippov_tangencies(const tf_kernel *k, const double *p, const double *x, double *lp,
                           double *lm);
/* Gradient of L_side by 4th-order central differences (n values). */
void tf_filippov_tangency_gradient(const tf_kernel *k, const double *p, const double *x, int side,
                                   double *grad);
tf_sigma_region tf_filippov_region(double lp, double lm);
const char *tf_sigma_region_name(tf_sigma_region r);

#endif
