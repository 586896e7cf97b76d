/* test_routes.c — the registry of routes (routes.h): every kind's route is registered under the
 * name the model layer gives it, names are unique, each route that runs members has a complete
 * adapter, and what the jobs ask of a route is what each engine can do. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kernel.h"
#include "member_engine.h"
#include "routes.h"

static size_t route_count(void) {
  size_t n = 0;
  while (tf_route_at(n)) n++;
  return n;
}

static void every_kind_has_its_route(void) {
  for (int kind = 1; kind <= tf_kind_count(); kind++) {
    const tf_kind *a = tf_kind_at(kind);
    const tf_route_ops *r = tf_route_find(a->route);
    CHECK(r && strcmp(r->name, a->route) == 0, "kind %s: route '%s' registered", a->enum_name,
          a->route);
  }
  CHECK(tf_route_find(TF_ROUTE_SMOOTH_FLOW) != NULL, "the smooth-flow route is registered");
  CHECK(tf_route_find("no-such-route") == NULL, "an unknown name finds nothing");
}

static void names_unique_adapters_complete(void) {
  const size_t n = route_count();
  CHECK(n == 7, "7 routes registered, got %zu", n);
  for (size_t i = 0; i < n; i++) {
    const tf_route_ops *r = tf_route_at(i);
    for (size_t j = 0; j < i; j++)
      CHECK(strcmp(tf_route_at(j)->name, r->name) != 0, "route name '%s' twice", r->name);
    const tf_member_ops *m = r->member;
    CHECK(!m || (m->create && m->run && m->destroy), "route '%s': adapter complete", r->name);
  }
}

/* The capabilities the jobs rely on, route by route (docs/ARCHITECTURE.md, the kinds table). */
static void capabilities(void) {
  static const struct {
    const char *name;
    bool members, iterates, impacts, smooth, spectrum, resets_spectrum, section_resets,
        pws_sections;
  } want[] = {
      {"flow", true, false, false, true, true, true, true, false},
      {"filippov", true, false, false, false, true, false, true, true},
      {"contact", true, false, false, true, false, false, false, false},
      {"impact", true, false, true, true, true, true, true, false},
      {"map", true, true, false, false, true, false, false, false},
      {"devs", false, false, false, false, false, false, false, false},
      {"switches", true, false, false, false, true, false, true, true},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const tf_route_ops *r = tf_route_find(want[i].name);
    CHECK(r != NULL, "route '%s'", want[i].name);
    if (!r) continue;
    CHECK((r->member != NULL) == want[i].members, "%s: member adapter", r->name);
    CHECK(r->iterates == want[i].iterates, "%s: iterates", r->name);
    CHECK(r->impacts == want[i].impacts, "%s: impacts", r->name);
    CHECK(r->smooth_field == want[i].smooth, "%s: smooth field", r->name);
    CHECK((r->lyapunov != NULL) == want[i].spectrum, "%s: spectrum", r->name);
    CHECK((r->lyapunov_resets != NULL) == want[i].resets_spectrum, "%s: spectrum with resets",
          r->name);
    CHECK(r->section_resets == want[i].section_resets, "%s: section resets", r->name);
    CHECK(r->pws_sections == want[i].pws_sections, "%s: sections watched on pws", r->name);
    /* the routes whose members pws.h runs are the ones whose sections its watch finds */
    const tf_route_ops *pws = tf_route_find("filippov");
    CHECK(r->pws_sections == (r->member && r->member == pws->member),
          "%s: pws_sections but not pws's adapter, or the reverse", r->name);
  }
  /* a model's route is found through its kind: the two contact kinds share one */
  const tf_kernel *pool = tf_kernel_find("ball-pool"), *meter = tf_kernel_find("flowmeter");
  CHECK(pool && meter && tf_route_ops_for(pool, NULL) == tf_route_ops_for(meter, NULL) &&
            tf_route_ops_for(pool, NULL) == tf_route_find("contact"),
        "codim-2 and two-contact bodies run on the contact route");
}

int main(void) {
  every_kind_has_its_route();
  names_unique_adapters_complete();
  capabilities();
  return check_report("test_routes");
}
