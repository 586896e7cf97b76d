/* error.h — one error type for the whole engine.
 *
 * Errors travel as a message buffer filled where the problem is understood (the config
 * loader knows file, line and key; the kernel knows which parameter is out of range) and
 * printed once at the top, with a code saying what kind of failure it is.  The code is set
 * where the error is raised and kept when a caller adds what it knows (tf_fail_more); control
 * flow and exit statuses are decided on the code, never on the message's text.  Functions
 * return 0 on success and -1 on failure. */
#ifndef TF_ERROR_H
#define TF_ERROR_H

#include <stdbool.h>
#include <stddef.h>

#include "twofold/model.h" /* tf_error is part of the public model interface */

/* What kind of failure an error is (tf_error.code).  Only the executable turns a code into an
 * exit status (cli.c, tf_exit_status). */
typedef enum tf_error_code {
  TF_ERR_NONE = 0,
  TF_ERR_RUNTIME,            /* a computation or the system failed: memory, MPI, a solver */
  TF_ERR_IO,                 /* the output cannot be written: its place refuses a file, an HDF5
                                write or flush failed (the results file is broken) */
  TF_ERR_CONFIG,             /* the input is wrong: command line, config key, a file it names */
  TF_ERR_CONFIG_MISSING_KEY, /* a required config key is absent (often a misspelt one) */
  TF_ERR_INPUT_FILE,         /* the config file cannot be opened */
  TF_ERR_MODEL,              /* the model cannot be set up: a plugin that does not compile or
                                load, a definition the checker refuses, a model refusing its
                                parameters (prepare) */
  TF_ERR_INTERNAL,           /* twofold broke its own rule: a bug to report */
  TF_ERR_CODE_COUNT
} tf_error_code;

/* Overwrites err->msg (printf-style) and sets the code TF_ERR_RUNTIME.  Always returns -1 so
 * callers can `return tf_fail(...)`. */
int tf_fail(tf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with the given code. */
int tf_fail_code(tf_error *err, tf_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Overwrites err->msg keeping its code: for a caller that rewrites an error it got (with the
 * old message copied into its arguments) to say where it happened. */
int tf_fail_more(tf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Gives err, filled already, the code `code` and returns -1: for a caller that knows better than
 * the callee what its failure means (a results file refused on --resume is the input's fault,
 * whatever call found it). */
int tf_error_mark(tf_error *err, tf_error_code code);
/* The error's code; a code out of range (a buffer no tf_fail filled) is TF_ERR_RUNTIME. */
tf_error_code tf_error_code_of(const tf_error *err);
/* True for the codes of bad input (usage, config, input files): TF_EXIT_USAGE. */
bool tf_error_is_input(tf_error_code code);
/* True if a and b are the same error (code and message): ranks say an error once. */
bool tf_error_same(const tf_error *a, const tf_error *b);

/* Process exit codes: distinct so scripts and SLURM can tell what happened. */
enum tf_exit_code {
  TF_EXIT_OK = 0,
  TF_EXIT_ERROR = 1,          /* runtime failure (a solver, MPI, memory, ...): TF_ERR_RUNTIME */
  TF_EXIT_USAGE = 2,          /* bad command line, bad config, bad input file: tf_error_is_input */
  TF_EXIT_INTERRUPTED = 3,    /* checkpointed on a signal or the time limit; resume with --resume */
  TF_EXIT_MEMBERS_FAILED = 4, /* complete, but every member failed or more than
                                 run.max_failed_fraction of them (src/run/failures.h) */
  TF_EXIT_MODEL = 5,          /* the model cannot be set up: TF_ERR_MODEL */
  TF_EXIT_IO = 6,             /* the output cannot be written: TF_ERR_IO */
  TF_EXIT_INTERNAL = 7        /* an internal error: TF_ERR_INTERNAL */
};
/* A job whose members partly failed (no more than run.max_failed_fraction) exits TF_EXIT_OK:
 * failures are results, recorded per member in /members/status, counted in the JSON summary
 * and on stderr. */

#endif
