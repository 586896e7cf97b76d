/* lyapunov_naive.c — the straightforward Lyapunov-spectrum computation that
 * bench/lyapunov_bench.sh times against `twofold run` (src/engine/lyapunov.c):
 *   fixed-step classical RK4 of the state plus k tangent vectors (variational equations with
 *   the analytic Jacobian), modified Gram–Schmidt re-orthonormalisation after EVERY step, no
 *   reuse of anything, running sums of the log norms.
 * With QR_EVERY = K > 1 (the competent variant) it re-orthonormalises every K steps only, as
 * one does when the vectors' growth over K steps is far from overflow and their angles far
 * from degenerate; that removes most of the square roots, logs and divisions.
 * Self-contained (links only libm).
 *
 *   bench_lyapunov_naive lorenz DT T_TRANSIENT T_TOTAL [QR_EVERY]
 *       Lorenz sigma 10, rho 28, beta 8/3 from (1, 1, 20), 3 tangent vectors.
 *   bench_lyapunov_naive stick-slip-smooth EPS DT T_TRANSIENT T_TOTAL [QR_EVERY]
 *       the tanh-smoothed forced stick-slip oscillator of kernels/stick_slip.c
 *           x' = v, v' = -x - 2 zeta v - mu tanh((v - vb)/eps) + a cos(theta), theta' = omega
 *       zeta 0.05, mu 0.8, vb 0.5, a 1.2, omega 1.1 (configs/stick-slip-spectrum.yaml) from
 *       (0.2, 0, 0), 2 tangent vectors started along x and v — the way to get the Filippov
 *       exponents without an event-driven engine.
 * T_TOTAL is the averaging time, after T_TRANSIENT (state only, as twofold does).
 * Prints one JSON line: {"spectrum": [...], "seconds": ..., "steps": ...}; seconds is the
 * monotonic wall time of transient + averaging (not process start-up). */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { DIM = 3, KMAX = 3 };

typedef struct {
  int k;                                    /* tangent vectors */
  void (*rhs)(const double *x, double *dx); /* the flow */
  void (*jac)(const double *x, double j[DIM][DIM]);
} model;

/* ---- Lorenz ---- */
static const double SIGMA = 10.0, RHO = 28.0, BETA = 8.0 / 3.0;
static void lorenz_rhs(const double *x, double *dx) {
  dx[0] = SIGMA * (x[1] - x[0]);
  dx[1] = x[0] * (RHO - x[2]) - x[1];
  dx[2] = x[0] * x[1] - BETA * x[2];
}
static void lorenz_jac(const double *x, double j[DIM][DIM]) {
  j[0][0] = -SIGMA, j[0][1] = SIGMA, j[0][2] = 0;
  j[1][0] = RHO - x[2], j[1][1] = -1, j[1][2] = -x[0];
  j[2][0] = x[1], j[2][1] = x[0], j[2][2] = -BETA;
}

/* ---- tanh-smoothed stick-slip ---- */
static const double ZETA = 0.05, MU = 0.8, VB = 0.5, AMP = 1.2, OMEGA = 1.1;
static double EPS = 1e-3;
static void ss_rhs(const double *x, double *dx) {
  dx[0] = x[1];
  dx[1] = -x[0] - 2 * ZETA * x[1] - MU * tanh((x[1] - VB) / EPS) + AMP * cos(x[2]);
  dx[2] = OMEGA;
}
static void ss_jac(const double *x, double j[DIM][DIM]) {
  const double c = cosh((x[1] - VB) / EPS);
  j[0][0] = 0, j[0][1] = 1, j[0][2] = 0;
  j[1][0] = -1, j[1][1] = -2 * ZETA - MU / (EPS * c * c), j[1][2] = -AMP * sin(x[2]);
  j[2][0] = 0, j[2][1] = 0, j[2][2] = 0;
}

/* augmented state: x[0..2], then tangent vector i at 3 + 3 i */
static void aug_rhs(const model *m, const double *y, double *dy) {
  double j[DIM][DIM];
  m->rhs(y, dy);
  m->jac(y, j);
  for (int i = 0; i < m->k; i++) {
    const double *w = y + DIM + DIM * i;
    double *dw = dy + DIM + DIM * i;
    for (int r = 0; r < DIM; r++) dw[r] = j[r][0] * w[0] + j[r][1] * w[1] + j[r][2] * w[2];
  }
}

static void rk4(const model *m, int n, double *y, double h, int tangent) {
  double k1[DIM * (KMAX + 1)], k2[DIM * (KMAX + 1)], k3[DIM * (KMAX + 1)], k4[DIM * (KMAX + 1)],
      t[DIM * (KMAX + 1)];
  if (!tangent) {
    m->rhs(y, k1);
    for (int i = 0; i < n; i++) t[i] = y[i] + 0.5 * h * k1[i];
    m->rhs(t, k2);
    for (int i = 0; i < n; i++) t[i] = y[i] + 0.5 * h * k2[i];
    m->rhs(t, k3);
    for (int i = 0; i < n; i++) t[i] = y[i] + h * k3[i];
    m->rhs(t, k4);
  } else {
    aug_rhs(m, y, k1);
    for (int i = 0; i < n; i++) t[i] = y[i] + 0.5 * h * k1[i];
    aug_rhs(m, t, k2);
    for (int i = 0; i < n; i++) t[i] = y[i] + 0.5 * h * k2[i];
    aug_rhs(m, t, k3);
    for (int i = 0; i < n; i++) t[i] = y[i] + h * k3[i];
    aug_rhs(m, t, k4);
  }
  for (int i = 0; i < n; i++) y[i] += h / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
}

/* modified Gram–Schmidt on the k tangent vectors; adds log norms to sum */
static void mgs(int k, double *w, double *sum) {
  for (int i = 0; i < k; i++) {
    double *wi = w + DIM * i;
    for (int l = 0; l < i; l++) {
      const double *wl = w + DIM * l;
      const double d = wi[0] * wl[0] + wi[1] * wl[1] + wi[2] * wl[2];
      for (int r = 0; r < DIM; r++) wi[r] -= d * wl[r];
    }
    const double nrm = sqrt(wi[0] * wi[0] + wi[1] * wi[1] + wi[2] * wi[2]);
    sum[i] += log(nrm);
    for (int r = 0; r < DIM; r++) wi[r] /= nrm;
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double num(const char *s, const char *what) {
  char *end;
  const double v = strtod(s, &end);
  if (*s == 0 || *end != 0 || !isfinite(v)) {
    fprintf(stderr, "bench_lyapunov_naive: bad %s '%s'\n", what, s);
    exit(2);
  }
  return v;
}

static void usage(void) {
  fprintf(stderr,
          "usage: bench_lyapunov_naive lorenz DT T_TRANSIENT T_TOTAL [QR_EVERY]\n"
          "       bench_lyapunov_naive stick-slip-smooth EPS DT T_TRANSIENT T_TOTAL [QR_EVERY]\n");
  exit(2);
}

int main(int argc, char **argv) {
  model m;
  double y[DIM * (KMAX + 1)] = {0};
  double dt, ttr, ttot, every = 1;
  if ((argc == 5 || argc == 6) && strcmp(argv[1], "lorenz") == 0) {
    m = (model){3, lorenz_rhs, lorenz_jac};
    y[0] = 1, y[1] = 1, y[2] = 20;
    dt = num(argv[2], "DT"), ttr = num(argv[3], "T_TRANSIENT"), ttot = num(argv[4], "T_TOTAL");
    if (argc == 6) every = num(argv[5], "QR_EVERY");
  } else if ((argc == 6 || argc == 7) && strcmp(argv[1], "stick-slip-smooth") == 0) {
    m = (model){2, ss_rhs, ss_jac};
    y[0] = 0.2, y[1] = 0.0, y[2] = 0.0;
    EPS = num(argv[2], "EPS");
    dt = num(argv[3], "DT"), ttr = num(argv[4], "T_TRANSIENT"), ttot = num(argv[5], "T_TOTAL");
    if (argc == 7) every = num(argv[6], "QR_EVERY");
    if (EPS <= 0) usage();
  } else {
    usage();
    return 2;
  }
  if (dt <= 0 || ttr < 0 || ttot <= 0 || every < 1 || every != floor(every)) usage();
  const long ntr = lround(ttr / dt), n = lround(ttot / dt), qr_every = (long)every;
  if (n < 1) usage();
  const int k = m.k, naug = DIM * (k + 1);
  double *w = y + DIM, sum[KMAX] = {0};
  for (int i = 0; i < k; i++) w[DIM * i + i] = 1.0;

  const double t0 = now();
  for (long s = 0; s < ntr; s++) rk4(&m, DIM, y, dt, 0);
  for (long s = 0; s < n; s++) {
    rk4(&m, naug, y, dt, 1);
    if ((s + 1) % qr_every == 0 || s + 1 == n) mgs(k, w, sum);
  }
  const double secs = now() - t0;

  printf("{\"spectrum\": [");
  for (int i = 0; i < k; i++) printf("%s%.12g", i ? ", " : "", sum[i] / (n * dt));
  printf("], \"seconds\": %.6g, \"steps\": %ld, \"qr_every\": %ld}\n", secs, ntr + n, qr_every);
  return 0;
}
