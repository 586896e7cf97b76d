/* checkpoint.h — when to stop early: signals and the wall-time budget.
 *
 * SIGTERM, SIGUSR1 and SIGINT only set a flag; the ensemble scheduler polls it between
 * members, so every rank finishes its current member, the results are flushed collectively
 * and the file is closed in a consistent state that `--resume` completes.  (Under mpiexec,
 * Open MPI forwards SIGUSR1 to the ranks but kills the job on SIGTERM; SLURM signals the
 * ranks directly.)  A second SIGINT restores the default action, so a stuck run can still
 * be killed from the terminal.
 *
 * Jobs that are one computation (lyapunov, trajectory) have no members to stop between: they
 * arm a stop point with the run's budget, and the engine polls it where it can stop and still
 * report something meaningful (a Lyapunov block, a trajectory sample).  `--stop-after N` and
 * `--pause-after N` then count those points, so tests interrupt them without racing the clock.
 * Unarmed (ensembles, scans), the poll is always false, so a member inside a scheduler is never cut
 * short. */
#ifndef TF_CHECKPOINT_H
#define TF_CHECKPOINT_H

#include <stdbool.h>

void tf_checkpoint_install_handlers(void);
/* The signal received (0 if none). */
int tf_checkpoint_signal(void);
/* True if a signal arrived or the time budget (seconds since start, 0 = none) is spent. */
bool tf_checkpoint_should_stop(double start_time, double time_limit);

/* Arms the stop point of a one-computation job (time_limit, stop_after, pause_after 0: none).
 * At the pause_after-th point it says 'paused' on stderr and waits for a signal or the time
 * limit, then stops there: interruption tests that cannot race. */
void tf_checkpoint_arm(double start_time, double time_limit, long long stop_after,
                       long long pause_after);
void tf_checkpoint_disarm(void);
/* Counts one safe point of the armed computation; true (and from then on) if it should stop
 * there: a signal, the time limit, or the stop_after-th point. */
bool tf_checkpoint_stop_point(void);
/* Polls the signal and time budget of the armed computation without counting a point (for
 * places that can stop often, such as every step of a PETSc TS solve); true once stopped. */
bool tf_checkpoint_poll(void);
/* True once tf_checkpoint_stop_point or tf_checkpoint_poll has said stop. */
bool tf_checkpoint_stopped(void);
/* Safe points counted since arming. */
long long tf_checkpoint_points(void);

#endif
