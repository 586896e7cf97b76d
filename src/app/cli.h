/* cli.h — the `twofold` command line (see `twofold --help`). */
#ifndef TF_CLI_H
#define TF_CLI_H

#include <mpi.h>

#include "error.h"
#include "job.h"

int tf_cli_main(int argc, char **argv);

/* The exit status of `twofold run` (and the library's TWOFOLD_* status): a job that failed
 * (rc != 0) exits by its error's code: TF_EXIT_USAGE for bad input (tf_error_is_input),
 * TF_EXIT_MODEL, TF_EXIT_IO and TF_EXIT_INTERNAL for those codes, TF_EXIT_ERROR for a runtime
 * error; one that returned 0 by its outcome. */
int tf_exit_status(int rc, const tf_error *err, tf_run_outcome outcome);

/* `twofold run` inside a program that owns MPI (the library entry point, twofold.c): argv is a
 * command line {"twofold", "run", args...}; collective on comm; returns the exit status and
 * leaves the message of a failure in err instead of printing it. */
int tf_cli_run_embedded(MPI_Comm comm, int argc, char **argv, tf_error *err);

#endif
