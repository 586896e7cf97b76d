/* smooth.c — see smooth.h.  Lambda is evaluated in forms that do not cancel: tanh and
 * u / sqrt(1 + u^2) stay accurate for large |u|, and their derivatives are written as
 * 1 - tanh^2 = sech^2 and (1 + u^2)^(-3/2). */
#include "smooth.h"

#include <math.h>
#include <string.h>

#include "filippov.h"
#include "ode.h"
#include "twofold/fast_math.h"

static const char *const law_names[] = {"tanh", "sqrt", "linear", NULL};
static const char *const field_names[] = {"convex", "stick", "regularised", NULL};

const char *tf_smooth_law_name(tf_smooth_law law) {
  return law_names[law];
}
const char *tf_smooth_field_name(tf_smooth_field field) {
  return field_names[field];
}

bool tf_smoothing_requested(const tf_config *cfg) {
  return tf_config_has(cfg, "model.smoothing");
}

int tf_smoothing_from_config(tf_config *cfg, const tf_kernel *k, tf_smoothing *s, tf_error *err) {
  static const char *const fields[] = {"auto", "convex", "stick", "regularised", NULL};
  const char *law, *field;
  char where[256];
  if (tf_config_get_string(cfg, "model.smoothing.law", "tanh", law_names, &law, err) ||
      tf_config_get_string(cfg, "model.smoothing.field", "auto", fields, &field, err))
    return -1;
  if (!tf_config_has(cfg, "model.smoothing.epsilon"))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.smoothing.epsilon': required (the width of the smoothing "
                        "layer about Sigma, a number > 0)",
                        tf_config_where(cfg, "model.smoothing.epsilon", where, sizeof where));
  if (tf_config_get_double(cfg, "model.smoothing.epsilon", NULL, 0.0, INFINITY, &s->epsilon, err))
    return -1;
  if (!(s->epsilon > 0) || !isfinite(s->epsilon))
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'model.smoothing.epsilon': expected a finite number > 0, got %g "
        "(epsilon = 0 is the discontinuous model: drop the smoothing section to run "
        "it event-driven)",
        tf_config_where(cfg, "model.smoothing.epsilon", where, sizeof where), s->epsilon);
  for (int i = 0; law_names[i]; i++)
    if (strcmp(law, law_names[i]) == 0) s->law = (tf_smooth_law)i;
  if (k->kind != TF_MODEL_FILIPPOV)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.smoothing': model '%s' is not a Filippov system; only "
                        "Filippov models can be smoothed",
                        tf_config_where(cfg, "model.smoothing", where, sizeof where), k->name);
  if (strcmp(field, "auto") == 0)
    s->field = k->filippov->regularised ? TF_SMOOTH_REGULARISED : TF_SMOOTH_CONVEX;
  else if (strcmp(field, "convex") == 0)
    s->field = TF_SMOOTH_CONVEX;
  else if (strcmp(field, "stick") == 0)
    s->field = TF_SMOOTH_STICK;
  else
    s->field = TF_SMOOTH_REGULARISED;
  if (s->field == TF_SMOOTH_STICK && !k->filippov->stick)
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'model.smoothing.field': model '%s' defines no sticking field; use "
        "convex",
        tf_config_where(cfg, "model.smoothing.field", where, sizeof where), k->name);
  if (s->field == TF_SMOOTH_REGULARISED && !k->filippov->regularised)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'model.smoothing.field': model '%s' defines no regularised field; "
                        "use convex%s",
                        tf_config_where(cfg, "model.smoothing.field", where, sizeof where), k->name,
                        k->filippov->stick ? " or stick" : "");
  if (k->dim > TF_MAX_DIM)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "model '%s': smoothing supports at most %d state components", k->name,
                        TF_MAX_DIM);
  return 0;
}

/* Lambda_eps(h) and, if d is not NULL, dLambda/du (u = h / eps): inlined, so that the field's
 * evaluations, which need only Lambda, skip the derivative's divisions. */
static inline __attribute__((always_inline)) double sign_of(const tf_smoothing *s, double h,
                                                            double *d) {
  const double u = h / s->epsilon;
  double lambda, du;
  switch (s->law) {
    case TF_SMOOTH_TANH:
      lambda = tanh(u);
      du = fabs(u) > 40 ? 0.0 : 1.0 / (cosh(u) * cosh(u));
      break;
    case TF_SMOOTH_SQRT: {
      const double r = sqrt(1.0 + u * u);
      lambda = isfinite(r) ? u / r : (u > 0 ? 1.0 : -1.0);
      du = isfinite(r) ? 1.0 / (r * r * r) : 0.0;
      break;
    }
    default:
      lambda = u > 1 ? 1.0 : u < -1 ? -1.0 : u;
      du = fabs(u) < 1 ? 1.0 : 0.0;
  }
  if (d) *d = du;
  return lambda;
}

double tf_smooth_sign(const tf_smoothing *s, double h, double *dlambda) {
  double d;
  const double lambda = sign_of(s, h, dlambda ? &d : NULL);
  if (dlambda) *dlambda = d / s->epsilon;
  return lambda;
}

/* f(x, lambda) of the chosen field. */
static int field_at(const tf_kernel *k, const double *p, tf_smooth_field field, double t,
                    const double *x, double lambda, double *dx) {
  if (field == TF_SMOOTH_REGULARISED) return k->filippov->regularised(t, x, lambda, p, dx);
  if (field == TF_SMOOTH_STICK) return k->filippov->stick(t, x, lambda, p, dx);
  double up[TF_MAX_DIM], down[TF_MAX_DIM];
  const int rc =
      tf_model_code_join(k->filippov->slip(t, x, +1, p, up), k->filippov->slip(t, x, -1, p, down));
  for (size_t i = 0; i < k->dim; i++)
    dx[i] = 0.5 * (1 + lambda) * up[i] + 0.5 * (1 - lambda) * down[i];
  return rc;
}

int tf_smooth_rhs(const tf_kernel *k, const double *p, const tf_smoothing *s, double t,
                  const double *x, double *dx) {
  const double lambda = sign_of(s, k->filippov->switching(x, p, NULL), NULL);
  return field_at(k, p, s->field, t, x, lambda, dx);
}

int tf_smooth_lambda_direction(const tf_kernel *k, const double *p, const tf_smoothing *s, double t,
                               const double *x, double *dir) {
  const double lambda = tf_smooth_sign(s, k->filippov->switching(x, p, NULL), NULL);
  if (s->field == TF_SMOOTH_REGULARISED && k->filippov->regularised_jacobian) {
    double jac[TF_MAX_DIM * TF_MAX_DIM];
    k->filippov->regularised_jacobian(t, x, lambda, p, jac, dir);
    return 0;
  }
  double a[TF_MAX_DIM], b[TF_MAX_DIM];
  if (s->field != TF_SMOOTH_REGULARISED) { /* affine in lambda: exact difference */
    const int rc = tf_model_code_join(field_at(k, p, s->field, t, x, 1.0, a),
                                      field_at(k, p, s->field, t, x, -1.0, b));
    for (size_t i = 0; i < k->dim; i++) dir[i] = 0.5 * (a[i] - b[i]);
    return rc;
  }
  const double step = 1e-6; /* central difference in lambda, O(step^2) */
  const int rc = tf_model_code_join(field_at(k, p, s->field, t, x, lambda + step, a),
                                    field_at(k, p, s->field, t, x, lambda - step, b));
  for (size_t i = 0; i < k->dim; i++) dir[i] = (a[i] - b[i]) / (2 * step);
  return rc;
}

bool tf_smooth_has_jacobian(const tf_kernel *k, const tf_smoothing *s) {
  return s->field == TF_SMOOTH_REGULARISED
             ? k->filippov->regularised_jacobian != NULL
             : s->field == TF_SMOOTH_CONVEX && k->filippov->slip_jacobian;
}

void tf_smooth_jacobian(const tf_kernel *k, const double *p, const tf_smoothing *s, double t,
                        const double *x, double *jac) {
  const size_t n = k->dim;
  double grad[TF_MAX_DIM], dlambda[TF_MAX_DIM], dl_dh;
  const double lambda = tf_smooth_sign(s, k->filippov->switching(x, p, grad), &dl_dh);
  if (s->field == TF_SMOOTH_CONVEX) { /* (1 + l)/2 J+ + (1 - l)/2 J- + (f+ - f-)/2 dl/dx */
    double jm[TF_MAX_DIM * TF_MAX_DIM], up[TF_MAX_DIM], down[TF_MAX_DIM];
    k->filippov->slip_jacobian(t, x, +1, p, jac);
    k->filippov->slip_jacobian(t, x, -1, p, jm);
    for (size_t i = 0; i < n * n; i++)
      jac[i] = 0.5 * (1 + lambda) * jac[i] + 0.5 * (1 - lambda) * jm[i];
    k->filippov->slip(t, x, +1, p, up);
    k->filippov->slip(t, x, -1, p, down);
    for (size_t i = 0; i < n; i++) dlambda[i] = 0.5 * (up[i] - down[i]);
  } else {
    k->filippov->regularised_jacobian(t, x, lambda, p, jac, dlambda);
  }
  /* chain rule through lambda = Lambda_eps(h(x)) */
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) jac[i * n + j] += dlambda[i] * dl_dh * grad[j];
}

bool tf_smooth_has_lanes(const tf_kernel *k, const tf_smoothing *s) {
  return s->field == TF_SMOOTH_CONVEX && k->filippov->slip_sides_lanes;
}

enum { LANES = TF_LANES_MAX };

/* sign_of's square-root law over the lanes, its choices made by selection: a loop without
 * branches, which gcc vectorises (its square root too, without errno: src/CMakeLists.txt), each
 * element with sign_of's operations (the same bits). */
static inline __attribute__((always_inline)) void sqrt_lanes(double eps, int lanes, double *lambda,
                                                             double *dl_dh) {
  for (int l = 0; l < lanes; l++) {
    const double u = lambda[l] / eps, r = sqrt(1.0 + u * u), q = u / r, du = 1.0 / (r * r * r);
    const bool finite = r <= __DBL_MAX__; /* isfinite(r): r is not negative */
    lambda[l] = finite ? q : u > 0 ? 1.0 : -1.0;
    if (dl_dh) dl_dh[l] = (finite ? du : 0.0) / eps;
  }
}

/* Lambda_eps(h) of every lane's h into lambda (in place), with dLambda/dh where dl_dh is not
 * NULL (tf_smooth_sign's operations). */
static inline __attribute__((always_inline)) void lanes_sign(const tf_smoothing *s, int lanes,
                                                             double *lambda, double *dl_dh) {
  double d;
  if (s->law == TF_SMOOTH_SQRT) {
    if (dl_dh)
      sqrt_lanes(s->epsilon, lanes, lambda, dl_dh);
    else
      sqrt_lanes(s->epsilon, lanes, lambda, NULL);
    return;
  }
  if (!dl_dh)
    for (int l = 0; l < lanes; l++) lambda[l] = sign_of(s, lambda[l], NULL);
  for (int l = 0; dl_dh && l < lanes; l++)
    lambda[l] = sign_of(s, lambda[l], &d), dl_dh[l] = d / s->epsilon;
}

/* the convex field's blend (1 + l)/2 a + (1 - l)/2 b of `rows` rows, lane by lane, into a */
static inline __attribute__((always_inline)) void blend_lanes(int lanes, size_t rows,
                                                              const double *lambda, double *a,
                                                              const double *b) {
  for (size_t i = 0; i < rows; i++)
    for (int l = 0; l < lanes; l++) {
      const size_t q = i * (size_t)lanes + (size_t)l;
      a[q] = 0.5 * (1 + lambda[l]) * a[q] + 0.5 * (1 - lambda[l]) * b[q];
    }
}

TF_FAST_LANES void tf_smooth_rhs_lanes(const tf_kernel *k, const double *p, const tf_smoothing *s,
                                       int lanes, const double *t, const double *x, double *dx,
                                       int *code) {
  double lambda[LANES], down[TF_MAX_DIM * LANES];
  k->filippov->slip_sides_lanes(lanes, t, x, p, lambda, dx, down, NULL, NULL, code);
  lanes_sign(s, lanes, lambda, NULL);
  blend_lanes(lanes, k->dim, lambda, dx, down);
}

TF_FAST_LANES void tf_smooth_jacobian_lanes(const tf_kernel *k, const double *p,
                                            const tf_smoothing *s, int lanes, const double *t,
                                            const double *x, double *jac) {
  const size_t n = k->dim, w = (size_t)lanes;
  double lambda[LANES], dl_dh[LANES], grad[TF_MAX_DIM * LANES];
  double up[TF_MAX_DIM * LANES], down[TF_MAX_DIM * LANES], jm[TF_MAX_DIM * TF_MAX_DIM * LANES];
  double xl[TF_MAX_DIM], g[TF_MAX_DIM];
  int code[LANES];
  for (size_t l = 0; l < w; l++) { /* grad h lane by lane */
    for (size_t i = 0; i < n; i++) xl[i] = x[i * w + l];
    k->filippov->switching(xl, p, g);
    for (size_t j = 0; j < n; j++) grad[j * w + l] = g[j];
  }
  k->filippov->slip_sides_lanes(lanes, t, x, p, lambda, up, down, jac, jm, code);
  lanes_sign(s, lanes, lambda, dl_dh);
  blend_lanes(lanes, n * n, lambda, jac, jm);
  for (size_t i = 0; i < n * w; i++) up[i] = 0.5 * (up[i] - down[i]); /* dlambda */
  for (size_t i = 0; i < n; i++) /* chain rule through lambda = Lambda_eps(h(x)) */
    for (size_t j = 0; j < n; j++)
      for (size_t l = 0; l < w; l++)
        jac[(i * n + j) * w + l] += up[i * w + l] * dl_dh[l] * grad[j * w + l];
}
