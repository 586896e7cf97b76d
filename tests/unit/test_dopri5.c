/* test_dopri5.c — DOPRI5 against the exact solution of the harmonic oscillator:
 * fixed-step convergence order 5, dense-output accuracy between steps, tolerance
 * proportionality of the adaptive mode, and 6 right-hand sides per accepted step (FSAL). */
#include <math.h>

#include "check.h"
#include "ode.h"

static void oscillator(double t, const double *x, void *ctx, double *dx) {
  (void)t, (void)ctx;
  dx[0] = x[1];
  dx[1] = -x[0];
}

static double global_error(double h, double t_end) {
  tf_dopri5 *s = tf_dopri5_create(2);
  tf_ode_options o = tf_ode_default_options();
  o.fixed_step = true;
  o.h0 = h;
  tf_dopri5_setup(s, oscillator, NULL, &o);
  double x[2] = {1, 0}, t = 0;
  tf_dopri5_integrate(s, &t, x, t_end);
  tf_dopri5_destroy(s);
  return hypot(x[0] - cos(t_end), x[1] + sin(t_end));
}

static void fixed_step_order(void) {
  const double e1 = global_error(0.2, 10.0), e2 = global_error(0.1, 10.0),
               e3 = global_error(0.05, 10.0);
  const double p1 = log2(e1 / e2), p2 = log2(e2 / e3);
  printf("fixed-step errors %.3e %.3e %.3e, observed orders %.3f %.3f\n", e1, e2, e3, p1, p2);
  CHECK(p1 > 4.7 && p1 < 5.5, "order %g", p1);
  CHECK(p2 > 4.8 && p2 < 5.3, "order %g", p2);
}

/* Max dense-output error over the interior of every step of one fixed-step run. */
static double dense_error(double h) {
  tf_dopri5 *s = tf_dopri5_create(2);
  tf_ode_options o = tf_ode_default_options();
  o.fixed_step = true;
  o.h0 = h;
  tf_dopri5_setup(s, oscillator, NULL, &o);
  double x[2] = {1, 0}, t = 0, worst = 0, y[2];
  tf_dopri5_reset(s, t, x);
  while (t < 2.0 - 1e-12) {
    tf_dopri5_step(s, &t, x, 2.0);
    /* remove the step's own global error: compare against the exact flow from the step's
     * start value, i.e. the local interpolation error */
    const double t0 = tf_dopri5_last_step_start(s);
    double x0[2];
    tf_dopri5_dense(s, t0, x0);
    for (int k = 1; k < 8; k++) {
      const double tk = t0 + (t - t0) * k / 8.0, dt = tk - t0;
      tf_dopri5_dense(s, tk, y);
      const double ex0 = x0[0] * cos(dt) + x0[1] * sin(dt);
      const double ex1 = -x0[0] * sin(dt) + x0[1] * cos(dt);
      worst = fmax(worst, hypot(y[0] - ex0, y[1] - ex1));
    }
  }
  tf_dopri5_destroy(s);
  return worst;
}

static void dense_output(void) {
  const double e1 = dense_error(0.2), e2 = dense_error(0.1);
  const double p = log2(e1 / e2);
  printf("dense-output local errors %.3e %.3e, observed local order %.3f\n", e1, e2, p);
  /* a 4th-order continuous extension has local error O(h^5) */
  CHECK(p > 4.5 && p < 5.6, "dense output order %g", p);
  CHECK(e2 < 1e-7, "dense output error %g", e2);
}

static void adaptive_tolerance(void) {
  double errs[3];
  const double tols[3] = {1e-6, 1e-8, 1e-10};
  for (int i = 0; i < 3; i++) {
    tf_dopri5 *s = tf_dopri5_create(2);
    tf_ode_options o = tf_ode_default_options();
    o.rtol = tols[i];
    o.atol = tols[i];
    tf_dopri5_setup(s, oscillator, NULL, &o);
    double x[2] = {1, 0}, t = 0;
    CHECK(tf_dopri5_integrate(s, &t, x, 20.0) == TF_ODE_OK, "integrate failed");
    CHECK(t == 20.0, "did not land on t_end: %.17g", t);
    errs[i] = hypot(x[0] - cos(20.0), x[1] + sin(20.0));
    const tf_ode_stats st = tf_dopri5_stats(s);
    /* 6 evaluations per attempted step after the first (FSAL), plus 2 for the start */
    CHECK(st.rhs_evals <= 6 * (st.steps + st.rejected) + 2, "rhs evals %ld for %ld+%ld steps",
          st.rhs_evals, st.steps, st.rejected);
    printf("tol %.0e: error %.3e in %ld steps (%ld rejected)\n", tols[i], errs[i], st.steps,
           st.rejected);
    tf_dopri5_destroy(s);
  }
  for (int i = 0; i < 3; i++)
    CHECK(errs[i] < 100 * tols[i], "error %g at tol %g", errs[i], tols[i]);
  CHECK(errs[2] < errs[1] && errs[1] < errs[0], "error not decreasing with tolerance");
}

int main(void) {
  fixed_step_order();
  dense_output();
  adaptive_tolerance();
  return check_report("test_dopri5");
}
