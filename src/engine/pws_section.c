/* pws_section.c — see pws_section.h. */
#include "pws_section.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "max_dim.h"
#include "section_crossings.h"
#include "switches.h"

struct tf_pws_section {
  tf_pws *pws;
  tf_poincare_spec spec;
  tf_pws_watch watch;
  tf_section_crossings *crossings;
  int surfaces;
  long slide_slots;
  /* the member being run */
  tf_poincare_recorder recorder;
  tf_pws_section_record *out;
  double t_mark;         /* sliding time is counted from here */
  int mode;              /* the current mode, once an event or the end said it */
  bool mode_known, done; /* done: the slots are full, the window closed */
};

int tf_pws_surfaces(const tf_pws *pws) {
  return pws->switches ? pws->model.kernel->switches->nswitches : 1;
}

long tf_pws_section_slide_slots(const tf_poincare_spec *spec) {
  return (long)spec->count * TF_PWS_SLIDES_PER_CROSSING;
}

int tf_pws_section_check(const tf_poincare_spec *spec, tf_config *cfg, const tf_pws *pws,
                         tf_error *err) {
  return tf_section_crossings_check(spec, cfg, pws->model.kernel, "a Filippov model", err);
}

/* Whether surface i is one the mode slides on (sticks on, for several switching functions);
 * at rest on, or moving along, an intersection counts for Sigma. */
static bool slides_on(const tf_pws_section *ps, int mode, int i) {
  if (!ps->pws->switches)
    return mode == TF_MODE_SLIDING || mode == TF_MODE_REST || mode == TF_MODE_ALONG_MEET;
  for (int j = 0; j < i; j++) mode /= 3;
  return mode % 3 == 1; /* tf_sw_mode_code: digit s_i + 1, 1 sticking */
}

/* Adds the sliding time since t_mark in the current mode, up to t. */
static void close_sliding(tf_pws_section *ps, double t) {
  if (!ps->mode_known || ps->out->poincare.recorded == 0 || ps->done) return;
  for (int i = 0; i < ps->surfaces; i++)
    if (slides_on(ps, ps->mode, i)) ps->out->sliding[3 * i + 2] += t - ps->t_mark;
  ps->t_mark = t;
}

static void log_slide(tf_pws_section *ps, double t, int surface, bool entry, const double *x) {
  tf_pws_section_record *o = ps->out;
  o->sliding[3 * surface + (entry ? 0 : 1)] += 1;
  const long k = o->slides_logged++;
  if (k >= ps->slide_slots) return;
  const size_t n = ps->pws->model.kernel->dim;
  double *row = o->slides + (size_t)k * (3 + n);
  row[0] = t, row[1] = surface, row[2] = entry;
  memcpy(row + 3, x, n * sizeof *x);
}

static void on_event(void *ctx, double t, int from, int to, const double *x) {
  tf_pws_section *ps = ctx;
  if (!ps->mode_known) {
    /* crossings before the first event were in the mode it leaves */
    for (long long j = 0; j < ps->out->poincare.recorded; j++) ps->out->modes[j] = from;
    ps->mode = from, ps->mode_known = true;
  }
  close_sliding(ps, t);
  if (ps->out->poincare.recorded > 0 && !ps->done)
    for (int i = 0; i < ps->surfaces; i++) {
      const bool before = slides_on(ps, from, i), after = slides_on(ps, to, i);
      if (before != after) log_slide(ps, t, i, after, x);
    }
  ps->mode = to;
}

/* A counted crossing at (t, x): recorded with its mode; true once the slots are full. */
static bool record_crossing(void *ctx, double t, const double *x) {
  tf_pws_section *ps = ctx;
  const long long j = ps->out->poincare.recorded;
  const bool full = tf_poincare_recorder_add(&ps->recorder, t, x) != 0;
  if (ps->out->poincare.recorded > j) {
    ps->out->modes[j] = ps->mode_known ? ps->mode : NAN;
    if (j == 0) ps->t_mark = t; /* the window opens */
  }
  if (full) {
    tf_poincare_continue_period(&ps->out->poincare, ps->spec.count, ps->out->modes);
    close_sliding(ps, t);
    ps->done = true;
    if (ps->spec.action == TF_POINCARE_STOP) { /* the member ends here */
      ps->watch.stop = true, ps->watch.t_stop = t;
      memcpy(ps->watch.x_stop, x, ps->pws->model.kernel->dim * sizeof *x);
    }
  }
  return ps->done;
}

static void dense(const void *pws, double t, double *x) {
  tf_pws_dense(pws, t, x);
}

static void on_step(void *ctx, const tf_pws *pws, double ta, double tb) {
  tf_pws_section *ps = ctx;
  if (!ps->done) tf_section_crossings_step(ps->crossings, dense, pws, ta, tb, record_crossing, ps);
}

tf_pws_section *tf_pws_section_create(tf_pws *pws, const tf_poincare_spec *spec) {
  tf_pws_section *ps = calloc(1, sizeof *ps);
  if (!ps) return NULL;
  ps->pws = pws, ps->spec = *spec;
  ps->spec.impact.section_function = NULL; /* the caller's text, gone after this call */
  ps->surfaces = tf_pws_surfaces(pws);
  ps->slide_slots = tf_pws_section_slide_slots(spec);
  ps->watch = (tf_pws_watch){.step = on_step, .event = on_event, .ctx = ps};
  ps->crossings =
      tf_section_crossings_create(pws->model.kernel, pws->model.params, spec, pws->opts.event_tol);
  if (!ps->crossings) {
    free(ps);
    return NULL;
  }
  return ps;
}

void tf_pws_section_destroy(tf_pws_section *ps) {
  if (!ps) return;
  if (ps->pws->watch == &ps->watch) ps->pws->watch = NULL;
  tf_section_crossings_destroy(ps->crossings);
  free(ps);
}

int tf_pws_section_run(tf_pws_section *ps, uint64_t member, tf_pws_record *rec,
                       tf_pws_section_record *out) {
  const size_t n = ps->pws->model.kernel->dim;
  ps->out = out;
  tf_poincare_recorder_start(&ps->recorder, &ps->spec, n, &out->poincare);
  for (long long j = 0; j < ps->spec.count; j++) out->modes[j] = NAN;
  for (int i = 0; i < 3 * ps->surfaces; i++) out->sliding[i] = 0;
  for (size_t i = 0; i < (size_t)ps->slide_slots * (3 + n); i++) out->slides[i] = NAN;
  out->slides_logged = 0;
  tf_section_crossings_start(ps->crossings);
  ps->t_mark = NAN;
  ps->mode_known = false, ps->done = false;
  ps->pws->watch = &ps->watch;
  const int status = tf_pws_run_member(ps->pws, member, rec);
  ps->pws->watch = NULL;
  if (!ps->mode_known) { /* no event: one mode all along */
    for (long long j = 0; j < out->poincare.recorded; j++) out->modes[j] = rec->final_mode;
    ps->mode = rec->final_mode, ps->mode_known = true;
  }
  close_sliding(ps, rec->t_final);
  return status;
}
