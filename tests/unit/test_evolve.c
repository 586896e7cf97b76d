/* test_evolve.c — the event-driven Filippov integrator against the relay system
 *     x' = y - sign(x), y' = 1 + b y,
 * whose events are known in closed form:
 *   b = 0, from (0.3, 0): arrival on Sigma at t1 = 1 - sqrt(0.4) in the sliding region
 *     (|y| < 1), sliding until y = 1 at t2 = 1, then slip+ with x = (t - 1)^2 / 2;
 *   b = 0, from (-1, 2): crossing at tc = -3 + sqrt(11), then slip+ with x' = t + 1;
 *   b = 1, from (0.3, 0): y = e^t - 1, arrival where e^t - 0.7 - 2t = 0 (Newton below),
 *     sliding until y = 1 at t2 = ln 2, then x = e^t - 2 - 2 (t - ln 2).
 * With b = 1 DOPRI5 is not exact, and event-time errors must fall with the tolerance.
 * A relay whose minus field the model refuses ends at its arrival on Sigma, as a failure; the
 * wheel's two-fold search and analysis with its minus field refused say why they fail. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "evolve.h"
#include "kernel.h"
#include "singularity.h"
#include "status.h"

typedef struct log {
  int n;
  tf_event_kind kind[16];
  double t[16];
} log_t;

static void record(void *ctx, const tf_event *ev) {
  log_t *l = ctx;
  if (l->n < 16) l->kind[l->n] = ev->kind, l->t[l->n] = ev->t, l->n++;
}

static tf_evolve_result run_b(double b, double tol, double x0, double y0, double t_end, double *x,
                              log_t *l) {
  const tf_kernel *k = tf_kernel_find("relay");
  const double p[2] = {1.0, b};
  tf_evolve_options o = tf_evolve_default_options();
  o.ode.rtol = o.ode.atol = tol;
  o.event_tol = 1e-14;
  tf_evolve *e = tf_evolve_create(k, p, &o);
  tf_evolve_set_callbacks(e, record, NULL, l);
  x[0] = x0, x[1] = y0;
  tf_evolve_result r = tf_evolve_run(e, 0.0, x, t_end, 0);
  tf_evolve_destroy(e);
  return r;
}

static tf_evolve_result run(double tol, double x0, double y0, double t_end, double *x, log_t *l) {
  return run_b(0.0, tol, x0, y0, t_end, x, l);
}

static void exponential_case(void) {
  double t1 = 0.5; /* Newton on e^t - 0.7 - 2 t = 0 */
  for (int i = 0; i < 60; i++) t1 -= (exp(t1) - 0.7 - 2 * t1) / (exp(t1) - 2);
  const double t2 = log(2.0), x_end = exp(2.0) - 2 - 2 * (2.0 - t2);
  const double tols[4] = {1e-4, 1e-6, 1e-8, 1e-10};
  double errs[4];
  for (int i = 0; i < 4; i++) {
    log_t l = {0};
    double x[2];
    tf_evolve_result r = run_b(1.0, tols[i], 0.3, 0.0, 2.0, x, &l);
    CHECK(r.status == TF_MEMBER_OK && l.n == 2, "status %d, %d events", r.status, l.n);
    errs[i] = l.n == 2 ? fmax(fabs(l.t[0] - t1), fabs(l.t[1] - t2)) : INFINITY;
    printf(
        "b=1 tol %.0e: events at %.12f, %.12f (exact %.12f, %.12f), error %.2e; x(2) error "
        "%.2e; %ld steps, %ld rhs\n",
        tols[i], l.t[0], l.t[1], t1, t2, errs[i], fabs(x[0] - x_end), r.work.steps,
        r.work.rhs_evals);
    CHECK(errs[i] < 1e3 * tols[i], "event error %g at tol %g", errs[i], tols[i]);
    CHECK(fabs(x[0] - x_end) < 1e3 * tols[i], "x(2) error %g", fabs(x[0] - x_end));
  }
  CHECK(errs[3] < errs[0] / 100, "event error does not fall with tolerance: %g -> %g", errs[0],
        errs[3]);
}

static void sliding_case(void) {
  const double t1 = 1 - sqrt(0.4), t2 = 1.0;
  double prev_err = INFINITY;
  const double tols[3] = {1e-5, 1e-8, 1e-11};
  for (int i = 0; i < 3; i++) {
    log_t l = {0};
    double x[2];
    tf_evolve_result r = run(tols[i], 0.3, 0.0, 3.0, x, &l);
    CHECK(r.status == TF_MEMBER_OK, "status %d", r.status);
    CHECK(l.n == 2 && l.kind[0] == TF_EVENT_SLIDE_START && l.kind[1] == TF_EVENT_SLIDE_END,
          "events: %d (%d, %d)", l.n, l.kind[0], l.kind[1]);
    if (l.n < 2) continue;
    const double err = fmax(fabs(l.t[0] - t1), fabs(l.t[1] - t2));
    printf(
        "tol %.0e: slide start %.15f (exact %.15f), end %.15f; x(3) = %.12f (exact 2); "
        "event error %.2e\n",
        tols[i], l.t[0], t1, l.t[1], x[0], err);
    CHECK(err < 100 * tols[i] + 1e-13, "event time error %g at tol %g", err, tols[i]);
    CHECK_CLOSE(x[0], 2.0, 1e3 * tols[i] + 1e-12, "x(3)");
    CHECK_CLOSE(x[1], 3.0, 1e-12, "y(3)");
    CHECK(err <= prev_err || err < 1e-13, "error did not fall: %g after %g", err, prev_err);
    prev_err = err;
  }
}

static void crossing_case(void) {
  const double tc = -3 + sqrt(11.0);
  log_t l = {0};
  double x[2];
  tf_evolve_result r = run(1e-10, -1.0, 2.0, 2.0, x, &l);
  const double exact = (4.0 - tc * tc) / 2 + (2.0 - tc);
  CHECK(r.status == TF_MEMBER_OK, "status");
  CHECK(l.n == 1 && l.kind[0] == TF_EVENT_CROSSING, "one crossing, got %d events", l.n);
  CHECK_CLOSE(l.t[0], tc, 1e-9, "crossing time");
  CHECK_CLOSE(x[0], exact, 1e-8, "x(2) after crossing");
  printf("crossing at %.15f (exact %.15f); x(2) = %.12f (exact %.12f)\n", l.t[0], tc, x[0], exact);
}

/* x' = -sign(x) - 0.5 x... stays sliding forever at x = 0: from y0 = -0.5 sliding lasts
 * until y = 1 (t = 1.5), and starting on Sigma inside the sliding region starts sliding. */
static void start_on_sigma(void) {
  log_t l = {0};
  double x[2];
  tf_evolve_result r = run(1e-10, 0.0, -0.5, 1.0, x, &l);
  CHECK(r.status == TF_MEMBER_OK && l.n == 0, "status %d, %d events", r.status, l.n);
  CHECK(fabs(x[0]) < 1e-12 && fabs(x[1] - 0.5) < 1e-12, "still sliding at (%g, %g)", x[0], x[1]);
}

/* The relay with its minus field refused everywhere (code -6): from (0.3, 0) the member slips
 * on the plus side to Sigma at t1 = 1 - sqrt(0.4), where crossing or sliding needs the minus
 * field: it ends there as the model's failure, with no event, and a member started on Sigma
 * fails at once. */
static const tf_kernel *plus_side_of; /* the kernel whose plus slip field plus_only keeps */
static int plus_only(double t, const double *x, int side, const double *p, double *dx) {
  if (side < 0) return -6;
  return plus_side_of->filippov->slip(t, x, side, p, dx);
}

/* base with its minus slip field refused (plus_only), the sliding law from the two slips */
static tf_kernel without_minus(const tf_kernel *base, tf_filippov_ops *ops) {
  plus_side_of = base;
  *ops = *base->filippov;
  ops->slip = plus_only;
  ops->stick = NULL, ops->stick_side = NULL, ops->slip_lanes = NULL;
  tf_kernel k = *base;
  k.filippov = ops;
  return k;
}

static void refused_side(void) {
  tf_filippov_ops ops;
  const tf_kernel k = without_minus(tf_kernel_find("relay"), &ops);
  const double p[2] = {1.0, 0.0};
  tf_evolve_options o = tf_evolve_default_options();
  o.ode.rtol = o.ode.atol = 1e-10;
  tf_evolve *e = tf_evolve_create(&k, p, &o);
  log_t l = {0};
  tf_evolve_set_callbacks(e, record, NULL, &l);
  double x[2] = {0.3, 0.0};
  tf_evolve_result r = tf_evolve_run(e, 0.0, x, 2.0, 0);
  CHECK(r.status == TF_MEMBER_FAILED && l.n == 0, "minus field refused: status %d, %d events",
        r.status, l.n);
  CHECK_CLOSE(r.t, 1 - sqrt(0.4), 1e-9, "minus field refused: ends at the arrival");
  double y[2] = {0.0, -0.5};
  r = tf_evolve_run(e, 0.0, y, 1.0, 0);
  CHECK(r.status == TF_MEMBER_FAILED && r.t == 0.0 && r.work.steps == 0,
        "started on Sigma, minus field refused: status %d at t = %g after %ld steps", r.status, r.t,
        (long)r.work.steps);
  tf_evolve_destroy(e);
}

/* The wheel with its minus slip field refused: its two-fold can be neither found nor analysed,
 * and both say why instead of classifying a field never written. */
static void refused_twofold(void) {
  const tf_kernel *wheel = tf_kernel_find("wheel");
  double p[32];
  for (size_t i = 0; i < wheel->nparams; i++) p[i] = wheel->params[i].def;
  tf_error err;
  double guess[3], x[3];
  int iterations;
  CHECK(wheel->prepare(p, &err) == 0 && wheel->filippov->twofold_guess(p, guess) == 0 &&
            tf_twofold_locate(wheel, p, guess, 1e-12, 50, x, &iterations, &err) == 0,
        "the wheel's two-fold");
  tf_filippov_ops ops;
  const tf_kernel k = without_minus(wheel, &ops);
  double y[3];
  CHECK(tf_twofold_locate(&k, p, guess, 1e-12, 50, y, &iterations, &err) != 0 &&
            strstr(err.msg, "refuses its slip field") != NULL,
        "two-fold search with a refused field: %s", err.msg);
  tf_twofold t;
  CHECK(tf_twofold_analyze(&k, p, x, &t, &err) != 0 && strstr(err.msg, "refuses") != NULL,
        "two-fold analysis with a refused field: %s", err.msg);
}

int main(void) {
  refused_side();
  refused_twofold();
  sliding_case();
  crossing_case();
  exponential_case();
  start_on_sigma();
  return check_report("test_evolve");
}
