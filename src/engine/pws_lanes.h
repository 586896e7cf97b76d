/* pws_lanes.h — members of a Filippov ensemble (pws.h) side by side in lanes, each with the
 * numbers tf_pws_run_member gives it alone (pws_lanes.c). */
#ifndef TF_PWS_LANES_H
#define TF_PWS_LANES_H

#include "pws.h"

/* A member of a lane run: its id and record (arrays allocated by the caller, as for
 * tf_pws_run_member), and its status once run. */
typedef struct tf_pws_lane_member {
  uint64_t member;
  tf_pws_record *rec;
  int status;
} tf_pws_lane_member;

/* The lanes members of pws take (integrator.lanes: 0 auto, 1 off): 1 where they cannot
 * (several switching functions, a section watch, a pair without lanes), else the width asked
 * for; auto takes tf_lanes_auto_width where the model has a lanes slip field (slip_lanes of
 * tf_filippov_ops), else 1. */
int tf_pws_lanes_width(const tf_pws *pws, int lanes);

/* Runs m[0 .. count) in w lanes (tf_pws_lanes_width); a finished lane takes the next member at
 * once.  `computing` (NULL: none) is told each member as it is loaded. */
void tf_pws_run_lanes(tf_pws *pws, int w, tf_pws_lane_member *m, size_t count,
                      void (*computing)(uint64_t member));

#endif
