/* observable.c — see observable.h. */
#include "observable.h"

#include <stdlib.h>
#include <string.h>

#include "expr.h"

struct tf_observable {
  const tf_kernel *k;
  tf_expr_pool *pool;
  tf_expr *expr;
  size_t nvars;
  const char **names; /* state, outputs, parameters, t */
  double *vals;
};

tf_observable *tf_observable_parse(const tf_kernel *k, const char *text, tf_error *err) {
  tf_observable *o = calloc(1, sizeof *o);
  if (!o) {
    tf_fail(err, "out of memory");
    return NULL;
  }
  o->k = k;
  o->nvars = k->dim + k->noutputs + k->nparams + 1;
  o->names = calloc(o->nvars, sizeof *o->names);
  o->vals = calloc(o->nvars, sizeof *o->vals);
  o->pool = tf_expr_pool_new();
  if (!o->names || !o->vals || !o->pool) {
    tf_observable_destroy(o);
    tf_fail(err, "out of memory");
    return NULL;
  }
  size_t v = 0;
  for (size_t i = 0; i < k->dim; i++) o->names[v++] = k->state_names[i];
  for (size_t i = 0; i < k->noutputs; i++) o->names[v++] = k->output_names[i];
  for (size_t i = 0; i < k->nparams; i++) o->names[v++] = k->params[i].name;
  o->names[v] = "t";
  if (!(o->expr = tf_expr_parse(o->pool, text, o->names, o->nvars, err))) {
    tf_observable_destroy(o);
    return NULL;
  }
  return o;
}

double tf_observable_eval(tf_observable *o, double t, const double *x, const double *p) {
  const tf_kernel *k = o->k;
  double *v = o->vals;
  memcpy(v, x, k->dim * sizeof *v);
  if (k->noutputs) k->outputs(x, p, v + k->dim);
  memcpy(v + k->dim + k->noutputs, p, k->nparams * sizeof *v);
  v[o->nvars - 1] = t;
  return tf_expr_eval(o->expr, v);
}

void tf_observable_destroy(tf_observable *o) {
  if (!o) return;
  tf_expr_pool_free(o->pool);
  free(o->names), free(o->vals);
  free(o);
}

struct tf_reset_map {
  int count;
  int component[TF_MAX_DIM];
  tf_observable *value[TF_MAX_DIM];
  size_t dim;
};

tf_reset_map *tf_reset_map_parse(const tf_kernel *k, const tf_reset_spec *s, tf_error *err) {
  tf_reset_map *r = calloc(1, sizeof *r);
  if (!r) {
    tf_fail(err, "out of memory");
    return NULL;
  }
  r->dim = k->dim;
  for (; r->count < s->count; r->count++) {
    r->component[r->count] = s->component[r->count];
    if (!(r->value[r->count] = tf_observable_parse(k, s->expr[r->count], err))) {
      tf_reset_map_destroy(r);
      return NULL;
    }
  }
  return r;
}

void tf_reset_map_apply(tf_reset_map *r, double t, const double *x, const double *p, double *out) {
  double next[TF_MAX_DIM];
  for (int i = 0; i < r->count; i++) next[i] = tf_observable_eval(r->value[i], t, x, p);
  if (out != x) memcpy(out, x, r->dim * sizeof *x);
  for (int i = 0; i < r->count; i++) out[r->component[i]] = next[i];
}

void tf_reset_map_destroy(tf_reset_map *r) {
  if (!r) return;
  for (int i = 0; i < r->count; i++) tf_observable_destroy(r->value[i]);
  free(r);
}
