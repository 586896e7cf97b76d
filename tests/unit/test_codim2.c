/* test_codim2.c — the extended Filippov machinery (codim2.c, evolve2.c, dual_contact.c)
 * against closed forms, also run under the sanitizers:
 *   Antali's Example 2.9/2.16/2.18: R = -1 + x3 cos phi, V = -x3 sin phi, limit directions
 *     0 and pi, sliding iff |x3| < 1, F_s = (0, 0, -2 x3), a = x3, b = 0;
 *   a limit field with A(phi) = cos^3 phi (not a first harmonic): the SVD route gives the
 *     unique tangent combination (0, 0, delta - gamma c0/alpha);
 *   a limit field spanning three directions: no unique sliding vector (reported);
 *   the billiard ball: rolling at t = 2 v0/(7 mu g) with speed 5 v0/7;
 *   the flowmeter rolling at both contacts: v = v_f + (v0 - v_f) e^{-ct/(1+2j)} and the
 *     tangencies of F_SR at Sigma_RR, -+(1+2j)/(j(1+j)) mu (g - j v^2/d) (4.51);
 *   models refusing their field in some directions: the ball fails at its arrival, the
 *     flowmeter in its first stage, and the analysis reports the code (never a verdict). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "codim2.h"
#include "dual_contact.h"
#include "evolve2.h"
#include "kernel.h"
#include "status.h"

static void example_2_9(void) {
  const tf_kernel *k = tf_kernel_find("antali-example");
  tf_codim2_sys s;
  tf_codim2_kernel_ctx c;
  tf_codim2_from_kernel(&s, &c, k, NULL);
  const double xs[] = {0.4, -0.7, 1.5};
  for (int i = 0; i < 3; i++) {
    const double x3 = xs[i], x[3] = {0, 0, x3};
    tf_codim2_point pt;
    tf_codim2_classify(&s, 0, x, &pt);
    CHECK(pt.count == 2, "x3 = %g: %d limit directions", x3, pt.count);
    for (int q = 0; q < pt.count; q++) {
      CHECK(fabs(sin(pt.phi[q])) < 1e-12, "limit direction %g", pt.phi[q]);
      CHECK_CLOSE(pt.R[q], -1 + x3 * cos(pt.phi[q]), 1e-12, "R at a limit direction");
    }
    CHECK((pt.region == TF_CODIM2_SLIDING) == (fabs(x3) < 1), "region %s at x3 = %g",
          tf_codim2_region_name(pt.region), x3);
    tf_codim2_sliding sv;
    CHECK(tf_codim2_sliding_vector(&s, 0, x, &sv) == 0 && sv.how == TF_CODIM2_HARMONIC, "2.17");
    CHECK_CLOSE(sv.Fs[0], 0, 1e-12, "F_s,1");
    CHECK_CLOSE(sv.Fs[1], 0, 1e-12, "F_s,2");
    CHECK_CLOSE(sv.Fs[2], -2 * x3, 1e-12, "F_s,3 = -2 x3 (2.35)");
    CHECK_CLOSE(sv.a, x3, 1e-12, "a = x3");
    CHECK_CLOSE(sv.b, 0, 1e-12, "b = 0");
  }
  const double x0[3] = {0, 0, 0};
  tf_codim2_point pt;
  tf_codim2_classify(&s, 0, x0, &pt);
  CHECK(pt.all_directions && pt.region == TF_CODIM2_SLIDING, "x3 = 0: V == 0, R == -1");
}

/* Hand-made limit fields on Sigma = {x1 = x2 = 0} in R^3. */
static const double C0 = 0.3, ALPHA = -2.0, BETA = -1.5, GAMMA = 0.7, DELTA = 0.2;
static int third_harmonic;

static void sigma_plane(const double *x, void *ctx, double *h, double *grad) {
  (void)ctx;
  h[0] = x[0], h[1] = x[1];
  if (!grad) return;
  memset(grad, 0, 6 * sizeof *grad);
  grad[0] = 1, grad[4] = 1;
}

static int field_cubic(double t, const double *x, const double *dir, void *ctx, double *dx) {
  (void)t, (void)x, (void)ctx;
  const double c3 = dir[0] * dir[0] * dir[0];
  dx[0] = C0 + ALPHA * c3;
  dx[1] = BETA * dir[1];
  dx[2] = third_harmonic ? dir[0] * dir[0] - dir[1] * dir[1] : DELTA + GAMMA * c3;
  return 0;
}

static void general_decomposition(void) {
  const tf_codim2_sys s = {.dim = 3, .sigma2 = sigma_plane, .field2 = field_cubic};
  const double x[3] = {0, 0, 1};
  tf_codim2_sliding sv;
  third_harmonic = 0;
  CHECK(tf_codim2_sliding_vector(&s, 0, x, &sv) == 0 && sv.how == TF_CODIM2_SVD,
        "A = cos^3: svd route (%s)", tf_codim2_decomposition_name(sv.how));
  CHECK_CLOSE(sv.Fs[0], 0, 1e-12, "tangent");
  CHECK_CLOSE(sv.Fs[1], 0, 1e-12, "tangent");
  CHECK_CLOSE(sv.Fs[2], DELTA - GAMMA * C0 / ALPHA, 1e-12, "F_s,3");
  third_harmonic = 1;
  CHECK(tf_codim2_sliding_vector(&s, 0, x, &sv) == -1 && sv.how == TF_CODIM2_NOT_UNIQUE &&
            isnan(sv.Fs[0]),
        "three directions: not unique (%s)", tf_codim2_decomposition_name(sv.how));
}

static void billiard(void) {
  const tf_kernel *k = tf_kernel_find("ball-pool");
  const double p[5] = {0.17, 0.03, 0.2, 9.81, 0.0}, v0 = 2.0, a = 0.4;
  double x[4] = {v0 * cos(a), v0 * sin(a), v0 * cos(a), v0 * sin(a)};
  tf_evolve2_options o = tf_evolve2_default_options();
  tf_evolve2 *e = tf_evolve2_create(k, p, &o);
  CHECK(e != NULL, "engine");
  if (!e) return;
  const tf_evolve2_result r = tf_evolve2_run(e, 0, x, 3.0);
  tf_evolve2_destroy(e);
  CHECK(r.status == TF_MEMBER_OK && r.counts[TF_C2_ROLL_START] == 1, "one roll_start");
  CHECK_CLOSE(r.first_roll_time, 2 * v0 / (7 * 0.2 * 9.81), 1e-12, "rolling onset");
  CHECK_CLOSE(hypot(x[2], x[3]), 5 * v0 / 7, 1e-12, "final speed");
}

static void flowmeter(void) {
  const tf_kernel *k = tf_kernel_find("flowmeter");
  const double r = 0.005, d = 0.096, j = 0.4, g = 1.35, mu = 0.6, c = 0.039, vf = 0.5;
  const double p[7] = {r, d, j, g, mu, c, vf}, v0 = 0.3;
  tf_dual *dc = tf_dual_create(k, p, NULL);
  CHECK(dc != NULL, "engine");
  if (!dc) return;
  double x[4] = {0, 0, 0, v0};
  tf_dc_rr_point a;
  tf_dual_rr_analysis(dc, 0, x, &a);
  const double want = (1 + 2 * j) / (j * (1 + j)) * mu * (g - j * v0 * v0 / d);
  const double drag = -c / (1 + j) * (v0 - vf);
  CHECK_CLOSE(a.lp_sr, drag - want, 1e-12, "e1+ . F_SR(+) (4.30)");
  CHECK_CLOSE(a.lm_sr, drag + want, 1e-12, "e1+ . F_SR(-) (4.30)");
  CHECK_CLOSE(a.F_rr[3], -c / (1 + 2 * j) * (v0 - vf), 1e-12, "F_RR (4.34)");
  const tf_dual_result res = tf_dual_run(dc, 0, x, 20.0);
  tf_dual_destroy(dc);
  CHECK(res.status == TF_MEMBER_OK && res.final_case == TF_DC_RR && res.events == 0, "RR");
  CHECK_CLOSE(x[3], vf + (v0 - vf) * exp(-c * 20.0 / (1 + 2 * j)), 1e-9, "v(20)");
}

/* A model that refuses its field in some slip directions (code -4, fatal): the engines never
 * decide on a field the model did not give, they end the member as the model's failure where
 * the analysis first needs such a direction. */
enum { REFUSED = -4 };
static const tf_kernel *wrapped;

static int ball_field2_refusing(double t, const double *x, const double *dir, const double *p,
                                double *dx) {
  if (dir[1] < -0.99) return REFUSED;
  return wrapped->codim2->field2(t, x, dir, p, dx);
}

static int flowmeter_refusing(double t, const double *x, const double *dp, const double *dm,
                              const double *p, double *dx) {
  if (dp[1] < -0.99) return REFUSED;
  return wrapped->two_contact->field_dual(t, x, dp, dm, p, dx);
}

static void refusals(void) {
  /* the billiard ball slips along a = 0.4 (sin a > 0) until it rolls at t = 2 v0/(7 mu g): its
   * arrival's classification scans every direction of the circle, some of them refused */
  wrapped = tf_kernel_find("ball-pool");
  tf_codim2_ops ops = *wrapped->codim2;
  ops.field2 = ball_field2_refusing;
  tf_kernel k = *wrapped;
  k.codim2 = &ops;
  const double p[5] = {0.17, 0.03, 0.2, 9.81, 0.0}, v0 = 2.0, a = 0.4;
  double x[4] = {v0 * cos(a), v0 * sin(a), v0 * cos(a), v0 * sin(a)};
  tf_evolve2 *e = tf_evolve2_create(&k, p, NULL);
  const tf_evolve2_result r = tf_evolve2_run(e, 0, x, 3.0);
  tf_evolve2_destroy(e);
  CHECK(r.status == TF_MEMBER_FAILED && r.counts[TF_C2_ROLL_START] == 0,
        "refused directions at the arrival: status %d, %ld roll_start", r.status,
        (long)r.counts[TF_C2_ROLL_START]);
  CHECK_CLOSE(r.t, 2 * v0 / (7 * 0.2 * 9.81), 1e-9, "the member ends at its arrival");
  /* the codim-2 analysis reports the refusal where a caller asks for it */
  tf_codim2_sys sys;
  tf_codim2_kernel_ctx store;
  tf_codim2_from_kernel(&sys, &store, &k, p);
  int refusal = 0;
  sys.refusal = &refusal;
  const double on_sigma[4] = {0, 0, 1, 0};
  tf_codim2_sliding sv;
  tf_codim2_sliding_vector(&sys, 0, on_sigma, &sv);
  CHECK(refusal == REFUSED, "the sliding vector's samples: refusal %d", refusal);
  /* the flowmeter rolling at both contacts moves with the sliding vectors of Sigma_SR, whose
   * samples cover every direction of the slipping contact: its first stage fails */
  wrapped = tf_kernel_find("flowmeter");
  tf_two_contact_ops dual_ops = *wrapped->two_contact;
  dual_ops.field_dual = flowmeter_refusing;
  tf_kernel fk = *wrapped;
  fk.two_contact = &dual_ops;
  const double fp[7] = {0.005, 0.096, 0.4, 1.35, 0.6, 0.039, 0.5};
  tf_dual *dc = tf_dual_create(&fk, fp, NULL);
  double y[4] = {0, 0, 0, 0.3};
  const tf_dual_result res = tf_dual_run(dc, 0, y, 20.0);
  tf_dual_destroy(dc);
  CHECK(res.status == TF_MEMBER_FAILED && res.t == 0.0,
        "flowmeter with refused directions: status %d at t = %g", res.status, res.t);
}

int main(void) {
  example_2_9();
  general_decomposition();
  billiard();
  flowmeter();
  refusals();
  return check_report("test_codim2");
}
