/* replay_log.h — the replay tables of a Filippov run, read from an earlier results file.
 *
 * exit.policy replay and intersection.policy replay take every draw from /members/exits of
 * an earlier run of the same ensemble.  The policies (exit_policy.h, intersection_policy.h)
 * only name the file (replay_from) and look draws up in a table in memory; reading the file
 * into that table is io, done here by the job's setup, so the numerics never open a file. */
#ifndef TF_REPLAY_LOG_H
#define TF_REPLAY_LOG_H

#include <stdint.h>

#include "error.h"
#include "exit_policy.h"
#include "intersection_policy.h"

/* Fills the table of each policy that names a replay file, for a run of `members` members
 * (the file must hold as many), at most max_logged draws each.  Errors name the key, where
 * the config gives it, and the file.  Call after both policies were read from the config. */
int tf_replay_logs_read(tf_exit_policy *exit, tf_intersection_policy *choice, uint64_t members,
                        long max_logged, tf_error *err);

#endif
