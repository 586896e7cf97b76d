/* timeseries.c — see timeseries.h.  Neighbour searches are brute force (O(n^2) distance
 * evaluations), which is fine for the 1e4-sample series these estimators are used on. */
#include "timeseries.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

static double dist2(const double *s, tf_embedding e, size_t i, size_t j) {
  double d = 0;
  for (int k = 0; k < e.dim; k++) {
    const double v = s[i + (size_t)(k * e.delay)] - s[j + (size_t)(k * e.delay)];
    d += v * v;
  }
  return d;
}

static size_t embedded_points(size_t n, tf_embedding e) {
  const size_t span = (size_t)((e.dim - 1) * e.delay);
  return n > span ? n - span : 0;
}

/* The nearest neighbour of embedded point i among points 0..last-1 outside the Theiler
 * window (and not at distance 0), with its squared distance; (size_t)-1 if none. */
static size_t nearest(const double *s, tf_embedding e, size_t i, size_t last, int theiler,
                      double *d2) {
  size_t best = (size_t)-1;
  double bd = DBL_MAX;
  for (size_t j = 0; j < last; j++) {
    if ((i > j ? i - j : j - i) <= (size_t)theiler) continue;
    const double d = dist2(s, e, i, j);
    if (d > 0 && d < bd) bd = d, best = j;
  }
  *d2 = bd;
  return best;
}

double tf_rosenstein(const double *s, size_t n, tf_embedding e, int theiler, int horizon,
                     int fit_lo, int fit_hi, double *curve) {
  const size_t m = embedded_points(n, e);
  if (m < (size_t)(2 * horizon + 2 * theiler + 10) || fit_hi <= fit_lo) return NAN;
  double *sum = calloc((size_t)horizon, sizeof *sum);
  long *count = calloc((size_t)horizon, sizeof *count);
  if (!sum || !count) return free(sum), free(count), NAN;
  const size_t last = m - (size_t)horizon;
  for (size_t i = 0; i < last; i++) {
    double bd;
    const size_t best = nearest(s, e, i, last, theiler, &bd);
    if (best == (size_t)-1) continue;
    for (int k = 0; k < horizon; k++) {
      const double d = dist2(s, e, i + (size_t)k, best + (size_t)k);
      if (d > 0) sum[k] += 0.5 * log(d), count[k]++;
    }
  }
  for (int k = 0; k < horizon; k++) sum[k] = count[k] ? sum[k] / (double)count[k] : NAN;
  if (curve)
    for (int k = 0; k < horizon; k++) curve[k] = sum[k];
  /* least-squares slope of <ln d(k)> against k dt over the fit window */
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int np = 0;
  for (int k = fit_lo; k <= fit_hi && k < horizon; k++) {
    if (!isfinite(sum[k])) continue;
    const double x = k * e.dt;
    sx += x, sy += sum[k], sxx += x * x, sxy += x * sum[k], np++;
  }
  free(sum), free(count);
  if (np < 2) return NAN;
  return (np * sxy - sx * sy) / (np * sxx - sx * sx);
}

/* The extent of the embedded attractor: the largest coordinate range. */
static double extent(const double *s, size_t n) {
  double lo = DBL_MAX, hi = -DBL_MAX;
  for (size_t i = 0; i < n; i++) lo = fmin(lo, s[i]), hi = fmax(hi, s[i]);
  return hi - lo;
}

/* Replacement: among points near the fiducial one (within max scale, beyond min scale and
 * the Theiler window), the one whose separation best keeps the old direction. */
static size_t replace(const double *s, tf_embedding e, size_t m, size_t fid, size_t old,
                      int theiler, double lo2, double hi2) {
  size_t best = (size_t)-1;
  double best_cos = -2;
  double dir[64];
  for (int k = 0; k < e.dim && k < 64; k++)
    dir[k] = s[old + (size_t)(k * e.delay)] - s[fid + (size_t)(k * e.delay)];
  for (size_t j = 0; j < m; j++) {
    if ((fid > j ? fid - j : j - fid) <= (size_t)theiler) continue;
    const double d = dist2(s, e, fid, j);
    if (d < lo2 || d > hi2) continue;
    double dot = 0, nd = 0, no = 0;
    for (int k = 0; k < e.dim && k < 64; k++) {
      const double v = s[j + (size_t)(k * e.delay)] - s[fid + (size_t)(k * e.delay)];
      dot += v * dir[k], nd += v * v, no += dir[k] * dir[k];
    }
    const double c = dot / sqrt(nd * no + 1e-300);
    if (c > best_cos) best_cos = c, best = j;
  }
  return best;
}

double tf_wolf(const double *s, size_t n, tf_embedding e, int theiler, int evolve, double min_scale,
               double max_scale) {
  const size_t m = embedded_points(n, e);
  if (m < (size_t)(4 * evolve + 2 * theiler + 10) || e.dim > 64) return NAN;
  const double size = extent(s, n);
  const double lo2 = pow(min_scale * size, 2), hi2 = pow(max_scale * size, 2);
  size_t fid = 0, nb = replace(s, e, m - (size_t)evolve, 0, 1, theiler, lo2, hi2);
  if (nb == (size_t)-1) return NAN;
  double sum = 0, time = 0;
  while (fid + (size_t)evolve < m && nb + (size_t)evolve < m) {
    const double d0 = sqrt(dist2(s, e, fid, nb));
    const double d1 = sqrt(dist2(s, e, fid + (size_t)evolve, nb + (size_t)evolve));
    if (d0 > 0 && d1 > 0) sum += log(d1 / d0), time += evolve * e.dt;
    fid += (size_t)evolve;
    const size_t next =
        replace(s, e, m - (size_t)evolve, fid, nb + (size_t)evolve, theiler, lo2, hi2);
    if (next == (size_t)-1) break;
    nb = next;
  }
  return time > 0 ? sum / time : NAN;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median over up to 500 evenly spread points of |next_i - next_j| / |y_i - y_j| for the
 * nearest neighbour j of y_i (outside the Theiler window). */
static double one_step_stretch(const double *s, size_t n, tf_embedding e, int theiler) {
  const size_t span = (size_t)((e.dim - 1) * e.delay), m = embedded_points(n, e);
  if (m < 3) return NAN;
  const size_t last = m - 1, probes = last < 500 ? last : 500;
  double *r = malloc(probes * sizeof *r);
  if (!r) return NAN;
  size_t k = 0;
  for (size_t p = 0; p < probes; p++) {
    const size_t i = p * last / probes;
    double bd;
    const size_t best = nearest(s, e, i, last, theiler, &bd);
    if (best != (size_t)-1) r[k++] = fabs(s[i + span + 1] - s[best + span + 1]) / sqrt(bd);
  }
  qsort(r, k, sizeof *r, cmp_double);
  const double median = k ? r[k / 2] : NAN;
  free(r);
  return median;
}

double tf_series_exponent(const double *s, size_t n, tf_embedding e, int theiler, int estimator,
                          int evolve, double min_scale, double max_scale, int horizon, int fit_lo,
                          int fit_hi, double *curve, tf_series_check *check) {
  tf_series_check c = {.update_fraction = NAN, .stretch = NAN, .meaningful = false};
  double *u = n ? malloc(n * sizeof *u) : NULL;
  double lambda = NAN;
  if (u) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (i == 0 || s[i] != s[i - 1]) u[k++] = s[i];
    c.update_fraction = n > 1 ? (double)(k - 1) / (double)(n - 1) : NAN;
    c.stretch = one_step_stretch(u, k, e, theiler);
    const double per_update = estimator == 0
                                  ? tf_wolf(u, k, e, theiler, evolve, min_scale, max_scale)
                                  : tf_rosenstein(u, k, e, theiler, horizon, fit_lo, fit_hi, curve);
    lambda = per_update * c.update_fraction;
    c.meaningful = isfinite(lambda) && c.stretch <= TF_SERIES_MAX_STRETCH;
    free(u);
  }
  if (check) *check = c;
  return lambda;
}
