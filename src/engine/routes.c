/* routes.c — see routes.h.  The one registry of routes: a new route is its adapter file and
 * one X(name) line here, naming the tf_route_<name> the adapter defines. */
#include "routes.h"

#include <string.h>

#define TF_ROUTES \
  X(flow)         \
  X(filippov)     \
  X(contact)      \
  X(impact)       \
  X(map)          \
  X(devs)         \
  X(switches)

#define X(name) extern const tf_route_ops tf_route_##name;
TF_ROUTES
#undef X

static const tf_route_ops *const registry[] = {
#define X(name) &tf_route_##name,
    TF_ROUTES
#undef X
};

const tf_route_ops *tf_route_at(size_t i) {
  return i < sizeof registry / sizeof *registry ? registry[i] : NULL;
}

const tf_route_ops *tf_route_find(const char *name) {
  for (size_t i = 0; i < sizeof registry / sizeof *registry; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

const tf_route_ops *tf_route_ops_for(const tf_kernel *k, const double *p) {
  return tf_route_find(tf_model_route(k, p));
}
