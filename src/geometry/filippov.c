/* filippov.c — see filippov.h.  Because f is affine in lambda, h_x·f(x, lambda) is affine
 * too, so L+ and L- determine it: h_x·f(x, lambda) = ((1 + lambda) L+ + (1 - lambda) L-)/2. */
#include "filippov.h"
#include "ode.h"
#include "vec.h"

#include <math.h>

int tf_filippov_field(const tf_kernel *k, const double *p, const double *x, double lambda,
                      double *out) {
  if (k->filippov->stick) return k->filippov->stick(0.0, x, lambda, p, out);
  double up[TF_MAX_DIM], down[TF_MAX_DIM];
  const int rc = tf_model_code_join(k->filippov->slip(0.0, x, +1, p, up),
                                    k->filippov->slip(0.0, x, -1, p, down));
  for (size_t i = 0; i < k->dim; i++)
    out[i] = 0.5 * (1 + lambda) * up[i] + 0.5 * (1 - lambda) * down[i];
  return rc;
}

double tf_filippov_tangency(const tf_kernel *k, const double *p, const double *x, int side) {
  double grad[TF_MAX_DIM], f[TF_MAX_DIM];
  k->filippov->switching(x, p, grad);
  if (tf_filippov_field(k, p, x, side, f)) return NAN;
  return tf_dot(grad, f, k->dim);
}

int tf_filippov_tangencies(const tf_kernel *k, const double *p, const double *x, double *lp,
                           double *lm) {
  double grad[TF_MAX_DIM], f[TF_MAX_DIM];
  k->filippov->switching(x, p, grad);
  const int rc_plus = tf_filippov_field(k, p, x, +1, f);
  *lp = rc_plus ? NAN : tf_dot(grad, f, k->dim);
  const int rc_minus = tf_filippov_field(k, p, x, -1, f);
  *lm = rc_minus ? NAN : tf_dot(grad, f, k->dim);
  return tf_model_code_join(rc_plus, rc_minus);
}

void tf_filippov_tangency_gradient(const tf_kernel *k, const double *p, const double *x, int side,
                                   double *grad) {
  double y[TF_MAX_DIM];
  for (size_t i = 0; i < k->dim; i++) y[i] = x[i];
  for (size_t i = 0; i < k->dim; i++) {
    /* step ~ eps^(1/5) balances the O(h^4) truncation and O(eps/h) round-off */
    const double step = 1e-3 * fmax(1.0, fabs(x[i]));
    double v[4];
    const double offsets[4] = {-2, -1, 1, 2};
    for (int j = 0; j < 4; j++) {
      y[i] = x[i] + offsets[j] * step;
      v[j] = tf_filippov_tangency(k, p, y, side);
    }
    y[i] = x[i];
    grad[i] = (v[0] - 8 * v[1] + 8 * v[2] - v[3]) / (12 * step);
  }
}

tf_sigma_region tf_filippov_region(double lp, double lm) {
  if (lp == 0.0 || lm == 0.0) return TF_SIGMA_BOUNDARY;
  if (lp < 0 && lm > 0) return TF_SIGMA_SLIDING;
  if (lp > 0 && lm < 0) return TF_SIGMA_ESCAPING;
  return lp > 0 ? TF_SIGMA_CROSSING_UP : TF_SIGMA_CROSSING_DOWN;
}

const char *tf_sigma_region_name(tf_sigma_region r) {
  switch (r) {
    case TF_SIGMA_CROSSING_UP:
      return "crossing-up";
    case TF_SIGMA_CROSSING_DOWN:
      return "crossing-down";
    case TF_SIGMA_SLIDING:
      return "sliding";
    case TF_SIGMA_ESCAPING:
      return "escaping";
    case TF_SIGMA_BOUNDARY:
      return "boundary";
  }
  return "?";
}
