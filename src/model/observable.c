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
  tf_expr *d[TF_MAX_DIM + 1]; /* after tf_observable_differentiate: d/dx_i, then d/dt */
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

/* The variables' values at (t, x, p), the outputs computed by the model. */
static double *bind(tf_observable *o, double t, const double *x, const double *p) {
  const tf_kernel *k = o->k;
  double *v = o->vals;
  memcpy(v, x, k->dim * sizeof *v);
  if (k->noutputs) k->outputs(x, p, v + k->dim);
  memcpy(v + k->dim + k->noutputs, p, k->nparams * sizeof *v);
  v[o->nvars - 1] = t;
  return v;
}

double tf_observable_eval(tf_observable *o, double t, const double *x, const double *p) {
  return tf_expr_eval(o->expr, bind(o, t, x, p));
}

int tf_observable_differentiate(tf_observable *o, tf_error *err) {
  const tf_kernel *k = o->k;
  for (size_t i = 0; i < k->noutputs; i++)
    if (tf_expr_depends(o->expr, (int)(k->dim + i)))
      return tf_fail_code(
          err, TF_ERR_CONFIG,
          "it names the model's output '%s', computed by a C callback that gives no "
          "derivative; write that output's formula in the expression instead",
          k->output_names[i]);
  for (size_t i = 0; i <= k->dim; i++) {
    const int var = i < k->dim ? (int)i : (int)o->nvars - 1;
    if (!(o->d[i] = tf_expr_diff(o->pool, o->expr, var))) return tf_fail(err, "out of memory");
  }
  return 0;
}

double tf_observable_gradient(tf_observable *o, double t, const double *x, const double *p,
                              double *grad) {
  const size_t n = o->k->dim;
  const double *v = bind(o, t, x, p);
  for (size_t i = 0; i < n; i++) grad[i] = tf_expr_eval(o->d[i], v);
  return tf_expr_eval(o->d[n], v);
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

int tf_reset_map_differentiate(tf_reset_map *r, tf_error *err) {
  for (int i = 0; i < r->count; i++)
    if (tf_observable_differentiate(r->value[i], err)) return -1;
  return 0;
}

void tf_reset_map_jacobian(tf_reset_map *r, double t, const double *x, const double *p, double *jac,
                           double *rate) {
  const size_t n = r->dim;
  memset(jac, 0, n * n * sizeof *jac);
  memset(rate, 0, n * sizeof *rate);
  for (size_t i = 0; i < n; i++) jac[i * n + i] = 1; /* the components not named are kept */
  for (int i = 0; i < r->count; i++) {
    const size_t c = (size_t)r->component[i];
    rate[c] = tf_observable_gradient(r->value[i], t, x, p, jac + c * n);
  }
}

void tf_reset_map_destroy(tf_reset_map *r) {
  if (!r) return;
  for (int i = 0; i < r->count; i++) tf_observable_destroy(r->value[i]);
  free(r);
}
