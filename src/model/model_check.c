/* model_check.c — see model_check.h. */
#include "model_check.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "kinds.h"
#include "model_def.h"

enum { N = TF_MAX_DIM };

/* A function of the state to differentiate, and its claimed derivative (m x dim). */
typedef enum fn {
  F_RHS,
  F_SLIP,
  F_SWITCHING,
  F_SECONDARY,
  F_REGULARISED,
  F_SIGMA2,
  F_MAP,
  F_SURFACE,  /* impact surface c->index */
  F_RESET,    /* and its reset */
  F_SWITCH_I, /* h_i of a kernel with several switching functions (i = index) */
  F_FIELD     /* its field at the fixed signs s */
} fn;

typedef struct ctx {
  const tf_kernel *k;
  const double *p;
  double t, lambda;
  int side, index;
  double s[TF_SWITCHES_MAX];
  FILE *out;
  int checks, failed;
} ctx;

static size_t rows(const ctx *c, fn f) {
  return f == F_SWITCHING || f == F_SECONDARY || f == F_SURFACE || f == F_SWITCH_I ? 1
         : f == F_SIGMA2                                                           ? 2
                                                                                   : c->k->dim;
}

/* 0, or the model's refusal at x */
static int eval(const ctx *c, fn f, const double *x, double *out) {
  const tf_kernel *k = c->k;
  double h[2];
  switch (f) {
    case F_RHS:
      return tf_model_rhs(k)(c->t, x, c->p, out);
    case F_SLIP:
      return k->filippov->slip(c->t, x, c->side, c->p, out);
    case F_SWITCHING:
      out[0] = k->filippov->switching(x, c->p, NULL);
      return 0;
    case F_SECONDARY:
      out[0] = k->filippov->secondary_switching(x, c->p, NULL);
      return 0;
    case F_REGULARISED:
      return k->filippov->regularised(c->t, x, c->lambda, c->p, out);
    case F_SIGMA2:
      k->codim2->sigma2(x, c->p, h, NULL);
      out[0] = h[0], out[1] = h[1];
      return 0;
    case F_MAP:
      return tf_model_map(k)(x, c->p, out);
    case F_SURFACE:
      out[0] = k->impact->surface(c->index, x, c->p, NULL);
      return 0;
    case F_RESET:
      k->impact->reset(c->index, x, c->p, out, NULL);
      return 0;
    case F_SWITCH_I:
      out[0] = k->switches->switching(c->index, x, c->p, NULL);
      return 0;
    case F_FIELD:
      return k->switches->field(c->t, x, c->s, c->p, out);
  }
  return 0;
}

static void derivative(const ctx *c, fn f, const double *x, double *a) {
  const tf_kernel *k = c->k;
  double h[2], dl[N];
  switch (f) {
    case F_RHS:
      return tf_model_jacobian(k)(c->t, x, c->p, a);
    case F_SLIP:
      return k->filippov->slip_jacobian(c->t, x, c->side, c->p, a);
    case F_SWITCHING:
      k->filippov->switching(x, c->p, a);
      return;
    case F_SECONDARY:
      k->filippov->secondary_switching(x, c->p, a);
      return;
    case F_REGULARISED:
      return k->filippov->regularised_jacobian(c->t, x, c->lambda, c->p, a, dl);
    case F_SIGMA2:
      return k->codim2->sigma2(x, c->p, h, a);
    case F_MAP:
      return tf_model_map_jacobian(k)(x, c->p, a);
    case F_SURFACE:
      k->impact->surface(c->index, x, c->p, a);
      return;
    case F_RESET: {
      double xplus[N];
      return k->impact->reset(c->index, x, c->p, xplus, a);
    }
    case F_SWITCH_I:
      k->switches->switching(c->index, x, c->p, a);
      return;
    case F_FIELD:
      return k->switches->field_jacobian(c->t, x, c->s, c->p, a);
  }
}

static bool all_finite(const double *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) return false;
  return true;
}

static void print_vector(FILE *out, const double *v, size_t n) {
  fprintf(out, "(");
  for (size_t i = 0; i < n; i++) fprintf(out, "%s%.10g", i ? ", " : "", v[i]);
  fprintf(out, ")");
}

static void verdict(ctx *c, bool ok, const char *what) {
  c->checks++;
  if (!ok) c->failed++;
  fprintf(c->out, "  %-5s %s", ok ? "ok" : "FAIL", what);
}

/* The value of f at x is finite. */
static void finite_check(ctx *c, fn f, const double *x, const char *what) {
  double v[N];
  const size_t m = rows(c, f);
  for (size_t i = 0; i < m; i++) v[i] = NAN;
  eval(c, f, x, v);
  verdict(c, all_finite(v, m), what);
  fprintf(c->out, " = ");
  print_vector(c->out, v, m);
  fprintf(c->out, "\n");
}

/* Central differences, Richardson-extrapolated (error O(h^4)): a stiff smoothing such as
 * tanh(v / 1e-3) has third derivatives large enough to fail plain central differences at the
 * step that balances truncation and rounding. */
static void central(const ctx *c, fn f, const double *x, double *d) {
  const size_t n = c->k->dim, m = rows(c, f);
  double xs[N], fp[N], fm[N], gp[N], gm[N];
  memcpy(xs, x, n * sizeof *xs);
  for (size_t j = 0; j < n; j++) {
    const double h = cbrt(DBL_EPSILON) * fmax(1.0, fabs(x[j]));
    const double h1 = (x[j] + h) - (x[j] - h), h2 = (x[j] + h / 2) - (x[j] - h / 2);
    xs[j] = x[j] + h;
    eval(c, f, xs, fp);
    xs[j] = x[j] - h;
    eval(c, f, xs, fm);
    xs[j] = x[j] + h / 2;
    eval(c, f, xs, gp);
    xs[j] = x[j] - h / 2;
    eval(c, f, xs, gm);
    xs[j] = x[j];
    for (size_t i = 0; i < m; i++)
      d[i * n + j] = (4 * (gp[i] - gm[i]) / h2 - (fp[i] - fm[i]) / h1) / 3;
  }
}

/* Compares a claimed m x n derivative with central differences, entry by entry. */
static void compare(ctx *c, const double *a, const double *d, size_t m, size_t n,
                    const char *what) {
  double scale = 0, err[N * N], worst = 0;
  size_t wi = 0;
  for (size_t i = 0; i < m * n; i++) scale = fmax(scale, fmax(fabs(a[i]), fabs(d[i])));
  bool finite = all_finite(a, m * n) && all_finite(d, m * n);
  for (size_t i = 0; i < m * n; i++) {
    const double den = fmax(fmax(fabs(a[i]), fabs(d[i])), 1e-3 * scale + DBL_MIN);
    err[i] = fabs(a[i] - d[i]) / den;
    if (!(err[i] <= worst)) worst = err[i], wi = i;
  }
  const bool ok = finite && worst <= TF_MODEL_CHECK_TOL;
  verdict(c, ok, what);
  fprintf(c->out, ": max relative error %.2e (tolerance %.0e)\n", worst, TF_MODEL_CHECK_TOL);
  if (!ok)
    fprintf(c->out, "        entry [%zu][%zu]: given %.10g, central differences %.10g\n", wi / n,
            wi % n, a[wi], d[wi]);
  if (n <= 8) {
    fprintf(c->out, "        relative error per entry:\n");
    for (size_t i = 0; i < m; i++) {
      fprintf(c->out, "         ");
      for (size_t j = 0; j < n; j++) fprintf(c->out, " %8.1e", err[i * n + j]);
      fprintf(c->out, "\n");
    }
  }
}

static void derivative_check(ctx *c, fn f, const double *x, const char *what) {
  const size_t n = c->k->dim, m = rows(c, f);
  double a[N * N], d[N * N];
  for (size_t i = 0; i < m * n; i++) a[i] = NAN;
  derivative(c, f, x, a);
  central(c, f, x, d);
  compare(c, a, d, m, n, what);
}

/* d/dlambda of the regularised field, claimed by regularised_jacobian. */
static void dlambda_check(ctx *c, const double *x) {
  const size_t n = c->k->dim;
  double jac[N * N], a[N], d[N], fp[N], fm[N];
  for (size_t i = 0; i < n; i++) a[i] = NAN;
  c->k->filippov->regularised_jacobian(c->t, x, c->lambda, c->p, jac, a);
  const double h = cbrt(DBL_EPSILON), l = c->lambda;
  double gp[N], gm[N];
  c->k->filippov->regularised(c->t, x, l + h, c->p, fp);
  c->k->filippov->regularised(c->t, x, l - h, c->p, fm);
  c->k->filippov->regularised(c->t, x, l + h / 2, c->p, gp);
  c->k->filippov->regularised(c->t, x, l - h / 2, c->p, gm);
  for (size_t i = 0; i < n; i++)
    d[i] = (4 * (gp[i] - gm[i]) / ((l + h / 2) - (l - h / 2)) -
            (fp[i] - fm[i]) / ((l + h) - (l - h))) /
           3;
  compare(c, a, d, n, 1, "regularised_jacobian d/dlambda (lambda = 0.5)");
}

/* dg_i/dx_i of diagonal noise, claimed by diffusion_dx. */
static void diffusion_dx_check(ctx *c, const double *x) {
  const size_t n = c->k->dim;
  double a[N], d[N], xs[N], gp[N], gm[N];
  for (size_t i = 0; i < n; i++) a[i] = NAN;
  tf_model_diffusion_dx(c->k)(c->t, x, c->p, a);
  memcpy(xs, x, n * sizeof *xs);
  for (size_t i = 0; i < n; i++) {
    const double h = cbrt(DBL_EPSILON) * fmax(1.0, fabs(x[i]));
    xs[i] = x[i] + h;
    tf_model_diffusion(c->k)(c->t, xs, c->p, gp);
    xs[i] = x[i] - h;
    tf_model_diffusion(c->k)(c->t, xs, c->p, gm);
    xs[i] = x[i];
    d[i] = (gp[i] - gm[i]) / ((x[i] + h) - (x[i] - h));
  }
  compare(c, a, d, 1, n, "diffusion_dx (dg_i/dx_i)");
}

static void header(const tf_kernel *k, const char *origin, const double *p, double t,
                   const double *x, FILE *out) {
  fprintf(out, "model: %s (%s)\n  %s\n", k->name, origin ? origin : "built-in",
          k->doc ? k->doc : "");
  fprintf(out, "kind: %s; dimension %zu\n", tf_model_description(k), k->dim);
  fprintf(out, "parameters:\n");
  if (!k->nparams) fprintf(out, "  (none)\n");
  for (size_t i = 0; i < k->nparams; i++) {
    const tf_param *q = &k->params[i];
    fprintf(out, "  %-14s %-14.10g [%g, %g]%s  %s\n", q->name, p[i], q->min, q->max,
            q->derived ? " derived" : "", q->doc ? q->doc : "");
  }
  fprintf(out, "initial state (t = %g):", t);
  for (size_t i = 0; i < k->dim; i++)
    fprintf(out, "%s %s = %.10g", i ? "," : "", k->state_names[i], x[i]);
  fprintf(out, "\n");
}

static bool smoothed(const ctx *c) {
  return tf_model_self_smoothed(c->k, c->p);
}

/* The smooth field is evaluated where the model uses it: a Filippov model's only when its
 * parameters make it run smoothed, a codimension-2 model's only off its discontinuity set
 * (on it the slip direction, and so the field, is undefined). */
static bool rhs_in_use(const ctx *c, const double *x) {
  const tf_kernel *k = c->k;
  if (!tf_model_rhs(k)) return false;
  switch (k->kind) {
    case TF_MODEL_FILIPPOV:
      return smoothed(c);
    case TF_MODEL_CODIM2: {
      double h[2];
      k->codim2->sigma2(x, c->p, h, NULL);
      return h[0] != 0 || h[1] != 0;
    }
    case TF_MODEL_TWO_CONTACT: {
      const int *i = k->two_contact->contact_index;
      return x[i[2]] != 0 || (x[i[0]] != 0 && x[i[1]] != 0);
    }
    default:
      return true;
  }
}

/* The optional single-component rates must be the field's components bit for bit: event
 * screening uses them in place of the field. */
static void rate_check(ctx *c, const double *x) {
  const tf_kernel *k = c->k;
  double f[N];
  if (tf_model_rhs(k)(c->t, x, c->p, f)) return; /* the field's refusal is reported above */
  for (size_t i = 0; i < k->dim; i++) {
    const double r = k->impact->rate((int)i, c->t, x, c->p);
    char what[96];
    snprintf(what, sizeof what, "impact rate %zu equals field component %zu", i, i);
    verdict(c, memcmp(&r, &f[i], sizeof r) == 0, what);
    fprintf(c->out, ": %.17g and %.17g\n", r, f[i]);
  }
}

/* Every impact surface and its reset: their values, or their derivatives. */
static void impact_checks(ctx *c, const double *x, bool derivatives) {
  const tf_kernel *k = c->k;
  if (k->kind != TF_MODEL_IMPACT) return;
  void (*check)(ctx *, fn, const double *, const char *) =
      derivatives ? derivative_check : finite_check;
  for (c->index = 0; c->index < (int)k->impact->nimpacts; c->index++) {
    char what[64];
    snprintf(what, sizeof what, derivatives ? "impact surface %d gradient" : "impact surface %d",
             c->index);
    check(c, F_SURFACE, x, what);
    snprintf(what, sizeof what,
             derivatives ? "reset Jacobian of impact surface %d" : "reset of impact surface %d",
             c->index);
    check(c, F_RESET, x, what);
  }
  if (!derivatives && k->impact->rate) rate_check(c, x);
}

/* ---- several switching functions ---------------------------------------------------------- */

static const char *s_text(const ctx *c, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "s = (");
  for (int i = 0; i < c->k->switches->nswitches && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, c->s[i] ? "%s%+g" : "%s0", i ? ", " : "", c->s[i]);
  if (len < n) snprintf(buf + len, n - len, ")");
  return buf;
}

static void set_s(ctx *c, double v) {
  for (int i = 0; i < TF_SWITCHES_MAX; i++) c->s[i] = v;
}

static void switches_values(ctx *c, const double *x) {
  const int m = c->k->switches->nswitches;
  char what[160], s[96];
  for (c->index = 0; c->index < m; c->index++) {
    snprintf(what, sizeof what, "switching function h[%d]", c->index);
    finite_check(c, F_SWITCH_I, x, what);
  }
  /* s = 0 (every contact sticking, multipliers at the middle), then the 2^m slip fields */
  set_s(c, 0);
  snprintf(what, sizeof what, "field, %s", s_text(c, s, sizeof s));
  finite_check(c, F_FIELD, x, what);
  for (int corner = 0; corner < 1 << m; corner++) {
    for (int i = 0; i < m; i++) c->s[i] = corner >> (m - 1 - i) & 1 ? -1 : 1;
    snprintf(what, sizeof what, "field, %s", s_text(c, s, sizeof s));
    finite_check(c, F_FIELD, x, what);
  }
}

/* The field may have a kink on Sigma_i (Stribeck's |v - vb|), where differences straddling it
 * mean nothing, and a state at rest on a belt starts on it.  A state closer to some Sigma_i
 * than the differences reach is moved along grad h_i to h_i = +-reach, on its own side (+ on
 * Sigma_i).  Returns whether it moved. */
static bool off_surfaces(const ctx *c, const double *x, double *xs) {
  const tf_switches_ops *w = c->k->switches;
  const size_t n = c->k->dim;
  bool moved = false;
  memcpy(xs, x, n * sizeof *xs);
  for (int i = 0; i < w->nswitches; i++) {
    double grad[N], norm2 = 0, reach = 0;
    const double h = w->switching(i, xs, c->p, grad);
    for (size_t j = 0; j < n; j++) {
      norm2 += grad[j] * grad[j];
      reach += 100 * cbrt(DBL_EPSILON) * fmax(1.0, fabs(xs[j])) * fabs(grad[j]);
    }
    const double side = h < 0 ? -1 : 1;
    if (!(norm2 > 0) || side * h >= reach) continue;
    for (size_t j = 0; j < n; j++) xs[j] += (side * reach - h) * grad[j] / norm2;
    moved = true;
  }
  return moved;
}

static void switches_derivatives(ctx *c, const double *x) {
  const tf_switches_ops *w = c->k->switches;
  const int m = w->nswitches;
  char what[200], s[96];
  for (c->index = 0; c->index < m; c->index++) {
    snprintf(what, sizeof what, "switching gradient h[%d]", c->index);
    derivative_check(c, F_SWITCH_I, x, what);
  }
  if (!w->field_jacobian) {
    fprintf(c->out, "  --    field_jacobian not given (the engine uses finite differences)\n");
    return;
  }
  /* at the signs the state has, then inside [-1, 1]^m where sticking contacts put them */
  static const double inside[2][TF_SWITCHES_MAX] = {{0.5, -0.5, 0.5, -0.5}, {-0.9, 0.3, 0.7, -0.2}};
  double xs[N];
  const bool moved = off_surfaces(c, x, xs);
  for (int point = 0; point < 3; point++) {
    for (int i = 0; i < m; i++) {
      const double h = w->switching(i, x, c->p, NULL);
      c->s[i] = point ? inside[point - 1][i] : h > 0 ? 1 : h < 0 ? -1 : 0;
    }
    snprintf(what, sizeof what, "field_jacobian, %s%s%s", s_text(c, s, sizeof s),
             point ? "" : " (sign h)",
             moved ? " (at a state moved off the switching surfaces it is on)" : "");
    derivative_check(c, F_FIELD, xs, what);
  }
}

/* An affine field evaluated in floating point leaves residuals of a few ulps of the values
 * combined; a term nonlinear in s leaves one of its own size. */
#define AFFINE_TOL 1e-9

static void affine_verdict(ctx *c, const double *r, double scale, const char *what) {
  const size_t n = c->k->dim;
  double worst = 0;
  size_t wi = 0;
  for (size_t i = 0; i < n; i++) {
    const double e = fabs(r[i]) / (scale + DBL_MIN);
    if (!(e <= worst)) worst = e, wi = i;
  }
  const bool ok = all_finite(r, n) && worst <= AFFINE_TOL;
  verdict(c, ok, what);
  fprintf(c->out, ": max relative residual %.2e (tolerance %.0e)\n", worst, AFFINE_TOL);
  if (!ok)
    fprintf(c->out, "        component %zu (%s): residual %.10g\n", wi, c->k->state_names[wi],
            r[wi]);
}

static double scale_of(const double *const *v, int nv, size_t n) {
  double scale = 0;
  for (int k = 0; k < nv; k++)
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(v[k][i]));
  return scale;
}

/* f(x, s) affine in s, the engine's premise for the multipliers of sticking contacts: for
 * every pair f(e_i + e_j) - f(e_i) - f(e_j) + f(0) = 0 (no s_i s_j), along every axis
 * f(a e_i) = f(0) + a (f(e_i) - f(0)) for a = -1 and 1/2 (no s_i^2 or other function of s_i). */
static void affinity_checks(ctx *c, const double *x) {
  const size_t n = c->k->dim;
  const int m = c->k->switches->nswitches;
  double f0[N], fe[TF_SWITCHES_MAX][N], fij[N], r[N];
  char what[200];
  fprintf(c->out, "field affine in the signs s (at the initial state):\n");
  set_s(c, 0);
  eval(c, F_FIELD, x, f0);
  for (int i = 0; i < m; i++) {
    c->s[i] = 1;
    eval(c, F_FIELD, x, fe[i]);
    c->s[i] = 0;
  }
  for (int i = 0; i < m; i++)
    for (int j = i + 1; j < m; j++) {
      c->s[i] = c->s[j] = 1;
      eval(c, F_FIELD, x, fij);
      c->s[i] = c->s[j] = 0;
      for (size_t q = 0; q < n; q++) r[q] = fij[q] - fe[i][q] - fe[j][q] + f0[q];
      const double *v[] = {f0, fe[i], fe[j], fij};
      snprintf(what, sizeof what, "pair (s[%d], s[%d]): f(e%d + e%d) - f(e%d) - f(e%d) + f(0) = 0",
               i, j, i, j, i, j);
      affine_verdict(c, r, scale_of(v, 4, n), what);
    }
  static const double along[2] = {-1.0, 0.5};
  for (int i = 0; i < m; i++)
    for (int k = 0; k < 2; k++) {
      const double a = along[k];
      double fa[N];
      c->s[i] = a;
      eval(c, F_FIELD, x, fa);
      c->s[i] = 0;
      for (size_t q = 0; q < n; q++) r[q] = fa[q] - f0[q] - a * (fe[i][q] - f0[q]);
      const double *v[] = {f0, fe[i], fa};
      snprintf(what, sizeof what, "axis s[%d], a = %g: f(a e%d) = f(0) + a (f(e%d) - f(0))", i, a,
               i, i);
      affine_verdict(c, r, scale_of(v, 3, n), what);
    }
}

static void values(ctx *c, const double *x) {
  const tf_kernel *k = c->k;
  const size_t n = k->dim;
  fprintf(c->out, "finite at the initial state:\n");
  const bool filippov = k->kind == TF_MODEL_FILIPPOV;
  if (rhs_in_use(c, x))
    finite_check(c, F_RHS, x, filippov ? "smoothed field (smooth.rhs)" : "field f(t, x)");
  if (filippov && smoothed(c))
    fprintf(c->out,
            "  --    these parameters run the model as its smooth flow: its Filippov "
            "fields are not used\n");
  else if (filippov) {
    finite_check(c, F_SWITCHING, x, "switching function h");
    for (c->side = 1; c->side >= -1; c->side -= 2)
      finite_check(c, F_SLIP, x, c->side > 0 ? "slip field, side +1" : "slip field, side -1");
    if (k->filippov->secondary_switching)
      finite_check(c, F_SECONDARY, x, "secondary switching function g");
    if (k->filippov->stick) {
      double v[N];
      for (int l = -1; l <= 1; l++) {
        char what[64];
        snprintf(what, sizeof what, "stick field, lambda = %+d", l);
        for (size_t i = 0; i < n; i++) v[i] = NAN;
        k->filippov->stick(c->t, x, l, c->p, v);
        verdict(c, all_finite(v, n), what);
        fprintf(c->out, " = ");
        print_vector(c->out, v, n);
        fprintf(c->out, "\n");
      }
    }
    if (k->filippov->regularised)
      finite_check(c, F_REGULARISED, x, "regularised field, lambda = 0.5");
  }
  if (k->kind == TF_MODEL_SWITCHES) switches_values(c, x);
  if (k->kind == TF_MODEL_CODIM2) finite_check(c, F_SIGMA2, x, "sigma2 (H1, H2)");
  if (tf_model_map(k)) finite_check(c, F_MAP, x, "map F(x)");
  impact_checks(c, x, false);
  double v[N];
  if (tf_model_diffusion(k)) {
    for (size_t i = 0; i < n; i++) v[i] = NAN;
    tf_model_diffusion(k)(c->t, x, c->p, v);
    verdict(c, all_finite(v, n), "noise g(t, x)");
    fprintf(c->out, " = ");
    print_vector(c->out, v, n);
    fprintf(c->out, "\n");
  }
  const bool codim2 = k->kind == TF_MODEL_CODIM2;
  if (codim2 || k->kind == TF_MODEL_TWO_CONTACT) {
    const double e1[2] = {1.0, 0.0};
    for (size_t i = 0; i < n; i++) v[i] = NAN;
    if (codim2)
      k->codim2->field2(c->t, x, e1, c->p, v);
    else
      k->two_contact->field_dual(c->t, x, e1, e1, c->p, v);
    verdict(c, all_finite(v, n),
            codim2 ? "field2, slip direction (1, 0)" : "field_dual, slip directions (1, 0)");
    fprintf(c->out, " = ");
    print_vector(c->out, v, n);
    fprintf(c->out, "\n");
  }
  if (k->noutputs) {
    double o[TF_MODEL_MAX_EXTRA];
    for (size_t i = 0; i < k->noutputs && i < TF_MODEL_MAX_EXTRA; i++) o[i] = NAN;
    k->outputs(x, c->p, o);
    verdict(c, all_finite(o, k->noutputs), "outputs");
    fprintf(c->out, " = ");
    print_vector(c->out, o, k->noutputs);
    fprintf(c->out, "\n");
  }
}

/* A slip field is used only on its own side of Sigma (and as the limit on it); a kernel may
 * continue it across Sigma with a kink (the wheel's |h|), where differences straddling
 * Sigma mean nothing.  A state closer to Sigma than the differences reach is moved along
 * grad h into side c->side, to h = side * reach; returns h there (xs = x if not moved). */
static double own_side(const ctx *c, const double *x, double *xs) {
  const size_t n = c->k->dim;
  double grad[N], norm2 = 0, reach = 0;
  const double h = c->k->filippov->switching(x, c->p, grad);
  memcpy(xs, x, n * sizeof *xs);
  for (size_t j = 0; j < n; j++) {
    norm2 += grad[j] * grad[j];
    reach += 100 * cbrt(DBL_EPSILON) * fmax(1.0, fabs(x[j])) * fabs(grad[j]);
  }
  if (!(norm2 > 0) || c->side * h >= reach) return h;
  const double target = c->side * reach;
  for (size_t j = 0; j < n; j++) xs[j] = x[j] + (target - h) * grad[j] / norm2;
  return c->k->filippov->switching(xs, c->p, NULL);
}

static void derivatives(ctx *c, const double *x) {
  const tf_kernel *k = c->k;
  fprintf(c->out, "derivatives against central differences:\n");
  const bool filippov = k->kind == TF_MODEL_FILIPPOV;
  if (rhs_in_use(c, x)) {
    if (tf_model_jacobian(k))
      derivative_check(c, F_RHS, x, filippov ? "smooth.jacobian" : "jacobian");
    else
      fprintf(c->out, "  --    jacobian not given (the engine uses finite differences)\n");
  }
  if (tf_model_diffusion_dx(k)) diffusion_dx_check(c, x);
  if (filippov && !smoothed(c)) {
    derivative_check(c, F_SWITCHING, x, "switching gradient");
    if (k->filippov->secondary_switching)
      derivative_check(c, F_SECONDARY, x, "secondary switching gradient");
    if (k->filippov->slip_jacobian)
      for (c->side = 1; c->side >= -1; c->side -= 2) {
        double xs[N];
        const double h = own_side(c, x, xs);
        char what[160];
        if (memcmp(xs, x, k->dim * sizeof *x) != 0)
          snprintf(what, sizeof what,
                   "slip_jacobian, side %+d (at a state moved off Sigma to h = %.1e)", c->side, h);
        else
          snprintf(what, sizeof what, "slip_jacobian, side %+d", c->side);
        derivative_check(c, F_SLIP, xs, what);
      }
    else
      fprintf(c->out, "  --    slip_jacobian not given (the engine uses finite differences)\n");
    if (k->filippov->regularised_jacobian) {
      derivative_check(c, F_REGULARISED, x, "regularised_jacobian (lambda = 0.5)");
      dlambda_check(c, x);
    }
  }
  if (k->kind == TF_MODEL_SWITCHES) switches_derivatives(c, x);
  if (k->kind == TF_MODEL_CODIM2) derivative_check(c, F_SIGMA2, x, "sigma2 gradients");
  if (tf_model_map(k)) {
    if (tf_model_map_jacobian(k))
      derivative_check(c, F_MAP, x, "map_jacobian");
    else
      fprintf(c->out, "  --    map_jacobian not given (the engine uses finite differences)\n");
  }
  impact_checks(c, x, true);
}

int tf_model_check(const tf_kernel *k, const char *origin, const double *p, double t,
                   const double *x, FILE *out) {
  ctx c = {.k = k, .p = p, .t = t, .lambda = 0.5, .side = 1, .out = out};
  header(k, origin, p, t, x, out);
  values(&c, x);
  derivatives(&c, x);
  if (k->kind == TF_MODEL_SWITCHES) affinity_checks(&c, x);
  if (c.failed)
    fprintf(out, "result: FAIL (%d of %d checks failed)\n", c.failed, c.checks);
  else
    fprintf(out, "result: ok (%d check%s passed)\n", c.checks, c.checks == 1 ? "" : "s");
  return c.failed;
}
