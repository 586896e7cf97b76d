/* event_loop.h — the step loop of an event-driven integrator, written once for the codim-1
 * Filippov (evolve.c), codim-2 (evolve2.c) and two-contact (dual_contact.c) engines.
 *
 * Each engine is a mode machine: inside a mode the flow is a smooth ODE integrated by DOPRI5
 * (or DOP853),
 * and the mode lasts while all of its event functions are positive.  Everything between two
 * transitions is the same for all engines and lives here, in the manner of PETSc's and
 * SUNDIALS' solver objects: the engine hands over a table of callbacks (its event functions,
 * its field, its transition, optional hooks) and the loop does the rest —
 *   - the step budget, one accepted DOPRI5 step, the mapping of the stepper's failures to a
 *     member status;
 *   - the earliest sign change of any event function in the step, sampled on the dense output
 *     (for DOP853 first on the cheap tf_stepper_sample, so steps without one never build the
 *     costly extension) and located by Brent (tf_event_locate);
 *   - the landing on the event: the step is re-taken under error control to the located time,
 *     which is then corrected by Newton steps on the integrated state (the dense output's
 *     error is not bounded by the step control; at a fold it moves event times by ~1e-6 at
 *     rtol 1e-10), and the next mode starts just past the root, so round-off cannot start it
 *     on the wrong side and make it fall back at once; with integrator.landing dense
 *     (ode.dense_landing) the same landing on the step's dense output, without retakes;
 *   - the finiteness check, the bound on events per unit time (Zeno) and the restart;
 *   - the Lyapunov bookkeeping: m tangent vectors stored after the n state values, QR
 *     re-orthonormalisation (GSL) every qr_interval, segments closed where the flow is not
 *     differentiable (a passage through a nondeterministic two-fold), the exponents at the end,
 *     and the frame each run hands on to the next (tf_event_loop_run).
 * The engine keeps its public API, its result structure and its event log; the loop only reads
 * the engine's count of logged events (for the Zeno bound). */
#ifndef TF_EVENT_LOOP_H
#define TF_EVENT_LOOP_H

#include <stdbool.h>
#include <stddef.h>

#include "max_dim.h" /* TF_EVENT_LOOP_MAX_FUNCTIONS */
#include "ode.h"

typedef struct tf_event_loop_ops {
  /* The stepper's right-hand side: the mode's field for x followed by the variational
   * equation of each tangent vector. */
  tf_rhs_fn rhs;
  /* The current mode's field for the n state values only (the event functions' slope along
   * the flow when landing on an event). */
  void (*field)(void *ctx, double t, const double *x, double *dx);
  /* The current mode's event functions at (t, x) into g; returns how many there are
   * (<= TF_EVENT_LOOP_MAX_FUNCTIONS).  Each is positive while the mode lasts, and an event is
   * a change from >= 0 to < 0. */
  int (*events)(void *ctx, double t, const double *x, double *g);
  /* The transition at event `which`, at (t, x) just past its root: picks the next mode, may
   * change x (n + n m values: saltation of the tangent vectors), logs its events.  Returns a
   * tf_member_status: TF_MEMBER_OK to continue, anything else stops the member. */
  int (*transition)(void *ctx, int which, double t, double *x);
  /* Optional hooks (NULL: none). */
  void (*before_step)(void *ctx, double t, const double *x); /* from (t, x) */
  int (*after_step)(void *ctx); /* a tf_member_status; not OK stops the member */
  void (*on_step)(void *ctx, double t0, double t1); /* dense output valid on [t0, t1] */
  void (*before_qr)(void *ctx, double *x);          /* e.g. project tangents onto Sigma */
  /* After a step with no event: may move x onto a manifold the mode's field is defined on
   * (true if it changed x; the stepper then restarts from the new state). */
  bool (*project)(void *ctx, double t, double *x);
  int (*storm_status)(void *ctx, const double *x); /* status of an event storm; ZENO if NULL */
  /* Whether event function `which` of the current mode is smooth along the flow at its roots,
   * so that Newton steps may correct its time (NULL: all are). */
  bool (*smooth)(void *ctx, int which);
  /* Optional: adjusts the tangent vectors a run or a segment starts from (x holds n + n m
   * values): the frame the last run ended with (`continued`), or else the generic frame; e.g.
   * projected onto the manifold the current mode keeps the state on, so that no vector starts in a
   * direction the mode kills. */
  void (*start_tangents)(void *ctx, double *x, bool continued);
  /* Optional: a time the next step must not pass (INFINITY: none), asked before every step.
   * An engine whose mode starts on an event function's boundary (a flight just after an
   * impact) bounds the first step so that the locator's grid resolves a short excursion. */
  double (*step_limit)(void *ctx, double t, const double *x);
} tf_event_loop_ops;

typedef struct tf_event_loop_options {
  tf_ode_options ode;    /* ode.max_steps bounds the steps of one run (0: unbounded) */
  double event_tol;      /* absolute accuracy of event times */
  double max_event_rate; /* events per unit time above which a member is Zeno */
  long max_events;       /* per run */
  double qr_interval;    /* time between re-orthonormalisations of the tangent vectors */
} tf_event_loop_options;

typedef struct tf_event_loop_result {
  int status;     /* tf_member_status */
  int model_code; /* with status failed: the model's refusal that ended the run (else 0) */
  double t;
  /* steps: the loop's own count, the step that ended the run included; the others the
   * stepper's */
  tf_counts work;
  /* with tangent vectors: the exponents over the deterministic segments, time-weighted
   * (NULL unless the run ended ok; valid until the next run), their total time and the
   * number of segments */
  const double *lyapunov;
  double tangent_time;
  int segments;
} tf_event_loop_result;

typedef struct tf_event_loop tf_event_loop;

/* A loop for n state values and m tangent vectors; ctx is passed to every callback. */
tf_event_loop *tf_event_loop_create(size_t n, size_t m, const tf_event_loop_ops *ops, void *ctx,
                                    const tf_event_loop_options *opts);
void tf_event_loop_destroy(tf_event_loop *l);

/* The m orthonormal vectors of dimension n (column c at v + c n) that tangent vectors start
 * from: generic, not coordinate vectors.  A coordinate frame can miss a direction for ever:
 * with fewer vectors than dimensions, span(e_x, e_v) of a forced oscillator keeps a zero
 * phase component, so the phase direction's exponent 0 is never seen; the ball's e_y and e_v
 * lie in the kernel of every sticking projection. */
void tf_event_loop_generic_frame(size_t n, size_t m, double *v);

/* Integrates from (t0, x) to t_end in the engine's current mode; x holds n + n m values and is
 * overwritten with the final state.  The tangent vectors in x are not read: a run continues
 * the orthonormal frame the loop's last run ended with if that run ended ok, and the first
 * run (or one after a failure) starts from the generic frame.  Consecutive runs from the states
 * their predecessors ended in (Lyapunov blocks) are so one Benettin computation: a fresh frame
 * per run would average its alignment, about ln(c) / (run time), into every run's exponents.
 * A new computation (another member) needs a new loop (the engines' enable_tangent).
 * `events` is the engine's count of logged events, read for the Zeno bound. */
tf_event_loop_result tf_event_loop_run(tf_event_loop *l, double t0, double *x, double t_end,
                                       const long *events);

/* tf_event_loop_run in pieces, for a caller that takes some of the steps itself (the lanes,
 * impact_lanes.c): begin; then while top says a step is due, the step (tf_event_loop_take_step
 * takes it on the loop's stepper) and stepped with its status, or the rest of the run on the
 * loop's stepper (tf_event_loop_drive); then end.  x stays the caller's during the run. */
void tf_event_loop_begin(tf_event_loop *l, double t0, double *x, double t_end, const long *events);
/* The top of a step: false if the run is over (t_end, a stop, the step budget: the checks of
 * the loop's drive, tf_drive_due), else the step prepared as the drive prepares it. */
bool tf_event_loop_top(tf_event_loop *l);
/* After the step from the top's state: its events, transition and restart; false if the run
 * is over.  The stepper holds the step just taken and x, tf_event_loop_set_time its end. */
bool tf_event_loop_stepped(tf_event_loop *l, tf_ode_status st);
/* The step on the loop's stepper, then stepped. */
bool tf_event_loop_take_step(tf_event_loop *l);
/* The run's steps on the loop's stepper to its end, from its state after begin or after a step
 * (tf_stepper_drive: top's checks and preparation before each step, stepped after it). */
void tf_event_loop_drive(tf_event_loop *l);
tf_event_loop_result tf_event_loop_end(tf_event_loop *l);
/* After a step taken outside in which the caller screened the event functions itself and
 * found no sign change: the step counted and the time moved on.  For an engine whose step
 * without an event needs nothing else from the loop (no tangent vectors, after_step or project;
 * its on_step the caller's to do). */
void tf_event_loop_quiet_step(tf_event_loop *l, double t);
/* Before tf_event_loop_stepped of a step taken outside: the caller screened the event
 * functions on the step's cheap samples (tf_stepper_sample) itself and saw a sign change, so
 * the loop looks on the dense output at once, as it would after its own cheap pass. */
void tf_event_loop_change_seen(tf_event_loop *l);
/* Quiet steps taken outside without a call each (impact_lanes.c).  plain_bounds: where a step
 * from the top ends at the latest once no one-shot bound (ops.step_limit) is pending, and how
 * many steps the budget has left.  quiet_steps: k such steps since the top, ending at t with
 * the state in the loop's x, each followed by a top whose checks the caller made (t < t_end,
 * the stop, the budget): counted, and the loop at the top of the next step, as k rounds of
 * tf_event_loop_quiet_step and tf_event_loop_top leave it (an engine without before_step, whose
 * step_limit is spent). */
void tf_event_loop_plain_bounds(const tf_event_loop *l, double *t_limit, long *steps_left);
void tf_event_loop_quiet_steps(tf_event_loop *l, long k, double t);
/* For a step taken outside: the stepper, the time and the step's limit after top. */
tf_stepper *tf_event_loop_lane_stepper(tf_event_loop *l, double *t, double *t_limit);
void tf_event_loop_set_time(tf_event_loop *l, double t);

/* From an on_step observer: the run ends after this step (its state and time the step's end, or
 * the landed event's, before that event's transition) with status TF_MEMBER_PENDING; the
 * observer knows its own stopping point inside the step.  Cleared by the next run. */
void tf_event_loop_request_stop(tf_event_loop *l);

/* Closes the current Lyapunov segment at t (from a transition, where the flow is not
 * differentiable): its sums join the totals and the tangent vectors restart from the generic frame.
 */
void tf_event_loop_close_segment(tf_event_loop *l, double t, double *x);

/* The stepper: dense output of the step just taken (all n + n m values). */
const tf_stepper *tf_event_loop_stepper(const tf_event_loop *l);

#endif
