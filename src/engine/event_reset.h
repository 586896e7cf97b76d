/* event_reset.h — the reset map of an event of the user's own (poincare.action: reset) on a
 * flow, or on an impact model in free flight (impact.h).
 *
 * At a counted crossing of the section function s the state jumps to R(t, x), every component
 * computed from the state before the jump (observable.h: tf_reset_map).  The landing leaves s
 * just past zero, and a reset that keeps the state on the section (a bounce: the position
 * kept, the velocity turned) leaves it there, where the next step would report the same
 * crossing again.  So, as impact.c does after a slow rebound, the event is disarmed: its
 * function waits at -tol on the side the state moves into (tol = max(contact_tol, 4 |s|
 * where landed)) until s has left zero by tol, and the first step is bounded by the time s
 * takes to turn back (half a ballistic estimate), so that a short excursion is seen.  A reset
 * that moves the state off the section leaves the event armed.  Where the state would not
 * leave the section by tol before turning back, the events accumulate (a bouncing ball's) and
 * the member ends as zeno. */
#ifndef TF_EVENT_RESET_H
#define TF_EVENT_RESET_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel.h"
#include "observable.h"

/* The section function s(t, x) of the engine that owns the event. */
typedef double (*tf_event_reset_section)(void *ctx, double t, const double *x);

typedef struct tf_event_reset {
  const tf_kernel *k;
  tf_reset_map *map;
  double contact_tol;
  bool armed;
  double tol; /* while disarmed: added to the signed section function */
} tf_event_reset;

/* Parses s for k (the spec was checked when the config was read); -1 if it fails. */
int tf_event_reset_init(tf_event_reset *r, const tf_kernel *k, const tf_reset_spec *s,
                        double contact_tol);
void tf_event_reset_free(tf_event_reset *r);

/* Applies the reset at the event (t, x) with parameters p (x: k's dim, overwritten).  Returns
 * TF_MEMBER_OK with *sign the side of s the state is on or moves into (+1, -1) and *step_limit
 * a time the next step should not pass (INFINITY: none); or TF_MEMBER_FAILED, x unchanged and
 * msg saying why (a non-finite state), or TF_MEMBER_ZENO (the state left on the section
 * without the speed to leave it by tol: the events accumulate). */
int tf_event_reset_apply(tf_event_reset *r, const double *p, tf_event_reset_section s, void *ctx,
                         double t, double *x, int *sign, double *step_limit, char *msg,
                         size_t msg_n);

/* What the signed section function is shifted by (0 while armed). */
double tf_event_reset_offset(const tf_event_reset *r);

/* At the end of a step, with sign * s there: re-arms once s has left zero by tol. */
void tf_event_reset_rearm(tf_event_reset *r, double signed_value);

#endif
