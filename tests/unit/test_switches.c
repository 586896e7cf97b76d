/* test_switches.c — the engine of Filippov systems with several switching functions against
 * closed forms:
 *   two unit masses in a chain on a belt at speed vb (springs k1 wall-mass 1 and k2 mass 1-mass
 *     2, Coulomb friction mu_i at each contact), both sticking from x = 0: they ride the belt,
 *     x_i = vb t, until contact 1's multiplier (-k1 x1 + k2 (x2 - x1)) / mu1 reaches -1 at
 *     t1 = mu1 / (k1 vb); then mass 1 slips while mass 2 sticks, x1 = (vb t + mu1) / 2 +
 *     (vb / (2 sqrt 2)) sin(sqrt 2 (t - t1)) in closed form, until contact 2's multiplier
 *     -k2 (x2 - x1) / mu2 reaches -1 (root found here independently with GSL's Brent);
 *   one contact, x' = -1 + s/2 from x = 1: a crossing at t = 2 and no sticking;
 *   one contact, x' = -s: arrival and sticking to the end (sticking time t_end - 1);
 *   one contact, x' = s from x = 0: every mode is consistent (a point of nondeterminism): with
 *     no chooser the member stops there (status codim2); with one, the drawn mode is taken;
 *   two contacts coupled at their intersection (y_i' = s_i + 2 s_j): three consistent modes,
 *     found by hand, and the drawn one is followed. */
#include "switches.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "status.h"

enum { K1, K2, MU1, MU2, VB };

static double chain_h(int i, const double *x, const double *p, double *grad) {
  if (grad) {
    memset(grad, 0, 4 * sizeof *grad);
    grad[2 * i + 1] = 1;
  }
  return x[2 * i + 1] - p[VB];
}

static int chain_f(double t, const double *x, const double *s, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1];
  dx[1] = -p[K1] * x[0] + p[K2] * (x[2] - x[0]) - s[0] * p[MU1];
  dx[2] = x[3];
  dx[3] = -p[K2] * (x[2] - x[0]) - s[1] * p[MU2];
  return 0;
}

static const tf_switches_ops chain_ops = {TF_OPS_SIZE(tf_switches_ops), .nswitches = 2,
                                          .switching = chain_h, .field = chain_f};

static double one_h(int i, const double *x, const double *p, double *grad) {
  (void)i, (void)p;
  if (grad) grad[0] = 1;
  return x[0];
}

static double slope_a, slope_b; /* x' = a + b s */
static int one_f(double t, const double *x, const double *s, const double *p, double *dx) {
  (void)t, (void)x, (void)p;
  dx[0] = slope_a + slope_b * s[0];
  return 0;
}

static const tf_switches_ops one_ops = {TF_OPS_SIZE(tf_switches_ops), .nswitches = 1,
                                        .switching = one_h, .field = one_f};

/* y_i' = s_i + 2 s_j, h_i = y_i: at the origin the modes (slip+, slip+), (slip-, slip-) and
 * (stick, stick) are consistent and no other is (stick at one contact needs lambda = -2 s_j) */
static double pair_h(int i, const double *x, const double *p, double *grad) {
  (void)p;
  if (grad) grad[0] = i == 0, grad[1] = i == 1;
  return x[i];
}

static int pair_f(double t, const double *x, const double *s, const double *p, double *dx) {
  (void)t, (void)x, (void)p;
  dx[0] = s[0] + 2 * s[1];
  dx[1] = 2 * s[0] + s[1];
  return 0;
}

static const tf_switches_ops pair_ops = {TF_OPS_SIZE(tf_switches_ops), .nswitches = 2,
                                         .switching = pair_h, .field = pair_f};

typedef struct log {
  int n;
  tf_sw_event_kind kind[64];
  int contact[64], to[64], choices[64];
  double t[64], x[64][4];
} log_t;

static void on_event(void *ctx, const tf_sw_event *ev) {
  log_t *l = ctx;
  if (l->n >= 64) return;
  l->kind[l->n] = ev->kind, l->contact[l->n] = ev->contact, l->to[l->n] = ev->to;
  l->choices[l->n] = ev->choices, l->t[l->n] = ev->t;
  memcpy(l->x[l->n], ev->x, 4 * sizeof(double));
  l->n++;
}

static double drawn_u;
static int choose(void *ctx, double *u) {
  (void)ctx;
  *u = drawn_u;
  return 0;
}

static tf_switches_options options(void) {
  tf_switches_options o = tf_switches_default_options();
  o.ode.rtol = 1e-12, o.ode.atol = 1e-13, o.ode.max_steps = 1000000;
  o.event_tol = 1e-14;
  return o;
}

static const double chain_p[5] = {1, 1, 0.5, 2, 1};

/* mass 1 slipping, mass 2 riding the belt (closed form for the parameters above) */
static double x1_slip(double t) {
  const double t1 = 0.5, vb = 1;
  return (vb * t + chain_p[MU1]) / 2 + vb / (2 * sqrt(2)) * sin(sqrt(2) * (t - t1));
}

static double lambda2_plus_one(double t, void *ctx) {
  (void)ctx;
  return -(t - x1_slip(t)) / chain_p[MU2] + 1; /* x2 = vb t */
}

static void test_chain(void) {
  const tf_model_def k = {TF_MODEL_HEAD, .name = "chain", .kind = TF_MODEL_SWITCHES, .dim = 4,
                          .switches = &chain_ops};
  const tf_switches_options o = options();
  tf_switches *sw = tf_switches_create(&k, chain_p, &o);
  CHECK(sw != NULL, "create");
  log_t lg = {0};
  tf_switches_set_callbacks(sw, on_event, NULL, NULL, &lg);
  /* the second release, independently */
  gsl_set_error_handler_off();
  gsl_root_fsolver *r = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  gsl_function F = {lambda2_plus_one, NULL};
  gsl_root_fsolver_set(r, &F, 2.0, 4.5);
  double lo = 2, hi = 4.5;
  for (int it = 0; it < 200 && hi - lo > 1e-15; it++) {
    gsl_root_fsolver_iterate(r);
    lo = gsl_root_fsolver_x_lower(r), hi = gsl_root_fsolver_x_upper(r);
  }
  const double t2 = gsl_root_fsolver_root(r);
  gsl_root_fsolver_free(r);

  double x[4] = {0, 1, 0, 1};
  const tf_switches_result res = tf_switches_run(sw, 0, x, t2 + 0.05);
  CHECK(res.status == TF_MEMBER_OK, "status %d", res.status);
  CHECK(lg.n >= 2, "events %d", lg.n);
  if (lg.n >= 2) {
    CHECK(lg.kind[0] == TF_SW_RELEASE && lg.contact[0] == 0, "first event: contact 1 releases");
    CHECK_CLOSE(lg.t[0], 0.5, 1e-10, "t1 = mu1 / (k1 vb)");
    CHECK_CLOSE(lg.x[0][0], 0.5, 1e-10, "x1(t1) = vb t1 (both rode the belt)");
    CHECK_CLOSE(lg.x[0][2], 0.5, 1e-10, "x2(t1) = vb t1");
    /* mode after: contact 1 slip- (code 0), contact 2 stuck (code 1): 0 + 1 * 3 */
    CHECK(lg.to[0] == 3, "mode after the first release %d", lg.to[0]);
    CHECK(lg.kind[1] == TF_SW_RELEASE && lg.contact[1] == 1, "second event: contact 2 releases");
    CHECK_CLOSE(lg.t[1], t2, 1e-9, "second release (Brent on the closed form)");
    CHECK_CLOSE(lg.x[1][0], x1_slip(t2), 1e-9, "x1 at the second release");
    CHECK_CLOSE(lg.x[1][2], t2, 1e-9, "x2 rode the belt until then");
    CHECK(lg.to[1] == 0, "both slip- after (code 0), got %d", lg.to[1]);
  }
  CHECK_CLOSE(res.stick_time[0], 0.5, 1e-10, "contact 1 stuck until t1");
  CHECK_CLOSE(res.stick_time[1], t2, 1e-9, "contact 2 stuck until t2");
  tf_switches_destroy(sw);
}

static tf_switches_result run_one(double a, double b, double x0, double t_end, bool chooser,
                                  log_t *lg, double *x_end) {
  slope_a = a, slope_b = b;
  const tf_model_def k = {TF_MODEL_HEAD, .name = "one", .kind = TF_MODEL_SWITCHES, .dim = 1,
                          .switches = &one_ops};
  const tf_switches_options o = options();
  tf_switches *sw = tf_switches_create(&k, NULL, &o);
  tf_switches_set_callbacks(sw, on_event, chooser ? choose : NULL, NULL, lg);
  double x[1] = {x0};
  const tf_switches_result res = tf_switches_run(sw, 0, x, t_end);
  *x_end = x[0];
  tf_switches_destroy(sw);
  return res;
}

static void test_one_contact(void) {
  log_t lg = {0};
  double x;
  /* x' = -1 + s/2: down at speed 0.5 above Sigma, 1.5 below */
  tf_switches_result r = run_one(-1, 0.5, 1, 3, false, &lg, &x);
  CHECK(r.status == TF_MEMBER_OK && lg.n == 1 && lg.kind[0] == TF_SW_CROSS, "crossing");
  CHECK_CLOSE(lg.t[0], 2, 1e-12, "crossing time 1 / 0.5");
  CHECK_CLOSE(x, -1.5, 1e-10, "x(3) = -1.5 (1 time unit at speed 1.5)");
  CHECK(r.stick_time[0] == 0, "no sticking");

  lg.n = 0; /* x' = -s: attracting from both sides, sticks at t = 1 */
  r = run_one(0, -1, 1, 4, false, &lg, &x);
  CHECK(r.status == TF_MEMBER_OK && lg.n == 1 && lg.kind[0] == TF_SW_ARRIVE, "arrival");
  CHECK_CLOSE(lg.t[0], 1, 1e-12, "arrival time");
  CHECK(fabs(x) < 1e-12, "stays on Sigma: x = %g", x);
  CHECK_CLOSE(r.stick_time[0], 3, 1e-12, "sticking time t_end - 1");

  lg.n = 0; /* x' = s from x = 0: slip-, stick and slip+ are all consistent */
  r = run_one(0, 1, 0, 1, false, &lg, &x);
  CHECK(r.status == TF_MEMBER_CODIM2, "no chooser: status codim2, got %d", r.status);
  CHECK(lg.n == 1 && lg.kind[0] == TF_SW_UNDEFINED && lg.choices[0] == 3, "3 consistent modes");

  lg.n = 0;
  drawn_u = 0.9; /* the last of (slip-, stick, slip+) */
  r = run_one(0, 1, 0, 1, true, &lg, &x);
  CHECK(r.status == TF_MEMBER_OK && lg.n == 1 && lg.kind[0] == TF_SW_CHOICE, "choice");
  CHECK_CLOSE(x, 1, 1e-12, "slip+ drawn: x(1) = 1");
  lg.n = 0;
  drawn_u = 0.5; /* the middle: stick */
  r = run_one(0, 1, 0, 1, true, &lg, &x);
  CHECK(r.status == TF_MEMBER_OK && x == 0, "stick drawn: x stays 0, got %g", x);
}

static void test_pair(void) {
  const tf_model_def k = {TF_MODEL_HEAD, .name = "pair", .kind = TF_MODEL_SWITCHES, .dim = 2,
                          .switches = &pair_ops};
  const tf_switches_options o = options();
  tf_switches *sw = tf_switches_create(&k, NULL, &o);
  log_t lg = {0};
  tf_switches_set_callbacks(sw, on_event, choose, NULL, &lg);
  /* the consistent modes in candidate order (codes 0, 4, 8): slip- slip-, stick stick, slip+
   * slip+; u = 0.9 draws the last, u = 0.1 the first */
  const double us[2] = {0.9, 0.1}, want[2] = {3, -3};
  for (int c = 0; c < 2; c++) {
    double x[4] = {0, 0};
    lg.n = 0, drawn_u = us[c];
    const tf_switches_result r = tf_switches_run(sw, 0, x, 1);
    CHECK(r.status == TF_MEMBER_OK && lg.n == 1 && lg.kind[0] == TF_SW_CHOICE && lg.choices[0] == 3,
          "a choice among 3 modes at the intersection (%d events, %d choices)", lg.n,
          lg.n ? lg.choices[0] : -1);
    CHECK_CLOSE(x[0], want[c], 1e-12, "y1(1) of the drawn mode");
    CHECK_CLOSE(x[1], want[c], 1e-12, "y2(1) of the drawn mode");
  }
  tf_switches_destroy(sw);
}

int main(void) {
  test_pair();
  test_chain();
  test_one_contact();
  return check_report("test_switches");
}
