/* timeseries.h — the largest Lyapunov exponent from a measured scalar signal.
 *
 * Experiments (and the DEVS signal X_i) give one scalar series, not the equations, so the
 * exponent has to come from the series: both estimators work on a delay embedding
 * y_i = (s_i, s_{i+delay}, ..., s_{i+(dim-1) delay}).
 *   Rosenstein, Collins & De Luca (1993): for every point its nearest neighbour (outside a
 *     Theiler window), the mean log distance of the pairs k steps later, <ln d(k)>; lambda_1
 *     is the slope of its initial linear part (fitted over [fit_lo, fit_hi] steps).
 *   Wolf, Swift, Swinney & Vastano (1985): one fiducial trajectory and one neighbour,
 *     followed for `evolve` steps; the growth is accumulated and the neighbour replaced by
 *     the closest point that keeps the separation small and its direction (angle bound). */
#ifndef TF_TIMESERIES_H
#define TF_TIMESERIES_H

#include <stddef.h>

typedef struct tf_embedding {
  int dim, delay;
  double dt; /* time between samples */
} tf_embedding;

/* Returns lambda_1 (per unit time); fills curve[0..horizon) with <ln d(k)> if not NULL. */
double tf_rosenstein(const double *s, size_t n, tf_embedding e, int theiler, int horizon,
                     int fit_lo, int fit_hi, double *curve);

/* Returns lambda_1 (per unit time).  Scales are fractions of the attractor's extent. */
double tf_wolf(const double *s, size_t n, tf_embedding e, int theiler, int evolve, double min_scale,
               double max_scale);

#endif
