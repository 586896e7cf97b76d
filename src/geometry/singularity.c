/* singularity.c — locating and classifying two-folds (see singularity.h). */
#include "singularity.h"
#include "ode.h"
#include "vec.h"

#include <gsl/gsl_linalg.h>
#include <math.h>
#include <string.h>

/* (h, L+, L-) at x; the fields' refusal (model.h), L NaN where refused. */
static int residual(const tf_kernel *k, const double *p, const double *x, double *res) {
  res[0] = k->filippov->switching(x, p, NULL);
  return tf_filippov_tangencies(k, p, x, &res[1], &res[2]);
}

/* A search or analysis that met a refused field: it says so instead of deciding on it. */
static int refused_at(const tf_kernel *k, int code, const double *x, const char *what,
                      tf_error *err) {
  char why[256];
  tf_kernel_failure_message(k, code, why, sizeof why);
  return tf_fail(err, "%s: model '%s' refuses its slip field at (%g, %g, %g): %s", what, k->name,
                 x[0], x[1], x[2], why);
}

/* Rows: grad h, grad L+, grad L-. */
static void jacobian(const tf_kernel *k, const double *p, const double *x,
                     double jac[3][TF_MAX_DIM]) {
  k->filippov->switching(x, p, jac[0]);
  tf_filippov_tangency_gradient(k, p, x, +1, jac[1]);
  tf_filippov_tangency_gradient(k, p, x, -1, jac[2]);
}

/* Minimum-norm solution of J dx = -res: dx = J^T (J J^T)^{-1} (-res). */
static int newton_step(const double jac[3][TF_MAX_DIM], size_t n, const double *res, double *dx) {
  double a[9], b[3], y[3];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) a[3 * i + j] = tf_dot(jac[i], jac[j], n);
    b[i] = -res[i];
  }
  gsl_matrix_view A = gsl_matrix_view_array(a, 3, 3);
  gsl_vector_view B = gsl_vector_view_array(b, 3), Y = gsl_vector_view_array(y, 3);
  gsl_permutation *perm = gsl_permutation_alloc(3);
  int sign;
  int rc = gsl_linalg_LU_decomp(&A.matrix, perm, &sign);
  if (rc == 0 && fabs(gsl_linalg_LU_det(&A.matrix, sign)) > 0)
    rc = gsl_linalg_LU_solve(&A.matrix, perm, &B.vector, &Y.vector);
  else
    rc = -1;
  gsl_permutation_free(perm);
  if (rc) return -1;
  for (size_t i = 0; i < n; i++) dx[i] = jac[0][i] * y[0] + jac[1][i] * y[1] + jac[2][i] * y[2];
  return 0;
}

int tf_twofold_locate(const tf_kernel *k, const double *p, const double *guess, double tol,
                      int max_iter, double *x, int *iterations, tf_error *err) {
  const size_t n = k->dim;
  if (n < 3 || n > TF_MAX_DIM)
    return tf_fail_code(err, TF_ERR_CONFIG, "two-folds need 3 <= dim <= %d (model has %zu)",
                        TF_MAX_DIM, n);
  memcpy(x, guess, n * sizeof *x);
  double res[3], jac[3][TF_MAX_DIM], dx[TF_MAX_DIM];
  for (int it = 0; it <= max_iter; it++) {
    const int code = residual(k, p, x, res);
    if (code) return refused_at(k, code, x, "two-fold search", err);
    const double norm = sqrt(tf_dot(res, res, 3));
    if (!isfinite(norm)) break;
    if (norm < tol) {
      *iterations = it;
      return 0;
    }
    jacobian(k, p, x, jac);
    for (int r = 1; r < 3; r++) /* the slopes' differences take the fields next to x */
      if (!tf_state_finite(jac[r], n))
        return tf_fail(err,
                       "two-fold search: model '%s' refuses its slip field next to (%g, %g, "
                       "%g), where the search takes the slopes of L+ and L-",
                       k->name, x[0], x[1], x[2]);
    if (newton_step(jac, n, res, dx))
      return tf_fail(err,
                     "two-fold search: h, L+ and L- have dependent gradients near (%g, %g, %g) "
                     "(the fold lines do not cross transversally)",
                     x[0], x[1], x[2]);
    for (size_t i = 0; i < n; i++) x[i] += dx[i];
  }
  return tf_fail(err, "two-fold search from (%g, %g, %g) did not converge in %d Newton steps",
                 guess[0], guess[1], guess[2], max_iter);
}

static tf_twofold_class classify(tf_twofold *t) {
  if (t->K_pp == 0 || t->K_mm == 0) return TF_TWOFOLD_DEGENERATE;
  if (!(t->K_pp < 0 && t->K_mm > 0))
    return t->K_pp > 0 && t->K_mm < 0 ? TF_TWOFOLD_VISIBLE : TF_TWOFOLD_VISIBLE_INVISIBLE;
  const double product = t->J1 * t->J2;
  if (product == 1.0) return TF_TWOFOLD_DEGENERATE;
  if (product < 1.0) return TF_TWOFOLD_TEIXEIRA_CASE3;
  /* J1 J2 > 1 forces equal signs */
  return t->J1 < 0 ? TF_TWOFOLD_TEIXEIRA_CASE1 : TF_TWOFOLD_TEIXEIRA_CASE2;
}

int tf_twofold_analyze(const tf_kernel *k, const double *p, const double *x, tf_twofold *t,
                       tf_error *err) {
  const size_t n = k->dim;
  memset(t, 0, sizeof *t);
  memcpy(t->x, x, n * sizeof *x);
  const int code = tf_model_code_join(tf_filippov_field(k, p, x, +1, t->f_plus),
                                      tf_filippov_field(k, p, x, -1, t->f_minus));
  if (code) return refused_at(k, code, x, "two-fold analysis", err);
  tf_filippov_tangency_gradient(k, p, x, +1, t->grad_lp);
  tf_filippov_tangency_gradient(k, p, x, -1, t->grad_lm);
  if (!tf_state_finite(t->grad_lp, n) || !tf_state_finite(t->grad_lm, n))
    return tf_fail(err,
                   "two-fold analysis: model '%s' refuses its slip field next to (%g, %g, %g), "
                   "where the analysis takes the slopes of L+ and L-",
                   k->name, x[0], x[1], x[2]);
  t->K_pp = tf_dot(t->grad_lp, t->f_plus, n); /* eq (22) */
  t->K_pm = tf_dot(t->grad_lp, t->f_minus, n);
  t->K_mp = tf_dot(t->grad_lm, t->f_plus, n);
  t->K_mm = tf_dot(t->grad_lm, t->f_minus, n);
  t->teixeira = t->K_pp < 0 && 0 < t->K_mm; /* eq (27) */
  t->J1 = t->J2 = t->eigenvalues[0] = t->eigenvalues[1] = NAN;
  if (t->K_pp * t->K_mm < 0) { /* Teixeira or visible: the scaling of eq (30) is real */
    const double s = sqrt(-t->K_pp * t->K_mm);
    t->J1 = t->K_mp / s;
    t->J2 = -t->K_pm / s;
    const double disc = sqrt((t->J1 - t->J2) * (t->J1 - t->J2) + 4);
    t->eigenvalues[0] = 0.5 * (t->J1 + t->J2 + disc);
    t->eigenvalues[1] = 0.5 * (t->J1 + t->J2 - disc);
  }
  t->cls = classify(t);
  t->nondeterministic = t->cls == TF_TWOFOLD_TEIXEIRA_CASE1;
  return 0;
}

const char *tf_twofold_class_name(tf_twofold_class c) {
  switch (c) {
    case TF_TWOFOLD_TEIXEIRA_CASE1:
      return "teixeira-case1";
    case TF_TWOFOLD_TEIXEIRA_CASE2:
      return "teixeira-case2";
    case TF_TWOFOLD_TEIXEIRA_CASE3:
      return "teixeira-case3";
    case TF_TWOFOLD_VISIBLE:
      return "visible";
    case TF_TWOFOLD_VISIBLE_INVISIBLE:
      return "visible-invisible";
    case TF_TWOFOLD_DEGENERATE:
      return "degenerate";
  }
  return "?";
}
