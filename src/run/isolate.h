/* isolate.h — members computed in a worker process (--isolate, run.isolate).
 *
 * The model's code is the user's: a segfault, an abort, a call of exit() or an endless loop in
 * it ends the process that runs it.  Isolated, a rank forks one worker that computes members
 * one at a time and sends each row back over a socket; the rank keeps all MPI and HDF5.  A
 * member whose model kills the worker (a signal, or exit) ends `crashed`, one that runs longer
 * than run.member_time_limit is killed and ends `timeout`; the rank says why, starts a new
 * worker for the next member, and the ensemble goes on.  The worker never calls MPI or HDF5
 * (fork after MPI_Init is safe only so): it computes members with the engine the rank set up
 * before the fork, and only that.  Rows of members that did not crash are the bytes the rank
 * itself would have computed: a member's result depends on its id alone (rng.h).
 *
 * A worker ignores SIGINT, SIGTERM and SIGUSR1 (the rank stops at the member boundary as it
 * would without isolation) and dies with its rank (PR_SET_PDEATHSIG). */
#ifndef TF_ISOLATE_H
#define TF_ISOLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ensemble.h"

typedef struct tf_isolate tf_isolate;

/* True when the run is to stop (a signal, the time limit). */
typedef bool (*tf_isolate_stop_fn)(void *ctx);

/* The runner of spec's members; member_time_limit > 0: seconds of wall time per member;
 * `stop` is asked about ten times a second while a member runs.  No worker is started yet.
 * NULL: out of memory. */
tf_isolate *tf_isolate_create(const tf_ensemble_spec *spec, double member_time_limit,
                              tf_isolate_stop_fn stop, void *stop_ctx);

/* Computes member `member` in the worker into row (the slots of spec's columns) and returns
 * its status, as spec->run would.  crashed and timeout fill the row with NaN (integers 0) and
 * say why in why[n] and in the text columns (the crash's signal, t and state, as the worker
 * described it before it died); why and the text columns are empty otherwise.  If `stop` says so
 * before the member is done, the worker is killed and the member is pending (computed again on
 * resume): a model call that never returns does not hold up a stop. */
int tf_isolate_member(tf_isolate *w, uint64_t member, void *const *row, char *why, size_t n);

/* Ends the worker (SIGKILL: it holds nothing of the results) and frees w. */
void tf_isolate_destroy(tf_isolate *w);

#endif
