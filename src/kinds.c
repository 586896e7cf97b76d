/* kinds.c — see kinds.h.  One adapter per kind, in the order of tf_model_kind. */
#include "kinds.h"

#include <stdio.h>

static const void *flow_ops(const tf_model_def *d) {
  return d->flow;
}
static const void *filippov_ops(const tf_model_def *d) {
  return d->filippov;
}
static const void *codim2_ops(const tf_model_def *d) {
  return d->codim2;
}
static const void *two_contact_ops(const tf_model_def *d) {
  return d->two_contact;
}
static const void *map_ops(const tf_model_def *d) {
  return d->map;
}
static const void *devs_ops(const tf_model_def *d) {
  return d->devs;
}
static const void *impact_ops(const tf_model_def *d) {
  return d->impact;
}

static tf_route route_flow(const tf_model_def *d, const double *p) {
  return (void)d, (void)p, TF_ROUTE_FLOW;
}
static tf_route route_filippov(const tf_model_def *d, const double *p) {
  return p && tf_model_self_smoothed(d, p) ? TF_ROUTE_FLOW : TF_ROUTE_FILIPPOV;
}
static tf_route route_contact(const tf_model_def *d, const double *p) {
  return (void)d, (void)p, TF_ROUTE_CONTACT;
}
static tf_route route_map(const tf_model_def *d, const double *p) {
  return (void)d, (void)p, TF_ROUTE_MAP;
}
static tf_route route_devs(const tf_model_def *d, const double *p) {
  return (void)d, (void)p, TF_ROUTE_DEVS;
}
static tf_route route_impact(const tf_model_def *d, const double *p) {
  return (void)d, (void)p, TF_ROUTE_IMPACT;
}

static const char *describe_flow(const tf_model_def *d) {
  return d->flow->diffusion ? "smooth flow with noise (SDE)" : "smooth flow (ODE)";
}
static const char *describe_filippov(const tf_model_def *d) {
  return (void)d, "Filippov system";
}
static const char *describe_codim2(const tf_model_def *d) {
  return (void)d, "codimension-2 Filippov system (2-D slip)";
}
static const char *describe_two_contact(const tf_model_def *d) {
  return (void)d, "body with two contacts (smooth flow off the contact sets)";
}
static const char *describe_map(const tf_model_def *d) {
  return (void)d, "map";
}
static const char *describe_devs(const tf_model_def *d) {
  return (void)d, "DEVS (dynamic ensemble of a 1-D map)";
}
static const char *describe_impact(const tf_model_def *d) {
  return (void)d, "impact system (free flight between resets on impact surfaces)";
}

static const tf_kind kinds[] = {
    {TF_MODEL_FLOW, "TF_MODEL_FLOW", "flow", "a smooth flow", flow_ops, route_flow, describe_flow},
    {TF_MODEL_FILIPPOV, "TF_MODEL_FILIPPOV", "filippov", "a Filippov system", filippov_ops,
     route_filippov, describe_filippov},
    {TF_MODEL_CODIM2, "TF_MODEL_CODIM2", "codim2", "a codimension-2 Filippov system", codim2_ops,
     route_contact, describe_codim2},
    {TF_MODEL_TWO_CONTACT, "TF_MODEL_TWO_CONTACT", "two_contact", "a body with two contacts",
     two_contact_ops, route_contact, describe_two_contact},
    {TF_MODEL_MAP, "TF_MODEL_MAP", "map", "a map", map_ops, route_map, describe_map},
    {TF_MODEL_DEVS, "TF_MODEL_DEVS", "devs", "a DEVS", devs_ops, route_devs, describe_devs},
    {TF_MODEL_IMPACT, "TF_MODEL_IMPACT", "impact", "an impact system", impact_ops, route_impact,
     describe_impact},
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
