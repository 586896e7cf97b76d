/* lyapunov.c — see lyapunov.h. */
#include "lyapunov.h"

#include <float.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "contact_run.h"
#include "event_loop.h"
#include "evolve.h"
#include "impact.h"
#include "kinds.h"
#include "routes.h"
#include "smooth.h"
#include "status.h"
#include "switches.h"

typedef struct tangent_system {
  const tf_kernel *k;
  const double *p;
  const tf_smoothing *smoothing; /* non-NULL: the kernel's smoothed field (smooth.h) */
  size_t n, m;                   /* state dimension, tangent vectors */
  bool fd;
  double jac[TF_MAX_DIM * TF_MAX_DIM];
  double f1[TF_MAX_DIM], f2[TF_MAX_DIM], y[TF_MAX_DIM];
} tangent_system;

static int field(const tangent_system *s, double t, const double *x, double *dx) {
  return s->smoothing ? tf_smooth_rhs(s->k, s->p, s->smoothing, t, x, dx)
                      : tf_model_rhs(s->k)(t, x, s->p, dx);
}

/* Central differences, column by column: J[:, j] = (f(x + h e_j) - f(x - h e_j)) / 2h. */
static void jacobian(tangent_system *s, double t, const double *x) {
  const size_t n = s->n;
  if (!s->fd && s->smoothing && tf_smooth_has_jacobian(s->k, s->smoothing)) {
    tf_smooth_jacobian(s->k, s->p, s->smoothing, t, x, s->jac);
    return;
  }
  if (!s->fd && !s->smoothing && tf_model_jacobian(s->k)) {
    tf_model_jacobian(s->k)(t, x, s->p, s->jac);
    return;
  }
  memcpy(s->y, x, n * sizeof *x);
  for (size_t j = 0; j < n; j++) {
    const double h = 1e-6 * fmax(1.0, fabs(x[j]));
    s->y[j] = x[j] + h;
    field(s, t, s->y, s->f1);
    s->y[j] = x[j] - h;
    field(s, t, s->y, s->f2);
    s->y[j] = x[j];
    for (size_t i = 0; i < n; i++) s->jac[i * n + j] = (s->f1[i] - s->f2[i]) / (2 * h);
  }
}

/* dq_c = J q_c for the m tangent vectors.  Inlined with a constant n for the small
 * dimensions, where the loops then unroll: the tangent product is most of the work of a
 * spectrum of a low-dimensional flow (the same operations in the same order for every n). */
static inline __attribute__((always_inline)) void tangent_product(size_t n, size_t m,
                                                                  const double *restrict jac,
                                                                  const double *restrict q,
                                                                  double *restrict dq) {
  for (size_t c = 0; c < m; c++)
    for (size_t i = 0; i < n; i++) {
      double acc = 0;
      for (size_t j = 0; j < n; j++) acc += jac[i * n + j] * q[c * n + j];
      dq[c * n + i] = acc;
    }
}

/* Augmented state: x (n), then m tangent vectors (n each), then the integral of tr J. */
static int augmented_rhs(double t, const double *y, void *ctx, double *dy) {
  tangent_system *s = ctx;
  const size_t n = s->n;
  const int rc = field(s, t, y, dy);
  if (rc) return rc;
  jacobian(s, t, y);
  switch (n) {
    case 2:
      tangent_product(2, s->m, s->jac, y + 2, dy + 2);
      break;
    case 3:
      tangent_product(3, s->m, s->jac, y + 3, dy + 3);
      break;
    case 4:
      tangent_product(4, s->m, s->jac, y + 4, dy + 4);
      break;
    default:
      tangent_product(n, s->m, s->jac, y + n, dy + n);
  }
  double trace = 0;
  for (size_t i = 0; i < n; i++) trace += s->jac[i * n + i];
  dy[n + s->m * n] = trace;
  return 0;
}

/* Workspace of the Householder QR (GSL), allocated once per run: maps orthonormalise every
 * step, where allocating per call would dominate the cost. */
typedef struct qr_workspace {
  gsl_matrix *a, *q, *r, *lu;
  gsl_vector *tau;
  gsl_permutation *perm;
} qr_workspace;

static int qr_alloc(qr_workspace *w, size_t n, size_t m) {
  w->a = gsl_matrix_alloc(n, m), w->q = gsl_matrix_alloc(n, n), w->r = gsl_matrix_alloc(n, m);
  w->lu = gsl_matrix_alloc(n, n), w->tau = gsl_vector_alloc(m < n ? m : n);
  w->perm = gsl_permutation_alloc(n);
  return w->a && w->q && w->r && w->lu && w->tau && w->perm ? 0 : -1;
}

static void qr_free(qr_workspace *w) {
  if (w->a) gsl_matrix_free(w->a);
  if (w->q) gsl_matrix_free(w->q);
  if (w->r) gsl_matrix_free(w->r);
  if (w->lu) gsl_matrix_free(w->lu);
  if (w->tau) gsl_vector_free(w->tau);
  if (w->perm) gsl_permutation_free(w->perm);
}

/* Householder QR of the n x m matrix of tangent vectors q (column c at q + c n): replaces
 * them by the orthonormal factor (signs chosen so diag R > 0) and returns log |R_cc|.  A
 * single vector needs no factorisation: it is only normalised. */
static int orthonormalize(qr_workspace *w, double *q, size_t n, size_t m, double *log_r) {
  if (m == 1) {
    double norm = 0;
    for (size_t i = 0; i < n; i++) norm += q[i] * q[i];
    norm = sqrt(norm);
    if (!(norm > 0)) return -1;
    log_r[0] = log(norm);
    for (size_t i = 0; i < n; i++) q[i] /= norm;
    return 0;
  }
  for (size_t c = 0; c < m; c++)
    for (size_t i = 0; i < n; i++) gsl_matrix_set(w->a, i, c, q[c * n + i]);
  int rc = gsl_linalg_QR_decomp(w->a, w->tau) || gsl_linalg_QR_unpack(w->a, w->tau, w->q, w->r);
  for (size_t c = 0; c < m && !rc; c++) {
    const double rcc = gsl_matrix_get(w->r, c, c);
    const double sign = rcc < 0 ? -1.0 : 1.0;
    log_r[c] = log(fabs(rcc));
    for (size_t i = 0; i < n; i++) q[c * n + i] = sign * gsl_matrix_get(w->q, i, c);
  }
  return rc;
}

double tf_kaplan_yorke(const double *spectrum, int n) {
  double sum = 0;
  int j = 0;
  while (j < n && sum + spectrum[j] >= 0) sum += spectrum[j++];
  if (j == 0) return 0.0;
  if (j == n) return (double)n;
  return j + sum / fabs(spectrum[j]);
}

static int check_options(const tf_kernel *k, const tf_lyapunov_options *o, tf_error *err) {
  if (k->dim > TF_MAX_DIM)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "Lyapunov spectra support at most %d state components (model has %zu)",
                        TF_MAX_DIM, k->dim);
  if (o->exponents < 1 || (size_t)o->exponents > k->dim)
    return tf_fail_code(err, TF_ERR_CONFIG, "lyapunov.exponents must be in [1, %zu], got %d",
                        k->dim, o->exponents);
  if (o->blocks < 2 || !(o->duration >= o->interval * o->blocks))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "lyapunov.duration (%g) must hold at least lyapunov.blocks (%d) "
                        "re-orthonormalisation intervals (%g)",
                        o->duration, o->blocks, o->interval);
  return 0;
}

/* Accumulates one interval's log |R| into the block and finishes blocks. */
typedef struct averager {
  int m, blocks, intervals_per_block, in_block, block;
  double span_per_block; /* time or iterations */
  double block_sum[TF_MAX_DIM], total[TF_MAX_DIM];
  tf_lyapunov_result *r;
  tf_stop_token *stop;
} averager;

static void add_interval(averager *a, const double *log_r) {
  for (int c = 0; c < a->m; c++) a->block_sum[c] += log_r[c], a->total[c] += log_r[c];
  if (++a->in_block < a->intervals_per_block || a->block >= a->blocks) return;
  for (int c = 0; c < a->m; c++) {
    a->r->blocks[a->block * a->m + c] = a->block_sum[c] / a->span_per_block;
    a->r->running[a->block * a->m + c] = a->total[c] / (a->span_per_block * (a->block + 1));
    a->block_sum[c] = 0;
  }
  a->block++;
  a->in_block = 0;
}

static void finish(averager *a) {
  tf_lyapunov_result *r = a->r;
  const int m = a->m, b = a->blocks;
  for (int c = 0; c < m; c++) {
    double mean = 0, var = 0;
    for (int i = 0; i < b; i++) mean += r->blocks[i * m + c];
    mean /= b;
    for (int i = 0; i < b; i++)
      var += (r->blocks[i * m + c] - mean) * (r->blocks[i * m + c] - mean);
    r->spectrum[c] = mean;
    r->error[c] = sqrt(var / (b - 1) / b);
  }
  /* QR keeps the exponents ordered on average; sort anyway so the output is descending */
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0 && r->spectrum[j] > r->spectrum[j - 1]; j--) {
      double t = r->spectrum[j];
      r->spectrum[j] = r->spectrum[j - 1], r->spectrum[j - 1] = t;
      t = r->error[j], r->error[j] = r->error[j - 1], r->error[j - 1] = t;
    }
  r->kaplan_yorke = tf_kaplan_yorke(r->spectrum, m);
}

/* Event-driven engines return the exponents of a whole block (their own QR and saltation):
 * block b's values and the running averages after it. */
static void add_block(averager *a, int b, const double *lyapunov) {
  const int m = a->m;
  a->block = b + 1;
  const double span = a->span_per_block;
  for (int c = 0; c < m; c++) {
    a->r->blocks[b * m + c] = lyapunov[c];
    a->total[c] += lyapunov[c] * span;
    a->r->running[b * m + c] = a->total[c] / (span * (b + 1));
  }
}

/* A block boundary is the stop point of a one-computation run (checkpoint.h): the blocks done
 * so far are a result of their own (block averages and running averages). */
static bool stop_between_blocks(averager *a) {
  a->r->blocks_done = a->block;
  if (a->block >= a->blocks || !tf_stop_point(a->stop)) return false;
  a->r->interrupted = true;
  return true;
}

/* The end of an event-driven computation: final state and status, and the spectrum if it
 * completed (no volume rate: it is not accumulated across events). */
static void finish_blocks(averager *a, size_t n, const double *x, int status) {
  if (tf_stop_requested(a->stop)) a->r->interrupted = true; /* also inside the transient */
  memcpy(a->r->final_state, x, n * sizeof *x);
  a->r->status = status;
  if (status != TF_MEMBER_OK || a->r->interrupted) return;
  a->r->volume_rate = NAN;
  finish(a);
}

static int setup_result(tf_lyapunov_result *r, const tf_lyapunov_options *o, averager *a,
                        double span_per_interval, tf_error *err) {
  memset(r, 0, sizeof *r);
  r->blocks = calloc((size_t)o->blocks * (size_t)o->exponents, sizeof *r->blocks);
  r->running = calloc((size_t)o->blocks * (size_t)o->exponents, sizeof *r->running);
  if (!r->blocks || !r->running) return tf_fail(err, "out of memory");
  const long intervals = (long)floor(o->duration / o->interval + 1e-9);
  *a = (averager){.m = o->exponents, .blocks = o->blocks, .r = r, .stop = o->stop};
  a->intervals_per_block = (int)(intervals / o->blocks);
  a->span_per_block = a->intervals_per_block * span_per_interval;
  r->status = TF_MEMBER_OK;
  return 0;
}

/* The re-orthonormalisation intervals of a flow's transient, the first one shorter if the
 * transient is not a whole number of intervals. */
static long transient_intervals(const tf_lyapunov_options *o) {
  return (long)ceil(o->transient / o->interval - 1e-9);
}

int tf_lyapunov_flow(const tf_kernel *k, const double *p, const double *x0,
                     const tf_ode_options *ode, const tf_lyapunov_options *o, tf_lyapunov_result *r,
                     tf_error *err) {
  return tf_lyapunov_smoothed(k, p, NULL, x0, ode, o, r, err);
}

int tf_lyapunov_smoothed(const tf_kernel *k, const double *p, const tf_smoothing *smoothing,
                         const double *x0, const tf_ode_options *ode, const tf_lyapunov_options *o,
                         tf_lyapunov_result *r, tf_error *err) {
  if (check_options(k, o, err)) return -1;
  averager a;
  if (setup_result(r, o, &a, o->interval, err)) return -1;
  const size_t n = k->dim, m = (size_t)o->exponents, size = n + m * n + 1;
  tangent_system sys = {
      .k = k, .p = p, .smoothing = smoothing, .n = n, .m = m, .fd = o->finite_differences};
  double y[TF_MAX_DIM * (TF_MAX_DIM + 1) + 1] = {0};
  memcpy(y, x0, n * sizeof *x0);
  double t = 0;
  tf_ode_status st = TF_ODE_OK;
  tf_event_loop_generic_frame(n, m, y + n);
  tf_stepper *aug = tf_stepper_create(size);
  tf_stepper_setup(aug, augmented_rhs, &sys, ode);
  tf_stepper_without_dense(aug);
  qr_workspace w = {0};
  if (qr_alloc(&w, n, m)) {
    qr_free(&w);
    tf_stepper_destroy(aug);
    return tf_fail(err, "out of memory");
  }
  const long intervals = (long)a.intervals_per_block * o->blocks;
  double log_r[TF_MAX_DIM], trace_at_transient = 0;
  tf_stepper_reset(aug, t, y);
  long steps = 0;
  for (long i = -transient_intervals(o); i < intervals && st == TF_ODE_OK; i++) {
    /* negative i: the transient's intervals (the first one shorter), logs dropped */
    const double t_next = o->transient + (double)(i + 1) * o->interval;
    tf_drive d = {.max_steps = ode->max_steps - steps, .stop = a.stop};
    tf_stepper_drive(aug, &t, y, t_next, &d, &st);
    steps += d.steps;
    if (tf_stop_requested(a.stop)) { /* a signal or the time limit inside a block */
      r->interrupted = true;
      break;
    }
    if (st != TF_ODE_OK || orthonormalize(&w, y + n, n, m, log_r)) break;
    tf_stepper_restart(aug, t, y); /* the tangent vectors changed: new first stage */
    if (i < 0) {
      if (i == -1) trace_at_transient = y[n + m * n];
      continue;
    }
    add_interval(&a, log_r);
    if (a.in_block == 0 && stop_between_blocks(&a)) break;
  }
  r->steps += steps;
  qr_free(&w);
  tf_stepper_destroy(aug);
  memcpy(r->final_state, y, n * sizeof *y);
  if (r->interrupted) return 0;
  if (st != TF_ODE_OK || a.block < o->blocks) {
    r->status = st != TF_ODE_OK ? tf_member_status_of_step(st) : TF_MEMBER_NONFINITE;
    return 0;
  }
  r->volume_rate = (y[n + m * n] - trace_at_transient) / (t - o->transient);
  finish(&a);
  return 0;
}

static double log_abs_det(qr_workspace *w, const double *jac, size_t n) {
  if (n == 1) return log(fabs(jac[0]));
  if (n == 2) return log(fabs(jac[0] * jac[3] - jac[1] * jac[2]));
  int sign;
  for (size_t i = 0; i < n * n; i++) gsl_matrix_set(w->lu, i / n, i % n, jac[i]);
  gsl_linalg_LU_decomp(w->lu, w->perm, &sign);
  return gsl_linalg_LU_lndet(w->lu);
}

/* A map's Jacobian: the model's, or central differences for a model that gives none (the
 * public interface makes map_jacobian optional). */
static void map_jacobian(const tf_kernel *k, const double *x, const double *p, double *jac) {
  if (tf_model_map_jacobian(k)) return tf_model_map_jacobian(k)(x, p, jac);
  const size_t n = k->dim;
  double xs[TF_MAX_DIM], fp[TF_MAX_DIM], fm[TF_MAX_DIM];
  memcpy(xs, x, n * sizeof *xs);
  for (size_t j = 0; j < n; j++) {
    const double h = cbrt(DBL_EPSILON) * fmax(1.0, fabs(x[j]));
    xs[j] = x[j] + h;
    tf_model_map(k)(xs, p, fp);
    xs[j] = x[j] - h;
    tf_model_map(k)(xs, p, fm);
    xs[j] = x[j];
    for (size_t i = 0; i < n; i++) jac[i * n + j] = (fp[i] - fm[i]) / (2 * h);
  }
}

int tf_lyapunov_map(const tf_kernel *k, const double *p, const double *x0,
                    const tf_lyapunov_options *o, tf_lyapunov_result *r, tf_error *err) {
  if (check_options(k, o, err)) return -1;
  const long every = (long)llround(o->interval);
  if (every < 1)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "lyapunov.interval must be a whole number >= 1 for maps");
  averager a;
  if (setup_result(r, o, &a, (double)every, err)) return -1;
  const size_t n = k->dim, m = (size_t)o->exponents;
  double x[TF_MAX_DIM], nx[TF_MAX_DIM], jac[TF_MAX_DIM * TF_MAX_DIM];
  double q[TF_MAX_DIM * TF_MAX_DIM] = {0}, nq[TF_MAX_DIM * TF_MAX_DIM];
  double log_r[TF_MAX_DIM], det_sum = 0;
  memcpy(x, x0, n * sizeof *x);
  tf_event_loop_generic_frame(n, m, q);
  qr_workspace w = {0};
  if (qr_alloc(&w, n, m)) {
    qr_free(&w);
    return tf_fail(err, "out of memory");
  }
  const long total = (long)a.intervals_per_block * o->blocks * every;
  /* negative i: the transient's iterations, QR at its end too, logs dropped (lyapunov.h) */
  for (long i = -(long)o->transient; i < total; i++) {
    if ((i & 1023) == 0 && tf_stop_poll(a.stop)) { /* a signal or the time limit in a block */
      r->interrupted = true;
      break;
    }
    map_jacobian(k, x, p, jac);
    if (i >= 0) det_sum += log_abs_det(&w, jac, n);
    const int refused = tf_model_map(k)(x, p, nx); /* a map has no smaller step: any ends it */
    if (refused) {
      r->status = tf_kernel_member_failed(k, refused, (double)i);
      break;
    }
    memcpy(x, nx, n * sizeof *x);
    for (size_t c = 0; c < m; c++)
      for (size_t row = 0; row < n; row++) {
        double acc = 0;
        for (size_t j = 0; j < n; j++) acc += jac[row * n + j] * q[c * n + j];
        nq[c * n + row] = acc;
      }
    memcpy(q, nq, m * n * sizeof *q);
    bool finite = true;
    for (size_t j = 0; j < n; j++) finite = finite && isfinite(x[j]);
    if (!finite) {
      r->status = TF_MEMBER_NONFINITE;
      break;
    }
    if ((i + 1) % every == 0 || i == -1) {
      if (orthonormalize(&w, q, n, m, log_r)) {
        r->status = TF_MEMBER_FAILED;
        break;
      }
      if (i < 0) continue;
      add_interval(&a, log_r);
      if (a.in_block == 0 && stop_between_blocks(&a)) break;
    }
  }
  qr_free(&w);
  if (r->status != TF_MEMBER_OK || r->interrupted) return 0;
  r->steps = total;
  memcpy(r->final_state, x, n * sizeof *x);
  r->volume_rate = det_sum / (double)total;
  finish(&a);
  return 0;
}

int tf_lyapunov_options_from_config(tf_config *cfg, const tf_kernel *k, tf_lyapunov_options *o,
                                    tf_error *err) {
  const bool is_map = tf_route_ops_for(k, NULL)->iterates;
  const long long d_exp = (long long)k->dim, d_blocks = 20;
  const double d_transient = is_map ? 1000 : 100, d_duration = is_map ? 100000 : 1000,
               d_interval = 1.0;
  long long exponents, blocks;
  const char *jac;
  static const char *const jacobians[] = {"auto", "finite-differences", NULL};
  o->events = NULL;
  if (tf_config_get_int(cfg, "lyapunov.exponents", &d_exp, 1, (long long)k->dim, &exponents, err) ||
      tf_config_get_double(cfg, "lyapunov.transient", &d_transient, 0, INFINITY, &o->transient,
                           err) ||
      tf_config_get_double(cfg, "lyapunov.duration", &d_duration, 1e-9, INFINITY, &o->duration,
                           err) ||
      tf_config_get_double(cfg, "lyapunov.interval", &d_interval, 1e-9, INFINITY, &o->interval,
                           err) ||
      tf_config_get_int(cfg, "lyapunov.blocks", &d_blocks, 2, 100000, &blocks, err) ||
      tf_config_get_string(cfg, "lyapunov.jacobian", "auto", jacobians, &jac, err))
    return -1;
  o->exponents = (int)exponents;
  o->blocks = (int)blocks;
  o->finite_differences = strcmp(jac, "finite-differences") == 0;
  char where[256];
  if (!(o->duration >= o->interval * o->blocks))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'lyapunov.duration': %g holds fewer than lyapunov.blocks = %lld "
                        "intervals of %g",
                        tf_config_where(cfg, "lyapunov.duration", where, sizeof where), o->duration,
                        blocks, o->interval);
  if (is_map && llround(o->interval) < 1) /* the rule of tf_lyapunov_map, said with its place */
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'lyapunov.interval': must be a whole number >= 1 for maps, got %g",
                        tf_config_where(cfg, "lyapunov.interval", where, sizeof where),
                        o->interval);
  return 0;
}

/* One block of an event-driven engine from (t0, x) to t1: its status, work and exponents. */
typedef struct block_outcome {
  int status; /* tf_member_status */
  long steps;
  int segments;
  const double *lyapunov;
} block_outcome;
/* block -1 is the transient */
typedef block_outcome (*block_fn)(void *ctx, int block, double t0, double *x, double t1);

/* The transient and the blocks after it, written once for the event-driven engines.  The
 * transient carries the tangent vectors too (its exponents are dropped), so the first block
 * continues a frame already aligned with the flow: started there from a fixed frame, it would
 * add that frame's alignment, about ln(c), to the sums (lyapunov.h).  A block cut short by a
 * signal or the time limit does not count.  Returns the last status. */
static int run_blocks(averager *a, const tf_lyapunov_options *o, block_fn run, void *ctx, double *x,
                      int status) {
  if (status == TF_MEMBER_OK && o->transient > 0) {
    const block_outcome out = run(ctx, -1, 0.0, x, o->transient);
    a->r->steps += out.steps;
    status = out.status;
  }
  double t = o->transient;
  for (int b = 0; b < o->blocks && status == TF_MEMBER_OK; b++) {
    const block_outcome out = run(ctx, b, t, x, t + a->span_per_block);
    status = out.status;
    if (tf_stop_requested(a->stop)) {
      a->r->interrupted = true;
      break;
    }
    a->r->steps += out.steps;
    a->r->segments += out.segments;
    t += a->span_per_block;
    if (status != TF_MEMBER_OK || !out.lyapunov) break; /* a failed block has no exponents */
    add_block(a, b, out.lyapunov);
    if (status == TF_MEMBER_OK && stop_between_blocks(a)) break;
  }
  return status;
}

typedef struct filippov_ctx {
  tf_evolve *e;
  tf_evolve_result res; /* holds the block's exponents */
  int first_collapse;   /* the first block that slid (-1: none) */
} filippov_ctx;

static block_outcome filippov_block(void *ctx, int block, double t0, double *x, double t1) {
  filippov_ctx *c = ctx;
  c->res = tf_evolve_run(c->e, t0, x, t1, 0);
  if (block >= 0 && c->first_collapse < 0 && c->res.tangent_collapsed) c->first_collapse = block;
  return (block_outcome){c->res.status, c->res.work.steps, c->res.segments, c->res.lyapunov};
}

/* With as many tangent vectors as dimensions, an arrival in sliding (saltation into T Sigma)
 * leaves them dependent: the smallest `count` exponents are -inf from that block on, not the
 * rounding noise the QR would average (say -25 +- 5). */
static void mark_collapse(tf_lyapunov_result *r, int m, int blocks, int first, int count) {
  r->collapsed = count;
  for (int i = m - count; i < m; i++) {
    r->spectrum[i] = -INFINITY;
    r->error[i] = 0.0;
    for (int b = first; b < blocks; b++) r->running[b * m + i] = -INFINITY;
    r->blocks[first * m + i] = -INFINITY; /* QR order: the last vectors are the collapsed ones */
  }
  r->kaplan_yorke = tf_kaplan_yorke(r->spectrum, m);
}

int tf_lyapunov_filippov(const tf_kernel *k, const double *p, const double *x0,
                         const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                         tf_lyapunov_result *r, tf_error *err) {
  if (check_options(k, o, err)) return -1;
  averager a;
  if (setup_result(r, o, &a, o->interval, err)) return -1;
  tf_evolve_options eo = tf_evolve_default_options();
  eo.ode = *ode;
  tf_evolve *e = tf_evolve_create(k, p, &eo);
  if (!e) return tf_fail(err, "cannot set up the event-driven integrator for '%s'", k->name);
  double x[TF_MAX_DIM];
  memcpy(x, x0, k->dim * sizeof *x);
  int status = tf_evolve_enable_tangent(e, o->exponents, o->interval, saltation) ? TF_MEMBER_FAILED
                                                                                 : TF_MEMBER_OK;
  filippov_ctx ctx = {.e = e, .first_collapse = -1};
  status = run_blocks(&a, o, filippov_block, &ctx, x, status);
  tf_evolve_destroy(e);
  finish_blocks(&a, k->dim, x, status);
  if (status == TF_MEMBER_OK && !r->interrupted && saltation && (size_t)o->exponents == k->dim &&
      ctx.first_collapse >= 0)
    mark_collapse(r, o->exponents, o->blocks, ctx.first_collapse, 1);
  return 0;
}

typedef struct switches_ctx {
  tf_switches *s;
  tf_switches_result res;        /* holds the block's exponents */
  int first_collapse, collapsed; /* in the blocks, not the transient */
} switches_ctx;

static block_outcome switches_block(void *ctx, int block, double t0, double *x, double t1) {
  switches_ctx *c = ctx;
  c->res = tf_switches_run(c->s, t0, x, t1);
  if (block >= 0 && c->res.collapsed > 0 && c->first_collapse < 0) c->first_collapse = block;
  if (block >= 0 && c->res.collapsed > c->collapsed) c->collapsed = c->res.collapsed;
  return (block_outcome){c->res.status, c->res.work.steps, c->res.segments,
                         c->res.status == TF_MEMBER_OK ? c->res.lyapunov : NULL};
}

/* Several switching functions (switches.h): a contact that sticks puts the tangent vectors into
 * the tangent space of its surface, so with k contacts sticking at once k directions die. */
int tf_lyapunov_switches(const tf_kernel *k, const double *p, const double *x0,
                         const tf_ode_options *ode, const tf_lyapunov_options *o,
                         tf_lyapunov_result *r, tf_error *err) {
  if (check_options(k, o, err)) return -1;
  averager a;
  if (setup_result(r, o, &a, o->interval, err)) return -1;
  tf_switches_options so = tf_switches_default_options();
  so.ode = *ode;
  tf_switches *s = tf_switches_create(k, p, &so);
  if (!s) return tf_fail(err, "cannot set up the event-driven integrator for '%s'", k->name);
  double x[TF_MAX_DIM];
  memcpy(x, x0, k->dim * sizeof *x);
  int status =
      tf_switches_enable_tangent(s, o->exponents, o->interval) ? TF_MEMBER_FAILED : TF_MEMBER_OK;
  switches_ctx ctx = {.s = s, .first_collapse = -1};
  status = run_blocks(&a, o, switches_block, &ctx, x, status);
  tf_switches_destroy(s);
  finish_blocks(&a, k->dim, x, status);
  const int dead = ctx.collapsed - ((int)k->dim - o->exponents);
  if (status == TF_MEMBER_OK && !r->interrupted && dead > 0)
    mark_collapse(r, o->exponents, o->blocks, ctx.first_collapse, dead);
  return 0;
}

typedef struct contact_ctx {
  tf_evolve2 *e;
  tf_evolve2_result res; /* holds the block's exponents */
} contact_ctx;

static block_outcome contact_block(void *ctx, int block, double t0, double *x, double t1) {
  contact_ctx *c = ctx;
  (void)block;
  c->res = tf_evolve2_run(c->e, t0, x, t1);
  return (block_outcome){c->res.status, c->res.work.steps, 0, c->res.lyapunov};
}

/* One codimension-2 engine for the transient and every block, so that each block continues
 * the tangent vectors of the one before (event_loop.h). */
int tf_lyapunov_contact(const tf_kernel *k, const double *p, const double *x0,
                        const tf_contact_options *co, const tf_lyapunov_options *o,
                        tf_lyapunov_result *r, tf_error *err) {
  if (tf_contact_is_dual(k))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "model '%s' has two contacts: no tangent dynamics for its cases", k->name);
  if (check_options(k, o, err)) return -1;
  averager a;
  if (setup_result(r, o, &a, o->interval, err)) return -1;
  tf_evolve2 *e = tf_evolve2_create(k, p, &co->engine);
  if (!e) return tf_fail(err, "cannot set up the codimension-2 engine for '%s'", k->name);
  double x[TF_MAX_DIM];
  memcpy(x, x0, k->dim * sizeof *x);
  int status =
      tf_evolve2_enable_tangent(e, o->exponents, o->interval) ? TF_MEMBER_FAILED : TF_MEMBER_OK;
  contact_ctx ctx = {.e = e};
  status = run_blocks(&a, o, contact_block, &ctx, x, status);
  tf_evolve2_destroy(e);
  finish_blocks(&a, k->dim, x, status);
  return 0;
}

typedef struct impact_ctx {
  tf_impact *tangent;
  const double *p;
  int first_collapse, collapsed; /* sticking killed `collapsed` directions in the blocks */
} impact_ctx;

static block_outcome impact_block(void *ctx, int block, double t0, double *x, double t1) {
  impact_ctx *c = ctx;
  const tf_impact_result res = tf_impact_run(c->tangent, c->p, t0, x, t1);
  if (block >= 0 && res.collapsed > 0 && c->first_collapse < 0) c->first_collapse = block;
  if (block >= 0 && res.collapsed > c->collapsed) c->collapsed = res.collapsed;
  return (block_outcome){res.status, res.work.steps, res.segments, res.lyapunov};
}

int tf_lyapunov_impact(const tf_kernel *k, const double *p, const double *x0,
                       const tf_ode_options *ode, const tf_lyapunov_options *o,
                       tf_lyapunov_result *r, tf_error *err) {
  if (check_options(k, o, err)) return -1;
  averager a;
  if (setup_result(r, o, &a, o->interval, err)) return -1;
  tf_impact_options io;
  tf_impact_options_default(&io);
  io.loop.event_tol = 1e-12, io.loop.max_event_rate = 1e6, io.loop.max_events = 1000000000L;
  if (o->events) io = *o->events;
  io.loop.ode = *ode;
  io.loop.qr_interval = o->interval;
  const size_t n = k->dim, m = (size_t)o->exponents;
  tf_impact *tangent = tf_impact_create(k, m, &io);
  double *x = calloc(n + n * m, sizeof *x);
  if (!tangent || !x) {
    tf_impact_destroy(tangent), free(x);
    return tf_fail(err, "cannot set up the impact integrator for '%s'", k->name);
  }
  memcpy(x, x0, n * sizeof *x);
  impact_ctx ctx = {.tangent = tangent, .p = p, .first_collapse = -1};
  int status = run_blocks(&a, o, impact_block, &ctx, x, TF_MEMBER_OK);
  tf_impact_destroy(tangent);
  finish_blocks(&a, n, x, status);
  free(x);
  /* Sticking (after a completed chattering sequence, or a plastic impact) kills every
   * perturbation across the constraint in finite time: those exponents are -inf (impact.c
   * carries the tangent vectors onto the constraint). */
  const int dead = ctx.collapsed - ((int)n - o->exponents);
  if (status == TF_MEMBER_OK && !r->interrupted && dead > 0)
    mark_collapse(r, o->exponents, o->blocks, ctx.first_collapse, dead);
  return 0;
}

bool tf_lyapunov_is_filippov(const tf_kernel *k, const double *p) {
  return tf_route_ops_for(k, p)->lyapunov_segments;
}

int tf_lyapunov_any(const tf_kernel *k, const double *p, const double *x0,
                    const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                    tf_lyapunov_result *r, tf_error *err) {
  const tf_route_ops *route = tf_route_ops_for(k, p);
  if (o->events) {
    if (!route->lyapunov_resets)
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "model '%s': a section reset is run on flows and impact models only",
                          k->name);
    return route->lyapunov_resets(k, p, x0, ode, o, saltation, r, err);
  }
  if (!route->lyapunov) /* bodies under friction: contact_run.h; DEVS: jobs/devs/devs_job.c */
    return tf_fail_code(err, TF_ERR_CONFIG, "model '%s': no Lyapunov spectrum on this route",
                        k->name);
  return route->lyapunov(k, p, x0, ode, o, saltation, r, err);
}
