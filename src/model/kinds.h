/* kinds.h — one adapter per kind of model: what the engine does with each.
 *
 * A model is a tf_model_def with exactly one table of operations, the one of its kind
 * (twofold/model.h).  What the engine asks of a model is answered here, once per kind, never
 * by looking at which members a model fills in: which engine runs a member (a
 * Filippov model whose parameters make it its own smooth flow runs on the flow engines), the
 * smooth field the flow integrators may run, a one-line description, the kinds a job takes.
 * Jobs and engines ask the route (by its name, looked up in the engine's registry of routes,
 * routes.h) what it can do, never a model's members, so adding a kind is one ops table in the
 * public header, its check in model_def.c and one adapter in kinds.c naming its route. */
#ifndef TF_KINDS_H
#define TF_KINDS_H

#include <stdbool.h>

#include "kernel.h"

/* The engine that runs a member of a smooth model, and of a Filippov model whose parameters
 * make it its own smooth flow (routes.h). */
#define TF_ROUTE_SMOOTH_FLOW "flow"

typedef struct tf_kind {
  tf_model_kind kind;
  const char *enum_name; /* "TF_MODEL_FLOW", for messages about a definition */
  const char *table;     /* "flow": the member of tf_model_def holding its operations */
  size_t offset;         /* and where that member is */
  const char *noun;      /* "a smooth flow": for messages about the kinds a job takes */
  /* the engine that runs a member: the name of its route, registered in routes.c (engine) */
  const char *route;
  /* Optional: true if parameters p make the model run as its own smooth flow instead. */
  bool (*runs_as_flow)(const tf_model_def *d, const double *p);
  /* One line for `twofold model check`; `noisy` instead when the model has noise. */
  const char *description, *noisy;
} tf_kind;

/* The adapter of a kind, of a model's kind; NULL outside TF_MODEL_FLOW ... the last kind. */
const tf_kind *tf_kind_at(int kind);
const tf_kind *tf_kind_of(const tf_model_def *d);
int tf_kind_count(void); /* kinds are numbered 1 ... tf_kind_count() */

/* The kind's table of operations in d (NULL if d does not give it). */
const void *tf_kind_ops(const tf_kind *kind, const tf_model_def *d);

/* The name of the route for a member of d with parameters p (NULL: the kind's usual route). */
const char *tf_model_route(const tf_model_def *d, const double *p);

/* True if some parameters make a member of d run on another route than its kind's usual one. */
bool tf_model_route_varies(const tf_model_def *d);

/* One line for `twofold model check`. */
const char *tf_model_description(const tf_model_def *d);

/* A set of kinds, for the kinds a job takes. */
#define TF_KIND_BIT(kind) (1u << (kind))
enum {
  TF_KINDS_CONTINUOUS = TF_KIND_BIT(TF_MODEL_FLOW) | TF_KIND_BIT(TF_MODEL_FILIPPOV) |
                        TF_KIND_BIT(TF_MODEL_CODIM2) | TF_KIND_BIT(TF_MODEL_TWO_CONTACT) |
                        TF_KIND_BIT(TF_MODEL_IMPACT) | TF_KIND_BIT(TF_MODEL_SWITCHES),
  TF_KINDS_DISCRETE = TF_KIND_BIT(TF_MODEL_MAP) | TF_KIND_BIT(TF_MODEL_DEVS),
  TF_KINDS_ALL = TF_KINDS_CONTINUOUS | TF_KINDS_DISCRETE
};

/* "a smooth flow, a Filippov system or ...": the nouns of the kinds in `kinds`. */
void tf_kinds_list(unsigned kinds, char *buf, size_t n);

/* The smooth field of a model, where its kind has one: a flow's; a Filippov model's own
 * smooth flow (`smooth`, run when `smoothed` says so); the field off the discontinuity set of
 * codim-2 and two-contact bodies; an impact model's free flight.  NULL otherwise.  Inline:
 * the integrators call them at every evaluation. */
static inline const tf_flow_ops *tf_model_smooth(const tf_model_def *d) {
  return d->kind == TF_MODEL_FLOW       ? d->flow
         : d->kind == TF_MODEL_FILIPPOV ? d->filippov->smooth
                                        : NULL;
}
static inline tf_field_fn *tf_model_rhs(const tf_model_def *d) {
  switch (d->kind) {
    case TF_MODEL_CODIM2:
      return d->codim2->rhs;
    case TF_MODEL_TWO_CONTACT:
      return d->two_contact->rhs;
    case TF_MODEL_IMPACT:
      return d->impact->rhs;
    default:
      return tf_model_smooth(d) ? tf_model_smooth(d)->rhs : NULL;
  }
}
static inline tf_matrix_fn *tf_model_jacobian(const tf_model_def *d) {
  if (d->kind == TF_MODEL_IMPACT) return d->impact->jacobian;
  return tf_model_smooth(d) ? tf_model_smooth(d)->jacobian : NULL;
}
static inline tf_field_fn *tf_model_diffusion(const tf_model_def *d) {
  return tf_model_smooth(d) ? tf_model_smooth(d)->diffusion : NULL;
}
static inline tf_field_fn *tf_model_diffusion_dx(const tf_model_def *d) {
  return tf_model_smooth(d) ? tf_model_smooth(d)->diffusion_dx : NULL;
}

/* A map's or a DEVS element's map and Jacobian (NULL for other kinds). */
typedef int tf_map_fn(const double *x, const double *p, double *out); /* 0 or a refusal */
typedef void tf_map_jacobian_fn(const double *x, const double *p, double *jac);
static inline tf_map_fn *tf_model_map(const tf_model_def *d) {
  return d->kind == TF_MODEL_MAP ? d->map->map : d->kind == TF_MODEL_DEVS ? d->devs->map : NULL;
}
static inline tf_map_jacobian_fn *tf_model_map_jacobian(const tf_model_def *d) {
  return d->kind == TF_MODEL_MAP    ? d->map->map_jacobian
         : d->kind == TF_MODEL_DEVS ? d->devs->map_jacobian
                                    : NULL;
}

/* True for a Filippov model whose parameters p make it run as its own smooth flow. */
bool tf_model_self_smoothed(const tf_model_def *d, const double *p);

#endif
