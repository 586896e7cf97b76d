/* param_grid.c — see param_grid.h. */
#include "param_grid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5io.h"
#include "json.h"

static double axis_value(const tf_axis *a, long long i) {
  return a->min + (double)i * (a->max - a->min) / (double)(a->points - 1);
}

/* <prefix>.<name>.param names a kernel parameter (the getter's choice list prints them). */
static int read_axis(tf_config *cfg, const char *prefix, const tf_kernel *k, const char *name,
                     tf_axis *a, tf_error *err) {
  const char **names = calloc(k->nparams + 1, sizeof *names);
  if (!names) return tf_fail(err, "out of memory");
  char list[TF_ERROR_MAX / 2] = "";
  for (size_t i = 0, len = 0; i < k->nparams; i++) {
    names[i] = k->params[i].name;
    if (len < sizeof list)
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
  }
  char path[96];
  snprintf(path, sizeof path, "%s.%s.param", prefix, name);
  const bool given = tf_config_has(cfg, path);
  int rc = tf_config_get_string(cfg, path, NULL, names, &a->param, err);
  free(names);
  if (rc) {
    /* the getter lists the choices only when a value was given */
    char msg[TF_ERROR_MAX / 2];
    snprintf(msg, sizeof msg, "%.1000s", err->msg);
    if (given) return tf_fail_more(err, "%s (the parameters of model '%s')", msg, k->name);
    return tf_fail_more(err, "%s (a parameter of model '%s': %s)", msg, k->name, list);
  }
  a->index = tf_kernel_param_index(k, a->param);
  const tf_param *p = &k->params[a->index];
  const long long d_points = 100;
  char where[256];
  snprintf(path, sizeof path, "%s.%s.min", prefix, name);
  if (tf_config_get_double(cfg, path, NULL, p->min, p->max, &a->min, err)) return -1;
  snprintf(path, sizeof path, "%s.%s.max", prefix, name);
  if (tf_config_get_double(cfg, path, NULL, p->min, p->max, &a->max, err)) return -1;
  if (!(a->max > a->min))
    return tf_fail_code(
        err, TF_ERR_CONFIG, "%s: key '%s': expected a number > %s.%s.min = %g, got %g",
        tf_config_where(cfg, path, where, sizeof where), path, prefix, name, a->min, a->max);
  snprintf(path, sizeof path, "%s.%s.points", prefix, name);
  if (tf_config_get_int(cfg, path, &d_points, 2, 100000, &a->points, err)) return -1;
  a->values = malloc((size_t)a->points * sizeof *a->values);
  if (!a->values) return tf_fail(err, "out of memory");
  for (long long i = 0; i < a->points; i++) a->values[i] = axis_value(a, i);
  return 0;
}

/* tf_model_from_config already ran prepare() and overwrote the zeros that mean "derive it",
 * so the config is asked again: the getter returns the value written there (or the default
 * it inserted), never prepare's. */
static int find_rederived(tf_param_grid *g, tf_config *cfg, tf_error *err) {
  const tf_kernel *k = g->model->kernel;
  g->rederive = calloc(k->nparams ? k->nparams : 1, sizeof *g->rederive);
  g->derived = calloc(k->nparams ? k->nparams : 1, sizeof *g->derived);
  if (!g->rederive || !g->derived) return tf_fail(err, "out of memory");
  size_t len = 0;
  for (size_t i = 0; i < k->nparams; i++) {
    const tf_param *p = &k->params[i];
    if (!p->derived) continue;
    char path[256];
    double given;
    snprintf(path, sizeof path, "model.params.%s", p->name);
    if (tf_config_get_double(cfg, path, &p->def, p->min, p->max, &given, err)) return -1;
    /* a grid parameter is set by the grid, even where the grid passes through 0 */
    g->rederive[i] = given == 0.0 && (int)i != g->x.index && (int)i != g->y.index;
    g->derived[g->nderived++] = (int)i;
    len += (size_t)snprintf(g->derived_names + len, sizeof g->derived_names - len, "%s%s",
                            len ? "," : "", p->name);
    if (len >= sizeof g->derived_names)
      return tf_fail_code(err, TF_ERR_MODEL, "too many derived parameters");
  }
  return 0;
}

int tf_param_grid_from_config(tf_param_grid *g, tf_config *cfg, const char *prefix,
                              const tf_model *model, bool need_y, tf_error *err) {
  memset(g, 0, sizeof *g);
  g->model = model;
  g->x.index = g->y.index = -1;
  const tf_kernel *k = model->kernel;
  char path[96];
  snprintf(path, sizeof path, "%s.y", prefix);
  if (read_axis(cfg, prefix, k, "x", &g->x, err)) return -1;
  if (need_y || tf_config_has(cfg, path)) {
    if (read_axis(cfg, prefix, k, "y", &g->y, err)) return -1;
    if (g->x.index == g->y.index) {
      char where[256];
      snprintf(path, sizeof path, "%s.y.param", prefix);
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key '%s': the y axis must vary another parameter than x ('%s')",
                          tf_config_where(cfg, path, where, sizeof where), path, g->x.param);
    }
  } else {
    g->y.points = 1;
  }
  return find_rederived(g, cfg, err);
}

void tf_param_grid_destroy(tf_param_grid *g) {
  free(g->x.values), free(g->y.values), free(g->rederive), free(g->derived);
  memset(g, 0, sizeof *g);
}

uint64_t tf_param_grid_points(const tf_param_grid *g) {
  return (uint64_t)g->x.points * (uint64_t)g->y.points;
}

bool tf_param_grid_point(const tf_param_grid *g, uint64_t m, double *p, double *xy) {
  const tf_kernel *k = g->model->kernel;
  memcpy(p, g->model->params, k->nparams * sizeof *p);
  xy[0] = g->x.values[m % (uint64_t)g->x.points];
  xy[1] = g->y.index >= 0 ? g->y.values[m / (uint64_t)g->x.points] : NAN;
  p[g->x.index] = xy[0];
  if (g->y.index >= 0) p[g->y.index] = xy[1];
  for (size_t i = 0; i < k->nparams; i++)
    if (g->rederive[i]) p[i] = 0.0;
  tf_error err; /* the reason is not kept: the point is invalid and its values tell why */
  return !k->prepare || k->prepare(p, &err) == 0;
}

int tf_param_grid_report_max(tf_run *run, hid_t file, void *ctx, tf_error *err) {
  const tf_param_grid_max *m = ctx;
  const uint64_t width = m->width;
  double best[3] = {-INFINITY, NAN, NAN};
  int rc = 0;
  {
    char path[128];
    snprintf(path, sizeof path, "members/%s", m->dataset);
    const uint64_t n = m->points;
    double *v = malloc(n * width * sizeof *v), *xy = malloc(n * 2 * sizeof *xy);
    hid_t dv = H5Dopen2(file, path, H5P_DEFAULT);
    hid_t dg = H5Dopen2(file, "members/grid", H5P_DEFAULT);
    rc = !v || !xy || dv < 0 || dg < 0 || tf_h5_read_rows(dv, H5T_NATIVE_DOUBLE, width, 0, n, v) ||
         tf_h5_read_rows(dg, H5T_NATIVE_DOUBLE, 2, 0, n, xy);
    for (uint64_t i = 0; !rc && i < n; i++)
      if (v[i * width] > best[0])
        best[0] = v[i * width], best[1] = xy[2 * i], best[2] = xy[2 * i + 1];
    if (dv >= 0) H5Dclose(dv);
    if (dg >= 0) H5Dclose(dg);
    free(v), free(xy);
  }
  if (rc)
    return tf_fail_code(err, TF_ERR_IO, "cannot read back the scan from '%s'", run->output_path);
  tf_json_number(run->summary, "lambda1_max", best[0]);
  tf_json_numbers(run->summary, "lambda1_max_at", best + 1, m->grid->y.index >= 0 ? 2 : 1);
  return 0;
}
