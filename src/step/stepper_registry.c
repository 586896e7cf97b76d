/* stepper_registry.c — the stepper types integrator.method can name.  A new type is its file
 * and one X(...) line here; nothing else looks at which types exist. */
#include <string.h>

#include "stepper_type.h"

#define TF_STEPPER_TYPES \
  X(dopri5)              \
  X(dop853)              \
  X(bs23)                \
  X(rodas4)              \
  X(ros3p)

#define X(name) extern const tf_stepper_type tf_stepper_##name;
TF_STEPPER_TYPES
#undef X

static const tf_stepper_type *const types[] = {
#define X(name) &tf_stepper_##name,
    TF_STEPPER_TYPES
#undef X
};

const tf_stepper_type *tf_stepper_type_at(size_t i) {
  return i < sizeof types / sizeof *types ? types[i] : NULL;
}

const tf_stepper_type *tf_stepper_type_find(const char *name) {
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (strcmp(types[i]->name, name) == 0) return types[i];
  return NULL;
}

const tf_stepper_type *tf_stepper_type_of(const tf_ode_options *o) {
  return o && o->type ? o->type : &tf_stepper_dopri5;
}

const char *tf_stepper_type_name(const tf_stepper_type *type) {
  return (type ? type : &tf_stepper_dopri5)->name;
}

int tf_stepper_type_samples(const tf_stepper_type *type) {
  return (type ? type : &tf_stepper_dopri5)->samples_per_step;
}

bool tf_stepper_type_smooth_only(const tf_stepper_type *type) {
  return (type ? type : &tf_stepper_dopri5)->smooth_only;
}
