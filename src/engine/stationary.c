/* stationary.c — see stationary.h. */
#include "stationary.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "routes.h"
#include "status.h"

tf_stationary_engine tf_stationary_engine_for(const tf_kernel *k, const double *params) {
  const tf_stationary_engine e = tf_route_ops_for(k, params)->stationary;
  return e == TF_STATIONARY_CODIM2 && tf_contact_is_dual(k) ? TF_STATIONARY_DUAL : e;
}

const char *tf_stationary_modes_doc(tf_stationary_engine e) {
  switch (e) {
    case TF_STATIONARY_FILIPPOV:
      return "-1 slip-, 0 sliding, 1 slip+";
    case TF_STATIONARY_CODIM2:
      return "0 roll (on Sigma), 1 slip";
    case TF_STATIONARY_DUAL:
      return "0 SS, 1 SR, 2 RS, 3 RR";
    default:
      return "0 (a smooth flow has one mode)";
  }
}

const char *tf_stationary_mode_name(tf_stationary_engine e, int mode) {
  switch (e) {
    case TF_STATIONARY_FILIPPOV:
      return tf_mode_name((tf_mode)mode);
    case TF_STATIONARY_CODIM2:
      return tf_c2_mode_name((tf_c2_mode)mode);
    case TF_STATIONARY_DUAL:
      return tf_dc_case_name((tf_dc_case)mode);
    default:
      return "flow";
  }
}

/* The window's sample times and the states there, filled from the engines' dense output. */
typedef struct window {
  size_t dim;
  double t_start, times[TF_STATIONARY_SAMPLES];
  double *x; /* TF_STATIONARY_SAMPLES x dim */
  int next;  /* first sample not passed yet (times increase with the index) */
  bool taken[TF_STATIONARY_SAMPLES];
  long events;
} window;

static void window_init(window *w, size_t dim, double t0, const tf_stationary_options *o,
                        double *buf) {
  const double t_end = t0 + o->time, span = o->window * o->time;
  w->dim = dim, w->x = buf, w->next = 0, w->events = 0;
  memset(w->taken, 0, sizeof w->taken);
  w->t_start = t_end - span;
  for (int k = 0; k < TF_STATIONARY_SAMPLES; k++)
    w->times[k] = t_end - span * (double)(TF_STATIONARY_SAMPLES - k) / TF_STATIONARY_SAMPLES;
}

typedef void (*dense_fn)(const void *engine, double t, double *x);

static void window_take(window *w, const void *engine, dense_fn dense, double ta, double tb) {
  for (; w->next < TF_STATIONARY_SAMPLES && w->times[w->next] <= tb; w->next++)
    if (w->times[w->next] >= ta) {
      dense(engine, w->times[w->next], w->x + (size_t)w->next * w->dim);
      w->taken[w->next] = true;
    }
}

static double window_drift(const window *w, const double *x) {
  double scale = 1.0, d = 0.0;
  for (size_t i = 0; i < w->dim; i++) scale = fmax(scale, fabs(x[i]));
  for (int k = 0; k < TF_STATIONARY_SAMPLES; k++) {
    if (!w->taken[k]) return INFINITY; /* the run ended before the sample (a failure) */
    for (size_t i = 0; i < w->dim; i++) {
      const double e = fabs(w->x[(size_t)k * w->dim + i] - x[i]);
      d = e > d || isnan(e) ? e : d; /* NaN sticks: fmax would drop it */
    }
  }
  return isfinite(d) ? d / scale : INFINITY;
}

/* --- codimension-2 and two-contact kernels ---------------------------------------------------- */

static void contact_dense(const void *c, double t, double *x) {
  tf_contact_dense(c, t, x);
}

static void contact_step(void *ctx, const tf_contact *c, double ta, double tb) {
  window_take(ctx, c, contact_dense, ta, tb);
}

static void contact_event(void *ctx, const tf_contact_event *ev) {
  window *w = ctx;
  if (ev->t > w->t_start) w->events++;
}

/* --- Filippov kernels (evolve.c) ------------------------------------------------------------- */

static void filippov_dense(const void *e, double t, double *x) {
  tf_evolve_dense(e, t, x);
}

static void filippov_step(void *ctx, const tf_evolve *e, double ta, double tb) {
  window_take(ctx, e, filippov_dense, ta, tb);
}

static void filippov_event(void *ctx, const tf_event *ev) {
  window *w = ctx;
  if (ev->t > w->t_start) w->events++;
}

/* --- smooth flows ------------------------------------------------------------------------------
 */

typedef struct smooth_ctx {
  const tf_kernel *k;
  const double *p;
} smooth_ctx;

static int smooth_rhs(double t, const double *x, void *ctx, double *dx) {
  const smooth_ctx *s = ctx;
  return tf_model_rhs(s->k)(t, x, s->p, dx);
}

static void smooth_dense(const void *s, double t, double *x) {
  tf_stepper_dense(s, t, x);
}

static int smooth_step(void *ctx, const tf_stepper *s, double ta, double tb, const double *x) {
  (void)x;
  window_take(ctx, s, smooth_dense, ta, tb);
  return 0;
}

static tf_stationary_result run_smooth(const tf_kernel *k, const double *p,
                                       const tf_stationary_options *o, double t0, double *x,
                                       window *w) {
  tf_stationary_result r = {.status = TF_MEMBER_OK};
  tf_stepper *s = tf_stepper_create(k->dim);
  if (!s) return (tf_stationary_result){.status = TF_MEMBER_FAILED, .failure = "out of memory"};
  smooth_ctx ctx = {k, p};
  tf_stepper_setup(s, smooth_rhs, &ctx, &o->ode);
  tf_stepper_reset(s, t0, x);
  double t = t0;
  tf_drive d = {.max_steps = o->ode.max_steps > 0 ? o->ode.max_steps : LONG_MAX,
                .accepted = smooth_step,
                .ctx = w};
  tf_ode_status st;
  tf_stepper_drive(s, &t, x, t0 + o->time, &d, &st);
  r.steps = d.steps;
  r.status = tf_member_status_of_step(st);
  tf_stepper_destroy(s);
  return r;
}

tf_stationary_result tf_stationary_point(const tf_kernel *k, const double *params,
                                         const tf_stationary_options *o, double t0, double *x) {
  const tf_stationary_engine engine = tf_stationary_engine_for(k, params);
  double *buf = malloc(TF_STATIONARY_SAMPLES * k->dim * sizeof *buf);
  if (!buf) return (tf_stationary_result){.status = TF_MEMBER_FAILED, .failure = "out of memory"};
  window w;
  window_init(&w, k->dim, t0, o, buf);
  const double t_end = t0 + o->time;
  tf_stationary_result r = {.status = TF_MEMBER_FAILED};
  switch (engine) {
    case TF_STATIONARY_CODIM2:
    case TF_STATIONARY_DUAL: {
      const tf_contact_hooks hooks = {contact_event, contact_step, &w};
      const tf_contact_result c = tf_contact_run(k, params, &o->contact, t0, x, t_end, &hooks);
      r.status = c.status, r.mode = c.mode, r.steps = c.work.steps, r.events = c.events;
      r.failure = c.failure;
      break;
    }
    case TF_STATIONARY_FILIPPOV: {
      tf_evolve_options eo = tf_evolve_default_options();
      eo.ode = o->ode;
      tf_evolve *e = tf_evolve_create(k, params, &eo);
      if (!e) {
        r.failure = "the event-driven Filippov engine cannot run this model";
        break;
      }
      tf_evolve_set_callbacks(e, filippov_event, NULL, &w);
      tf_evolve_set_step_callback(e, filippov_step);
      const tf_evolve_result f = tf_evolve_run(e, t0, x, t_end, 0);
      r.status = f.status, r.mode = f.mode, r.steps = f.work.steps, r.events = f.events;
      if (f.status == TF_MEMBER_FAILED)
        r.failure = "stopped at a nondeterministic two-fold (no exit policy in a scan)";
      tf_evolve_destroy(e);
      break;
    }
    case TF_STATIONARY_SMOOTH:
      r = run_smooth(k, params, o, t0, x, &w);
      break;
    case TF_STATIONARY_NONE:
      r.failure = "the model has no flow to run to a stationary state";
      break;
  }
  for (size_t i = 0; i < k->dim; i++)
    if (!isfinite(x[i]) && r.status == TF_MEMBER_OK) r.status = TF_MEMBER_NONFINITE;
  r.window_events = w.events;
  r.drift = window_drift(&w, x);
  r.stationary = r.status == TF_MEMBER_OK && r.window_events == 0 && r.drift <= o->tolerance;
  free(buf);
  return r;
}
