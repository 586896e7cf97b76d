/* routes.h — the registry of routes: for each engine a member of a model can run on, its
 * member-engine adapter and what else it can do.
 *
 * A route is a tf_route_ops defined by its adapter (member_<route>.c; DEVS's by devs.c) and
 * registered by one X(name) line in routes.c, like a stepper type.  The model layer names a
 * kind's route (kinds.h, tf_model_route) and knows nothing else of it; jobs and engines look
 * the row up here and ask it (is it a map, has it impacts, how does it find a stationary state,
 * how does it compute a Lyapunov spectrum, where may a section reset) instead of comparing
 * routes, so a new route is its adapter file and one registration line. */
#ifndef TF_ROUTES_H
#define TF_ROUTES_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "kinds.h"
#include "lyapunov.h"
#include "stationary.h"

struct tf_member_ops;

/* A route's Lyapunov spectrum from x0 (lyapunov.h); `saltation` false passes events without
 * their saltation matrices where the route has them (a wrong demonstration). */
typedef int tf_route_lyapunov_fn(const tf_kernel *k, const double *p, const double *x0,
                                 const tf_ode_options *ode, const tf_lyapunov_options *o,
                                 bool saltation, tf_lyapunov_result *r, tf_error *err);

typedef struct tf_route_ops {
  const char *name;
  /* the adapter that runs one member (member_engine.h); NULL: none (DEVS) */
  const struct tf_member_ops *member;
  bool iterates;     /* a map: time counts iterations, and there are no integrator keys */
  bool impacts;      /* free flight with resets at constraints (impact.h) */
  bool smooth_field; /* a member follows the model's smooth field (tf_model_rhs) between events */
  /* how a scan runs a member to a stationary state (TF_STATIONARY_NONE: it cannot) */
  tf_stationary_engine stationary;
  /* the spectrum (NULL: none here; bodies under friction run theirs through contact_run.h,
   * DEVS models through jobs/devs), and its method as the lyapunov job names it */
  tf_route_lyapunov_fn *lyapunov;
  const char *lyapunov_method;
  /* the spectrum runs in deterministic segments, and lyapunov.saltation may switch the
   * saltation off */
  bool lyapunov_segments;
  /* why collapsed directions have exponent -inf (NULL: arrivals in sliding) */
  const char *collapse_why;
  /* the spectrum of a member whose state a section resets (poincare.action: reset); NULL: no
   * section resets the route's members in a spectrum */
  tf_route_lyapunov_fn *lyapunov_resets;
  /* a section (poincare.*) may reset a member's state (poincare.action: reset) */
  bool section_resets;
  /* a section's crossings are watched on the dense output of a pws member's steps
   * (pws_section.h), not events of an event loop of the route's own: a scan records them on
   * pws, and a section only logs unless poincare.action says otherwise */
  bool pws_sections;
  /* Optional, for a route without a member adapter: refuses, naming the key, what of cfg the
   * route cannot take before the job says it runs no members one by one. */
  int (*refuse_members)(tf_config *cfg, const tf_kernel *k, tf_error *err);
} tf_route_ops;

/* The registered route of that name (NULL: none). */
const tf_route_ops *tf_route_find(const char *name);
/* The i-th registered route (NULL past the last). */
const tf_route_ops *tf_route_at(size_t i);
/* The row of the route a member of k with parameters p runs on (NULL: the kind's usual one). */
const tf_route_ops *tf_route_ops_for(const tf_kernel *k, const double *p);

#endif
