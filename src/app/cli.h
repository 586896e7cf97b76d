/* cli.h — the `twofold` command line (see `twofold --help`). */
#ifndef TF_CLI_H
#define TF_CLI_H

#include <mpi.h>

#include "error.h"

int tf_cli_main(int argc, char **argv);

/* `twofold run` inside a program that owns MPI (the library entry point, twofold.c): argv is a
 * command line {"twofold", "run", args...}; collective on comm; returns the exit status and
 * leaves the message of a failure in err instead of printing it. */
int tf_cli_run_embedded(MPI_Comm comm, int argc, char **argv, tf_error *err);

#endif
