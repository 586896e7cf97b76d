/* test_tangent.c — tangent dynamics of slip modes from a kernel's exact slip_jacobian agree
 * with the central differences they replace.
 *
 * Each run is made twice by the event-driven integrator, with the kernel's slip Jacobian and
 * with differences (tangent_differences); the differences' truncation error is ~1e-14 and their
 * rounding ~1e-16 / 1e-7, so the exponents must agree to the integration tolerance.  The
 * forced stick-slip oscillator on a fast belt only slips: a damped forced linear oscillator,
 * exponents {0, -zeta, -zeta} as t -> oo, and at any t their sum is the trace -2 zeta.  With
 * configs/stick-slip-spectrum.yaml's belt it crosses and sticks.
 * The relay x' = y - a sign(x), y' = 1 + b y has slip Jacobian [[0, 1], [0, b]]: from (-1, 2)
 * it slips without events until t = 0.2, so the exponents over that span sum to the trace b
 * (the volume rate), both ways. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "evolve.h"
#include "kernel.h"
#include "status.h"

static tf_evolve_result run(const char *name, const double *p, const double *x0, double t_end,
                            int vectors, bool differences, double *x) {
  const tf_kernel *k = tf_kernel_find(name);
  tf_evolve_options o = tf_evolve_default_options();
  o.ode.rtol = o.ode.atol = 1e-10;
  o.tangent_differences = differences;
  tf_evolve *e = tf_evolve_create(k, p, &o);
  CHECK(e && tf_evolve_enable_tangent(e, vectors, 1.0, true) == 0, "%s: evolve created", name);
  memcpy(x, x0, k->dim * sizeof *x);
  tf_evolve_result r = tf_evolve_run(e, 0.0, x, t_end, 0);
  tf_evolve_destroy(e);
  return r;
}

int main(void) {
  CHECK(tf_kernel_find("stick-slip")->filippov->slip_jacobian != NULL,
        "stick-slip has slip_jacobian");
  /* belt far faster than the mass: slip- throughout, a damped forced linear oscillator */
  const double p[] = {0.05, 0.8, 50.0, 1.2, 1.1, 0.0}, x0[] = {0.2, 0.0, 0.0};
  double xe[3], xd[3];
  const tf_evolve_result exact = run("stick-slip", p, x0, 300.0, 3, false, xe);
  const tf_evolve_result diff = run("stick-slip", p, x0, 300.0, 3, true, xd);
  CHECK(exact.status == TF_MEMBER_OK && diff.status == TF_MEMBER_OK, "both runs complete");
  CHECK(exact.events == 0 && diff.events == 0, "no events: %ld, %ld", exact.events, diff.events);
  for (int i = 0; i < 3; i++) CHECK_CLOSE(xe[i], xd[i], 1e-9, "final state");
  double sum = 0;
  for (int i = 0; i < 3; i++) {
    printf("stick-slip lambda_%d: exact %.12f, differences %.12f\n", i + 1, exact.lyapunov[i],
           diff.lyapunov[i]);
    CHECK_CLOSE(exact.lyapunov[i], diff.lyapunov[i], 1e-8, "exponent, exact vs differences");
    sum += exact.lyapunov[i];
  }
  CHECK_CLOSE(sum, -2 * 0.05, 1e-8, "sum of exponents = trace -2 zeta");
  /* from the generic frame (event_loop.h) the QR orders them {0, -zeta, -zeta}, each off by
   * the frame's alignment over one run, ln(c) / 300 (about 0.002 here) */
  CHECK_CLOSE(exact.lyapunov[0], 0.0, 0.01, "phase direction: 0");
  CHECK_CLOSE(exact.lyapunov[1], -0.05, 0.01, "oscillator: -zeta");
  CHECK_CLOSE(exact.lyapunov[2], -0.05, 0.01, "oscillator: -zeta");

  /* with sticking: the larger exponent agrees (the second is the logarithm of a vector that
   * the singular saltation at the start of sliding reduced to rounding, ln(1e-16)/t, in both) */
  const double ps[] = {0.05, 0.8, 0.5, 1.2, 1.1, 0.0};
  const tf_evolve_result se = run("stick-slip", ps, x0, 27.0, 2, false, xe);
  const tf_evolve_result sd = run("stick-slip", ps, x0, 27.0, 2, true, xd);
  CHECK(se.events == sd.events && se.events > 4, "same crossings and sticks: %ld", se.events);
  CHECK_CLOSE(se.lyapunov[0], sd.lyapunov[0], 1e-8, "with sticking, lambda_1");

  const double pr[] = {1.0, 0.8}, r0[] = {-1.0, 2.0};
  double xr[2];
  for (int d = 0; d < 2; d++) {
    const tf_evolve_result r = run("relay", pr, r0, 0.2, 2, d, xr);
    CHECK(r.status == TF_MEMBER_OK && r.events == 0, "relay run slips throughout");
    CHECK_CLOSE(r.lyapunov[0] + r.lyapunov[1], 0.8, 1e-8,
                d ? "relay: sum of exponents = b (differences)" : "relay: sum of exponents = b");
  }
  return check_report("test_tangent");
}
