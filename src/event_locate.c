/* event_locate.c — see event_locate.h. */
#include "event_locate.h"

#include <gsl/gsl_errno.h>

double tf_event_locate(gsl_root_fsolver *root, double (*g)(double t, void *ctx), void *ctx,
                       double ta, double tb, double tol) {
  gsl_function fn = {g, ctx};
  if (g(ta, ctx) <= 0.0) {
    /* starting on the boundary: bracket from the first point back inside the domain */
    enum { SUB = 32 };
    double a = tb;
    for (int i = 1; i < SUB; i++) {
      const double t = ta + (tb - ta) * i / SUB;
      if (g(t, ctx) > 0.0) {
        a = t;
        break;
      }
    }
    if (a == tb) return ta; /* it left to the wrong side at once */
    ta = a;
  }
  if (!(g(tb, ctx) < 0.0)) return tb;
  gsl_root_fsolver_set(root, &fn, ta, tb);
  double lo = ta, hi = tb;
  for (int it = 0; it < 200 && hi - lo > tol; it++) {
    if (gsl_root_fsolver_iterate(root) != GSL_SUCCESS) break;
    lo = gsl_root_fsolver_x_lower(root);
    hi = gsl_root_fsolver_x_upper(root);
  }
  return hi; /* the side where the event has happened */
}
