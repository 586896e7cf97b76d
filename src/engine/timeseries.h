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
 *     the closest point that keeps the separation small and its direction (angle bound).
 * Both assume that the next sample is a function of the embedded point.  Two things break
 * that, and tf_series_check says which:
 *   - steps on which nothing moves (a DEVS element frozen with probability 1 - q repeats its
 *     value): the repeats are dropped, the exponent is estimated per actual update and
 *     scaled by the fraction of samples that are updates, which is the exponent per sample;
 *   - a signal of more dimensions than the embedding (X of N > 1 randomly updated
 *     elements): nearest neighbours in the embedding then part at once.  Their median
 *     one-step stretch |s'_i - s'_j| / |y_i - y_j| is about |f'| (1.7 for the logistic map)
 *     for a deterministic low-dimensional signal and 30-50 for such signals; above
 *     TF_SERIES_MAX_STRETCH the estimate is reported as not meaningful. */
#ifndef TF_TIMESERIES_H
#define TF_TIMESERIES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tf_embedding {
  int dim, delay;
  double dt; /* time between samples */
} tf_embedding;

enum { TF_SERIES_MAX_STRETCH = 10 };

typedef struct tf_series_check {
  double update_fraction; /* samples that differ from the one before */
  double stretch;         /* median one-step stretch of nearest-neighbour pairs */
  bool meaningful;        /* deterministic at this embedding and an estimate came out */
} tf_series_check;

/* Returns lambda_1 (per unit time); fills curve[0..horizon) with <ln d(k)> if not NULL. */
double tf_rosenstein(const double *s, size_t n, tf_embedding e, int theiler, int horizon,
                     int fit_lo, int fit_hi, double *curve);

/* Returns lambda_1 (per unit time).  Scales are fractions of the attractor's extent. */
double tf_wolf(const double *s, size_t n, tf_embedding e, int theiler, int evolve, double min_scale,
               double max_scale);

/* The estimators on a measured signal as described above: repeats dropped, the result per
 * sample, and *check filled in (may be NULL).  estimator: 0 Wolf, 1 Rosenstein (curve and
 * the fit window are in updates then). */
double tf_series_exponent(const double *s, size_t n, tf_embedding e, int theiler, int estimator,
                          int evolve, double min_scale, double max_scale, int horizon, int fit_lo,
                          int fit_hi, double *curve, tf_series_check *check);

#endif
