/* switches.h — event-driven integration of a Filippov system with several switching functions.
 *
 * A body with m frictional contacts (a chain of blocks on a belt) has m switching surfaces
 * Sigma_i = {h_i = 0}, and its trajectories stick on their intersections: the codimension-1
 * engine (evolve.h) cannot follow it, and crossing Sigma_1 ∩ Sigma_2 by rounding would decide
 * the motion there by accident.  The model's field is affine in its signs s_i (twofold/model.h,
 * tf_switches_ops), so the motion sticking on the surfaces of a set S is fixed by the
 * multipliers lambda_S that keep every h_i, i in S, constant: a |S| x |S| linear system
 * (Jeffrey's canopy for fields affine in the signs).
 *
 * The state of the engine is a mode: per contact slip+ (s_i = +1, h_i > 0), slip- (-1) or
 * stick (on Sigma_i, s_i = lambda_i).  Inside a mode the flow is smooth and stepped by
 * event_loop; its events are
 *   a slipping contact reaching its surface:   s_i h_i = 0
 *   a sticking contact's multiplier saturating: 1 - lambda_i^2 = 0
 * At an event every contact on its surface (the one that fired, those sticking and any other
 * within sigma_tol) may take any of its three modes, the others keep theirs; the engine tries
 * every combination and keeps those that are consistent: sticking contacts' multipliers in
 * [-1, 1], slipping contacts on their surface moving off it to their own side.  One
 * consistent mode: it continues.  Several: the motion is not unique there, and the caller's
 * chooser draws one (logged like a two-fold exit).  None, or a singular multiplier system: the
 * model does not say how to continue, and the member stops with status ill_posed or codim2 —
 * never continued by rounding. */
#ifndef TF_SWITCHES_H
#define TF_SWITCHES_H

#include <stdbool.h>

#include "kernel.h"
#include "max_dim.h"
#include "ode.h"

typedef enum tf_sw_event_kind {
  TF_SW_ARRIVE,    /* a slipping contact reached its surface and sticks */
  TF_SW_CROSS,     /* a slipping contact crossed its surface (slip+ <-> slip-) */
  TF_SW_RELEASE,   /* a sticking contact's multiplier saturated: it slips */
  TF_SW_CHOICE,    /* several consistent modes: the chooser drew one */
  TF_SW_UNDEFINED, /* no consistent mode, or several and no chooser: the member stops */
  TF_SW_EVENT_KIND_COUNT
} tf_sw_event_kind;

const char *tf_sw_event_kind_name(tf_sw_event_kind k);

typedef struct tf_sw_event {
  tf_sw_event_kind kind;
  double t;
  const double *x;
  int contact;  /* the contact whose event fired */
  int from, to; /* modes before and after, coded tf_sw_mode_code */
  int choices;  /* consistent modes found (TF_SW_CHOICE, TF_SW_UNDEFINED) */
  double u;     /* the draw behind a choice (NaN otherwise) */
} tf_sw_event;

/* A mode as one integer: sum over contacts of (s_i + 1) 3^i, s_i in {-1, 0 (stick), +1}. */
int tf_sw_mode_code(int m, const signed char *mode);

typedef struct tf_switches_options {
  tf_ode_options ode;
  double event_tol;      /* absolute accuracy of event times */
  double max_event_rate; /* events per unit time above which a member is Zeno */
  long max_events;       /* per run */
  double sigma_tol;      /* |h_i| below which contact i is on its surface at an event */
} tf_switches_options;

tf_switches_options tf_switches_default_options(void);

typedef void (*tf_sw_event_fn)(void *ctx, const tf_sw_event *ev);
/* A draw u in (0, 1) for a nondeterministic mode choice (return 0), or -1 to stop. */
typedef int (*tf_sw_choice_fn)(void *ctx, double *u);

typedef struct tf_switches tf_switches;
typedef void (*tf_sw_step_fn)(void *ctx, const tf_switches *s, double t0, double t1);

typedef struct tf_switches_result {
  int status; /* tf_member_status */
  double t;
  tf_counts work; /* the event loop's (counts.h) */
  long events;
  long counts[TF_SW_EVENT_KIND_COUNT];
  signed char mode[TF_SWITCHES_MAX];  /* at the end */
  double stick_time[TF_SWITCHES_MAX]; /* time each contact spent sticking */
  /* with tangent vectors: exponents (time-weighted over segments), their time, segments, and
   * the most contacts that stuck at once: that many directions died (exponents -inf) */
  double lyapunov[TF_MAX_DIM];
  double tangent_time;
  int segments, collapsed;
} tf_switches_result;

/* NULL if k is not of kind TF_MODEL_SWITCHES. */
tf_switches *tf_switches_create(const tf_kernel *k, const double *params,
                                const tf_switches_options *opts);
void tf_switches_destroy(tf_switches *s);
void tf_switches_set_callbacks(tf_switches *s, tf_sw_event_fn on_event, tf_sw_choice_fn on_choice,
                               tf_sw_step_fn on_step, void *ctx);
/* Propagates `vectors` tangent vectors (0: none), re-orthonormalised every `interval`, through
 * the saltation matrix at every change of mode. */
int tf_switches_enable_tangent(tf_switches *s, int vectors, double interval);

/* Integrates from (t0, x) to t_end; x is overwritten with the final state.  The first mode is
 * chosen at x like a mode after an event (contacts with |h_i| <= sigma_tol are on Sigma_i). */
tf_switches_result tf_switches_run(tf_switches *s, double t0, double *x, double t_end);

/* Called from a step callback (an observer that has seen enough): the run ends before the next
 * step's events and before any further transition, with status TF_MEMBER_PENDING, its state
 * and time those of the step end where it stopped (the observer knows its own stopping point).
 * Cleared by the next run. */
void tf_switches_request_stop(tf_switches *s);

/* Dense output of the step just taken (for sampling trajectories). */
void tf_switches_dense(const tf_switches *s, double t, double *x);
/* The stepper of the run: its last accepted step is the one tf_switches_dense interpolates. */
const tf_stepper *tf_switches_stepper(const tf_switches *s);

#endif
