/* slip_onset.c — see slip_onset.h.  The run stops at the departure by giving the engine an
 * event budget of one: the first event of a start on Sigma_RR is its departure. */
#include "slip_onset.h"

#include <math.h>
#include <string.h>

#include "checkpoint.h"
#include "status.h"

typedef struct onset_ctx {
  tf_slip_onset *out;
  size_t n;
} onset_ctx;

static void on_event(void *ctx, const tf_dc_event *ev) {
  onset_ctx *c = ctx;
  if (c->out->slipped || ev->from != TF_DC_RR) return;
  c->out->slipped = true;
  c->out->t = ev->t;
  c->out->to = ev->to;
  memcpy(c->out->x, ev->x, c->n * sizeof *ev->x);
}

int tf_slip_onset_run(const tf_kernel *k, const double *params, const tf_evolve2_options *opts,
                      double t0, const double *x0, double t_end, tf_slip_onset *out) {
  memset(out, 0, sizeof *out);
  out->t = NAN;
  out->status = TF_MEMBER_FAILED;
  if (k->kind != TF_MODEL_TWO_CONTACT) {
    out->failure = "the model is not a body with two contacts";
    return -1;
  }
  const size_t n = k->dim;
  tf_evolve2_options o = opts ? *opts : tf_evolve2_default_options();
  for (int i = 0; i < 3; i++)
    if (!(fabs(x0[k->two_contact->contact_index[i]]) <= o.sigma_tol)) {
      out->failure = "the start does not roll at both contacts (a slip velocity is not 0)";
      return -1;
    }
  o.max_events = 1;
  tf_dual *d = tf_dual_create(k, params, &o);
  if (!d) {
    out->failure = "cannot set up the dual-contact engine";
    return -1;
  }
  onset_ctx ctx = {out, n};
  tf_dual_set_callbacks(d, on_event, NULL, &ctx);
  double x[TF_MAX_DIM];
  memcpy(x, x0, n * sizeof *x);
  const tf_dual_result r = tf_dual_run(d, t0, x, t_end);
  tf_dual_destroy(d);
  out->steps = r.work.steps, out->rhs_evals = r.work.rhs_evals;
  /* the event budget of one is what stopped a run that slipped */
  out->status = out->slipped && r.status == TF_MEMBER_ZENO ? TF_MEMBER_OK : r.status;
  out->failure = r.failure;
  if (!out->slipped) memcpy(out->x, x, n * sizeof *x);
  return 0;
}

/* 1 slips, 0 rolls throughout, -1 the run failed (out->failure says why). */
static int slips(const tf_kernel *k, const double *p, const tf_evolve2_options *opts, double t0,
                 double t_end, tf_slip_start_fn start, void *ctx, double s, tf_slip_onset *run,
                 tf_slip_threshold *out) {
  double x[TF_MAX_DIM];
  start(ctx, s, x);
  out->runs++;
  const int rc = tf_slip_onset_run(k, p, opts, t0, x, t_end, run);
  if (tf_stop_requested(opts->ode.stop)) { /* inside the run */
    out->interrupted = true;
    out->failure = "interrupted";
    return -1;
  }
  if (rc) return out->failure = run->failure, -1;
  if (run->status != TF_MEMBER_OK && !run->slipped) {
    out->failure = run->failure ? run->failure : tf_member_status_name(run->status);
    return -1;
  }
  return run->slipped;
}

int tf_slip_threshold_find(const tf_kernel *k, const double *params, const tf_evolve2_options *opts,
                           double t0, double t_end, tf_slip_start_fn start, void *ctx, double low,
                           double high, double rel_tol, double abs_tol, tf_slip_threshold *out) {
  memset(out, 0, sizeof *out);
  out->low = low, out->high = high, out->threshold = NAN;
  tf_slip_onset run;
  const int at_low = slips(k, params, opts, t0, t_end, start, ctx, low, &run, out);
  if (at_low < 0) return -1;
  if (at_low) {
    out->failure = "it slips already at the lower end of the bracket";
    return -1;
  }
  const int at_high = slips(k, params, opts, t0, t_end, start, ctx, high, &out->above, out);
  if (at_high < 0) return -1;
  if (!at_high) {
    out->failure = "it keeps rolling at the upper end of the bracket";
    return -1;
  }
  while (out->high - out->low > rel_tol * fabs(out->high) + abs_tol && out->iterations < 200) {
    /* a bisection run is the unit a one-computation job can stop between */
    if (tf_stop_point(opts->ode.stop)) {
      out->interrupted = true;
      out->failure = "interrupted";
      return -1;
    }
    const double mid = 0.5 * (out->low + out->high);
    const int s = slips(k, params, opts, t0, t_end, start, ctx, mid, &run, out);
    out->iterations++;
    if (s < 0) return -1;
    if (s)
      out->high = mid, out->above = run;
    else
      out->low = mid;
  }
  out->threshold = 0.5 * (out->low + out->high);
  return 0;
}
