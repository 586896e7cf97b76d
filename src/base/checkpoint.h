/* checkpoint.h — when to stop early: signals and the wall-time budget.
 *
 * SIGTERM, SIGUSR1 and SIGINT only set a flag; the ensemble scheduler polls it between
 * members, so every rank finishes its current member, the results are flushed collectively
 * and the file is closed in a consistent state that `--resume` completes.  (Under mpiexec,
 * Open MPI forwards SIGUSR1 to the ranks but kills the job on SIGTERM; SLURM signals the
 * ranks directly.)  A second SIGINT restores the default action, so a stuck run can still
 * be killed from the terminal.
 *
 * Jobs that are one computation stop inside it through a stop token (below). */
#ifndef TF_CHECKPOINT_H
#define TF_CHECKPOINT_H

#include <stdbool.h>

void tf_checkpoint_install_handlers(void);
/* The signal received (0 if none). */
int tf_checkpoint_signal(void);
/* True if a signal arrived or the time budget (seconds since start, 0 = none) is spent. */
bool tf_checkpoint_should_stop(double start_time, double time_limit);

/* A stop token: where a computation may stop early.  The signal handler sets one flag; an
 * engine sees it, and the time budget, only through the token its job gave it.  Armed by a
 * job that is one computation (lyapunov, trajectory) with the run's budget; the engine asks it
 * at the places where it can stop and still report something meaningful (a Lyapunov block, a
 * trajectory sample).  `--stop-after N` and `--pause-after N` count those points, so tests
 * interrupt them without racing the clock.  Unarmed or NULL (members inside a scheduler),
 * it never says stop. */
typedef struct tf_stop_token {
  bool armed, stopped;
  double start, limit;
  long long stop_after, pause_after, points;
} tf_stop_token;

/* Arms t with the budget (time_limit, stop_after, pause_after 0: none).  At the
 * pause_after-th point it says 'paused' on stderr and waits for a signal or the time limit,
 * then stops there: interruption tests that cannot race. */
void tf_stop_arm(tf_stop_token *t, double start_time, double time_limit, long long stop_after,
                 long long pause_after);
void tf_stop_disarm(tf_stop_token *t);
/* Counts one safe point; true (and from then on) if the computation should stop there: a
 * signal, the time limit, or the stop_after-th point. */
bool tf_stop_point(tf_stop_token *t);
/* Polls the signal and the time budget without counting a point (for places that can stop
 * often, such as every step of a PETSc TS solve); true once stopped. */
bool tf_stop_poll(tf_stop_token *t);
/* True once tf_stop_point or tf_stop_poll has said stop. */
bool tf_stop_requested(const tf_stop_token *t);
/* Safe points counted since arming. */
long long tf_stop_points(const tf_stop_token *t);

#endif
