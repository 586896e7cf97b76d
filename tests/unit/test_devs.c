/* test_devs.c — the DEVS engine's contract, checked against an independent replay of the
 * random streams with tf_rng_philox.
 *
 * A counting element x -> x + 1 with derivative 2 makes the engine's state readable: after
 * n steps x_k (started at 0) is the number of updates of element k, and its tangent is
 * 2^updates.  The test draws every decision itself (byte k % 32 of Philox block
 * (step, TF_DEVS_RNG_UPDATE, k / 32) against floor(256 q), ties settled by the 53-bit uniform
 * of (step, TF_DEVS_RNG_TIE, k)) and compares counts, X_i and ln ||v||; it also checks the
 * update frequency, q = 0 and q = 1, a logistic ensemble through the vectorised and generic
 * paths (same bits), and a restored state continuing bit for bit. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "devs.h"
#include "rng.h"

enum { N, Q, STEPS, TRANSIENT };

static const tf_param counting_params[] = {
    {"N", 10, 1, 1e9, "elements", false},
    {"q", 0.5, 0, 1, "update probability", false},
    {"steps", 10, 1, 1e9, "steps", false},
    {"transient", 0, 0, 1e9, "transient", false},
};

static int count_map(const double *x, const double *p, double *out) {
  (void)p;
  out[0] = x[0] + 1.0;
  return 0;
}
static void count_jacobian(const double *x, const double *p, double *j) {
  (void)x, (void)p;
  j[0] = 2.0;
}

static const tf_devs_ops counting_ops = {TF_OPS_SIZE(tf_devs_ops),
                                         .map = count_map,
                                         .map_jacobian = count_jacobian,
                                         .n = N,
                                         .q = Q,
                                         .steps = STEPS,
                                         .transient = TRANSIENT,
                                         .initial_min = 0,
                                         .initial_max = 0};

static const tf_model_def counting = {
    TF_MODEL_HEAD, .name = "devs-counting",   .kind = TF_MODEL_DEVS, .dim = 1,
    .nparams = 4,  .params = counting_params, .devs = &counting_ops,
};

/* The decision of element k at `step`, drawn here from the rng.h primitive. */
static bool decision(uint64_t seed, uint64_t member, uint64_t step, uint64_t k, double q) {
  const uint64_t key[2] = {seed, member};
  const uint64_t c[4] = {step, TF_DEVS_RNG_UPDATE, k / 32, 0};
  uint64_t r[4];
  tf_rng_philox(key, c, r);
  const unsigned byte = (unsigned)(r[(k % 32) / 8] >> (8 * (k % 8))) & 0xff;
  const unsigned t = (unsigned)floor(256.0 * q);
  if (byte != t) return byte < t;
  const uint64_t c2[4] = {step, TF_DEVS_RNG_TIE, k, 0};
  tf_rng_philox(key, c2, r);
  return ((double)(r[0] >> 11) + 0.5) * 0x1.0p-53 < 256.0 * q - t;
}

static void counting_replay(uint64_t n, double q, uint64_t steps) {
  double p[] = {(double)n, q, (double)steps, 0};
  tf_error err;
  tf_devs *d = tf_devs_create(&counting, p, 7, 3, false, MPI_COMM_SELF, &err);
  CHECK(d != NULL, "create: %s", err.msg);
  if (!d) return;
  const double *x;
  tf_devs_states(d, &x);
  double *x0 = malloc(n * sizeof *x0), *X = malloc(steps * sizeof *X);
  memcpy(x0, x, n * sizeof *x0);
  CHECK(tf_devs_advance(d, steps, X, &err) == 0, "advance: %s", err.msg);
  long long mismatches = 0, updates = 0;
  double max_count = 0;
  for (uint64_t k = 0; k < n; k++) {
    long long c = 0;
    for (uint64_t i = 0; i < steps; i++) c += decision(7, 3, i, k, q);
    mismatches += x[k] - x0[k] != (double)c;
    updates += c;
    if (c > max_count) max_count = (double)c;
  }
  CHECK(mismatches == 0, "N %llu, q %g: %lld elements differ from the replayed decisions",
        (unsigned long long)n, q, mismatches);
  /* X after the last step: the sum of the final states (block order; exact for integers +
   * x0 up to rounding, so compare loosely) */
  double sum = 0;
  for (uint64_t k = 0; k < n; k++) sum += x[k];
  CHECK_CLOSE(X[steps - 1], sum, 1e-9 * sum, "X_i at the last step");
  /* every element's tangent is 2^updates, so ln ||v|| = ln sqrt(sum 4^c_k / N) */
  double log_norm, mean_log, s = 0;
  tf_devs_tangent(d, &log_norm, &mean_log);
  for (uint64_t k = 0; k < n; k++) s += exp(2 * M_LN2 * (x[k] - x0[k] - max_count));
  const double expect = max_count * M_LN2 + 0.5 * log(s / (double)n);
  CHECK_CLOSE(log_norm, expect, 1e-9 * fabs(expect) + 1e-12, "ln ||v||");
  CHECK_CLOSE(mean_log, M_LN2 * (double)updates / (double)n, 1e-9, "mean ln |v_k|");
  if (q > 0 && q < 1 && n * steps >= 100000) {
    const double f = (double)updates / (double)(n * steps),
                 se = sqrt(q * (1 - q) / (double)(n * steps));
    CHECK(fabs(f - q) < 5 * se, "update frequency %g vs q %g (se %.1e)", f, q, se);
  }
  if (q == 0) CHECK(updates == 0, "q = 0 updates nothing");
  if (q == 1) CHECK(updates == (long long)(n * steps), "q = 1 updates everything");
  free(x0), free(X);
  tf_devs_destroy(d);
}

extern const tf_kernel tf_kernel_devs_logistic;

static void paths_and_restore(void) {
  double p[] = {2500, 0.3, 3.8, 300, 0};
  tf_error err;
  tf_devs *a = tf_devs_create(&tf_kernel_devs_logistic, p, 1, 0, false, MPI_COMM_SELF, &err);
  tf_devs *b = tf_devs_create(&tf_kernel_devs_logistic, p, 1, 0, true, MPI_COMM_SELF, &err);
  double Xa[300], Xb[300];
  tf_devs_advance(a, 300, Xa, &err);
  tf_devs_advance(b, 300, Xb, &err);
  CHECK(memcmp(Xa, Xb, sizeof Xa) == 0, "vectorised (%d) and generic paths give the same X_i",
        tf_devs_vectorised(a));
  const char *isas[] = {"avx2", "portable"};
  for (int i = 0; i < 2; i++) {
    setenv("TWOFOLD_DEVS_ISA", isas[i], 1);
    tf_devs *v = tf_devs_create(&tf_kernel_devs_logistic, p, 1, 0, false, MPI_COMM_SELF, &err);
    unsetenv("TWOFOLD_DEVS_ISA");
    double Xv[300];
    tf_devs_advance(v, 300, Xv, &err);
    CHECK(memcmp(Xa, Xv, sizeof Xa) == 0, "the %s tile gives the same X_i", isas[i]);
    tf_devs_destroy(v);
  }
  double la, lb, ma, mb;
  tf_devs_tangent(a, &la, &ma), tf_devs_tangent(b, &lb, &mb);
  CHECK(la == lb && ma == mb, "same tangent: %.17g vs %.17g", la, lb);
  /* a fresh ensemble given a's state at step 300 continues exactly like a */
  tf_devs *c = tf_devs_create(&tf_kernel_devs_logistic, p, 1, 0, false, MPI_COMM_SELF, &err);
  double *xa, *ma_, *xc, *mc;
  int64_t *ea, *ec;
  tf_devs_state(a, &xa, &ma_, &ea), tf_devs_state(c, &xc, &mc, &ec);
  memcpy(xc, xa, 2500 * sizeof *xc), memcpy(mc, ma_, 2500 * sizeof *mc);
  memcpy(ec, ea, 2500 * sizeof *ec);
  tf_devs_set_step(c, 300);
  double Ya[100], Yc[100];
  tf_devs_advance(a, 100, Ya, &err), tf_devs_advance(c, 100, Yc, &err);
  CHECK(memcmp(Ya, Yc, sizeof Ya) == 0, "a restored state continues bit for bit");
  tf_devs_destroy(a), tf_devs_destroy(b), tf_devs_destroy(c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  counting_replay(5, 0.5, 40);     /* one partial block */
  counting_replay(2600, 0.37, 90); /* three blocks, the last partial; ties resolved */
  counting_replay(1100, 0.0, 20);  /* nothing moves */
  counting_replay(1100, 1.0, 20);  /* everything moves */
  counting_replay(1024, 0.5, 200); /* q = 1/2: ties never update */
  paths_and_restore();
  MPI_Finalize();
  return check_report("test_devs");
}
