/* stiff_cvode.c — the smoothed (stiff) wheel on SUNDIALS CVODE BDF: the baseline that
 * bench/section_stiff.sh sets against twofold's PETSc TS members.
 *
 *   bench_stiff_cvode ENGINE.h5 T_END RTOL ATOL LAW EPSILON FIELD [MEMBERS [JACOBIAN]]
 *
 * Same model and smoothing as the engine (the kernel's own slip/stick functions through
 * tf_smooth_rhs, parameters from the file's /model attributes), same initial states (the
 * file's /members/initial_state), integrated from t = 0 to T_END by CVODE's variable-order
 * BDF with a dense Newton solver and CVODE's difference-quotient Jacobian (JACOBIAN dq, the
 * default) or the same analytic Jacobian the engine uses (JACOBIAN analytic: the chain rule
 * through the kernel's slip_jacobian, tf_smooth_jacobian).  Prints one JSON
 * line: members/s, steps, right-hand sides, Jacobians, and the final states (for the error
 * against a reference computed by the caller). */
#include <cvode/cvode.h>
#include <hdf5.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <time.h>

#include "kernel.h"
#include "smooth.h"

enum { N = 3 };

static const tf_kernel *K;
static double P[32];
static tf_smoothing S;
static long nrhs;

static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud) {
  (void)ud;
  nrhs++;
  tf_smooth_rhs(K, P, &S, t, N_VGetArrayPointer(y), N_VGetArrayPointer(ydot));
  return 0;
}

/* No MPI_Init: a serial CVODE program does not start Open MPI (its singleton start-up alone
 * costs 0.3 s), so its whole-process time is a fair baseline. */
static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int jacobian(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix A, void *ud, N_Vector t1,
                    N_Vector t2, N_Vector t3) {
  (void)fy, (void)ud, (void)t1, (void)t2, (void)t3;
  double jac[N * N];
  tf_smooth_jacobian(K, P, &S, t, N_VGetArrayPointer(y), jac);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) SM_ELEMENT_D(A, i, j) = jac[i * N + j];
  return 0;
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
    fprintf(stderr, "stiff_cvode: %s\n", err.msg);
    return -1;
  }
  return 0;
}

static double *read_initial(hid_t f, hsize_t *members) {
  hid_t d = H5Dopen2(f, "members/initial_state", H5P_DEFAULT);
  if (d < 0) return NULL;
  hid_t s = H5Dget_space(d);
  hsize_t dims[2];
  H5Sget_simple_extent_dims(s, dims, NULL);
  double *buf = dims[1] == N ? malloc(dims[0] * N * sizeof *buf) : NULL;
  if (buf) H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  H5Sclose(s);
  H5Dclose(d);
  *members = dims[0];
  return buf;
}

static int parse_smoothing(const char *law, double eps, const char *field) {
  S.epsilon = eps;
  if (strcmp(law, "tanh") == 0)
    S.law = TF_SMOOTH_TANH;
  else if (strcmp(law, "sqrt") == 0)
    S.law = TF_SMOOTH_SQRT;
  else if (strcmp(law, "linear") == 0)
    S.law = TF_SMOOTH_LINEAR;
  else
    return -1;
  if (strcmp(field, "convex") == 0)
    S.field = TF_SMOOTH_CONVEX;
  else if (strcmp(field, "stick") == 0)
    S.field = TF_SMOOTH_STICK;
  else
    return -1;
  return eps > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr,
            "usage: %s ENGINE.h5 T_END RTOL ATOL LAW EPSILON FIELD [MEMBERS [dq|analytic]]\n",
            argv[0]);
    return 2;
  }
  const double t_end = atof(argv[2]), rtol = atof(argv[3]), atol = atof(argv[4]);
  K = tf_kernel_find("wheel");
  if (parse_smoothing(argv[5], atof(argv[6]), argv[7])) {
    fprintf(stderr, "stiff_cvode: bad smoothing %s %s %s\n", argv[5], argv[6], argv[7]);
    return 2;
  }
  hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0 || read_params(f)) return 1;
  hsize_t members;
  double *x0 = read_initial(f, &members);
  H5Fclose(f);
  if (!x0) return 1;
  if (argc > 8 && strtol(argv[8], NULL, 10) > 0 && (hsize_t)strtol(argv[8], NULL, 10) < members)
    members = (hsize_t)strtol(argv[8], NULL, 10);

  SUNContext sctx;
  SUNContext_Create(NULL, &sctx);
  N_Vector y = N_VNew_Serial(N, sctx);
  void *mem = CVodeCreate(CV_BDF, sctx);
  CVodeInit(mem, rhs, 0.0, y);
  CVodeSStolerances(mem, rtol, atol);
  CVodeSetMaxNumSteps(mem, 100000000L);
  SUNMatrix A = SUNDenseMatrix(N, N, sctx);
  SUNLinearSolver LS = SUNLinSol_Dense(y, A, sctx);
  CVodeSetLinearSolver(mem, LS, A);
  const bool analytic = argc > 9 && strcmp(argv[9], "analytic") == 0;
  if (analytic && !tf_smooth_has_jacobian(K, &S)) {
    fprintf(stderr, "stiff_cvode: no analytic Jacobian for this field\n");
    return 2;
  }
  if (analytic) CVodeSetJacFn(mem, jacobian);

  double *final = malloc(members * N * sizeof *final);
  long steps = 0, jacs = 0, failed = 0;
  const double begin = seconds();
  for (hsize_t m = 0; m < members; m++) {
    memcpy(N_VGetArrayPointer(y), x0 + m * N, sizeof(double) * N);
    CVodeReInit(mem, 0.0, y);
    double t;
    if (CVode(mem, t_end, y, &t, CV_NORMAL) < 0) failed++;
    long ns, nj;
    CVodeGetNumSteps(mem, &ns);
    CVodeGetNumJacEvals(mem, &nj);
    steps += ns, jacs += nj;
    memcpy(final + m * N, N_VGetArrayPointer(y), sizeof(double) * N);
  }
  const double wall = seconds() - begin;
  printf(
      "{\"code\": \"cvode-bdf\", \"jacobian\": \"%s\", \"members\": %llu, \"seconds\": %.6g, "
      "\"members_per_s\": %.6g, "
      "\"steps\": %ld, \"rhs_evals\": %ld, \"jacobian_evals\": %ld, \"failed\": %ld, "
      "\"final_state\": [",
      analytic ? "analytic" : "dq", (unsigned long long)members, wall, (double)members / wall,
      steps, nrhs, jacs, failed);
  for (hsize_t i = 0; i < members * N; i++) printf("%s%.17g", i ? ", " : "", final[i]);
  printf("]}\n");
  free(final), free(x0);
  SUNLinSolFree(LS);
  SUNMatDestroy(A);
  N_VDestroy(y);
  CVodeFree(&mem);
  SUNContext_Free(&sctx);
  return 0;
}
