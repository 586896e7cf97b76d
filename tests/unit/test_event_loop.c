/* test_event_loop.c — the shared event-driven step loop on systems with closed-form answers:
 *   a linear oscillator x'' = -x against a wall at x = 0 with restitution e: from (1, 0) the
 *     impacts are at t_k = pi/2 + k pi with speeds e^k (the dense output is not exact here, so
 *     the landing on the integrated solution is what makes the impact times accurate);
 *   a ball bouncing under gravity x'' = -1 with restitution e: impacts at
 *     t_k = sqrt(2) (1 + 2e (1 - e^k)/(1 - e)), accumulating at T = sqrt(2) (1 + 2e/(1 - e)):
 *     the loop stops at the event bound (Zeno) before T;
 *   x' = diag(-1, -3) x with two tangent vectors from the generic frame (q1, q2): over T the
 *     first grows to (a e^-T, b e^-3T) from q1 = (a, b), so lambda_1 = ln |(a e^-T, b e^-3T)| / T
 *     (-1 and -3 asymptotically), and the area by e^-4T: lambda_1 + lambda_2 = -4;
 *   the location of a crossing in a bracket that starts within round-off of the surface (a
 *     state leaving it at 1e-6 of its speed, h computed in floating point): the return at T,
 *     not a round-off root next to the start (Brent alone took one for 15 of 200 variants);
 *   the halving search and Brent evaluate each time at most once (a record of every call on
 *     crossings with closed-form roots), including the bracket ends a caller already has;
 * and the step budget, a failing after-step hook and a failing transition. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_roots.h>

#include "check.h"
#include "event_locate.h"
#include "event_loop.h"
#include "status.h"

typedef struct body {
  int kind; /* 0: oscillator, 1: gravity, 2: linear decay */
  double e;
  long events;
  double t_ev[512], v_ev[512];
  int failing_after_step, failing_transition;
  long steps_seen;
} body;

static void field(void *ctx, double t, const double *x, double *dx) {
  (void)t;
  const body *b = ctx;
  if (b->kind == 2) {
    dx[0] = -x[0], dx[1] = -3 * x[1];
    return;
  }
  dx[0] = x[1];
  dx[1] = b->kind == 0 ? -x[0] : -1.0;
}

static int rhs(double t, const double *x, void *ctx, double *dx) {
  const body *b = ctx;
  field(ctx, t, x, dx);
  if (b->kind == 2) /* tangent vectors after x: the same linear field */
    for (int c = 0; c < 2; c++) field(ctx, t, x + 2 + 2 * c, dx + 2 + 2 * c);
  return 0;
}

static int events(void *ctx, double t, const double *x, double *g) {
  (void)t;
  const body *b = ctx;
  g[0] = b->kind == 2 ? 1.0 : x[0]; /* above the wall */
  return 1;
}

static int impact(void *ctx, int which, double t, double *x) {
  body *b = ctx;
  CHECK(which == 0, "event %d", which);
  if (b->failing_transition) return TF_MEMBER_FAILED;
  if (b->events < 512) b->t_ev[b->events] = t, b->v_ev[b->events] = x[1];
  b->events++;
  x[0] = 0.0;
  x[1] = -b->e * x[1];
  return TF_MEMBER_OK;
}

static int after_step(void *ctx) {
  body *b = ctx;
  b->steps_seen++;
  return b->failing_after_step && b->steps_seen >= 3 ? TF_MEMBER_FAILED : TF_MEMBER_OK;
}

static const tf_event_loop_ops ops = {
    .rhs = rhs, .field = field, .events = events, .transition = impact, .after_step = after_step};

static tf_event_loop_options options(double tol) {
  tf_event_loop_options o = {.ode = tf_ode_default_options()};
  o.ode.rtol = o.ode.atol = tol;
  o.event_tol = 1e-13;
  o.max_event_rate = 1e3;
  o.max_events = 100000;
  o.qr_interval = 0.5;
  return o;
}

static void oscillator(void) {
  body b = {.kind = 0, .e = 0.8};
  const tf_event_loop_options o = options(1e-10);
  tf_event_loop *l = tf_event_loop_create(2, 0, &ops, &b, &o);
  double x[2] = {1.0, 0.0};
  const tf_event_loop_result r = tf_event_loop_run(l, 0.0, x, 20.0, &b.events);
  CHECK(r.status == TF_MEMBER_OK && r.t == 20.0, "status %d at t = %g", r.status, r.t);
  CHECK(b.events == 6, "%ld impacts in [0, 20] (expected 6)", b.events);
  double err_t = 0, err_v = 0;
  for (long k = 0; k < b.events && k < 6; k++) {
    err_t = fmax(err_t, fabs(b.t_ev[k] - (M_PI / 2 + k * M_PI)));
    err_v = fmax(err_v, fabs(b.v_ev[k] + pow(b.e, (double)k)));
  }
  printf("oscillator at a wall, rtol 1e-10: impact times error %.2e, speeds error %.2e\n", err_t,
         err_v);
  CHECK(err_t < 1e-9 && err_v < 1e-9, "impacts: time error %.3g, speed error %.3g", err_t, err_v);
  /* the final state: x = e^6 sin(t - 5.5 pi) on the last arc */
  CHECK_CLOSE(x[0], pow(b.e, 6) * sin(20.0 - 5.5 * M_PI), 1e-8, "x(20)");
  tf_event_loop_destroy(l);
}

static void zeno(void) {
  body b = {.kind = 1, .e = 0.8};
  tf_event_loop_options o = options(1e-10);
  /* A step starting on the wall (just after an impact) finds the next impact only if the flight
   * spans a point of the locator's grid, 1/128 of the step: the field is a polynomial DOPRI5
   * integrates exactly, so without a bound the steps would grow past that. */
  o.ode.hmax = 1e-3;
  o.max_events = 50;
  tf_event_loop *l = tf_event_loop_create(2, 0, &ops, &b, &o);
  double x[2] = {1.0, 0.0};
  const double t_acc = sqrt(2.0) * (1 + 2 * b.e / (1 - b.e));
  const tf_event_loop_result r = tf_event_loop_run(l, 0.0, x, 100.0, &b.events);
  printf(
      "bouncing ball e = 0.8: stopped (status %d) after %ld impacts at t = %.12f, "
      "accumulation point %.12f\n",
      r.status, b.events, r.t, t_acc);
  CHECK(r.status == TF_MEMBER_ZENO && b.events == 50,
        "status %d after %ld impacts (expected Zeno "
        "after 50)",
        r.status, b.events);
  /* the impacts: t_k = sqrt(2) (1 + 2 e (1 - e^k) / (1 - e)) */
  double err = 0;
  for (long k = 0; k < b.events && k < 50; k++)
    err = fmax(err,
               fabs(b.t_ev[k] - sqrt(2.0) * (1 + 2 * b.e * (1 - pow(b.e, (double)k)) / (1 - b.e))));
  CHECK(err < 1e-9, "impact times: error %.3g", err);
  CHECK(r.t == b.t_ev[49] && r.t < t_acc, "stopped at %.12g, the last impact %.12g", r.t,
        b.t_ev[49]);
  tf_event_loop_destroy(l);
}

static void lyapunov(void) {
  body b = {.kind = 2};
  const tf_event_loop_options o = options(1e-11);
  tf_event_loop *l = tf_event_loop_create(2, 2, &ops, &b, &o);
  double x[6] = {1.0, 1.0};
  const tf_event_loop_result r = tf_event_loop_run(l, 0.0, x, 10.0, &b.events);
  CHECK(r.status == TF_MEMBER_OK && r.lyapunov, "status %d", r.status);
  if (r.lyapunov) {
    printf("x' = diag(-1, -3) x: exponents %.12f, %.12f over %g\n", r.lyapunov[0], r.lyapunov[1],
           r.tangent_time);
    double q[4];
    tf_event_loop_generic_frame(2, 2, q);
    const double lambda1 = log(hypot(q[0] * exp(-10.0), q[1] * exp(-30.0))) / 10.0;
    CHECK_CLOSE(r.lyapunov[0], lambda1, 1e-8, "lambda_1");
    CHECK_CLOSE(r.lyapunov[1], -4.0 - lambda1, 1e-8, "lambda_2");
    CHECK(r.tangent_time == 10.0 && r.segments == 1, "time %g, %d segments", r.tangent_time,
          r.segments);
  }
  tf_event_loop_destroy(l);
}

static void failures(void) {
  body b = {.kind = 0, .e = 1.0};
  tf_event_loop_options o = options(1e-8);
  o.ode.max_steps = 5;
  tf_event_loop *l = tf_event_loop_create(2, 0, &ops, &b, &o);
  double x[2] = {1.0, 0.0};
  tf_event_loop_result r = tf_event_loop_run(l, 0.0, x, 100.0, &b.events);
  CHECK(r.status == TF_MEMBER_MAX_STEPS && r.work.steps == 5, "status %d after %ld steps", r.status,
        r.work.steps);
  tf_event_loop_destroy(l);

  o = options(1e-8);
  l = tf_event_loop_create(2, 0, &ops, &b, &o);
  b.failing_after_step = 1, b.steps_seen = 0;
  x[0] = 1.0, x[1] = 0.0;
  r = tf_event_loop_run(l, 0.0, x, 100.0, &b.events);
  CHECK(r.status == TF_MEMBER_FAILED && r.work.steps == 3, "after-step hook: status %d, %ld steps",
        r.status, r.work.steps);
  b.failing_after_step = 0, b.failing_transition = 1, b.events = 0;
  x[0] = 1.0, x[1] = 0.0;
  r = tf_event_loop_run(l, 0.0, x, 100.0, &b.events);
  CHECK(r.status == TF_MEMBER_FAILED && fabs(r.t - M_PI / 2) < 1e-8,
        "failing transition: status %d at t = %.12g", r.status, r.t);
  tf_event_loop_destroy(l);
}

/* A state leaving a surface h = a.x - a.x0 = 0 at 1e-6 of its speed, with the landing's
 * round-off h(x0) = -1.7e-18 left, h(x(t)) computed in floating point as the engine does:
 * x(t) = x0 + t v + t^2/2 w with a.v = -1.2e-6 |a|^2 and a return at T (g = -h for side -1). */
static const double depart_T = 8.4e-4, surf_a[3] = {0.6, -0.8, 0.3},
                    surf_x0[3] = {0.18589025921, -0.0300590828, -1.03692264};
typedef struct departure {
  double v[3], w[3];
} departure;

static double slow_departure(double t, void *ctx) {
  const departure *d = ctx;
  double h = 0, c = 0;
  for (int i = 0; i < 3; i++) {
    const double x = surf_x0[i] + t * (d->v[i] + 0.5 * t * d->w[i]);
    h += surf_a[i] * x, c += surf_a[i] * surf_x0[i];
  }
  return -(h - c) + 1.7e-18;
}

static double short_flight(double t, void *ctx) {
  (void)ctx;
  return t * (1e-4 - t);
}

static double tiny_bounce(double t, void *ctx) {
  const double t0 = *(const double *)ctx;
  return -(t - t0) * (1.0 + 1e6 * t);
}

static void locate_after_surface_start(void) {
  gsl_root_fsolver *root = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  const double slope = -1.2e-6, a2 = 1.09, along[3] = {0.8, 0.6, 0.0}; /* a . along = 0 */
  int wrong = 0;
  double worst = 0;
  for (int k = 0; k < 200; k++) { /* speeds along the surface and step lengths */
    departure d;
    for (int i = 0; i < 3; i++)
      d.v[i] = (0.1 + 0.002 * k) * along[i] + slope * surf_a[i] / a2,
      d.w[i] = -2 * slope / depart_T * surf_a[i] / a2;
    const double te = tf_event_locate(root, slow_departure, &d, 0.0, 3e-3 + 1e-5 * k, 1e-12);
    wrong += fabs(te - depart_T) > 1e-9;
    worst = fmax(worst, fabs(te - depart_T));
  }
  printf(
      "slow departures from a surface, with round-off: %d of 200 crossings off the return at "
      "T (largest error %.1e)\n",
      wrong, worst);
  /* Brent alone took a round-off root next to the start for 15 of these 200 */
  CHECK(wrong == 0, "%d of 200 located away from the return (largest error %g)", wrong, worst);
  /* a short excursion from the surface, 1/100 of the bracket (a low bounce after an impact, or
   * a long DOP853 step): found, where 32 equal subsamples all lie past it */
  const double t_short = tf_event_locate(root, short_flight, NULL, 0.0, 1e-2, 1e-14);
  printf("short excursion: crossing at %.6e (exact 1e-4)\n", t_short);
  CHECK(fabs(t_short - 1e-4) < 1e-12, "short excursion located at %.6e, not 1e-4", t_short);
  /* a genuine excursion shorter than 2^-24 of a long bracket, from a start clearly inside but
   * small against the far end: a low bounce at the start of a step that ran to t_end */
  for (int k = 0; k < 3; k++) {
    const double t0 = (const double[]){3e-8, 1e-9, 1e-7}[k];
    const double tk = tf_event_locate(root, tiny_bounce, (void *)&t0, 0.0, 1.0, 1e-16);
    CHECK(fabs(tk - t0) < 1e-14, "bounce ending at %g located at %.6e", t0, tk);
  }
  gsl_root_fsolver_free(root);
}

/* g(t) = (t - start) (root - t), every call recorded */
typedef struct recorded {
  double start, root;
  int calls;
  double t[512];
} recorded;

static double recorded_excursion(double t, void *ctx) {
  recorded *r = ctx;
  if (r->calls < 512) r->t[r->calls] = t;
  r->calls++;
  return (t - r->start) * (r->root - t);
}

static int repeated_times(const recorded *r) {
  int repeats = 0;
  for (int i = 0; i < r->calls && i < 512; i++)
    for (int j = 0; j < i; j++) repeats += memcmp(&r->t[i], &r->t[j], sizeof r->t[i]) == 0;
  return repeats;
}

static void locate_without_repeats(void) {
  gsl_root_fsolver *root = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  /* from the surface (g(0) = 0): halvings down to the excursion, then Brent on the bracket
   * the last two halvings found; and an ordinary crossing from inside (start below 0) */
  const double roots[] = {0.3, 1e-5, 3e-7, 0.7}, starts[] = {0.0, 0.0, 0.0, -0.5};
  for (int c = 0; c < 4; c++) {
    recorded r = {.start = starts[c], .root = roots[c]};
    const double te = tf_event_locate(root, recorded_excursion, &r, 0.0, 1.0, 1e-15);
    printf("crossing at %g: located at %.17g with %d evaluations, %d repeated\n", roots[c], te,
           r.calls, repeated_times(&r));
    CHECK(fabs(te - roots[c]) <= 1e-15 * (1 + roots[c]), "crossing at %g located at %.17g",
          roots[c], te);
    CHECK(r.calls > 2 && repeated_times(&r) == 0, "crossing at %g: %d of %d evaluations repeated",
          roots[c], repeated_times(&r), r.calls);
    /* with the ends given, as the event loop's samples give them, neither is evaluated */
    recorded given = {.start = starts[c], .root = roots[c]};
    const double ga = (0.0 - starts[c]) * (roots[c] - 0.0),
                 gb = (1.0 - starts[c]) * (roots[c] - 1.0);
    const double te_given =
        tf_event_locate_from(root, recorded_excursion, &given, 0.0, ga, 1.0, gb, 1e-15);
    CHECK(te_given == te && given.calls == r.calls - 2 && repeated_times(&given) == 0,
          "ends given: %.17g in %d calls (%d without them)", te_given, given.calls, r.calls);
    for (int i = 0; i < given.calls && i < 512; i++)
      CHECK(given.t[i] != 0.0 && given.t[i] != 1.0, "a given end evaluated again");
  }
  gsl_root_fsolver_free(root);
}

int main(void) {
  locate_without_repeats();
  locate_after_surface_start();
  oscillator();
  zeno();
  lyapunov();
  failures();
  return check_report("test_event_loop");
}
