/* checkpoint.h — when to stop early: signals and the wall-time budget.
 *
 * SIGTERM, SIGUSR1 and SIGINT only set a flag; the ensemble scheduler polls it between
 * members, so every rank finishes its current member, the results are flushed collectively
 * and the file is closed in a consistent state that `--resume` completes.  (Under mpiexec,
 * Open MPI forwards SIGUSR1 to the ranks but kills the job on SIGTERM; SLURM signals the
 * ranks directly.)  A second SIGINT restores the default action, so a stuck run can still
 * be killed from the terminal. */
#ifndef TF_CHECKPOINT_H
#define TF_CHECKPOINT_H

#include <stdbool.h>

void tf_checkpoint_install_handlers(void);
/* The signal received (0 if none). */
int tf_checkpoint_signal(void);
/* True if a signal arrived or the time budget (seconds since start, 0 = none) is spent. */
bool tf_checkpoint_should_stop(double start_time, double time_limit);

#endif
