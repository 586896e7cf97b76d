/* job.h — what a job type is, and the run context every job receives.
 *
 * A job (jobs/<name>.c, selected by `job:` in the config) is glue: `setup` reads every
 * config key it needs (so `twofold check` is `setup` alone and unknown keys can be found
 * afterwards), `execute` calls the engine and writes the output file, `destroy` frees.
 * The build generates the registry from the files in jobs/. */
#ifndef TF_JOB_H
#define TF_JOB_H

#include <mpi.h>
#include <stdbool.h>

#include "checkpoint.h"
#include "config.h"
#include "error.h"
#include "json.h"
#include "kinds.h"

/* Default of output.buffer_mb: the rows a rank buffers between flushes, with the flush's own
 * copies, stay within this many bytes, so memory per rank does not grow with the ensemble. */
#define TF_DEFAULT_BUFFER_BYTES (64ull << 20)

/* How a job that returned 0 ended; a job that returned -1 says why by its error's code.  Only
 * the executable turns either into an exit status (cli.c, tf_exit_status). */
typedef enum tf_run_outcome {
  TF_RUN_COMPLETE = 0,
  TF_RUN_INTERRUPTED,   /* stopped (a signal, the time limit, --stop-after): resume to finish */
  TF_RUN_MEMBERS_FAILED /* complete, but too many members failed (failures.h) */
} tf_run_outcome;

typedef struct tf_run {
  tf_config *cfg;
  const char *config_path;
  char output_path[4096];      /* resolved by the job's setup: -o, else output.file */
  const char *output_override; /* -o */
  bool resume, overwrite, json, quiet;
  bool discard_if_broken;    /* a write failure removes the file (a merge's temporary copy) */
  const char *progress_mode; /* "bar", "log" or NULL for automatic */
  double time_limit;         /* seconds of wall time, 0 = none */
  uint64_t buffer_bytes;     /* output.buffer_mb: results a rank holds between flushes */
  long long stop_after;      /* members done in this run after which to stop, 0 = none */
  long long pause_after;     /* members done after which to wait for a signal, 0 = none */
  int part, parts;           /* --part K/N: block K of N of the members (parts 0: all of them) */
  double start_time;         /* MPI_Wtime at start */
  tf_stop_token stop;        /* armed by jobs that are one computation, given to the engines */
  MPI_Comm comm;
  int rank, size;
  tf_json *summary;           /* fields for the --json line, filled by the job */
  tf_run_outcome outcome;     /* how the job ended when it returns 0 (an error says it by code) */
  double max_failed_fraction; /* run.max_failed_fraction (jobs on the scheduler) */
  bool isolate;               /* --isolate or run.isolate: members in a worker (isolate.h) */
  double member_time_limit;   /* run.member_time_limit: seconds per isolated member, 0 none */
  char failures[1024];        /* the failed members, said at the end of the run ("" if none) */
  bool restarts;              /* interrupted, and --resume starts the one computation again */
  /* An HDF5 write failed (reported already): HDF5's state differs between ranks, so a
   * collective close could hang or crash.  The job returns -1 without closing the file, and
   * the executable ends every rank without MPI_Finalize (cli.c). */
  bool file_broken;
  void *job_data;
} tf_run;

typedef struct tf_job {
  const char *name;
  const char *doc;
  int (*setup)(tf_run *run, tf_error *err);
  int (*execute)(tf_run *run, tf_error *err);
  void (*destroy)(tf_run *run);
  bool splittable; /* runs members through the scheduler, so --part K/N applies */
  unsigned kinds;  /* the kinds of model it takes (kinds.h), listed by `twofold models` */
} tf_job;

size_t tf_job_count(void);
const tf_job *tf_job_at(size_t i);
const tf_job *tf_job_find(const char *name);

/* Resolves run->output_path from -o or output.file (default: the config's stem + ".h5"),
 * and reads the other output.* keys common to all jobs into the given pointers (any may be
 * NULL). */
int tf_job_output_from_config(tf_run *run, int *compression, double *flush_interval, tf_error *err);

#endif
