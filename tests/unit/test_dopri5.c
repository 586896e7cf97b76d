/* test_dopri5.c — the explicit pairs against exact solutions.  DOPRI5 on the harmonic
 * oscillator: fixed-step convergence order 5, dense-output accuracy between steps, tolerance
 * proportionality of the adaptive mode, and 6 right-hand sides per accepted step (FSAL).
 * Both DOPRI5 and DOP853 on a nonlinear, non-autonomous system with a closed form (a rotation
 * whose rate is the squared radius, and z = exp(sin t)), where a wrong coefficient shows as a
 * lower order (a linear problem sees only a few of the order conditions): fixed-step orders 5
 * and 8, dense-output local orders 5 and 8, tolerance proportionality, and DOP853's 12 (+3
 * dense) evaluations per step and fewer evaluations than DOPRI5 at tight tolerances.
 * Refusals of the right-hand side, for both pairs: outside the domain (> 0) a trial step is
 * retried smaller and the exact solution is still reached; a fatal code (< 0) ends the
 * integration at the last accepted state with the code; a refusal at the state the stepper
 * starts from ends it too.  A step taken again to a time inside it (tf_stepper_step_to) reaches
 * the exact solution there; taken again from the same start (again), it does so with one field
 * evaluation fewer, the same state bit for bit and the same count of right-hand sides. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "ode.h"

static int oscillator(double t, const double *x, void *ctx, double *dx) {
  (void)t, (void)ctx;
  dx[0] = x[1];
  dx[1] = -x[0];
  return 0;
}

static double global_error(double h, double t_end) {
  tf_stepper *s = tf_stepper_create(2);
  tf_ode_options o = tf_ode_default_options();
  o.fixed_step = true;
  o.h0 = h;
  tf_stepper_setup(s, oscillator, NULL, &o);
  double x[2] = {1, 0}, t = 0;
  tf_stepper_integrate(s, &t, x, t_end);
  tf_stepper_destroy(s);
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
  tf_stepper *s = tf_stepper_create(2);
  tf_ode_options o = tf_ode_default_options();
  o.fixed_step = true;
  o.h0 = h;
  tf_stepper_setup(s, oscillator, NULL, &o);
  double x[2] = {1, 0}, t = 0, worst = 0, y[2];
  tf_stepper_reset(s, t, x);
  while (t < 2.0 - 1e-12) {
    tf_stepper_step(s, &t, x, 2.0);
    /* remove the step's own global error: compare against the exact flow from the step's
     * start value, i.e. the local interpolation error */
    const double t0 = tf_stepper_last_step_start(s);
    double x0[2];
    tf_stepper_dense(s, t0, x0);
    for (int k = 1; k < 8; k++) {
      const double tk = t0 + (t - t0) * k / 8.0, dt = tk - t0;
      tf_stepper_dense(s, tk, y);
      const double ex0 = x0[0] * cos(dt) + x0[1] * sin(dt);
      const double ex1 = -x0[0] * sin(dt) + x0[1] * cos(dt);
      worst = fmax(worst, hypot(y[0] - ex0, y[1] - ex1));
    }
  }
  tf_stepper_destroy(s);
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
    tf_stepper *s = tf_stepper_create(2);
    tf_ode_options o = tf_ode_default_options();
    o.rtol = tols[i];
    o.atol = tols[i];
    tf_stepper_setup(s, oscillator, NULL, &o);
    double x[2] = {1, 0}, t = 0;
    CHECK(tf_stepper_integrate(s, &t, x, 20.0) == TF_ODE_OK, "integrate failed");
    CHECK(t == 20.0, "did not land on t_end: %.17g", t);
    errs[i] = hypot(x[0] - cos(20.0), x[1] + sin(20.0));
    const tf_counts st = tf_stepper_stats(s);
    /* 6 evaluations per attempted step after the first (FSAL), plus 2 for the start */
    CHECK(st.rhs_evals <= 6 * (st.steps + st.rejected) + 2, "rhs evals %ld for %ld+%ld steps",
          st.rhs_evals, st.steps, st.rejected);
    printf("tol %.0e: error %.3e in %ld steps (%ld rejected)\n", tols[i], errs[i], st.steps,
           st.rejected);
    tf_stepper_destroy(s);
  }
  for (int i = 0; i < 3; i++)
    CHECK(errs[i] < 100 * tols[i], "error %g at tol %g", errs[i], tols[i]);
  CHECK(errs[2] < errs[1] && errs[1] < errs[0], "error not decreasing with tolerance");
}

/* x' = -y r, y' = x r with r = x^2 + y^2 (conserved), z' = z cos t: from (1.2, 0, 1) a rotation
 * at rate 1.44 and z = exp(sin t) */
static int rotation(double t, const double *x, void *ctx, double *dx) {
  (void)ctx;
  const double r = x[0] * x[0] + x[1] * x[1];
  dx[0] = -x[1] * r;
  dx[1] = x[0] * r;
  dx[2] = x[2] * cos(t);
  return 0;
}

/* the exact solution at t through (t0, x0) */
static void rotation_exact(double t0, const double *x0, double t, double *x) {
  const double w = (x0[0] * x0[0] + x0[1] * x0[1]) * (t - t0), c = cos(w), s = sin(w);
  x[0] = x0[0] * c - x0[1] * s, x[1] = x0[0] * s + x0[1] * c;
  x[2] = x0[2] * exp(sin(t) - sin(t0));
}

static double distance3(const double *a, const double *b) {
  return fmax(fabs(a[2] - b[2]), hypot(a[0] - b[0], a[1] - b[1]));
}

static tf_stepper *rotation_stepper(const char *m, bool fixed, double h_or_tol) {
  tf_stepper *s = tf_stepper_create(3);
  tf_ode_options o = tf_ode_default_options();
  o.type = tf_stepper_type_find(m), o.fixed_step = fixed;
  if (fixed)
    o.h0 = h_or_tol;
  else
    o.rtol = o.atol = h_or_tol;
  tf_stepper_setup(s, rotation, NULL, &o);
  return s;
}

static const double rot_start[3] = {1.2, 0.0, 1.0}, rot_end = 4.0;

static bool evals_unchanged(const tf_stepper *s, long evals) {
  return tf_stepper_stats(s).rhs_evals == evals;
}

static double rotation_error(const char *m, double h) {
  tf_stepper *s = rotation_stepper(m, true, h);
  double x[3] = {rot_start[0], rot_start[1], rot_start[2]}, t = 0, ex[3];
  tf_stepper_integrate(s, &t, x, rot_end);
  tf_stepper_destroy(s);
  rotation_exact(0.0, rot_start, rot_end, ex);
  return distance3(x, ex);
}

/* Largest local interpolation error inside the steps of one fixed-step run, against the exact
 * solution through each step's start value. */
static double rotation_dense_error(const char *m, double h) {
  tf_stepper *s = rotation_stepper(m, true, h);
  double x[3] = {rot_start[0], rot_start[1], rot_start[2]}, t = 0, worst = 0, y[3], x0[3], ex[3];
  tf_stepper_reset(s, t, x);
  while (t < rot_end - 1e-12) {
    tf_stepper_step(s, &t, x, rot_end);
    const double t0 = tf_stepper_last_step_start(s);
    tf_stepper_dense(s, t0, x0);
    for (int k = 1; k < 8; k++) {
      const double tk = t0 + (t - t0) * k / 8.0;
      tf_stepper_dense(s, tk, y);
      rotation_exact(t0, x0, tk, ex);
      worst = fmax(worst, distance3(y, ex));
    }
  }
  tf_stepper_destroy(s);
  return worst;
}

static void nonlinear_orders(const char *m, const char *name, double order, double h) {
  const double e1 = rotation_error(m, h), e2 = rotation_error(m, h / 2),
               e3 = rotation_error(m, h / 4);
  const double p1 = log2(e1 / e2), p2 = log2(e2 / e3);
  printf("%s, nonlinear rotation: fixed-step errors %.3e %.3e %.3e, orders %.3f %.3f\n", name, e1,
         e2, e3, p1, p2);
  CHECK(fabs(p2 - order) < 0.5 && fabs(p1 - order) < 1.0, "%s: orders %g %g, expected %g", name, p1,
        p2, order);
  const double d1 = rotation_dense_error(m, h), d2 = rotation_dense_error(m, h / 2);
  const double pd = log2(d1 / d2);
  /* a continuous extension of order q has local error O(h^(q+1)): DOPRI5's q is 4, DOP853's 7 */
  const double q = order == 8 ? 7 : 4;
  printf("%s dense output: local errors %.3e %.3e, local order %.3f\n", name, d1, d2, pd);
  CHECK(pd > q + 0.5 && pd < q + 2.0, "%s: dense-output local order %g, expected %g", name, pd,
        q + 1);
}

/* DOP853 builds its extension only when asked (3 evaluations), and its cheap sample is the cubic
 * Hermite interpolant: exact at the ends, local error O(h^4) inside. */
static double hermite_error(double h, bool *ends_exact, long *evals_before, long *evals_after) {
  tf_stepper *s = rotation_stepper("dop853", true, h);
  double x[3] = {rot_start[0], rot_start[1], rot_start[2]}, t = 0, y[3], ex[3];
  const double x0[3] = {x[0], x[1], x[2]};
  tf_stepper_reset(s, t, x);
  tf_stepper_step(s, &t, x, rot_end);
  *evals_before = tf_stepper_stats(s).rhs_evals;
  double worst = 0;
  for (int k = 1; k < 8; k++) {
    const double tk = h * k / 8.0;
    tf_stepper_sample(s, tk, y);
    rotation_exact(0.0, x0, tk, ex);
    worst = fmax(worst, distance3(y, ex));
  }
  double a[3], b[3];
  tf_stepper_sample(s, 0.0, a);
  tf_stepper_sample(s, t, b);
  *ends_exact = !memcmp(a, x0, sizeof a) && !memcmp(b, x, sizeof b);
  CHECK(!tf_stepper_sample_is_exact(s) && evals_unchanged(s, *evals_before),
        "sampling evaluated the field");
  tf_stepper_dense(s, 0.5 * t, y); /* builds the extension */
  *evals_after = tf_stepper_stats(s).rhs_evals;
  CHECK(tf_stepper_sample_is_exact(s), "the extension is built but samples do not use it");
  tf_stepper_restart(s, t, x); /* a restart drops a pending extension, keeps a built one */
  tf_stepper_step(s, &t, x, rot_end);
  tf_stepper_restart(s, t, x);
  tf_stepper_dense(s, t - 0.5 * h, y);
  CHECK(isnan(y[0]), "interpolated a step whose stages a restart overwrote: %g", y[0]);
  tf_stepper_destroy(s);
  return worst;
}

static void dop853_lazy_extension(void) {
  bool ends1, ends2;
  long b1, a1, b2, a2;
  const double e1 = hermite_error(0.2, &ends1, &b1, &a1), e2 = hermite_error(0.1, &ends2, &b2, &a2);
  const double p = log2(e1 / e2);
  printf(
      "DOP853 cheap samples (cubic Hermite): local errors %.3e %.3e, order %.3f; evaluations "
      "%ld, %ld with the extension\n",
      e1, e2, p, b1, a1);
  CHECK(ends1 && ends2, "the cheap sample is not the step's start and end");
  CHECK(fabs(p - 4) < 0.6, "Hermite local order %g, expected 4", p);
  CHECK(b1 == 1 + 12 && a1 == b1 + 3, "evaluations %ld then %ld: expected 13 then 16", b1, a1);
}

static void dop853_adaptive(void) {
  double errs[3];
  long evals5 = 0, evals8 = 0;
  const double tols[3] = {1e-7, 1e-9, 1e-11};
  for (int i = 0; i < 3; i++) {
    for (int m = 0; m < 2; m++) {
      tf_stepper *s = rotation_stepper(m ? "dop853" : "dopri5", false, tols[i]);
      double x[3] = {rot_start[0], rot_start[1], rot_start[2]}, t = 0, ex[3];
      CHECK(tf_stepper_integrate(s, &t, x, rot_end) == TF_ODE_OK, "integrate failed");
      rotation_exact(0.0, rot_start, rot_end, ex);
      const tf_counts st = tf_stepper_stats(s);
      if (m) {
        errs[i] = distance3(x, ex);
        /* 12 per attempted step (FSAL), 3 more per accepted one, 2 for the start */
        CHECK(st.rhs_evals <= 12 * (st.steps + st.rejected) + 3 * st.steps + 2,
              "rhs evals %ld for %ld+%ld steps", st.rhs_evals, st.steps, st.rejected);
        evals8 += st.rhs_evals;
        printf("DOP853 tol %.0e: error %.3e in %ld steps (%ld rejected), %ld evaluations\n",
               tols[i], errs[i], st.steps, st.rejected, st.rhs_evals);
      } else {
        evals5 += st.rhs_evals;
      }
      tf_stepper_destroy(s);
    }
  }
  for (int i = 0; i < 3; i++)
    CHECK(errs[i] < 100 * tols[i], "error %g at tol %g", errs[i], tols[i]);
  CHECK(errs[2] < errs[1] && errs[1] < errs[0], "error not decreasing with tolerance");
  printf("evaluations over the three tolerances: DOPRI5 %ld, DOP853 %ld\n", evals5, evals8);
  CHECK(2 * evals8 < evals5, "DOP853 took %ld evaluations against DOPRI5's %ld", evals8, evals5);
}

/* x' = -sqrt(x), outside its domain for x < 0, where it writes a field pointing the wrong way
 * (used, it would give a wrong answer); x(t) = (1 - t/2)^2 from x(0) = 1. */
static int sqrt_decay(double t, const double *x, void *ctx, double *dx) {
  (void)t, (void)ctx;
  if (x[0] < 0) {
    dx[0] = 1e3;
    return 1;
  }
  dx[0] = -sqrt(x[0]);
  return 0;
}

/* x' = -x, failing (code -5) beyond t = 0.5 */
static int decay_until(double t, const double *x, void *ctx, double *dx) {
  (void)ctx;
  dx[0] = -x[0];
  return t > 0.5 ? -5 : 0;
}

static void refusals(const char *method, const char *name) {
  tf_stepper *s = tf_stepper_create(1);
  tf_ode_options o = tf_ode_default_options();
  o.type = tf_stepper_type_find(method), o.rtol = 1e-10, o.atol = 1e-12,
  o.h0 = 4; /* the first trial leaves x >= 0 */
  tf_stepper_setup(s, sqrt_decay, NULL, &o);
  double x[1] = {1}, t = 0;
  const tf_ode_status st = tf_stepper_integrate(s, &t, x, 1.5);
  CHECK(st == TF_ODE_OK && fabs(x[0] - 0.0625) < 1e-9 && tf_stepper_stats(s).rejected > 0,
        "%s: retried past the domain: status %d, x(1.5) = %.12g (exact 0.0625), %ld rejected", name,
        (int)st, x[0], tf_stepper_stats(s).rejected);
  o.h0 = 0;
  tf_stepper_setup(s, decay_until, NULL, &o);
  x[0] = 1, t = 0;
  const tf_ode_status fatal = tf_stepper_integrate(s, &t, x, 2.0);
  CHECK(fatal == TF_ODE_MODEL_FAILED && tf_stepper_model_code(s) == -5 && t <= 0.5 &&
            fabs(x[0] - exp(-t)) < 1e-9,
        "%s: a fatal code ends at the last accepted state: status %d, code %d, x(%g) = %.12g", name,
        (int)fatal, tf_stepper_model_code(s), t, x[0]);
  tf_stepper_setup(s, sqrt_decay, NULL, &o);
  x[0] = -1, t = 0;
  const tf_ode_status start = tf_stepper_integrate(s, &t, x, 1.0);
  CHECK(start == TF_ODE_MODEL_FAILED && tf_stepper_model_code(s) == 1 && t == 0 && x[0] == -1,
        "%s: refused at the start: status %d, code %d", name, (int)start, tf_stepper_model_code(s));
  tf_stepper_destroy(s);
}

/* the rotation, its evaluations counted in ctx */
static int counted_rotation(double t, const double *x, void *ctx, double *dx) {
  ++*(long *)ctx;
  return rotation(t, x, NULL, dx);
}

/* One adaptive step from rot_start, then retakes of it to te[0], te[1], ... from its start (the
 * landing on an event): each against the exact solution, and with `again` against a stepper
 * that evaluates the field at the start every time. */
static void step_to_again(const char *m) {
  const double share[3] = {0.9, 0.83, 0.8317}; /* of the step */
  long calls[2] = {0, 0}, counted[2];
  double x[2][3];
  for (int again = 0; again < 2; again++) {
    tf_stepper *s = tf_stepper_create(3);
    tf_ode_options o = tf_ode_default_options();
    o.type = tf_stepper_type_find(m), o.rtol = o.atol = 1e-10;
    tf_stepper_setup(s, counted_rotation, &calls[again], &o);
    double t = 0, y[3] = {rot_start[0], rot_start[1], rot_start[2]}, ex[3];
    tf_stepper_reset(s, t, y);
    tf_stepper_step(s, &t, y, 1.0);
    for (int i = 0; i < 3; i++) {
      const double te = share[i] * t;
      CHECK(!tf_stepper_step_to(s, 0.0, rot_start, 3, te, x[again], again && i > 0),
            "%s: step_to %g", m, te);
      rotation_exact(0.0, rot_start, te, ex);
      CHECK(distance3(x[again], ex) < 1e-8, "%s: step_to %g off the solution by %.3g", m, te,
            distance3(x[again], ex));
    }
    counted[again] = tf_stepper_stats(s).rhs_evals;
    tf_stepper_destroy(s);
  }
  CHECK(memcmp(x[0], x[1], sizeof x[0]) == 0, "%s: again changes the state", m);
  CHECK(counted[0] == counted[1], "%s: again changes rhs_evals (%ld vs %ld)", m, counted[1],
        counted[0]);
  CHECK(calls[1] == calls[0] - 2, "%s: again evaluates the field %ld times, not %ld - 2", m,
        calls[1], calls[0]);
}

int main(void) {
  step_to_again("dopri5");
  step_to_again("dop853");
  step_to_again("rodas4");
  refusals("dopri5", "DOPRI5");
  refusals("dop853", "DOP853");
  fixed_step_order();
  dense_output();
  adaptive_tolerance();
  nonlinear_orders("dopri5", "DOPRI5", 5, 0.05);
  nonlinear_orders("dop853", "DOP853", 8, 0.4);
  dop853_adaptive();
  dop853_lazy_extension();
  return check_report("test_dopri5");
}
