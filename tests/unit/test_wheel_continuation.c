/* test_wheel_continuation.c — the wheel's slip fields past Sigma (model.params.continuation).
 *
 * A slip field of one side is evaluated on the other side only inside a step that crosses Sigma.
 * With continuation 0 it is the tyre law with |h| (eqs 6-7), which has a kink on Sigma; with 1
 * the tyre cot C is continued by E = 3 C(0) - 3 C(|h|) + C(2 |h|).  Checked here against the
 * paper's formulas written out in this file:
 * - on its own side and on Sigma a field is bitwise the same under both settings;
 * - past Sigma the difference of the two fields is the change of friction force and moment that
 *   E - C makes through eqs (1)-(3) (the field is affine in F and M);
 * - along a line across Sigma the field under 1 has matching one-sided first and second
 *   differences (C2), where under 0 the first differences jump (the kink);
 * - E stays within [0, 18 kappa] (F within [mu/3, 4 mu/3]) far past Sigma, also where g is tiny;
 * - slip_jacobian past Sigma against central differences;
 * - the lanes fields (slip_lanes with sides and settings mixed over the lanes, slip_sides_lanes
 *   with Jacobians) bit for bit the scalar ones, in both field maths;
 * - prepare refuses a value other than 0 and 1. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "kernel.h"

enum { MAXP = 32, LANES = 16 };

static const tf_kernel *wheel;
static double base[MAXP];
static int I_D, I_M, I_BETA, I_OMEGA0, I_MU, I_GAMMA, I_KAPPA, I_CONT;

static int index_of(const char *name) {
  const int i = tf_kernel_param_index(wheel, name);
  CHECK(i >= 0, "the wheel has a parameter %s", name);
  return i < 0 ? 0 : i;
}

static void params_with(double continuation, double *p) {
  memcpy(p, base, sizeof base);
  p[I_CONT] = continuation;
}

/* eqs (4)-(5) and the tyre law's cot psi (eqs 6-7), as the paper writes them */
static double h_of(const double *x, const double *p) {
  const double dw = x[2] - p[I_OMEGA0];
  return -(x[1] - p[I_D] * dw) * sin(p[I_GAMMA]) - x[0] * dw * cos(p[I_GAMMA]);
}
static double g_of(const double *x, const double *p) {
  const double dw = x[2] - p[I_OMEGA0];
  return -(x[1] - p[I_D] * dw) * cos(p[I_GAMMA]) + x[0] * dw * sin(p[I_GAMMA]);
}
static double tyre_cot(double a, double b, double kappa) {
  const double arccot = M_PI / 2 - atan(6 * kappa);
  return 1 / tan(arccot + fabs(1 - 2 / M_PI * arccot) * atan2(a, b));
}

/* the state with r, omega given and v such that h = 0 */
static void on_sigma(double r, double w, const double *p, double *x) {
  const double dw = w - p[I_OMEGA0];
  x[0] = r, x[2] = w, x[1] = p[I_D] * dw - r * dw * cos(p[I_GAMMA]) / sin(p[I_GAMMA]);
}

/* x moved by s along grad h / |grad h|^2, so that h grows by s */
static void across(const double *x0, double s, const double *p, double *x) {
  double grad[3];
  wheel->filippov->switching(x0, p, grad);
  const double n2 = grad[0] * grad[0] + grad[1] * grad[1] + grad[2] * grad[2];
  for (int i = 0; i < 3; i++) x[i] = x0[i] + s * grad[i] / n2;
}

static void slip(const tf_kernel *k, const double *x, int side, const double *p, double *dx) {
  CHECK(k->filippov->slip(0, x, side, p, dx) == 0, "slip refused");
}

static bool same_bits(const double *a, const double *b, int n) {
  return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

static void own_side_unchanged(void) {
  double p0[MAXP], p1[MAXP], x0[3], x[3], a[3], b[3];
  params_with(0, p0), params_with(1, p1);
  on_sigma(0.2, -1.03, p0, x0);
  for (int side = -1; side <= 1; side += 2)
    for (double s = 1e-9; s <= 1e-2; s *= 10) {
      across(x0, side * s, p0, x);
      CHECK(side * h_of(x, p0) > 0, "on side %d (h = %g)", side, h_of(x, p0));
      slip(wheel, x, side, p0, a), slip(wheel, x, side, p1, b);
      CHECK(same_bits(a, b, 3), "side %d at h = %g: continuation changes the field", side,
            side * s);
    }
}

/* past Sigma: dx1 - dx0 = dF (0, p2, r cos gamma) + dM (0, d, 1) */
static void past_sigma_is_the_continuation(void) {
  double p0[MAXP], p1[MAXP], x0[3], x[3], a[3], b[3];
  params_with(0, p0), params_with(1, p1);
  const double kappa = base[I_KAPPA], mu = base[I_MU], gam = base[I_GAMMA], d = base[I_D];
  const double beta = base[I_BETA];
  const double rs[3] = {0.12, 0.2, 0.3}, ws[3] = {-1.2, -1.03, -0.8};
  for (int c = 0; c < 3; c++)
    for (int side = -1; side <= 1; side += 2)
      for (double s = 1e-6; s <= 1e-1; s *= 10) {
        on_sigma(rs[c], ws[c], p0, x0);
        across(x0, -side * s, p0, x);
        const double h = h_of(x, p0), g = g_of(x, p0);
        CHECK(side * h < 0, "the state is past Sigma for side %d (h = %g)", side, h);
        slip(wheel, x, side, p0, a), slip(wheel, x, side, p1, b);
        const double C = tyre_cot(fabs(h), fabs(g), kappa);
        const double E = 3 * tyre_cot(0, 1, kappa) - 3 * C + tyre_cot(2 * fabs(h), fabs(g), kappa);
        const double dF = -side * mu * (E - C) / (18 * kappa);
        const double dM = (g > 0 ? 1 : -1) * side * mu / 6 * (E - C);
        const double r = x[0], p2 = d * r * cos(gam) + (beta * beta + r * r) * sin(gam);
        const double want[3] = {0, dF * p2 + d * dM, dF * r * cos(gam) + dM};
        for (int i = 0; i < 3; i++)
          CHECK_CLOSE(b[i] - a[i], want[i], 1e-9 * (1 + fabs(a[i])), "continued minus mirrored");
        CHECK(E >= 0 && E <= 18 * kappa, "E = %g within [0, 18 kappa]", E);
      }
}

/* far past Sigma where the wheel hardly rolls (|h| up to 1e5 |g|): finite, bounded friction */
static void bounded_far_past(void) {
  double p1[MAXP], x0[3], x[3], dx[3], p0[MAXP], dx0[3];
  params_with(1, p1), params_with(0, p0);
  on_sigma(0.2, -1.03, p1, x0);
  for (double s = 1e-4; s <= 1; s *= 10) {
    across(x0, -s, p1, x);
    /* move along grad g too, so that g is tiny: the rolling speed's zero */
    double grad[3];
    const double g = wheel->filippov->secondary_switching(x, p1, grad);
    const double n2 = grad[0] * grad[0] + grad[1] * grad[1] + grad[2] * grad[2];
    for (int i = 0; i < 3; i++) x[i] -= (g - 1e-5 * s) * grad[i] / n2;
    slip(wheel, x, +1, p1, dx), slip(wheel, x, +1, p0, dx0);
    CHECK(isfinite(dx[0]) && isfinite(dx[1]) && isfinite(dx[2]), "finite at h = %g", -s);
    /* the friction terms' change is bounded by the law's range: |dF| <= mu, |dM| <= mu kappa */
    const double scale = 4 * base[I_MU] * (1 + base[I_KAPPA]) * (1 + fabs(base[I_D]));
    CHECK(fabs(dx[1] - dx0[1]) <= scale && fabs(dx[2] - dx0[2]) <= scale,
          "bounded change at h = %g: %g %g", -s, dx[1] - dx0[1], dx[2] - dx0[2]);
  }
}

/* one-sided differences along the line across Sigma at step delta */
static void differences(const double *p, const double *x0, double delta, double d1[2][3],
                        double d2[2][3]) {
  double f[5][3], x[3];
  for (int k = -2; k <= 2; k++) {
    across(x0, k * delta, p, x);
    slip(wheel, x, +1, p, f[k + 2]);
  }
  for (int i = 0; i < 3; i++) {
    d1[0][i] = (f[2][i] - f[1][i]) / delta, d1[1][i] = (f[3][i] - f[2][i]) / delta;
    d2[0][i] = (f[0][i] - 2 * f[1][i] + f[2][i]) / (delta * delta);
    d2[1][i] = (f[4][i] - 2 * f[3][i] + f[2][i]) / (delta * delta);
  }
}

/* The largest mismatch over the field's components of the one-sided first and second
 * differences at step delta: a field that is C2 across Sigma has both O(delta); a kink keeps
 * the first at O(1). */
static void mismatch(const double *p, const double *x0, double delta, double *m1, double *m2) {
  double d1[2][3], d2[2][3];
  differences(p, x0, delta, d1, d2);
  *m1 = *m2 = 0;
  for (int i = 0; i < 3; i++)
    *m1 = fmax(*m1, fabs(d1[1][i] - d1[0][i])), *m2 = fmax(*m2, fabs(d2[1][i] - d2[0][i]));
}

static void smooth_across_sigma(void) {
  double p0[MAXP], p1[MAXP], x0[3];
  params_with(0, p0), params_with(1, p1);
  on_sigma(0.2, -1.03, p0, x0);
  double a1, a2, b1, b2;
  mismatch(p0, x0, 1e-4, &a1, &a2), mismatch(p0, x0, 1e-5, &b1, &b2);
  CHECK(b1 > 0.5 * a1 && b1 > 1, "continuation 0: the first differences jump on Sigma (%g, %g)", a1,
        b1);
  mismatch(p1, x0, 1e-4, &a1, &a2), mismatch(p1, x0, 1e-5, &b1, &b2);
  CHECK(b1 < 0.2 * a1, "continuation 1: first differences %g at delta 1e-4, %g at 1e-5", a1, b1);
  CHECK(b2 < 0.2 * a2, "continuation 1: second differences %g at delta 1e-4, %g at 1e-5", a2, b2);
}

static void jacobian_past_sigma(void) {
  double p1[MAXP], x0[3], x[3], jac[9];
  params_with(1, p1);
  on_sigma(0.25, -1.1, p1, x0);
  for (int side = -1; side <= 1; side += 2) {
    across(x0, -side * 3e-3, p1, x);
    wheel->filippov->slip_jacobian(0, x, side, p1, jac);
    for (int j = 0; j < 3; j++) {
      const double delta = 1e-6;
      double xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]}, fp[3], fm[3];
      xp[j] += delta, xm[j] -= delta;
      slip(wheel, xp, side, p1, fp), slip(wheel, xm, side, p1, fm);
      for (int i = 0; i < 3; i++)
        CHECK_CLOSE(jac[3 * i + j], (fp[i] - fm[i]) / (2 * delta),
                    1e-6 * (1 + fabs(jac[3 * i + j])), "slip_jacobian past Sigma");
    }
  }
}

/* slip_lanes and slip_sides_lanes against slip and slip_jacobian, bit for bit */
static void lanes_are_scalar(const tf_kernel *k, const char *math) {
  const tf_filippov_ops *ops = k->filippov;
  double x[3 * LANES], p[(MAXP + 1) * LANES], t[LANES] = {0}, dx[3 * LANES];
  int code[LANES], np = (int)k->nparams;
  double states[LANES][3], sides[LANES], conts[LANES];
  for (int l = 0; l < LANES; l++) {
    double x0[3];
    params_with(0, p);
    on_sigma(0.15 + 0.01 * l, -1.2 + 0.02 * l, base, x0);
    const double s = (l % 4 == 0) ? 0 : (l % 4 == 1 ? 1e-3 : l % 4 == 2 ? -1e-3 : 1e-7 * l);
    across(x0, s, base, states[l]);
    sides[l] = l == 5 ? 0 : (l % 3 == 0 ? 1 : -1);
    conts[l] = l % 2;
  }
  for (int l = 0; l < LANES; l++) {
    for (int i = 0; i < 3; i++) x[i * LANES + l] = states[l][i];
    for (int j = 0; j < np; j++) p[j * LANES + l] = j == I_CONT ? conts[l] : base[j];
    p[np * LANES + l] = sides[l];
  }
  ops->slip_lanes(LANES, t, x, p, dx, code);
  for (int l = 0; l < LANES; l++) {
    if (sides[l] == 0) continue;
    double q[MAXP], f[3];
    params_with(conts[l], q);
    CHECK(ops->slip(0, states[l], (int)sides[l], q, f) == 0, "slip");
    const double g[3] = {dx[l], dx[LANES + l], dx[2 * LANES + l]};
    CHECK(same_bits(f, g, 3) && code[l] == 0, "%s slip_lanes lane %d (side %g, continuation %g)",
          math, l, sides[l], conts[l]);
  }
  double q[MAXP], h[LANES], up[3 * LANES], down[3 * LANES], jup[9 * LANES], jdown[9 * LANES];
  params_with(1, q);
  ops->slip_sides_lanes(LANES, t, x, q, h, up, down, jup, jdown, code);
  for (int l = 0; l < LANES; l++) {
    double fu[3], fd[3], ju[9], jd[9];
    ops->slip(0, states[l], +1, q, fu), ops->slip(0, states[l], -1, q, fd);
    ops->slip_jacobian(0, states[l], +1, q, ju), ops->slip_jacobian(0, states[l], -1, q, jd);
    bool same = h[l] == ops->switching(states[l], q, NULL);
    for (int i = 0; i < 3; i++)
      same = same && fu[i] == up[i * LANES + l] && fd[i] == down[i * LANES + l];
    for (int i = 0; i < 9; i++)
      same = same && ju[i] == jup[i * LANES + l] && jd[i] == jdown[i * LANES + l];
    CHECK(same, "%s slip_sides_lanes lane %d under continuation 1", math, l);
  }
}

static void refuses_other_values(void) {
  double p[MAXP];
  params_with(0.5, p);
  tf_error err = {0};
  CHECK(wheel->prepare(p, &err) != 0 && strstr(err.msg, "continuation"),
        "continuation 0.5 refused: %s", err.msg);
}

int main(void) {
  wheel = tf_kernel_find("wheel");
  CHECK(wheel && wheel->nparams <= MAXP, "the wheel kernel");
  if (!wheel) return check_report("test_wheel_continuation");
  I_D = index_of("d"), I_M = index_of("m"), I_BETA = index_of("beta");
  I_OMEGA0 = index_of("omega0"), I_MU = index_of("mu"), I_GAMMA = index_of("gamma");
  I_KAPPA = index_of("kappa"), I_CONT = index_of("continuation");
  for (size_t i = 0; i < wheel->nparams; i++) base[i] = wheel->params[i].def;
  tf_error err = {0};
  CHECK(wheel->prepare(base, &err) == 0, "%s", err.msg);
  CHECK(base[I_CONT] == 0, "continuation 0 by default");
  own_side_unchanged();
  past_sigma_is_the_continuation();
  bounded_far_past();
  smooth_across_sigma();
  jacobian_past_sigma();
  lanes_are_scalar(wheel, "exact");
  CHECK(wheel->fast_math != NULL, "the wheel has a fast variant");
  if (wheel->fast_math) lanes_are_scalar(wheel->fast_math, "fast");
  refuses_other_values();
  return check_report("test_wheel_continuation");
}
