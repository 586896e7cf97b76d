/* evolve.h — event-driven integration of a Filippov member.
 *
 * The mode machine of Piiroinen & Kuznetsov (2008): slip+ (h > 0, field slip(x, +1)),
 * slip- (h < 0), sliding (on Sigma with the multiplier that keeps h_x·f = 0).  Each mode is
 * a smooth ODE integrated by DOPRI5; events are located on its dense output with GSL's
 * Brent solver:
 *   slip s:   h(x) reaching 0 from side s                 -> crossing or sliding entry
 *   sliding:  L+ = 0 (multiplier +1) or L- = 0 (-1)       -> exit to slip+ / slip-
 *             |x - x*| = capture radius (a known two-fold) -> two-fold arrival
 *             g(x) = 0 (a second switching function)  -> arrival at the intersection
 *   rest:     none (the state is an equilibrium on the intersection)
 *   along the intersection (its sliding vector): -max R over the limit directions -> the
 *             trajectory leaves along the one that turned repelling
 * A slip mode that reaches Sigma within meet_tol of the intersection arrives there too.  At the
 * intersection the extended Filippov analysis (intersection.h) decides: rest, slide along it, pass,
 * choice (nondeterministic, by the caller's chooser) or undefined (status codim2). Sliding exits
 * are located on the undivided tangency functions L±, never on the multiplier, which is 0/0 at a
 * two-fold.  At a nondeterministic two-fold the caller's exit policy chooses where the trajectory
 * continues.  A bound on events per unit time stops a chattering (Zeno) member instead of looping.
 */
#ifndef TF_EVOLVE_H
#define TF_EVOLVE_H

#include <stdbool.h>

#include "filippov.h"
#include "intersection.h"
#include "ode.h"

typedef enum tf_mode {
  TF_MODE_SLIP_MINUS = -1,
  TF_MODE_SLIDING = 0,
  TF_MODE_SLIP_PLUS = 1,
  TF_MODE_REST = 2,      /* at rest on an intersection of switching surfaces (intersection.h) */
  TF_MODE_ALONG_MEET = 3 /* moving along the intersection with its sliding vector */
} tf_mode;

typedef enum tf_event_kind {
  TF_EVENT_CROSSING,    /* crossed Sigma */
  TF_EVENT_SLIDE_START, /* arrived on Sigma in the sliding region */
  TF_EVENT_SLIDE_END,   /* left sliding at a fold (multiplier ±1) */
  TF_EVENT_TWOFOLD,     /* reached the two-fold while sliding */
  TF_EVENT_EXIT,        /* continued from a nondeterministic two-fold by the exit policy */
  /* arrivals at the intersection of Sigma with the kernel's second switching surface (the
   * wheel's full stick), by verdict (intersection.h): */
  TF_EVENT_MEET_REST,      /* stays there: at rest to the end of the run */
  TF_EVENT_MEET_PASS,      /* leaves along its one repelling limit direction */
  TF_EVENT_MEET_CHOICE,    /* leaves along one of several, drawn (nondeterministic) */
  TF_EVENT_MEET_UNDEFINED, /* the theory does not settle it: the member stops (codim2) */
  TF_EVENT_MEET_SLIDE,     /* stays on it and moves along it (its sliding vector) */
  TF_EVENT_KIND_COUNT
} tf_event_kind;

const char *tf_event_kind_name(tf_event_kind k);
const char *tf_mode_name(tf_mode m);

typedef struct tf_event {
  tf_event_kind kind;
  double t;
  const double *x;
  tf_mode from, to;
  double u; /* the draw behind an intersection_choice (NaN otherwise) */
} tf_event;

typedef struct tf_evolve_options {
  tf_ode_options ode;
  double event_tol;      /* absolute accuracy of event times */
  double max_event_rate; /* events per unit time above which a member is Zeno */
  long max_events;       /* per member */
  double capture_radius; /* two-fold arrival distance (only if a two-fold is set) */
  double meet_tol;       /* distance from the intersection at which reaching Sigma is arriving
                            there (kernels with a second switching function) */
  double meet_departure; /* distance from the intersection at which a departure starts */
  double meet_escape_distance, meet_escape_margin; /* detaching from escaping sliding */
  bool tangent_differences; /* tangents by central differences even where the kernel gives
                               slip_jacobian (to compare the two) */
} tf_evolve_options;

tf_evolve_options tf_evolve_default_options(void);

/* What to do at a nondeterministic two-fold: write the continuation point (on Sigma, in the
 * escaping region) to x_out and the side to leave to in *side; return 0, or -1 to stop the
 * member (status failed).  `visit` counts the member's arrivals from 0. */
typedef int (*tf_exit_fn)(void *ctx, long visit, double t, const double *x, double *x_out,
                          int *side);
typedef void (*tf_event_fn)(void *ctx, const tf_event *ev);
/* A nondeterministic departure from an intersection (the arrival `a`, verdict choice): a number
 * u in (0, 1) into *u (return 0), or -1 to stop the member.  The engine maps u onto the
 * departures like the exit policy maps it onto the escaping sector of a two-fold: k repelling
 * directions take equal shares of (0, 1) in the order of a->m->dir; within the share of a
 * direction along escaping sliding the rest of u says the side (first half h < 0) and where to
 * detach (meet_escape_distance, trimmed by the margin). */
typedef int (*tf_choice_fn)(void *ctx, const tf_meet_arrival *a, double *u);

typedef struct tf_evolve tf_evolve;

tf_evolve *tf_evolve_create(const tf_kernel *k, const double *params,
                            const tf_evolve_options *opts);
void tf_evolve_destroy(tf_evolve *e);
/* A two-fold to watch while sliding; `nondeterministic` selects the exit policy. */
void tf_evolve_set_twofold(tf_evolve *e, const double *x, bool nondeterministic);
void tf_evolve_set_callbacks(tf_evolve *e, tf_event_fn on_event, tf_exit_fn on_exit, void *ctx);
/* The chooser for departures with several repelling directions (NULL: such a member stops
 * with status codim2); called with the ctx of tf_evolve_set_callbacks. */
void tf_evolve_set_choice(tf_evolve *e, tf_choice_fn on_choice);

typedef struct tf_evolve_result {
  int status; /* tf_member_status */
  double t;
  tf_mode mode;
  long steps, rhs_evals, events;
  long rejected; /* step attempts the stepper rejected */
  long counts[TF_EVENT_KIND_COUNT];
  /* with tangent vectors (tf_evolve_enable_tangent): the exponents over the deterministic
   * segments (time-weighted), their total time, and how many segments (two-fold passages
   * + 1) there were */
  double lyapunov[TF_MAX_DIM];
  double tangent_time;
  int segments;
  /* with tangent vectors: the run slid (arrived in sliding, or started or went on sliding),
   * so they were put into T Sigma and one direction's exponent is -inf */
  bool tangent_collapsed;
} tf_evolve_result;

/* Propagates `vectors` tangent vectors with the trajectory (0: none), re-orthonormalised
 * every `interval` time units, through saltation matrices at crossings and sliding entries
 * (`saltation` false: none, to show why they are needed).  The Lyapunov exponents of the
 * run then come back in tf_evolve_result.lyapunov. */
int tf_evolve_enable_tangent(tf_evolve *e, int vectors, double interval, bool saltation);

/* Integrates from (t0, x) to t_end; x is overwritten with the final state.  `side` forces
 * the first mode to slip+ (1) or slip- (-1) for a start on Sigma (after an exit from a
 * two-fold); 0 chooses by tf_evolve_initial_mode. */
tf_evolve_result tf_evolve_run(tf_evolve *e, double t0, double *x, double t_end, int side);

/* tf_evolve_run in pieces, for a caller that takes some of the steps itself (the lanes,
 * pws_lanes.c): begin; then the steps of the event loop (tf_evolve_loop, event_loop.h: top,
 * the step, stepped), whose state is tf_evolve_state (n values, then the tangent vectors);
 * then end, which writes the final state to x_io. */
struct tf_event_loop;
void tf_evolve_begin(tf_evolve *e, double t0, const double *x_io, double t_end, int side);
tf_evolve_result tf_evolve_end(tf_evolve *e, double *x_io);
struct tf_event_loop *tf_evolve_loop(tf_evolve *e);
double *tf_evolve_state(tf_evolve *e);
/* The side of the current mode's slip field (1 slip+, -1 slip-) where the stepper's field is
 * that slip field alone (no tangent vectors), else 0 (sliding, the intersection, rest). */
int tf_evolve_slip_side(const tf_evolve *e);

/* The mode a trajectory starting at x takes (sliding if on Sigma in the sliding region). */
tf_mode tf_evolve_initial_mode(const tf_evolve *e, const double *x);

/* Dense output of the step just taken (for sampling trajectories). */
typedef void (*tf_step_fn)(void *ctx, const tf_evolve *e, double t0, double t1);
void tf_evolve_set_step_callback(tf_evolve *e, tf_step_fn on_step);
void tf_evolve_dense(const tf_evolve *e, double t, double *x);
/* The stepper of the run: its last accepted step is the one tf_evolve_dense interpolates. */
const tf_stepper *tf_evolve_stepper(const tf_evolve *e);
/* Called from a step callback (an observer that has seen enough): the run ends before the next
 * step's events and before any further transition, with status TF_MEMBER_PENDING, its state
 * and time those of the step end where it stopped (the observer knows its own stopping point).
 * Cleared by the next run. */
void tf_evolve_request_stop(tf_evolve *e);

#endif
