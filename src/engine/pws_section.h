/* pws_section.h — Poincaré sections and sliding of event-driven Filippov members (pws.h), for
 * bifurcation diagrams of Filippov models with one or several switching functions (scan with
 * quantity poincare) and user events of their members in ensemble and trajectory
 * (member_pws.c).
 *
 * A member runs from its initial state to t_end on its engine (evolve.h or switches.h); the
 * section is a level crossing of a state component (poincare.event `level`) or a zero
 * crossing of the user's expression (`function`, observable.h) with a direction, found on
 * each accepted step's dense output by section_crossings.h (located to filippov.event_tol).  A
 * crossing is an observation, not a transition: the flow is not touched, so a member's trajectory
 * is the same with or without a section, up to where poincare.action stop ends it (at the count-th
 * recorded crossing).  The crossings are recorded as poincare.h records them (transient, slots,
 * period), with the mode at each; from the first recorded crossing to the last, every entry into
 * and exit from sliding on each switching surface is logged, and counted with the time spent
 * sliding on it. */
#ifndef TF_PWS_SECTION_H
#define TF_PWS_SECTION_H

#include <stdint.h>

#include "config.h"
#include "poincare.h"
#include "pws.h"

enum { TF_PWS_SLIDES_PER_CROSSING = 4 }; /* sliding log slots per recorded crossing */

typedef struct tf_pws_section_record {
  tf_poincare_record poincare; /* samples: count x (1 + dim), caller's */
  double *modes;      /* count: the mode at each recorded crossing (pws.h codes), NaN-padded */
  double *sliding;    /* surfaces x 3: entries, exits, time sliding, in the recorded window */
  double *slides;     /* slide_slots x (3 + dim): t, surface, 1 entry / 0 exit, state; NaN-padded */
  long slides_logged; /* all the window's entries and exits, logged or not */
} tf_pws_section_record;

typedef struct tf_pws_section tf_pws_section;

/* Checks that spec (poincare.*) names a section a Filippov member can record: `level` or
 * `function` (tf_section_crossings_check).  Errors name file, line, key. */
int tf_pws_section_check(const tf_poincare_spec *spec, tf_config *cfg, const tf_pws *pws,
                         tf_error *err);

/* Switching surfaces of the model: 1 (one switching function) or its number of them. */
int tf_pws_surfaces(const tf_pws *pws);
long tf_pws_section_slide_slots(const tf_poincare_spec *spec);

tf_pws_section *tf_pws_section_create(tf_pws *pws, const tf_poincare_spec *spec);
void tf_pws_section_destroy(tf_pws_section *ps);

/* Runs member `member` (tf_pws_run_member into rec) and records its crossings and sliding into
 * out.  Returns the member's status. */
int tf_pws_section_run(tf_pws_section *ps, uint64_t member, tf_pws_record *rec,
                       tf_pws_section_record *out);

#endif
