/* slurm.h — `twofold slurm`: sbatch scripts for a config, printed or submitted.
 *
 * Three shapes, the same as the hand-editable templates in cluster/:
 *   one job        one allocation of --ntasks ranks running the whole job;
 *   --array N      N array tasks, task K running `--part K/N` into its own part file, and a
 *                  merge job that starts when every task has ended and combines the parts
 *                  (`twofold merge`), naming any task that failed;
 *   --requeue      (with either) the job requeues itself after a checkpoint until done.
 * Every script asks SLURM for a warning signal (--signal=B:USR1@lead) that the batch shell
 * turns into a checkpoint of the engine, and always runs the engine with --resume, so a
 * requeued or resubmitted job continues where it stopped.  The scripts are generated here
 * rather than copied from cluster/ so that an installed executable needs no source tree;
 * the generated text is printed with --dry-run, which writes nothing.  Logs go next to the
 * output (OUT.logs/).  The config is validated (as by
 * `twofold check`) before anything is written. */
#ifndef TF_SLURM_H
#define TF_SLURM_H

#include <stdbool.h>

#include "error.h"

typedef struct tf_slurm_options {
  int array;  /* tasks of the job array; 0 = one job */
  int ntasks; /* MPI ranks per job (per array task) */
  int nodes;  /* 0 = let SLURM choose */
  int cpus_per_task;
  const char *time;       /* SLURM time limit, e.g. 2:00:00 */
  const char *merge_time; /* the merge job's own limit; default 00:30:00 */
  const char *partition, *account, *qos, *mem;
  const char *dir;         /* where the scripts go; default slurm-<config stem> (logs: OUT.logs/) */
  const char *launcher;    /* "srun" (srun --mpi=pmix) or "mpiexec" */
  const char *merge_after; /* dependency of the merge job on the array: "any" or "ok" */
  int signal_lead;         /* seconds before the time limit for the warning signal */
  bool requeue, dry_run;
  int pause_after; /* passed to the engine (--pause-after): a requeue test that cannot race */
  const char *modules[16]; /* `module load` lines */
  int nmodules;
  const char *sbatch_extra[16]; /* further #SBATCH lines (--sbatch=OPTION) */
  int nextra;
} tf_slurm_options;

void tf_slurm_defaults(tf_slurm_options *o);

/* Called before MPI_Init: the environment the submitted jobs inherit (MPI_Init adds
 * variables of its own that would confuse mpiexec inside the job). */
void tf_slurm_remember_environment(void);

/* 1 if `opt` (e.g. "--array") is a slurm option taking a value, 0 if a flag, -1 if unknown. */
int tf_slurm_option_arity(const char *opt);
int tf_slurm_set_option(tf_slurm_options *o, const char *opt, const char *value, tf_error *err);

typedef struct tf_slurm_job {
  const char *config; /* as given */
  const char *output; /* results file of the whole run (as resolved by the job) */
  const char *job;    /* job type, for the job name */
  bool splittable;    /* --array allowed */
  const char **sets;  /* --set overrides, passed on */
  int nsets;
  const char **petsc; /* PETSc options, passed on */
  int npetsc;
} tf_slurm_job;

/* Options that contradict each other or the job (bad usage). */
int tf_slurm_check(const tf_slurm_options *o, const tf_slurm_job *job, tf_error *err);

/* Prints the scripts (dry run: nothing written), or writes them into o->dir, submits them
 * with sbatch and prints the job ids. */
int tf_slurm_run(const tf_slurm_options *o, const tf_slurm_job *job, tf_error *err);

#endif
