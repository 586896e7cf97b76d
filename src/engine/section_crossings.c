/* section_crossings.c — see section_crossings.h. */
#include "section_crossings.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include <gsl/gsl_roots.h>

#include "event_locate.h"
#include "max_dim.h"
#include "observable.h"

/* Dense-output points per step at which the section function is sampled: a step may hold two
 * crossings (up and down) that its end points alone would not show. */
enum { SECTION_SAMPLES = 4 };

struct tf_section_crossings {
  const double *params;
  int component, direction;
  double level, tol;
  tf_observable *function; /* poincare.event function: its expression */
  gsl_root_fsolver *root;
  double t_seen; /* steps are scanned from here on */
  /* After a counted crossing the section is disarmed until |s| exceeds `band`: a state that
   * lands on the section (an event of the engine's own there, such as arriving on a switching
   * surface that is also the section) or slides along it would otherwise count its rounding
   * noise about s = 0 as crossings. */
  bool disarmed;
  double band;
};

int tf_section_crossings_check(const tf_poincare_spec *spec, tf_config *cfg, const tf_kernel *k,
                               const char *model_kind, tf_error *err) {
  if (spec->impact.section == TF_SECTION_LEVEL || spec->impact.section == TF_SECTION_FUNCTION)
    return 0;
  return tf_config_fail_key(cfg, "poincare.event", err,
                            "%s ('%s') is recorded at crossings of a level or of "
                            "an expression only; write 'level' (with poincare.component and "
                            "poincare.level) or 'function' (with poincare.function)",
                            model_kind, k->name);
}

tf_section_crossings *tf_section_crossings_create(const tf_kernel *k, const double *params,
                                                  const tf_poincare_spec *spec, double tol) {
  tf_section_crossings *sc = calloc(1, sizeof *sc);
  if (!sc) return NULL;
  sc->params = params, sc->tol = tol;
  sc->component = spec->component;
  sc->level = spec->impact.section_level;
  sc->direction = spec->impact.section_direction;
  sc->root = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  tf_error why;
  if (!sc->root ||
      (spec->impact.section == TF_SECTION_FUNCTION &&
       !(sc->function = tf_observable_parse(k, spec->impact.section_function, &why)))) {
    tf_section_crossings_destroy(sc);
    return NULL;
  }
  return sc;
}

void tf_section_crossings_destroy(tf_section_crossings *sc) {
  if (!sc) return;
  if (sc->root) gsl_root_fsolver_free(sc->root);
  tf_observable_destroy(sc->function);
  free(sc);
}

void tf_section_crossings_start(tf_section_crossings *sc) {
  sc->t_seen = -INFINITY;
  sc->disarmed = false;
}

/* As the reset of a flow's own events (event_reset.c): the section re-arms once s has left zero
 * by 1e-10, or by 4 times its value where the crossing was located if that is larger. */
static void disarm(tf_section_crossings *sc, double s_at_crossing) {
  sc->disarmed = true;
  sc->band = fmax(1e-10, 4 * fabs(s_at_crossing));
}

typedef struct section_fn {
  const tf_section_crossings *sc;
  tf_section_dense_fn dense;
  const void *src;
  double sign; /* sign * s goes from >= 0 to < 0 at a counted crossing */
} section_fn;

/* s on the step's dense output: x_c - level, or the user's expression of (t, x, p). */
static double section_value(double t, void *ctx) {
  const section_fn *f = ctx;
  const tf_section_crossings *sc = f->sc;
  double x[TF_MAX_DIM];
  f->dense(f->src, t, x);
  if (sc->function) return f->sign * tf_observable_eval(sc->function, t, x, sc->params);
  return f->sign * (x[sc->component] - sc->level);
}

/* The crossing direction of s from sa to sb that the section counts (+1 up, -1 down; 0 none). */
static int counted(const tf_section_crossings *sc, double sa, double sb) {
  if (sa < 0 && sb >= 0 && sc->direction >= 0) return 1;
  if (sa > 0 && sb <= 0 && sc->direction <= 0) return -1;
  return 0;
}

void tf_section_crossings_step(tf_section_crossings *sc, tf_section_dense_fn dense, const void *src,
                               double ta, double tb, tf_section_found_fn found, void *ctx) {
  if (tb <= sc->t_seen) return;
  ta = fmax(ta, sc->t_seen);
  sc->t_seen = tb;
  section_fn f = {sc, dense, src, 1.0};
  double a = ta, sa = section_value(a, &f);
  if (sc->disarmed && fabs(sa) > sc->band) sc->disarmed = false;
  bool enough = false;
  for (int s = 1; s <= SECTION_SAMPLES && !enough; s++) {
    const double b = s == SECTION_SAMPLES ? tb : ta + (tb - ta) * s / SECTION_SAMPLES;
    const double sb = section_value(b, &f);
    const int dir = sc->disarmed ? 0 : counted(sc, sa, sb);
    if (dir != 0) {
      f.sign = -dir; /* the located function goes from >= 0 to < 0 */
      const double t = tf_event_locate(sc->root, section_value, &f, a, b, sc->tol);
      f.sign = 1.0;
      double x[TF_MAX_DIM];
      dense(src, t, x);
      disarm(sc, section_value(t, &f));
      enough = found(ctx, t, x);
    }
    if (sc->disarmed && fabs(sb) > sc->band) sc->disarmed = false;
    a = b, sa = sb;
  }
}
