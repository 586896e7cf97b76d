/* member_engine.h — one interface for the engines that integrate one member of an ODE-based
 * model, and one result every job reads.
 *
 * A model runs on the engine of its route (kinds.h): smooth flows, SDEs and PETSc TS
 * (flow.h), event-driven Filippov members with one or several switching functions (pws.h),
 * bodies under spatial friction (contact_run.h), impact systems (flow.h on poincare.h), and
 * maps, iterated (member_map.c; time counts iterations).  Each
 * route has one adapter (src/engine/member_<route>.c) that fills an ops table and the route's
 * row (routes.h) pointing at it; the rows are registered by name in routes.c and looked up by
 * the name the model's kind gives (kinds.h), so a job asks for "the engine of this config" and
 * never switches on the route.  What a route produces beyond the
 * common fields (its event kinds, logs, samples, impact counts) is said by its layout, and the
 * output columns a job writes are picked by name from member_columns.h.
 *
 * Adding a route: one adapter file (its ops and its row) and one X(name) line in routes.c. */
#ifndef TF_MEMBER_ENGINE_H
#define TF_MEMBER_ENGINE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "checkpoint.h"
#include "config.h"
#include "contact_run.h"
#include "error.h"
#include "impact.h"
#include "json.h"
#include "kinds.h"
#include "max_dim.h"

/* The draw policies of pws.h (exit_policy.h, intersection_policy.h), for read_replays. */
struct tf_exit_policy;
struct tf_intersection_policy;

struct tf_member_engine;

/* What a job asks of the engine it creates. */
typedef struct tf_member_settings {
  /* ensemble size: draws (exit.replay) depend on it; 0: ensemble.members (default 1) */
  uint64_t members;
  /* samples of the state per member, equally spaced from t0 to t_end inclusive;
   * TF_MEMBER_SAMPLES_FROM_CONFIG: output.trajectory_samples (0 or >= 2, default 0) */
  long samples;
  /* One member traced in time: the routes that keep an event log only for a traced member
   * (contact_run.h, output.event_log) and tangent vectors (lyapunov.*) read their keys. */
  bool traced;
  /* Where the engine may stop early (checkpoint.h); a member stopped there returns
   * TF_MEMBER_PENDING.  NULL: never stopped. */
  tf_stop_token *stop;
  /* The run's communicator: loading the model (a model.source is compiled by its rank 0) and
   * starting PETSc are collective over it, and over it only. */
  MPI_Comm comm;
  /* The job's own keys, read by the engine where its reading has always put them (a results
   * file stores the config in the order keys were read): `member_keys` those of the member
   * (its index, samples; may set `samples`), `output_keys` the output.* keys.  NULL: none. */
  int (*member_keys)(tf_config *cfg, void *ctx, struct tf_member_settings *s, tf_error *err);
  /* Optional: told which member is computed now, where run_many moves between members (a
   * crash is then named by the member it happened in: the run's guard). */
  void (*computing)(uint64_t member);
  int (*output_keys)(tf_config *cfg, void *ctx, tf_error *err);
  /* Optional: sees every accepted step [ta, tb] of a member while it runs, as the engine cut it
   * at events (no step across an event); inside it tf_member_engine_dense gives the state at
   * any t in the step.  Members then run one by one (no lanes; a PETSc TS batch member is its
   * batch solved again, the hook seeing the batch's steps).  A route without dense output
   * (ops->dense NULL: maps) refuses it at create. */
  void (*step)(void *ctx, const struct tf_member_engine *e, double ta, double tb);
  void *ctx;
  /* Fills the replay tables of the draw policies that name an earlier results file
   * (tf_replay_logs_read, replay_log.h): reading a file is io, a layer above the engines, so
   * the job hands the reader down.  NULL: a policy naming a replay file is an internal error. */
  int (*read_replays)(struct tf_exit_policy *exit, struct tf_intersection_policy *choice,
                      uint64_t members, long max_logged, tf_error *err);
} tf_member_settings;

enum { TF_MEMBER_SAMPLES_FROM_CONFIG = -1 };

/* What a route produces, known once the engine is created; member_columns.c sizes and
 * describes the output columns from it. */
typedef struct tf_member_layout {
  const tf_kernel *kernel;
  const double *params; /* the member's parameters */
  size_t dim;
  double t0, t_end;
  long samples;                        /* sample rows of a member */
  int event_kinds;                     /* values of the per-kind event counts (0: none counted) */
  const char *const *event_kind_names; /* their names (NULL: one total, no kinds) */
  const char *events_doc;              /* the events column's doc */
  const char *mode_doc;                /* the mode at t_final (NULL: no mode) */
  const char *modes_attr;              /* names of the modes, as an attribute (NULL: none) */
  bool counts_rhs, counts_jacobians, counts_impacts;
  bool counts_kinds;  /* events per kind of evolve.h (Filippov): totals in an ensemble's summary */
  bool counts_visits; /* a nondeterministic two-fold is located: members may arrive at it */
  long exit_slots, event_slots; /* logged draws and events per member */
  size_t exit_width, event_width;
  const char *event_log_doc;     /* a traced member's event table */
  const char *event_log_attr;    /* its kinds attribute */
  const char *samples_doc;       /* a traced member's states at the sample times */
  const char *sample_mode_doc;   /* the mode at the sample times (NULL: not sampled) */
  long poincare_slots;           /* states recorded at events (poincare.h) */
  const char *poincare_mode_doc; /* the mode at each recorded event (NULL: not recorded) */
  char integrator[96];           /* "dopri5+events", "petsc-ts/rosw", ... */
  const char *traced_integrator; /* as a traced member's JSON line names it */
  long batch;                    /* members solved together (PETSc TS), else 1 */
  int lanes;             /* members integrated side by side by run_many (flow.h), else 1 (or 0) */
  bool stops_inside;     /* a member is one long solve that polls the stop token at every step */
  bool calls_mpi;        /* a member's solve calls MPI (PETSc TS): no --isolate worker may run it */
  size_t sampled_params; /* model.sample: parameters drawn per member (sampling.h) */
  const char *const *sampled_names; /* their names */
  /* The config paths a traced member's numbers depend on, in the order its results files
   * store them (their fingerprint, results.h). */
  const char *const *fingerprint;
} tf_member_layout;

/* Arrays the engine fills in place (any may be NULL): the initial and final state (dim each),
 * the samples (layout.samples rows: times, states, modes), the draws and events logs
 * (slots x width, NaN-padded). */
typedef struct tf_member_buffers {
  double *initial, *final;
  double *parameters; /* the sampled parameters (layout.sampled_params values) */
  double *sample_t, *sample_x, *sample_mode;
  double *exits, *event_log;
} tf_member_buffers;

/* Route-specific parts of a result. */
typedef enum tf_member_extra_tag {
  TF_MEMBER_EXTRA_NONE,
  TF_MEMBER_EXTRA_CONTACT, /* contact_run.h: the engine's full result */
  TF_MEMBER_EXTRA_IMPACT   /* poincare.h: counts at the constraints */
} tf_member_extra_tag;

enum { TF_MEMBER_EVENT_KINDS_MAX = 16 };

typedef struct tf_member_result {
  int status;     /* tf_member_status; TF_MEMBER_PENDING if a stop token ended the run */
  double t;       /* time reached */
  tf_counts work; /* the engine's, whole (counts.h); columns by field (member_columns.c) */
  long events[TF_MEMBER_EVENT_KINDS_MAX]; /* per kind of layout (one total without kinds) */
  long visits;                            /* arrivals at a nondeterministic two-fold */
  int mode;                               /* at t (layout.mode_doc) */
  int exponents;                          /* Lyapunov exponents of the run (0: none) */
  double lyapunov[TF_MAX_DIM];
  const char *failure;        /* why, if failed (static text; NULL elsewhere than where it ran) */
  long sample_rows;           /* sample rows to write (stopped runs: those taken) */
  long event_rows, exit_rows; /* log rows filled */
  /* States recorded at the section's events (layout.poincare_slots > 0; poincare.h) */
  struct {
    const double *samples; /* poincare_slots x (1 + dim), the engine's */
    const double *modes;   /* poincare_slots: the mode at each (layout.poincare_mode_doc) */
    long long recorded;
    int period;
  } poincare;
  tf_member_extra_tag tag;
  union {
    tf_contact_result contact;
    struct {
      tf_impact_result counts;
    } impact;
  } extra;
} tf_member_result;

typedef struct tf_member_engine tf_member_engine;

/* Takes one text attribute naming a rule of the route: on its draws log (on_log) or on the
 * results group the log is in.  The caller writes it; the engines write no file. */
typedef void (*tf_member_attr_fn)(void *ctx, bool on_log, const char *name, const char *value);

/* The table of one route. */
typedef struct tf_member_ops {
  const char *name;
  /* Reads the route's keys of cfg for kernel k and fills e->impl and e->layout. */
  int (*create)(tf_member_engine *e, tf_config *cfg, const tf_kernel *k,
                const tf_member_settings *s, tf_error *err);
  /* Runs member `member` from layout.t0 to layout.t_end. */
  void (*run)(tf_member_engine *e, uint64_t member, const tf_member_buffers *b,
              tf_member_result *r);
  /* Optional: runs members[0 .. n) with results b[i], r[i] (each r[i] cleared first), as run
   * would one by one and with the same numbers, but side by side (flow.h, integrator.lanes).
   * NULL: run, member by member. */
  void (*run_many)(tf_member_engine *e, size_t n, const uint64_t *members,
                   const tf_member_buffers *b, tf_member_result *r);
  /* Optional: the dense output of the member run last (by run; e->dense_valid set by it), or,
   * inside settings.step, of the running member's step just accepted: its ends into step[0] <
   * step[1] and, for t in [step[0], step[1]], the state at t into x (layout.dim values): the
   * stepper's continuous extension on the field of that step's segment (PETSc TS: its
   * interpolant; an SDE scheme: the linear interpolant of the step's ends).  Returns 0; -1 where
   * there is none.  NULL: the route keeps none, and no_dense says why. */
  int (*dense)(const tf_member_engine *e, double t, double *x, double step[2]);
  /* Why a route without dense output has none (a step hook is refused with it). */
  const char *no_dense;
  void (*destroy)(tf_member_engine *e);
  /* Optional: the route's own fields of a traced member's JSON line. */
  void (*report)(const tf_member_engine *e, const tf_member_result *r, const double *final,
                 tf_json *j);
  /* Optional: the attributes naming the rules behind the draws log, each given to put. */
  void (*describe_draws)(const tf_member_engine *e, tf_member_attr_fn put, void *ctx);
} tf_member_ops;

struct tf_member_engine {
  const tf_member_ops *ops;
  tf_member_layout layout;
  tf_member_settings settings;
  void *impl;
  /* The member run last took at least one step whose dense output ops->dense gives (cleared
   * before each run, set by the adapter's run; members run side by side leave it clear). */
  bool dense_valid;
  /* initial.sample, initial.from_file, model.sample (NULL: none); the adapter creates it
   * (tf_member_sampling) and draws the state, the engine sets the parameters per member */
  struct tf_sampling *sampling;
};

/* The engine for the model of cfg (model.*, initial.*, integrator.* and its route's keys).
 * Errors name file, line and key.  *out is set even on failure: destroy it. */
int tf_member_engine_create(tf_config *cfg, const tf_member_settings *s, tf_member_engine **out,
                            tf_error *err);
void tf_member_engine_destroy(tf_member_engine *e);

/* Runs one member; r is cleared first. */
void tf_member_engine_run(tf_member_engine *e, uint64_t member, const tf_member_buffers *b,
                          tf_member_result *r);

/* Runs members[0 .. n) into b[i], r[i]: bit for bit what tf_member_engine_run gives each, by
 * the route's run_many where it has one (a rank's queue of members, e.g. one chunk). */
void tf_member_engine_run_many(tf_member_engine *e, size_t n, const uint64_t *members,
                               const tf_member_buffers *b, tf_member_result *r);

/* The dense output of the last accepted step of the member run last (tf_member_engine_run), or
 * inside settings.step of the step just accepted: the step's ends into step[0..1] and, for t in
 * them, the state at t into x.  Returns 0, or -1 where there is none: a route without dense
 * output (ops->dense), no step taken since the member's start or its last event, members run
 * side by side, after the run on a route that keeps its steps only during it (PETSc TS, contact;
 * SDE members run without a hook), a PETSc TS type without interpolation, or t outside the
 * step. */
int tf_member_engine_dense(const tf_member_engine *e, double t, double *x, double step[2]);

/* The route's fields of a traced member's JSON line (nothing if it has none). */
void tf_member_engine_report(const tf_member_engine *e, const tf_member_result *r,
                             const double *final, tf_json *j);

/* For adapters: the job's member keys, or its output keys (settings.member_keys, output_keys). */
/* output.trajectory_samples: 0 (none) or >= 2 sample times of a member. */
int tf_member_read_trajectory_samples(tf_config *cfg, long *samples, tf_error *err);
int tf_member_member_keys(tf_member_settings *s, tf_config *cfg, tf_error *err);
int tf_member_output_keys(const tf_member_settings *s, tf_config *cfg, tf_error *err);

/* For adapters: the sampler of the config's sampling keys (sampling.h) for the route's base
 * state x0 and live parameters, kept in e->sampling; refuses them where the route cannot vary
 * them per member (`params_fixed`: why not, NULL: it can). */
int tf_member_sampling(tf_member_engine *e, tf_config *cfg, const double *x0, double *params,
                       uint64_t seed, double spread, bool at_twofold, const char *params_fixed,
                       tf_error *err);

/* Sends rank root's result to every rank of comm; pointers are cleared elsewhere. */
void tf_member_result_bcast(tf_member_result *r, int root, MPI_Comm comm);

/* The time of sample i of n from t0 to t_end (the last exactly t_end). */
double tf_member_sample_time(double t0, double t_end, long i, long n);

#endif
