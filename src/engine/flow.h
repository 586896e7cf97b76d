/* flow.h — one smooth (possibly stochastic) member: model + initial state + integrator.
 *
 * A Filippov model becomes a smooth member when it is smoothed: `model.smoothing` (any
 * Filippov kernel, see smooth.h) or its own parameters (kernel->smoothed(p), e.g. eps > 0).
 * Such members are stiff and by default run on the Rosenbrock stepper (rosenbrock.h; PETSc TS,
 * ts.h, for more than 16 components); `model.noise` adds noise on the state, the friction law
 * (the multiplier) or a parameter (a forcing), making an SDE.
 *
 * Reads the `model:`, `initial:` and `integrator:` sections of a config into a ready-to-run
 * problem and runs members of it.  Member m starts at initial.state plus a Gaussian
 * perturbation of standard deviation initial.spread drawn from stream (seed, m, purpose
 * INITIAL), and its noise comes from stream (seed, m, purpose NOISE): so member m is the
 * same computation whatever job, rank or restart runs it. */
#ifndef TF_FLOW_H
#define TF_FLOW_H

#include <mpi.h>
#include <stdint.h>

#include "checkpoint.h"
#include "config.h"
#include "kernel.h"
#include "kinds.h"
#include "ode.h"
#include "poincare.h"
#include "sde.h"
#include "smooth.h"
#include "ts.h"

typedef enum tf_method {
  TF_METHOD_DOPRI5,
  TF_METHOD_EULER_MARUYAMA,
  TF_METHOD_MILSTEIN,
  TF_METHOD_PETSC_TS,
  TF_METHOD_DRIFT_IMPLICIT
} tf_method;

/* Noise added to a model by `model.noise` (kernels may also carry their own). */
typedef enum tf_noise_target {
  TF_NOISE_NONE,
  TF_NOISE_STATE,    /* dx_i += sigma (x_i) dW_i on chosen components */
  TF_NOISE_FRICTION, /* lambda -> lambda (1 +) sigma xi: dx += sigma (lambda) df/dlambda dW */
  TF_NOISE_PARAMETER /* p_k -> p_k (1 +) sigma xi: dx += sigma (p_k) df/dp_k dW */
} tf_noise_target;

typedef struct tf_noise {
  tf_noise_target target;
  bool multiplicative;
  double sigma;
  bool component[16]; /* TF_NOISE_STATE */
  int parameter;      /* TF_NOISE_PARAMETER */
} tf_noise;

typedef struct tf_flow_batch_result {
  int status;
  double t_final;
  tf_counts work;
} tf_flow_batch_result;

typedef struct tf_flow {
  const tf_kernel *kernel;
  double *params;
  double *x0;
  double spread;
  double t0, t_end;
  tf_method method;
  tf_ode_options ode;
  double dt; /* SDE step */
  uint64_t seed;
  /* workspace */
  tf_stepper *stepper;
  double *work;
  /* smoothed Filippov members (model.smoothing) */
  bool smoothing_on;
  tf_smoothing smoothing;
  /* PETSc TS members: settings, the type that runs, members per TS */
  tf_ts_settings ts;
  char ts_type[64];
  long batch;
  uint64_t members; /* ensemble size: the last batch holds the members that remain */
  /* model.noise; drift-implicit theta */
  tf_noise noise;
  double theta;
  bool implicit_milstein;
  bool fast_normals;    /* integrator.normals: fast (SDE members) */
  double *noise_params; /* a copy of params for differences in a parameter */
  /* batch cache: the last batch solved (members batch_first .. + batch) */
  long long batch_id;
  double *batch_x0, *batch_x;
  tf_flow_batch_result *batch_res;
  bool batch_whole; /* the cached batch's members got its solve's result (none failed) */
  long batch_n_samples, batch_n_alloc; /* samples of the cached batch, buffer capacity */
  double *batch_samples, *batch_sample_t;
  long *batch_sampled; /* samples recorded per slot */
  /* impact kernels, and flows recorded at events (poincare.event): run by src/engine/poincare.h on
   * the impact engine; the last member's counts and samples stay in poincare_rec */
  tf_poincare *poincare;
  tf_poincare_spec poincare_spec;
  tf_poincare_record poincare_rec;
  int model_code; /* the SDE schemes' last refusal by the model (reset per member) */
  int lanes;      /* integrator.lanes: 0 auto, 1 member by member, else the width */
  const struct tf_sampling *sampling; /* sampled initial states (sampling.h), NULL: none */
  /* Optional: sees every accepted step [ta, tb] of a member run by tf_flow_run_member (not in
   * lanes), inside which tf_flow_dense gives the state: the stepper's step; the impact engine's
   * step as the event loop cuts it at events; an SDE scheme's grid step; a PETSc TS step of the
   * member's batch (a member of a batch of several is solved again with the hook: tf_flow_dense
   * is then its slot's interpolant on the batch's steps).  Nothing of a run depends on it. */
  void (*on_step)(void *ctx, double ta, double tb);
  void *on_step_ctx;
  /* what tf_flow_dense reads: an SDE scheme's last grid step (seen by on_step), the PETSc TS
   * step on_step sees (NULL outside it) and the member's slot in its batch */
  double sde_h, sde_t[2], sde_x[2][TF_MAX_DIM];
  long sde_total;
  const tf_ts_step *ts_step;
  double ts_t[2];
  size_t ts_slot;
} tf_flow;

/* initial.state (default: the kernel's), initial.spread, initial.time. */
int tf_initial_from_config(tf_config *cfg, const tf_kernel *k, double *x0, double *spread,
                           double *t0, tf_error *err);
/* Reads model.*, initial.*, integrator.* and ensemble.seed (and impact.*, poincare.* for
 * impact kernels or a flow recorded at events).  `stop`: where a member may stop early
 * (checkpoint.h; NULL: never).  comm is the run's communicator: loading the
 * model (a model.source is compiled by its rank 0) and starting PETSc for integrator.method
 * petsc-ts are collective over it.  Errors name file, line, key. */
int tf_flow_from_config(tf_flow *flow, tf_config *cfg, MPI_Comm comm, tf_stop_token *stop,
                        tf_error *err);
void tf_flow_destroy(tf_flow *flow);

/* Member m's initial state: sampled (sampling, NULL: none), else x0 (n values) plus
 * spread times normals drawn from (seed, member); every route that starts members from
 * initial.* draws them here. */
void tf_initial_state_of(const struct tf_sampling *sampling, const double *x0, size_t n,
                         double spread, uint64_t seed, uint64_t member, double *x);
/* Member m's initial state: sampled (flow->sampling), else x0 plus the spread's draw. */
void tf_flow_initial_state(const tf_flow *flow, uint64_t member, double *x);

/* Called at each sample time with the state there (dense output for DOPRI5, the nearest
 * step for SDE schemes). */
typedef void (*tf_sample_fn)(void *ctx, double t, const double *x);

typedef struct tf_flow_result {
  int status; /* tf_member_status */
  double t_final;
  /* the stepper's counts, steps the drive's (an SDE scheme's: its grid steps, nothing else
   * counted); PETSc TS in a batch: the batch's counts; a member run in lanes (flow_lanes.h):
   * steps and rejected only */
  tf_counts work;
} tf_flow_result;

/* Runs member `member` to t_end, leaving the final state in x (dim values).  If `sample`
 * is given, it is called at n_samples equally spaced times from t0 to t_end inclusive. */
tf_flow_result tf_flow_run_member(tf_flow *flow, uint64_t member, double *x, tf_sample_fn sample,
                                  void *sample_ctx, long n_samples);

/* The member's last step [step[0], step[1]] whose dense output the flow keeps (inside on_step:
 * the step seen); step[0] == step[1] where there is none: none taken since the member's start
 * or its last event, an SDE member run without on_step, PETSc TS outside on_step. */
void tf_flow_last_step(const tf_flow *flow, double step[2]);
/* The state at t in that step (dim values): the stepper's continuous extension, the impact
 * engine's on the mode's field, PETSc TS's interpolant (TSInterpolate) of the member's slot, or
 * for an SDE scheme, which has no continuous extension, the linear interpolant of the grid
 * step's ends (the Euler-Maruyama path between grid points).  Returns 0, or -1 where there is
 * none (t outside the step, a TS type without interpolation). */
int tf_flow_dense(const tf_flow *flow, double t, double *x);

/* PETSc TS members: false if the TS type has no interpolation inside a step (found by solving
 * x' = 0 for one step), so that a step hook is refused rather than given no dense output. */
bool tf_flow_ts_interpolates(const tf_flow *flow);

/* The field DOPRI5 integrates (ctx: the flow), and the time of sample i of n_samples. */
int tf_flow_drift(double t, const double *x, void *ctx, double *dx);
/* Its exact Jacobian (ctx: the flow), where tf_flow_has_jacobian. */
void tf_flow_jacobian(double t, const double *x, void *ctx, double *jac);
bool tf_flow_has_jacobian(const tf_flow *flow);
double tf_flow_sample_time(const tf_flow *flow, long i, long n_samples);

/* Lanes (flow_lanes.c): members integrated side by side on one core, each with its own steps,
 * error norm, accept/reject and dense output, so that each member's numbers are those of
 * tf_flow_run_member bit for bit, whatever shares its lanes.  A member of a lane run: its id,
 * x (dim values) its final state, its sample sink, its result. */
typedef struct tf_flow_lane_member {
  uint64_t member;
  double *x;
  tf_sample_fn sample;
  void *sample_ctx;
  tf_flow_result result;
} tf_flow_lane_member;

/* The lanes members of this flow run in: 1 where they run one by one (integrator.lanes: 1,
 * an SDE or PETSc TS method, events or impacts, a Rosenbrock type on a field without an exact
 * Jacobian or depending on t), else the width (auto: by the CPU). */
int tf_flow_lanes(const tf_flow *flow);
/* Runs m[0 .. count) in tf_flow_lanes(flow) lanes; a finished lane takes the next member at
 * once.  n_samples as tf_flow_run_member's (each member's own sink); `computing` (NULL: none)
 * is told the member before each call of its field (the field for all lanes at once: the
 * member last started). */
void tf_flow_run_lanes(tf_flow *flow, tf_flow_lane_member *m, size_t count, long n_samples,
                       void (*computing)(uint64_t member));

const char *tf_method_name(tf_method m);
/* "petsc-ts/bdf" for TS members, else tf_method_name. */
const char *tf_flow_integrator_name(const tf_flow *flow);

/* The engine that runs a member of model k under this config: its kind's route with the
 * config's parameters, a Filippov model taking the flow route under model.smoothing too.
 * Decided without failing (a bad config is reported by the setup that reads it). */
struct tf_route_ops;
const struct tf_route_ops *tf_flow_route(tf_config *cfg, MPI_Comm comm, const tf_kernel *k);

#endif
