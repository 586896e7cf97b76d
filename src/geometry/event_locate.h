/* event_locate.h — where an event function first goes from >= 0 to < 0 inside one step.
 *
 * The codim-1 (evolve.c), codim-2 (evolve2.c) and two-contact (dual_contact.c) integrators
 * all sample their event functions on a step's dense output and then need the crossing to
 * the event tolerance.  The rules are the same for all three, so they live here once:
 * a start on the boundary, or within round-off of it (just after a transition), means the
 * event is the end of the excursion that starts there, found by halving towards the start
 * before Brent, so that neither round-off next to the start nor a long step hides it; a
 * bracket that does not straddle zero is answered without calling GSL (whose default error
 * handler would abort the whole ensemble); the answer is the side where the event has
 * happened. */
#ifndef TF_EVENT_LOCATE_H
#define TF_EVENT_LOCATE_H

#include <gsl/gsl_roots.h>

/* The crossing of g in (ta, tb], to within tol, found with the Brent solver `root`. */
double tf_event_locate(gsl_root_fsolver *root, double (*g)(double t, void *ctx), void *ctx,
                       double ta, double tb, double tol);

/* The same where the caller already has ga = g(ta) and gb = g(tb) (the samples that showed the
 * sign change).  No time is evaluated twice in one location. */
double tf_event_locate_from(gsl_root_fsolver *root, double (*g)(double t, void *ctx), void *ctx,
                            double ta, double ga, double tb, double gb, double tol);

#endif
