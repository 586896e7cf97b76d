/* impact.h — hybrid systems with impacts: free flight, reset maps, chattering, sticking.
 *
 * An impact model (twofold/model.h: tf_impact_ops) is a flow `rhs` confined to {h_i(x) >= 0}.  This
 * engine runs it on the shared event loop (event_loop.h), so impacts are located on the
 * integrated solution like every other event:
 *   - free flight: the event functions are the h_i (and, optionally, a Poincaré section);
 *   - an impact (h_i = 0 reached with h_i' < 0) applies the kernel's reset x+ = R_i(x-); a reset
 *     that leaves the state moving out of the admissible set is a model error (member status
 *     failed, with a message); tangent vectors cross by the saltation matrix of the reset
 *     (Müller 1995) S = R_x + (f+ - R_x f-) h_x / (h_x f-);
 *   - chattering: when successive impacts on one surface show geometric decay (flight times and
 *     impact velocities shrinking by the same ratio rho < 1, to a tolerance, below a velocity),
 *     the infinite sequence is completed: it accumulates at t_k + dt_k rho / (1 - rho) (the
 *     geometric series of the remaining flight times), and the state moves onto the
 *     constraint (the kernel's impact_stick);
 *   - sticking: motion by the constrained field while the contact force is positive; its sign
 *     change is the release, located like any event.  A Zeno stop happens only if completion is
 *     switched off.
 * Every run counts impacts, chattering episodes, releases and the time spent sticking, and an
 * observer sees every event (for event logs and Poincaré samples). */
#ifndef TF_IMPACT_H
#define TF_IMPACT_H

#include <stdbool.h>
#include <stddef.h>

#include "event_loop.h"
#include "kernel.h"
#include "observable.h"

typedef enum tf_impact_event {
  TF_IMPACT_HIT = 0,          /* an impact; x is the state after the reset */
  TF_IMPACT_ACCUMULATION = 1, /* a chattering sequence completed; t is its accumulation time */
  TF_IMPACT_RELEASE = 2,      /* sticking ended (the contact force changed sign) */
  TF_IMPACT_SECTION = 3       /* the Poincaré section was crossed in the chosen direction (x:
                               * after the section's reset, if it has one) */
} tf_impact_event;

typedef enum tf_section_kind {
  TF_SECTION_NONE = 0,
  TF_SECTION_EXTREMUM = 1, /* the derivative of a state component crosses zero */
  TF_SECTION_LEVEL = 2,    /* a state component crosses a level */
  TF_SECTION_FUNCTION = 3  /* an expression of the state, parameters and t crosses zero */
} tf_section_kind;

typedef struct tf_impact_options {
  tf_event_loop_options loop;
  bool complete_chattering; /* false: an accumulation of impacts ends the member as zeno */
  double chatter_velocity;  /* impact speeds below which geometric decay is looked for */
  double chatter_tol;       /* relative agreement of successive decay ratios */
  int chatter_impacts;      /* consecutive impacts that must show the decay (3..16) */
  double contact_tol;       /* normal speed after a reset treated as zero */
  /* a Poincaré section: sign of the crossing +1 (the function increases through zero), -1
   * (decreases: maxima of a component for EXTREMUM) or 0 (both) */
  tf_section_kind section;
  int section_component;
  double section_level;
  int section_direction;
  const char *section_function; /* TF_SECTION_FUNCTION: its text (observable.h), parsed by
                                 * tf_impact_create; it need not outlive that call */
  /* count > 0: the state is reset at every section event in section_direction
   * (event_reset.h), the observer seeing the state after the reset; texts as above */
  tf_reset_spec section_reset;
} tf_impact_options;

/* Defaults of the options (loop options from the caller). */
void tf_impact_options_default(tf_impact_options *o);

/* Called at every event with the state after it.  A nonzero return ends the run with status
 * ok (a Poincaré observer that has seen enough). */
typedef int (*tf_impact_observer)(void *ctx, tf_impact_event kind, int surface, double t,
                                  const double *x);
/* Called at sample times with the state there (see tf_impact_set_sampler). */
typedef void (*tf_impact_sampler)(void *ctx, double t, const double *x);

typedef struct tf_impact_result {
  int status; /* tf_member_status */
  double t;
  tf_counts work; /* the event loop's (counts.h) */
  long impacts, chatters, releases, sections;
  double stick_time; /* time on a constraint, from accumulation points to releases */
  /* with tangent vectors and status ok: the exponents (valid until the next run) */
  const double *lyapunov;
  double tangent_time;
  int segments;
  int collapsed;     /* with tangent vectors: directions killed by sticking (n - dim T M) */
  char message[256]; /* why the member failed, if the model is at fault */
} tf_impact_result;

typedef struct tf_impact tf_impact;

/* An engine for kernel k (an impact kernel, or a flow without impacts run only for its
 * Poincaré section) with m <= dim tangent vectors; NULL if k has more than three impact
 * surfaces or lacks one of the impact functions, or with tangent vectors and a section reset
 * whose saltation has no exact derivatives: an extremum section (its function is the field's
 * component), or a function or reset that names one of the model's outputs
 * (tf_observable_differentiate).  Tangent vectors cross a section's reset R by
 * S = R_x + (f+ - R_t - R_x f-) s_x / (s_x f- + s_t), s the section function. */
tf_impact *tf_impact_create(const tf_kernel *k, size_t m, const tf_impact_options *o);
void tf_impact_destroy(tf_impact *e);

void tf_impact_set_observer(tf_impact *e, tf_impact_observer fn, void *ctx);
/* n_samples equally spaced times from t0 to t_end of the next run, inclusive (0: none). */
void tf_impact_set_sampler(tf_impact *e, tf_impact_sampler fn, void *ctx, long n_samples);

/* Called after every accepted step [t0, t1] of a run as the event loop cuts it at events (so a
 * step never straddles an impact, a release or a section event); inside it tf_impact_dense
 * gives the state anywhere in [t0, t1]. */
typedef void (*tf_impact_step_fn)(void *ctx, double t0, double t1);
void tf_impact_set_step_hook(tf_impact *e, tf_impact_step_fn fn, void *ctx);
/* The stepper's continuous extension of the step seen last (dim values): the mode's field (free
 * flight or the constrained motion) on that step. */
void tf_impact_dense(const tf_impact *e, double t, double *x);
/* The step seen last, if no event came after it (else step[0] == step[1]: no step since). */
void tf_impact_last_step(const tf_impact *e, double step[2]);

/* Runs from (t0, x) to t_end with parameters p; x holds dim + dim m values and is overwritten
 * with the final state.  A start on a constraint with zero normal speed and a positive
 * contact force sticks; a start outside the admissible set fails with a message.
 * With tangent vectors, the first run of an engine starts them from tf_event_loop_generic_frame and
 * every later run continues them where the run before it ended ok (consecutive Lyapunov
 * blocks, each from the state the one before ended in: event_loop.h); the values in x are
 * not read. */
tf_impact_result tf_impact_run(tf_impact *e, const double *p, double t0, double *x, double t_end);

/* tf_impact_run in pieces (for the lanes, impact_lanes.c): begin (false: the start is refused,
 * its result is tf_impact_refused), the loop's steps (tf_impact_loop), end. */
bool tf_impact_begin(tf_impact *e, const double *p, double t0, double *x, double t_end);
tf_impact_result tf_impact_end(tf_impact *e);
tf_impact_result tf_impact_refused(const tf_impact *e);
tf_event_loop *tf_impact_loop(tf_impact *e);

/* What the lanes (impact_lanes.c) need to take a member's step and screen its events
 * themselves, at the top of a step. */
typedef struct tf_impact_lane_view {
  const tf_impact_ops *ops; /* the model's (NULL: a flow recorded at events) */
  const double *p;          /* the member's parameters */
  size_t nparams;
  bool free_flight; /* the mode's field is the model's rhs (free flight, no tangents) */
  bool screen;      /* ... and its event functions are all those below */
  int nimpacts;     /* g_i = h_i(x) + offset[i], i < nimpacts */
  double offset[TF_EVENT_LOOP_MAX_FUNCTIONS]; /* 0 for an armed surface, contact_tol for a disarmed
                                                 one */
  tf_section_kind section; /* then g = sign * rate_c(x) (extremum) or sign * (x_c - level) */
  int component;
  double sign, level;
} tf_impact_lane_view;

void tf_impact_lane_view_of(const tf_impact *e, tf_impact_lane_view *v);
/* A step the lanes took (view.screen) from the loop's top to t, ending at x, in which the event
 * functions changed sign nowhere: what tf_event_loop_stepped does after such a step. */
void tf_impact_quiet_step(tf_impact *e, double t, const double *x);

#endif
