/* evolve2.h — event-driven integration of an extended Filippov system (codimension-2
 * discontinuity, Antali 2017 ch. 2): slipping off Sigma, rolling on it.
 *
 * Two modes, each a smooth ODE on DOPRI5 with events located on its dense output by GSL's
 * Brent solver, as in evolve.h:
 *   slip: the kernel's field with the slip direction dir(x) = h(x)/|h(x)|, continued through
 *         Sigma with the direction it arrived with (dir flips sign past Sigma) so that the
 *         arrival is a transversal zero of  g = <h(x), d_ref>  (d_ref: the direction at the
 *         start of the step).  Arrival at Sigma happens in finite time along an attracting
 *         limit direction; at the located zero the engine checks |h| < sigma_tol (otherwise
 *         the slip direction merely turned by 90 degrees within a step: d_ref is renewed),
 *         projects onto Sigma and decides by Theorem 2.15: sliding region -> roll
 *         (event roll_start), crossing region -> leave along the repelling limit direction
 *         closest to straight on (event crossing).
 *   roll: the sliding vector of Theorem 2.17.  It lasts while every limit direction is
 *         attracting: the event function is -max R(phi_i); where it reaches 0 the sliding
 *         condition fails and the trajectory leaves along that (now neutral) direction
 *         (event roll_end).
 * Within slave_radius of Sigma, on the way out (R > 0), the slip direction is slaved to the
 * limit direction (its relaxation is infinitely fast there; see slaved_angle in evolve2.c);
 * on the way in the exact direction h/|h| is kept, so the onset of rolling does not depend on
 * slave_radius.
 * A start on Sigma outside the sliding region leaves at once along its most repelling limit
 * direction (event roll_end at t0).  Events per unit time are bounded (Zeno). */
#ifndef TF_EVOLVE2_H
#define TF_EVOLVE2_H

#include "codim2.h"
#include "ode.h"

typedef enum tf_c2_mode { TF_C2_ROLL = 0, TF_C2_SLIP = 1 } tf_c2_mode;

typedef enum tf_c2_event_kind {
  TF_C2_ROLL_START, /* slipping -> rolling: arrived at Sigma in the sliding region */
  TF_C2_ROLL_END,   /* rolling -> slipping: the sliding condition failed */
  TF_C2_CROSSING,   /* arrived at Sigma in the crossing region and passed on */
  TF_C2_EVENT_KIND_COUNT
} tf_c2_event_kind;

const char *tf_c2_event_kind_name(tf_c2_event_kind k);
const char *tf_c2_mode_name(tf_c2_mode m);

typedef struct tf_c2_event {
  tf_c2_event_kind kind;
  double t;
  const double *x;
  double phi; /* the limit direction of arrival (roll_start, crossing) or departure */
} tf_c2_event;

typedef struct tf_evolve2_options {
  tf_ode_options ode;
  double event_tol;      /* absolute accuracy of event times */
  double sigma_tol;      /* |h| below which a zero of <h, d_ref> is an arrival at Sigma */
  double slave_radius;   /* |h| below which the slip direction is the limit direction */
  double slave_lag;      /* two contacts: largest lag of slaved slip directions (rad) */
  double max_event_rate; /* events per unit time above which a member is Zeno */
  long max_events;
} tf_evolve2_options;

tf_evolve2_options tf_evolve2_default_options(void);

typedef struct tf_evolve2_result {
  int status; /* tf_member_status */
  double t;
  tf_c2_mode mode;
  tf_counts work; /* the event loop's (counts.h) */
  long events;
  long counts[TF_C2_EVENT_KIND_COUNT];
  double first_roll_time; /* NaN if it never rolled (a start rolling counts as t0) */
  /* with tangent vectors (tf_evolve2_enable_tangent): the Lyapunov exponents of the run */
  double lyapunov[TF_MAX_DIM];
  double tangent_time;
  const char *failure; /* why, if status is failed */
} tf_evolve2_result;

typedef struct tf_evolve2 tf_evolve2;
typedef void (*tf_c2_event_fn)(void *ctx, const tf_c2_event *ev);
typedef void (*tf_c2_step_fn)(void *ctx, const tf_evolve2 *e, double t0, double t1);

/* NULL if the model is not a codim-2 model (its dimension is within TF_MAX_DIM: model.c
 * checks every model at setup). */
tf_evolve2 *tf_evolve2_create(const tf_kernel *k, const double *params,
                              const tf_evolve2_options *opts);
void tf_evolve2_destroy(tf_evolve2 *e);
void tf_evolve2_set_callbacks(tf_evolve2 *e, tf_c2_event_fn on_event, tf_c2_step_fn on_step,
                              void *ctx);
/* Propagates `vectors` (<= dim) tangent vectors with the trajectory, re-orthonormalised
 * (GSL QR) every `interval`, through saltation matrices where the trajectory arrives at
 * Sigma (slipping -> rolling, crossing; see apply_saltation in evolve2.c); leaving Sigma is
 * the identity, as leaving sliding is for codim-1 systems.  The exponents of the run come
 * back in tf_evolve2_result.lyapunov.  0 vectors switches it off. */
int tf_evolve2_enable_tangent(tf_evolve2 *e, int vectors, double interval);

/* Integrates from (t0, x) to t_end; x is overwritten with the final state. */
tf_evolve2_result tf_evolve2_run(tf_evolve2 *e, double t0, double *x, double t_end);
/* Dense output of the step just taken (inside a step callback). */
void tf_evolve2_dense(const tf_evolve2 *e, double t, double *x);
/* The mode of the step just taken. */
tf_c2_mode tf_evolve2_mode(const tf_evolve2 *e);
/* From a step callback: the run ends after this step, pending (tf_event_loop_request_stop). */
void tf_evolve2_request_stop(tf_evolve2 *e);

#endif
