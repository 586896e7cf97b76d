/* petsc_start.c — PETSc on demand (see petsc_start.h). */
#include "petsc_start.h"

#include <mpi.h>
#include <petscsys.h>
#include <stdio.h>
#include <string.h>

static int saved_argc;
static char **saved_argv;
static bool started;
static MPI_Comm world_before; /* PETSC_COMM_WORLD before we started PETSc on the run's comm */

void tf_petsc_remember_options(int argc, char **argv) {
  saved_argc = argc;
  saved_argv = argv;
}

int tf_petsc_require(MPI_Comm comm, tf_error *err) {
  PetscBool running = PETSC_FALSE;
  PetscInitialized(&running);
  if (running) return 0;
  int argc = saved_argc;
  char **argv = saved_argv;
  world_before = PETSC_COMM_WORLD;
  PETSC_COMM_WORLD = comm; /* PetscInitialize is collective on it: only the run's ranks call */
  if (PetscInitialize(argc ? &argc : NULL, argc ? &argv : NULL, NULL, NULL)) {
    PETSC_COMM_WORLD = world_before;
    return tf_fail(err, "PETSc could not be initialised");
  }
  started = true;
  return 0;
}

void tf_petsc_finish(MPI_Comm comm, bool warn) {
  if (started) {
    PetscFinalize();
    PETSC_COMM_WORLD = world_before;
    started = false;
    return;
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  /* argv[0] and -no_signal_handler are always there */
  if (warn && rank == 0 && saved_argc > 2) {
    fprintf(stderr, "twofold: warning: PETSc options given (");
    for (int i = 1; i < saved_argc; i++)
      if (strcmp(saved_argv[i], "-no_signal_handler") != 0)
        fprintf(stderr, "%s%s", i > 1 ? " " : "", saved_argv[i]);
    fprintf(stderr, ") but this run uses no PETSc TS integrator: ignored\n");
  }
}
