/* model.c — see model.h. */
#include "model.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_cache.h"
#include "equations.h"
#include "max_dim.h"
#include "plugin.h"

static int unknown_model(tf_config *cfg, const char *name, tf_error *err) {
  char where[256], known[1024] = "";
  size_t len = 0;
  for (size_t i = 0; i < tf_kernel_count() && len < sizeof known - 64; i++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                            tf_kernel_at(i)->name);
  return tf_fail_code(
      err, TF_ERR_CONFIG,
      "%s: key 'model.name': unknown model '%s' (known: %s; see 'twofold models'; a "
      "model of your own is given by model.library or model.source)",
      tf_config_where(cfg, "model.name", where, sizeof where), name, known);
}

/* The key that says which model: model.library or model.source for a plugin. */
static const char *model_key(const tf_config *cfg) {
  return tf_config_has(cfg, "model.library")     ? "model.library"
         : tf_config_has(cfg, "model.source")    ? "model.source"
         : tf_config_has(cfg, "model.equations") ? "model.equations"
                                                 : "model.name";
}

/* model.equations: C generated into the plugin cache, then compiled and loaded like
 * model.source (an unchanged model hashes to the same file and is compiled once). */
static int equations_kernel(tf_config *cfg, MPI_Comm comm, const tf_kernel **k, tf_error *err) {
  static const char *const others[] = {"model.name", "model.library", "model.source"};
  char where[256], other[256];
  tf_config_where(cfg, "model.equations", where, sizeof where);
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    if (tf_config_has(cfg, others[i]))
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: key 'model.equations': give the model as equations or by %s, not "
                          "both (%s is at %s)",
                          where, others[i], others[i],
                          tf_config_where(cfg, others[i], other, sizeof other));
  char dir[4096], path[4400];
  const char *name;
  if (tf_cache_dir(dir, sizeof dir, err) ||
      tf_equations_write(cfg, dir, path, sizeof path, &name, err))
    return -1;
  tf_error why;
  if (tf_plugin_open_source(path, name, comm, k, &why))
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: key 'model.equations': %s", where, why.msg);
  return 0;
}

static int find_kernel(tf_config *cfg, MPI_Comm comm, const tf_kernel **k, tf_error *err) {
  *k = NULL;
  if (tf_equations_present(cfg)) return equations_kernel(cfg, comm, k, err);
  char where[256];
  const bool lib = tf_config_has(cfg, "model.library"), src = tf_config_has(cfg, "model.source");
  if (lib && src) {
    char other[256];
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: key 'model.source': give model.library (a built shared library) or "
        "model.source (a C file twofold compiles), not both (model.library is at %s)",
        tf_config_where(cfg, "model.source", where, sizeof where),
        tf_config_where(cfg, "model.library", other, sizeof other));
  }
  const char *name = NULL;
  if (!lib && !src) {
    if (tf_config_get_string(cfg, "model.name", NULL, NULL, &name, err)) return -1;
    *k = tf_kernel_find(name);
    return *k ? 0 : unknown_model(cfg, name, err);
  }
  const char *key = lib ? "model.library" : "model.source", *path;
  if (tf_config_get_string(cfg, key, NULL, NULL, &path, err) ||
      (tf_config_has(cfg, "model.name") &&
       tf_config_get_string(cfg, "model.name", NULL, NULL, &name, err)))
    return -1;
  tf_config_where(cfg, key, where, sizeof where);
  if (!*path)
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': expected a file name, got ''", where,
                        key);
  char full[4096];
  tf_config_resolve_path(cfg, key, path, full, sizeof full);
  tf_error why;
  if (lib ? tf_plugin_open_library(full, name, k, &why)
          : tf_plugin_open_source(full, name, comm, k, &why))
    return tf_fail_code(err, tf_error_code_of(&why), "%s: key '%s': %s", where, key, why.msg);
  return 0;
}

/* model.field_math, read only where given: fast runs the model's fast_math variant
 * (twofold/model.h), which a model without one cannot. */
static int apply_field_math(tf_config *cfg, const tf_kernel **k, tf_error *err) {
  static const char *const choices[] = {"exact", "fast", NULL};
  const char *key = "model.field_math", *math;
  if (!tf_config_has(cfg, key)) return 0;
  if (tf_config_get_string(cfg, key, "exact", choices, &math, err)) return -1;
  if (strcmp(math, "fast") != 0) return 0;
  if ((*k)->fast_math) {
    *k = (*k)->fast_math;
    return 0;
  }
  char where[256];
  const char *name = (*k)->name;
  *k = NULL;
  return tf_fail_code(err, TF_ERR_CONFIG,
                      "%s: key '%s': model '%s' has no fast variant of its fields (fast_math, "
                      "twofold/model.h); remove the key or write 'exact'",
                      tf_config_where(cfg, key, where, sizeof where), key, name);
}

/* Every route ends here, so the engines' one dimension limit is checked once, at setup, for
 * built-ins too (a plugin's definition is also refused by model_def.c with its own origin). */
int tf_model_kernel(tf_config *cfg, MPI_Comm comm, const tf_kernel **k, tf_error *err) {
  if (find_kernel(cfg, comm, k, err) || apply_field_math(cfg, k, err)) return -1;
  if ((*k)->dim > TF_MAX_DIM) {
    char where[256];
    const char *key = model_key(cfg);
    const tf_kernel *big = *k;
    *k = NULL;
    return tf_fail_code(err, TF_ERR_MODEL,
                        "%s: key '%s': model '%s' has %zu state components; twofold's limit is %d",
                        tf_config_where(cfg, key, where, sizeof where), key, big->name, big->dim,
                        TF_MAX_DIM);
  }
  return 0;
}

const tf_kernel *tf_model_peek(tf_config *cfg, MPI_Comm comm) {
  const tf_kernel *k;
  tf_error err;
  return tf_model_kernel(cfg, comm, &k, &err) ? NULL : k;
}

int tf_model_from_config(tf_model *model, tf_config *cfg, MPI_Comm comm, unsigned kinds,
                         const char *job, tf_error *err) {
  memset(model, 0, sizeof *model);
  char where[256];
  const tf_kernel *k;
  if (tf_model_kernel(cfg, comm, &k, err)) return -1;
  if (!(kinds & TF_KIND_BIT(k->kind))) {
    char takes[512];
    tf_kinds_list(kinds, takes, sizeof takes);
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': model '%s' is %s, but job '%s' takes %s",
                        tf_config_where(cfg, model_key(cfg), where, sizeof where), model_key(cfg),
                        k->name, tf_kind_of(k)->noun, job, takes);
  }
  model->kernel = k;
  model->params = calloc(k->nparams ? k->nparams : 1, sizeof *model->params);
  if (!model->params) return tf_fail(err, "out of memory");
  for (size_t i = 0; i < k->nparams; i++) {
    char path[256];
    snprintf(path, sizeof path, "model.params.%s", k->params[i].name);
    if (tf_config_get_double(cfg, path, &k->params[i].def, k->params[i].min, k->params[i].max,
                             &model->params[i], err))
      return -1;
    /* an infinite bound marks a half-open range, not an admissible value */
    if (!isfinite(model->params[i]))
      return tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': expected a finite number, got %g",
                          tf_config_where(cfg, path, where, sizeof where), path, model->params[i]);
  }
  if (k->prepare && k->prepare(model->params, err)) {
    char msg[TF_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return tf_fail_code(err, TF_ERR_MODEL, "%s: model '%s': %s",
                        tf_config_where(cfg, "model.params", where, sizeof where), k->name, msg);
  }
  return 0;
}

void tf_model_destroy(tf_model *model) {
  free(model->params);
  memset(model, 0, sizeof *model);
}
