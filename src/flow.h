/* flow.h — one smooth (possibly stochastic) member: model + initial state + integrator.
 *
 * Reads the `model:`, `initial:` and `integrator:` sections of a config into a ready-to-run
 * problem and runs members of it.  Member m starts at initial.state plus a Gaussian
 * perturbation of standard deviation initial.spread drawn from stream (seed, m, purpose
 * INITIAL), and its noise comes from stream (seed, m, purpose NOISE): so member m is the
 * same computation whatever job, rank or restart runs it. */
#ifndef TF_FLOW_H
#define TF_FLOW_H

#include <stdint.h>

#include "config.h"
#include "kernel.h"
#include "ode.h"
#include "sde.h"

typedef enum tf_method { TF_METHOD_DOPRI5, TF_METHOD_EULER_MARUYAMA, TF_METHOD_MILSTEIN } tf_method;

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
  tf_dopri5 *stepper;
  double *work;
} tf_flow;

/* initial.state (default: the kernel's), initial.spread, initial.time. */
int tf_initial_from_config(tf_config *cfg, const tf_kernel *k, double *x0, double *spread,
                           double *t0, tf_error *err);
/* integrator.t_end (required, after t0; not read if t_end is NULL), rtol, atol, h0, hmax,
 * max_steps. */
int tf_ode_options_from_config(tf_config *cfg, tf_ode_options *o, double t0, double *t_end,
                               tf_error *err);

/* Reads model.*, initial.*, integrator.* and ensemble.seed.  Errors name file, line, key. */
int tf_flow_from_config(tf_flow *flow, tf_config *cfg, tf_error *err);
void tf_flow_destroy(tf_flow *flow);

void tf_flow_initial_state(const tf_flow *flow, uint64_t member, double *x);

/* Called at each sample time with the state there (dense output for DOPRI5, the nearest
 * step for SDE schemes). */
typedef void (*tf_sample_fn)(void *ctx, double t, const double *x);

typedef struct tf_flow_result {
  int status; /* tf_member_status */
  double t_final;
  long steps;
} tf_flow_result;

/* Runs member `member` to t_end, leaving the final state in x (dim values).  If `sample`
 * is given, it is called at n_samples equally spaced times from t0 to t_end inclusive. */
tf_flow_result tf_flow_run_member(tf_flow *flow, uint64_t member, double *x, tf_sample_fn sample,
                                  void *sample_ctx, long n_samples);

const char *tf_method_name(tf_method m);

#endif
