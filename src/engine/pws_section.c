/* pws_section.c — see pws_section.h. */
#include "pws_section.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_roots.h>

#include "event_locate.h"
#include "evolve.h"
#include "max_dim.h"
#include "observable.h"
#include "switches.h"

/* Dense-output points per step at which the section function is sampled: a step may hold two
 * crossings (up and down) that its end points alone would not show. */
enum { SECTION_SAMPLES = 4 };

struct tf_pws_section {
  tf_pws *pws;
  tf_poincare_spec spec;
  tf_pws_watch watch;
  gsl_root_fsolver *root;
  tf_observable *function; /* poincare.event function: its expression */
  int surfaces;
  long slide_slots;
  /* the member being run */
  tf_poincare_recorder recorder;
  tf_pws_section_record *out;
  double t_seen;         /* steps are scanned from here on (a landing may repeat a piece) */
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
  char where[256];
  if (spec->impact.section != TF_SECTION_LEVEL && spec->impact.section != TF_SECTION_FUNCTION)
    return tf_fail(err,
                   "%s: key 'poincare.event': a Filippov model ('%s') is recorded at crossings "
                   "of a level or of an expression only; write 'level' (with poincare.component "
                   "and poincare.level) or 'function' (with poincare.function)",
                   tf_config_where(cfg, "poincare.event", where, sizeof where),
                   pws->model.kernel->name);
  if (pws->has_twofold || pws->at_twofold)
    return tf_fail(err,
                   "%s: model '%s' has a two-fold, located once at model.params, so a scan "
                   "over its parameters cannot follow it; scan it with quantity lyapunov, or "
                   "run one ensemble per parameter value",
                   tf_config_where(cfg, "model", where, sizeof where), pws->model.kernel->name);
  return 0;
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

typedef struct section_fn {
  const tf_pws_section *ps;
  double sign; /* sign * s goes from >= 0 to < 0 at a counted crossing */
} section_fn;

/* s on the step's dense output: x_c - level, or the user's expression of (t, x, p). */
static double section_value(double t, void *ctx) {
  const section_fn *f = ctx;
  const tf_pws_section *ps = f->ps;
  double x[TF_MAX_DIM];
  tf_pws_dense(ps->pws, t, x);
  if (ps->function) return f->sign * tf_observable_eval(ps->function, t, x, ps->pws->model.params);
  return f->sign * (x[ps->spec.component] - ps->spec.impact.section_level);
}

/* The crossing direction of g from ga to gb that the section counts (+1 up, -1 down; 0 none). */
static int counted(const tf_pws_section *ps, double ga, double gb) {
  const int dir = ps->spec.impact.section_direction;
  if (ga < 0 && gb >= 0 && dir >= 0) return 1;
  if (ga > 0 && gb <= 0 && dir <= 0) return -1;
  return 0;
}

static void record_crossing(tf_pws_section *ps, double t) {
  double x[TF_MAX_DIM];
  tf_pws_dense(ps->pws, t, x);
  const long long j = ps->out->poincare.recorded;
  const bool full = tf_poincare_recorder_add(&ps->recorder, t, x) != 0;
  if (ps->out->poincare.recorded > j) {
    ps->out->modes[j] = ps->mode_known ? ps->mode : NAN;
    if (j == 0) ps->t_mark = t; /* the window opens */
  }
  if (full) {
    const tf_poincare_record *r = &ps->out->poincare;
    for (long long k = r->recorded; r->period > 0 && k < ps->spec.count; k++)
      ps->out->modes[k] = ps->out->modes[k - r->period]; /* the period's continuation */
    close_sliding(ps, t);
    ps->done = true;
    if (ps->spec.action == TF_POINCARE_STOP) { /* the member ends here */
      ps->watch.stop = true, ps->watch.t_stop = t;
      memcpy(ps->watch.x_stop, x, ps->pws->model.kernel->dim * sizeof *x);
    }
  }
}

static void on_step(void *ctx, const tf_pws *pws, double ta, double tb) {
  tf_pws_section *ps = ctx;
  if (ps->done || tb <= ps->t_seen) return;
  ta = fmax(ta, ps->t_seen);
  ps->t_seen = tb;
  (void)pws;
  section_fn f = {ps, 1.0};
  double a = ta, ga = section_value(a, &f);
  for (int s = 1; s <= SECTION_SAMPLES && !ps->done; s++) {
    const double b = s == SECTION_SAMPLES ? tb : ta + (tb - ta) * s / SECTION_SAMPLES;
    const double gb = section_value(b, &f);
    const int dir = counted(ps, ga, gb);
    if (dir != 0) {
      f.sign = -dir; /* the located function goes from >= 0 to < 0 */
      record_crossing(ps,
                      tf_event_locate(ps->root, section_value, &f, a, b, ps->pws->opts.event_tol));
      f.sign = 1.0;
    }
    a = b, ga = gb;
  }
}

tf_pws_section *tf_pws_section_create(tf_pws *pws, const tf_poincare_spec *spec) {
  tf_pws_section *ps = calloc(1, sizeof *ps);
  if (!ps) return NULL;
  ps->pws = pws, ps->spec = *spec;
  ps->surfaces = tf_pws_surfaces(pws);
  ps->slide_slots = tf_pws_section_slide_slots(spec);
  ps->root = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  if (!ps->root) {
    free(ps);
    return NULL;
  }
  ps->watch = (tf_pws_watch){.step = on_step, .event = on_event, .ctx = ps};
  tf_error why;
  if (spec->impact.section == TF_SECTION_FUNCTION &&
      !(ps->function =
            tf_observable_parse(pws->model.kernel, spec->impact.section_function, &why))) {
    tf_pws_section_destroy(ps);
    return NULL;
  }
  ps->spec.impact.section_function = NULL; /* the caller's text, gone after this call */
  return ps;
}

void tf_pws_section_destroy(tf_pws_section *ps) {
  if (!ps) return;
  if (ps->pws->watch == &ps->watch) ps->pws->watch = NULL;
  gsl_root_fsolver_free(ps->root);
  tf_observable_destroy(ps->function);
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
  ps->t_seen = -INFINITY, ps->t_mark = NAN;
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
