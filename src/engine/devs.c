/* devs.c — see devs.h for the model, the storage and why results are rank-independent.
 *
 * Work is organised as tiles: one block of TF_DEVS_BLOCK elements (x and m, 16 KiB, stay in
 * L1) advanced by up to TILE_STEPS steps before the next block is touched; each step of a
 * tile leaves one partial sum of the block's x, and the partials of all blocks are added in
 * block order once per tile.  The logistic element has three tiles chosen at run time:
 * AVX-512 (eight elements per vector, Philox for eight blocks at once, byte-compare masks),
 * AVX2 (four per vector) and portable C (the reference, eight interleaved partial sums);
 * they do the same IEEE operations in the same order (no FP contraction in ISO C mode), so
 * every tile and the generic path give the same bits.  Run time (not the build flags)
 * picks the tile, so one binary runs everywhere; TWOFOLD_DEVS_ISA=avx2|portable restricts
 * it for tests and benchmarks. */
#include "devs.h"

#include <Random123/philox.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "observable.h"
#include "philox_simd.h"
#include "poincare.h"
#include "rng.h"
#include "routes.h"

enum {
  TILE_STEPS = 64, /* steps per tile: block partial sums gathered once per tile */
  RENORM = 16,     /* steps between frexp renormalisations (|f'| <= 4: no over/underflow) */
  LANES = 8        /* interleaved partial sums within a block (one AVX-512 vector) */
};

/* The AVX-512 tile is compiled for that target whatever the build's flags and chosen at
 * run time when the processor has it (where philox_simd.h has the vector rounds). */
#ifdef TF_PHILOX_SIMD
#define DEVS_AVX512 1
#define DEVS_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define DEVS_TARGET_AVX2 __attribute__((target("avx2")))
#endif

struct tf_devs {
  const tf_kernel *kernel;
  double *params;
  int (*map)(const double *x, const double *p, double *out);
  void (*jac)(const double *x, const double *p, double *j);
  int refused; /* the generic tile's first refusal by the element map (0: none) */
  const double *element_params;
  uint64_t n, first, count, steps_done;
  uint64_t block0, nblocks, nblocks_all; /* this rank's blocks [block0, block0 + nblocks) */
  double q, tie_fraction, mu;
  unsigned q_byte; /* floor(256 q), 0..256 */
  bool fast, avx512, avx2;
  philox4x64_key_t key;
  double *x, *m;
  int64_t *e;       /* 64 bits: no overflow however long the run */
  double *partials; /* nblocks x TILE_STEPS */
  double *gathered; /* rank 0: nblocks_all x TILE_STEPS */
  int *counts, *displs;
  MPI_Comm comm;
  int rank, size;
};

/* A tie with q's first byte can update only if 256 q is not an integer: the tie's draw is in
 * (0, 1), never below a zero remainder, so then it need not be made. */
static inline bool ties_drawn(const tf_devs *d) {
  return d->tie_fraction > 0;
}

static uint64_t round_param(double v) {
  return v <= 0 ? 0 : (uint64_t)llround(v);
}

/* The model declares the element it has a tile for (tf_devs_ops.tile): the engine knows
 * elements, never models. */
bool tf_devs_model_vectorised(const tf_kernel *k) {
  return k->kind == TF_MODEL_DEVS && k->devs->tile == TF_DEVS_TILE_LOGISTIC;
}

uint64_t tf_devs_param_n(const tf_kernel *k, const double *p) {
  return round_param(p[k->devs->n]);
}
uint64_t tf_devs_param_steps(const tf_kernel *k, const double *p) {
  return round_param(p[k->devs->steps]);
}
uint64_t tf_devs_param_transient(const tf_kernel *k, const double *p) {
  return round_param(p[k->devs->transient]);
}

static void block_range(uint64_t nblocks_all, int size, int rank, uint64_t *b0, uint64_t *nb) {
  const uint64_t lo = nblocks_all * (uint64_t)rank / (uint64_t)size;
  const uint64_t hi = nblocks_all * (uint64_t)(rank + 1) / (uint64_t)size;
  *b0 = lo, *nb = hi - lo;
}

static double open_unit(uint64_t bits) {
  return ((double)(bits >> 11) + 0.5) * 0x1.0p-53;
}

/* x^k(0) uniform on the model's interval (devs.initial_min, initial_max): stream (seed, member),
 * counter 0, purpose TF_RNG_INITIAL, index k (four per Philox block, as tf_rng_uniforms numbers
 * them). */
static void initial_states(tf_devs *d) {
  const tf_devs_ops *L = d->kernel->devs;
  const double lo = L->initial_min, width = L->initial_max - L->initial_min;
  for (uint64_t i = 0; i < d->count;) {
    const uint64_t k = d->first + i;
    philox4x64_ctr_t c = {{0, TF_RNG_INITIAL, k / 4, 0}};
    philox4x64_ctr_t r = philox4x64(c, d->key);
    for (uint64_t w = k % 4; w < 4 && i < d->count; w++, i++)
      d->x[i] = lo + width * open_unit(r.v[w]);
  }
}

void tf_devs_reset_tangent(tf_devs *d) {
  for (uint64_t i = 0; i < d->count; i++) d->m[i] = 1.0, d->e[i] = 0;
}

tf_devs *tf_devs_create(const tf_kernel *k, const double *p, uint64_t seed, uint64_t member,
                        bool generic, MPI_Comm comm, tf_error *err) {
  if (k->kind != TF_MODEL_DEVS)
    return tf_fail_code(err, TF_ERR_INTERNAL, "model '%s' is not a DEVS", k->name), NULL;
  const tf_devs_ops *L = k->devs;
  const bool fast = tf_devs_model_vectorised(k);
  tf_devs *d = calloc(1, sizeof *d);
  if (!d) return tf_fail(err, "out of memory"), NULL;
  d->kernel = k;
  d->comm = comm;
  MPI_Comm_rank(comm, &d->rank);
  MPI_Comm_size(comm, &d->size);
  d->params = malloc(k->nparams * sizeof *d->params);
  if (!d->params) return tf_devs_destroy(d), tf_fail(err, "out of memory"), NULL;
  memcpy(d->params, p, k->nparams * sizeof *p);
  d->map = tf_model_map(k), d->jac = tf_model_map_jacobian(k);
  d->element_params = d->params;
  d->n = tf_devs_param_n(k, p);
  d->q = p[L->q];
  d->q_byte = (unsigned)floor(256.0 * d->q);
  d->tie_fraction = 256.0 * d->q - (double)d->q_byte;
  d->fast = !generic && fast;
#ifdef DEVS_AVX512
  /* TWOFOLD_DEVS_ISA=avx2 or =portable restricts the choice (tests, benchmarks) */
  const char *isa = getenv("TWOFOLD_DEVS_ISA");
  const bool any = !isa || strcmp(isa, "auto") == 0;
  d->avx512 = d->fast && any && __builtin_cpu_supports("avx512f") &&
              __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  d->avx2 =
      d->fast && !d->avx512 && (any || strcmp(isa, "avx2") == 0) && __builtin_cpu_supports("avx2");
#endif
  d->mu = fast ? p[L->tile_param] : 0.0;
  d->key = (philox4x64_key_t){{seed, member}};
  d->nblocks_all = (d->n + TF_DEVS_BLOCK - 1) / TF_DEVS_BLOCK;
  block_range(d->nblocks_all, d->size, d->rank, &d->block0, &d->nblocks);
  d->first = d->block0 * TF_DEVS_BLOCK;
  const uint64_t end = (d->block0 + d->nblocks) * TF_DEVS_BLOCK;
  d->count = d->nblocks ? (end < d->n ? end : d->n) - d->first : 0;
  const size_t cnt = d->count ? d->count : 1, nbl = d->nblocks ? d->nblocks : 1;
  d->x = malloc(cnt * sizeof *d->x);
  d->m = malloc(cnt * sizeof *d->m);
  d->e = malloc(cnt * sizeof *d->e);
  d->partials = malloc(nbl * TILE_STEPS * sizeof *d->partials);
  if (d->rank == 0) {
    d->gathered = malloc(d->nblocks_all * TILE_STEPS * sizeof *d->gathered);
    d->counts = malloc((size_t)d->size * sizeof *d->counts);
    d->displs = malloc((size_t)d->size * sizeof *d->displs);
  }
  if (!d->x || !d->m || !d->e || !d->partials ||
      (d->rank == 0 && (!d->gathered || !d->counts || !d->displs))) {
    tf_devs_destroy(d);
    return tf_fail(err, "out of memory for %llu DEVS elements (24 bytes each) on this rank",
                   (unsigned long long)cnt),
           NULL;
  }
  if (d->nblocks_all * TILE_STEPS * 4 > (uint64_t)INT_MAX) {
    const unsigned long long n = d->n;
    tf_devs_destroy(d);
    return tf_fail_code(err, TF_ERR_CONFIG, "N = %llu is too large for one ensemble", n), NULL;
  }
  initial_states(d);
  tf_devs_reset_tangent(d);
  return d;
}

void tf_devs_destroy(tf_devs *d) {
  if (!d) return;
  free(d->params), free(d->x), free(d->m), free(d->e), free(d->partials), free(d->gathered);
  free(d->counts), free(d->displs);
  free(d);
}

uint64_t tf_devs_size(const tf_devs *d) {
  return d->n;
}
uint64_t tf_devs_local(const tf_devs *d) {
  return d->count;
}
uint64_t tf_devs_step(const tf_devs *d) {
  return d->steps_done;
}
double tf_devs_q(const tf_devs *d) {
  return d->q;
}
bool tf_devs_vectorised(const tf_devs *d) {
  return d->fast;
}
uint64_t tf_devs_states(const tf_devs *d, const double **x) {
  *x = d->x;
  return d->first;
}
uint64_t tf_devs_state(tf_devs *d, double **x, double **m, int64_t **e) {
  *x = d->x, *m = d->m, *e = d->e;
  return d->first;
}
void tf_devs_set_step(tf_devs *d, uint64_t step) {
  d->steps_done = step;
}

/* Which elements of the block starting at global element k0 follow the map at `step`:
 * flag = 1 iff u < q, u's first byte from the update stream and, on a tie with q's first
 * byte, the remaining bits from the tie stream. */
static inline void update_flags(const tf_devs *d, uint64_t step, uint64_t k0, size_t len,
                                uint8_t *restrict flags) {
  uint8_t bytes[TF_DEVS_BLOCK];
  for (size_t c = 0; c * 32 < len; c++) {
    const philox4x64_ctr_t ctr = {{step, TF_DEVS_RNG_UPDATE, k0 / 32 + c, 0}};
    const philox4x64_ctr_t r = philox4x64(ctr, d->key);
    for (int w = 0; w < 4; w++)
      for (int b = 0; b < 8; b++)
        bytes[32 * c + 8 * (size_t)w + (size_t)b] = (uint8_t)(r.v[w] >> (8 * b));
  }
  const unsigned t = d->q_byte;
  unsigned ties = 0;
  for (size_t j = 0; j < len; j++) {
    flags[j] = bytes[j] < t;
    ties += bytes[j] == t;
  }
  if (!ties || !ties_drawn(d)) return;
  for (size_t j = 0; j < len; j++)
    if (bytes[j] == t) {
      const philox4x64_ctr_t ctr = {{step, TF_DEVS_RNG_TIE, k0 + j, 0}};
      flags[j] = open_unit(philox4x64(ctr, d->key).v[0]) < d->tie_fraction;
    }
}

static inline double lane_total(const double *acc) {
  return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

/* m_k 2^e_k unchanged, m_k brought to [0.5, 1) (exact: a power-of-two scaling). */
static inline void renormalise(double *restrict m, int64_t *restrict e, size_t len) {
  for (size_t j = 0; j < len; j++) {
    int ex;
    m[j] = frexp(m[j], &ex);
    e[j] += ex;
  }
}

/* One tile of the logistic element: block at offset `off` (len elements), T steps. */
static void tile_logistic(tf_devs *d, size_t off, size_t len, uint64_t step0, int T,
                          double *restrict sums) {
  double *restrict x = d->x + off, *restrict m = d->m + off;
  const double mu = d->mu;
  uint8_t flags[TF_DEVS_BLOCK];
  const size_t len8 = len / LANES * LANES;
  for (int s = 0; s < T; s++) {
    update_flags(d, step0 + (uint64_t)s, d->first + off, len, flags);
    double acc[LANES] = {0};
    for (size_t j = 0; j < len8; j += LANES)
      for (int l = 0; l < LANES; l++) {
        const double xo = x[j + l], mo = m[j + l];
        const double fx = mu * xo * (1.0 - xo), df = fabs(mu * (1.0 - 2.0 * xo));
        const bool u = flags[j + l];
        const double xn = u ? fx : xo;
        x[j + l] = xn;
        m[j + l] = u ? mo * df : mo;
        acc[l] += xn;
      }
    for (size_t j = len8; j < len; j++) {
      const double xo = x[j];
      const double fx = mu * xo * (1.0 - xo), df = fabs(mu * (1.0 - 2.0 * xo));
      if (flags[j]) x[j] = fx, m[j] *= df;
      acc[j - len8] += x[j];
    }
    sums[s] = lane_total(acc);
    if (s % RENORM == RENORM - 1) renormalise(m, d->e + off, len);
  }
  renormalise(m, d->e + off, len);
}

#ifdef DEVS_AVX512
/* The same tile with AVX-512: eight elements per vector, the update decisions of 64
 * elements as one byte comparison mask, masked multiply for the tangent, getexp/getmant for
 * frexp.  Operation for operation the scalar tile's arithmetic, so the same bits. */
DEVS_TARGET_AVX512 static void renormalise_avx512(double *restrict m, int64_t *restrict e,
                                                  size_t len) {
  const __m512d zero = _mm512_setzero_pd();
  for (size_t j = 0; j < len; j += 8) {
    const __mmask8 valid = len - j >= 8 ? 0xff : (__mmask8)((1u << (len - j)) - 1);
    const __m512d v = _mm512_maskz_loadu_pd(valid, m + j);
    const __mmask8 nz = _mm512_mask_cmp_pd_mask(valid, v, zero, _CMP_NEQ_OQ);
    /* frexp: v = mant * 2^(getexp + 1) with mant in [0.5, 1) */
    const __m512d mant = _mm512_getmant_pd(v, _MM_MANT_NORM_p5_1, _MM_MANT_SIGN_src);
    const __m512i ex =
        _mm512_cvttpd_epi64(_mm512_getexp_pd(_mm512_mask_blend_pd(nz, _mm512_set1_pd(-1.0), v)));
    const __m512i one = _mm512_set1_epi64(1);
    const __m512i eo = _mm512_maskz_loadu_epi64(valid, e + j);
    _mm512_mask_storeu_epi64(e + j, nz, _mm512_add_epi64(eo, _mm512_add_epi64(ex, one)));
    _mm512_mask_storeu_pd(m + j, nz, mant);
  }
}

/* Eight Philox4x64-10 blocks at once, counters (c0, c1, c2 + lane, 0): Random123's rounds
 * lane by lane (philox_simd.h), written as block lane = 32 bytes at out + 32 lane. */
DEVS_TARGET_AVX512 static void philox8_avx512(philox4x64_key_t key, uint64_t c0, uint64_t c1,
                                              uint64_t c2, uint8_t *out) {
  tf_philox_v8 x[4] = {(tf_philox_v8){0} + c0, (tf_philox_v8){0} + c1,
                       (tf_philox_v8){0, 1, 2, 3, 4, 5, 6, 7} + c2, (tf_philox_v8){0}};
  tf_philox_rounds8(key.v, x);
  const __m512i x0 = (__m512i)x[0], x1 = (__m512i)x[1], x2 = (__m512i)x[2], x3 = (__m512i)x[3];
  /* transpose: block l is (x0[l], x1[l], x2[l], x3[l]); i0 picks (a0 a1 b0 b1 a4 a5 b4 b5),
   * i1 (a2 a3 b2 b3 a6 a7 b6 b7) */
  const __m512i i0 = _mm512_set_epi64(8 + 5, 8 + 4, 5, 4, 8 + 1, 8 + 0, 1, 0);
  const __m512i i1 = _mm512_set_epi64(8 + 7, 8 + 6, 7, 6, 8 + 3, 8 + 2, 3, 2);
  /* per 128-bit lane: a_lo = (x0_0 x1_0 | x0_2 x1_2 | x0_4 x1_4 | x0_6 x1_6), a_hi the odd
   * blocks, b_* the same for (x2, x3); then each permute gathers two whole blocks */
  const __m512i a_lo = _mm512_unpacklo_epi64(x0, x1), a_hi = _mm512_unpackhi_epi64(x0, x1);
  const __m512i b_lo = _mm512_unpacklo_epi64(x2, x3), b_hi = _mm512_unpackhi_epi64(x2, x3);
  const __m512i e04 = _mm512_permutex2var_epi64(a_lo, i0, b_lo); /* blocks 0 and 4 */
  const __m512i e26 = _mm512_permutex2var_epi64(a_lo, i1, b_lo); /* blocks 2 and 6 */
  const __m512i o15 = _mm512_permutex2var_epi64(a_hi, i0, b_hi); /* blocks 1 and 5 */
  const __m512i o37 = _mm512_permutex2var_epi64(a_hi, i1, b_hi); /* blocks 3 and 7 */
  _mm256_storeu_si256((__m256i *)(out + 0 * 32), _mm512_castsi512_si256(e04));
  _mm256_storeu_si256((__m256i *)(out + 4 * 32), _mm512_extracti64x4_epi64(e04, 1));
  _mm256_storeu_si256((__m256i *)(out + 2 * 32), _mm512_castsi512_si256(e26));
  _mm256_storeu_si256((__m256i *)(out + 6 * 32), _mm512_extracti64x4_epi64(e26, 1));
  _mm256_storeu_si256((__m256i *)(out + 1 * 32), _mm512_castsi512_si256(o15));
  _mm256_storeu_si256((__m256i *)(out + 5 * 32), _mm512_extracti64x4_epi64(o15, 1));
  _mm256_storeu_si256((__m256i *)(out + 3 * 32), _mm512_castsi512_si256(o37));
  _mm256_storeu_si256((__m256i *)(out + 7 * 32), _mm512_extracti64x4_epi64(o37, 1));
}

DEVS_TARGET_AVX512 static void tile_logistic_avx512(tf_devs *d, size_t off, size_t len,
                                                    uint64_t step0, int T, double *restrict sums) {
  double *restrict x = d->x + off, *restrict m = d->m + off;
  const __m512d mu = _mm512_set1_pd(d->mu), one = _mm512_set1_pd(1.0), two = _mm512_set1_pd(2.0);
  const __m512d sign = _mm512_set1_pd(-0.0);
  _Alignas(64) uint8_t bytes[TF_DEVS_BLOCK + 256]; /* whole groups of 8 blocks */
  const unsigned t = d->q_byte;
  const __m512i tv = _mm512_set1_epi8((char)(t > 255 ? 255 : t));
  const uint64_t k0 = d->first + off;
  for (int s = 0; s < T; s++) {
    const uint64_t step = step0 + (uint64_t)s;
    /* little-endian: byte b of word w of block c is element 32c + 8w + b */
    for (size_t c = 0; c * 32 < len; c += 8)
      philox8_avx512(d->key, step, TF_DEVS_RNG_UPDATE, k0 / 32 + c, bytes + 32 * c);
    __m512d acc = _mm512_setzero_pd();
    for (size_t j0 = 0; j0 < len; j0 += 64) {
      const size_t n = len - j0 < 64 ? len - j0 : 64;
      const __mmask64 valid64 = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
      const __m512i b = _mm512_maskz_loadu_epi8(valid64, bytes + j0);
      __mmask64 upd = t > 255 ? valid64 : _mm512_mask_cmplt_epu8_mask(valid64, b, tv);
      __mmask64 tie = t > 255 || !ties_drawn(d) ? 0 : _mm512_mask_cmpeq_epu8_mask(valid64, b, tv);
      while (tie) {
        const int l = __builtin_ctzll(tie);
        tie &= tie - 1;
        const philox4x64_ctr_t ctr = {{step, TF_DEVS_RNG_TIE, k0 + j0 + (size_t)l, 0}};
        if (open_unit(philox4x64(ctr, d->key).v[0]) < d->tie_fraction) upd |= (__mmask64)1 << l;
      }
      for (size_t g = 0; g * 8 < n; g++) {
        const size_t j = j0 + 8 * g;
        const __mmask8 valid = (__mmask8)(valid64 >> (8 * g));
        const __mmask8 u = (__mmask8)(upd >> (8 * g));
        const __m512d xo = _mm512_maskz_loadu_pd(valid, x + j);
        const __m512d mo = _mm512_maskz_loadu_pd(valid, m + j);
        const __m512d fx = _mm512_mul_pd(_mm512_mul_pd(mu, xo), _mm512_sub_pd(one, xo));
        const __m512d df =
            _mm512_andnot_pd(sign, _mm512_mul_pd(mu, _mm512_sub_pd(one, _mm512_mul_pd(two, xo))));
        const __m512d xn = _mm512_mask_blend_pd(u, xo, fx);
        _mm512_mask_storeu_pd(x + j, valid, xn);
        _mm512_mask_storeu_pd(m + j, u, _mm512_mul_pd(mo, df));
        acc = _mm512_mask_add_pd(acc, valid, acc, xn);
      }
    }
    _Alignas(64) double lanes[LANES];
    _mm512_store_pd(lanes, acc);
    sums[s] = lane_total(lanes);
    if (s % RENORM == RENORM - 1) renormalise_avx512(m, d->e + off, len);
  }
  renormalise_avx512(m, d->e + off, len);
}
#endif

#ifdef DEVS_AVX512
/* The tile with AVX2 (four elements per vector, two vectors make the scalar tile's eight
 * partial sums), for processors without AVX-512; Philox for four blocks at once. */
DEVS_TARGET_AVX2 static void philox4_avx2(philox4x64_key_t key, uint64_t c0, uint64_t c1,
                                          uint64_t c2, uint8_t *out) {
  tf_philox_v4 x[4] = {(tf_philox_v4){0} + c0, (tf_philox_v4){0} + c1,
                       (tf_philox_v4){0, 1, 2, 3} + c2, (tf_philox_v4){0}};
  tf_philox_rounds4(key.v, x);
  const __m256i x0 = (__m256i)x[0], x1 = (__m256i)x[1], x2 = (__m256i)x[2], x3 = (__m256i)x[3];
  /* 4 x 4 transpose of 64-bit words: block l = (x0[l], x1[l], x2[l], x3[l]) */
  const __m256i a_lo = _mm256_unpacklo_epi64(x0, x1), a_hi = _mm256_unpackhi_epi64(x0, x1);
  const __m256i b_lo = _mm256_unpacklo_epi64(x2, x3), b_hi = _mm256_unpackhi_epi64(x2, x3);
  _mm256_storeu_si256((__m256i *)(out + 0 * 32), _mm256_permute2x128_si256(a_lo, b_lo, 0x20));
  _mm256_storeu_si256((__m256i *)(out + 1 * 32), _mm256_permute2x128_si256(a_hi, b_hi, 0x20));
  _mm256_storeu_si256((__m256i *)(out + 2 * 32), _mm256_permute2x128_si256(a_lo, b_lo, 0x31));
  _mm256_storeu_si256((__m256i *)(out + 3 * 32), _mm256_permute2x128_si256(a_hi, b_hi, 0x31));
}

DEVS_TARGET_AVX2 static void tile_logistic_avx2(tf_devs *d, size_t off, size_t len, uint64_t step0,
                                                int T, double *restrict sums) {
  double *restrict x = d->x + off, *restrict m = d->m + off;
  const double mu_s = d->mu;
  const __m256d mu = _mm256_set1_pd(mu_s), one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0);
  const __m256d sign = _mm256_set1_pd(-0.0);
  _Alignas(32) uint8_t bytes[TF_DEVS_BLOCK + 128]; /* whole groups of 4 blocks */
  _Alignas(32) uint8_t flags[TF_DEVS_BLOCK + 128];
  const unsigned t = d->q_byte;
  const __m256i tv = _mm256_set1_epi8((char)(t > 255 ? 255 : t));
  const uint64_t k0 = d->first + off;
  const size_t len8 = len / LANES * LANES;
  for (int s = 0; s < T; s++) {
    const uint64_t step = step0 + (uint64_t)s;
    for (size_t c = 0; c * 32 < len; c += 4)
      philox4_avx2(d->key, step, TF_DEVS_RNG_UPDATE, k0 / 32 + c, bytes + 32 * c);
    /* flags: 0xff where byte < t (unsigned: max(b, t) != b), ties settled one by one */
    for (size_t j0 = 0; j0 < len; j0 += 32) {
      const __m256i b = _mm256_load_si256((const __m256i *)(bytes + j0));
      __m256i lt =
          _mm256_xor_si256(_mm256_cmpeq_epi8(_mm256_max_epu8(b, tv), b), _mm256_set1_epi8(-1));
      if (t > 255) lt = _mm256_set1_epi8(-1);
      _mm256_store_si256((__m256i *)(flags + j0), lt);
      uint32_t tie =
          t > 255 || !ties_drawn(d) ? 0 : (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, tv));
      if (len - j0 < 32) tie &= (1u << (len - j0)) - 1;
      while (tie) {
        const int l = __builtin_ctz(tie);
        tie &= tie - 1;
        const philox4x64_ctr_t ctr = {{step, TF_DEVS_RNG_TIE, k0 + j0 + (size_t)l, 0}};
        flags[j0 + (size_t)l] =
            open_unit(philox4x64(ctr, d->key).v[0]) < d->tie_fraction ? 0xff : 0;
      }
    }
    __m256d acc_lo = _mm256_setzero_pd(), acc_hi = _mm256_setzero_pd();
    for (size_t j = 0; j < len8; j += 4) {
      int32_t f4;
      memcpy(&f4, flags + j, 4);
      const __m256d u = _mm256_castsi256_pd(_mm256_cvtepi8_epi64(_mm_cvtsi32_si128(f4)));
      const __m256d xo = _mm256_loadu_pd(x + j), mo = _mm256_loadu_pd(m + j);
      const __m256d fx = _mm256_mul_pd(_mm256_mul_pd(mu, xo), _mm256_sub_pd(one, xo));
      const __m256d df =
          _mm256_andnot_pd(sign, _mm256_mul_pd(mu, _mm256_sub_pd(one, _mm256_mul_pd(two, xo))));
      const __m256d xn = _mm256_blendv_pd(xo, fx, u);
      _mm256_storeu_pd(x + j, xn);
      _mm256_storeu_pd(m + j, _mm256_blendv_pd(mo, _mm256_mul_pd(mo, df), u));
      if (j % LANES == 0)
        acc_lo = _mm256_add_pd(acc_lo, xn);
      else
        acc_hi = _mm256_add_pd(acc_hi, xn);
    }
    _Alignas(32) double acc[LANES];
    _mm256_store_pd(acc, acc_lo), _mm256_store_pd(acc + 4, acc_hi);
    for (size_t j = len8; j < len; j++) {
      const double xo = x[j];
      const double fx = mu_s * xo * (1.0 - xo), df = fabs(mu_s * (1.0 - 2.0 * xo));
      if (flags[j]) x[j] = fx, m[j] *= df;
      acc[j - len8] += x[j];
    }
    sums[s] = lane_total(acc);
    if (s % RENORM == RENORM - 1) renormalise(m, d->e + off, len);
  }
  renormalise(m, d->e + off, len);
}
#endif

/* Any 1-D element map through the kernel's function pointers, renormalised every update
 * (a generic map's |f'| has no bound). */
static void tile_generic(tf_devs *d, size_t off, size_t len, uint64_t step0, int T,
                         double *restrict sums) {
  double *x = d->x + off, *m = d->m + off;
  int64_t *e = d->e + off;
  uint8_t flags[TF_DEVS_BLOCK];
  for (int s = 0; s < T; s++) {
    update_flags(d, step0 + (uint64_t)s, d->first + off, len, flags);
    double acc[LANES] = {0};
    for (size_t j = 0; j < len; j++) {
      if (flags[j]) {
        double y, df;
        int ex;
        const int rc = d->map(&x[j], d->element_params, &y);
        if (rc && !d->refused) d->refused = rc; /* said after the step's collectives */
        d->jac(&x[j], d->element_params, &df);
        x[j] = y;
        m[j] = frexp(m[j] * fabs(df), &ex);
        e[j] += ex;
      }
      acc[j % LANES] += x[j];
    }
    sums[s] = lane_total(acc);
  }
}

/* A refusal of the element map on any rank fails the run on every rank, with one code agreed
 * on: a fatal one if any rank has one. */
static int refusal(tf_devs *d, tf_error *err) {
  int mine[2] = {d->refused < 0 ? d->refused : 0, d->refused > 0 ? -d->refused : 0}, all[2];
  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, d->comm);
  const int code = all[0] ? all[0] : -all[1];
  if (!code) return 0;
  char why[512];
  tf_kernel_failure_message(d->kernel, code, why, sizeof why);
  return tf_fail(err, "model '%s' failed: %s", d->kernel->name, why);
}

int tf_devs_advance(tf_devs *d, uint64_t steps, double *X, tf_error *err) {
  for (uint64_t done = 0; done < steps;) {
    const int T = (int)(steps - done < TILE_STEPS ? steps - done : TILE_STEPS);
    for (uint64_t b = 0; b < d->nblocks; b++) {
      const size_t off = (size_t)(b * TF_DEVS_BLOCK);
      const size_t len = (size_t)(d->count - off < TF_DEVS_BLOCK ? d->count - off : TF_DEVS_BLOCK);
      double *sums = d->partials + b * TILE_STEPS;
#ifdef DEVS_AVX512
      if (d->avx512)
        tile_logistic_avx512(d, off, len, d->steps_done, T, sums);
      else if (d->avx2)
        tile_logistic_avx2(d, off, len, d->steps_done, T, sums);
      else
#endif
          if (d->fast)
        tile_logistic(d, off, len, d->steps_done, T, sums);
      else
        tile_generic(d, off, len, d->steps_done, T, sums);
    }
    if (X) {
      /* block partials to rank 0, added there in block order (rank-independent bits) */
      if (d->rank == 0)
        for (int r = 0; r < d->size; r++) {
          uint64_t b0, nb;
          block_range(d->nblocks_all, d->size, r, &b0, &nb);
          d->counts[r] = (int)(nb * TILE_STEPS), d->displs[r] = (int)(b0 * TILE_STEPS);
        }
      if (MPI_Gatherv(d->partials, (int)(d->nblocks * TILE_STEPS), MPI_DOUBLE, d->gathered,
                      d->counts, d->displs, MPI_DOUBLE, 0, d->comm) != MPI_SUCCESS)
        return tf_fail(err, "MPI_Gatherv of the DEVS block sums failed");
      if (d->rank == 0)
        for (int s = 0; s < T; s++) {
          double total = 0;
          for (uint64_t b = 0; b < d->nblocks_all; b++) total += d->gathered[b * TILE_STEPS + s];
          X[done + (uint64_t)s] = total;
        }
      MPI_Bcast(X + done, T, MPI_DOUBLE, 0, d->comm);
    }
    d->steps_done += (uint64_t)T;
    done += (uint64_t)T;
  }
  return d->fast ? 0 : refusal(d, err);
}

void tf_devs_tangent(tf_devs *d, double *log_norm, double *mean_log) {
  /* per block: max exponent E, sum of (m 2^(e - E))^2, sum of ln|v_k| and their count */
  enum { W = 4 };
  const size_t nbl = d->nblocks ? d->nblocks : 1;
  double *mine = calloc(nbl * W, sizeof *mine), *all = NULL;
  int *counts = NULL, *displs = NULL;
  for (uint64_t b = 0; b < d->nblocks; b++) {
    const uint64_t off = b * TF_DEVS_BLOCK;
    const uint64_t len = d->count - off < TF_DEVS_BLOCK ? d->count - off : TF_DEVS_BLOCK;
    int64_t E = INT64_MIN;
    for (uint64_t j = off; j < off + len; j++)
      if (d->m[j] > 0 && d->e[j] > E) E = d->e[j];
    double S = 0, Lsum = 0, cnt = 0;
    for (uint64_t j = off; j < off + len; j++) {
      if (!(d->m[j] > 0)) continue;
      const int64_t shift = d->e[j] - E; /* <= 0; below -1100 the square is 0 anyway */
      const double v = ldexp(d->m[j], shift < -1100 ? -1100 : (int)shift);
      S += v * v;
      Lsum += log(d->m[j]) + (double)d->e[j] * M_LN2;
      cnt += 1;
    }
    double *row = mine + b * W;
    row[0] = E == INT64_MIN ? -INFINITY : (double)E, row[1] = S, row[2] = Lsum, row[3] = cnt;
  }
  if (d->rank == 0) {
    all = malloc(d->nblocks_all * W * sizeof *all);
    counts = malloc((size_t)d->size * sizeof *counts);
    displs = malloc((size_t)d->size * sizeof *displs);
    for (int r = 0; r < d->size; r++) {
      uint64_t b0, nb;
      block_range(d->nblocks_all, d->size, r, &b0, &nb);
      counts[r] = (int)(nb * W), displs[r] = (int)(b0 * W);
    }
  }
  MPI_Gatherv(mine, (int)(d->nblocks * W), MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, d->comm);
  double out[2] = {-INFINITY, NAN};
  if (d->rank == 0) {
    double E = -INFINITY, S = 0, Lsum = 0, cnt = 0;
    for (uint64_t b = 0; b < d->nblocks_all; b++)
      if (all[b * W] > E) E = all[b * W];
    for (uint64_t b = 0; b < d->nblocks_all; b++) {
      const double *row = all + b * W;
      if (row[0] > -INFINITY)
        S += ldexp(row[1], row[0] - E < -1100 ? -2200 : 2 * (int)(row[0] - E));
      Lsum += row[2], cnt += row[3];
    }
    if (E > -INFINITY) out[0] = 0.5 * log(S) + E * M_LN2 - 0.5 * log((double)d->n);
    out[1] = cnt > 0 ? Lsum / cnt : -INFINITY;
  }
  MPI_Bcast(out, 2, MPI_DOUBLE, 0, d->comm);
  *log_norm = out[0], *mean_log = out[1];
  free(mine), free(all), free(counts), free(displs);
}

int tf_devs_refuse_events(tf_config *cfg, const tf_kernel *k, const char *job, tf_error *err) {
  if (!tf_config_has(cfg, "poincare")) return 0;
  return tf_config_fail_key(cfg, "poincare", err,
                            "the %s job on a DEVS model ('%s') keeps no signal to find events "
                            "on; events of the user's own are found on xbar = X/N by the jobs "
                            "lyapunov and bifurcation (docs/CONFIG.md); remove the section",
                            job, k->name);
}

struct tf_devs_events {
  tf_poincare_spec spec;
  tf_kernel signal; /* k seen as a 1-D map of the state xbar: the names g may use */
  tf_observable *g; /* poincare.function; NULL: a level */
};

/* The keys a DEVS cannot honour, refused before the section is read as a map's. */
static int refuse_devs_event_keys(tf_config *cfg, const tf_kernel *k, tf_error *err) {
  const char *action = "log";
  if (tf_config_has(cfg, "poincare.action") &&
      tf_config_get_string(cfg, "poincare.action", NULL, NULL, &action, err))
    return -1;
  if (strcmp(action, "reset") == 0)
    return tf_config_fail_key(cfg, "poincare.action", err,
                              "reset is not defined for a DEVS model ('%s'): its state is the N "
                              "elements x^1 .. x^N, and xbar = X/N is an output measured from "
                              "them, which no reset of xbar can set; write 'log'",
                              k->name);
  if (strcmp(action, "stop") == 0)
    return tf_config_fail_key(cfg, "poincare.action", err,
                              "stop is not defined for a DEVS model ('%s'): its jobs measure a "
                              "series of model.params.steps steps (lambda_1 over every block, a "
                              "diagram's samples), which an event may not cut short; write "
                              "'log' (the events are recorded and the series runs on)",
                              k->name);
  const char *event = "level";
  if (tf_config_has(cfg, "poincare.event") &&
      tf_config_get_string(cfg, "poincare.event", NULL, NULL, &event, err))
    return -1;
  if (strcmp(event, "extremum") == 0)
    return tf_config_fail_key(cfg, "poincare.event", err,
                              "extremum needs the derivative along a continuous orbit, and the "
                              "signal xbar of the DEVS '%s' has only its values after each "
                              "step; write level or function (an event is a sign change of the "
                              "function between consecutive steps)",
                              k->name);
  if (tf_config_has(cfg, "poincare.tol"))
    return tf_config_fail_key(cfg, "poincare.tol", err,
                              "a DEVS records its events without the early stop at a period "
                              "(its updates are random); remove the key");
  return 0;
}

int tf_devs_events_from_config(tf_devs_events **out, tf_config *cfg, const tf_kernel *k,
                               tf_error *err) {
  *out = NULL;
  if (!tf_config_has(cfg, "poincare")) return 0;
  if (refuse_devs_event_keys(cfg, k, err)) return -1;
  tf_devs_events *ev = calloc(1, sizeof *ev);
  if (!ev) return tf_fail(err, "out of memory");
  static const char *const signal_names[] = {"xbar"};
  ev->signal = *k;
  ev->signal.kind = TF_MODEL_MAP, ev->signal.dim = 1, ev->signal.state_names = signal_names;
  ev->signal.noutputs = 0, ev->signal.output_names = NULL, ev->signal.outputs = NULL;
  const tf_ode_options ode = tf_ode_default_options();
  tf_error why;
  if (tf_poincare_from_config(&ev->spec, cfg, &ev->signal, &ode, err) ||
      (!ev->spec.record && tf_config_fail_key(cfg, "poincare", err,
                                              "the section needs poincare.event (level or "
                                              "function of xbar)")))
    return tf_devs_events_destroy(ev), -1;
  ev->spec.action = TF_POINCARE_LOG;
  if (ev->spec.impact.section == TF_SECTION_FUNCTION &&
      !(ev->g = tf_observable_parse(&ev->signal, ev->spec.impact.section_function, &why))) {
    tf_devs_events_destroy(ev);
    return tf_fail_code(err, TF_ERR_CONFIG, "poincare.function: %s",
                        why.msg); /* checked with its key already */
  }
  *out = ev;
  return 0;
}

long long tf_devs_events_count(const tf_devs_events *ev) {
  return ev ? ev->spec.count : 0;
}

static double signal_event_function(const tf_devs_events *ev, uint64_t step, double xbar,
                                    const double *p) {
  if (ev->g) return tf_observable_eval(ev->g, (double)step, &xbar, p);
  return xbar - ev->spec.impact.section_level;
}

long long tf_devs_events_find(const tf_devs_events *ev, const double *xbar, uint64_t n,
                              uint64_t first_step, const double *p, double *rows) {
  tf_poincare_record rec = {.samples = rows};
  tf_poincare_recorder recorder;
  tf_poincare_recorder_start(&recorder, &ev->spec, 1, &rec);
  const int dir = ev->spec.impact.section_direction;
  double before = n ? signal_event_function(ev, first_step, xbar[0], p) : 0;
  for (uint64_t i = 1; i < n && !recorder.full; i++) {
    const double g = signal_event_function(ev, first_step + i, xbar[i], p);
    const bool up = before < 0 && g >= 0, down = before > 0 && g <= 0;
    if ((dir >= 0 && up) || (dir <= 0 && down))
      tf_poincare_recorder_add(&recorder, (double)(first_step + i), &xbar[i]);
    before = g;
  }
  return rec.recorded;
}

void tf_devs_events_destroy(tf_devs_events *ev) {
  if (!ev) return;
  tf_observable_destroy(ev->g);
  free(ev);
}

static int refuse_members(tf_config *cfg, const tf_kernel *k, tf_error *err) {
  return tf_devs_refuse_events(cfg, k, "ensemble", err);
}

/* DEVS models run in their own jobs (jobs/devs): no member adapter, no spectrum here. */
const tf_route_ops tf_route_devs = {
    .name = "devs", .stationary = TF_STATIONARY_NONE, .refuse_members = refuse_members};
