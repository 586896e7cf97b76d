/* routes.h — the one table of routes: for each engine a member of a model can run on (kinds.h),
 * its member-engine adapter and what else it can do.
 *
 * Jobs and engines look a model's route up here and ask it (is it a map, has it impacts, how
 * does it find a stationary state, how does it compute a Lyapunov spectrum) instead of
 * switching on the route, so a new route is one row of routes.c and its adapter. */
#ifndef TF_ROUTES_H
#define TF_ROUTES_H

#include <stdbool.h>

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
} tf_route_ops;

/* The row of a route. */
const tf_route_ops *tf_route_ops_of(tf_route route);
/* The row of the route a member of k with parameters p runs on (NULL: the kind's usual one). */
const tf_route_ops *tf_route_ops_for(const tf_kernel *k, const double *p);

#endif
