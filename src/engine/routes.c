/* routes.c — see routes.h.  The one registry of routes. */
#include "routes.h"

#include "member_engine.h"

/* The spectra of lyapunov.h in the table's one signature. */
static int flow_spectrum(const tf_kernel *k, const double *p, const double *x0,
                         const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                         tf_lyapunov_result *r, tf_error *err) {
  (void)saltation; /* no events */
  return tf_lyapunov_flow(k, p, x0, ode, o, r, err);
}
static int map_spectrum(const tf_kernel *k, const double *p, const double *x0,
                        const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                        tf_lyapunov_result *r, tf_error *err) {
  (void)ode, (void)saltation; /* iterated, no events */
  return tf_lyapunov_map(k, p, x0, o, r, err);
}
static int impact_spectrum(const tf_kernel *k, const double *p, const double *x0,
                           const tf_ode_options *ode, const tf_lyapunov_options *o, bool saltation,
                           tf_lyapunov_result *r, tf_error *err) {
  (void)saltation; /* the reset's saltation is always applied */
  return tf_lyapunov_impact(k, p, x0, ode, o, r, err);
}
static int switches_spectrum(const tf_kernel *k, const double *p, const double *x0,
                             const tf_ode_options *ode, const tf_lyapunov_options *o,
                             bool saltation, tf_lyapunov_result *r, tf_error *err) {
  (void)saltation; /* always applied at a change of mode */
  return tf_lyapunov_switches(k, p, x0, ode, o, r, err);
}

/* Switches run inside pws.h and impact systems inside flow.h, so they share those adapters. */
static const tf_route_ops registry[] = {
    [TF_ROUTE_FLOW] = {.name = "flow",
                       .member = &tf_member_flow_ops,
                       .smooth_field = true,
                       .stationary = TF_STATIONARY_SMOOTH,
                       .lyapunov = flow_spectrum,
                       .lyapunov_method = "variational"},
    [TF_ROUTE_FILIPPOV] = {.name = "filippov",
                           .member = &tf_member_pws_ops,
                           .stationary = TF_STATIONARY_FILIPPOV,
                           .lyapunov = tf_lyapunov_filippov,
                           .lyapunov_method = "events+saltation",
                           .lyapunov_segments = true},
    /* the stationary engine of a body with two contacts is TF_STATIONARY_DUAL (stationary.c) */
    [TF_ROUTE_CONTACT] = {.name = "contact",
                          .member = &tf_member_contact_ops,
                          .smooth_field = true,
                          .stationary = TF_STATIONARY_CODIM2,
                          .lyapunov_method = "codim2-events+saltation"},
    /* the stationary quantity would run the free flight alone, through the walls */
    [TF_ROUTE_IMPACT] = {.name = "impact",
                         .member = &tf_member_flow_ops,
                         .impacts = true,
                         .smooth_field = true,
                         .stationary = TF_STATIONARY_NONE,
                         .lyapunov = impact_spectrum,
                         .lyapunov_method = "variational",
                         .collapse_why = "sticking on an impact constraint (after chattering or a "
                                         "plastic impact) maps every tangent vector into its "
                                         "tangent space"},
    [TF_ROUTE_MAP] = {.name = "map",
                      .member = &tf_member_map_ops,
                      .iterates = true,
                      .stationary = TF_STATIONARY_NONE,
                      .lyapunov = map_spectrum,
                      .lyapunov_method = "map"},
    [TF_ROUTE_DEVS] = {.name = "devs", .stationary = TF_STATIONARY_NONE},
    /* stationary states on several switching functions are not continued yet */
    [TF_ROUTE_SWITCHES] = {.name = "switches",
                           .member = &tf_member_pws_ops,
                           .stationary = TF_STATIONARY_NONE,
                           .lyapunov = switches_spectrum,
                           .lyapunov_method = "variational"},
};

_Static_assert(sizeof registry / sizeof *registry == TF_ROUTE_SWITCHES + 1,
               "every route has its row");

const tf_route_ops *tf_route_ops_of(tf_route route) {
  return &registry[route];
}

const tf_route_ops *tf_route_ops_for(const tf_kernel *k, const double *p) {
  return tf_route_ops_of(tf_model_route(k, p));
}
