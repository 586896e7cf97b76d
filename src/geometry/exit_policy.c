/* exit_policy.c — see exit_policy.h. */
#include "exit_policy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "vec.h"

const char *tf_exit_kind_name(tf_exit_kind k) {
  static const char *const names[] = {"uniform", "weighted", "fixed", "replay"};
  return names[k];
}

static int read_weights(tf_exit_policy *pol, tf_config *cfg, tf_error *err) {
  double w[1024];
  size_t n;
  if (tf_config_get_double_array(cfg, "exit.weights", NULL, 0, 0, w, 1024, &n, err)) return -1;
  pol->cdf = malloc((n + 1) * sizeof *pol->cdf);
  if (!pol->cdf) return tf_fail(err, "out of memory");
  pol->cdf[0] = 0;
  for (size_t i = 0; i < n; i++) {
    char where[256];
    if (!(w[i] >= 0))
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'exit.weights': weights must be >= 0 (element %zu is %g)",
                          tf_config_where(cfg, "exit.weights", where, sizeof where), i + 1, w[i]);
    pol->cdf[i + 1] = pol->cdf[i] + w[i];
  }
  if (!isfinite(pol->cdf[n])) {
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'exit.weights': the weights sum to %g, beyond the largest double; "
                        "scale them down (only their ratios matter)",
                        tf_config_where(cfg, "exit.weights", where, sizeof where), pol->cdf[n]);
  }
  if (!(pol->cdf[n] > 0)) {
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: key 'exit.weights': the weights sum to 0",
                        tf_config_where(cfg, "exit.weights", where, sizeof where));
  }
  pol->nbins = (int)n;
  return 0;
}

void tf_draw_log_free(tf_draw_log *log) {
  free(log->u);
  free(log->kind);
  memset(log, 0, sizeof *log);
}

double tf_draw_log_u(const tf_draw_log *log, uint64_t member, long draw, double *kind) {
  if (member >= log->members || draw < 0 || draw >= log->draws) return NAN;
  const uint64_t at = member * (uint64_t)log->draws + (uint64_t)draw;
  if (kind) *kind = log->kind[at];
  return log->u[at];
}

int tf_exit_policy_from_config(tf_exit_policy *pol, tf_config *cfg, tf_error *err) {
  memset(pol, 0, sizeof *pol);
  static const char *const kinds[] = {"uniform", "weighted", "fixed", "replay", NULL};
  const char *kind;
  const double d_distance = 1e-4, d_margin = 0.05;
  if (tf_config_get_string(cfg, "exit.policy", "uniform", kinds, &kind, err) ||
      tf_config_get_double(cfg, "exit.distance", &d_distance, 1e-12, 1.0, &pol->distance, err) ||
      tf_config_get_double(cfg, "exit.margin", &d_margin, 0.0, 0.49, &pol->margin, err))
    return -1;
  for (int i = 0; kinds[i]; i++)
    if (strcmp(kind, kinds[i]) == 0) pol->kind = (tf_exit_kind)i;
  char where[256];
  switch (pol->kind) {
    case TF_EXIT_UNIFORM:
      return 0;
    case TF_EXIT_WEIGHTED:
      return read_weights(pol, cfg, err);
    case TF_EXIT_FIXED:
      if (!tf_config_has(cfg, "exit.value"))
        return tf_fail_code(
            err, TF_ERR_CONFIG,
            "%s: key 'exit.policy' is 'fixed' but 'exit.value' (the exit parameter u "
            "in (0, 1)) is missing",
            tf_config_where(cfg, "exit.policy", where, sizeof where));
      return tf_config_get_double(cfg, "exit.value", NULL, 0.0, 1.0, &pol->fixed, err);
    case TF_EXIT_REPLAY:
      pol->replay_from.key = "exit.replay";
      tf_config_where(cfg, "exit.replay", pol->replay_from.where, sizeof pol->replay_from.where);
      return tf_config_get_string(cfg, "exit.replay", NULL, NULL, &pol->replay_from.path, err);
  }
  return 0;
}

void tf_exit_policy_destroy(tf_exit_policy *pol) {
  free(pol->cdf);
  tf_draw_log_free(&pol->replay);
  memset(pol, 0, sizeof *pol);
}

static double wrap(double a) {
  a = fmod(a, 2 * M_PI);
  return a < 0 ? a + 2 * M_PI : a;
}

static bool escaping_at(const tf_exit_policy *pol, const tf_twofold *t, double theta) {
  double w[TF_MAX_DIM];
  for (size_t i = 0; i < pol->k->dim; i++) w[i] = cos(theta) * pol->e1[i] + sin(theta) * pol->e2[i];
  return tf_dot(t->grad_lp, w, pol->k->dim) > 0 && tf_dot(t->grad_lm, w, pol->k->dim) < 0;
}

int tf_exit_policy_setup(tf_exit_policy *pol, const tf_kernel *k, const double *p,
                         const tf_twofold *t, tf_error *err) {
  const size_t n = k->dim;
  pol->k = k;
  pol->p = p;
  memcpy(pol->x_star, t->x, n * sizeof *t->x);
  /* Orthonormal basis of the plane of f(x*, ±1), both tangent to Sigma at a two-fold. */
  const double n1 = sqrt(tf_dot(t->f_plus, t->f_plus, n));
  for (size_t i = 0; i < n; i++) pol->e1[i] = t->f_plus[i] / n1;
  const double c = tf_dot(t->f_minus, pol->e1, n);
  for (size_t i = 0; i < n; i++) pol->e2[i] = t->f_minus[i] - c * pol->e1[i];
  const double n2 = sqrt(tf_dot(pol->e2, pol->e2, n));
  if (!(n1 > 0) || !(n2 > 1e-12 * n1))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "exit policy: f(x*, +1) and f(x*, -1) are parallel at the two-fold");
  for (size_t i = 0; i < n; i++) pol->e2[i] /= n2;
  /* The sector is bounded by two of the four rays where grad L+ or grad L- is orthogonal. */
  const double a = atan2(tf_dot(t->grad_lp, pol->e2, n), tf_dot(t->grad_lp, pol->e1, n));
  const double b = atan2(tf_dot(t->grad_lm, pol->e2, n), tf_dot(t->grad_lm, pol->e1, n));
  double cand[4] = {wrap(a - M_PI / 2), wrap(a + M_PI / 2), wrap(b - M_PI / 2), wrap(b + M_PI / 2)};
  for (int i = 1; i < 4; i++)
    for (int j = i; j > 0 && cand[j] < cand[j - 1]; j--) {
      const double tmp = cand[j];
      cand[j] = cand[j - 1], cand[j - 1] = tmp;
    }
  for (int i = 0; i < 4; i++) {
    const double lo = cand[i], hi = i < 3 ? cand[i + 1] : cand[0] + 2 * M_PI;
    if (hi - lo > 1e-9 && escaping_at(pol, t, 0.5 * (lo + hi))) {
      pol->theta_lo = lo;
      pol->theta_hi = hi;
      return 0;
    }
  }
  return tf_fail_code(err, TF_ERR_CONFIG, "exit policy: the two-fold has no escaping sector");
}

double tf_exit_policy_draw(const tf_exit_policy *pol, uint64_t seed, uint64_t member, long visit) {
  if (pol->kind == TF_EXIT_FIXED) return pol->fixed;
  if (pol->kind == TF_EXIT_REPLAY) return tf_draw_log_u(&pol->replay, member, visit, NULL);
  const double u = tf_rng_uniform((tf_rng_key){seed, member}, (uint64_t)visit, TF_RNG_EXIT);
  if (pol->kind == TF_EXIT_UNIFORM) return u;
  /* inverse CDF of the piecewise-constant density */
  const double target = u * pol->cdf[pol->nbins];
  int bin = 0;
  while (bin < pol->nbins - 1 && pol->cdf[bin + 1] < target) bin++;
  const double width = pol->cdf[bin + 1] - pol->cdf[bin];
  const double frac = width > 0 ? (target - pol->cdf[bin]) / width : 0.5;
  return (bin + frac) / pol->nbins;
}

void tf_exit_policy_point(const tf_exit_policy *pol, double u, double *x, int *side) {
  const size_t n = pol->k->dim;
  *side = u < 0.5 ? -1 : 1;
  const double s = u < 0.5 ? 2 * u : 2 * u - 1;
  const double span = pol->theta_hi - pol->theta_lo;
  const double theta = pol->theta_lo + span * (pol->margin + (1 - 2 * pol->margin) * s);
  for (size_t i = 0; i < n; i++)
    x[i] = pol->x_star[i] + pol->distance * (cos(theta) * pol->e1[i] + sin(theta) * pol->e2[i]);
  /* The tangent plane is Sigma only to first order: project back onto h = 0. */
  double grad[TF_MAX_DIM];
  for (int it = 0; it < 4; it++) {
    const double h = pol->k->filippov->switching(x, pol->p, grad);
    const double g2 = tf_dot(grad, grad, n);
    if (g2 == 0 || h == 0) break;
    for (size_t i = 0; i < n; i++) x[i] -= h * grad[i] / g2;
  }
}
