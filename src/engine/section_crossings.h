/* section_crossings.h — the crossings of a user's section (poincare.event `level` or
 * `function`) on the dense output of an engine's accepted steps, for the engines whose events
 * are not the section's own: event-driven Filippov members (pws_section.h, for scan and the
 * member engine) and bodies under spatial friction (member_contact.c).
 *
 * The section function s is x_c - level (poincare.component, poincare.level) or the user's
 * expression of (t, x, p) (poincare.function, observable.h).  Each step is sampled at a few
 * points of its dense output (a step may hold two crossings, up and down, that its ends alone
 * would not show) and every sign change counted in poincare.direction is located by Brent to
 * the engine's event tolerance.  A crossing is an observation, not a transition: the flow is
 * not touched. */
#ifndef TF_SECTION_CROSSINGS_H
#define TF_SECTION_CROSSINGS_H

#include <stdbool.h>

#include "config.h"
#include "poincare.h"

/* The dense output of the step just taken, at t in it. */
typedef void (*tf_section_dense_fn)(const void *src, double t, double *x);
/* One counted crossing at (t, x); returns true if no later crossing is wanted (the scan of the
 * step ends). */
typedef bool (*tf_section_found_fn)(void *ctx, double t, const double *x);

typedef struct tf_section_crossings tf_section_crossings;

/* Checks that spec (poincare.*) names a section these engines record: `level` or `function`
 * (an extremum would need the current mode's field on the dense output).  `model_kind` words
 * the model for the message ("a Filippov model").  Errors name file, line and key. */
int tf_section_crossings_check(const tf_poincare_spec *spec, tf_config *cfg, const tf_kernel *k,
                               const char *model_kind, tf_error *err);

/* For kernel k with parameters params (read at every evaluation: a scan may change their
 * values in place), located to tol.  NULL if out of memory. */
tf_section_crossings *tf_section_crossings_create(const tf_kernel *k, const double *params,
                                                  const tf_poincare_spec *spec, double tol);
void tf_section_crossings_destroy(tf_section_crossings *sc);

/* A new member: steps are scanned from its first on. */
void tf_section_crossings_start(tf_section_crossings *sc);

/* Scans the step [ta, tb] of dense(src, ...), from where the last scan ended (a landing on an
 * event may repeat a piece), calling found at each counted crossing in time order until it
 * returns true. */
void tf_section_crossings_step(tf_section_crossings *sc, tf_section_dense_fn dense, const void *src,
                               double ta, double tb, tf_section_found_fn found, void *ctx);

#endif
