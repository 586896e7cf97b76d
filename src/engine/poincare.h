/* poincare.h — one member of an impact kernel or a flow run for its events: the `impact.*`
 * and `poincare.*` config sections, and Poincaré samples.
 *
 * The state is recorded at chosen events (impacts; extrema of a component, where its
 * derivative crosses zero; crossings of a level by a component) after a transient number of
 * them, for a fixed number of them.  A member stops early once its recorded values of the
 * compared component repeat with a period P <= 16 to poincare.tol over 4 P recorded events
 * (an attracting period-P orbit or, with P = 1, a rest point): the rest of its samples are
 * filled with that period's continuation, so a bifurcation diagram drawn from the samples is
 * the same whether a member ran to the end or stopped early.  Used by the jobs ensemble,
 * trajectory (through flow.h) and scan (quantity poincare); maps read the same keys (no
 * impact.*, no extremum) and record with the same recorder (member_map.c). */
#ifndef TF_POINCARE_H
#define TF_POINCARE_H

#include <stdbool.h>

#include "config.h"
#include "impact.h"

enum { TF_POINCARE_MAX_PERIOD = 16 };

/* What a recorded event does (poincare.action). */
typedef enum tf_poincare_action {
  TF_POINCARE_STOP = 0, /* the member ends at the count-th recorded event */
  TF_POINCARE_LOG = 1,  /* the events are recorded and the member runs on to t_end */
  TF_POINCARE_RESET = 2 /* as log, the state reset at every section event (impact.section_reset) */
} tf_poincare_action;

typedef struct tf_poincare_spec {
  tf_impact_options impact;
  tf_poincare_action action;
  bool record;         /* poincare.event given */
  bool on_impacts;     /* impacts are recorded events */
  long long transient; /* events skipped */
  long long count;     /* events recorded */
  double tol;          /* early stop (0: never) */
  int component;       /* compared for the early stop */
} tf_poincare_spec;

/* Reads impact.* (for impact kernels) and poincare.* for kernel k; ode options are the
 * integrator's.  Errors name file, line and key. */
int tf_poincare_from_config(tf_poincare_spec *s, tf_config *cfg, const tf_kernel *k,
                            const tf_ode_options *ode, tf_error *err);

/* The section of a computation with tangent vectors (job: "the lyapunov job", ...): absent
 * (s->record false), or one whose events reset the state (poincare.action: reset) of a flow or
 * an impact model, its function and reset exactly differentiable (a level or a function of the
 * state, parameters and t; not an extremum, not a model's output).  Errors name file, line and
 * key. */
int tf_poincare_reset_from_config(tf_poincare_spec *s, tf_config *cfg, const tf_kernel *k,
                                  const tf_ode_options *ode, const char *job, tf_error *err);

/* What one member leaves: counts and (if recording) count x (1 + dim) samples (t, state),
 * NaN where fewer events happened. */
typedef struct tf_poincare_record {
  tf_impact_result result;
  double *samples;    /* count * (1 + dim), caller's */
  long long recorded; /* samples filled by events */
  int period;         /* period found by the early stop, 0 if none */
} tf_poincare_record;

/* The recording itself, for any engine that finds the events: transient, slots, early stop. */
typedef struct tf_poincare_recorder {
  const tf_poincare_spec *s;
  size_t dim;
  tf_poincare_record *rec;
  long long seen; /* counted events */
  bool full;      /* the slots are filled: later events are not recorded */
} tf_poincare_recorder;

/* Starts recording into rec (its samples NaN-filled, counts cleared). */
void tf_poincare_recorder_start(tf_poincare_recorder *r, const tf_poincare_spec *s, size_t dim,
                                tf_poincare_record *rec);
/* One counted event at (t, x): skipped in the transient, else recorded.  Returns 1 once the
 * slots are full (or filled by a period's continuation): later events are not recorded. */
int tf_poincare_recorder_add(tf_poincare_recorder *r, double t, const double *x);

/* A value kept per recorded event (the mode at it), continued like the samples once the early
 * stop found a period: values[j] = values[j - period] from rec->recorded to count. */
void tf_poincare_continue_period(const tf_poincare_record *rec, long long count, double *values);

typedef struct tf_poincare tf_poincare;

tf_poincare *tf_poincare_create(const tf_kernel *k, const tf_poincare_spec *s);
void tf_poincare_destroy(tf_poincare *pc);

/* Runs from (t0, x) to t_end with parameters p (x: dim values, overwritten with the final
 * state).  sample, if not NULL, gets n_samples equally spaced states. */
void tf_poincare_run(tf_poincare *pc, const double *p, double t0, double *x, double t_end,
                     tf_poincare_record *rec, tf_impact_sampler sample, void *sample_ctx,
                     long n_samples);

/* tf_poincare_run without samples, in pieces (for the lanes, impact_lanes.c): begin (false:
 * the start is refused), the loop's steps while there are (steps taken outside, each handed to
 * tf_event_loop_stepped, and tf_event_loop_drive for the rest), end (the result into rec). */
bool tf_poincare_begin(tf_poincare *pc, const double *p, double t0, double *x, double t_end,
                       tf_poincare_record *rec);
tf_event_loop *tf_poincare_loop(tf_poincare *pc);
tf_impact *tf_poincare_impact(tf_poincare *pc);
void tf_poincare_end(tf_poincare *pc, tf_poincare_record *rec);

#endif
