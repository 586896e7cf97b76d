/* test_event_drive.c — the event loop's outer loop is the engines' one drive (tf_stepper_drive,
 * tf_event_loop_drive), with the checks and hooks in the loop's order, on the linear oscillator
 * x'' = -x from (1, 0) against a wall at x = 0 reflecting it (restitution 1): x = |cos t|, with
 * the impacts at pi/2 + k pi.  The engine bounds every step by the next point of the grid
 * k / 16 (step_limit), so
 *   - no step passes a grid point, and every grid point in (0, T) is the end of a step: a step
 *     that reaches it is cut there exactly (without the bound the step ends miss them all);
 *   - at rtol 1e-6 DOPRI5's own step on this field is longer than 1/16 (its error ~ h^5 / 600
 *     per unit amplitude), so from h0 = 1/16 every step is the grid's: a budget of N steps ends
 *     with max_steps at t = N / 16 exactly;
 *   - before every step, in this order: the stop token, the budget, the engine's before_step
 *     and step_limit at the step's start (the last step's end, or the impact's time), then the
 *     step and after_step; a token set before the first step ends the run pending at t0 with no
 *     hook called, and a token set at the budget's last step ends it pending, not max_steps
 *     (the flows' order, budget first, gives max_steps there);
 *   - a run taken in part outside the drive (the lanes: top, take_step), then driven to its
 *     end, counts the budget over both and ends where a run driven throughout ends, bitwise. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "checkpoint.h"
#include "event_loop.h"
#include "status.h"

enum { MAX_LOG = 4096, GRID = 16 };

typedef struct wall {
  long events;
  double t_ev[64];
  tf_stop_token *stop;
  long stop_at_step; /* after_step sets the token at this step (0: never) */
  long steps;
  /* the hooks in call order: 'B' before_step, 'L' step_limit, 'A' after_step, 'T' transition,
   * with the time they saw (after_step sees none: NAN) */
  char kind[MAX_LOG];
  double at[MAX_LOG], limit[MAX_LOG];
  int logged;
} wall;

static void note(wall *w, char kind, double t, double limit) {
  if (w->logged >= MAX_LOG) return;
  w->kind[w->logged] = kind, w->at[w->logged] = t, w->limit[w->logged] = limit;
  w->logged++;
}

static void field(void *ctx, double t, const double *x, double *dx) {
  (void)ctx, (void)t;
  dx[0] = x[1], dx[1] = -x[0];
}

static int rhs(double t, const double *x, void *ctx, double *dx) {
  field(ctx, t, x, dx);
  return 0;
}

static int events(void *ctx, double t, const double *x, double *g) {
  (void)ctx, (void)t;
  g[0] = x[0];
  return 1;
}

static int reflect(void *ctx, int which, double t, double *x) {
  (void)which;
  wall *w = ctx;
  if (w->events < 64) w->t_ev[w->events] = t;
  w->events++;
  note(w, 'T', t, NAN);
  x[0] = 0.0, x[1] = -x[1];
  return TF_MEMBER_OK;
}

static void before_step(void *ctx, double t, const double *x) {
  (void)x;
  note(ctx, 'B', t, NAN);
}

static double next_grid_point(void *ctx, double t, const double *x) {
  (void)x;
  const double lim = (floor(t * GRID) + 1) / GRID;
  note(ctx, 'L', t, lim);
  return lim;
}

static int after_step(void *ctx) {
  wall *w = ctx;
  note(w, 'A', NAN, NAN);
  if (++w->steps == w->stop_at_step) w->stop->stopped = true;
  return TF_MEMBER_OK;
}

static const tf_event_loop_ops ops = {.rhs = rhs,
                                      .field = field,
                                      .events = events,
                                      .transition = reflect,
                                      .before_step = before_step,
                                      .after_step = after_step,
                                      .step_limit = next_grid_point};

static tf_event_loop_options options(double tol, long max_steps, tf_stop_token *stop) {
  tf_event_loop_options o = {.ode = tf_ode_default_options()};
  o.ode.rtol = o.ode.atol = tol;
  o.ode.h0 = 1.0 / GRID;
  o.ode.max_steps = max_steps;
  o.ode.stop = stop;
  o.event_tol = 1e-13;
  o.max_event_rate = 1e3;
  o.max_events = 1000;
  return o;
}

static tf_event_loop_result run(wall *w, double tol, long max_steps, double t_end) {
  const tf_event_loop_options o = options(tol, max_steps, w->stop);
  tf_event_loop *l = tf_event_loop_create(2, 0, &ops, w, &o);
  double x[2] = {1.0, 0.0};
  const tf_event_loop_result r = tf_event_loop_run(l, 0.0, x, t_end, &w->events);
  tf_event_loop_destroy(l);
  return r;
}

/* The steps' starts from the log: every 'B', in order. */
static int step_starts(const wall *w, double *starts) {
  int count = 0;
  for (int i = 0; i < w->logged; i++)
    if (w->kind[i] == 'B') starts[count++] = w->at[i];
  return count;
}

static void limit_and_events(void) {
  wall w = {0};
  const double t_end = 10.0;
  const tf_event_loop_result r = run(&w, 1e-10, 0, t_end);
  CHECK(r.status == TF_MEMBER_OK && r.t == t_end, "status %d at t %.17g", r.status, r.t);
  /* impacts at pi/2 + k pi: 3 in [0, 10] */
  CHECK(w.events == 3, "%ld impacts (expected 3)", w.events);
  double err = 0;
  for (long k = 0; k < w.events && k < 3; k++)
    err = fmax(err, fabs(w.t_ev[k] - (M_PI / 2 + (double)k * M_PI)));
  printf("reflected oscillator, steps bounded by the grid k/%d: %ld impacts, time error %.2e\n",
         GRID, w.events, err);
  CHECK(err < 1e-9, "impact times: error %.3g", err);
  /* the hooks' order: B then L at the same time, then A, then the impact's T if any */
  int bad = -1;
  for (int i = 0; i < w.logged && bad < 0; i++) {
    const char k = w.kind[i], prev = i ? w.kind[i - 1] : 'A';
    const bool ok = k == 'B'   ? prev == 'A' || prev == 'T'
                    : k == 'L' ? prev == 'B' && w.at[i] == w.at[i - 1]
                    : k == 'A' ? prev == 'L'
                               : prev == 'A';
    if (!ok) bad = i;
  }
  CHECK(bad < 0, "hook %c at entry %d after %c", bad >= 0 ? w.kind[bad] : '-', bad,
        bad > 0 ? w.kind[bad - 1] : '-');
  CHECK(w.logged < MAX_LOG && w.kind[0] == 'B' && w.at[0] == 0.0, "the first hook: %c at %g",
        w.kind[0], w.at[0]);
  /* each step starts where the last ended (the log's next B) or at the impact (T) and ends
   * no later than its limit; every grid point inside (0, t_end) is a step's end */
  static double starts[MAX_LOG];
  const int n = step_starts(&w, starts);
  CHECK(n == r.work.steps, "%d steps began, %ld counted", n, r.work.steps);
  int crossed = 0, hit = 0;
  double limit = 0;
  for (int i = 0; i < w.logged; i++) {
    if (w.kind[i] == 'L') limit = w.limit[i];
    if ((w.kind[i] == 'B' || w.kind[i] == 'T') && i > 0 && w.at[i] > limit) crossed++;
  }
  for (int i = 0; i < n; i++) hit += starts[i] * GRID == floor(starts[i] * GRID) && starts[i] > 0;
  CHECK(crossed == 0, "%d steps passed their limit", crossed);
  CHECK(hit == (int)(t_end * GRID) - 1, "%d of the %d grid points in (0, %g) ended a step", hit,
        (int)(t_end * GRID) - 1, t_end);
  /* after an impact the next step starts at its time */
  for (int i = 1; i < w.logged; i++)
    if (w.kind[i - 1] == 'T')
      CHECK(w.kind[i] == 'B' && w.at[i] == w.at[i - 1], "after the impact at %.17g: %c at %.17g",
            w.at[i - 1], w.kind[i], w.at[i]);
}

static void budget_and_stop(void) {
  const long N = 7;
  wall w = {0};
  tf_event_loop_result r = run(&w, 1e-6, N, 10.0);
  CHECK(r.status == TF_MEMBER_MAX_STEPS && r.work.steps == N && r.t == (double)N / GRID,
        "a budget of %ld: status %d after %ld steps at t %.17g (expected max_steps at %g)", N,
        r.status, r.work.steps, r.t, (double)N / GRID);

  tf_stop_token stop = {.armed = true, .stopped = true};
  w = (wall){.stop = &stop};
  r = run(&w, 1e-6, N, 10.0);
  CHECK(r.status == TF_MEMBER_PENDING && r.t == 0.0 && r.work.steps == 0 && w.logged == 0,
        "stopped before the first step: status %d at t %g, %ld steps, %d hooks", r.status, r.t,
        r.work.steps, w.logged);

  /* told to stop at the budget's last step: the token is seen first */
  stop = (tf_stop_token){.armed = true};
  w = (wall){.stop = &stop, .stop_at_step = N};
  r = run(&w, 1e-6, N, 10.0);
  CHECK(r.status == TF_MEMBER_PENDING && r.work.steps == N && r.t == (double)N / GRID,
        "stopped at the budget's end: status %d after %ld steps at t %.17g", r.status, r.work.steps,
        r.t);
  /* the two orders of the checks, stop token and budget both saying end */
  tf_drive_end end;
  tf_ode_status st;
  tf_drive d = {.max_steps = N, .stop = &stop};
  CHECK(
      !tf_drive_due(&d, N, 0.0, 1.0, &end, &st) && end == TF_DRIVE_FAILED && st == TF_ODE_MAX_STEPS,
      "budget first: end %d, status %d", (int)end, (int)st);
  d.stop_first = true;
  CHECK(!tf_drive_due(&d, N, 0.0, 1.0, &end, &st) && end == TF_DRIVE_STOPPED && st == TF_ODE_OK,
        "stop first: end %d, status %d", (int)end, (int)st);
  CHECK(!tf_drive_due(&d, 0, 1.0, 1.0, &end, &st) && end == TF_DRIVE_REACHED, "at t_end: end %d",
        (int)end);
}

/* The lanes' way: some steps by top and take_step, then the drive for the rest. */
static tf_event_loop_result in_parts(wall *w, long max_steps, double t_end, double *x) {
  const tf_event_loop_options o = options(1e-10, max_steps, NULL);
  tf_event_loop *l = tf_event_loop_create(2, 0, &ops, w, &o);
  x[0] = 1.0, x[1] = 0.0;
  tf_event_loop_begin(l, 0.0, x, t_end, &w->events);
  bool going = true;
  for (int i = 0; i < 3 && going; i++) going = tf_event_loop_top(l) && tf_event_loop_take_step(l);
  if (going) tf_event_loop_drive(l);
  const tf_event_loop_result r = tf_event_loop_end(l);
  tf_event_loop_destroy(l);
  return r;
}

static void parts(void) {
  wall a = {0}, b = {0};
  double x[2], y[2] = {1.0, 0.0};
  const tf_event_loop_result r = in_parts(&a, 0, 4.0, x);
  const tf_event_loop_options o = options(1e-10, 0, NULL);
  tf_event_loop *l = tf_event_loop_create(2, 0, &ops, &b, &o);
  const tf_event_loop_result s = tf_event_loop_run(l, 0.0, y, 4.0, &b.events);
  tf_event_loop_destroy(l);
  CHECK(r.status == TF_MEMBER_OK && r.t == 4.0 && r.work.steps == s.work.steps &&
            memcmp(x, y, sizeof x) == 0 && a.events == 1 && b.events == 1,
        "in parts: status %d at %g after %ld steps, x(4) %.17g; driven: %ld steps, x(4) %.17g",
        r.status, r.t, r.work.steps, x[0], s.work.steps, y[0]);
  CHECK_CLOSE(x[0], fabs(cos(4.0)), 1e-8, "x(4) = |cos 4|");
  wall c = {0};
  const tf_event_loop_result q = in_parts(&c, 5, 4.0, x);
  CHECK(q.status == TF_MEMBER_MAX_STEPS && q.work.steps == 5,
        "a budget of 5 over both parts: status %d after %ld steps", q.status, q.work.steps);
}

int main(void) {
  limit_and_events();
  budget_and_stop();
  parts();
  return check_report("test_event_drive");
}
