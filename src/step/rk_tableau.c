/* rk_tableau.c — the generic explicit Runge–Kutta step, for pairs given as a tableau only
 * (stepper_type.h): stages, error estimate and continuous extension straight from the
 * coefficients.  A pair whose last row of a is b (first same as last, fsal_stage = stages - 1)
 * gets f at the new solution as that stage; any other (fsal_stage = stages) gets one more
 * evaluation there, which the next step reuses as its first stage. */
#include "stepper_type.h"

static void combine(tf_stepper *s, const double *x, double h, const double *w, int nk,
                    double *out) {
  for (size_t i = 0; i < s->n; i++) {
    double acc = 0.0;
    for (int j = 0; j < nk; j++) acc += w[j] * s->k[j][i];
    out[i] = x[i] + h * acc;
  }
}

void tf_rk_tableau_attempt(tf_stepper *s, double t, const double *x, double h) {
  const tf_rk_tableau *tab = s->type->tableau;
  const int ns = tab->stages, fsal = s->type->fsal_stage;
  for (int i = 1; i < ns; i++) {
    combine(s, x, h, tab->a + i * ns, i, s->stage);
    if (i == fsal)
      for (size_t q = 0; q < s->n; q++) s->x_new[q] = s->stage[q];
    tf_rk_eval(s, t + tab->c[i] * h, s->stage, s->k[i]);
  }
  if (fsal == ns) {
    combine(s, x, h, tab->b, ns, s->x_new);
    tf_rk_eval(s, t + h, s->x_new, s->k[ns]);
  }
}

double tf_rk_tableau_error(const tf_stepper *s, const double *x, double h) {
  const tf_rk_tableau *tab = s->type->tableau;
  double *v = s->stage; /* free between attempts */
  for (size_t i = 0; i < s->n; i++) {
    double acc = 0.0;
    for (int j = 0; j < tab->stages; j++) acc += tab->e[j] * s->k[j][i];
    v[i] = h * acc;
  }
  return tf_rk_weighted_rms(s, v, x, s->x_new);
}

/* cont[0] = x, cont[p + 1] = h sum_j dense[j][p] k_j: the extension's polynomial in theta. */
void tf_rk_tableau_build_dense(tf_stepper *s, const double *x, double h) {
  const tf_rk_tableau *tab = s->type->tableau;
  const int deg = tab->dense_degree;
  for (size_t i = 0; i < s->n; i++) {
    s->cont[0][i] = x[i];
    for (int p = 0; p < deg; p++) {
      double acc = 0.0;
      for (int j = 0; j < tab->stages; j++) acc += tab->dense[j * deg + p] * s->k[j][i];
      s->cont[p + 1][i] = h * acc;
    }
  }
}

void tf_rk_tableau_dense_at(const tf_stepper *s, double theta, double *out) {
  const int deg = s->type->tableau->dense_degree;
  for (size_t i = 0; i < s->n; i++) {
    double y = 0.0;
    for (int p = deg; p >= 1; p--) y = theta * (s->cont[p][i] + y);
    out[i] = s->cont[0][i] + y;
  }
}
