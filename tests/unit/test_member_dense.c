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
 *   where there is none (PETSc TS or contact after the run, members side by side, t outside
 *     the step) it says so;
 *   during a run (settings.step) every accepted step's dense output: the oscillator's at three
 *     points of every step against the closed form, the steps tiling [0, t_end], lanes asked
 *     for but members run one by one; the relay's steps counted as the result counts them;
 *   the impact route: a ball thrown up at v0 from a fixed table with restitution r flies the
 *     parabola y = v_k s - g s^2 / 2 from its k-th impact at T_k = 2 v0 (1 - r^k) / (g (1 - r))
 *     with v_k = v0 r^k; every step the hook sees lies inside one flight (none straddles a T_k)
 *     and its dense output is that parabola (DOPRI5's quartic reproduces a quadratic);
 *   PETSc TS: the oscillator on its own TS and as members of a batch of 3 (each solve seen as
 *     the batch's steps, the member's slot interpolated) against the closed form from each
 *     member's initial state, to the interpolant's accuracy;
 *   SDE: Euler-Maruyama with zero noise is the Euler grid x_{k+1} = x_k + h f(x_k) (computed
 *     here), and the dense output is its linear interpolant; with noise, the dense output
 *     inside a step is the linear interpolant of the step's ends;
 *   the contact route: the billiard ball (ball_pool, K = 0) slips with u' = -7/2 mu g, v' =
 *     -mu g along its direction until u = 0 at t_r = 2 v0 / (7 mu g), then rolls at 5 v0 / 7:
 *     piecewise linear, so the quartic extension reproduces it inside every step, and no step
 *     straddles t_r;
 *   a map has no dense output, nor PETSc's Rosenbrock type veldd4 (no interpolation formula):
 *     a step hook is refused, naming the route. */
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
  bool relay;          /* the relay's segments instead (test_relay) */
  const double *start; /* the oscillator's initial state, read at each step (NULL: x0, v0) */
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
  const double x0 = sn->start ? sn->start[0] : sn->x0, v0 = sn->start ? sn->start[1] : sn->v0;
  for (int i = 1; sn->w > 0 && i <= 3; i++) {
    const double t = ta + (tb - ta) * i / 4.0, w = sn->w;
    sn->bad += tf_member_engine_dense(e, t, x, step) != 0;
    const double exact[2] = {x0 * cos(w * t) + v0 / w * sin(w * t),
                             -x0 * w * sin(w * t) + v0 * cos(w * t)};
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

/* The ball's flights: T[k] the k-th impact (T[0] = 0), v0 r^k the speed leaving it. */
typedef struct flights {
  long steps, bad, straddles;
  int flights;
  double T[16], v0, r, g, last_end, worst;
} flights;

static void ball_step(void *ctx, const tf_member_engine *e, double ta, double tb) {
  flights *f = ctx;
  double x[3], step[2];
  f->bad += !(ta < tb && ta == f->last_end);
  int k = 0; /* the flight the step ends in: a step ending at an impact is before its reset */
  while (k + 1 < f->flights && tb > f->T[k + 1] + 1e-9) k++;
  for (int j = 1; j < f->flights; j++) f->straddles += ta < f->T[j] - 1e-9 && tb > f->T[j] + 1e-9;
  for (int i = 0; i <= 4; i++) {
    const double t = ta + (tb - ta) * i / 4.0, s = t - f->T[k], vk = f->v0 * pow(f->r, k);
    f->bad += tf_member_engine_dense(e, t, x, step) != 0 || step[0] != ta || step[1] != tb;
    const double exact[3] = {vk * s - 0.5 * f->g * s * s, vk - f->g * s, t};
    for (int c = 0; c < 3; c++) f->worst = fmax(f->worst, fabs(x[c] - exact[c]));
  }
  f->bad += tf_member_engine_dense(e, tb + 1e-3, x, step) != -1;
  f->steps++;
  f->last_end = tb;
}

/* The ball on a fixed table (A = 0), r = 0.8, v0 = 2, to t = 1.45 (5 impacts at 0.408, 0.734,
 * 0.995, 1.204, 1.371): impact times are located to ~1e-12, so the parabola from the closed
 * T_k is met to ~1e-10. */
static void test_impact(void) {
  flights f = {.v0 = 2.0, .r = 0.8, .g = 9.81, .flights = 7};
  for (int k = 0; k < f.flights; k++) f.T[k] = 2 * f.v0 * (1 - pow(f.r, k)) / (f.g * (1 - f.r));
  tf_member_engine *e = test_member_engine(
      "model: {name: bouncing_ball, params: {g: 9.81, r: 0.8, A: 0}}\n"
      "initial: {state: [0, 2, 0]}\nintegrator: {t_end: 1.45, rtol: 1e-10, atol: 1e-12}\n",
      "dense.yaml", ball_step, &f);
  if (!e) return;
  double final[3], x[3], step[2];
  tf_member_result r;
  tf_member_engine_run(e, 0, &(tf_member_buffers){.final = final}, &r);
  printf("ball: %ld impacts, %ld steps seen, dense error %.3g, %ld straddling an impact\n",
         r.extra.impact.counts.impacts, f.steps, f.worst, f.straddles);
  CHECK(r.status == 1 && r.extra.impact.counts.impacts == 5, "status %d, %ld impacts", r.status,
        r.extra.impact.counts.impacts);
  CHECK(f.steps >= r.work.steps && f.bad == 0 && f.last_end == 1.45 && f.straddles == 0,
        "%ld steps seen of %ld, %ld misfits, last ends %g, %ld straddle", f.steps, r.work.steps,
        f.bad, f.last_end, f.straddles);
  CHECK(f.worst < 1e-9, "dense error %.3g against the parabolas", f.worst);
  CHECK(tf_member_engine_dense(e, 1.45, x, step) == 0 && x[0] == final[0] && x[1] == final[1],
        "after the run: the last step's end is the final state");
  tf_member_engine_destroy(e);
}

/* The oscillator x' = v, v' = -4 x on PETSc TS (its default type), rtol 1e-7: alone, and each
 * member of a batch of 3 with its own initial state (spread 0.1), every accepted step seen.
 * The bound 1e-5 holds the global error over 3 time units (near 3e-7) with room, and fails for
 * a wrong slot (states 0.1 apart) or a step end served for its inside (h |v| near 1e-2). */
static void test_ts(void) {
  static const char *const configs[2] = {
      "model: {name: harmonic, params: {omega: 2}}\ninitial: {state: [1, 0.5]}\n"
      "integrator: {method: petsc-ts, t_end: 3, rtol: 1e-7, atol: 1e-10}\n",
      "model: {name: harmonic, params: {omega: 2}}\ninitial: {state: [1, 0.5], spread: 0.1}\n"
      "integrator: {method: petsc-ts, t_end: 3, rtol: 1e-7, atol: 1e-10, ts: {batch: 3}}\n"
      "ensemble: {members: 3}\n"};
  for (int c = 0; c < 2; c++) {
    seen sn = {.w = 2.0};
    tf_member_engine *e = engine_seen(configs[c], &sn), *plain = engine(configs[c]);
    if (!e || !plain) {
      tf_member_engine_destroy(e), tf_member_engine_destroy(plain);
      return;
    }
    for (uint64_t m = 0; m < (c ? 3u : 1u); m++) {
      double start[2], final[2], alone[2];
      tf_member_result r, r_plain;
      sn.steps = 0, sn.last_end = 0.0, sn.start = start;
      tf_member_engine_run(e, m, &(tf_member_buffers){.initial = start, .final = final}, &r);
      tf_member_engine_run(plain, m, &(tf_member_buffers){.final = alone}, &r_plain);
      printf("petsc-ts %s member %d: %ld steps seen, dense error %.3g\n", c ? "batch" : "alone",
             (int)m, sn.steps, sn.worst);
      CHECK(r.status == 1 && sn.steps == r.work.steps && sn.last_end == 3.0,
            "ts member %d: %ld steps seen of %ld, last ends %g", (int)m, sn.steps, r.work.steps,
            sn.last_end);
      double x[2], step[2];
      CHECK(final[0] == alone[0] && final[1] == alone[1] &&
                tf_member_engine_dense(e, 3.0, x, step) == -1,
            "ts member %d: the watched run ends where the unwatched one does; no step kept "
            "after it",
            (int)m);
    }
    CHECK(sn.bad == 0 && sn.worst < 1e-5, "ts %s: %ld misfits, dense error %.3g",
          c ? "batch" : "alone", sn.bad, sn.worst);
    tf_member_engine_destroy(e), tf_member_engine_destroy(plain);
  }
}

/* An SDE member's steps: with zero noise against the Euler grid of x' = v, v' = -4 x from
 * (1, 0.5) with h = 0.01 (grid[k]); with noise, the dense output inside each step against the
 * linear interpolant of the ends it gives. */
typedef struct sde_seen {
  long steps, bad;
  double last_end, worst_grid, worst_linear;
  const double (*grid)[2]; /* NULL: noise, no grid */
  double h;
} sde_seen;

static void sde_step(void *ctx, const tf_member_engine *e, double ta, double tb) {
  sde_seen *sn = ctx;
  double xa[2], xb[2], x[2], step[2];
  sn->bad += !(ta < tb && ta == sn->last_end);
  sn->bad += tf_member_engine_dense(e, ta, xa, step) != 0 || step[0] != ta || step[1] != tb;
  sn->bad += tf_member_engine_dense(e, tb, xb, step) != 0;
  sn->bad += tf_member_engine_dense(e, tb + 1e-3, x, step) != -1;
  const long k = sn->steps;
  for (int i = 0; i <= 4; i++) {
    const double s = i / 4.0, t = ta + (tb - ta) * s;
    sn->bad += tf_member_engine_dense(e, t, x, step) != 0;
    for (int c = 0; c < 2; c++) {
      sn->worst_linear = fmax(sn->worst_linear, fabs(x[c] - (xa[c] + s * (xb[c] - xa[c]))));
      if (sn->grid) {
        const double exact = sn->grid[k][c] + s * (sn->grid[k + 1][c] - sn->grid[k][c]);
        sn->worst_grid = fmax(sn->worst_grid, fabs(x[c] - exact));
      }
    }
  }
  if (sn->grid) sn->bad += fabs(ta - k * sn->h) > 1e-14;
  sn->steps++;
  sn->last_end = tb;
}

static void test_sde(void) {
  static double grid[101][2];
  const double h = 0.01;
  grid[0][0] = 1.0, grid[0][1] = 0.5;
  for (int k = 0; k < 100; k++) {
    grid[k + 1][0] = grid[k][0] + h * grid[k][1];
    grid[k + 1][1] = grid[k][1] + h * (-4.0 * grid[k][0]);
  }
  for (int noisy = 0; noisy < 2; noisy++) {
    sde_seen sn = {.grid = noisy ? NULL : (const double(*)[2])grid, .h = h};
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "model: {name: harmonic, params: {omega: 2}, noise: {on: state, sigma: %g}}\n"
             "initial: {state: [1, 0.5]}\n"
             "integrator: {method: euler-maruyama, dt: 0.01, t_end: 1}\n",
             noisy ? 0.5 : 0.0);
    tf_error err = {0};
    tf_config *cfg = tf_config_parse_string(yaml, "dense.yaml", &err);
    CHECK(cfg != NULL, "config: %s", err.msg);
    if (!cfg) return;
    const tf_member_settings s = {
        .members = 1, .comm = MPI_COMM_SELF, .step = sde_step, .ctx = &sn};
    tf_member_engine *e = NULL, *plain = engine(yaml);
    const int rc = tf_member_engine_create(cfg, &s, &e, &err);
    tf_config_free(cfg);
    CHECK(rc == 0 && plain, "engine: %s", err.msg);
    if (rc || !plain) {
      tf_member_engine_destroy(e), tf_member_engine_destroy(plain);
      return;
    }
    double final[2], alone[2], x[2], step[2];
    tf_member_result r, r_plain;
    tf_member_engine_run(e, 0, &(tf_member_buffers){.final = final}, &r);
    tf_member_engine_run(plain, 0, &(tf_member_buffers){.final = alone}, &r_plain);
    printf(
        "euler-maruyama sigma %s: %ld steps seen, off the Euler grid %.3g, off the ends' "
        "interpolant %.3g\n",
        noisy ? "0.5" : "0", sn.steps, sn.worst_grid, sn.worst_linear);
    CHECK(r.status == 1 && sn.steps == 100 && r.work.steps == 100 && sn.bad == 0 &&
              sn.last_end == 1.0,
          "sde: %ld steps seen, %ld misfits, last ends %g", sn.steps, sn.bad, sn.last_end);
    CHECK(sn.worst_linear < 1e-14 && sn.worst_grid < 1e-14,
          "sde: %.3g off the interpolant, %.3g "
          "off the grid",
          sn.worst_linear, sn.worst_grid);
    CHECK(final[0] == alone[0] && final[1] == alone[1] &&
              tf_member_engine_dense(e, 1.0, x, step) == 0 && x[0] == final[0] &&
              x[1] == final[1] && fabs(step[0] - 0.99) < 1e-14,
          "sde: the watched path is the unwatched one, its last step ends at the final state");
    tf_member_engine_destroy(e), tf_member_engine_destroy(plain);
  }
}

/* The billiard ball from u = v = (1, 0) (mu g = 1.962): slip to t_r = 2 / (7 mu g) = 0.14563,
 * then rolling at 5 / 7.  Arrival at Sigma is located to codim2.sigma_tol (1e-8). */
typedef struct ball_seen {
  long steps, bad, straddles;
  double last_end, worst, t_r, f;
} ball_seen;

static void billiard_step(void *ctx, const tf_member_engine *e, double ta, double tb) {
  ball_seen *b = ctx;
  double x[4], step[2];
  b->bad += !(ta < tb && ta == b->last_end);
  b->straddles += ta < b->t_r - 1e-7 && tb > b->t_r + 1e-7;
  for (int i = 0; i <= 4; i++) {
    const double t = ta + (tb - ta) * i / 4.0, ts = fmin(t, b->t_r);
    b->bad += tf_member_engine_dense(e, t, x, step) != 0 || step[0] != ta || step[1] != tb;
    const double exact[4] = {t < b->t_r ? 1.0 - 3.5 * b->f * t : 0.0, 0.0, 1.0 - b->f * ts, 0.0};
    for (int c = 0; c < 4; c++) b->worst = fmax(b->worst, fabs(x[c] - exact[c]));
  }
  b->bad += tf_member_engine_dense(e, tb + 1e-3, x, step) != -1;
  b->steps++;
  b->last_end = tb;
}

static void test_contact(void) {
  ball_seen b = {.f = 0.2 * 9.81};
  b.t_r = 2.0 / (7.0 * b.f);
  tf_member_engine *e = test_member_engine(
      "model: {name: ball-pool, params: {mu: 0.2, g: 9.81, K: 0}}\n"
      "initial: {state: [1, 0, 1, 0]}\nintegrator: {t_end: 0.4, rtol: 1e-10, atol: 1e-12}\n",
      "dense.yaml", billiard_step, &b);
  if (!e) return;
  double final[4], x[4], step[2];
  tf_member_result r;
  tf_member_engine_run(e, 0, &(tf_member_buffers){.final = final}, &r);
  printf("billiard: %ld events, %ld steps seen, dense error %.3g, %ld straddling t_r\n",
         r.events[0], b.steps, b.worst, b.straddles);
  CHECK(r.status == 1 && r.events[0] >= 1 && b.steps >= r.work.steps && b.bad == 0 &&
            b.last_end == 0.4 && b.straddles == 0,
        "billiard: status %d, %ld steps seen of %ld, %ld misfits, last ends %g, %ld straddle",
        r.status, b.steps, r.work.steps, b.bad, b.last_end, b.straddles);
  CHECK(b.worst < 1e-6, "billiard: dense error %.3g against the piecewise linear solution",
        b.worst);
  CHECK(fabs(final[2] - 5.0 / 7.0) < 1e-6 && tf_member_engine_dense(e, 0.4, x, step) == -1,
        "billiard: rolls at 5/7 (%.9g); no step kept after the run", final[2]);
  tf_member_engine_destroy(e);
}

/* A PETSc TS type without interpolation: a step hook is refused, naming the route. */
static void test_ts_refused(void) {
  seen sn = {0};
  tf_error err = {0};
  tf_config *cfg = tf_config_parse_string(
      "model: {name: harmonic}\ninitial: {state: [1, 0]}\n"
      "integrator: {method: petsc-ts, t_end: 1, ts: {type: rosw, options: '-ts_rosw_type "
      "veldd4'}}\n",
      "dense.yaml", &err);
  if (!cfg) return;
  const tf_member_settings s = {
      .members = 1, .comm = MPI_COMM_SELF, .step = watch_step, .ctx = &sn};
  tf_member_engine *e = NULL;
  const int rc = tf_member_engine_create(cfg, &s, &e, &err);
  tf_config_free(cfg);
  tf_member_engine_destroy(e);
  printf("veldd4 with a step hook: %s\n", rc ? err.msg : "accepted");
  CHECK(rc != 0 && strstr(err.msg, "route 'flow'") && strstr(err.msg, "no interpolation"),
        "a TS type without interpolation refuses a step hook, naming the route: %s", err.msg);
}

/* A map's time counts iterations: a step hook is refused, naming the route. */
static void test_map_refused(void) {
  seen sn = {0};
  tf_error err = {0};
  tf_config *cfg = tf_config_parse_string(
      "model: {name: logistic}\ninitial: {state: [0.3]}\nintegrator: {t_end: 10}\n", "dense.yaml",
      &err);
  if (!cfg) return;
  const tf_member_settings s = {
      .members = 1, .comm = MPI_COMM_SELF, .step = watch_step, .ctx = &sn};
  tf_member_engine *e = NULL;
  const int rc = tf_member_engine_create(cfg, &s, &e, &err);
  tf_config_free(cfg);
  tf_member_engine_destroy(e);
  printf("map with a step hook: %s\n", err.msg);
  CHECK(rc != 0 && strstr(err.msg, "route 'map'") && strstr(err.msg, "dense output"),
        "a map refuses a step hook, naming its route: %s", err.msg);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_oscillator_order("dopri5", 0.125, 5);
  test_oscillator_order("dop853", 0.25, 8);
  test_relay();
  test_none_after_lanes();
  test_during_run();
  test_impact();
  test_ts();
  test_sde();
  test_contact();
  test_map_refused();
  test_ts_refused();
  MPI_Finalize();
  return check_report("test_member_dense");
}
