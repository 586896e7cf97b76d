/* devs.h — dynamic ensembles with variable structure (DEVS), Feldstein & Kuzmin (1998).
 *
 * A DEVS is N copies of a 1-D map; at every step each element follows the map with
 * probability q and keeps its value otherwise.  The measured signal is X_i = sum_k x_i^k.
 * The tangent dynamics of the whole state (x^1, ..., x^N) is diagonal: element k's
 * component is multiplied by f'(x^k) when it updates and by 1 when it does not.  So the
 * tangent vector started at v_0 = (1, ..., 1)/sqrt(N) is stored element-wise as a mantissa
 * and a binary exponent (|v_k| = m_k 2^e_k, renormalised with frexp every few steps instead
 * of one log() per update), and lambda_1 = lim (1/n) ln ||v_n||.  Per element that is
 * 8 (x) + 8 (m) + 8 (e) = 24 bytes.
 *
 * Why the result does not depend on the number of ranks:
 *  - element k's decision at step i comes from Philox4x64-10 keyed by (seed, member) with
 *    counter (i, TF_DEVS_RNG_UPDATE, k / 32): one byte per element, compared with q's first
 *    byte; a tie (probability 1/256) is settled by a 53-bit draw from counter
 *    (i, TF_DEVS_RNG_TIE, k), so the decision is exactly "u < q" for a uniform u (when
 *    256 q is an integer the remainder is 0 and a tie never updates: no draw is made);
 *  - elements are grouped in fixed blocks of TF_DEVS_BLOCK; a rank owns whole blocks; sums
 *    over a block have one fixed order, and the block sums are added in block order on
 *    rank 0.  Any rank count gives the same bits.
 * Elements are independent between measurements, so the engine works on one cache-resident
 * block for many steps (time tiling) and the logistic element has vectorised paths
 * (AVX-512, AVX2, chosen at run time) whose arithmetic is the generic path's, operation for
 * operation (same bits). */
#ifndef TF_DEVS_H
#define TF_DEVS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "kernel.h"

enum {
  TF_DEVS_BLOCK = 1024,            /* elements per block (the unit of ownership and sums) */
  TF_DEVS_RNG_UPDATE = 0x44455631, /* Philox purposes ("DEV1", "DEV2"), apart from rng.h's */
  TF_DEVS_RNG_TIE = 0x44455632
};

/* True if the model's element has a vectorised path (a built-in's, chosen in devs.c: a
 * plugin's element is opaque and takes the generic path through its function pointers). */
bool tf_devs_model_vectorised(const tf_kernel *k);

typedef struct tf_devs tf_devs;

/* This rank's share of the ensemble of DEVS kernel k with parameters p (size ranks of
 * comm).  `member` keys the random streams (0 for a single ensemble; a scan may use the
 * same key at every point).  `generic` forces the generic element path (for tests and
 * benchmarks).  NULL with err filled if the kernel is not a DEVS or memory runs out. */
tf_devs *tf_devs_create(const tf_kernel *k, const double *p, uint64_t seed, uint64_t member,
                        bool generic, MPI_Comm comm, tf_error *err);
void tf_devs_destroy(tf_devs *d);

uint64_t tf_devs_size(const tf_devs *d);  /* N */
uint64_t tf_devs_local(const tf_devs *d); /* elements on this rank */
uint64_t tf_devs_step(const tf_devs *d);  /* steps taken so far */
double tf_devs_q(const tf_devs *d);
bool tf_devs_vectorised(const tf_devs *d);

/* Advances every element by `steps` steps.  If X is not NULL, X[i] receives the measured
 * signal sum_k x^k after step i+1 (on every rank).  Collective. */
int tf_devs_advance(tf_devs *d, uint64_t steps, double *X, tf_error *err);

/* Restarts the tangent vector at (1, ..., 1)/sqrt(N) (where a computation starts). */
void tf_devs_reset_tangent(tf_devs *d);

/* ln ||v|| of the tangent vector, and the mean over elements of ln |v_k sqrt(N)| (each
 * element's own accumulated ln |f'|; -inf elements, hit exactly at a critical point, are
 * left out of the mean).  Same value on every rank.  Collective. */
void tf_devs_tangent(tf_devs *d, double *log_norm, double *mean_log);

/* Copies this rank's element states (tf_devs_local values) and says which global element
 * the first one is. */
uint64_t tf_devs_states(const tf_devs *d, const double **x);

/* This rank's whole state for checkpoints: element states, tangent mantissas and exponents
 * of elements [first, first + local) (returns first), to be saved or overwritten; and the
 * step counter to restore with them.  A restored state continues bit for bit, on any
 * number of ranks (blocks, not ranks, fix every sum). */
uint64_t tf_devs_state(tf_devs *d, double **x, double **m, int64_t **e);
void tf_devs_set_step(tf_devs *d, uint64_t step);

/* Refuses the poincare section (events of the user's own) for DEVS kernel k in `job`, which
 * keeps no signal to find them on, naming the config's file and line and saying why; 0 where
 * the config has none. */
int tf_devs_refuse_events(tf_config *cfg, const tf_kernel *k, const char *job, tf_error *err);

/* Events of the user's own on the measured signal xbar = X/N (poincare.*): the event
 * function g is poincare.function (observable.h, naming xbar, the model's parameters and
 * t = the step) or xbar - poincare.level; an event is a sign change of g between
 * consecutive steps in poincare.direction, recorded at the later step (discrete time, as a
 * map's).  Actions: log only (the elements are the state, xbar is an output: there is no
 * state to reset; the jobs' series have a fixed length: no stop). */
typedef struct tf_devs_events tf_devs_events;

/* *out = the events of the config (NULL when it has no poincare section).  Errors name file,
 * line and key. */
int tf_devs_events_from_config(tf_devs_events **out, tf_config *cfg, const tf_kernel *k,
                               tf_error *err);
long long tf_devs_events_count(const tf_devs_events *ev); /* poincare.count: rows recorded */

/* The events of xbar[0..n) (the signal at steps first_step .. first_step + n - 1) with
 * parameters p into rows (count x 2: step, xbar; NaN past the last event); returns how many
 * were recorded.  A pure function of its arguments: the same on every rank. */
long long tf_devs_events_find(const tf_devs_events *ev, const double *xbar, uint64_t n,
                              uint64_t first_step, const double *p, double *rows);
void tf_devs_events_destroy(tf_devs_events *ev);

/* The DEVS quantities of kernel k read from a parameter vector (rounded integers). */
uint64_t tf_devs_param_n(const tf_kernel *k, const double *p);
uint64_t tf_devs_param_steps(const tf_kernel *k, const double *p);
uint64_t tf_devs_param_transient(const tf_kernel *k, const double *p);

#endif
