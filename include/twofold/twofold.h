/* twofold/twofold.h — running a twofold config from another MPI program (public).
 *
 * One call does what `twofold run` does, on the caller's communicator: the same config
 * checks, the same results file, the same exit statuses, so a program that embeds twofold
 * and a shell script that calls the executable see the same behaviour.  The caller owns MPI
 * (it has called MPI_Init and will call MPI_Finalize); twofold initialises PETSc only if it is
 * not initialised yet and then finalises it before returning, and leaves the process's signal
 * handlers, GSL error handler and HDF5 error printing as it found them.
 *
 * Both calls are collective over `comm` (every rank passes the same arguments) and return
 * the same status on every rank.  On failure the message (what `twofold run` prints after
 * "twofold: error: ", e.g. naming the config file, line and key) is copied to errbuf on every
 * rank and not printed (twofold_run_config runs quietly, so it prints nothing).  The calling
 * program is never aborted for bad input.  The one exception is a failed write of the
 * results file (a full disk): as in the executable, the run's communicator is aborted
 * (MPI_Abort; with Open MPI that ends the whole MPI job), because parallel HDF5 cannot recover
 * from it and its ranks would otherwise hang; what was flushed before is kept for a resume.  That
 * guard (which wraps MPI_File_write_at and MPI_File_write_at_all through the MPI profiling
 * interface) is active only during a call: the program's own MPI-IO writes are its own.  Signals
 * stay the caller's too: a run inside a program stops early only by --time-limit or --stop-after
 * (twofold_run_args), with status 3.
 */
#ifndef TWOFOLD_TWOFOLD_H
#define TWOFOLD_TWOFOLD_H

#include <mpi.h>
#include <stddef.h>

#include "twofold/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exit statuses of `twofold run`, returned by the calls below. */
enum {
  TWOFOLD_OK = 0,             /* done: the results file is complete */
  TWOFOLD_ERROR = 1,          /* runtime error (a solver gave up, MPI, memory, ...) */
  TWOFOLD_USAGE = 2,          /* bad arguments, config or input; the output file is untouched */
  TWOFOLD_INTERRUPTED = 3,    /* stopped (--time-limit, --stop-after): resume to finish */
  TWOFOLD_MEMBERS_FAILED = 4, /* complete, but every member failed or more than
                                 run.max_failed_fraction of them; errbuf names them */
  TWOFOLD_MODEL = 5,          /* the model cannot be set up (a plugin that does not compile or
                                 load, a definition refused, a model refusing its parameters) */
  TWOFOLD_IO = 6,             /* the output cannot be written (its directory refuses the file,
                                 a write failed) */
  TWOFOLD_INTERNAL = 7        /* an internal error (a bug to report) */
};

/* The library's version, "MAJOR.MINOR.PATCH"; compare with TWOFOLD_VERSION_STRING to detect
 * a header that does not match the library loaded at run time. */
const char *twofold_version(void);

/* Runs CONFIG as `twofold run CONFIG -o OUTPUT --set K=V ... --quiet` on comm.
 *   output_path  NULL: the config's output.file, else the config's name with .h5; an
 *                existing file is refused (TWOFOLD_USAGE), as without --overwrite
 *   overrides    "path=value" strings (e.g. "ensemble.members=100"), NULL-terminated, or NULL
 *   errbuf       receives the error message (truncated to errlen - 1); may be NULL */
int twofold_run_config(MPI_Comm comm, const char *config_path, const char *output_path,
                       const char *const *overrides, char *errbuf, size_t errlen);

/* Runs `twofold run ARGS...` on comm: argv holds the arguments after `run` exactly as on the
 * command line (the config, -o, --set, --overwrite, --resume, --json, --stop-after, PETSc
 * options such as -ts_type rosw, ...; see `twofold --help`).  PETSc options apply to this
 * call only, also when the caller has initialised PETSc itself. */
int twofold_run_args(MPI_Comm comm, int argc, const char *const *argv, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
