/* param_grid.h — a grid over one or two model parameters, point by point.
 *
 * Parameter maps and scans (Fig. 4, lambda versus load, ...) run one computation per grid
 * point through the ensemble scheduler: point m is (x_i, y_j) with i = m % nx, j = m / nx.
 * Axes are read from `<prefix>.x.{param,min,max,points}` and optionally `<prefix>.y.*`.
 * Derived parameters given as 0 ("derive it") are re-derived at every point by the kernel's
 * prepare(); a failed prepare() marks the point invalid but keeps what was derived. */
#ifndef TF_PARAM_GRID_H
#define TF_PARAM_GRID_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "job.h"
#include "model.h"

typedef struct tf_axis {
  const char *param;
  int index; /* -1: no such axis (a one-parameter scan has no y) */
  double min, max;
  long long points;
  double *values;
} tf_axis;

typedef struct tf_param_grid {
  const tf_model *model;
  tf_axis x, y;
  bool *rederive; /* per parameter: derived and given as 0, so prepare() must redo it */
  int *derived;   /* indices of the derived parameters, table order */
  size_t nderived;
  char derived_names[1024];
} tf_param_grid;

/* Reads the axes (y optional unless `need_y`) and finds the parameters to re-derive. */
int tf_param_grid_from_config(tf_param_grid *g, tf_config *cfg, const char *prefix,
                              const tf_model *model, bool need_y, tf_error *err);
void tf_param_grid_destroy(tf_param_grid *g);
uint64_t tf_param_grid_points(const tf_param_grid *g);
/* Parameters of point m into p (nparams values) and its coordinates into xy[2]; returns
 * false if prepare() rejects them. */
bool tf_param_grid_point(const tf_param_grid *g, uint64_t m, double *p, double *xy);

/* What tf_param_grid_report_max reads. */
typedef struct tf_param_grid_max {
  const char *dataset; /* /members/DATASET, rows of `width` */
  uint64_t width, points;
  const tf_param_grid *grid;
} tf_param_grid_max;

/* The scan's summary: the largest value of column 0 of /members/DATASET over the grid points
 * and where it is (/members/grid), read back in member order and written to the JSON as
 * lambda1_max and lambda1_max_at.  A tf_results_summarize_fn (ctx: tf_param_grid_max): rank 0
 * on the closed file. */
int tf_param_grid_report_max(tf_run *run, hid_t file, void *ctx, tf_error *err);

#endif
