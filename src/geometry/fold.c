/* fold.c — see fold.h.  Small dense linear algebra (n <= 16) by GSL's LU; eigenvalues by
 * gsl_eigen_nonsymm. */
#include "fold.h"

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <string.h>

#include "kinds.h"
#include "ode.h"

enum { N1 = TF_MAX_DIM + 1 };

tf_fold_options tf_fold_default_options(void) {
  tf_fold_options o = {.step = 1e-3,
                       .step_max = 0.05,
                       .tol = 1e-12,
                       .max_newton = 12,
                       .p_min = -INFINITY,
                       .p_max = INFINITY};
  return o;
}

int tf_fold_problem_init(tf_fold_problem *pb, const tf_kernel *k, const double *params, int ip) {
  memset(pb, 0, sizeof *pb);
  if (!tf_model_rhs(k) || k->dim > TF_MAX_DIM || k->nparams > TF_FOLD_MAX_PARAMS || ip < 0 ||
      (size_t)ip >= k->nparams)
    return -1;
  pb->k = k, pb->n = k->dim, pb->ip = ip;
  memcpy(pb->params, params, k->nparams * sizeof *params);
  return 0;
}

static void field(tf_fold_problem *pb, const double *y, double *f) {
  pb->params[pb->ip] = y[pb->n];
  tf_model_rhs(pb->k)(pb->t, y, pb->params, f);
}

/* Column j of dF/d(x, p) by a central difference with step h. */
static void column(tf_fold_problem *pb, const double *y, size_t j, double h, double *col) {
  const size_t n = pb->n;
  double yp[N1], fp[TF_MAX_DIM], fm[TF_MAX_DIM];
  memcpy(yp, y, (n + 1) * sizeof *y);
  yp[j] = y[j] + h;
  field(pb, yp, fp);
  yp[j] = y[j] - h;
  field(pb, yp, fm);
  for (size_t i = 0; i < n; i++) col[i] = (fp[i] - fm[i]) / (2 * h);
}

/* J = dF/d(x, p), n x (n + 1), row-major with stride n + 1.  The step is 6e-6 of each value
 * (round-off and truncation balanced); for a value near zero (below 1e-6 of the state's
 * size) the field may still vary on a much smaller scale (the direction of a small slip
 * vector), so the column is also taken with a floor 1000 times smaller and that one is used
 * where the two differ by more than the fine one's round-off. */
static void jacobian(tf_fold_problem *pb, const double *y, double *J) {
  const size_t n = pb->n;
  double scale = 0, fsize = 0, col[TF_MAX_DIM], fine[TF_MAX_DIM], f[TF_MAX_DIM];
  for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(y[i]));
  field(pb, y, f);
  for (size_t i = 0; i < n; i++) fsize = fmax(fsize, fabs(f[i]));
  fsize = fmax(fsize, 1.0); /* the size of the terms F is a sum of, at a zero of F */
  for (size_t j = 0; j <= n; j++) {
    const double s = j < n ? scale : fmax(1.0, fabs(y[j]));
    column(pb, y, j, 6e-6 * fmax(fabs(y[j]), fmax(1e-6 * s, 1e-300)), col);
    if (fabs(y[j]) < 1e-6 * s) {
      const double h = 6e-6 * fmax(fabs(y[j]), fmax(1e-9 * s, 1e-300));
      column(pb, y, j, h, fine);
      double diff = 0;
      for (size_t i = 0; i < n; i++) diff = fmax(diff, fabs(fine[i] - col[i]));
      /* the fine column's round-off is about 1e-16 |F| / h; a larger difference is the
       * coarse step's truncation */
      if (diff > 1e-13 * fsize / h) memcpy(col, fine, n * sizeof *col);
    }
    for (size_t i = 0; i < n; i++) J[i * (n + 1) + j] = col[i];
  }
  pb->params[pb->ip] = y[n];
}

/* Solves the (n+1) x (n+1) system [J; r^T] z = b; 0 if regular. */
static int bordered_solve(size_t n, const double *J, const double *r, const double *b, double *z) {
  const size_t m = n + 1;
  double a[N1 * N1];
  memcpy(a, J, n * m * sizeof *J);
  memcpy(a + n * m, r, m * sizeof *r);
  gsl_matrix_view A = gsl_matrix_view_array(a, m, m);
  gsl_vector_const_view B = gsl_vector_const_view_array(b, m);
  gsl_vector_view Z = gsl_vector_view_array(z, m);
  gsl_permutation *perm = gsl_permutation_alloc(m);
  int sign, rc = gsl_linalg_LU_decomp(&A.matrix, perm, &sign);
  if (rc == 0) {
    double amax = 0;
    for (size_t i = 0; i < m; i++) amax = fmax(amax, fabs(gsl_matrix_get(&A.matrix, i, i)));
    for (size_t i = 0; i < m && rc == 0; i++)
      if (!(fabs(gsl_matrix_get(&A.matrix, i, i)) > 1e-14 * amax)) rc = -1;
  }
  if (rc == 0) rc = gsl_linalg_LU_solve(&A.matrix, perm, &B.vector, &Z.vector);
  gsl_permutation_free(perm);
  return rc ? -1 : (tf_state_finite(z, m) ? 0 : -1);
}

/* Unit tangent of the branch at y, oriented along ref. */
static int tangent(size_t n, const double *J, const double *ref, double *tau) {
  double b[N1] = {0};
  b[n] = 1.0;
  if (bordered_solve(n, J, ref, b, tau)) return -1;
  double norm = 0;
  for (size_t i = 0; i <= n; i++) norm += tau[i] * tau[i];
  norm = sqrt(norm);
  for (size_t i = 0; i <= n; i++) tau[i] /= norm;
  return 0;
}

static double max_real_eigenvalue(size_t n, const double *J) {
  double a[TF_MAX_DIM * TF_MAX_DIM];
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) a[i * n + j] = J[i * (n + 1) + j];
  gsl_matrix_view A = gsl_matrix_view_array(a, n, n);
  gsl_vector_complex *ev = gsl_vector_complex_alloc(n);
  gsl_eigen_nonsymm_workspace *w = gsl_eigen_nonsymm_alloc(n);
  double m = NAN;
  if (gsl_eigen_nonsymm(&A.matrix, ev, w) == 0) {
    m = -INFINITY;
    for (size_t i = 0; i < n; i++) m = fmax(m, GSL_REAL(gsl_vector_complex_get(ev, i)));
  }
  gsl_eigen_nonsymm_free(w);
  gsl_vector_complex_free(ev);
  return m;
}

static bool converged(size_t m, const double *dy, const double *y, double tol) {
  double d = 0, s = 1;
  for (size_t i = 0; i < m; i++) d = fmax(d, fabs(dy[i])), s = fmax(s, fabs(y[i]));
  return d <= tol * s;
}

/* A converged step is not enough where the field's derivatives blow up (a slip velocity
 * going to zero): the residual itself must be small. */
static bool on_branch(tf_fold_problem *pb, const double *y, const tf_fold_options *o) {
  double f[TF_MAX_DIM], r = 0, s = 1;
  field(pb, y, f);
  for (size_t i = 0; i < pb->n; i++) r = fmax(r, fabs(f[i])), s = fmax(s, fabs(y[i]));
  return r <= 1e3 * o->tol * s;
}

int tf_fold_stationary(tf_fold_problem *pb, double p, double *x, const tf_fold_options *o) {
  const size_t n = pb->n;
  double y[N1], J[TF_MAX_DIM * N1], f[N1], dy[N1], r[N1] = {0};
  memcpy(y, x, n * sizeof *x);
  y[n] = p;
  r[n] = 1.0; /* the border fixes p */
  for (int it = 0; it < o->max_newton; it++) {
    field(pb, y, f);
    jacobian(pb, y, J);
    f[n] = 0.0;
    for (size_t i = 0; i < n; i++) f[i] = -f[i];
    if (bordered_solve(n, J, r, f, dy)) return -1;
    for (size_t i = 0; i < n; i++) y[i] += dy[i];
    if (converged(n, dy, y, o->tol) && on_branch(pb, y, o)) {
      memcpy(x, y, n * sizeof *x);
      return 0;
    }
  }
  return -1;
}

/* Newton on (F(y), tau . (y - pred)) = 0 from pred; fills the point (tangent along tau). */
static int correct(tf_fold_problem *pb, const double *pred, const double *tau,
                   const tf_fold_options *o, tf_fold_point *pt) {
  const size_t n = pb->n;
  double y[N1], J[TF_MAX_DIM * N1], f[N1], dy[N1];
  memcpy(y, pred, (n + 1) * sizeof *y);
  for (int it = 0; it < o->max_newton; it++) {
    field(pb, y, f);
    jacobian(pb, y, J);
    double along = 0;
    for (size_t i = 0; i <= n; i++) along += tau[i] * (y[i] - pred[i]);
    for (size_t i = 0; i < n; i++) f[i] = -f[i];
    f[n] = -along;
    if (bordered_solve(n, J, tau, f, dy)) return -1;
    for (size_t i = 0; i <= n; i++) y[i] += dy[i];
    if (!converged(n + 1, dy, y, o->tol)) continue;
    if (!on_branch(pb, y, o)) return -1;
    jacobian(pb, y, J);
    if (tangent(n, J, tau, pt->tangent)) return -1;
    memcpy(pt->x, y, n * sizeof *y);
    pt->p = y[n];
    pt->max_real = max_real_eigenvalue(n, J);
    pt->fold = false;
    return 0;
  }
  return -1;
}

static void predictor(size_t n, const tf_fold_point *a, double ds, double *pred) {
  for (size_t i = 0; i < n; i++) pred[i] = a->x[i] + ds * a->tangent[i];
  pred[n] = a->p + ds * a->tangent[n];
}

typedef struct arc {
  tf_fold_problem *pb;
  const tf_fold_point *a;
  const tf_fold_options *o;
  tf_fold_point at; /* the point of the last evaluation */
  bool failed;
} arc;

/* The tangent's p-component at the point reached from arc->a by arclength s. */
static double p_component(double s, void *ctx) {
  arc *c = ctx;
  double pred[N1];
  predictor(c->pb->n, c->a, s, pred);
  if (correct(c->pb, pred, c->a->tangent, c->o, &c->at)) {
    c->failed = true;
    return NAN;
  }
  return c->at.tangent[c->pb->n];
}

/* Brent (GSL) on the tangent's p-component along the arc from a, between 0 and s1 where it
 * changes sign. */
static int locate(tf_fold_problem *pb, const tf_fold_point *a, double s1, const tf_fold_options *o,
                  tf_fold_point *out) {
  arc c = {.pb = pb, .a = a, .o = o};
  const double f1 = p_component(s1, &c);
  if (c.failed || f1 * a->tangent[pb->n] > 0) return -1;
  gsl_function fn = {p_component, &c};
  gsl_root_fsolver *root = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  gsl_error_handler_t *handler = gsl_set_error_handler_off(); /* NaN: a failed corrector */
  double lo = fmin(0.0, s1), hi = fmax(0.0, s1);
  int rc = gsl_root_fsolver_set(root, &fn, lo, hi);
  for (int it = 0; rc == GSL_SUCCESS && it < 200 && !c.failed; it++) {
    rc = gsl_root_fsolver_iterate(root);
    lo = gsl_root_fsolver_x_lower(root), hi = gsl_root_fsolver_x_upper(root);
    if (hi - lo <= 4e-16 * fabs(s1)) break;
  }
  gsl_set_error_handler(handler);
  gsl_root_fsolver_free(root);
  if (rc != GSL_SUCCESS || c.failed) return -1;
  p_component(0.5 * (lo + hi), &c);
  if (c.failed) return -1;
  *out = c.at;
  out->fold = true;
  return 0;
}

long tf_fold_continue(tf_fold_problem *pb, double p0, const double *x0, int dir,
                      const tf_fold_options *o, tf_fold_point *branch, size_t cap,
                      tf_fold_end *end) {
  const size_t n = pb->n;
  if (cap == 0) return 0;
  double ref[N1] = {0}, pred[N1];
  ref[n] = dir >= 0 ? 1.0 : -1.0;
  tf_fold_point cur;
  memcpy(pred, x0, n * sizeof *x0);
  pred[n] = p0;
  if (correct(pb, pred, ref, o, &cur)) return -1;
  size_t count = 0;
  branch[count++] = cur;
  double ds = o->step;
  *end = TF_FOLD_END_POINTS;
  while (count < cap) {
    if (cur.p < o->p_min || cur.p > o->p_max) {
      *end = TF_FOLD_END_RANGE;
      break;
    }
    tf_fold_point next;
    predictor(n, &cur, ds, pred);
    if (correct(pb, pred, cur.tangent, o, &next)) {
      ds *= 0.5;
      if (ds < 1e-6 * o->step) {
        *end = TF_FOLD_END_STALLED;
        break;
      }
      continue;
    }
    if (next.tangent[n] * cur.tangent[n] < 0) {
      tf_fold_point f;
      if (locate(pb, &cur, ds, o, &f) == 0 && count < cap) branch[count++] = f;
    }
    cur = next;
    if (count < cap) branch[count++] = cur;
    ds = fmin(o->step_max, ds * 1.3);
  }
  return (long)count;
}

int tf_fold_follow(tf_fold_problem *pb, const tf_fold_point *near, double reach,
                   const tf_fold_options *o, tf_fold_point *out) {
  const size_t n = pb->n;
  double pred[N1];
  tf_fold_point start;
  predictor(n, near, 0.0, pred);
  if (correct(pb, pred, near->tangent, o, &start)) return -1;
  /* walk both ways from the new branch point in growing steps */
  for (double s = reach / 64; s <= reach; s *= 2)
    for (int way = -1; way <= 1; way += 2) {
      tf_fold_point end;
      predictor(n, &start, way * s, pred);
      if (correct(pb, pred, start.tangent, o, &end)) continue;
      if (end.tangent[n] * start.tangent[n] <= 0 && locate(pb, &start, way * s, o, out) == 0)
        return 0;
    }
  return -1;
}
