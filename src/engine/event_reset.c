/* event_reset.c — see event_reset.h. */
#include "event_reset.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kinds.h"
#include "max_dim.h"
#include "status.h"

int tf_event_reset_init(tf_event_reset *r, const tf_kernel *k, const tf_reset_spec *s,
                        double contact_tol) {
  tf_error why;
  *r = (tf_event_reset){.k = k, .contact_tol = contact_tol, .armed = true};
  r->map = tf_reset_map_parse(k, s, &why);
  return r->map ? 0 : -1;
}

void tf_event_reset_free(tf_event_reset *r) {
  tf_reset_map_destroy(r->map);
  r->map = NULL;
}

double tf_event_reset_offset(const tf_event_reset *r) {
  return r->armed ? 0.0 : r->tol;
}

void tf_event_reset_rearm(tf_event_reset *r, double signed_value) {
  if (!r->armed && signed_value > r->tol) r->armed = true;
}

/* A move of size h along the flow from (t, x) into (*ta, y): time and state together, as s
 * may depend on t. */
static void along_flow(const tf_event_reset *r, const double *p, double t, const double *x,
                       double h, double *ta, double *y) {
  const size_t n = r->k->dim;
  double f[TF_MAX_DIM];
  if (tf_model_rhs(r->k)(t, x, p, f)) memset(f, 0, n * sizeof *f);
  double fnorm = 0, scale = 1;
  for (size_t i = 0; i < n; i++) fnorm = fmax(fnorm, fabs(f[i])), scale = fmax(scale, fabs(x[i]));
  const double d = h * scale / fmax(fnorm, 1.0);
  for (size_t i = 0; i < n; i++) y[i] = x[i] + d * f[i];
  *ta = t + d;
}

/* ds/dt along the flow at (t, x): a central difference (relative step h). */
static double rate(const tf_event_reset *r, const double *p, tf_event_reset_section s, void *ctx,
                   double t, const double *x, double h) {
  double y[TF_MAX_DIM], ta, tb;
  along_flow(r, p, t, x, h, &ta, y);
  const double up = s(ctx, ta, y);
  along_flow(r, p, t, x, -h, &tb, y);
  return (up - s(ctx, tb, y)) / (ta - tb);
}

/* d2s/dt2 along the flow: the difference of the rates a larger step either side. */
static double acceleration(const tf_event_reset *r, const double *p, tf_event_reset_section s,
                           void *ctx, double t, const double *x) {
  double y[TF_MAX_DIM], ta, tb;
  along_flow(r, p, t, x, 1e-4, &ta, y);
  const double up = rate(r, p, s, ctx, ta, y, 1e-6);
  along_flow(r, p, t, x, -1e-4, &tb, y);
  return (up - rate(r, p, s, ctx, tb, y, 1e-6)) / (ta - tb);
}

int tf_event_reset_apply(tf_event_reset *r, const double *p, tf_event_reset_section s, void *ctx,
                         double t, double *x, int *sign, double *step_limit, char *msg,
                         size_t msg_n) {
  const size_t n = r->k->dim;
  double next[TF_MAX_DIM];
  tf_reset_map_apply(r->map, t, x, p, next);
  for (size_t i = 0; i < n; i++)
    if (!isfinite(next[i])) {
      snprintf(msg, msg_n, "the reset map (poincare.reset) gives %s = %g at the event at t = %.9g",
               r->k->state_names ? r->k->state_names[i] : "a component", next[i], t);
      return TF_MEMBER_FAILED;
    }
  const double landed = s(ctx, t, x);
  memcpy(x, next, n * sizeof *x);
  const double value = s(ctx, t, x);
  *step_limit = INFINITY;
  r->tol = fmax(r->contact_tol, 4 * fabs(landed));
  r->armed = fabs(value) > r->tol;
  if (r->armed) {
    *sign = value >= 0 ? 1 : -1;
    return TF_MEMBER_OK;
  }
  const double w = rate(r, p, s, ctx, t, x, 1e-6);
  *sign = w >= 0 ? 1 : -1;
  const double a = *sign * acceleration(r, p, s, ctx, t, x), speed = *sign * w;
  if (!(a < 0)) return TF_MEMBER_OK; /* it leaves for good */
  /* it turns back after rising w^2 / 2|a|: below tol the crossings accumulate (a bouncing
   * ball's), as no event could tell them apart */
  if (!(speed * speed > 2 * -a * r->tol)) {
    snprintf(msg, msg_n,
             "the events accumulate at t = %.9g: after the reset the state leaves the section "
             "by %.3g only (rate %.3g), below the tolerance %.3g",
             t, speed * speed / (2 * -a), w, r->tol);
    return TF_MEMBER_ZENO;
  }
  *step_limit = t + speed / -a;
  return TF_MEMBER_OK;
}
