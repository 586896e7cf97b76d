/* test_smooth.c — the regularisations of sign(h) and the smoothed fields built from them.
 *
 * Laws: Lambda(h) for tanh, sqrt (Jeffrey's Lambda_eps) and linear against their closed
 * forms, odd symmetry, the limits ±1 far from Sigma, and dLambda/dh against central
 * differences.  Fields: a block with Jeffrey's nonlinear sticking,
 *     x' = v,  v' = -k x - N mu(lambda),  mu(lambda) = lambda + rho lambda (1 - lambda^2),
 * given as a `regularised` field with its Jacobian: the chain-rule Jacobian of the smoothed
 * field against differences of the smoothed field itself, and d f / d lambda against
 * differences in lambda; the convex combination of the relay's slips equals
 * (y - a Lambda(x), 1). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "kernel.h"
#include "smooth.h"

static const double K = 2.0, NLOAD = 1.5, RHO = 2.0;

static double switching(const double *x, const double *p, double *grad) {
  (void)p;
  if (grad) grad[0] = 0.0, grad[1] = 1.0;
  return x[1];
}
static int slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = x[1];
  dx[1] = -K * x[0] - NLOAD * side;
  return 0;
}
static int regularised(double t, const double *x, double l, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = x[1];
  dx[1] = -K * x[0] - NLOAD * (l + RHO * l * (1 - l * l));
  return 0;
}
static void regularised_jacobian(double t, const double *x, double l, const double *p, double *jac,
                                 double *dl) {
  (void)t, (void)x, (void)p;
  jac[0] = 0, jac[1] = 1, jac[2] = -K, jac[3] = 0;
  dl[0] = 0;
  dl[1] = -NLOAD * (1 + RHO * (1 - 3 * l * l));
}

static const tf_filippov_ops block_ops = {TF_OPS_SIZE(tf_filippov_ops), .switching = switching,
                                          .slip = slip, .regularised = regularised,
                                          .regularised_jacobian = regularised_jacobian};
static const tf_model_def block = {TF_MODEL_HEAD, .name = "block", .kind = TF_MODEL_FILIPPOV,
                                   .dim = 2, .filippov = &block_ops};

static void laws(void) {
  const double eps = 1e-3;
  for (int law = 0; law < 3; law++) {
    const tf_smoothing s = {.law = (tf_smooth_law)law, .epsilon = eps};
    for (double u = -3.0; u <= 3.0; u += 0.25) {
      const double h = u * eps;
      double d;
      const double l = tf_smooth_sign(&s, h, &d);
      const double exact = law == TF_SMOOTH_TANH   ? tanh(u)
                           : law == TF_SMOOTH_SQRT ? u / sqrt(1 + u * u)
                                                   : fmax(-1.0, fmin(1.0, u));
      CHECK_CLOSE(l, exact, 1e-15, tf_smooth_law_name(s.law));
      CHECK_CLOSE(tf_smooth_sign(&s, -h, NULL), -l, 0.0, "odd");
      if (law == TF_SMOOTH_LINEAR && fabs(fabs(u) - 1) < 1e-9) continue; /* the kinks */
      const double step = 1e-6 * eps;
      const double fd =
          (tf_smooth_sign(&s, h + step, NULL) - tf_smooth_sign(&s, h - step, NULL)) / (2 * step);
      CHECK_CLOSE(d, fd, 1e-6 / eps, "dLambda/dh");
    }
    CHECK_CLOSE(tf_smooth_sign(&s, 1e3 * eps, NULL), 1.0, law == TF_SMOOTH_SQRT ? 1e-6 : 0.0,
                "far above Sigma");
    CHECK_CLOSE(tf_smooth_sign(&s, -1e300, NULL), -1.0, 0.0, "no overflow far below");
  }
}

static void chain_rule(void) {
  const double xs[4][2] = {{0.1, 0.0}, {0.3, 4e-4}, {-0.2, -2e-3}, {0.5, 0.1}};
  for (int law = 0; law < 3; law++) {
    const tf_smoothing s = {
        .law = (tf_smooth_law)law, .field = TF_SMOOTH_REGULARISED, .epsilon = 1e-3};
    CHECK(tf_smooth_has_jacobian(&block, &s), "regularised Jacobian available");
    for (int k = 0; k < 4; k++) {
      double jac[4], x[2] = {xs[k][0], xs[k][1]}, fp[2], fm[2];
      tf_smooth_jacobian(&block, NULL, &s, 0.0, x, jac);
      for (int j = 0; j < 2; j++) {
        const double step = 1e-9, keep = x[j];
        x[j] = keep + step;
        tf_smooth_rhs(&block, NULL, &s, 0.0, x, fp);
        x[j] = keep - step;
        tf_smooth_rhs(&block, NULL, &s, 0.0, x, fm);
        x[j] = keep;
        for (int i = 0; i < 2; i++) {
          const double fd = (fp[i] - fm[i]) / (2 * step);
          CHECK_CLOSE(jac[i * 2 + j], fd, 1e-5 * (1 + fabs(fd)), "smoothed Jacobian");
        }
      }
      /* d f / d lambda: lambda enters through mu only */
      double dir[2];
      tf_smooth_lambda_direction(&block, NULL, &s, 0.0, x, dir);
      const double l = tf_smooth_sign(&s, x[1], NULL);
      CHECK_CLOSE(dir[0], 0.0, 0.0, "df/dlambda, x");
      CHECK_CLOSE(dir[1], -NLOAD * (1 + RHO * (1 - 3 * l * l)), 1e-12, "df/dlambda, v");
    }
  }
  /* the convex field ignores the nonlinear term: (1+L)/2 f+ + (1-L)/2 f- */
  const tf_smoothing convex = {.law = TF_SMOOTH_TANH, .field = TF_SMOOTH_CONVEX, .epsilon = 1e-3};
  CHECK(!tf_smooth_has_jacobian(&block, &convex), "no analytic Jacobian for the convex field");
  const double x[2] = {0.2, 5e-4};
  double f[2], dir[2];
  tf_smooth_rhs(&block, NULL, &convex, 0.0, x, f);
  CHECK_CLOSE(f[1], -K * 0.2 - NLOAD * tanh(0.5), 1e-15, "convex field");
  tf_smooth_lambda_direction(&block, NULL, &convex, 0.0, x, dir);
  CHECK_CLOSE(dir[1], -NLOAD, 1e-15, "convex df/dlambda");
}

static void relay(void) {
  const tf_kernel *k = tf_kernel_find("relay");
  CHECK(k != NULL, "relay kernel");
  if (!k) return;
  const double p[2] = {1.5, 0.0}, x[2] = {2e-3, 0.4};
  const tf_smoothing s = {.law = TF_SMOOTH_SQRT, .field = TF_SMOOTH_CONVEX, .epsilon = 1e-3};
  double f[2];
  tf_smooth_rhs(k, p, &s, 0.0, x, f);
  CHECK_CLOSE(f[0], 0.4 - 1.5 * 2 / sqrt(5.0), 1e-15, "relay x'");
  CHECK_CLOSE(f[1], 1.0, 0.0, "relay y'");
}

/* The convex field's chain rule, (1+L)/2 J+ + (1-L)/2 J- + (f+ - f-)/2 L'(h) grad h, from
 * the kernels' slip_jacobian, against differences of the smoothed field itself: the relay and
 * the wheel (Fig. 5 parameters, kappa and k2 derived), at states inside and outside the layer
 * (the wheel's slip fields have a kink on Sigma, so no state sits on it). */
static void convex_chain_rule(const char *name, const double (*xs)[3], int npoints) {
  const tf_kernel *k = tf_kernel_find(name);
  CHECK(k && k->filippov->slip_jacobian, name);
  if (!k || !k->filippov->slip_jacobian) return;
  double p[32];
  tf_error err = {0};
  for (size_t i = 0; i < k->nparams; i++) p[i] = k->params[i].def;
  CHECK(!k->prepare || k->prepare(p, &err) == 0, err.msg);
  const size_t n = k->dim;
  const tf_smoothing s = {.law = TF_SMOOTH_SQRT, .field = TF_SMOOTH_CONVEX, .epsilon = 1e-3};
  CHECK(tf_smooth_has_jacobian(k, &s), "analytic Jacobian for the convex field");
  for (int m = 0; m < npoints; m++) {
    double x[3], jac[9], fp[3], fm[3];
    for (size_t i = 0; i < n; i++) x[i] = xs[m][i];
    tf_smooth_jacobian(k, p, &s, 0.0, x, jac);
    for (size_t j = 0; j < n; j++) {
      const double step = 1e-9, keep = x[j];
      x[j] = keep + step;
      tf_smooth_rhs(k, p, &s, 0.0, x, fp);
      x[j] = keep - step;
      tf_smooth_rhs(k, p, &s, 0.0, x, fm);
      x[j] = keep;
      for (size_t i = 0; i < n; i++) {
        const double fd = (fp[i] - fm[i]) / (2 * step);
        CHECK_CLOSE(jac[i * n + j], fd, 1e-5 * (1 + fabs(fd)), name);
      }
    }
  }
}

static void convex_jacobians(void) {
  const double relay_x[3][3] = {{2e-4, 0.4}, {-5e-4, -0.1}, {0.2, 1.0}};
  convex_chain_rule("relay", relay_x, 3);
  /* h = -(v - d (w - w0)) sin(gamma) - r (w - w0) cos(gamma): v moves h across the layer */
  const double wheel_x[4][3] = {
      {0.1859, -0.0298, -1.037}, {0.1859, -0.0305, -1.037}, {0.2, -0.02, -1.1}, {0.3, 0.2, -0.5}};
  convex_chain_rule("wheel", wheel_x, 4);
}

/* The smoothed wheel's field and Jacobian over 8 lanes (tf_smooth_rhs_lanes and
 * tf_smooth_jacobian_lanes: the wheel's slip_sides_lanes, vectorised, with each lane's tyre
 * angle remembered from its last call) bit for bit those of the scalar field, member by member:
 * at states on and off the layer, at full stick (h = g = 0, where the Jacobian's terms through
 * the tyre angle are left out), far outside the layer at an epsilon so small that 1 + (h/eps)^2
 * overflows; each set of lanes asked twice in a row (the second call takes the remembered
 * angles) and again after kappa changed (the remembered angles are not its). */
static void wheel_lanes(void) {
  enum { W = 8, N = 3 };
  const tf_kernel *k = tf_kernel_find("wheel");
  double p[32], q[32];
  tf_error err = {0};
  for (size_t i = 0; i < k->nparams; i++) p[i] = k->params[i].def;
  CHECK(k->prepare(p, &err) == 0, err.msg);
  memcpy(q, p, sizeof q);
  q[11] *= 1.25; /* kappa */
  const double omega0 = p[6];
  const double xs[W][N] = {{0.1859, -0.0298, -1.037},    {0.1859, -0.0305, -1.037},
                           {0.2, -0.02, -1.1},           {0.3, 0.2, -0.5},
                           {0.1859, 0.0, omega0},        {0.25, 0.0, omega0}, /* h = g = 0 */
                           {0.1859, -0.0301217, -1.037}, {-0.4, 1.5, 2.0}};
  const tf_smoothing laws[3] = {
      {.law = TF_SMOOTH_SQRT, .field = TF_SMOOTH_CONVEX, .epsilon = 1e-4},
      {.law = TF_SMOOTH_SQRT, .field = TF_SMOOTH_CONVEX, .epsilon = 1e-300},
      {.law = TF_SMOOTH_TANH, .field = TF_SMOOTH_CONVEX, .epsilon = 1e-3}};
  double x[N * W], t[W] = {0};
  for (int l = 0; l < W; l++)
    for (int i = 0; i < N; i++) x[i * W + l] = xs[l][i];
  for (int c = 0; c < 3 * 3; c++) {
    const tf_smoothing *s = &laws[c / 3];
    const double *par = c % 3 == 2 ? q : p; /* twice with p, then with q */
    CHECK(tf_smooth_has_lanes(k, s), "the wheel's smoothed field in lanes");
    double dx[N * W], jac[N * N * W];
    int code[W];
    tf_smooth_rhs_lanes(k, par, s, W, t, x, dx, code);
    tf_smooth_jacobian_lanes(k, par, s, W, t, x, jac);
    for (int l = 0; l < W; l++) {
      double f[N], j[N * N];
      tf_smooth_rhs(k, par, s, 0.0, xs[l], f);
      tf_smooth_jacobian(k, par, s, 0.0, xs[l], j);
      for (int i = 0; i < N; i++)
        CHECK(memcmp(&f[i], &dx[i * W + l], sizeof f[i]) == 0,
              "case %d lane %d f[%d]: %.17g vs %.17g", c, l, i, f[i], dx[i * W + l]);
      for (int i = 0; i < N * N; i++)
        CHECK(memcmp(&j[i], &jac[i * W + l], sizeof j[i]) == 0,
              "case %d lane %d J[%d]: %.17g vs %.17g", c, l, i, j[i], jac[i * W + l]);
    }
  }
}

int main(void) {
  laws();
  chain_rule();
  relay();
  convex_jacobians();
  wheel_lanes();
  return check_report("test_smooth");
}
