/* kernel.c — registry look-ups over the generated kernel table. */
#include "kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "kinds.h"
#include "status.h"

int tf_kernel_param_index(const tf_kernel *k, const char *name) {
  for (size_t i = 0; i < k->nparams; i++)
    if (strcmp(k->params[i].name, name) == 0) return (int)i;
  return -1;
}

const tf_kernel *tf_kernel_find(const char *name) {
  for (size_t i = 0; i < tf_kernel_count(); i++)
    if (strcmp(tf_kernel_at(i)->name, name) == 0) return tf_kernel_at(i);
  return NULL;
}

void tf_kernel_failure_message(const tf_kernel *k, int code, char *buf, size_t n) {
  const char *said = code < 0 && k->failure ? k->failure(code) : NULL;
  if (said)
    snprintf(buf, n, "%s", said);
  else if (code < 0)
    snprintf(buf, n, "code %d", code);
  else
    snprintf(buf, n, "outside its domain at a state already reached (code %d)", code);
}

int tf_kernel_member_failed(const tf_kernel *k, int code, double t) {
  char why[512];
  tf_kernel_failure_message(k, code, why, sizeof why);
  fprintf(stderr, "twofold: a member failed at t = %.17g: model '%s': %s\n", t, k->name, why);
  return TF_MEMBER_FAILED;
}

bool tf_kernel_is_noisy(const tf_kernel *k, const double *x, const double *p) {
  tf_field_fn *diffusion = tf_model_diffusion(k);
  if (!diffusion) return false;
  double *g = calloc(k->dim, sizeof *g);
  if (!g) return true;
  bool noisy = diffusion(0.0, x, p, g) != 0; /* a refusal: not known to be deterministic */
  for (size_t i = 0; i < k->dim; i++) noisy = noisy || g[i] != 0.0;
  free(g);
  return noisy;
}

void tf_join_state_names(const tf_kernel *k, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < k->dim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", k->state_names[i]);
}

int tf_kernel_state_index(const tf_kernel *k, const char *name) {
  for (size_t i = 0; i < k->dim; i++)
    if (strcmp(k->state_names[i], name) == 0) return (int)i;
  return -1;
}

int tf_kernel_component_of_key(const tf_kernel *k, tf_config *cfg, const char *key,
                               const char *name, tf_error *err) {
  const int c = k->state_names ? tf_kernel_state_index(k, name) : -1;
  if (c >= 0) return c;
  char where[256], all[512];
  tf_join_state_names(k, all, sizeof all);
  tf_fail_code(err, TF_ERR_CONFIG,
               "%s: key '%s': model '%s' has no state component '%s' (components: %s)",
               tf_config_where(cfg, key, where, sizeof where), key, k->name, name, all);
  return -1;
}
