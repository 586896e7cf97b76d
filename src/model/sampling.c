/* sampling.c — see sampling.h. */
#include "sampling.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_qrng.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "max_dim.h"
#include "rng.h"

typedef enum dist_kind { DIST_NORMAL, DIST_UNIFORM, DIST_LOG_UNIFORM } dist_kind;
static const char *const dist_names[] = {"normal", "uniform", "log-uniform", NULL};

typedef struct dist {
  dist_kind kind;
  double a, b; /* normal: mean, sigma; the others: lo, hi */
} dist;

typedef enum design { DESIGN_RANDOM, DESIGN_LHS, DESIGN_SOBOL } design;
static const char *const design_names[] = {"random", "latin-hypercube", "sobol", NULL};

enum { SOBOL_MAX_DIM = 40, SOBOL_MAX_BITS = 30 }; /* GSL's limits */
enum { MAX_QUANTITIES = 64 };                     /* sampled per member, all designs */

struct tf_sampling {
  const tf_kernel *kernel;
  uint64_t seed, members;
  design design;
  double x0[TF_MAX_DIM];
  size_t nstate; /* sampled state components */
  int state_index[TF_MAX_DIM];
  dist state_dist[TF_MAX_DIM];
  double *rows;  /* initial.from_file: members x dim (NULL: none) */
  size_t nparam; /* sampled parameters */
  int *param_index;
  dist *param_dist;
  const char **param_names;
  double *given;  /* the parameters as given (zeros that mean "derive it" kept), to prepare */
  double *params; /* the route's live parameters */
  int sobol_bits;
  uint64_t *sobol_v; /* direction numbers [bit][dimension], numerators over 2^32 */
};

/* --- distributions ----------------------------------------------------------------------- */

/* `path`: {dist: normal, sigma} (mean `mean`) or {dist: uniform | log-uniform, lo, hi}. */
static int read_dist(tf_config *cfg, const char *path, double mean, dist *d, tf_error *err) {
  char key[256], where[256];
  const char *name;
  snprintf(key, sizeof key, "%s.dist", path);
  if (tf_config_get_string(cfg, key, NULL, dist_names, &name, err)) return -1;
  for (d->kind = 0; strcmp(dist_names[d->kind], name) != 0; d->kind++) continue;
  if (d->kind == DIST_NORMAL) {
    d->a = mean;
    snprintf(key, sizeof key, "%s.sigma", path);
    if (tf_config_get_double(cfg, key, NULL, 0.0, INFINITY, &d->b, err)) return -1;
    if (!(d->b > 0) || !isfinite(d->b))
      return tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': expected a finite number > 0, got %g",
                          tf_config_where(cfg, key, where, sizeof where), key, d->b);
    return 0;
  }
  const double lo_min = d->kind == DIST_LOG_UNIFORM ? 0.0 : -INFINITY;
  snprintf(key, sizeof key, "%s.lo", path);
  if (tf_config_get_double(cfg, key, NULL, lo_min, INFINITY, &d->a, err)) return -1;
  if (d->kind == DIST_LOG_UNIFORM && !(d->a > 0))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key '%s': a log-uniform distribution needs lo > 0, got %g",
                        tf_config_where(cfg, key, where, sizeof where), key, d->a);
  snprintf(key, sizeof key, "%s.hi", path);
  if (tf_config_get_double(cfg, key, NULL, -INFINITY, INFINITY, &d->b, err)) return -1;
  if (!isfinite(d->a) || !isfinite(d->b) || !(d->a < d->b))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key '%s': expected finite lo < hi, got lo %g, hi %g",
                        tf_config_where(cfg, key, where, sizeof where), key, d->a, d->b);
  return 0;
}

/* The inverse CDF at u in (0, 1); clamped, so rounding never leaves [lo, hi]. */
static double quantile(const dist *d, double u) {
  switch (d->kind) {
    case DIST_NORMAL:
      return d->a + d->b * gsl_cdf_ugaussian_Pinv(u);
    case DIST_UNIFORM:
      return fmin(d->b, fmax(d->a, d->a + (d->b - d->a) * u));
    case DIST_LOG_UNIFORM:
      return fmin(d->b, fmax(d->a, exp(log(d->a) + (log(d->b) - log(d->a)) * u)));
  }
  return NAN;
}

/* --- initial.sample and model.sample ----------------------------------------------------- */

static int read_state_sample(tf_sampling *s, tf_config *cfg, tf_error *err) {
  const tf_kernel *k = s->kernel;
  const char *names[TF_MAX_DIM + 1];
  size_t n;
  char path[256];
  if (tf_config_keys(cfg, "initial.sample", names, TF_MAX_DIM + 1, &n, err)) return -1;
  for (size_t i = 0; i < n; i++) {
    snprintf(path, sizeof path, "initial.sample.%s", names[i]);
    const int c = tf_kernel_component_of_key(k, cfg, path, names[i], err);
    if (c < 0) return -1;
    s->state_index[i] = c;
    if (read_dist(cfg, path, s->x0[c], &s->state_dist[i], err)) return -1;
  }
  /* state order, whatever the file's order: the design's dimensions do not depend on it */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && s->state_index[j - 1] > s->state_index[j]; j--) {
      const int t = s->state_index[j];
      const dist td = s->state_dist[j];
      s->state_index[j] = s->state_index[j - 1], s->state_dist[j] = s->state_dist[j - 1];
      s->state_index[j - 1] = t, s->state_dist[j - 1] = td;
    }
  s->nstate = n;
  return 0;
}

/* A distribution whose support leaves the parameter's bounds would feed the model values its
 * table forbids. */
static int check_support(tf_config *cfg, const char *path, const tf_param *p, const dist *d,
                         tf_error *err) {
  const double lo = d->kind == DIST_NORMAL ? -INFINITY : d->a;
  const double hi = d->kind == DIST_NORMAL ? INFINITY : d->b;
  if (lo >= p->min && hi <= p->max) return 0;
  char where[256];
  return tf_fail_code(
      err, TF_ERR_CONFIG,
      "%s: key '%s': the %s distribution's support [%g, %g] leaves the bounds [%g, "
      "%g] of parameter '%s'; give a uniform or log-uniform distribution with lo and "
      "hi inside them",
      tf_config_where(cfg, path, where, sizeof where), path, dist_names[d->kind], lo, hi, p->min,
      p->max, p->name);
}

static int read_param_sample(tf_sampling *s, tf_config *cfg, tf_error *err) {
  const tf_kernel *k = s->kernel;
  const size_t cap = k->nparams + 1;
  const char **names = calloc(cap, sizeof *names);
  s->param_index = calloc(cap, sizeof *s->param_index);
  s->param_dist = calloc(cap, sizeof *s->param_dist);
  s->param_names = calloc(cap, sizeof *s->param_names);
  s->given = calloc(cap, sizeof *s->given);
  if (!names || !s->param_index || !s->param_dist || !s->param_names || !s->given)
    return free(names), tf_fail(err, "out of memory");
  char path[256], where[256];
  size_t n;
  int rc = tf_config_keys(cfg, "model.sample", names, cap, &n, err);
  for (size_t i = 0; !rc && i < k->nparams; i++) {
    snprintf(path, sizeof path, "model.params.%s", k->params[i].name);
    rc = tf_config_get_double(cfg, path, &k->params[i].def, k->params[i].min, k->params[i].max,
                              &s->given[i], err);
  }
  /* parameter order, as in the model's table */
  for (size_t i = 0; !rc && i < k->nparams; i++)
    for (size_t j = 0; !rc && j < n; j++) {
      if (strcmp(names[j], k->params[i].name) != 0) continue;
      snprintf(path, sizeof path, "model.sample.%s", names[j]);
      dist *d = &s->param_dist[s->nparam];
      rc = read_dist(cfg, path, s->given[i], d, err) ||
           check_support(cfg, path, &k->params[i], d, err);
      s->param_index[s->nparam] = (int)i;
      s->param_names[s->nparam++] = k->params[i].name;
    }
  for (size_t j = 0; !rc && j < n; j++)
    if (tf_kernel_param_index(k, names[j]) < 0) {
      snprintf(path, sizeof path, "model.sample.%s", names[j]);
      rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': model '%s' has no parameter '%s'",
                        tf_config_where(cfg, path, where, sizeof where), path, k->name, names[j]);
    }
  free(names);
  return rc ? -1 : 0;
}

/* --- initial.from_file ------------------------------------------------------------------- */

typedef struct table_source {
  const char *file;   /* as the config names it */
  const char *config; /* "run.yaml:12: key 'initial.from_file'" */
  size_t dim;
  uint64_t members;
  const tf_kernel *kernel;
} table_source;

static int check_row(const table_source *t, const double *row, const char *where, tf_error *err) {
  for (size_t c = 0; c < t->dim; c++)
    if (!isfinite(row[c]))
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: column %zu ('%s') is %g, not a finite number (%s)", where, c + 1,
                          t->kernel->state_names[c], row[c], t->config);
  return 0;
}

static int too_few_rows(const table_source *t, uint64_t rows, tf_error *err) {
  return tf_fail_code(
      err, TF_ERR_CONFIG,
      "%s: %llu rows of initial states, but the ensemble has %llu members (%s): give "
      "one row per member",
      t->file, (unsigned long long)rows, (unsigned long long)t->members, t->config);
}

/* Fields of a CSV line (commas and/or blanks); returns their number, up to cap. */
static size_t split_fields(char *line, char **fields, size_t cap) {
  size_t n = 0;
  for (char *save = NULL, *tok = strtok_r(line, ", \t\r\n", &save); tok;
       tok = strtok_r(NULL, ", \t\r\n", &save))
    if (n < cap)
      fields[n++] = tok;
    else
      return cap + 1;
  return n;
}

/* CSV: one row per member; blank lines and lines starting with '#' are skipped, and a first
 * line that does not start with a number is a header. */
static int read_csv(const table_source *t, const char *path, double *rows, tf_error *err) {
  FILE *f = fopen(path, "r");
  if (!f)
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: cannot open '%s': %s", t->config, t->file,
                        strerror(errno));
  char line[8192], where[1100];
  char *fields[64];
  uint64_t row = 0;
  int rc = 0;
  bool header_seen = false;
  for (long lineno = 1; !rc && row < t->members && fgets(line, sizeof line, f); lineno++) {
    snprintf(where, sizeof where, "%s:%ld", t->file, lineno);
    const char *p = line + strspn(line, " \t");
    if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0') continue;
    const size_t n = split_fields(line, fields, 63);
    char *end;
    if (!header_seen && n > 0) {
      header_seen = true;
      if (strtod(fields[0], &end) == 0 && end == fields[0]) continue; /* names, not numbers */
    }
    if (n != t->dim) {
      rc = tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: expected %zu columns (the state of model '%s'), got %zu (%s)", where,
                        t->dim, t->kernel->name, n, t->config);
      break;
    }
    double *r = rows + row * t->dim;
    for (size_t c = 0; !rc && c < n; c++) {
      r[c] = strtod(fields[c], &end);
      if (end == fields[c] || *end != '\0')
        rc = tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: column %zu ('%s'): expected a number, got '%s' (%s)", where, c + 1,
                          t->kernel->state_names[c], fields[c], t->config);
    }
    rc = rc || check_row(t, r, where, err);
    row++;
  }
  fclose(f);
  if (!rc && row < t->members) return too_few_rows(t, row, err);
  return rc;
}

/* .npy (NumPy's format 1-3): a C-ordered little-endian float64 array of members x dim (or of
 * members values when dim is 1). */
static int read_npy(const table_source *t, const char *path, double *rows, tf_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: cannot open '%s': %s", t->config, t->file,
                        strerror(errno));
  unsigned char head[12];
  char dict[4096] = "";
  size_t len = 0;
  int rc = 0;
  if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0)
    rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: not a .npy file (%s)", t->file, t->config);
  else if (head[6] == 1)
    len = head[8] | (size_t)head[9] << 8;
  else if (fread(head + 10, 1, 2, f) == 2)
    len = head[8] | (size_t)head[9] << 8 | (size_t)head[10] << 16 | (size_t)head[11] << 24;
  if (!rc && (len == 0 || len >= sizeof dict || fread(dict, 1, len, f) != len))
    rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: a damaged .npy header (%s)", t->file, t->config);
  unsigned long long n_rows = 0, n_cols = 1;
  const char *shape = strstr(dict, "'shape':");
  const int fields = shape ? sscanf(shape, "'shape': (%llu, %llu", &n_rows, &n_cols) : 0;
  if (!rc && (!strstr(dict, "'descr': '<f8'") || !strstr(dict, "'fortran_order': False")))
    rc = tf_fail_code(err, TF_ERR_CONFIG,
                      "%s: expected a C-ordered float64 array ('<f8', numpy.save of a float "
                      "array), got the header %s (%s)",
                      t->file, dict, t->config);
  else if (!rc && (fields < 1 || (fields == 1 && t->dim != 1) || n_cols != t->dim))
    rc = tf_fail_code(err, TF_ERR_CONFIG,
                      "%s: expected %zu columns (the state of model '%s'), got an array of %s "
                      "(%s)",
                      t->file, t->dim, t->kernel->name, shape ? shape : dict, t->config);
  else if (!rc && n_rows < t->members)
    rc = too_few_rows(t, n_rows, err);
  char where[1100];
  for (uint64_t row = 0; !rc && row < t->members; row++) {
    double *r = rows + row * t->dim;
    snprintf(where, sizeof where, "%s: row %llu", t->file, (unsigned long long)row);
    if (fread(r, sizeof *r, t->dim, f) != t->dim)
      rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: the file ends early (%s)", where, t->config);
    rc = rc || check_row(t, r, where, err);
  }
  fclose(f);
  return rc;
}

/* An HDF5 dataset of members x dim numbers (initial.dataset names it). */
static int read_hdf5(const table_source *t, const char *path, const char *dataset, double *rows,
                     tf_error *err) {
  H5E_auto2_t func;
  void *data;
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = file < 0 ? -1 : H5Dopen2(file, dataset, H5P_DEFAULT);
  const hid_t space = d < 0 ? -1 : H5Dget_space(d);
  hsize_t dims[2] = {0, 1};
  const int rank = space < 0 ? -1 : H5Sget_simple_extent_dims(space, dims, NULL);
  int rc = 0;
  if (file < 0)
    rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: cannot open '%s' as an HDF5 file", t->config,
                      t->file);
  else if (d < 0)
    rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: '%s' has no dataset '%s' (key 'initial.dataset')",
                      t->config, t->file, dataset);
  else if (rank < 1 || rank > 2 || (rank == 1 && t->dim != 1) || dims[1] != t->dim)
    rc = tf_fail_code(err, TF_ERR_CONFIG,
                      "%s: dataset '%s': expected %zu columns (the state of model '%s'), got %d "
                      "dimensions of %llu x %llu (%s)",
                      t->file, dataset, t->dim, t->kernel->name, rank, (unsigned long long)dims[0],
                      (unsigned long long)(rank == 2 ? dims[1] : 1), t->config);
  else if (dims[0] < t->members)
    rc = too_few_rows(t, dims[0], err);
  if (!rc) {
    hsize_t start[2] = {0, 0}, count[2] = {t->members, t->dim};
    const hid_t mem = H5Screate_simple(rank, count, NULL);
    if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, rows) < 0)
      rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: dataset '%s': cannot read it as numbers (%s)",
                        t->file, dataset, t->config);
    H5Sclose(mem);
  }
  char where[1100];
  for (uint64_t row = 0; !rc && row < t->members; row++) {
    snprintf(where, sizeof where, "%s: dataset '%s', row %llu", t->file, dataset,
             (unsigned long long)row);
    rc = check_row(t, rows + row * t->dim, where, err);
  }
  if (space >= 0) H5Sclose(space);
  if (d >= 0) H5Dclose(d);
  if (file >= 0) H5Fclose(file);
  H5Eset_auto2(H5E_DEFAULT, func, data);
  return rc;
}

static bool ends_with(const char *s, const char *tail) {
  const size_t n = strlen(s), m = strlen(tail);
  return n >= m && strcmp(s + n - m, tail) == 0;
}

static int read_from_file(tf_sampling *s, tf_config *cfg, tf_error *err) {
  const char *file, *dataset = NULL;
  char where[256], config[300], path[4096];
  if (tf_config_get_string(cfg, "initial.from_file", NULL, NULL, &file, err)) return -1;
  snprintf(config, sizeof config, "%s: key 'initial.from_file'",
           tf_config_where(cfg, "initial.from_file", where, sizeof where));
  tf_config_resolve_path(cfg, "initial.from_file", file, path, sizeof path);
  const bool hdf5 = ends_with(file, ".h5") || ends_with(file, ".hdf5");
  if (hdf5 && tf_config_get_string(cfg, "initial.dataset", NULL, NULL, &dataset, err)) return -1;
  if (!hdf5 && tf_config_has(cfg, "initial.dataset"))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.dataset': only an HDF5 file (.h5, .hdf5) has datasets",
                        tf_config_where(cfg, "initial.dataset", where, sizeof where));
  const table_source t = {file, config, s->kernel->dim, s->members, s->kernel};
  s->rows = malloc(s->members * t.dim * sizeof *s->rows);
  if (!s->rows)
    return tf_fail(err, "out of memory for %llu initial states", (unsigned long long)s->members);
  if (hdf5) return read_hdf5(&t, path, dataset, s->rows, err);
  if (ends_with(file, ".npy")) return read_npy(&t, path, s->rows, err);
  return read_csv(&t, path, s->rows, err);
}

/* --- designs ----------------------------------------------------------------------------- */

/* A bijection of [0, 4^half) from (seed, dimension): four Feistel rounds on Philox. */
static uint64_t feistel(uint64_t seed, uint64_t dimension, uint64_t x, unsigned half) {
  const uint64_t mask = (1ULL << half) - 1, key[2] = {seed, dimension};
  uint64_t l = x >> half, r = x & mask;
  for (uint64_t round = 0; round < 4; round++) {
    const uint64_t ctr[4] = {round, TF_RNG_LHS, r, 0};
    uint64_t out[4];
    tf_rng_philox(key, ctr, out);
    const uint64_t next = l ^ (out[0] & mask);
    l = r, r = next;
  }
  return l << half | r;
}

/* pi_dimension(member): a permutation of [0, n) by cycle walking (the walk stays on the
 * member's cycle, which returns to [0, n); it takes fewer than 4 steps on average). */
static uint64_t lhs_stratum(uint64_t seed, uint64_t dimension, uint64_t member, uint64_t n) {
  unsigned half = 1;
  while (half < 31 && (1ULL << 2 * half) < n) half++;
  uint64_t x = member;
  do x = feistel(seed, dimension, x, half);
  while (x >= n);
  return x;
}

/* Direction numbers from GSL's own sequence: its point 2^(k+1) - 1 (Gray code 2^k) is
 * direction number k. */
static int sobol_setup(tf_sampling *s, tf_config *cfg, size_t ndim, tf_error *err) {
  char where[256];
  tf_config_where(cfg, "initial.design", where, sizeof where);
  if (ndim > SOBOL_MAX_DIM)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.design': a Sobol design has at most %d dimensions, "
                        "got %zu sampled quantities",
                        where, SOBOL_MAX_DIM, ndim);
  while (s->sobol_bits < SOBOL_MAX_BITS && (1ULL << s->sobol_bits) <= s->members) s->sobol_bits++;
  if ((1ULL << s->sobol_bits) <= s->members)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.design': a Sobol design has fewer than 2^%d points, "
                        "the ensemble %llu members",
                        where, SOBOL_MAX_BITS, (unsigned long long)s->members);
  s->sobol_v = calloc((size_t)s->sobol_bits * ndim + 1, sizeof *s->sobol_v);
  gsl_qrng *q = gsl_qrng_alloc(gsl_qrng_sobol, (unsigned)ndim);
  double point[SOBOL_MAX_DIM];
  int rc = !s->sobol_v || !q;
  for (uint64_t i = 1; !rc && i < 1ULL << s->sobol_bits; i++) {
    rc = gsl_qrng_get(q, point) != 0;
    if ((i & (i + 1)) != 0) continue; /* not 2^(k+1) - 1 */
    int k = 0;
    while ((2ULL << k) - 1 != i) k++;
    for (size_t j = 0; j < ndim; j++) {
      const double scaled = ldexp(point[j], 32);
      rc = rc || scaled != floor(scaled);
      s->sobol_v[(size_t)k * ndim + j] = (uint64_t)scaled;
    }
  }
  if (q) gsl_qrng_free(q);
  return rc ? tf_fail(err, "cannot set up the Sobol sequence of %zu dimensions", ndim) : 0;
}

static void sobol_point(const tf_sampling *s, uint64_t index, size_t ndim, double *u) {
  const uint64_t gray = index ^ index >> 1;
  for (size_t j = 0; j < ndim; j++) {
    uint64_t v = 0;
    for (int k = 0; k < s->sobol_bits; k++)
      if (gray >> k & 1) v ^= s->sobol_v[(size_t)k * ndim + j];
    u[j] = ldexp((double)v, -32);
  }
}

static size_t dimensions(const tf_sampling *s) {
  return s->nstate + s->nparam;
}

/* Member m's point of the unit cube (one value per sampled quantity). */
static void unit_point(const tf_sampling *s, uint64_t member, double *u) {
  const size_t n = dimensions(s);
  if (s->design == DESIGN_SOBOL) {
    sobol_point(s, member + 1, n, u);
    return;
  }
  tf_rng_uniforms((tf_rng_key){s->seed, member}, 0, TF_RNG_SAMPLE, n, u);
  if (s->design == DESIGN_LHS)
    for (size_t j = 0; j < n; j++)
      u[j] = ((double)lhs_stratum(s->seed, j, member, s->members) + u[j]) / (double)s->members;
}

/* --- the sampler ------------------------------------------------------------------------- */

/* Combinations that would silently drop one of the keys. */
static int check_exclusive(tf_config *cfg, const tf_sampling_base *b, bool sampled_state,
                           tf_error *err) {
  char where[256];
  if (tf_config_has(cfg, "initial.sample") && tf_config_has(cfg, "initial.from_file"))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.from_file': give initial.sample or initial.from_file, "
                        "not both",
                        tf_config_where(cfg, "initial.from_file", where, sizeof where));
  if (sampled_state && b->spread > 0)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.spread': a sampled initial state (initial.sample, "
                        "initial.from_file) takes no spread; give the normal distribution's "
                        "sigma in initial.sample instead",
                        tf_config_where(cfg, "initial.spread", where, sizeof where));
  if (sampled_state && b->at_twofold)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.at_twofold': members that start at the two-fold take "
                        "no sampled initial state (initial.sample, initial.from_file)",
                        tf_config_where(cfg, "initial.at_twofold", where, sizeof where));
  return 0;
}

static int read_members(tf_config *cfg, const tf_sampling_base *b, uint64_t *members,
                        tf_error *err) {
  const long long d_members = 1;
  long long n = (long long)b->members;
  if (n == 0 && tf_config_get_int(cfg, "ensemble.members", &d_members, 1, 1000000000LL, &n, err))
    return -1;
  *members = (uint64_t)n;
  return 0;
}

int tf_sampling_from_config(tf_config *cfg, const tf_sampling_base *b, tf_sampling **out,
                            tf_error *err) {
  *out = NULL;
  const bool by_sample = tf_config_has(cfg, "initial.sample");
  const bool by_file = tf_config_has(cfg, "initial.from_file");
  const bool params = tf_config_has(cfg, "model.sample");
  if (!by_sample && !by_file && !params) {
    if (!tf_config_has(cfg, "initial.design")) return 0;
    char where[256];
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.design': a design needs quantities to sample "
                        "(initial.sample or model.sample)",
                        tf_config_where(cfg, "initial.design", where, sizeof where));
  }
  tf_sampling *s = calloc(1, sizeof *s);
  if (!(*out = s)) return tf_fail(err, "out of memory");
  s->kernel = b->kernel;
  s->seed = b->seed;
  s->params = b->params;
  memcpy(s->x0, b->x0, b->kernel->dim * sizeof *s->x0);
  const char *design;
  if (check_exclusive(cfg, b, by_sample || by_file, err) ||
      read_members(cfg, b, &s->members, err) || (by_sample && read_state_sample(s, cfg, err)) ||
      (by_file && read_from_file(s, cfg, err)) || (params && read_param_sample(s, cfg, err)) ||
      tf_config_get_string(cfg, "initial.design", "random", design_names, &design, err))
    return -1;
  for (s->design = 0; strcmp(design_names[s->design], design) != 0; s->design++) continue;
  if (dimensions(s) > MAX_QUANTITIES) {
    char where[256];
    return tf_fail_code(
        err, TF_ERR_CONFIG, "%s: key 'model.sample': at most %d quantities are sampled, got %zu",
        tf_config_where(cfg, "model.sample", where, sizeof where), MAX_QUANTITIES, dimensions(s));
  }
  if (s->design == DESIGN_SOBOL && sobol_setup(s, cfg, dimensions(s), err)) return -1;
  return 0;
}

void tf_sampling_destroy(tf_sampling *s) {
  if (!s) return;
  free(s->rows), free(s->param_index), free(s->param_dist), free(s->param_names);
  free(s->given), free(s->sobol_v);
  free(s);
}

/* Members beyond the ensemble the sampler was set up for (a trajectory's ensemble.member) have
 * no row, stratum or point. */
static bool in_range(const tf_sampling *s, uint64_t member) {
  return member < s->members;
}

bool tf_sampling_state(const tf_sampling *s, uint64_t member, double *x) {
  const size_t dim = s->kernel->dim;
  if (!s->rows && s->nstate == 0) return false;
  if (!in_range(s, member)) {
    for (size_t i = 0; i < dim; i++) x[i] = NAN;
    return true;
  }
  if (s->rows) {
    memcpy(x, s->rows + member * dim, dim * sizeof *x);
    return true;
  }
  double u[MAX_QUANTITIES];
  unit_point(s, member, u);
  memcpy(x, s->x0, dim * sizeof *x);
  for (size_t j = 0; j < s->nstate; j++) x[s->state_index[j]] = quantile(&s->state_dist[j], u[j]);
  return true;
}

int tf_sampling_set_params(const tf_sampling *s, uint64_t member, double *drawn, tf_error *err) {
  if (!in_range(s, member))
    return tf_fail_code(err, TF_ERR_INTERNAL,
                        "member %llu is beyond the %llu members of ensemble.members the draws "
                        "are made for",
                        (unsigned long long)member, (unsigned long long)s->members);
  if (s->nparam == 0) return 0;
  const tf_kernel *k = s->kernel;
  double u[MAX_QUANTITIES];
  unit_point(s, member, u);
  memcpy(s->params, s->given, k->nparams * sizeof *s->params);
  for (size_t j = 0; j < s->nparam; j++) {
    const double v = quantile(&s->param_dist[j], u[s->nstate + j]);
    s->params[s->param_index[j]] = v;
    if (drawn) drawn[j] = v;
  }
  return k->prepare ? k->prepare(s->params, err) : 0;
}

size_t tf_sampling_param_count(const tf_sampling *s) {
  return s ? s->nparam : 0;
}

const char *const *tf_sampling_param_names(const tf_sampling *s) {
  return s ? s->param_names : NULL;
}
