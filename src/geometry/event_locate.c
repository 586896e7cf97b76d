/* event_locate.c — see event_locate.h. */
#include "event_locate.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <string.h>

/* The values of g already computed in one location, so that no time is evaluated twice: GSL's
 * Brent evaluates both ends of the bracket it is given, which the halving search or the caller
 * already has.  A time is matched bit for bit, so a remembered value is the value g would
 * give again, and the located time does not change.  A ring of the latest MEMORY times: the
 * reuse is of bracket ends, which are recent. */
enum { MEMORY = 32 };
typedef struct memo {
  double (*g)(double t, void *ctx);
  void *ctx;
  int count, next;
  double t[MEMORY], value[MEMORY];
} memo;

static void remember(memo *m, double t, double value) {
  m->t[m->next] = t, m->value[m->next] = value;
  m->next = (m->next + 1) % MEMORY;
  if (m->count < MEMORY) m->count++;
}

static double recall_or_evaluate(double t, void *params) {
  memo *m = params;
  for (int i = 0; i < m->count; i++)
    if (memcmp(&m->t[i], &t, sizeof t) == 0) return m->value[i];
  const double value = m->g(t, m->ctx);
  remember(m, t, value);
  return value;
}

/* Brent from a set bracket to tol; the answer is the side where the event has happened. */
static double brent(gsl_root_fsolver *root, gsl_function *fn, double lo, double hi, double tol) {
  gsl_root_fsolver_set(root, fn, lo, hi);
  for (int it = 0; it < 200 && hi - lo > tol; it++) {
    if (gsl_root_fsolver_iterate(root) != GSL_SUCCESS) break;
    lo = gsl_root_fsolver_x_lower(root);
    hi = gsl_root_fsolver_x_upper(root);
  }
  return hi;
}

double tf_event_locate_from(gsl_root_fsolver *root, double (*g)(double t, void *ctx), void *ctx,
                            double ta, double ga, double tb, double gb, double tol) {
  memo m = {.g = g, .ctx = ctx};
  remember(&m, ta, ga), remember(&m, tb, gb);
  gsl_function fn = {recall_or_evaluate, &m};
  if (ga <= 0.0 || (gb < 0.0 && ga < 1e-6 * -gb)) {
    /* Starting on the surface, or within round-off of it (a transition put the state there;
     * ga is the landing's round-off, ~1e-17).  The first crossing is the end of the excursion
     * that starts at ta, which may be a tiny part of a long step, and Brent's secant step from
     * ta would take the round-off roots next to it for the crossing: on the wheel's two-fold
     * exits, whose slip fields leave Sigma at 1e-6 of their speed, that put the first crossing
     * at t ~ 1e-11 instead of the return ~1e-3 later for 8 % of the Fig. 5 members at rtol
     * 1e-10.  So look for a point inside at ta + (tb - ta) 2^-k, k = 1..MAX_HALVINGS: the
     * first one found and the point before it bracket the end of the excursion. */
    enum { MAX_HALVINGS = 24 };
    double outside = tb, g_outside = gb;
    for (int k = 1; k <= MAX_HALVINGS; k++) {
      const double t = ta + ldexp(tb - ta, -k), gt = recall_or_evaluate(t, &m);
      if (gt > 0.0) {
        if (!(g_outside <= 0.0)) return outside;
        return brent(root, &fn, t, outside, tol);
      }
      outside = t, g_outside = gt;
    }
    if (!(ga > 0.0)) return ta; /* it left to the wrong side at once */
    /* inside at ta and nowhere else sampled: an excursion shorter than 2^-24 of the bracket (a
     * chattering ball's last low bounce at the start of a long step), ta clearly inside */
    return brent(root, &fn, ta, outside, tol);
  }
  if (!(gb < 0.0)) return tb;
  return brent(root, &fn, ta, tb, tol);
}

double tf_event_locate(gsl_root_fsolver *root, double (*g)(double t, void *ctx), void *ctx,
                       double ta, double tb, double tol) {
  const double ga = g(ta, ctx), gb = g(tb, ctx);
  return tf_event_locate_from(root, g, ctx, ta, ga, tb, gb, tol);
}
