/* intersection_policy.h — which departure a trajectory takes where the extended Filippov
 * verdict at an intersection of switching surfaces is `choice` (intersection.h).
 *
 * The admissible departures are the repelling limit directions, each of a kind: slip- (into
 * h < 0), slip+ (into h > 0), sliding (the sticking flow along Sigma, away from I) or escaping
 * (along Sigma where it escapes: itself a continuum, as at a two-fold).  The engine maps a
 * number u in (0, 1) onto them (evolve.h, tf_choice_fn: k departures take equal shares of
 * (0, 1) in the order of the analysis); a rule chooses u:
 *   uniform      u from the member's stream (seed, member, draw, exit): every admissible
 *                departure equally likely (the rule the engine always had);
 *   weighted     the same draw, but the departures' shares are proportional to
 *                intersection.weights[kind] (normalised over the admissible ones at each
 *                arrival); a kind of weight 0 is never taken while another is admissible.  If
 *                every admissible one weighs 0 the draw falls back to uniform and is logged so;
 *   regularised  the departure the smoothed system selects as eps -> 0
 *                (tf_meet_regularised), no random number;
 *   replay       the u logged for that member and draw in an earlier results file.
 * Whatever the rule, the logged u is the one the engine maps (the middle of the share for
 * regularised), so replaying a log reproduces the run; the log's kind column names the rule
 * (TF_DRAW_*).  Two-fold exits keep exit.policy (exit_policy.h). */
#ifndef TF_INTERSECTION_POLICY_H
#define TF_INTERSECTION_POLICY_H

#include <stdint.h>

#include "config.h"
#include "exit_policy.h"
#include "intersection.h"
#include "smooth.h"

typedef enum tf_choice_rule {
  TF_CHOICE_UNIFORM,
  TF_CHOICE_WEIGHTED,
  TF_CHOICE_REGULARISED,
  TF_CHOICE_REPLAY
} tf_choice_rule;

typedef enum tf_departure_kind {
  TF_DEPART_SLIP_MINUS,
  TF_DEPART_SLIP_PLUS,
  TF_DEPART_SLIDING,
  TF_DEPART_ESCAPING,
  TF_DEPART_KIND_COUNT
} tf_departure_kind;

/* The log's kind column (pws.h): 0 a two-fold exit, then one code per rule that made a choice
 * at an intersection (a replayed choice keeps its code). */
enum {
  TF_DRAW_TWOFOLD_EXIT = 0,
  TF_DRAW_CHOICE_UNIFORM = 1,
  TF_DRAW_CHOICE_WEIGHTED = 2,
  TF_DRAW_CHOICE_REGULARISED = 3
};

typedef struct tf_intersection_policy {
  tf_choice_rule rule;
  double weight[TF_DEPART_KIND_COUNT];
  tf_smoothing law;             /* regularised: the sigmoid (epsilon 1 in the blow-up's units) */
  double escape_distance;       /* how far along escaping sliding a departure detaches, at most */
  tf_replay_source replay_from; /* replay: the file to read into `replay` */
  tf_draw_log replay;
} tf_intersection_policy;

/* Reads intersection.* (policy, weights, smoothing_law, replay, escape_distance); `exit` is the
 * exit policy already read (its replay file and distance are the defaults).  A replay file is
 * only named here: tf_replay_logs_read (replay_log.h) fills the table. */
int tf_intersection_policy_from_config(tf_intersection_policy *pol, tf_config *cfg,
                                       const tf_exit_policy *exit, tf_error *err);
void tf_intersection_policy_destroy(tf_intersection_policy *pol);

const char *tf_choice_rule_name(tf_choice_rule r);
const char *tf_departure_kind_name(tf_departure_kind k);
tf_departure_kind tf_departure_kind_of(const tf_meet_direction *d);

/* u for the choice at `a`, the member's draw number `draw` (its count of logged draws), and the
 * log code of the rule that made it.  Returns 0, or -1 where a replay log has no entry. */
int tf_intersection_policy_choose(const tf_intersection_policy *pol, uint64_t seed, uint64_t member,
                                  long draw, const tf_meet_arrival *a, double *u, int *code);

#endif
