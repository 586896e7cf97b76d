/* lock.h — one writer per results file.
 *
 * Two runs writing the same file (a second `--resume` started while the first still runs)
 * would interleave flush rounds and corrupt it.  Rank 0 holds an advisory fcntl lock on
 * OUT.h5.lock, which holds its PID, for as long as the file is open; the kernel drops the
 * lock when the process dies, so a lock file left by a killed run is stale and simply taken
 * over. */
#ifndef TF_LOCK_H
#define TF_LOCK_H

#include "error.h"

/* Takes the lock of the results file `path`; fails naming the PID that holds it. */
int tf_lock_take(const char *path, tf_error *err);
/* Releases it and removes the lock file (no-op if not held). */
void tf_lock_release(void);

#endif
