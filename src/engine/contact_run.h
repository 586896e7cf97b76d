/* contact_run.h — one run of a body under spatial Coulomb friction: a codimension-2 kernel
 * (twofold/model.h tf_codim2_ops) on the slip/roll engine of evolve2.h, or a body with two contacts
 * (twofold/model.h tf_two_contact_ops, e.g. the flowmeter) on dual_contact.h, from a given state
 * for a given time.
 *
 * Why a file of its own: every job that runs these kernels (trajectory samples one run, scan
 * continues stationary states point after point) needs the same choice of engine, the same
 * codim2.* keys and the same event/step hooks; here they are written once, so a run means the
 * same thing in every job.  Events of both engines come out as one record (t, kind, detail,
 * state): detail is the limit direction phi for codim-2 kernels and the case after the event
 * for two-contact bodies.  The "mode" of a run is the codim-2 mode (0 roll, 1 slip) or the
 * kinematic case (0 SS, 1 SR, 2 RS, 3 RR). */
#ifndef TF_CONTACT_RUN_H
#define TF_CONTACT_RUN_H

#include <stdbool.h>

#include "config.h"
#include "dual_contact.h"
#include "evolve2.h"

/* True if k is run by this file (its route, kinds.h). */
bool tf_contact_kernel(const tf_kernel *k);
/* True if k is a body with two contacts (its modes are the kinematic cases). */
bool tf_contact_is_dual(const tf_kernel *k);
/* 0, or an error naming model.name if k has two contacts: Lyapunov exponents (`what`, e.g.
 * "the lyapunov job") have no tangent dynamics for its kinematic cases. */
int tf_contact_refuse_dual_lyapunov(tf_config *cfg, const tf_kernel *k, const char *what,
                                    tf_error *err);

typedef struct tf_contact_options {
  tf_evolve2_options engine;
  int exponents; /* tangent vectors through the saltation (codim-2 kernels only); 0: none */
  double lyapunov_interval;
} tf_contact_options;

/* integrator.method: dop853 is refused for these engines (the error names the key). */
int tf_contact_pair_check(tf_config *cfg, const tf_ode_options *ode, tf_error *err);
/* codim2.{sigma_tol, slave_radius, event_tol, max_event_rate, max_events} (documented in
 * docs/CONFIG.md) on top of the integrator options `ode`; exponents 0. */
int tf_contact_options_from_config(tf_config *cfg, const tf_ode_options *ode, tf_contact_options *o,
                                   tf_error *err);

typedef struct tf_contact_event {
  double t;
  int kind;      /* tf_c2_event_kind or tf_dc_event_kind */
  double detail; /* phi (codim-2) or the case after the event (two contacts) */
  const double *x;
} tf_contact_event;

typedef struct tf_contact tf_contact; /* the engine of one run, seen from a step hook */
typedef void (*tf_contact_event_fn)(void *ctx, const tf_contact_event *ev);
typedef void (*tf_contact_step_fn)(void *ctx, const tf_contact *c, double t0, double t1);

typedef struct tf_contact_hooks {
  tf_contact_event_fn on_event; /* may be NULL */
  tf_contact_step_fn on_step;   /* may be NULL */
  void *ctx;
} tf_contact_hooks;

typedef struct tf_contact_result {
  int status; /* tf_member_status */
  double t;
  tf_counts work; /* the engine's (counts.h) */
  long events;
  int mode;             /* at the end: tf_c2_mode or tf_dc_case */
  const char *failure;  /* why, if status is failed (static text) */
  tf_evolve2_result c2; /* codim-2 kernels: the engine's full result */
  tf_dual_result dual;  /* two-contact bodies */
} tf_contact_result;

/* Integrates from (t0, x) to t_end; x is overwritten with the final state.  `params` must
 * stay valid during the call. */
tf_contact_result tf_contact_run(const tf_kernel *k, const double *params,
                                 const tf_contact_options *o, double t0, double *x, double t_end,
                                 const tf_contact_hooks *hooks);

/* Inside a step hook: the dense output of the step just taken and its mode. */
void tf_contact_dense(const tf_contact *c, double t, double *x);
int tf_contact_mode(const tf_contact *c);
/* Inside a step hook: the run ends after this step with status TF_MEMBER_PENDING, before any
 * transition (the hook knows its own stopping point in the step). */
void tf_contact_request_stop(const tf_contact *c);

/* "0 SS, 1 SR, 2 RS, 3 RR" or "0 roll (on Sigma), 1 slip"; the event kinds likewise. */
const char *tf_contact_modes_doc(const tf_kernel *k);
const char *tf_contact_event_kinds_doc(const tf_kernel *k);
const char *tf_contact_mode_name(const tf_kernel *k, int mode);
int tf_contact_mode_count(const tf_kernel *k);

#endif
