/* test_stepper_types.c — the stepper registry and the pairs given as data.
 *
 * Every registered type with a tableau satisfies the Runge–Kutta order conditions (Butcher's
 * trees up to order 4, exact rational values) for its solution and its embedded estimate, its
 * rows sum to c, a first-same-as-last row equals b, and its continuous extension is b at
 * theta = 1.  Bogacki–Shampine 3(2), run by the generic tableau loop on the harmonic oscillator
 * x'' = -x (exact solution cos t, -sin t): fixed-step global order 3, local error of the
 * embedded 2nd-order solution of order 3 (the error estimate tracks it, ratio -> 1), a dense
 * output of local order 4, and an adaptive run within its tolerance. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "checkpoint.h"
#include "ode.h"
#include "status.h"
#include "stepper_type.h"

static double sum_b(const double *w, const double *g, int s) {
  double acc = 0.0;
  for (int i = 0; i < s; i++) acc += w[i] * g[i];
  return acc;
}

/* (A g)_i */
static void apply_a(const tf_rk_tableau *t, const double *g, double *out) {
  for (int i = 0; i < t->stages; i++) {
    out[i] = 0.0;
    for (int j = 0; j < i; j++) out[i] += t->a[i * t->stages + j] * g[j];
  }
}

/* The order conditions of the trees up to order min(order, 4) for weights w. */
static void order_conditions(const char *what, const tf_rk_tableau *t, const double *w, int order) {
  enum { S = TF_RK_MAX_STAGES };
  const int s = t->stages;
  double one[S], c2[S], c3[S], ac[S], ac2[S], aac[S], cac[S];
  for (int i = 0; i < s; i++) one[i] = 1.0, c2[i] = t->c[i] * t->c[i], c3[i] = c2[i] * t->c[i];
  apply_a(t, t->c, ac);
  apply_a(t, c2, ac2);
  apply_a(t, ac, aac);
  for (int i = 0; i < s; i++) cac[i] = t->c[i] * ac[i];
  const struct {
    int order;
    const double *g;
    double value;
  } trees[] = {{1, one, 1.0},    {2, t->c, 1.0 / 2}, {3, c2, 1.0 / 3},   {3, ac, 1.0 / 6},
               {4, c3, 1.0 / 4}, {4, cac, 1.0 / 8},  {4, ac2, 1.0 / 12}, {4, aac, 1.0 / 24}};
  for (size_t k = 0; k < sizeof trees / sizeof *trees; k++)
    if (trees[k].order <= order)
      CHECK(fabs(sum_b(w, trees[k].g, s) - trees[k].value) < 1e-14,
            "%s: order-%d condition %zu: %.17g, expected %.17g", what, trees[k].order, k,
            sum_b(w, trees[k].g, s), trees[k].value);
}

static void tableau_checks(const tf_stepper_type *ty) {
  const tf_rk_tableau *t = ty->tableau;
  const int s = t->stages;
  double bhat[TF_RK_MAX_STAGES];
  for (int i = 0; i < s; i++) {
    bhat[i] = t->b[i] - t->e[i];
    double row = 0.0;
    for (int j = 0; j < i; j++) row += t->a[i * s + j];
    CHECK(fabs(row - t->c[i]) < 1e-14, "%s: row %d sums to %g, c = %g", ty->name, i, row, t->c[i]);
  }
  order_conditions(ty->name, t, t->b, ty->order < 4 ? ty->order : 4);
  order_conditions(ty->name, t, bhat, ty->error_order < 4 ? ty->error_order : 4);
  if (ty->fsal_stage == s - 1) {
    CHECK(!memcmp(t->a + (s - 1) * s, t->b, (size_t)s * sizeof *t->b),
          "%s: the first-same-as-last row is not b", ty->name);
    CHECK(t->c[s - 1] == 1.0, "%s: the first-same-as-last stage is not at t + h", ty->name);
  }
  for (int j = 0; j < s && t->dense; j++) {
    double at1 = 0.0;
    for (int p = 0; p < t->dense_degree; p++) at1 += t->dense[j * t->dense_degree + p];
    CHECK(fabs(at1 - t->b[j]) < 1e-14, "%s: dense weight %d at theta = 1: %g, b = %g", ty->name, j,
          at1, t->b[j]);
  }
}

static void registry(void) {
  int with_tableau = 0;
  for (size_t i = 0; tf_stepper_type_at(i); i++) {
    const tf_stepper_type *ty = tf_stepper_type_at(i);
    CHECK(tf_stepper_type_find(ty->name) == ty, "%s is not found by its name", ty->name);
    if (ty->tableau) tableau_checks(ty), with_tableau++;
  }
  CHECK(with_tableau >= 2, "only %d types give a tableau", with_tableau);
  CHECK(tf_stepper_type_find("bs23") && !tf_stepper_type_find("rk45"), "lookup by name");
  CHECK(strcmp(tf_stepper_type_name(NULL), "dopri5") == 0, "the default type");
}

static int oscillator(double t, const double *x, void *ctx, double *dx) {
  (void)t, (void)ctx;
  dx[0] = x[1];
  dx[1] = -x[0];
  return 0;
}

static tf_stepper *bs23(bool fixed, double h_or_tol) {
  tf_stepper *s = tf_stepper_create(2);
  tf_ode_options o = tf_ode_default_options();
  o.type = tf_stepper_type_find("bs23");
  o.fixed_step = fixed;
  if (fixed)
    o.h0 = h_or_tol;
  else
    o.rtol = o.atol = h_or_tol;
  tf_stepper_setup(s, oscillator, NULL, &o);
  return s;
}

static double global_error(double h) {
  tf_stepper *s = bs23(true, h);
  double x[2] = {1, 0}, t = 0;
  tf_stepper_integrate(s, &t, x, 8.0);
  tf_stepper_destroy(s);
  return hypot(x[0] - cos(8.0), x[1] + sin(8.0));
}

static void fixed_step_order(void) {
  const double e1 = global_error(0.1), e2 = global_error(0.05), e3 = global_error(0.025);
  const double p1 = log2(e1 / e2), p2 = log2(e2 / e3);
  printf("bs23 fixed steps: errors %.3e %.3e %.3e, orders %.3f %.3f\n", e1, e2, e3, p1, p2);
  CHECK(fabs(p1 - 3) < 0.2 && fabs(p2 - 3) < 0.1, "orders %g %g, expected 3", p1, p2);
}

/* One step of size h from (1, 0) at t = 0: the error estimate (atol 1, rtol 0: the RMS of the
 * estimate vector) and the RMS of the true error of the embedded solution x_new - estimate. */
static void one_step(double h, double *estimate, double *embedded_error) {
  tf_stepper *s = tf_stepper_create(2);
  tf_ode_options o = tf_ode_default_options();
  o.type = tf_stepper_type_find("bs23"), o.rtol = 0.0, o.atol = 1.0, o.h0 = h;
  tf_stepper_setup(s, oscillator, NULL, &o);
  const double x[2] = {1, 0};
  tf_stepper_reset(s, 0.0, x);
  tf_rk_tableau_attempt(s, 0.0, x, h);
  *estimate = tf_rk_tableau_error(s, x, h);
  const double ex[2] = {cos(h), -sin(h)};
  double sq = 0.0;
  for (int i = 0; i < 2; i++) {
    const double embedded = s->x_new[i] - s->stage[i]; /* the estimate vector is in stage */
    sq += (ex[i] - embedded) * (ex[i] - embedded);
  }
  *embedded_error = sqrt(sq / 2);
  tf_stepper_destroy(s);
}

static void error_estimate_order(void) {
  double est[3], true_err[3];
  for (int i = 0; i < 3; i++) one_step(0.2 / (1 << i), &est[i], &true_err[i]);
  const double p1 = log2(est[0] / est[1]), p2 = log2(est[1] / est[2]);
  printf(
      "bs23 error estimates %.3e %.3e %.3e (orders %.3f %.3f); true errors of the embedded "
      "solution %.3e %.3e %.3e\n",
      est[0], est[1], est[2], p1, p2, true_err[0], true_err[1], true_err[2]);
  CHECK(fabs(p2 - 3) < 0.1 && fabs(p1 - 3) < 0.2, "estimate orders %g %g, expected 3", p1, p2);
  CHECK(fabs(est[2] / true_err[2] - 1) < 0.05, "estimate/true error %g, expected -> 1",
        est[2] / true_err[2]);
}

/* Largest local interpolation error inside the steps of a fixed-step run, against the exact
 * flow from each step's start. */
static double dense_error(double h) {
  tf_stepper *s = bs23(true, h);
  double x[2] = {1, 0}, t = 0, worst = 0, y[2], x0[2];
  tf_stepper_reset(s, t, x);
  while (t < 2.0 - 1e-12) {
    tf_stepper_step(s, &t, x, 2.0);
    const double t0 = tf_stepper_last_step_start(s);
    tf_stepper_dense(s, t0, x0);
    for (int k = 1; k < 8; k++) {
      const double tk = t0 + (t - t0) * k / 8.0, dt = tk - t0;
      tf_stepper_dense(s, tk, y);
      const double ex0 = x0[0] * cos(dt) + x0[1] * sin(dt),
                   ex1 = -x0[0] * sin(dt) + x0[1] * cos(dt);
      worst = fmax(worst, hypot(y[0] - ex0, y[1] - ex1));
    }
    double end[2];
    tf_stepper_dense(s, t, end);
    CHECK(fabs(end[0] - x[0]) < 1e-15 && fabs(end[1] - x[1]) < 1e-15,
          "the extension misses the step's end");
  }
  tf_stepper_destroy(s);
  return worst;
}

static void dense_order(void) {
  const double d1 = dense_error(0.1), d2 = dense_error(0.05);
  const double p = log2(d1 / d2);
  printf("bs23 dense output: local errors %.3e %.3e, local order %.3f\n", d1, d2, p);
  CHECK(fabs(p - 4) < 0.3, "dense-output local order %g, expected 4", p);
}

static void adaptive(void) {
  const double tols[2] = {1e-6, 1e-9};
  double errs[2];
  for (int i = 0; i < 2; i++) {
    tf_stepper *s = bs23(false, tols[i]);
    double x[2] = {1, 0}, t = 0;
    CHECK(tf_stepper_integrate(s, &t, x, 5.0) == TF_ODE_OK, "integrate failed");
    errs[i] = hypot(x[0] - cos(5.0), x[1] + sin(5.0));
    const tf_counts st = tf_stepper_stats(s);
    printf("bs23 tol %.0e: error %.3e in %ld steps (%ld rejected), %ld evaluations\n", tols[i],
           errs[i], st.steps, st.rejected, st.rhs_evals);
    /* 3 per attempted step (first same as last), 2 for the start */
    CHECK(st.rhs_evals == 3 * (st.steps + st.rejected) + 2, "%ld evaluations", st.rhs_evals);
    CHECK(errs[i] < 100 * tols[i], "error %g at tol %g", errs[i], tols[i]);
    tf_stepper_destroy(s);
  }
  CHECK(errs[1] < 1e-2 * errs[0], "errors %g %g do not follow the tolerance", errs[0], errs[1]);
}

/* The engines' outer loop (tf_stepper_drive): the hook sees every accepted step from where the
 * last one ended, the budget, the stop token and the hook each end the drive where they say,
 * and a model's refusal becomes a failed member. */
typedef struct drive_log {
  int seen, end_at;
  double last_t;
  bool contiguous;
} drive_log;

static int log_step(void *ctx, const tf_stepper *s, double ta, double t, const double *x) {
  (void)s, (void)x;
  drive_log *l = ctx;
  l->contiguous = l->contiguous && ta == l->last_t && t > ta;
  l->last_t = t;
  return ++l->seen == l->end_at;
}

static int refuses_after_one(double t, const double *x, void *ctx, double *dx) {
  oscillator(t, x, ctx, dx);
  return t > 1.0 ? -1 : 0;
}

static void drive(void) {
  double x[2] = {1, 0}, t = 0;
  tf_ode_status st;
  drive_log l = {.contiguous = true, .end_at = -1};
  tf_stepper *s = bs23(true, 0.01);
  tf_stepper_reset(s, t, x);
  tf_drive d = {.max_steps = 1000, .accepted = log_step, .ctx = &l};
  CHECK(tf_stepper_drive(s, &t, x, 1.0, &d, &st) == TF_DRIVE_REACHED && st == TF_ODE_OK,
        "the drive did not reach t_end");
  CHECK(t == 1.0 && l.contiguous && l.seen == d.steps && d.steps == 100,
        "t %.17g, %d hooks for %ld steps, contiguous %d", t, l.seen, d.steps, l.contiguous);
  CHECK(fabs(x[0] - cos(1.0)) < 1e-5, "x(1) = %.17g, expected cos 1", x[0]);
  d.max_steps = 7;
  CHECK(tf_stepper_drive(s, &t, x, 2.0, &d, &st) == TF_DRIVE_FAILED && st == TF_ODE_MAX_STEPS,
        "the budget did not end the drive");
  CHECK(d.steps == 7 && fabs(t - 1.07) < 1e-12, "%ld steps to t %.17g", d.steps, t);
  CHECK(tf_member_status_of_step(st) == TF_MEMBER_MAX_STEPS, "budget status");
  l.end_at = l.seen + 3;
  d.max_steps = 1000;
  CHECK(tf_stepper_drive(s, &t, x, 2.0, &d, &st) == TF_DRIVE_HOOK_ENDED && d.steps == 3,
        "the hook did not end the drive after 3 steps (%ld)", d.steps);
  tf_stop_token stop = {.armed = true, .stopped = true};
  d.stop = &stop;
  CHECK(tf_stepper_drive(s, &t, x, 2.0, &d, &st) == TF_DRIVE_STOPPED && d.steps == 0,
        "a stopped token let %ld steps through", d.steps);
  tf_stepper_destroy(s);

  s = tf_stepper_create(2);
  tf_ode_options o = tf_ode_default_options();
  tf_stepper_setup(s, refuses_after_one, NULL, &o);
  t = 0, x[0] = 1, x[1] = 0;
  tf_stepper_reset(s, t, x);
  tf_drive f = {.max_steps = 100000};
  CHECK(tf_stepper_drive(s, &t, x, 5.0, &f, &st) == TF_DRIVE_FAILED && st == TF_ODE_MODEL_FAILED &&
            tf_member_status_of_step(st) == TF_MEMBER_FAILED,
        "a fatal refusal gave drive status %d", (int)st);
  CHECK(t <= 1.0 + 1e-9, "stepped on to t %.17g past the refusal", t);
  tf_stepper_destroy(s);
}

int main(void) {
  registry();
  fixed_step_order();
  error_estimate_order();
  dense_order();
  adaptive();
  drive();
  return check_report("test_stepper_types");
}
