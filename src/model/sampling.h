/* sampling.h — Monte-Carlo initial states and parameters, one draw per member.
 *
 * `initial.sample` gives some state components a distribution (normal around initial.state,
 * a uniform box, log-uniform), `model.sample` some model parameters (checked against the
 * parameter's bounds), and `initial.design` how the unit cube behind them is filled: random,
 * a Latin hypercube or a Sobol sequence.  `initial.from_file` instead takes member m's
 * whole initial state from row m of a file (an HDF5 dataset, .npy or CSV).
 *
 * Every draw is a pure function of (seed, member, purpose), never of the ranks or of the
 * members run before, so a member is the same on any number of ranks and after a resume:
 *   random  u_j = uniform j of stream (seed, m, counter 0, TF_RNG_SAMPLE);
 *   LHS     u_j = (pi_j(m) + that uniform) / N, pi_j a permutation of 0..N-1 computed from
 *           (seed, j) alone (a Feistel network with cycle walking, TF_RNG_LHS), member by
 *           member, so no rank holds or exchanges a table;
 *   Sobol   u = point m + 1 of GSL's Sobol sequence (gsl_qrng_sobol; point 0 is the origin),
 *           built from the direction numbers read off GSL's sequence once: the point of index
 *           i is the XOR of the numbers of the set bits of i's Gray code.
 * The j run over the sampled state components (state order), then the sampled parameters
 * (parameter order); each u_j goes through its distribution's inverse CDF. */
#ifndef TF_SAMPLING_H
#define TF_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "kernel.h"

typedef struct tf_sampling tf_sampling;

/* What the sampler starts from: the route's state and parameters, shared by every member. */
typedef struct tf_sampling_base {
  const tf_kernel *kernel;
  const double *x0; /* initial.state (or the physical initial conditions): the normal's mean */
  double *params;   /* the live parameters the route integrates with: overwritten per member */
  uint64_t members; /* 0: ensemble.members */
  uint64_t seed;
  double spread; /* initial.spread, refused together with a sampled state */
  bool at_twofold;
} tf_sampling_base;

/* Reads initial.sample, initial.design, initial.from_file (initial.dataset) and model.sample
 * when present; *out stays NULL (and no key is read) when none is.  Errors name file, line and
 * key. */
int tf_sampling_from_config(tf_config *cfg, const tf_sampling_base *base, tf_sampling **out,
                            tf_error *err);
void tf_sampling_destroy(tf_sampling *s);

/* Member m's initial state (dim values), or false if the sampler does not set the state. */
bool tf_sampling_state(const tf_sampling *s, uint64_t member, double *x);

/* Sets member m's parameters in the live array (derived ones derived again) and, if `drawn`
 * is not NULL, writes the sampled ones there (tf_sampling_param_count values).  Returns 0, or
 * -1 if the model's prepare() refuses the draw (its reason in err). */
int tf_sampling_set_params(const tf_sampling *s, uint64_t member, double *drawn, tf_error *err);

/* Sampled parameters, and their names in output order. */
size_t tf_sampling_param_count(const tf_sampling *s);
const char *const *tf_sampling_param_names(const tf_sampling *s);

#endif
