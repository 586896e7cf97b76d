/* exit_policy.h — where a trajectory goes after a nondeterministic two-fold.
 *
 * At a Teixeira two-fold of case 1 the sliding flow enters the singularity and every
 * trajectory leaving it through the escaping region is a valid future.  We parametrise that
 * continuum by one number u in (0, 1): u < 1/2 leaves to h < 0, u >= 1/2 to h > 0, and
 * s = 2u mod 1 runs across the escaping sector of Sigma (the wedge L+ > 0 > L- in the plane
 * of f(x*, +1), f(x*, -1)), trimmed by a margin at both fold lines, at distance `distance`
 * from x*.  Policies choose u:
 *   uniform   u from the member's counter-based stream (seed, member, visit, EXIT)
 *   weighted  the same draw through the inverse CDF of a piecewise-constant density
 *   fixed     a given u
 *   replay    the u logged for that member and visit in an earlier results file
 * Every choice is logged (time, u, side, point), so any member can be replayed bit for bit. */
#ifndef TF_EXIT_POLICY_H
#define TF_EXIT_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "singularity.h"

typedef enum tf_exit_kind {
  TF_EXIT_UNIFORM,
  TF_EXIT_WEIGHTED,
  TF_EXIT_FIXED,
  TF_EXIT_REPLAY
} tf_exit_kind;

/* The draws logged in /members/exits of an earlier run (u and kind of every member and draw),
 * for replay of two-fold exits and of choices at intersections: a table in memory, filled by
 * the io layer (replay_log.h) before the run, so no policy reads a file. */
typedef struct tf_draw_log {
  double *u, *kind;
  uint64_t members;
  long draws;
} tf_draw_log;

/* The earlier results file a replaying policy asks for, as the config names it (path NULL:
 * no replay), with the key and its location for messages. */
typedef struct tf_replay_source {
  const char *path;
  const char *key;
  char where[256];
} tf_replay_source;

void tf_draw_log_free(tf_draw_log *log);
/* The logged u of (member, draw), its kind into *kind if not NULL; NAN if none was logged. */
double tf_draw_log_u(const tf_draw_log *log, uint64_t member, long draw, double *kind);

typedef struct tf_exit_policy {
  tf_exit_kind kind;
  double distance, margin, fixed;
  double *cdf; /* weighted: cumulative weights over nbins equal bins of u */
  int nbins;
  tf_replay_source replay_from; /* replay: the file to read into `replay` */
  tf_draw_log replay;           /* replay: the logged draws of every member */
  /* geometry at the two-fold */
  const tf_kernel *k;
  const double *p;
  double x_star[TF_MAX_DIM], e1[TF_MAX_DIM], e2[TF_MAX_DIM];
  double theta_lo, theta_hi; /* the escaping sector */
} tf_exit_policy;

/* Reads exit.* (policy, distance, margin, value, weights, replay).  A replay file is only
 * named here (replay_from): tf_replay_logs_read (replay_log.h) fills the table. */
int tf_exit_policy_from_config(tf_exit_policy *pol, tf_config *cfg, tf_error *err);
/* Computes the escaping sector at the two-fold t.  Fails if it has no escaping sector. */
int tf_exit_policy_setup(tf_exit_policy *pol, const tf_kernel *k, const double *p,
                         const tf_twofold *t, tf_error *err);
void tf_exit_policy_destroy(tf_exit_policy *pol);

/* The u for (member, visit); NAN if a replay log has no entry for it. */
double tf_exit_policy_draw(const tf_exit_policy *pol, uint64_t seed, uint64_t member, long visit);
/* The continuation point and side for u. */
void tf_exit_policy_point(const tf_exit_policy *pol, double u, double *x, int *side);

const char *tf_exit_kind_name(tf_exit_kind k);

#endif
