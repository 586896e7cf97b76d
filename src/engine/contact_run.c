/* contact_run.c — see contact_run.h. */
#include "contact_run.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "kinds.h"
#include "status.h"

struct tf_contact {
  tf_evolve2 *e; /* exactly one of e, d */
  tf_dual *d;
  tf_contact_hooks hooks;
};

bool tf_contact_kernel(const tf_kernel *k) {
  return k->kind == TF_MODEL_CODIM2 || k->kind == TF_MODEL_TWO_CONTACT;
}

bool tf_contact_is_dual(const tf_kernel *k) {
  return k->kind == TF_MODEL_TWO_CONTACT;
}

int tf_contact_pair_check(tf_config *cfg, const tf_ode_options *ode, tf_error *err) {
  if (!tf_stepper_type_smooth_only(ode->type)) return 0;
  /* slip starts non-smoothly at the end of rolling: DOP853's error estimate, built for smooth
   * solutions, misses it (the wheelset's error stayed at 1e-8 for every rtol from 1e-10 to
   * 1e-12, where DOPRI5's follows the tolerance) */
  char where[256];
  return tf_fail_code(err, TF_ERR_CONFIG,
                      "%s: key 'integrator.method': %s is not offered for bodies under spatial "
                      "friction (their slip starts non-smoothly, which its error estimate misses); "
                      "use dopri5",
                      tf_config_where(cfg, "integrator.method", where, sizeof where),
                      tf_stepper_type_name(ode->type));
}

int tf_contact_options_from_config(tf_config *cfg, const tf_ode_options *ode, tf_contact_options *o,
                                   tf_error *err) {
  memset(o, 0, sizeof *o);
  if (tf_contact_pair_check(cfg, ode, err)) return -1;
  tf_evolve2_options *e = &o->engine;
  *e = tf_evolve2_default_options();
  e->ode = *ode;
  const double d_sigma = e->sigma_tol, d_event = e->event_tol, d_rate = e->max_event_rate,
               d_slave = e->slave_radius, d_lag = e->slave_lag;
  const long long d_max = e->max_events;
  long long max_events;
  if (tf_config_get_double(cfg, "codim2.sigma_tol", &d_sigma, 1e-15, 1e-2, &e->sigma_tol, err) ||
      tf_config_get_double(cfg, "codim2.slave_radius", &d_slave, 0.0, 1.0, &e->slave_radius, err) ||
      tf_config_get_double(cfg, "codim2.slave_lag", &d_lag, 0.0, 1e-2, &e->slave_lag, err) ||
      tf_config_get_double(cfg, "codim2.event_tol", &d_event, 1e-16, 1e-3, &e->event_tol, err) ||
      tf_config_get_double(cfg, "codim2.max_event_rate", &d_rate, 1.0, INFINITY, &e->max_event_rate,
                           err) ||
      tf_config_get_int(cfg, "codim2.max_events", &d_max, 1, LLONG_MAX, &max_events, err))
    return -1;
  e->max_events = (long)max_events;
  o->lyapunov_interval = 0.1;
  return 0;
}

/* --- hooks of the two engines, forwarded as one kind of record ------------------------------ */

static void c2_event(void *ctx, const tf_c2_event *ev) {
  const tf_contact *c = ctx;
  c->hooks.on_event(c->hooks.ctx, &(tf_contact_event){
                                      .t = ev->t, .kind = ev->kind, .detail = ev->phi, .x = ev->x});
}

static void c2_step(void *ctx, const tf_evolve2 *e, double ta, double tb) {
  (void)e;
  const tf_contact *c = ctx;
  c->hooks.on_step(c->hooks.ctx, c, ta, tb);
}

static void dc_event(void *ctx, const tf_dc_event *ev) {
  const tf_contact *c = ctx;
  c->hooks.on_event(c->hooks.ctx, &(tf_contact_event){
                                      .t = ev->t, .kind = ev->kind, .detail = ev->to, .x = ev->x});
}

static void dc_step(void *ctx, const tf_dual *d, double ta, double tb) {
  (void)d;
  const tf_contact *c = ctx;
  c->hooks.on_step(c->hooks.ctx, c, ta, tb);
}

void tf_contact_dense(const tf_contact *c, double t, double *x) {
  if (c->d)
    tf_dual_dense(c->d, t, x);
  else
    tf_evolve2_dense(c->e, t, x);
}

int tf_contact_mode(const tf_contact *c) {
  return c->d ? (int)tf_dual_case(c->d) : (int)tf_evolve2_mode(c->e);
}

void tf_contact_request_stop(const tf_contact *c) {
  if (c->d)
    tf_dual_request_stop(c->d);
  else
    tf_evolve2_request_stop(c->e);
}

static tf_contact_result failed(const char *why) {
  tf_contact_result r = {.status = TF_MEMBER_FAILED, .failure = why};
  r.c2.failure = why, r.dual.failure = why;
  return r;
}

tf_contact_result tf_contact_run(const tf_kernel *k, const double *params,
                                 const tf_contact_options *o, double t0, double *x, double t_end,
                                 const tf_contact_hooks *hooks) {
  tf_contact c = {0};
  if (hooks) c.hooks = *hooks;
  tf_contact_result r = {0};
  if (tf_contact_is_dual(k)) {
    c.d = tf_dual_create(k, params, &o->engine);
    if (!c.d) return failed("the dual-contact engine cannot run this model");
    tf_dual_set_callbacks(c.d, c.hooks.on_event ? dc_event : NULL, c.hooks.on_step ? dc_step : NULL,
                          &c);
    r.dual = tf_dual_run(c.d, t0, x, t_end);
    r.status = r.dual.status, r.t = r.dual.t, r.work = r.dual.work, r.events = r.dual.events;
    r.mode = (int)r.dual.final_case, r.failure = r.dual.failure;
    tf_dual_destroy(c.d);
    return r;
  }
  c.e = tf_evolve2_create(k, params, &o->engine);
  if (!c.e) return failed("the codimension-2 engine cannot run this model");
  if (o->exponents > 0 && tf_evolve2_enable_tangent(c.e, o->exponents, o->lyapunov_interval)) {
    tf_evolve2_destroy(c.e);
    return failed("out of memory for the tangent vectors");
  }
  tf_evolve2_set_callbacks(c.e, c.hooks.on_event ? c2_event : NULL,
                           c.hooks.on_step ? c2_step : NULL, &c);
  r.c2 = tf_evolve2_run(c.e, t0, x, t_end);
  r.status = r.c2.status, r.t = r.c2.t, r.work = r.c2.work, r.events = r.c2.events;
  r.mode = (int)r.c2.mode, r.failure = r.c2.failure;
  tf_evolve2_destroy(c.e);
  return r;
}

int tf_contact_refuse_dual_lyapunov(tf_config *cfg, const tf_kernel *k, const char *what,
                                    tf_error *err) {
  if (!k || !tf_contact_is_dual(k)) return 0;
  char where[256];
  return tf_fail_code(
      err, TF_ERR_CONFIG,
      "%s: key 'model.name': model '%s' has two contacts; %s has no tangent dynamics "
      "for its kinematic cases (scan.quantity stationary, job trajectory or slip-onset "
      "run it)",
      tf_config_where(cfg, "model.name", where, sizeof where), k->name, what);
}

const char *tf_contact_modes_doc(const tf_kernel *k) {
  return tf_contact_is_dual(k) ? "0 SS, 1 SR, 2 RS, 3 RR" : "0 roll (on Sigma), 1 slip";
}

const char *tf_contact_event_kinds_doc(const tf_kernel *k) {
  return tf_contact_is_dual(k) ? "0 to_SS, 1 to_SR, 2 to_RS, 3 to_RR, 4 crossing"
                               : "0 roll_start, 1 roll_end, 2 crossing";
}

const char *tf_contact_mode_name(const tf_kernel *k, int mode) {
  return tf_contact_is_dual(k) ? tf_dc_case_name((tf_dc_case)mode)
                               : tf_c2_mode_name((tf_c2_mode)mode);
}

int tf_contact_mode_count(const tf_kernel *k) {
  return tf_contact_is_dual(k) ? TF_DC_CASE_COUNT : 2;
}
