/* stationary.h — one point of a stationary-state scan: run a deterministic model from a given
 * state for a given time and measure how stationary the end of the run is.
 *
 * Why: a bifurcation diagram computed by simulation (Antali 2017, Figs 4.5-4.7) continues a
 * stationary state point after point along a parameter; each point needs the same thing
 * whatever engine the model runs on — smooth flows on DOPRI5, Filippov kernels on the
 * event-driven evolve.c, codimension-2 and two-contact kernels through contact_run.h — and
 * the same verdict on whether the run reached a stationary state:
 *   drift  = max over `samples` equally spaced times t_k of the last `window` fraction of the
 *            run of |x(t_k) - x(end)|_inf / max(1, |x(end)|_inf)   (dense output: the run is
 *            not cut into pieces to measure it);
 *   window events = events (crossings, mode or case changes) inside that window;
 *   stationary  <=> the run ended ok, no window events and drift <= tolerance.
 * The mode at the end is the engine's: 0 for a smooth flow, -1 slip-, 0 sliding, 1 slip+ for
 * a Filippov kernel, 0 roll / 1 slip for a codim-2 kernel, the kinematic case 0 SS, 1 SR,
 * 2 RS, 3 RR for a body with two contacts. */
#ifndef TF_STATIONARY_H
#define TF_STATIONARY_H

#include <stdbool.h>

#include "contact_run.h"
#include "evolve.h"

typedef enum tf_stationary_engine {
  TF_STATIONARY_SMOOTH,
  TF_STATIONARY_FILIPPOV,
  TF_STATIONARY_CODIM2,
  TF_STATIONARY_DUAL,
  TF_STATIONARY_NONE /* maps, DEVS: no stationary state of a flow */
} tf_stationary_engine;

tf_stationary_engine tf_stationary_engine_for(const tf_kernel *k, const double *params);
/* "0 SS, 1 SR, 2 RS, 3 RR" etc.: what the mode numbers of this engine mean. */
const char *tf_stationary_modes_doc(tf_stationary_engine e);
/* The name of a mode ("SS", "sliding", "roll", "flow"). */
const char *tf_stationary_mode_name(tf_stationary_engine e, int mode);

enum { TF_STATIONARY_SAMPLES = 16 };

typedef struct tf_stationary_options {
  double time;      /* simulated time per point */
  double window;    /* fraction of `time` at the end over which the drift is measured */
  double tolerance; /* largest drift of a stationary state */
  tf_ode_options ode;
  tf_contact_options contact; /* codim-2 and two-contact kernels */
} tf_stationary_options;

typedef struct tf_stationary_result {
  int status; /* tf_member_status */
  double drift;
  bool stationary;
  int mode;
  long steps, events, window_events;
  const char *failure;
} tf_stationary_result;

/* Runs from (t0, x) for o->time; x is overwritten with the final state. */
tf_stationary_result tf_stationary_point(const tf_kernel *k, const double *params,
                                         const tf_stationary_options *o, double t0, double *x);

#endif
