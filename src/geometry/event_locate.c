/* event_locate.c — see event_locate.h. */
#include "event_locate.h"

#include <gsl/gsl_errno.h>
#include <math.h>

/* Brent from a set bracket to tol; the answer is the side where the event has happened. */
static double brent(gsl_root_fsolver *root, double lo, double hi, double tol) {
  for (int it = 0; it < 200 && hi - lo > tol; it++) {
    if (gsl_root_fsolver_iterate(root) != GSL_SUCCESS) break;
    lo = gsl_root_fsolver_x_lower(root);
    hi = gsl_root_fsolver_x_upper(root);
  }
  return hi;
}

double tf_event_locate(gsl_root_fsolver *root, double (*g)(double t, void *ctx), void *ctx,
                       double ta, double tb, double tol) {
  gsl_function fn = {g, ctx};
  const double ga = g(ta, ctx), gb = g(tb, ctx);
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
      const double t = ta + ldexp(tb - ta, -k), gt = g(t, ctx);
      if (gt > 0.0) {
        if (!(g_outside <= 0.0)) return outside;
        gsl_root_fsolver_set(root, &fn, t, outside);
        return brent(root, t, outside, tol);
      }
      outside = t, g_outside = gt;
    }
    if (!(ga > 0.0)) return ta; /* it left to the wrong side at once */
    /* inside at ta and nowhere else sampled: an excursion shorter than 2^-24 of the bracket (a
     * chattering ball's last low bounce at the start of a long step), ta clearly inside */
    gsl_root_fsolver_set(root, &fn, ta, outside);
    return brent(root, ta, outside, tol);
  }
  if (!(gb < 0.0)) return tb;
  gsl_root_fsolver_set(root, &fn, ta, tb);
  return brent(root, ta, tb, tol);
}
