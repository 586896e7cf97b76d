/* petsc_start.h — PETSc started only by the runs that use it.
 *
 * PetscInitialize costs 0.05–0.1 s, and only members integrated by PETSc TS need it: every
 * other run (most ensembles, check, info, array tasks) would pay it for nothing.  The
 * command line's PETSc options are kept until a job's setup asks for PETSc. */
#ifndef TF_PETSC_START_H
#define TF_PETSC_START_H

#include <mpi.h>
#include <stdbool.h>

#include "error.h"

/* Keeps argv[0] and the PETSc options of the command line (not copied: they must outlive
 * the run). */
void tf_petsc_remember_options(int argc, char **argv);

/* Starts PETSc with those options if it is not running yet, with PETSC_COMM_WORLD set to comm
 * (the run's communicator): collective over comm only, so call it from a job's setup, which
 * every rank of the run runs.  0 or -1. */
int tf_petsc_require(MPI_Comm comm, tf_error *err);

/* Ends PETSc if tf_petsc_require started it (collective over the comm it was started on);
 * warns (rank 0 of comm) if PETSc options were given to a run that never used PETSc. */
void tf_petsc_finish(MPI_Comm comm, bool warn);

#endif
