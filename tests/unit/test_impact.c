/* test_impact.c — the impact engine against closed forms:
 *   a ball thrown up at v0 from a fixed table (g, restitution r): first impact at 2 v0 / g,
 *     impacts at 2 v0 (1 - r^k) / (g (1 - r)), the chattering sequence completed at its
 *     accumulation point 2 v0 / (g (1 - r)), then sticking to the end;
 *   a ball resting on a table s = A sin(omega t) with A omega^2 > g: released where
 *     A omega^2 sin(omega t) = g, then a ballistic flight to the table, whose impact time is
 *     found here independently (GSL Brent on the closed-form gap);
 *   an oscillator x'' = -x at a wall x >= 0 with restitution r: every half period the tangent
 *     map is the flow's -I times the saltation matrix -r I, so both Lyapunov exponents equal
 *     N ln r / T after N impacts in time T (without the saltation term the volume rate differs);
 *   the tangent vectors across impacts on the moving table against central differences of the
 *     engine's own flow map (log |R_cc| of their QR);
 *   a reset that leaves the admissible side: status failed with a message;
 *   a ball pulled off its table by a force k t against g: sticking until t_r = g / k, then
 *     x = k (t - t_r)^3 / 6, through a sticking field that refuses steps reaching past
 *     t_r + 0.05 (retried smaller), one that fails (the model's message), and a table of the
 *     size before constrained_motion (its older constrained);
 *   the valve's Poincare section at the extrema of x screened with the kernel's one-component
 *   rate: the same events bit for bit as with the whole field, and fewer field calls. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "event_loop.h"
#include "impact.h"
#include "model_def.h"
#include "status.h"

static tf_impact_options options(void) {
  tf_impact_options o;
  tf_impact_options_default(&o);
  o.loop = (tf_event_loop_options){.ode = tf_ode_default_options()};
  o.loop.ode.rtol = o.loop.ode.atol = 1e-12;
  o.loop.ode.max_steps = 1000000;
  o.loop.event_tol = 1e-14;
  o.loop.max_event_rate = 1e6;
  o.loop.max_events = 100000;
  o.loop.qr_interval = 0.5;
  return o;
}

typedef struct log {
  int n;
  int kind[4096];
  double t[4096], x[4096][3];
} log_t;

static int observe(void *ctx, tf_impact_event kind, int surface, double t, const double *x) {
  (void)surface;
  log_t *l = ctx;
  if (l->n < 4096) {
    l->kind[l->n] = kind, l->t[l->n] = t;
    memcpy(l->x[l->n], x, 3 * sizeof *x);
    l->n++;
  }
  return 0;
}

static void fixed_table(void) {
  const tf_kernel *k = tf_kernel_find("bouncing_ball");
  CHECK(k != NULL, "bouncing_ball kernel registered");
  if (!k) return;
  const double g = 9.81, r = 0.8, v0 = 2.0, p[] = {g, r, 0.0, 1.0};
  tf_impact_options o = options();
  tf_impact *e = tf_impact_create(k, 0, &o);
  static log_t l;
  l.n = 0;
  tf_impact_set_observer(e, observe, &l);
  double x[3] = {0.0, v0, 0.0};
  const double t_end = 3.0, t_inf = 2 * v0 / (g * (1 - r));
  const tf_impact_result res = tf_impact_run(e, p, 0.0, x, t_end);
  CHECK(res.status == TF_MEMBER_OK, "status %d", res.status);
  CHECK(l.n > 2 && l.kind[0] == TF_IMPACT_HIT, "events %d", l.n);
  CHECK_CLOSE(l.t[0], 2 * v0 / g, 1e-12, "first flight 2 v0 / g");
  double err = 0;
  int hits = 0, acc = -1;
  for (int j = 0; j < l.n; j++) {
    if (l.kind[j] == TF_IMPACT_HIT)
      err = fmax(err, fabs(l.t[j] - 2 * v0 * (1 - pow(r, j + 1)) / (g * (1 - r)))), hits++;
    if (l.kind[j] == TF_IMPACT_ACCUMULATION) acc = j;
  }
  printf(
      "fixed table: %d impacts, impact-time error %.2e, accumulation at %.15f (closed form "
      "%.15f), stick time %.15f\n",
      hits, err, acc >= 0 ? l.t[acc] : NAN, t_inf, res.stick_time);
  CHECK(err < 1e-11, "impact times error %.3g", err);
  CHECK(acc >= 0 && res.chatters == 1, "one chattering episode (%ld)", res.chatters);
  if (acc >= 0) CHECK_CLOSE(l.t[acc], t_inf, 1e-10, "accumulation time 2 v0 / (g (1 - r))");
  CHECK_CLOSE(res.stick_time, t_end - t_inf, 1e-10, "sticking from the accumulation to the end");
  CHECK(res.impacts == hits && res.releases == 0, "impacts %ld, releases %ld", res.impacts,
        res.releases);
  CHECK(x[0] == 0.0 && x[1] == 0.0 && res.t == t_end, "at rest on the table at the end");
  tf_impact_destroy(e);
}

typedef struct gap_ctx {
  double y, v, t, g, A, w;
} gap_ctx;

static double gap(double s, void *c) {
  const gap_ctx *q = c;
  return q->y + q->v * s - 0.5 * q->g * s * s - q->A * sin(q->w * (q->t + s));
}

static void release(void) {
  const tf_kernel *k = tf_kernel_find("bouncing_ball");
  if (!k) return;
  const double g = 9.81, r = 0.5, A = 1.0, w = 4.0, p[] = {g, r, A, w};
  tf_impact_options o = options();
  tf_impact *e = tf_impact_create(k, 0, &o);
  static log_t l;
  l.n = 0;
  tf_impact_set_observer(e, observe, &l);
  double x[3] = {0.0, A * w, 0.0}; /* resting on the table at t = 0 */
  const tf_impact_result res = tf_impact_run(e, p, 0.0, x, 1.2);
  const double t_rel = asin(g / (A * w * w)) / w;
  CHECK(res.status == TF_MEMBER_OK, "status %d", res.status);
  CHECK(l.n >= 2 && l.kind[0] == TF_IMPACT_RELEASE && l.kind[1] == TF_IMPACT_HIT, "events %d", l.n);
  if (l.n < 2) return;
  CHECK_CLOSE(l.t[0], t_rel, 1e-10, "release where A omega^2 sin(omega t) = g");
  CHECK(res.chatters == 0 && res.releases == 1, "chatters %ld, releases %ld", res.chatters,
        res.releases);
  CHECK_CLOSE(res.stick_time, t_rel, 1e-10, "stick time: on the table until the release");
  /* the flight after the release, independently: y_r + v_r s - g s^2 / 2 = A sin(w (t_r + s)) */
  gap_ctx q = {A * sin(w * t_rel), A * w * cos(w * t_rel), t_rel, g, A, w};
  double a = 1e-3;
  while (gap(a, &q) > 0 && a < 10) a += 1e-3; /* first return below the table */
  gsl_function fn = {gap, &q};
  gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  gsl_root_fsolver_set(s, &fn, a - 1e-3, a);
  for (int it = 0; it < 100; it++) {
    gsl_root_fsolver_iterate(s);
    if (gsl_root_fsolver_x_upper(s) - gsl_root_fsolver_x_lower(s) < 1e-15) break;
  }
  const double t_hit = t_rel + gsl_root_fsolver_root(s);
  gsl_root_fsolver_free(s);
  const double vt = A * w * cos(w * t_hit), vb = q.v - g * (t_hit - t_rel);
  printf(
      "vibrating table: release at %.15f (closed form %.15f), impact at %.15f (Brent %.15f), "
      "speed after %.12f (closed form %.12f)\n",
      l.t[0], t_rel, l.t[1], t_hit, l.x[1][1], vt - r * (vb - vt));
  CHECK_CLOSE(l.t[1], t_hit, 1e-10, "impact time after the release");
  CHECK_CLOSE(l.x[1][1], vt - r * (vb - vt), 1e-9, "Newton restitution relative to the table");
  tf_impact_destroy(e);
}

/* x'' = -x at a wall x >= 0 (and a reset that may be broken) */
static double wall_r = 0.8;
static int wall_broken;
static int wall_rhs(double t, const double *x, const double *p, double *dx) {
  (void)t, (void)p;
  dx[0] = x[1], dx[1] = -x[0];
  return 0;
}
static void wall_jac(double t, const double *x, const double *p, double *j) {
  (void)t, (void)x, (void)p;
  j[0] = 0, j[1] = 1, j[2] = -1, j[3] = 0;
}
static double wall_h(int i, const double *x, const double *p, double *grad) {
  (void)i, (void)p;
  if (grad) grad[0] = 1, grad[1] = 0;
  return x[0];
}
static void wall_reset(int i, const double *x, const double *p, double *xp, double *jac) {
  (void)i, (void)p;
  const double r = wall_broken ? -0.5 : wall_r; /* -0.5: keeps moving into the wall */
  xp[0] = x[0], xp[1] = -r * x[1];
  if (jac) jac[0] = 1, jac[1] = 0, jac[2] = 0, jac[3] = -r;
}
static void wall_stick(int i, const double *x, const double *p, double *xs) {
  (void)i, (void)p, (void)x;
  xs[0] = 0, xs[1] = 0;
}
static double wall_constrained(int i, double t, const double *x, const double *p, double *dx) {
  (void)i, (void)t, (void)p;
  dx[0] = dx[1] = 0;
  return x[0]; /* at the wall the spring pulls away: no force */
}
static const tf_impact_ops wall_ops = {
    TF_OPS_SIZE(tf_impact_ops), .rhs = wall_rhs,
    .jacobian = wall_jac,       .nimpacts = 1,
    .surface = wall_h,          .reset = wall_reset,
    .stick = wall_stick,        .constrained = wall_constrained,
};

static const tf_model_def wall = {
    TF_MODEL_HEAD, .name = "wall", .kind = TF_MODEL_IMPACT, .dim = 2, .impact = &wall_ops,
};

static void saltation(void) {
  tf_impact_options o = options();
  o.loop.ode.rtol = o.loop.ode.atol = 1e-11;
  tf_impact *e = tf_impact_create(&wall, 2, &o);
  double x[6] = {0.0, 1.0};
  const int N = 12;
  const double T = (N + 0.5) * M_PI;
  const tf_impact_result res = tf_impact_run(e, NULL, 0.0, x, T);
  CHECK(res.status == TF_MEMBER_OK && res.lyapunov, "status %d", res.status);
  CHECK(res.impacts == N, "impacts %ld", res.impacts);
  if (res.lyapunov) {
    const double want = N * log(wall_r) / T;
    printf("wall oscillator: exponents %.12f %.12f, N ln r / T = %.12f\n", res.lyapunov[0],
           res.lyapunov[1], want);
    CHECK_CLOSE(res.lyapunov[0], want, 1e-8, "lambda1");
    CHECK_CLOSE(res.lyapunov[1], want, 1e-8, "lambda2");
  }
  tf_impact_destroy(e);
  wall_broken = 1;
  e = tf_impact_create(&wall, 0, &o);
  double y[2] = {0.5, 0.0};
  const tf_impact_result bad = tf_impact_run(e, NULL, 0.0, y, 10.0);
  printf("broken reset: status %s, %s\n", tf_member_status_name(bad.status), bad.message);
  CHECK(bad.status == TF_MEMBER_FAILED && strstr(bad.message, "admissible"), "status %d",
        bad.status);
  double z[2] = {-0.5, 0.0};
  wall_broken = 0;
  const tf_impact_result out = tf_impact_run(e, NULL, 0.0, z, 10.0);
  CHECK(out.status == TF_MEMBER_FAILED && strstr(out.message, "outside"), "status %d", out.status);
  tf_impact_destroy(e);
}

/* A ball resting on a table and pulled up by the force k t (per unit mass) against gravity g:
 * x' = v, v' = k t - g in flight; sticking, at rest with the contact force g - k t, until it
 * is released at t_r = g / k; then v = k (t - t_r)^2 / 2, x = k (t - t_r)^3 / 6.  Its sticking
 * field is the refusing constrained_motion; `pulled_mode` picks what it refuses. */
enum { PULLED_RETRY, PULLED_FATAL, PULLED_OLD };
static int pulled_mode, pulled_retries, pulled_new_calls;
static const double pulled_g = 2.0, pulled_k = 1.0; /* t_r = 2 */

static int pulled_rhs(double t, const double *x, const double *p, double *dx) {
  dx[0] = x[1], dx[1] = p[1] * t - p[0];
  return 0;
}
static double pulled_h(int i, const double *x, const double *p, double *grad) {
  (void)i, (void)p;
  if (grad) grad[0] = 1, grad[1] = 0;
  return x[0];
}
static void pulled_reset(int i, const double *x, const double *p, double *xp, double *jac) {
  (void)i, (void)p;
  xp[0] = x[0], xp[1] = -0.5 * x[1];
  if (jac) jac[0] = 1, jac[1] = 0, jac[2] = 0, jac[3] = -0.5;
}
static void pulled_stick(int i, const double *x, const double *p, double *xs) {
  (void)i, (void)p, (void)x;
  xs[0] = 0, xs[1] = 0;
}
static double pulled_force(int i, double t, const double *x, const double *p, double *dx) {
  (void)i, (void)x;
  dx[0] = dx[1] = 0;
  return p[0] - p[1] * t;
}
/* Retry: a table that only exists up to t_r + 0.05, so a sticking step must not reach past it
 * (the stepper's steps grow on the constant field far beyond that).  Fatal: at t > 1. */
static int pulled_motion(int i, double t, const double *x, const double *p, double *dx,
                         double *force) {
  pulled_new_calls++;
  if (pulled_mode == PULLED_FATAL && t > 1.0) return -7;
  if (pulled_mode == PULLED_RETRY && t > p[0] / p[1] + 0.05) return pulled_retries++, 1;
  *force = pulled_force(i, t, x, p, dx);
  return 0;
}
static const char *pulled_failure(int code) {
  return code == -7 ? "the table gave way" : NULL;
}
static const char *const pulled_names[] = {"x", "v"};
static const tf_param pulled_params[] = {{"g", 2.0, 0.0, INFINITY, "gravity", false},
                                         {"k", 1.0, 0.0, INFINITY, "pull rate", false}};
static const tf_impact_ops pulled_ops = {
    TF_OPS_SIZE(tf_impact_ops),
    .rhs = pulled_rhs,
    .nimpacts = 1,
    .surface = pulled_h,
    .reset = pulled_reset,
    .stick = pulled_stick,
    .constrained = pulled_force,
    .constrained_motion = pulled_motion,
};
static const tf_model_def pulled = {
    TF_MODEL_HEAD,
    .name = "pulled",
    .kind = TF_MODEL_IMPACT,
    .dim = 2,
    .state_names = pulled_names,
    .nparams = 2,
    .params = pulled_params,
    .impact = &pulled_ops,
    .failure = pulled_failure,
};

static tf_impact_result run_pulled(const tf_model_def *def, double *x, double t_end) {
  tf_impact_options o = options();
  tf_impact *e = tf_impact_create(def, 0, &o);
  const double p[2] = {pulled_g, pulled_k};
  x[0] = x[1] = 0;
  const tf_impact_result res = tf_impact_run(e, p, 0.0, x, t_end);
  tf_impact_destroy(e);
  return res;
}

static void check_pulled_flight(const tf_impact_result *res, const double *x, const char *what) {
  const double s = 3.0 - pulled_g / pulled_k; /* time since the release, at t = 3 */
  CHECK(res->status == TF_MEMBER_OK, "%s: status %s", what, tf_member_status_name(res->status));
  CHECK(fabs(x[0] - pulled_k * s * s * s / 6) <= 1e-8, "%s: x(3) = %.17g", what, x[0]);
  CHECK(fabs(x[1] - pulled_k * s * s / 2) <= 1e-8, "%s: v(3) = %.17g", what, x[1]);
  CHECK(fabs(res->stick_time - pulled_g / pulled_k) <= 1e-8, "%s: sticking time %.17g", what,
        res->stick_time);
}

/* The sticking field's codes: > 0 retried smaller, < 0 the member's failure with the model's
 * message; a table of the size before constrained_motion still sticks by constrained. */
static void sticking_refusals(void) {
  double x[2];
  pulled_mode = PULLED_RETRY, pulled_retries = 0;
  tf_impact_result res = run_pulled(&pulled, x, 3.0);
  printf("pulled ball: x(3) = %.12f v(3) = %.12f after %d refused sticking stages\n", x[0], x[1],
         pulled_retries);
  check_pulled_flight(&res, x, "retried");
  CHECK(pulled_retries > 0, "no sticking step reached past the table: the retry is untested");

  pulled_mode = PULLED_FATAL;
  res = run_pulled(&pulled, x, 3.0);
  printf("pulled ball, fatal: %s at t = %g: %s\n", tf_member_status_name(res.status), res.t,
         res.message);
  CHECK(res.status == TF_MEMBER_FAILED && strstr(res.message, "the table gave way"),
        "fatal: status %s, message '%s'", tf_member_status_name(res.status), res.message);
  CHECK(res.t <= 1.0, "fatal: ended at t = %g, after the refusal at t > 1", res.t);

  /* compiled before constrained_motion: its size ends there (the member itself is set, as
   * garbage a model would never have written, and must not be called) */
  tf_impact_ops old_ops = pulled_ops;
  old_ops.size = offsetof(tf_impact_ops, constrained_motion);
  tf_model_def old_def = pulled;
  old_def.name = "pulled_old", old_def.impact = &old_ops;
  const tf_model_def *adopted = NULL;
  tf_error err = {0};
  CHECK(tf_model_def_adopt(&old_def, "test", &adopted, &err) == 0, "adopt: %s", err.msg);
  if (!adopted) return;
  pulled_mode = PULLED_OLD, pulled_new_calls = 0;
  res = run_pulled(adopted, x, 3.0);
  check_pulled_flight(&res, x, "old table");
  CHECK(pulled_new_calls == 0, "the old table's constrained_motion was called %d times",
        pulled_new_calls);
  tf_model_def_release(adopted);
}

/* Tangent vectors across impacts on the moving table against central differences of the
 * engine's own flow map: log |R_cc| of the QR of both must agree. */
/* Central differences of the plain engine's flow map over [0, T1] from x0 applied to the
 * start frame V0 (the tangent vectors' start), Gram-Schmidt'd: log |R_cc| / T1 in lr[c]. */
static void flow_map_rates(tf_impact *plain, const double *p, const double *x0, double T1, size_t m,
                           double *lr) {
  double phi[9], v0[9];
  for (int j = 0; j < 3; j++) {
    const double d = 1e-5; /* event times carry ~1e-12: larger d than usual */
    double a[3], b[3];
    memcpy(a, x0, sizeof a), memcpy(b, x0, sizeof b);
    a[j] += d, b[j] -= d;
    tf_impact_run(plain, p, 0.0, a, T1);
    tf_impact_run(plain, p, 0.0, b, T1);
    for (int i = 0; i < 3; i++) phi[i * 3 + j] = (a[i] - b[i]) / (2 * d);
  }
  tf_event_loop_generic_frame(3, m, v0);
  double q[3][3];
  for (size_t c = 0; c < m; c++) {
    double v[3];
    for (int i = 0; i < 3; i++)
      v[i] =
          phi[i * 3] * v0[c * 3] + phi[i * 3 + 1] * v0[c * 3 + 1] + phi[i * 3 + 2] * v0[c * 3 + 2];
    for (size_t b = 0; b < c; b++) {
      const double pr = v[0] * q[b][0] + v[1] * q[b][1] + v[2] * q[b][2];
      for (int i = 0; i < 3; i++) v[i] -= pr * q[b][i];
    }
    const double nv = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    lr[c] = log(nv) / T1;
    for (int i = 0; i < 3; i++) q[c][i] = v[i] / nv;
  }
}

static void saltation_moving(void) {
  const tf_kernel *k = tf_kernel_find("bouncing_ball");
  if (!k) return;
  const double p[] = {9.81, 0.5, 0.37, 2 * M_PI}, x0[3] = {0.3, 4.0, 0.1}, T1 = 3.3;
  tf_impact_options o = options();
  o.loop.qr_interval = 1e9;
  tf_impact *e = tf_impact_create(k, 3, &o), *f = tf_impact_create(k, 0, &o);
  double x[12] = {0}, lr[3];
  memcpy(x, x0, sizeof x0);
  const tf_impact_result r = tf_impact_run(e, p, 0.0, x, T1);
  CHECK(r.chatters == 0 && r.impacts > 2, "impacts, no chattering");
  flow_map_rates(f, p, x0, T1, 3, lr);
  printf("moving table, %ld impacts: tangent %.9f %.9f %.9f, differences %.9f %.9f %.9f\n",
         r.impacts, r.lyapunov[0], r.lyapunov[1], r.lyapunov[2], lr[0], lr[1], lr[2]);
  for (int c = 0; c < 3; c++) CHECK_CLOSE(r.lyapunov[c], lr[c], 1e-6, "log |R_cc| / T");
  tf_impact_destroy(e), tf_impact_destroy(f);
}

/* Through chattering, sticking and release: the tangent vectors carried onto the table (the
 * projection by d stick / dx) against the flow map's differences, which know nothing of
 * tangent vectors.  The map is singular there (perturbations of y and v die): the first
 * rate is compared, with one tangent vector and with three, and the engine reports the two
 * directions it killed. */
static void through_sticking(void) {
  const tf_kernel *k = tf_kernel_find("bouncing_ball");
  if (!k) return;
  const double p[] = {9.81, 0.5, 0.12, 10.0}, x0[3] = {0.1, 0.0, 0.0};
  tf_impact_options o = options();
  o.loop.qr_interval = 1e9;
  tf_impact *f = tf_impact_create(k, 0, &o);
  for (size_t m = 1; m <= 3; m += 2)
    for (int span = 0; span < 2; span++) {
      const double T1 = span ? 20.0 : 3.0;
      tf_impact *e = tf_impact_create(k, m, &o);
      double x[12] = {0}, lr[3];
      memcpy(x, x0, sizeof x0);
      const tf_impact_result r = tf_impact_run(e, p, 0.0, x, T1);
      CHECK(r.status == TF_MEMBER_OK && r.lyapunov, "m = %zu, T = %g: status %d", m, T1, r.status);
      if (!r.lyapunov) { /* a failed run has no exponents to compare */
        tf_impact_destroy(e);
        continue;
      }
      flow_map_rates(f, p, x0, T1, m, lr);
      printf(
          "through sticking, m = %zu, T = %g: %ld impacts, %ld chattering, %ld releases; "
          "tangent %.9f, differences %.9f, collapsed %d\n",
          m, T1, r.impacts, r.chatters, r.releases, r.lyapunov[0], lr[0], r.collapsed);
      CHECK(r.status == TF_MEMBER_OK && r.chatters > 0 && r.releases > 0,
            "chatters, sticks, leaves");
      CHECK_CLOSE(r.lyapunov[0] * T1, lr[0] * T1, 1e-4, "log |R_00| through sticking");
      CHECK(r.collapsed == 2, "sticking kills y and v");
      tf_impact_destroy(e);
    }
  tf_impact_destroy(f);
}

/* The valve kernel's functions, counted: `rate` NULL in the copy that screens with the field. */
static const tf_impact_ops *valve_ops;
static long valve_rhs_calls, valve_rate_calls;
static int counted_rhs(double t, const double *x, const double *p, double *dx) {
  valve_rhs_calls++;
  return valve_ops->rhs(t, x, p, dx);
}
static double counted_rate(int i, double t, const double *x, const double *p) {
  valve_rate_calls++;
  return valve_ops->rate(i, t, x, p);
}

static void valve_sections(bool with_rate, log_t *l, long *rhs_calls) {
  tf_impact_ops ops = *valve_ops;
  ops.rhs = counted_rhs, ops.rate = with_rate ? counted_rate : NULL;
  tf_model_def def = *tf_kernel_find("pressure_valve");
  def.impact = &ops;
  tf_impact_options o = options();
  o.section = TF_SECTION_EXTREMUM, o.section_component = 0;
  tf_impact *e = tf_impact_create(&def, 0, &o);
  l->n = 0;
  tf_impact_set_observer(e, observe, l);
  const double p[] = {1.25, 20.0, 10.0, 0.8, 2.0};
  double x[3] = {0.2, 0.0, 0.0};
  valve_rhs_calls = valve_rate_calls = 0;
  const tf_impact_result res = tf_impact_run(e, p, 0.0, x, 30.0);
  CHECK(res.status == TF_MEMBER_OK && res.sections > 10 && res.impacts > 0,
        "valve: status %d, %ld sections, %ld impacts", res.status, res.sections, res.impacts);
  *rhs_calls = valve_rhs_calls;
  tf_impact_destroy(e);
}

static void section_rate(void) {
  const tf_kernel *k = tf_kernel_find("pressure_valve");
  CHECK(k && k->impact && k->impact->rate, "pressure_valve has a rate");
  if (!k || !k->impact || !k->impact->rate) return;
  valve_ops = k->impact;
  static log_t field, rate;
  long field_calls, rate_calls;
  valve_sections(false, &field, &field_calls);
  valve_sections(true, &rate, &rate_calls);
  const bool same = field.n == rate.n && memcmp(field.kind, rate.kind, sizeof field.kind) == 0 &&
                    memcmp(field.t, rate.t, sizeof field.t) == 0 &&
                    memcmp(field.x, rate.x, sizeof field.x) == 0;
  printf(
      "valve sections: %d events; field calls %ld screening with the field, %ld with the rate "
      "(and %ld rate calls)\n",
      field.n, field_calls, rate_calls, valve_rate_calls);
  CHECK(same, "events screened with the rate differ from those screened with the field");
  CHECK(valve_rate_calls > 0 && rate_calls < field_calls, "the rate is not used for the section");
}

/* The valve's lane callbacks (twofold/model.h) give each lane its scalar function's bits, with
 * each lane's own parameters: pressures negative, zero, tiny and NaN included (the sqrt's
 * continuation), at widths 4, 8 and 16. */
static void valve_lanes(void) {
  const tf_kernel *k = tf_kernel_find("pressure_valve");
  const tf_impact_ops *o = k ? k->impact : NULL;
  CHECK(o && o->rhs_lanes && o->surface_lanes && o->rate_lanes, "pressure_valve has lanes");
  if (!o || !o->rhs_lanes || !o->surface_lanes || !o->rate_lanes) return;
  const double pressures[] = {2.5, 0.0, -1e-12, 1e-300, NAN, 9.75, -0.0, 1e-9};
  int mismatches = 0;
  for (int w = 4; w <= TF_LANES_MAX; w *= 2) {
    double x[3 * TF_LANES_MAX], p[5 * TF_LANES_MAX], t[TF_LANES_MAX];
    double dx[3 * TF_LANES_MAX], h[TF_LANES_MAX], r[TF_LANES_MAX];
    int code[TF_LANES_MAX];
    for (int l = 0; l < w; l++) {
      t[l] = 0.1 * l;
      x[l] = 0.3 * sin(1.0 + l), x[w + l] = cos(2.0 * l), x[2 * w + l] = pressures[l % 8];
      const double pl[5] = {1.25 + 0.01 * l, 20.0 - l, 10.0 + 0.5 * l, 0.8, 0.2 + 0.61 * l};
      for (int j = 0; j < 5; j++) p[j * w + l] = pl[j];
    }
    o->rhs_lanes(w, t, x, p, dx, code);
    o->surface_lanes(0, w, x, p, h);
    for (int l = 0; l < w; l++) {
      double xl[3], pl[5], want[3];
      for (int c = 0; c < 3; c++) xl[c] = x[c * w + l];
      for (int j = 0; j < 5; j++) pl[j] = p[j * w + l];
      const int rc = o->rhs(t[l], xl, pl, want);
      for (int c = 0; c < 3; c++)
        mismatches += memcmp(&want[c], &dx[c * w + l], sizeof want[c]) != 0;
      mismatches += rc != code[l];
      const double hs = o->surface(0, xl, pl, NULL);
      mismatches += memcmp(&hs, &h[l], sizeof hs) != 0;
    }
    for (int c = 0; c < 3; c++) {
      o->rate_lanes(c, w, t, x, p, r);
      for (int l = 0; l < w; l++) {
        double xl[3], pl[5];
        for (int i = 0; i < 3; i++) xl[i] = x[i * w + l];
        for (int j = 0; j < 5; j++) pl[j] = p[j * w + l];
        const double want = o->rate(c, t[l], xl, pl);
        mismatches += memcmp(&want, &r[l], sizeof want) != 0;
      }
    }
  }
  CHECK(mismatches == 0, "valve lanes: %d values differ from the scalar functions'", mismatches);
  /* the event functions it says are state components are those components, bit for bit (the
   * lanes' screening bounds them on the interpolant: impact_lanes.c) */
  CHECK(o->surface_component && o->rate_component && o->surface_component[0] == 0 &&
            o->rate_component[0] == 1 && o->rate_component[1] < 0 && o->rate_component[2] < 0,
        "valve: the seat is x and x's rate is v");
  if (!o->surface_component || !o->rate_component) return;
  int differ = 0;
  for (int i = 0; i < 8; i++) {
    const double xi[3] = {0.3 * sin(1.0 + i), i == 3 ? -0.0 : cos(2.0 * i), pressures[i]};
    const double pi[5] = {1.25, 20.0, 10.0, 0.8, 0.2 + 0.61 * i};
    const double hs = o->surface(0, xi, pi, NULL), rs = o->rate(0, 0.0, xi, pi);
    differ += memcmp(&hs, &xi[o->surface_component[0]], sizeof hs) != 0;
    differ += memcmp(&rs, &xi[o->rate_component[0]], sizeof rs) != 0;
  }
  CHECK(differ == 0, "valve: %d event values differ from the components they are said to be",
        differ);
}

int main(void) {
  gsl_set_error_handler_off();
  section_rate();
  valve_lanes();
  fixed_table();
  release();
  saltation();
  saltation_moving();
  through_sticking();
  sticking_refusals();
  return check_report("test_impact");
}
