/* member_reduce.c — see member_reduce.h.  Each reduction is an observable (observable.h). */
#include "member_reduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "observable.h"

enum { REDUCE_MAX = 16, REDUCE_DOC = 320 };

struct tf_member_reduce {
  const tf_kernel *k;
  size_t n;
  const char *names[REDUCE_MAX];
  char docs[REDUCE_MAX][REDUCE_DOC];
  tf_observable *value[REDUCE_MAX];
};

static bool is_taken(const char *name, const char *const *taken) {
  for (; taken && *taken; taken++)
    if (strcmp(*taken, name) == 0) return true;
  return false;
}

/* Reduction `name`: checked, parsed, documented as r's next. */
static int add_reduction(tf_member_reduce *r, tf_config *cfg, const char *name,
                         const char *const *taken, tf_error *err) {
  char path[256];
  snprintf(path, sizeof path, "output.reduce.%s", name);
  if (!tf_expr_is_identifier(name) || strlen(name) > 64)
    return tf_config_fail_key(
        cfg, path, err,
        "a reduction's name is a column name: letters, digits and '_', not starting "
        "with a digit, at most 64 characters");
  if (is_taken(name, taken))
    return tf_config_fail_key(
        cfg, path, err, "'%s' is already a table of /members; name the reduction otherwise", name);
  const char *text;
  if (tf_config_get_string(cfg, path, NULL, NULL, &text, err)) return -1;
  tf_error why;
  tf_observable *value = tf_observable_parse(r->k, text, &why);
  if (!value)
    return tf_config_fail_key(cfg, path, err,
                              "%.900s (an expression of the final state, the model's outputs and "
                              "parameters, and t)",
                              why.msg);
  r->names[r->n] = name, r->value[r->n] = value;
  snprintf(r->docs[r->n], REDUCE_DOC, "output.reduce: %s", text);
  r->n++;
  return 0;
}

int tf_member_reduce_from_config(tf_config *cfg, const tf_kernel *k, const char *const *taken,
                                 tf_member_reduce **out, tf_error *err) {
  *out = NULL;
  if (!tf_config_has(cfg, "output.reduce")) return 0;
  const char *names[REDUCE_MAX + 1];
  size_t n = 0;
  if (tf_config_keys(cfg, "output.reduce", names, REDUCE_MAX + 1, &n, err)) return -1;
  if (n > REDUCE_MAX)
    return tf_config_fail_key(cfg, "output.reduce", err, "at most %d reductions", REDUCE_MAX);
  if (n == 0) return tf_config_fail_key(cfg, "output.reduce", err, "name at least one reduction");
  tf_member_reduce *r = calloc(1, sizeof *r);
  if (!r) return tf_fail(err, "out of memory");
  r->k = k;
  for (size_t i = 0; i < n; i++) {
    if (add_reduction(r, cfg, names[i], taken, err)) {
      tf_member_reduce_destroy(r);
      return -1;
    }
  }
  *out = r;
  return 0;
}

size_t tf_member_reduce_count(const tf_member_reduce *r) {
  return r ? r->n : 0;
}

const char *tf_member_reduce_name(const tf_member_reduce *r, size_t i) {
  return r->names[i];
}

const char *tf_member_reduce_doc(const tf_member_reduce *r, size_t i) {
  return r->docs[i];
}

void tf_member_reduce_eval(tf_member_reduce *r, const double *x, double t, const double *p,
                           double *out) {
  for (size_t i = 0; i < r->n; i++) out[i] = tf_observable_eval(r->value[i], t, x, p);
}

void tf_member_reduce_destroy(tf_member_reduce *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) tf_observable_destroy(r->value[i]);
  free(r);
}
