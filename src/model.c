/* model.c — see model.h. */
#include "model.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(tf_kernel_kind kind) {
  switch (kind) {
    case TF_KERNEL_FLOW:
      return "a smooth flow";
    case TF_KERNEL_FILIPPOV:
      return "a Filippov system";
    case TF_KERNEL_MAP:
      return "a map";
  }
  return "?";
}

static int unknown_model(tf_config *cfg, const char *name, tf_error *err) {
  char where[256], known[1024] = "";
  size_t len = 0;
  for (size_t i = 0; i < tf_kernel_count() && len < sizeof known - 64; i++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                            tf_kernel_at(i)->name);
  return tf_fail(err, "%s: key 'model.name': unknown model '%s' (known: %s; see 'twofold models')",
                 tf_config_where(cfg, "model.name", where, sizeof where), name, known);
}

int tf_model_from_config(tf_model *model, tf_config *cfg, tf_kernel_kind kind, const char *job,
                         tf_error *err) {
  memset(model, 0, sizeof *model);
  const char *name;
  char where[256];
  if (tf_config_get_string(cfg, "model.name", NULL, NULL, &name, err)) return -1;
  const tf_kernel *k = tf_kernel_find(name);
  if (!k) return unknown_model(cfg, name, err);
  if (k->kind != kind)
    return tf_fail(err, "%s: key 'model.name': model '%s' is %s, but job '%s' needs %s",
                   tf_config_where(cfg, "model.name", where, sizeof where), k->name,
                   kind_name(k->kind), job, kind_name(kind));
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
      return tf_fail(err, "%s: key '%s': expected a finite number, got %g",
                     tf_config_where(cfg, path, where, sizeof where), path, model->params[i]);
  }
  if (k->prepare && k->prepare(model->params, err)) {
    char msg[TF_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return tf_fail(err, "%s: model '%s': %s",
                   tf_config_where(cfg, "model.params", where, sizeof where), k->name, msg);
  }
  return 0;
}

void tf_model_destroy(tf_model *model) {
  free(model->params);
  memset(model, 0, sizeof *model);
}
