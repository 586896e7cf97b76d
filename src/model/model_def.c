/* model_def.c — see model_def.h. */
#include "model_def.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"

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
  return tf_fail_code(c->err, TF_ERR_MODEL, "%s: model '%s': %s", c->origin, c->model, what);
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
  const tf_kind *kind = tf_kind_of(d);
  if (!kind)
    return fail(c, "kind = %d is not one of TF_MODEL_FLOW ... %s", (int)d->kind,
                tf_kind_at(tf_kind_count())->enum_name);
  if (!tf_kind_ops(kind, d)) {
    for (int o = 1; o <= tf_kind_count(); o++)
      if (tf_kind_ops(tf_kind_at(o), d))
        return fail(c,
                    "kind is %s but the table given is .%s: set .%s, or kind = %s to match the "
                    "table",
                    kind->enum_name, tf_kind_at(o)->table, kind->table, tf_kind_at(o)->enum_name);
    return fail(c, "kind is %s but .%s (its table of operations) is NULL", kind->enum_name,
                kind->table);
  }
  for (int o = 1; o <= tf_kind_count(); o++)
    if (tf_kind_at(o) != kind && tf_kind_ops(tf_kind_at(o), d)) {
      return fail(c, "kind is %s but .%s is also set: give exactly one table, the one of the kind",
                  kind->enum_name, tf_kind_at(o)->table);
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

/* A table of n state indices, each -1 (none) or a component below dim; NULL is no table. */
static int check_components(const checker *c, const char *field, const int *comp, size_t n,
                            size_t dim) {
  for (size_t i = 0; comp && i < n; i++)
    if (comp[i] < -1 || comp[i] >= (int)dim)
      return fail(c, "%s[%zu] = %d: expected -1 or a component below %zu", field, i, comp[i], dim);
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
    case TF_MODEL_IMPACT: {
      const tf_impact_ops *m = d->impact;
      /* one event function per surface, and one for the contact force while sticking */
      const int most = TF_EVENT_LOOP_MAX_FUNCTIONS - 1;
      if (m->nimpacts < 1 || m->nimpacts > (size_t)most)
        return fail(c, "impact.nimpacts = %zu: expected 1 to %d surfaces", m->nimpacts, most);
      if (need(c, m->rhs, "impact.rhs") || need(c, m->surface, "impact.surface") ||
          need(c, m->reset, "impact.reset") || need(c, m->stick, "impact.stick") ||
          (!m->constrained_motion &&
           need(c, m->constrained, "impact.constrained_motion or impact.constrained")))
        return -1;
      return check_components(c, "impact.surface_component", m->surface_component, m->nimpacts,
                              d->dim) ||
                     check_components(c, "impact.rate_component", m->rate_component, d->dim, d->dim)
                 ? -1
                 : 0;
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

/* fast_math (twofold/model.h): the same model, its own tables of operations; read only where
 * the definition's size covers it (a model built against an older header has none). */
static int check_fast_math(const checker *c, const tf_model_def *d) {
  const tf_model_def *f = TF_SIZE_COVERS(d->size, tf_model_def, fast_math) ? d->fast_math : NULL;
  if (!f) return 0;
  if (f->size != d->size || f->abi != d->abi || !f->name || strcmp(f->name, d->name) != 0 ||
      f->kind != d->kind || f->dim != d->dim || f->nparams != d->nparams ||
      f->params != d->params || f->state_names != d->state_names)
    return fail(c,
                "fast_math is not the same model: it needs the same name, kind, dim and the same "
                "params and state_names tables (only its tables of operations differ)");
  if (f->fast_math) return fail(c, "fast_math.fast_math is set: leave it NULL");
  char model[256];
  snprintf(model, sizeof model, "%s, fast_math", d->name);
  const checker named = {c->origin, model, c->err};
  return check_kind(&named, f) || check_ops(&named, f) ? -1 : 0;
}

static int validate(const checker *c, const tf_model_def *d) {
  if (d->abi != TWOFOLD_MODEL_ABI)
    return fail(
        c,
        "field abi is %d, expected %d (set .abi = TWOFOLD_MODEL_ABI and rebuild against this "
        "twofold's include/twofold/model.h)",
        d->abi, TWOFOLD_MODEL_ABI);
  if (!valid_key(d->name)) return fail(c, "name is missing or not a valid name");
  const tf_kernel *builtin = tf_kernel_find(d->name);
  if (builtin && builtin != d)
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
  return check_ops(c, d) || check_fast_math(c, d) ? -1 : 0;
}

int tf_model_def_check(const tf_model_def *def, const char *origin, tf_error *err) {
  if (!def) return tf_fail_code(err, TF_ERR_MODEL, "%s: a model definition is NULL", origin);
  const checker c = {origin, def->abi == TWOFOLD_MODEL_ABI && def->name ? def->name : "?", err};
  return validate(&c, def);
}

/* A table copied as far as its size covers (the first member of every table is its size),
 * the rest zero; NULL stays NULL. */
static int adopt_table(const checker *c, const void *given, size_t full, const char *type,
                       const void **out) {
  *out = NULL;
  if (!given) return 0;
  const size_t size = *(const size_t *)given;
  if (size < sizeof size)
    return fail(c, "%s.size = %zu: set it with TF_OPS_SIZE(%s) as the table's first member", type,
                size, type);
  if (size > full)
    return fail(c,
                "%s.size = %zu, more than this twofold's %zu: the model was built against a newer "
                "twofold/model.h; update twofold or rebuild the model against its header",
                type, size, full);
  char *copy = calloc(1, full);
  if (!copy) return tf_fail(c->err, "out of memory");
  memcpy(copy, given, size);
  *(size_t *)copy = full;
  *out = copy;
  return 0;
}

int tf_model_def_adopt(const tf_model_def *def, const char *origin, const tf_model_def **out,
                       tf_error *err) {
  if (!def) return tf_fail_code(err, TF_ERR_MODEL, "%s: a model definition is NULL", origin);
  const size_t size = def->size;
  const checker c = {origin, size >= sizeof *def && def->name ? def->name : "?", err};
  if (!TF_SIZE_COVERS(size, tf_model_def, abi))
    return fail(&c, "size = %zu: begin the definition with TF_MODEL_HEAD", size);
  if (size > sizeof *def)
    return fail(&c,
                "size = %zu, more than this twofold's %zu: the model was built against a newer "
                "twofold/model.h; update twofold or rebuild the model against its header",
                size, sizeof *def);
  tf_model_def d = {0};
  memcpy(&d, def, size);
  d.size = sizeof d;
  d.flow = NULL, d.filippov = NULL, d.codim2 = NULL, d.two_contact = NULL, d.map = NULL;
  d.devs = NULL, d.impact = NULL, d.switches = NULL; /* the copies of def's, set below */
  tf_model_def *copy = malloc(sizeof *copy);
#define ADOPT(member, type) \
  adopt_table(&c, def->member, sizeof(type), #type, (const void **)&d.member)
  int rc = copy ? ADOPT(filippov, tf_filippov_ops) : tf_fail(err, "out of memory");
  tf_filippov_ops *f = (tf_filippov_ops *)d.filippov;
  if (f) f->smooth = NULL; /* def's until its own copy is made: never freed */
  if (!rc)
    rc = ADOPT(flow, tf_flow_ops) || ADOPT(codim2, tf_codim2_ops) ||
         ADOPT(two_contact, tf_two_contact_ops) || ADOPT(map, tf_map_ops) ||
         ADOPT(devs, tf_devs_ops) || ADOPT(impact, tf_impact_ops) ||
         ADOPT(switches, tf_switches_ops);
#undef ADOPT
  if (!rc && f)
    rc = adopt_table(&c, def->filippov->smooth, sizeof(tf_flow_ops), "tf_flow_ops",
                     (const void **)&f->smooth);
  const tf_model_def *fast = d.fast_math; /* def's: adopted in turn, its own fast_math none */
  d.fast_math = NULL;
  if (!rc && fast && !(rc = tf_model_def_adopt(fast, origin, &d.fast_math, err)))
    ((tf_model_def *)d.fast_math)->fast_math = NULL;
  if (copy) *copy = d;
  if (rc) return tf_model_def_release(copy), -1;
  *out = copy;
  return 0;
}

void tf_model_def_release(const tf_model_def *adopted) {
  if (!adopted) return;
  tf_model_def_release(adopted->fast_math);
  if (adopted->filippov) free((void *)adopted->filippov->smooth);
  const void *tables[] = {adopted->flow, adopted->filippov, adopted->codim2, adopted->two_contact,
                          adopted->map,  adopted->devs,     adopted->impact, adopted->switches};
  for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) free((void *)tables[i]);
  free((void *)adopted);
}
