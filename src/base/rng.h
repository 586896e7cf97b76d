/* rng.h — counter-based random numbers (Philox4x64-10 from Random123).
 *
 * Every random number in twofold is a pure function of
 *     (seed, member, counter, purpose, index)
 * so results do not depend on how members are spread over ranks, on the chunk size, or on
 * a restart: nothing is carried from one draw to the next.  The Philox key is (seed,
 * member); the counter words are (counter, purpose, index / 4, 0), and each Philox call
 * yields four 64-bit words.  `counter` is the step or event number, `purpose` keeps
 * unrelated uses (initial perturbation, noise increments, exit choices) apart. */
#ifndef TF_RNG_H
#define TF_RNG_H

#include <stddef.h>
#include <stdint.h>

enum tf_rng_purpose {
  TF_RNG_INITIAL = 1, /* perturbation of the initial state */
  TF_RNG_NOISE = 2,   /* Wiener increments of SDE members */
  TF_RNG_EXIT = 3,    /* choice of exit at a nondeterministic singularity */
  TF_RNG_SAMPLE = 4,  /* sampled initial states and parameters (sampling.h) */
  TF_RNG_LHS = 5,     /* Latin hypercube strata: key (seed, dimension), not (seed, member) */
  TF_RNG_TEST = 99    /* reserved for tests */
};

typedef struct tf_rng_key {
  uint64_t seed;
  uint64_t member;
} tf_rng_key;

/* Raw Philox4x64-10 block: out = philox(key, {c0, c1, c2, c3}). */
void tf_rng_philox(const uint64_t key[2], const uint64_t ctr[4], uint64_t out[4]);

/* n uniform variates in the open interval (0, 1), 53-bit resolution. */
void tf_rng_uniforms(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n, double *out);
double tf_rng_uniform(tf_rng_key key, uint64_t counter, uint32_t purpose);

/* n standard normal variates (Box–Muller on the uniforms above). */
void tf_rng_normals(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n, double *out);

/* The normals of `counters` consecutive counters at once: out[s * n + i] is, bit for bit,
 * value i of tf_rng_normals(key, counter + s, purpose, n).  Drawing many blocks together lets
 * the Philox rounds run in vector registers. */
void tf_rng_normals_run(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n,
                        size_t counters, double *out);

/* The same, with integrator.normals: fast — Box–Muller on the same Philox words and by the
 * same formula, z = sqrt(-2 log u1) (cos, sin)(2 pi u2), but with the log and sin/cos of
 * vmath.h, evaluated over the whole batch in vector registers: each value is within a few
 * units in the last place of tf_rng_normals_run's, the same bits on every machine, and out
 * is, bit for bit, the concatenation of the per-counter calls. */
void tf_rng_normals_run_fast(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n,
                             size_t counters, double *out);

/* One exponential variate with rate 1. */
double tf_rng_exponential(tf_rng_key key, uint64_t counter, uint32_t purpose);

#endif
