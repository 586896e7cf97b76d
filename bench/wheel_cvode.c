/* wheel_cvode.c — the wheel's Filippov mode machine driven by SUNDIALS CVODE (baseline for
 * bench/wheel_compare.py).
 *
 *   bench_wheel_cvode ENGINE.h5 T_END RTOL ATOL EVENTS_OUT [MEMBERS] [adams|bdf]
 *
 * The same mode machine as src/engine/evolve.c (slip+ / slip- / sliding; crossing or sliding
 * decided by L± = grad h · f(x, ±1) on arrival; sliding ends where L+ or L- reaches 0 or at
 * the two-fold within the capture radius 1e-6), with the wheel kernel's own functions
 * (kernel->slip, kernel->switching, tf_filippov_tangencies, tf_filippov_field), but each
 * mode integrated by CVODE (Adams–Moulton with fixed-point iteration: the slip and sliding
 * fields are not stiff) and its events located by CVODE's rootfinding (CVodeRootInit,
 * direction -1 on functions that are positive inside the mode's domain).  Every member
 * starts from slot 0 of the engine's /members/exits and continues after the k-th two-fold
 * visit from slot k (replay), so both follow the same trajectories.  The parameters are read
 * from the file's /model attributes.
 *
 * Writes EVENTS_OUT ("member t kind from to" per event) and prints one JSON line. */
#include <cvode/cvode.h>
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "evolve.h"
#include "filippov.h"
#include "kernel.h"
#include "singularity.h"

enum { N = 3 };

static const tf_kernel *K;
static double P[32];
static double XS[N]; /* the two-fold */
static double CAPTURE = 1e-6;
static long nrhs;

typedef struct mode_ctx {
  int mode; /* -1, 0, 1 */
  double t0, h0;
} mode_ctx;

static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud) {
  const mode_ctx *c = ud;
  const double *x = N_VGetArrayPointer(y);
  double *dx = N_VGetArrayPointer(ydot);
  nrhs++;
  if (c->mode != 0) {
    K->filippov->slip(t, x, c->mode, P, dx);
    return 0;
  }
  double lp, lm;
  tf_filippov_tangencies(K, P, x, &lp, &lm);
  const double den = lm - lp;
  tf_filippov_field(K, P, x, den != 0.0 ? (lp + lm) / den : 0.0, dx);
  return 0;
}

/* Positive inside the mode's domain.  A slip phase starts on Sigma: h(x0) (round-off) is
 * subtracted and the first 1e-10 time units are counted as inside, as in wheel_scipy.py. */
static int roots(sunrealtype t, N_Vector y, sunrealtype *g, void *ud) {
  const mode_ctx *c = ud;
  const double *x = N_VGetArrayPointer(y);
  if (c->mode != 0) {
    const double v = c->mode * (K->filippov->switching(x, P, NULL) - c->h0);
    g[0] = t - c->t0 < 1e-10 ? fmax(v, 1e-300) : v;
    return 0;
  }
  double lp, lm;
  tf_filippov_tangencies(K, P, x, &lp, &lm);
  g[0] = -lp;
  g[1] = lm;
  double d2 = 0;
  for (int i = 0; i < N; i++) d2 += (x[i] - XS[i]) * (x[i] - XS[i]);
  g[2] = d2 - CAPTURE * CAPTURE;
  return 0;
}

static void project(double *x) {
  double grad[N];
  for (int it = 0; it < 3; it++) {
    const double h = K->filippov->switching(x, P, grad);
    const double g2 = grad[0] * grad[0] + grad[1] * grad[1] + grad[2] * grad[2];
    if (g2 == 0.0 || h == 0.0) return;
    for (int i = 0; i < N; i++) x[i] -= h * grad[i] / g2;
  }
}

static int read_params(hid_t f) {
  for (size_t i = 0; i < K->nparams; i++) {
    P[i] = K->params[i].def;
    if (H5Aexists_by_name(f, "model", K->params[i].name, H5P_DEFAULT) > 0) {
      hid_t a = H5Aopen_by_name(f, "model", K->params[i].name, H5P_DEFAULT, H5P_DEFAULT);
      H5Aread(a, H5T_NATIVE_DOUBLE, &P[i]);
      H5Aclose(a);
    }
  }
  tf_error err;
  if (K->prepare && K->prepare(P, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  return 0;
}

/* /members/exits: per member, slots of the attribute slot_width values (t, u, side, ...,
 * then the state r, v, omega last: the engine's fields attribute names them). */
static double *read_exits(hid_t f, hsize_t *members, hsize_t *slots, hsize_t *width) {
  hid_t d = H5Dopen2(f, "members/exits", H5P_DEFAULT);
  if (d < 0) return NULL;
  long long w = 0;
  hid_t a = H5Aopen(d, "slot_width", H5P_DEFAULT);
  if (a >= 0) H5Aread(a, H5T_NATIVE_LLONG, &w), H5Aclose(a);
  hid_t s = H5Dget_space(d);
  hsize_t dims[2];
  H5Sget_simple_extent_dims(s, dims, NULL);
  double *buf = w >= 6 ? malloc(dims[0] * dims[1] * sizeof *buf) : NULL;
  if (buf) H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  H5Sclose(s);
  H5Dclose(d);
  if (!buf) fprintf(stderr, "wheel_cvode: /members/exits has no slot_width >= 6\n");
  *members = dims[0];
  *width = (hsize_t)w;
  *slots = w ? dims[1] / (hsize_t)w : 0;
  return buf;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 6) {
    fprintf(stderr, "usage: %s ENGINE.h5 T_END RTOL ATOL EVENTS_OUT [MEMBERS] [adams|bdf]\n",
            argv[0]);
    return 2;
  }
  const double t_end = atof(argv[2]), rtol = atof(argv[3]), atol = atof(argv[4]);
  const int bdf = argc > 7 && strcmp(argv[7], "bdf") == 0;
  K = tf_kernel_find("wheel");
  hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0 || read_params(f)) return 1;
  hsize_t members, slots;
  hsize_t width;
  double *exits = read_exits(f, &members, &slots, &width);
  H5Fclose(f);
  if (!exits) return 1;
  if (argc > 6 && strtol(argv[6], NULL, 10) > 0 && (hsize_t)strtol(argv[6], NULL, 10) < members)
    members = (hsize_t)strtol(argv[6], NULL, 10);
  double guess[N];
  int it;
  tf_error err;
  if (K->filippov->twofold_guess(P, guess) ||
      tf_twofold_locate(K, P, guess, 1e-12, 50, XS, &it, &err)) {
    fprintf(stderr, "two-fold: %s\n", err.msg);
    return 1;
  }
  FILE *out = fopen(argv[5], "w");
  if (!out) return 1;

  SUNContext sctx;
  SUNContext_Create(NULL, &sctx);
  N_Vector y = N_VNew_Serial(N, sctx);
  void *mem = CVodeCreate(bdf ? CV_BDF : CV_ADAMS, sctx);
  mode_ctx mc = {0};
  CVodeInit(mem, rhs, 0.0, y);
  CVodeSStolerances(mem, rtol, atol);
  CVodeSetUserData(mem, &mc);
  CVodeSetMaxNumSteps(mem, 100000000L);
  CVodeSetNoInactiveRootWarn(mem);
  SUNNonlinearSolver nls = NULL;
  SUNMatrix A = NULL;
  SUNLinearSolver LS = NULL;
  if (!bdf) {
    nls = SUNNonlinSol_FixedPoint(y, 0, sctx);
    CVodeSetNonlinearSolver(mem, nls);
  } else {
    /* BDF needs a linear solver: dense Newton with a difference-quotient Jacobian */
    A = SUNDenseMatrix(N, N, sctx);
    LS = SUNLinSol_Dense(y, A, sctx);
    CVodeSetLinearSolver(mem, LS, A);
  }

  long total_events = 0, nsteps_total = 0, status_ok = 0, status_zeno = 0, status_other = 0;
  const double begin = MPI_Wtime();
  for (hsize_t m = 0; m < members; m++) {
    const double *slot0 = exits + m * slots * width;
    double t = slot0[0], *x = N_VGetArrayPointer(y);
    memcpy(x, slot0 + width - N, sizeof(double) * N);
    int mode = (int)slot0[2];
    hsize_t visits = 1;
    long events = 0, win_n = 0;
    double win_t = t;
    int status = 0; /* 0 ok, 1 zeno, 2 failed/replay exhausted */
    while (t < t_end) {
      mc.mode = mode, mc.t0 = t, mc.h0 = mode != 0 ? K->filippov->switching(x, P, NULL) : 0.0;
      CVodeReInit(mem, t, y);
      const int nr = mode != 0 ? 1 : 3;
      int dirs[3] = {-1, -1, -1};
      CVodeRootInit(mem, nr, roots);
      CVodeSetRootDirection(mem, dirs);
      double tret;
      const int flag = CVode(mem, t_end, y, &tret, CV_NORMAL);
      long ns;
      CVodeGetNumSteps(mem, &ns);
      nsteps_total += ns;
      if (flag < 0) {
        status = 2;
        break;
      }
      t = tret;
      if (flag != CV_ROOT_RETURN) break;
      int found[3] = {0, 0, 0};
      CVodeGetRootInfo(mem, found);
      int which = found[0] ? 0 : found[1] ? 1 : 2;
      int kind, from = mode, to;
      if (mode != 0) {
        project(x);
        double lp, lm;
        tf_filippov_tangencies(K, P, x, &lp, &lm);
        const double other = mode == 1 ? lm : lp;
        if (mode * other < 0)
          kind = 0, to = -mode;
        else
          kind = 1, to = 0;
        mode = to;
      } else if (which == 2) {
        fprintf(out, "%llu %.17g 3 0 0\n", (unsigned long long)m, t);
        events++;
        if (visits >= slots || isnan(slot0[visits * width])) {
          status = 2;
          break;
        }
        const double *s = slot0 + visits * width;
        visits++;
        memcpy(x, s + width - N, sizeof(double) * N);
        mode = (int)s[2];
        kind = 4, from = 0, to = mode;
      } else {
        kind = 2, to = which == 0 ? 1 : -1;
        mode = to;
      }
      fprintf(out, "%llu %.17g %d %d %d\n", (unsigned long long)m, t, kind, from, to);
      events++;
      if (events - win_n >= 100) {
        if ((double)(events - win_n) > 1e5 * (t - win_t)) {
          status = 1;
          break;
        }
        win_t = t, win_n = events;
      }
    }
    total_events += events;
    if (status == 0)
      status_ok++;
    else if (status == 1)
      status_zeno++;
    else
      status_other++;
  }
  const double wall = MPI_Wtime() - begin;
  fclose(out);
  printf(
      "{\"side\": \"cvode\", \"method\": \"%s\", \"members\": %llu, \"t_end\": %g, \"rtol\": %g, "
      "\"atol\": %g, \"wall_seconds\": %.6f, \"members_per_second\": %.6g, \"rhs_evals\": %ld, "
      "\"steps\": %ld, \"events\": %ld, \"status_counts\": {\"ok\": %ld, \"zeno\": %ld, "
      "\"failed\": %ld}}\n",
      bdf ? "BDF" : "Adams", (unsigned long long)members, t_end, rtol, atol, wall,
      (double)members / wall, nrhs, nsteps_total, total_events, status_ok, status_zeno,
      status_other);
  N_VDestroy(y);
  CVodeFree(&mem);
  if (nls) SUNNonlinSolFree(nls);
  if (LS) SUNLinSolFree(LS);
  if (A) SUNMatDestroy(A);
  SUNContext_Free(&sctx);
  free(exits);
  MPI_Finalize();
  return 0;
}
