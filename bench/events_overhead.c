/* events_overhead.c — cost of the event machinery on the slip phases of the wheel.
 *
 *   bench_events_overhead [T_END [PARAM=VALUE ...]]
 *
 * (PARAM=VALUE sets a parameter of the wheel, e.g. continuation=1: docs/WHEEL.md.)
 * A Fig. 5 trajectory (leaving the two-fold with u = 0.7) is run once to record its events.
 * Each slip phase between two events is then integrated twice from the recorded start:
 * by the bare DOPRI5 stepper on the slip field to the recorded end time (no event
 * detection), and by tf_evolve_run, which also samples the event functions on the dense
 * output of every step and locates the end of the phase itself; and by tf_evolve_run again
 * with integrator.landing dense (the state at the event from the step's dense output, no
 * retakes: event_loop.c), the second ratio ("dense_ratio").  A wheel config refuses dense (the
 * slip field's kink at the event makes the dense output inaccurate there): the second ratio
 * says what the landing's retakes cost, not a setting a run may take.  Same tolerances; each phase
 * is repeated until it has taken at least 2 ms, in 5 alternated rounds (bare, events, dense), and
 * each side's fastest run counts.  Prints one JSON line.
 *
 * Where the difference goes: the ratio is also given over the phases that end at a crossing
 * and over those that end at full stick (h = g = 0), whose transition classifies the
 * intersection (intersection.h: a few hundred slip evaluations on a circle of directions);
 * and an untimed run of each phase on a copy of the kernel that counts its field calls gives
 * the calls the event-driven runs make, for both kinds of phases apart: against the stepper's
 * count of right-hand sides, the calls outside the stepper (landing slopes, arrival tests,
 * that classification), less the retakes' restarts, which the stepper counts without calling
 * the field again (ode.h, tf_stepper_step_to).  The attempts each side's error control rejected
 * are counted too: the step that crosses the switching surface takes the slip field past it,
 * where the field's continuation has a kink (|h| in the wheel's tyre angle, eqs (6)-(7)), and
 * is rejected and retried smaller several times (continuation=1 continues it smoothly); the bare
 * runs end at the recorded time and never cross. */
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evolve.h"
#include "exit_policy.h"
#include "kernel.h"
#include "ode.h"
#include "singularity.h"

/* Each phase is timed in ROUNDS alternated rounds (bare, events, bare, ...) of at least 2 ms a
 * side, run after run, and each side's fastest run counts: on a shared machine a slow run is
 * another process's time, not the integrator's. */
enum { MAX_PHASES = 4096, ROUNDS = 5 };

static double params[32];
static int side_now;
static const tf_kernel *kernel;

typedef struct phase {
  double t0, t1, x0[3];
  int side;
  bool at_meet; /* ends at full stick (an intersection kind) */
} phase;

static phase phases[MAX_PHASES];
static int nphases;
static double last_t, last_x[3];
static int last_mode;
static bool last_at_meet;

/* A slip phase runs from one event to the next.  Phases that start at full stick are left out:
 * their logged point is the one on the intersection, where the slip field is undefined (the
 * member itself starts a departure distance away from it). */
static void record(void *ctx, const tf_event *ev) {
  (void)ctx;
  if ((last_mode == 1 || last_mode == -1) && !last_at_meet && nphases < MAX_PHASES)
    phases[nphases++] = (phase){last_t,
                                ev->t,
                                {last_x[0], last_x[1], last_x[2]},
                                last_mode,
                                ev->kind >= TF_EVENT_MEET_REST};
  last_t = ev->t;
  memcpy(last_x, ev->x, sizeof last_x);
  last_mode = ev->to;
  last_at_meet = ev->kind >= TF_EVENT_MEET_REST; /* every intersection kind */
}

/* Departures at full stick with several admissible directions: always the middle draw. */
static int middle_choice(void *ctx, const tf_meet_arrival *a, double *u) {
  (void)ctx, (void)a;
  *u = 0.5;
  return 0;
}

static int slip_field(double t, const double *x, void *ctx, double *dx) {
  (void)ctx;
  kernel->filippov->slip(t, x, side_now, params, dx);
  return 0;
}

/* The kernel with its slip and sticking fields counted (untimed runs only: the counting adds a
 * call to every evaluation). */
static long field_calls;
static tf_filippov_ops counted_ops;
static tf_kernel counted_kernel;

static int counted_slip(double t, const double *x, int side, const double *p, double *dx) {
  field_calls++;
  return kernel->filippov->slip(t, x, side, p, dx);
}

static int counted_stick_side(double t, const double *x, double lambda, int side, const double *p,
                              double *dx) {
  field_calls++;
  return kernel->filippov->stick_side(t, x, lambda, side, p, dx);
}

static const tf_kernel *counting_kernel(void) {
  counted_ops = *kernel->filippov;
  counted_ops.slip = counted_slip;
  if (counted_ops.stick_side) counted_ops.stick_side = counted_stick_side;
  counted_kernel = *kernel;
  counted_kernel.filippov = &counted_ops;
  return &counted_kernel;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const double t_end = argc > 1 ? atof(argv[1]) : 200.0;
  kernel = tf_kernel_find("wheel");
  tf_error err;
  for (size_t i = 0; i < kernel->nparams; i++) params[i] = kernel->params[i].def;
  for (int a = 2; a < argc; a++) {
    char name[64], *end = NULL;
    const char *eq = strchr(argv[a], '=');
    const int i = eq && eq - argv[a] < (long)sizeof name
                      ? (snprintf(name, sizeof name, "%.*s", (int)(eq - argv[a]), argv[a]),
                         tf_kernel_param_index(kernel, name))
                      : -1;
    const double value = eq ? strtod(eq + 1, &end) : NAN;
    if (i < 0 || end == eq + 1 || *end != '\0') {
      fprintf(stderr, "bench_events_overhead: '%s' is not PARAM=NUMBER of a wheel parameter\n",
              argv[a]);
      return 2;
    }
    params[i] = value;
  }
  double guess[3], xs[3];
  int it;
  tf_twofold tw;
  tf_exit_policy pol = {.kind = TF_EXIT_FIXED, .fixed = 0.7, .distance = 1e-4, .margin = 0.05};
  if (kernel->prepare(params, &err) || kernel->filippov->twofold_guess(params, guess) ||
      tf_twofold_locate(kernel, params, guess, 1e-12, 50, xs, &it, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  if (tf_twofold_analyze(kernel, params, xs, &tw, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  tf_exit_policy_setup(&pol, kernel, params, &tw, &err);
  tf_evolve_options o = tf_evolve_default_options();
  o.ode.rtol = 1e-10, o.ode.atol = 1e-12;
  tf_evolve *e = tf_evolve_create(kernel, params, &o);
  double x[3];
  int side;
  tf_exit_policy_point(&pol, 0.7, x, &side);
  last_t = 0, memcpy(last_x, x, sizeof x), last_mode = side;
  tf_evolve_set_callbacks(e, record, NULL, NULL);
  tf_evolve_set_choice(e, middle_choice);
  tf_evolve_run(e, 0.0, x, t_end, side);
  tf_evolve_set_callbacks(e, NULL, NULL, NULL);

  tf_evolve_options one = o;
  one.max_events = 1;
  tf_evolve *e1 = tf_evolve_create(kernel, params, &one);
  tf_evolve_options one_dense = one;
  one_dense.ode.dense_landing = true;
  tf_evolve *e1_dense = tf_evolve_create(kernel, params, &one_dense);
  tf_evolve *e_counted = tf_evolve_create(counting_kernel(), params, &one);
  tf_stepper *s = tf_stepper_create(3);
  tf_stepper_setup(s, slip_field, NULL, &o.ode);
  /* per side (bare, events, dense): the fastest time summed over the phases, and over the
   * phases ending at full stick */
  double t_side[3] = {0}, meet_side[3] = {0}, time_span = 0;
  long steps_bare = 0, steps_events = 0, rhs_bare = 0, rhs_events = 0, rhs_dense = 0, calls = 0;
  long rejected_bare = 0, rejected_events = 0; /* attempts rejected and retried smaller */
  long meet_rhs_bare = 0, meet_rhs_events = 0, meet_calls = 0; /* of the phases at full stick */
  int meets = 0;
  for (int p = 0; p < nphases; p++) {
    const phase *ph = &phases[p];
    time_span += ph->t1 - ph->t0;
    meets += ph->at_meet;
    double y[3] = {ph->x0[0], ph->x0[1], ph->x0[2]};
    field_calls = 0;
    tf_evolve_run(e_counted, ph->t0, y, ph->t1 + 1.0, ph->side);
    calls += field_calls;
    if (ph->at_meet) meet_calls += field_calls;
    double per_pass[3] = {INFINITY, INFINITY, INFINITY}; /* the fastest round of each side */
    for (int round = 0; round < ROUNDS; round++)
      for (int pass = 0; pass < 3; pass++) {
        const double begin = MPI_Wtime();
        long reps = 0;
        do {
          const double start = MPI_Wtime();
          double y[3] = {ph->x0[0], ph->x0[1], ph->x0[2]};
          if (pass == 0) {
            double t = ph->t0;
            side_now = ph->side;
            tf_stepper_integrate(s, &t, y, ph->t1);
            if (reps == 0 && round == 0) {
              steps_bare += tf_stepper_stats(s).steps, rhs_bare += tf_stepper_stats(s).rhs_evals;
              rejected_bare += tf_stepper_stats(s).rejected;
              if (ph->at_meet) meet_rhs_bare += tf_stepper_stats(s).rhs_evals;
            }
          } else if (pass == 1) {
            tf_evolve_result r = tf_evolve_run(e1, ph->t0, y, ph->t1 + 1.0, ph->side);
            if (reps == 0 && round == 0) {
              steps_events += r.work.steps, rhs_events += r.work.rhs_evals;
              rejected_events += r.work.rejected;
              if (ph->at_meet) meet_rhs_events += r.work.rhs_evals;
            }
          } else {
            tf_evolve_result r = tf_evolve_run(e1_dense, ph->t0, y, ph->t1 + 1.0, ph->side);
            if (reps == 0 && round == 0) rhs_dense += r.work.rhs_evals;
          }
          reps++;
          per_pass[pass] = fmin(per_pass[pass], MPI_Wtime() - start);
        } while (MPI_Wtime() - begin < 2e-3);
      }
    for (int pass = 0; pass < 3; pass++) {
      t_side[pass] += per_pass[pass];
      if (ph->at_meet) meet_side[pass] += per_pass[pass];
    }
  }
  const double t_bare = t_side[0], t_events = t_side[1], t_dense = t_side[2];
  const double meet_bare = meet_side[0], meet_events = meet_side[1], meet_dense = meet_side[2];
  printf(
      "{\"phases\": %d, \"slip_time\": %.3f, \"bare_seconds\": %.6f, \"events_seconds\": %.6f, "
      "\"ratio\": %.3f, \"bare_steps\": %ld, \"event_steps\": %ld, \"bare_rhs\": %ld, "
      "\"event_rhs\": %ld, \"event_field_calls\": %ld, \"crossing_phases\": %d, "
      "\"crossing_ratio\": %.3f, \"meet_phases\": %d, \"meet_ratio\": %.3f, "
      "\"meet_bare_rhs\": %ld, \"meet_event_rhs\": %ld, \"meet_event_field_calls\": %ld, "
      "\"dense_seconds\": %.6f, \"dense_ratio\": %.3f, \"dense_rhs\": %ld, "
      "\"dense_crossing_ratio\": %.3f, \"dense_meet_ratio\": %.3f, \"bare_rejected\": %ld, "
      "\"event_rejected\": %ld}\n",
      nphases, time_span, t_bare, t_events, t_events / t_bare, steps_bare, steps_events, rhs_bare,
      rhs_events, calls, nphases - meets, (t_events - meet_events) / (t_bare - meet_bare), meets,
      meet_events / meet_bare, meet_rhs_bare, meet_rhs_events, meet_calls, t_dense,
      t_dense / t_bare, rhs_dense, (t_dense - meet_dense) / (t_bare - meet_bare),
      meet_dense / meet_bare, rejected_bare, rejected_events);
  tf_evolve_destroy(e);
  tf_evolve_destroy(e1);
  tf_evolve_destroy(e1_dense);
  tf_evolve_destroy(e_counted);
  tf_stepper_destroy(s);
  MPI_Finalize();
  return 0;
}
