/* kinds.c — see kinds.h.  One adapter per kind, in the order of tf_model_kind. */
#include "kinds.h"

#include <stddef.h>
#include <stdio.h>

#define TABLE(member) #member, offsetof(tf_model_def, member)

static const tf_kind kinds[] = {
    {TF_MODEL_FLOW, "TF_MODEL_FLOW", TABLE(flow), "a smooth flow", TF_ROUTE_SMOOTH_FLOW, NULL,
     "smooth flow (ODE)", "smooth flow with noise (SDE)"},
    {TF_MODEL_FILIPPOV, "TF_MODEL_FILIPPOV", TABLE(filippov), "a Filippov system", "filippov",
     tf_model_self_smoothed, "Filippov system", NULL},
    {TF_MODEL_CODIM2, "TF_MODEL_CODIM2", TABLE(codim2), "a codimension-2 Filippov system",
     "contact", NULL, "codimension-2 Filippov system (2-D slip)", NULL},
    {TF_MODEL_TWO_CONTACT, "TF_MODEL_TWO_CONTACT", TABLE(two_contact), "a body with two contacts",
     "contact", NULL, "body with two contacts (smooth flow off the contact sets)", NULL},
    {TF_MODEL_MAP, "TF_MODEL_MAP", TABLE(map), "a map", "map", NULL, "map", NULL},
    {TF_MODEL_DEVS, "TF_MODEL_DEVS", TABLE(devs), "a DEVS", "devs", NULL,
     "DEVS (dynamic ensemble of a 1-D map)", NULL},
    {TF_MODEL_IMPACT, "TF_MODEL_IMPACT", TABLE(impact), "an impact system", "impact", NULL,
     "impact system (free flight between resets on impact surfaces)", NULL},
    {TF_MODEL_SWITCHES, "TF_MODEL_SWITCHES", TABLE(switches),
     "a Filippov system with several switching functions", "switches", NULL,
     "Filippov system with several switching functions", NULL},
};

int tf_kind_count(void) {
  return (int)(sizeof kinds / sizeof kinds[0]);
}

const tf_kind *tf_kind_at(int kind) {
  return kind >= 1 && kind <= tf_kind_count() ? &kinds[kind - 1] : NULL;
}

const tf_kind *tf_kind_of(const tf_model_def *d) {
  return tf_kind_at((int)d->kind);
}

const void *tf_kind_ops(const tf_kind *kind, const tf_model_def *d) {
  return *(const void *const *)((const char *)d + kind->offset);
}

const char *tf_model_route(const tf_model_def *d, const double *p) {
  const tf_kind *kind = tf_kind_of(d);
  return p && kind->runs_as_flow && kind->runs_as_flow(d, p) ? TF_ROUTE_SMOOTH_FLOW : kind->route;
}

bool tf_model_route_varies(const tf_model_def *d) {
  return tf_kind_of(d)->runs_as_flow != NULL;
}

const char *tf_model_description(const tf_model_def *d) {
  const tf_kind *kind = tf_kind_of(d);
  return kind->noisy && tf_model_diffusion(d) ? kind->noisy : kind->description;
}

bool tf_model_self_smoothed(const tf_model_def *d, const double *p) {
  return d->kind == TF_MODEL_FILIPPOV && d->filippov->smoothed && d->filippov->smooth &&
         d->filippov->smoothed(p);
}

void tf_kinds_list(unsigned set, char *buf, size_t n) {
  int count = 0, total = 0;
  for (int k = 1; k <= tf_kind_count(); k++) total += (set & TF_KIND_BIT(k)) != 0;
  size_t len = 0;
  buf[0] = '\0';
  for (int k = 1; k <= tf_kind_count() && len < n; k++) {
    if (!(set & TF_KIND_BIT(k))) continue;
    count++;
    const char *sep = count == 1 ? "" : count == total ? " or " : ", ";
    len += (size_t)snprintf(buf + len, n - len, "%s%s", sep, kinds[k - 1].noun);
  }
}
