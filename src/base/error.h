/* error.h — one error type for the whole engine.
 *
 * Errors travel as a message buffer filled where the problem is understood (the config
 * loader knows file, line and key; the kernel knows which parameter is out of range) and
 * printed once at the top.  Functions return 0 on success and -1 on failure. */
#ifndef TF_ERROR_H
#define TF_ERROR_H

#include <stddef.h>

#include "twofold/model.h" /* tf_error is part of the public model interface */

/* Overwrites err->msg (printf-style).  Always returns -1 so callers can `return tf_fail(...)`. */
int tf_fail(tf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Process exit codes: distinct so scripts and SLURM can tell what happened. */
enum tf_exit_code {
  TF_EXIT_OK = 0,
  TF_EXIT_ERROR = 1,         /* runtime failure (I/O, MPI, ...) */
  TF_EXIT_USAGE = 2,         /* bad command line, bad config, bad input file */
  TF_EXIT_INTERRUPTED = 3,   /* checkpointed on a signal or the time limit; resume with --resume */
  TF_EXIT_MEMBERS_FAILED = 4 /* complete, but every member failed or more than
                                run.max_failed_fraction of them (src/run/failures.h) */
};
/* A job whose members partly failed (no more than run.max_failed_fraction) exits TF_EXIT_OK:
 * failures are results, recorded per member in /members/status, counted in the JSON summary
 * and on stderr. */

#endif
