/* petsc_start.h — PETSc started only by the runs that use it.
 *
 * PetscInitialize costs 0.05–0.1 s, and loading PETSc's libraries as much again; only members
 * integrated by PETSc TS need either: every other run (most ensembles, check, info, array
 * tasks) would pay for nothing.  So PETSc lives in a module loaded on first use (ts_module.h),
 * and the command line's PETSc options are kept until a job's setup asks for PETSc. */
#ifndef TF_PETSC_START_H
#define TF_PETSC_START_H

#include <mpi.h>
#include <stdbool.h>

#include "error.h"

/* Keeps argv[0] and the PETSc options of the command line (not copied: they must outlive
 * the run, until tf_petsc_finish). */
void tf_petsc_remember_options(int argc, char **argv);

/* Loads the PETSc TS module (an error names its file if it cannot be) and starts PETSc with
 * those options if it is not running yet, with PETSC_COMM_WORLD set to comm (the run's
 * communicator): collective over comm only, so call it from a job's setup, which every rank of
 * the run runs.  0 or -1. */
int tf_petsc_require(MPI_Comm comm, tf_error *err);

/* Ends PETSc if tf_petsc_require started it (collective over the comm it was started on);
 * warns (rank 0 of comm) if PETSc options were given to a run that never used PETSc.  Forgets
 * the remembered options. */
void tf_petsc_finish(MPI_Comm comm, bool warn);

/* For twofold run inside a program (the library): whether that program has PETSc running
 * itself.  Then its PETSc is the one used, and the run's PETSc options go to an options
 * database pushed for the call (argv[0] is the program's name) and popped after it. */
bool tf_petsc_caller_runs_it(void);
int tf_petsc_push_options(int argc, char **argv, tf_error *err);
void tf_petsc_pop_options(void);

#endif
