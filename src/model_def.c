/* model_def.c — see model_def.h. */
#include "model_def.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devs.h"

/* The ops member of each kind, in the order of tf_model_kind (1-based). */
static const char *const ops_names[] = {"",    "flow", "filippov", "codim2",  "two_contact",
                                        "map", "devs", "",         "switches"};
static const char *const kind_names[] = {"",
                                         "TF_MODEL_FLOW",
                                         "TF_MODEL_FILIPPOV",
                                         "TF_MODEL_CODIM2",
                                         "TF_MODEL_TWO_CONTACT",
                                         "TF_MODEL_MAP",
                                         "TF_MODEL_DEVS",
                                         "",
                                         "TF_MODEL_SWITCHES"};

static const void *ops_of(const tf_model_def *d, int kind) {
  switch (kind) {
    case TF_MODEL_FLOW:
      return d->flow;
    case TF_MODEL_FILIPPOV:
      return d->filippov;
    case TF_MODEL_CODIM2:
      return d->codim2;
    case TF_MODEL_TWO_CONTACT:
      return d->two_contact;
    case TF_MODEL_MAP:
      return d->map;
    case TF_MODEL_DEVS:
      return d->devs;
    case TF_MODEL_SWITCHES:
      return d->switches;
  }
  return NULL;
}

/* Names end up as config keys (model.params.NAME, initial.NAME, --set NAME=...) and output
 * attributes, so they must survive both. */
static bool valid_key(const char *s) {
  if (!s || !*s) return false;
  for (const char *c = s; *c; c++)
    if (*c <= ' ' || *c == '.' || *c == '=' || *c == ',' || *c == ':' || *c == '#' || *c == '"' ||
        *c == '\'' || (unsigned char)*c >= 127)
      return false;
  return true;
}

typedef struct checker {
  const char *origin, *model;
  tf_error *err;
} checker;

static int fail(const checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const checker *c, const char *fmt, ...) {
  char what[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return tf_fail(c->err, "%s: model '%s': %s", c->origin, c->model, what);
}

static int check_names(const checker *c, const char *field, const char *const *names, size_t n) {
  char item[128];
  if (n && !names) {
    snprintf(item, sizeof item, "%s", field);
    return fail(c, "%s is NULL but %s entries are declared", item, field);
  }
  for (size_t i = 0; i < n; i++) {
    snprintf(item, sizeof item, "%s[%zu]", field, i);
    if (!names[i]) return fail(c, "%s is NULL", item);
    if (!valid_key(names[i]))
      return fail(c, "%s = '%s' is not a valid name (no spaces, dots, '=', ',', ':' or quotes)",
                  item, names[i]);
    for (size_t j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return fail(c, "%s: duplicate name '%s'", item, names[i]);
  }
  return 0;
}

static int check_params(const checker *c, const char *field, const tf_param *ps, size_t n) {
  if (n && !ps) return fail(c, "%s is NULL but entries are declared", field);
  const char **names = calloc(n ? n : 1, sizeof *names);
  if (!names) return tf_fail(c->err, "out of memory");
  for (size_t i = 0; i < n; i++) names[i] = ps[i].name;
  const int rc = check_names(c, field, names, n);
  free(names);
  if (rc) return -1;
  for (size_t i = 0; i < n; i++) {
    const tf_param *q = &ps[i];
    if (isnan(q->min) || isnan(q->max) || q->min > q->max)
      return fail(c, "%s '%s': bounds [%g, %g] are not an interval", field, q->name, q->min,
                  q->max);
    if (!isfinite(q->def) || q->def < q->min || q->def > q->max)
      return fail(c, "%s '%s': default %g is outside its bounds [%g, %g]", field, q->name, q->def,
                  q->min, q->max);
  }
  return 0;
}

static int need(const checker *c, const void *fn, const char *what) {
  return fn ? 0 : fail(c, "%s is NULL (required)", what);
}

static int check_kind(const checker *c, const tf_model_def *d) {
  if (d->kind < TF_MODEL_FLOW || d->kind > TF_MODEL_SWITCHES || !*ops_names[d->kind])
    return fail(c, "kind = %d is not one of TF_MODEL_FLOW ... TF_MODEL_SWITCHES", (int)d->kind);
  const int kind = (int)d->kind;
  if (!ops_of(d, kind)) {
    for (int other = TF_MODEL_FLOW; other <= TF_MODEL_SWITCHES; other++)
      if (*ops_names[other] && ops_of(d, other))
        return fail(c,
                    "kind is %s but the table given is .%s: set .%s, or kind = %s to match the "
                    "table",
                    kind_names[kind], ops_names[other], ops_names[kind], kind_names[other]);
    return fail(c, "kind is %s but .%s (its table of operations) is NULL", kind_names[kind],
                ops_names[kind]);
  }
  for (int other = TF_MODEL_FLOW; other <= TF_MODEL_SWITCHES; other++)
    if (other != kind && *ops_names[other] && ops_of(d, other)) {
      return fail(c, "kind is %s but .%s is also set: give exactly one table, the one of the kind",
                  kind_names[kind], ops_names[other]);
    }
  return 0;
}

static int check_flow(const checker *c, const tf_flow_ops *f, const char *table) {
  char what[96];
  snprintf(what, sizeof what, "%s.rhs", table);
  if (need(c, f->rhs, what)) return -1;
  if (f->diffusion_dx && !f->diffusion)
    return fail(c, "%s.diffusion_dx is set without %s.diffusion", table, table);
  return 0;
}

static int check_ops(const checker *c, const tf_model_def *d) {
  switch (d->kind) {
    case TF_MODEL_FLOW:
      return check_flow(c, d->flow, "flow");
    case TF_MODEL_FILIPPOV: {
      const tf_filippov_ops *f = d->filippov;
      if (need(c, f->switching, "filippov.switching") || need(c, f->slip, "filippov.slip"))
        return -1;
      if (f->stick_side && !f->secondary_switching)
        return fail(c, "filippov.stick_side is set without filippov.secondary_switching");
      if (f->regularised_jacobian && !f->regularised)
        return fail(c, "filippov.regularised_jacobian is set without filippov.regularised");
      if (f->smoothed && !f->smooth)
        return fail(c,
                    "filippov.smoothed is set without filippov.smooth (the flow it would run "
                    "as)");
      return f->smooth ? check_flow(c, f->smooth, "filippov.smooth") : 0;
    }
    case TF_MODEL_CODIM2:
      return need(c, d->codim2->rhs, "codim2.rhs") || need(c, d->codim2->sigma2, "codim2.sigma2") ||
                     need(c, d->codim2->field2, "codim2.field2")
                 ? -1
                 : 0;
    case TF_MODEL_TWO_CONTACT: {
      const tf_two_contact_ops *t = d->two_contact;
      if (need(c, t->rhs, "two_contact.rhs") || need(c, t->field_dual, "two_contact.field_dual"))
        return -1;
      for (int i = 0; i < 3; i++) {
        const int ci = t->contact_index[i];
        bool dup = false;
        for (int j = 0; j < i; j++) dup = dup || t->contact_index[j] == ci;
        if (ci < 0 || (size_t)ci >= d->dim || dup)
          return fail(c,
                      "two_contact.contact_index[%d] = %d: expected three distinct state "
                      "indices below dim",
                      i, ci);
      }
      return 0;
    }
    case TF_MODEL_MAP:
      return need(c, d->map->map, "map.map");
    case TF_MODEL_DEVS: {
      const tf_devs_ops *v = d->devs;
      if (need(c, v->map, "devs.map") ||
          need(c, v->map_jacobian, "devs.map_jacobian (the engine's tangent dynamics)"))
        return -1;
      if (d->dim != 1) return fail(c, "a DEVS element is 1-D: dim must be 1");
      const int idx[4] = {v->n, v->q, v->steps, v->transient};
      static const char *const nm[4] = {"n", "q", "steps", "transient"};
      for (int i = 0; i < 4; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++) dup = dup || idx[j] == idx[i];
        if (idx[i] < 0 || (size_t)idx[i] >= d->nparams || dup)
          return fail(c, "devs.%s is not the index of its own parameter in params", nm[i]);
      }
      if (!(isfinite(v->initial_min) && isfinite(v->initial_max) &&
            v->initial_min < v->initial_max))
        return fail(c, "devs.initial_min < devs.initial_max must be a finite interval");
      return 0;
    }
    case TF_MODEL_SWITCHES: {
      const tf_switches_ops *w = d->switches;
      if (w->nswitches < 1 || w->nswitches > TF_SWITCHES_MAX)
        return fail(c, "switches.nswitches = %d: expected 1 to %d", w->nswitches, TF_SWITCHES_MAX);
      return need(c, w->switching, "switches.switching") || need(c, w->field, "switches.field") ? -1
                                                                                                : 0;
    }
  }
  return 0;
}

static int validate(const checker *c, const tf_model_def *d) {
  if (d->abi != TWOFOLD_MODEL_ABI)
    return fail(
        c,
        "field abi is %d, expected %d (set .abi = TWOFOLD_MODEL_ABI and rebuild against this "
        "twofold's include/twofold/model.h)",
        d->abi, TWOFOLD_MODEL_ABI);
  if (!valid_key(d->name)) return fail(c, "name is missing or not a valid name");
  if (tf_kernel_find(d->name))
    return fail(c,
                "the name clashes with the built-in model '%s' (see 'twofold models'); rename "
                "it",
                d->name);
  if (check_kind(c, d)) return -1;
  if (d->dim == 0 || d->dim > TF_MAX_DIM) {
    return fail(c, "dim = %zu: expected 1 to %d (the engine's limit)", d->dim, TF_MAX_DIM);
  }
  if (d->nparams > TF_MODEL_MAX_PARAMS || d->ninitial > TF_MODEL_MAX_EXTRA ||
      d->noutputs > TF_MODEL_MAX_EXTRA) {
    return fail(c,
                "%zu params, %zu initial_params, %zu outputs: the engine's limits are %d, %d, %d",
                d->nparams, d->ninitial, d->noutputs, TF_MODEL_MAX_PARAMS, TF_MODEL_MAX_EXTRA,
                TF_MODEL_MAX_EXTRA);
  }
  if (!d->state_names) return fail(c, "state_names is NULL (required: dim names)");
  if (check_names(c, "state_names", d->state_names, d->dim) ||
      check_params(c, "params", d->params, d->nparams) ||
      check_params(c, "initial_params", d->initial_params, d->ninitial) ||
      check_names(c, "output_names", d->output_names, d->noutputs))
    return -1;
  if (d->initial)
    for (size_t i = 0; i < d->dim; i++)
      if (!isfinite(d->initial[i])) {
        return fail(c, "initial[%zu] = %g is not finite", i, d->initial[i]);
      }
  if (d->ninitial && !d->initial_state)
    return fail(c, "initial_params are declared but initial_state is NULL");
  if (d->noutputs && !d->outputs) return fail(c, "output_names are declared but outputs is NULL");
  return check_ops(c, d);
}

static void set_flow(tf_kernel *k, const tf_flow_ops *f) {
  k->rhs = f->rhs;
  k->jacobian = f->jacobian;
  k->diffusion = f->diffusion;
  k->diffusion_dx = f->diffusion_dx;
}

int tf_kernel_from_def(const tf_model_def *def, const char *origin, const tf_kernel **out,
                       tf_error *err) {
  *out = NULL;
  if (!def) return tf_fail(err, "%s: a model definition is NULL", origin);
  const checker c = {origin, def->abi == TWOFOLD_MODEL_ABI && def->name ? def->name : "?", err};
  if (validate(&c, def)) return -1;
  tf_kernel *k = calloc(1, sizeof *k);
  if (!k) return tf_fail(err, "out of memory");
  k->name = def->name;
  k->doc = def->doc ? def->doc : "";
  k->dim = def->dim;
  k->state_names = def->state_names;
  k->initial = def->initial;
  k->nparams = def->nparams;
  k->params = def->params;
  k->prepare = def->prepare;
  k->ninitial = def->ninitial;
  k->initial_params = def->initial_params;
  k->initial_state = def->initial_state;
  k->noutputs = def->noutputs;
  k->output_names = def->output_names;
  k->outputs = def->outputs;
  switch (def->kind) {
    case TF_MODEL_FLOW:
      k->kind = TF_KERNEL_FLOW;
      set_flow(k, def->flow);
      break;
    case TF_MODEL_FILIPPOV: {
      const tf_filippov_ops *f = def->filippov;
      k->kind = TF_KERNEL_FILIPPOV;
      if (f->smooth) set_flow(k, f->smooth);
      k->switching = f->switching;
      k->slip = f->slip;
      k->stick = f->stick;
      k->slip_jacobian = f->slip_jacobian;
      k->secondary_switching = f->secondary_switching;
      k->stick_side = f->stick_side;
      k->regularised = f->regularised;
      k->regularised_jacobian = f->regularised_jacobian;
      k->smoothed = f->smoothed;
      k->twofold_guess = f->twofold_guess;
      break;
    }
    case TF_MODEL_CODIM2:
      k->kind = TF_KERNEL_FLOW;
      k->rhs = def->codim2->rhs;
      k->sigma2 = def->codim2->sigma2;
      k->field2 = def->codim2->field2;
      break;
    case TF_MODEL_TWO_CONTACT:
      k->kind = TF_KERNEL_FLOW;
      k->rhs = def->two_contact->rhs;
      k->field_dual = def->two_contact->field_dual;
      memcpy(k->contact_index, def->two_contact->contact_index, sizeof k->contact_index);
      break;
    case TF_MODEL_MAP:
      k->kind = TF_KERNEL_MAP;
      k->map = def->map->map;
      k->map_jacobian = def->map->map_jacobian;
      break;
    case TF_MODEL_DEVS: {
      tf_devs_layout *L = calloc(1, sizeof *L);
      if (!L) return free(k), tf_fail(err, "out of memory");
      const tf_devs_ops *v = def->devs;
      *L = (tf_devs_layout){.n = v->n,
                            .q = v->q,
                            .steps = v->steps,
                            .transient = v->transient,
                            .element = NULL, /* the model's own map with all of p */
                            .initial_min = v->initial_min,
                            .initial_max = v->initial_max,
                            .fast = TF_DEVS_GENERIC};
      k->kind = TF_KERNEL_MAP;
      k->map = v->map;
      k->map_jacobian = v->map_jacobian;
      k->devs = L;
      break;
    }
    case TF_MODEL_SWITCHES:
      k->kind = TF_KERNEL_SWITCHES;
      k->switches = def->switches;
      break;
  }
  *out = k;
  return 0;
}
