/* test_member_dense.c — the member engine's dense output (tf_member_engine_dense) against
 * closed forms:
 *   the harmonic oscillator x' = v, v' = -w^2 x, x(t) = x0 cos wt + (v0 / w) sin wt, on fixed
 *     steps h ending at t = 1: inside the last step the error is that of the continuous
 *     extension (order 4 for DOPRI5, 7 for DOP853) plus the pair's global error (order 5, 8), so
 *     it falls as h^5 and h^8: halving h divides it by 2^5 and 2^8;
 *   the relay x' = y - a sign(x), y' = 1 (Filippov route): on every segment of its solution the
 *     field is a polynomial one (slip: x quadratic in t; sliding: x = 0), which DOPRI5's quartic
 *     extension reproduces, so inside the last step the dense output is the segment's exact
 *     solution from the step's start to rounding;
 *   where there is none (PETSc TS, members side by side, t outside the step) it says so;
 *   during a run (settings.step) every accepted step's dense output: the oscillator's at three
 *     points of every step against the closed form, the steps tiling [0, t_end], lanes asked
 *     for but members run one by one; the relay's steps counted as the result counts them. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "testlib.h"

/* What a step hook saw: the steps, whether they tile the run, the largest error of the dense
 * output at interior points against the oscillator's closed form (w, x0, v0; w = 0: none). */
typedef struct seen {
  long steps, bad;
  double last_end, worst, w, x0, v0;
  bool relay; /* the relay's segments instead (test_relay) */
} seen;

/* The relay's solution at ta + s on the segment the step lies in, from its state at ta: x = 0
 * sliding for |y| < 1, else slip on the side of x (of y where x = 0), x' = y -+ 1. */
static void relay_exact(const double *start, double s, double *x) {
  const bool sliding = fabs(start[0]) < 1e-12 && fabs(start[1]) < 1.0;
  const double side = fabs(start[0]) >= 1e-12 ? copysign(1.0, start[0]) : copysign(1.0, start[1]);
  x[0] = sliding ? 0.0 : start[0] + (start[1] - side) * s + 0.5 * s * s;
  x[1] = start[1] + s;
}

static void watch_step(void *ctx, const tf_member_engine *e, double ta, double tb) {
  seen *sn = ctx;
  double x[2], step[2];
  sn->bad += !(ta < tb && ta == sn->last_end); /* the steps tile the run */
  sn->bad += tf_member_engine_dense(e, tb, x, step) != 0 || step[0] != ta || step[1] != tb;
  sn->bad += tf_member_engine_dense(e, tb + (tb - ta), x, step) != -1;
  double start[2];
  sn->bad += tf_member_engine_dense(e, ta, start, step) != 0;
  for (int i = 1; sn->relay && i <= 3; i++) {
    double exact[2];
    relay_exact(start, (tb - ta) * i / 4.0, exact);
    sn->bad += tf_member_engine_dense(e, ta + (tb - ta) * i / 4.0, x, step) != 0;
    sn->worst = fmax(sn->worst, fmax(fabs(x[0] - exact[0]), fabs(x[1] - exact[1])));
  }
  for (int i = 1; sn->w > 0 && i <= 3; i++) {
    const double t = ta + (tb - ta) * i / 4.0, w = sn->w;
    sn->bad += tf_member_engine_dense(e, t, x, step) != 0;
    const double exact[2] = {sn->x0 * cos(w * t) + sn->v0 / w * sin(w * t),
                             -sn->x0 * w * sin(w * t) + sn->v0 * cos(w * t)};
    sn->worst = fmax(sn->worst, fmax(fabs(x[0] - exact[0]), fabs(x[1] - exact[1])));
  }
  sn->steps++;
  sn->last_end = tb;
}

static tf_member_engine *engine_seen(const char *yaml, seen *sn) {
  return test_member_engine(yaml, "dense.yaml", sn ? watch_step : NULL, sn);
}

static tf_member_engine *engine(const char *yaml) {
  return engine_seen(yaml, NULL);
}

/* The largest error of the dense output of the last step at 5 interior points against the
 * oscillator's closed form, for fixed steps h (t_end 1, a whole number of steps). */
static double oscillator_error(const char *method, double h, double step[2]) {
  const double w = 2.0, x0 = 1.0, v0 = 0.5;
  char yaml[512];
  snprintf(yaml, sizeof yaml,
           "model: {name: harmonic, params: {omega: %g}}\ninitial: {state: [%g, %g]}\n"
           "integrator: {method: %s, step: fixed, h0: %.17g, t_end: 1}\n",
           w, x0, v0, method, h);
  tf_member_engine *e = engine(yaml);
  if (!e) return NAN;
  double final[2];
  tf_member_result r;
  tf_member_engine_run(e, 0, &(tf_member_buffers){.final = final}, &r);
  double x[2], worst = 0.0;
  CHECK(r.status == 1 && r.t == 1.0, "%s h %g: status %d at t %g", method, h, r.status, r.t);
  CHECK(tf_member_engine_dense(e, 1.0, x, step) == 0 && x[0] == final[0] && x[1] == final[1],
        "%s h %g: at the step's end the dense output is the final state", method, h);
  CHECK(fabs(step[0] - (1.0 - h)) < 1e-12 && step[1] == 1.0, "%s: last step [%g, %g]", method,
        step[0], step[1]);
  for (int i = 1; i <= 5; i++) {
    const double t = step[0] + (step[1] - step[0]) * i / 6.0;
    CHECK(tf_member_engine_dense(e, t, x, step) == 0, "%s: dense at %g", method, t);
    const double exact[2] = {x0 * cos(w * t) + v0 / w * sin(w * t),
                             -x0 * w * sin(w * t) + v0 * cos(w * t)};
    worst = fmax(worst, fmax(fabs(x[0] - exact[0]), fabs(x[1] - exact[1])));
  }
  CHECK(tf_member_engine_dense(e, step[0] - 0.5 * h, x, step) == -1 &&
            tf_member_engine_dense(e, 1.0 + 1e-9, x, step) == -1,
        "%s: no dense output outside the last step", method);
  tf_member_engine_destroy(e);
  return worst;
}

static void test_oscillator_order(const char *method, double h, int order) {
  double step[2];
  const double coarse = oscillator_error(method, h, step);
  const double fine = oscillator_error(method, h / 2, step);
  const double observed = log2(coarse / fine);
  printf("%s: dense error %.3g at h = %g, %.3g at h / 2: order %.2f (expected %d)\n", method,
         coarse, h, fine, observed, order);
  CHECK(fine > 1e-13 && fabs(observed - order) < 0.5, "%s: order %.2f of the dense output's %d",
        method, observed, order);
}

/* The relay's last step against its segment's exact solution from the step's start. */
static void test_relay(void) {
  tf_member_engine *e = engine(
      "model: {name: relay, params: {a: 1}}\ninitial: {state: [1, -3]}\n"
      "integrator: {t_end: 6.3, rtol: 1e-6, atol: 1e-9}\n");
  if (!e) return;
  double final[2], step[2], start[2], x[2];
  tf_member_result r;
  tf_member_engine_run(e, 0, &(tf_member_buffers){.final = final}, &r);
  CHECK(r.status == 1 && r.t == 6.3, "relay: status %d at %g", r.status, r.t);
  CHECK(r.events[0] + r.events[1] + r.events[2] > 0, "relay: the run had events");
  CHECK(tf_member_engine_dense(e, 6.3, x, step) == 0 && x[0] == final[0] && x[1] == final[1],
        "relay: the step's end is the final state");
  CHECK(tf_member_engine_dense(e, step[0], start, step) == 0, "relay: the step's start");
  /* x(t) = 1 - 4t + t^2/2 reaches 0 at 4 - sqrt 14 with y < -1 and crosses; y' = 1 brings the
   * crossing back and sliding on x = 0 for -1 < y < 1, left at y = 1 into x > 0: the last step
   * is in slip+, x' = y - 1 */
  CHECK(final[0] > 0 && start[0] >= 0 && start[1] >= 1, "relay: ends in slip+ (x %g)", final[0]);
  double worst = 0.0;
  for (int i = 1; i <= 5; i++) {
    const double t = step[0] + (step[1] - step[0]) * i / 6.0, s = t - step[0];
    CHECK(tf_member_engine_dense(e, t, x, step) == 0, "relay: dense at %g", t);
    const double exact[2] = {start[0] + (start[1] - 1.0) * s + 0.5 * s * s, start[1] + s};
    worst = fmax(worst, fmax(fabs(x[0] - exact[0]), fabs(x[1] - exact[1])));
  }
  printf("relay: last step [%.6g, %.6g], dense error %.3g\n", step[0], step[1], worst);
  CHECK(worst < 1e-13, "relay: the quartic extension reproduces a quadratic (%.3g)", worst);
  tf_member_engine_destroy(e);
}

/* Members side by side share no stepper: no dense output after them. */
static void test_none_after_lanes(void) {
  tf_member_engine *e = engine(
      "model: {name: harmonic}\ninitial: {state: [1, 0]}\n"
      "integrator: {t_end: 1, lanes: 4}\n");
  if (!e) return;
  const uint64_t members[2] = {0, 1};
  double final[4], x[2], step[2];
  tf_member_buffers b[2] = {{.final = final}, {.final = final + 2}};
  tf_member_result r[2];
  tf_member_engine_run_many(e, 2, members, b, r);
  CHECK(e->layout.lanes <= 1 || tf_member_engine_dense(e, 0.5, x, step) == -1,
        "lanes %d: no dense output", e->layout.lanes);
  tf_member_engine_destroy(e);
}

/* The oscillator on DOPRI5's adaptive steps, two members asked for side by side: the hook sees
 * every step of each, one member at a time, and the dense output inside each is the solution
 * to the tolerance's order (rtol 1e-10: errors near 1e-10, far below the 1e-7 bound). */
static void test_during_run(void) {
  seen sn = {.w = 2.0, .x0 = 1.0, .v0 = 0.5};
  tf_member_engine *e = engine_seen(
      "model: {name: harmonic, params: {omega: 2}}\ninitial: {state: [1, 0.5]}\n"
      "integrator: {t_end: 3, rtol: 1e-10, atol: 1e-12, lanes: 4}\n",
      &sn);
  if (!e) return;
  const uint64_t members[2] = {0, 1};
  double final[4];
  tf_member_buffers b[2] = {{.final = final}, {.final = final + 2}};
  tf_member_result r[2];
  tf_member_engine_run_many(e, 2, members, b, r);
  /* each member starts at t0 = 0: the tiling check restarts there */
  CHECK(e->layout.lanes == 1, "a step hook runs members one by one (lanes %d)", e->layout.lanes);
  printf("oscillator during the run: %ld steps seen, dense error %.3g\n", sn.steps, sn.worst);
  CHECK(r[0].status == 1 && r[1].status == 1 && sn.steps == r[0].work.steps + r[1].work.steps,
        "every accepted step seen: %ld of %ld", sn.steps, r[0].work.steps + r[1].work.steps);
  CHECK(sn.bad == 1,
        "steps tile [0, 3] and dense answers inside them (%ld misfits: the second "
        "member's start)",
        sn.bad);
  CHECK(sn.worst < 1e-7 && sn.last_end == 3.0, "dense error %.3g, last step ends %g", sn.worst,
        sn.last_end);
  tf_member_engine_destroy(e);

  seen relay = {.relay = true};
  e = engine_seen(
      "model: {name: relay, params: {a: 1}}\ninitial: {state: [1, -3]}\n"
      "integrator: {t_end: 6.3, rtol: 1e-6, atol: 1e-9}\n",
      &relay);
  if (!e) return;
  tf_member_engine_run(e, 0, &(tf_member_buffers){.final = final}, r);
  printf("relay during the run: %ld steps seen, dense error %.3g\n", relay.steps, relay.worst);
  CHECK(r[0].status == 1 && relay.steps == r[0].work.steps && relay.bad == 0 &&
            relay.last_end == 6.3 && relay.worst < 1e-12,
        "relay: %ld steps seen of %ld, %ld misfits, last ends %g, error %.3g", relay.steps,
        r[0].work.steps, relay.bad, relay.last_end, relay.worst);
  tf_member_engine_destroy(e);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_oscillator_order("dopri5", 0.125, 5);
  test_oscillator_order("dop853", 0.25, 8);
  test_relay();
  test_none_after_lanes();
  test_during_run();
  MPI_Finalize();
  return check_report("test_member_dense");
}
