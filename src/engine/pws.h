/* pws.h — one member of a piecewise-smooth (Filippov) model: config to ready-to-run problem.
 *
 * Reads model (a Filippov kernel), initial, integrator, filippov.* (event machinery),
 * exit.* (the policy at a nondeterministic two-fold) and output.* (what to record per
 * member), locates the model's two-fold if it has one, and runs members with the
 * event-driven integrator.  With initial.at_twofold every member starts by leaving the
 * two-fold through the exit policy (visit 0), as in the paper's simulations.  Models with several
 * switching functions (switches.h) run here too, on that engine: the same keys, logs and draws
 * (a nondeterministic choice of mode is a draw of the exit policy, kind intersection choice);
 * their events are logged in evolve.h's kinds (a contact sticking: slide_start, releasing:
 * slide_end, crossing: crossing, choice and undefined as at an intersection), their modes as
 * tf_sw_mode_code. */
#ifndef TF_PWS_H
#define TF_PWS_H

#include <stdbool.h>
#include <stdint.h>

#include "checkpoint.h"
#include "config.h"
#include "evolve.h"
#include "exit_policy.h"
#include "intersection_policy.h"
#include "model.h"
#include "singularity.h"

typedef struct tf_pws {
  tf_model model;
  double x0[TF_MAX_DIM];
  double spread, t0, t_end;
  bool at_twofold;
  uint64_t seed;
  const struct tf_sampling *sampling; /* sampled initial states (sampling.h), NULL: none */
  tf_evolve_options opts;
  bool has_twofold;
  tf_twofold twofold;
  tf_exit_policy policy;
  tf_intersection_policy choice; /* at intersections of switching surfaces */
  long max_logged_exits, max_logged_events, trajectory_samples;
  int lanes; /* integrator.lanes: 0 auto, 1 member by member, else the width (pws_lanes.h) */
  tf_evolve *evolve;
  /* models with several switching functions (switches.h) run here instead of evolve */
  struct tf_switches *switches;
  struct tf_pws_watch *watch; /* optional observer of every member (NULL: none) */
  /* Optional: sees every accepted step [ta, tb], before the watch, with tf_pws_dense valid on
   * it (member_engine.h, settings.step). */
  void (*on_step)(void *ctx, double ta, double tb);
  void *on_step_ctx;
} tf_pws;

/* An observer of a member's run (pws_section.h: Poincare sections and sliding): `step` sees
 * every accepted step, whose dense output tf_pws_dense gives on [ta, tb]; `event` every event,
 * with the modes before and after (the event log's codes).  Either may be NULL.  A step that
 * sets `stop` ends the member at (t_stop, x_stop), a time in that step: nothing after it is
 * integrated or logged, and the member's status is ok. */
typedef struct tf_pws_watch {
  void (*step)(void *ctx, const struct tf_pws *pws, double ta, double tb);
  void (*event)(void *ctx, double t, int from, int to, const double *x);
  void *ctx;
  bool stop;
  double t_stop, x_stop[TF_MAX_DIM];
} tf_pws_watch;

/* The dense output of the step a member just took, at t in it. */
void tf_pws_dense(const tf_pws *pws, double t, double *x);
/* The ends of the last accepted step of the member run last (equal where it took none since its
 * start or its last event): the step tf_pws_dense interpolates, on its segment's field. */
void tf_pws_last_step(const tf_pws *pws, double step[2]);

/* `comm`: the run's communicator (loading the model is collective over it); `stop`: where a
 * member may stop early (checkpoint.h; NULL: never).  A replay file its
 * policies name is read afterwards, by the io layer (tf_member_settings.read_replays). */
int tf_pws_from_config(tf_pws *pws, tf_config *cfg, MPI_Comm comm, tf_stop_token *stop,
                       tf_error *err);
void tf_pws_destroy(tf_pws *pws);

/* Widths of the per-member logs: one draw is (t, u, side, kind, x), one event (t, kind, from, to,
 * x).  A draw is an exit from the two-fold (kind 0; x the continuation point, side ±1) or a
 * choice at an intersection of switching surfaces (kind 1, 2, 3 by the rule that made it:
 * uniform, weighted, regularised, TF_DRAW_* of intersection_policy.h; x the point on the
 * intersection, side the mode it leaves in: -1 slip-, 0 sliding, 1 slip+). */
size_t tf_pws_exit_width(const tf_pws *pws);
size_t tf_pws_event_width(const tf_pws *pws);

/* What a member run fills in; the arrays are caller-provided with the widths above. */
typedef struct tf_pws_record {
  double *final_state, *initial_state;
  double *exits;      /* max_logged_exits * exit width, NaN-padded */
  double *events;     /* max_logged_events * event width, NaN-padded */
  double *trajectory; /* trajectory_samples * dim, NaN-padded */
  double t_final;
  long steps, rhs_evals, visits;
  long rejected; /* step attempts the stepper rejected */
  long counts[TF_EVENT_KIND_COUNT];
  int final_mode;
} tf_pws_record;

/* A member's final mode as text: evolve.h's mode name, or per switching function "slip-",
 * "stick", "slip+" joined by commas. */
const char *tf_pws_mode_name(const tf_pws *pws, int mode, char *buf, size_t n);

int tf_pws_run_member(tf_pws *pws, uint64_t member, tf_pws_record *rec);

/* tf_pws_run_member in pieces on an engine of its own, for members side by side (pws_lanes.c):
 * a lane begins a member (false: it could not start, status failed), its engine's event loop
 * (tf_evolve_loop) takes the member's steps, and end fills the record and returns the status.
 * Lanes are possible for one switching function without a watch (tf_pws_lanes_possible); create
 * returns NULL elsewhere. */
typedef struct tf_pws_lane tf_pws_lane;
bool tf_pws_lanes_possible(const tf_pws *pws);
tf_pws_lane *tf_pws_lane_create(tf_pws *pws);
void tf_pws_lane_destroy(tf_pws_lane *lane);
bool tf_pws_lane_begin(tf_pws_lane *lane, uint64_t member, tf_pws_record *rec);
tf_evolve *tf_pws_lane_evolve(tf_pws_lane *lane);
int tf_pws_lane_end(tf_pws_lane *lane);

#endif
