/* intersection_policy.c — see intersection_policy.h. */
#include "intersection_policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rng.h"

static const char *const rule_names[] = {"uniform", "weighted", "regularised", "replay", NULL};
static const char *const kind_names[] = {"slip-", "slip+", "sliding", "escaping"};

const char *tf_choice_rule_name(tf_choice_rule r) {
  return rule_names[r];
}

const char *tf_departure_kind_name(tf_departure_kind k) {
  return kind_names[k];
}

tf_departure_kind tf_departure_kind_of(const tf_meet_direction *d) {
  if (d->side < 0) return TF_DEPART_SLIP_MINUS;
  if (d->side > 0) return TF_DEPART_SLIP_PLUS;
  return d->escaping ? TF_DEPART_ESCAPING : TF_DEPART_SLIDING;
}

/* intersection.weights: a mapping from departure kind to weight >= 0; kinds left out weigh 0. */
static int read_weights(tf_intersection_policy *pol, tf_config *cfg, tf_error *err) {
  char where[256];
  if (!tf_config_is_mapping(cfg, "intersection.weights"))
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'intersection.weights': policy 'weighted' needs a mapping from "
        "departure kind to weight, e.g. {sliding: 1, slip-: 0, slip+: 0, escaping: 0}",
        tf_config_where(cfg, "intersection.weights", where, sizeof where));
  const char *names[16];
  size_t n;
  if (tf_config_keys(cfg, "intersection.weights", names, 16, &n, err)) return -1;
  for (size_t i = 0; i < n; i++) {
    char key[128];
    snprintf(key, sizeof key, "intersection.weights.%s", names[i]);
    int kind = -1;
    for (int j = 0; j < TF_DEPART_KIND_COUNT; j++)
      if (strcmp(names[i], kind_names[j]) == 0) kind = j;
    if (kind < 0)
      return tf_fail_code(
          err, TF_ERR_CONFIG,
          "%s: key '%s': unknown departure kind '%s' (expected slip-, slip+, sliding "
          "or escaping)",
          tf_config_where(cfg, key, where, sizeof where), key, names[i]);
    if (tf_config_get_double(cfg, key, NULL, 0.0, INFINITY, &pol->weight[kind], err)) return -1;
  }
  return 0;
}

/* The keys that belong to another policy than the one chosen are refused, not ignored. */
static int refuse_key(tf_config *cfg, const char *key, const char *policy, tf_error *err) {
  if (!tf_config_has(cfg, key)) return 0;
  char where[256];
  return tf_fail_code(err, TF_ERR_CONFIG,
                      "%s: key '%s' applies only to intersection.policy '%s' (remove it, or set "
                      "intersection.policy: %s)",
                      tf_config_where(cfg, key, where, sizeof where), key, policy, policy);
}

/* Names the file to replay (exit.replay's when intersection.replay is not given); the table
 * is read by tf_replay_logs_read. */
static int read_replay(tf_intersection_policy *pol, tf_config *cfg, const tf_exit_policy *exit,
                       tf_error *err) {
  char where[256];
  if (!tf_config_has(cfg, "intersection.replay") && exit->kind == TF_EXIT_REPLAY) {
    pol->replay_from = exit->replay_from;
    return 0;
  }
  if (!tf_config_has(cfg, "intersection.replay"))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'intersection.policy' is 'replay' but 'intersection.replay' (an "
                        "earlier results file of this ensemble) is missing",
                        tf_config_where(cfg, "intersection.policy", where, sizeof where));
  pol->replay_from.key = "intersection.replay";
  tf_config_where(cfg, "intersection.replay", pol->replay_from.where,
                  sizeof pol->replay_from.where);
  return tf_config_get_string(cfg, "intersection.replay", NULL, NULL, &pol->replay_from.path, err);
}

int tf_intersection_policy_from_config(tf_intersection_policy *pol, tf_config *cfg,
                                       const tf_exit_policy *exit, tf_error *err) {
  memset(pol, 0, sizeof *pol);
  /* a whole run is replayed by exit.policy replay alone, as before choices had their own key */
  const char *rule, *law;
  if (tf_config_get_string(cfg, "intersection.policy",
                           exit->kind == TF_EXIT_REPLAY ? "replay" : "uniform", rule_names, &rule,
                           err) ||
      tf_config_get_double(cfg, "intersection.escape_distance", &exit->distance, 1e-12, 1.0,
                           &pol->escape_distance, err))
    return -1;
  for (int i = 0; rule_names[i]; i++)
    if (strcmp(rule, rule_names[i]) == 0) pol->rule = (tf_choice_rule)i;
  if ((pol->rule != TF_CHOICE_WEIGHTED &&
       refuse_key(cfg, "intersection.weights", "weighted", err)) ||
      (pol->rule != TF_CHOICE_REGULARISED &&
       refuse_key(cfg, "intersection.smoothing_law", "regularised", err)) ||
      (pol->rule != TF_CHOICE_REPLAY && refuse_key(cfg, "intersection.replay", "replay", err)))
    return -1;
  switch (pol->rule) {
    case TF_CHOICE_WEIGHTED:
      return read_weights(pol, cfg, err);
    case TF_CHOICE_REGULARISED: {
      static const char *const laws[] = {"tanh", "sqrt", "linear", NULL};
      if (tf_config_get_string(cfg, "intersection.smoothing_law", "tanh", laws, &law, err))
        return -1;
      for (int i = 0; laws[i]; i++)
        if (strcmp(law, laws[i]) == 0) pol->law.law = (tf_smooth_law)i;
      pol->law.field = TF_SMOOTH_CONVEX;
      pol->law.epsilon = 1.0;
      return 0;
    }
    case TF_CHOICE_REPLAY:
      return read_replay(pol, cfg, exit, err);
    default:
      return 0;
  }
}

void tf_intersection_policy_destroy(tf_intersection_policy *pol) {
  tf_draw_log_free(&pol->replay);
  memset(pol, 0, sizeof *pol);
}

/* u in the share of admissible departure `share` of `count` (evolve.h's mapping), at the
 * fraction v of it; kept off the share's ends so that rounding cannot move it to a neighbour. */
static double in_share(int share, int count, double v) {
  return (share + fmin(fmax(v, 1e-9), 1 - 1e-9)) / count;
}

/* The weighted rule on the uniform draw u0: the admissible departures' shares of u0 are
 * proportional to their weights.  Returns the code of the rule that decided. */
static int weighted(const tf_intersection_policy *pol, const tf_meet *m, double u0, double *u) {
  double w[TF_MEET_MAX_DIRECTIONS], total = 0;
  int count = 0;
  for (int i = 0; i < m->count; i++)
    if (m->dir[i].R > 0) total += w[count++] = pol->weight[tf_departure_kind_of(&m->dir[i])];
  if (!(total > 0)) { /* nothing admissible has weight: uniform over what is admissible */
    *u = u0;
    return TF_DRAW_CHOICE_UNIFORM;
  }
  int last = count - 1;
  while (!(w[last] > 0)) last--;
  const double target = u0 * total;
  double below = 0;
  int share = last;
  for (int j = 0; j < last; j++) {
    if (!(w[j] > 0)) continue;
    if (target < below + w[j]) {
      share = j;
      break;
    }
    below += w[j];
  }
  *u = in_share(share, count, (target - below) / w[share]);
  return TF_DRAW_CHOICE_WEIGHTED;
}

/* The regularised rule: the middle of the selected departure's share; where the limit does not
 * settle, the uniform draw (logged as uniform). */
static int regularised(const tf_intersection_policy *pol, const tf_meet_arrival *a, double u0,
                       double *u) {
  const tf_meet *m = a->m;
  const int which = tf_meet_regularised(a->k, a->p, a->t, a->x, m, a->phi_in, &pol->law);
  if (which < 0) {
    *u = u0;
    return TF_DRAW_CHOICE_UNIFORM;
  }
  int share = 0, count = 0;
  for (int i = 0; i < m->count; i++) {
    if (!(m->dir[i].R > 0)) continue;
    if (i == which) share = count;
    count++;
  }
  *u = in_share(share, count, 0.5);
  return TF_DRAW_CHOICE_REGULARISED;
}

int tf_intersection_policy_choose(const tf_intersection_policy *pol, uint64_t seed, uint64_t member,
                                  long draw, const tf_meet_arrival *a, double *u, int *code) {
  if (pol->rule == TF_CHOICE_REPLAY) {
    double kind = TF_DRAW_CHOICE_UNIFORM;
    *u = tf_draw_log_u(&pol->replay, member, draw, &kind);
    *code = (int)kind;
    return isnan(*u) ? -1 : 0;
  }
  /* the uniform draw is the one the exit policy `uniform` makes at this draw number */
  const double u0 = tf_rng_uniform((tf_rng_key){seed, member}, (uint64_t)draw, TF_RNG_EXIT);
  switch (pol->rule) {
    case TF_CHOICE_WEIGHTED:
      *code = weighted(pol, a->m, u0, u);
      return 0;
    case TF_CHOICE_REGULARISED:
      *code = regularised(pol, a, u0, u);
      return 0;
    default:
      *u = u0;
      *code = TF_DRAW_CHOICE_UNIFORM;
      return 0;
  }
}
