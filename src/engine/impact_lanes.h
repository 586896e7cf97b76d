/* impact_lanes.h — members of an impact or Poincaré run (poincare.h) side by side in lanes,
 * each with the numbers tf_poincare_run gives it alone (impact_lanes.c). */
#ifndef TF_IMPACT_LANES_H
#define TF_IMPACT_LANES_H

#include "poincare.h"

/* A member of a lane run: its parameters, its state (dim values: the initial one, then the
 * final one) and its record (samples allocated by the caller). */
typedef struct tf_impact_lane_member {
  const double *p;
  double *x;
  tf_poincare_record *rec;
} tf_impact_lane_member;

/* The lanes members of model k with these options take (integrator.lanes: 0 auto, 1 off):
 * the width asked for, 1 for a pair without lanes for events (DOP853 has them); auto takes
 * twice tf_lanes_auto_width (16 on AVX-512, else 8) where the model's lane callbacks let the
 * lanes screen its events (tf_impact_ops: rhs_lanes, surface_lanes, rate_lanes), else 1. */
int tf_impact_lanes_width(const tf_kernel *k, const tf_impact_options *o, int lanes);

/* Runs m[0 .. count) from (t0, x) to t_end in w lanes (tf_impact_lanes_width), lane l on
 * engines[l] (w engines of one spec, without tangent vectors or samples); a finished lane
 * takes the next member at once. */
void tf_impact_run_lanes(tf_poincare *const *engines, int w, const tf_ode_options *ode, size_t dim,
                         double t0, double t_end, tf_impact_lane_member *m, size_t count);

#endif
