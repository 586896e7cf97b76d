/* intersection.c — see intersection.h.  The analysis borrows codim2.c's frame, R, V, root
 * finding, projection and Theorem 2.17 construction through a tf_codim2_sys whose field2 is
 * the kernel's slip field at a point displaced from I in the given direction. */
#include "intersection.h"

#include <math.h>
#include <string.h>

#include "codim2.h"
#include "ode.h"
#include "vec.h"

/* Samples per sector: uniform, plus points closing in on the sector's ends (Sigma), where a
 * limit direction can sit within a hundredth of a radian of the jump (the wheel's does). */
enum { SECTOR_SAMPLES = 96, EDGE_SAMPLES = 5, HULL_SAMPLES = 256 };
static const double edge_offsets[EDGE_SAMPLES] = {1e-6, 1e-5, 1e-4, 1e-3, 5e-3};

const char *tf_meet_verdict_name(tf_meet_verdict v) {
  static const char *const names[] = {"rest", "slide", "pass", "choice", "undefined"};
  return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}

typedef struct meet_ctx {
  const tf_kernel *k;
  const double *p;
  double eta;
  double n1[TF_MAX_DIM], n2[TF_MAX_DIM];
  int refused; /* the first refusal of the slip field in this analysis (the system's refusal) */
} meet_ctx;

static void sigma_hg(const double *x, void *ctx, double *h, double *grad) {
  const meet_ctx *c = ctx;
  const size_t n = c->k->dim;
  h[0] = c->k->filippov->switching(x, c->p, grad);
  h[1] = c->k->filippov->secondary_switching(x, c->p, grad ? grad + n : NULL);
}

/* F*(phi): the slip field on the side of h the direction points to, a distance eta out.  The
 * frame is the one at the point of I under analysis (fixed in ctx), so that the field of a
 * displaced point is not taken in a displaced frame. */
static int limit_field(double t, const double *x, const double *dir, void *ctx, double *dx) {
  const meet_ctx *c = ctx;
  double y[TF_MAX_DIM];
  for (size_t i = 0; i < c->k->dim; i++)
    y[i] = x[i] + c->eta * (dir[0] * c->n1[i] + dir[1] * c->n2[i]);
  return c->k->filippov->slip(t, y, dir[0] >= 0 ? +1 : -1, c->p, dx);
}

/* limit_field in many directions, side by side through the kernel's slip_lanes (bit for bit
 * slip lane by lane, model.h): the scans of the sectors and the hull test call F* a few
 * hundred times per arrival at I, most of an arrival's cost. */
enum { MANY_MAX_PARAMS = 64 };
static int limit_fields(double t, const double *x, int count, const double *cos_phi,
                        const double *sin_phi, void *ctx, double *dx) {
  const meet_ctx *c = ctx;
  int joined = 0;
  const size_t n = c->k->dim, np = c->k->nparams;
  enum { W = TF_LANES_MAX };
  double ts[W], y[TF_MAX_DIM * W], f[TF_MAX_DIM * W], p[(MANY_MAX_PARAMS + 1) * W];
  int code[W];
  for (int j0 = 0; j0 < count; j0 += W) {
    const int lanes = count - j0 < W ? count - j0 : W;
    for (int l = 0; l < lanes; l++) {
      const double d0 = cos_phi[j0 + l], d1 = sin_phi[j0 + l];
      ts[l] = t;
      for (size_t i = 0; i < n; i++)
        y[i * lanes + l] = x[i] + c->eta * (d0 * c->n1[i] + d1 * c->n2[i]);
      for (size_t q = 0; q < np; q++) p[q * lanes + l] = c->p[q];
      p[np * lanes + l] = d0 >= 0 ? +1 : -1;
    }
    c->k->filippov->slip_lanes(lanes, ts, y, p, f, code);
    for (int l = 0; l < lanes; l++) {
      joined = tf_model_code_join(joined, code[l]);
      for (size_t i = 0; i < n; i++)
        dx[(size_t)(j0 + l) * n + i] = code[l] ? NAN : f[i * lanes + l];
    }
  }
  return joined;
}

static void make_sys(tf_codim2_sys *s, meet_ctx *c, const tf_kernel *k, const double *p,
                     const double *x) {
  double scale = 1;
  for (size_t i = 0; i < k->dim; i++) scale = fmax(scale, fabs(x[i]));
  c->k = k, c->p = p, c->eta = 1e-8 * scale, c->refused = 0;
  const bool many = k->filippov->slip_lanes && k->nparams <= MANY_MAX_PARAMS;
  *s = (tf_codim2_sys){.dim = k->dim,
                       .sigma2 = sigma_hg,
                       .field2 = limit_field,
                       .ctx = c,
                       .field2_many = many ? limit_fields : NULL,
                       .refusal = &c->refused};
  tf_codim2_frame(s, x, NULL, c->n1, c->n2);
}

double tf_meet_distance(const tf_kernel *k, const double *p, const double *x) {
  double hg[2];
  meet_ctx c = {.k = k, .p = p};
  const tf_codim2_sys s = {.dim = k->dim, .sigma2 = sigma_hg, .field2 = limit_field, .ctx = &c};
  tf_codim2_frame(&s, x, hg, NULL, NULL);
  return hypot(hg[0], hg[1]);
}

void tf_meet_project(const tf_kernel *k, const double *p, double *x) {
  meet_ctx c = {.k = k, .p = p};
  const tf_codim2_sys s = {.dim = k->dim, .sigma2 = sigma_hg, .field2 = limit_field, .ctx = &c};
  tf_codim2_project(&s, x);
}

/* Newton along grad h onto Sigma, keeping g. */
static void onto_sigma(const tf_kernel *k, const double *p, double *x) {
  double grad[TF_MAX_DIM];
  for (int it = 0; it < 3; it++) {
    const double h = k->filippov->switching(x, p, grad), g2 = tf_dot(grad, grad, k->dim);
    if (h == 0.0 || g2 == 0.0) return;
    for (size_t i = 0; i < k->dim; i++) x[i] -= h * grad[i] / g2;
  }
}

/* The sector |phi| < pi/2 (h > 0) or pi/2 < phi < 3 pi/2 (h < 0) as an increasing grid. */
static int sector_grid(int side, double *grid) {
  const double a = side > 0 ? -M_PI / 2 : M_PI / 2;
  int m = 0;
  for (int i = 0; i < EDGE_SAMPLES; i++) grid[m++] = a + edge_offsets[i];
  for (int i = 0; i < SECTOR_SAMPLES; i++) {
    const double phi = a + M_PI * (i + 0.5) / SECTOR_SAMPLES;
    if (phi > grid[m - 1] && phi < a + M_PI - edge_offsets[EDGE_SAMPLES - 1]) grid[m++] = phi;
  }
  for (int i = EDGE_SAMPLES - 1; i >= 0; i--) grid[m++] = a + M_PI - edge_offsets[i];
  return m;
}

/* The two sectors' grids with the cos and sin of their angles, for the scans of V: fixed
 * angles, tabulated on first use (per thread) instead of at every arrival, where they cost
 * a fifth of the scan; libm gives the same bits either way. */
enum { SECTOR_POINTS = EDGE_SAMPLES * 2 + SECTOR_SAMPLES };
typedef struct sector_table {
  int points;
  double phi[SECTOR_POINTS], cos_phi[SECTOR_POINTS], sin_phi[SECTOR_POINTS];
} sector_table;

static tf_codim2_grid sector(int side) {
  static _Thread_local sector_table table[2];
  sector_table *tab = &table[side > 0];
  if (tab->points == 0) {
    const int points = sector_grid(side, tab->phi);
    for (int i = 0; i < points; i++) tab->cos_phi[i] = cos(tab->phi[i]);
    for (int i = 0; i < points; i++) tab->sin_phi[i] = sin(tab->phi[i]);
    tab->points = points;
  }
  return (tf_codim2_grid){tab->phi, tab->points, false, tab->cos_phi, tab->sin_phi, NULL};
}

/* V'(phi) / R(phi) at a limit direction of the sector `side`, by central differences kept
 * inside the sector (F* jumps at its ends). */
static double angular_ratio(const tf_codim2_sys *s, double t, const double *x, double phi, double R,
                            int side) {
  const double lo = side > 0 ? -M_PI / 2 : M_PI / 2;
  const double step = fmin(1e-6, 0.5 * fmin(phi - lo, lo + M_PI - phi));
  double va, vb;
  tf_codim2_rv(s, t, x, phi - step, NULL, &va);
  tf_codim2_rv(s, t, x, phi + step, NULL, &vb);
  return (vb - va) / (2 * step) / R;
}

/* Filippov on Sigma next to I on the side g = sign: a limit direction if Sigma slides (or
 * escapes) there, with the sliding field's rate along n2 as its radial rate. */
static void sigma_ray(const tf_kernel *k, const double *p, meet_ctx *c, const double *x, int sign,
                      tf_meet *m) {
  const size_t n = k->dim;
  double y[TF_MAX_DIM], f[TF_MAX_DIM], grad[TF_MAX_DIM], lp, lm;
  for (size_t i = 0; i < n; i++) y[i] = x[i] + sign * c->eta * c->n2[i];
  onto_sigma(k, p, y);
  /* tf_filippov_tangencies, with the fields' refusals kept */
  k->filippov->switching(y, p, grad);
  int code = tf_filippov_field(k, p, y, +1, f);
  lp = tf_dot(grad, f, n);
  code = tf_model_code_join(code, tf_filippov_field(k, p, y, -1, f));
  lm = tf_dot(grad, f, n);
  if (code) {
    tf_model_code_keep(&c->refused, code);
    return;
  }
  const tf_sigma_region r = tf_filippov_region(lp, lm);
  if (r != TF_SIGMA_SLIDING && r != TF_SIGMA_ESCAPING) return;
  code = tf_filippov_field(k, p, y, (lp + lm) / (lm - lp), f);
  if (code) {
    tf_model_code_keep(&c->refused, code);
    return;
  }
  const double R = sign * tf_dot(f, c->n2, n);
  if (m->count < TF_MEET_MAX_DIRECTIONS)
    m->dir[m->count++] =
        (tf_meet_direction){sign * M_PI / 2, R, 0, r == TF_SIGMA_ESCAPING, 0.0, false};
}

/* Whether 0 lies strictly inside the convex hull of the points (f.n1, f.n2) over samples of
 * F* in both sectors: the largest angular gap between the points, seen from 0, is below pi. */
static bool zero_in_hull(const tf_codim2_sys *s, const meet_ctx *c, double t, const double *x) {
  enum { SAMPLES = 2 * HULL_SAMPLES, CHUNK = 64 };
  /* fixed directions, tabulated on first use (per thread) as sector() does: tf_codim2_limit's */
  static _Thread_local double cos_phi[SAMPLES], sin_phi[SAMPLES];
  static _Thread_local bool tabulated;
  double angle[SAMPLES], f[CHUNK * TF_MAX_DIM];
  const int m = SAMPLES;
  for (int j = 0; !tabulated && j < SAMPLES; j++) {
    const int side = j < HULL_SAMPLES ? 1 : -1, i = j % HULL_SAMPLES;
    const double phi = (side > 0 ? -M_PI / 2 : M_PI / 2) + M_PI * (i + 0.5) / HULL_SAMPLES;
    cos_phi[j] = cos(phi), sin_phi[j] = sin(phi);
  }
  tabulated = true;
  for (int j0 = 0; j0 < SAMPLES; j0 += CHUNK) {
    tf_codim2_fields(s, t, x, CHUNK, cos_phi + j0, sin_phi + j0, f);
    for (int j = 0; j < CHUNK; j++) {
      const double a = tf_dot(f + j * s->dim, c->n1, s->dim),
                   b = tf_dot(f + j * s->dim, c->n2, s->dim);
      if (a == 0 && b == 0) return false; /* on the hull's boundary at best */
      angle[j0 + j] = atan2(b, a);
    }
  }
  /* insertion sort: a few hundred values, once per arrival */
  for (int i = 1; i < m; i++) {
    const double v = angle[i];
    int j = i - 1;
    for (; j >= 0 && angle[j] > v; j--) angle[j + 1] = angle[j];
    angle[j + 1] = v;
  }
  double gap = angle[0] + 2 * M_PI - angle[m - 1];
  for (int i = 1; i < m; i++) gap = fmax(gap, angle[i] - angle[i - 1]);
  return gap < M_PI * (1 - 1e-9);
}

static void undefined(tf_meet *m, const char *reason) {
  m->verdict = TF_MEET_UNDEFINED;
  m->reason = reason;
}

/* Theorem 2.17's sliding vector; c->eta is narrowed for it (restored after).  Returns 0, or a
 * reason why there is none. */
static const char *sliding_vector(const tf_codim2_sys *s, meet_ctx *c, double t, const double *x,
                                  double *Fs) {
  /* Theorem 2.17 asks whether F* spans a plane: at eta = 1e-8 the field's own variation over
   * the displacement would count as a third dimension, so sample closer in. */
  const double eta = c->eta;
  c->eta *= 1e-3;
  tf_codim2_sliding sv;
  const int rc = tf_codim2_sliding_vector(s, t, x, &sv);
  c->eta = eta;
  memcpy(Fs, sv.Fs, s->dim * sizeof *Fs);
  if (!rc) return NULL;
  return sv.how == TF_CODIM2_NOT_UNIQUE
             ? "the sliding vector on the intersection is not unique"
             : "the sliding vector on the intersection is not determined";
}

int tf_meet_sliding_vector(const tf_kernel *k, const double *p, double t, const double *x,
                           double *Fs) {
  meet_ctx c;
  tf_codim2_sys s;
  make_sys(&s, &c, k, p, x);
  sliding_vector(&s, &c, t, x, Fs);
  if (c.refused)
    for (size_t i = 0; i < k->dim; i++) Fs[i] = NAN;
  return c.refused;
}

/* The verdict at x (tf_meet_classify), m's frame set. */
static void classify(const tf_kernel *k, const double *p, meet_ctx *c, const tf_codim2_sys *s,
                     double t, const double *x, tf_meet *m) {
  const size_t n = k->dim;
  double phi[TF_MEET_MAX_DIRECTIONS], R[TF_MEET_MAX_DIRECTIONS];
  for (int side = 1; side >= -1; side -= 2) {
    const tf_codim2_grid grid = sector(side);
    const int found =
        tf_codim2_roots_of_v(s, t, x, &grid, TF_MEET_MAX_DIRECTIONS - m->count, phi, R);
    for (int i = 0; i < found; i++) {
      const double angular = angular_ratio(s, t, x, phi[i], R[i], side);
      m->dir[m->count++] =
          (tf_meet_direction){phi[i], R[i], side, false, angular, R[i] > 0 && angular > 0};
    }
  }
  sigma_ray(k, p, c, x, +1, m);
  sigma_ray(k, p, c, x, -1, m);

  /* scale of the normal rates, for telling a neutral direction */
  double scale = 0, f[TF_MAX_DIM];
  for (int i = 0; i < 8; i++) {
    tf_codim2_limit(s, t, x, M_PI * (i + 0.5) / 4, f);
    scale = fmax(scale, hypot(tf_dot(f, c->n1, n), tf_dot(f, c->n2, n)));
  }
  bool neutral = false, continuum = false;
  for (int i = 0; i < m->count; i++) {
    neutral |= fabs(m->dir[i].R) <= 1e-9 * scale;
    m->repelling += m->dir[i].R > 0;
    continuum |= m->dir[i].R > 0 && (m->dir[i].escaping || m->dir[i].fan);
  }
  if (m->count == 0) {
    undefined(m, "no limit direction (spiralling approach)");
    return;
  }
  if (neutral) {
    undefined(m, "a neutral limit direction (R = 0): a tangency of I");
    return;
  }
  if (m->repelling == 1 && !continuum) {
    m->verdict = TF_MEET_PASS;
    return;
  }
  if (m->repelling >= 1) {
    m->verdict = TF_MEET_CHOICE;
    return;
  }
  /* the sliding region of I: the trajectory stays on I and moves with the sliding vector —
   * at rest where it vanishes.  (The hull test costs 512 slip evaluations, so it is made
   * only here, where the verdict needs it.) */
  m->rest_admissible = zero_in_hull(s, c, t, x);
  if (!m->rest_admissible) {
    undefined(m,
              "every limit direction attracts but no combination of limit fields is "
              "tangent to the intersection");
    return;
  }
  const char *why = sliding_vector(s, c, t, x, m->sliding);
  if (why) {
    undefined(m, why);
    return;
  }
  double size = 0;
  for (size_t i = 0; i < n; i++) size = fmax(size, fabs(m->sliding[i]));
  m->verdict = size > 1e-8 * scale ? TF_MEET_SLIDE : TF_MEET_REST;
}

void tf_meet_classify(const tf_kernel *k, const double *p, double t, const double *x, tf_meet *m) {
  memset(m, 0, sizeof *m);
  for (size_t i = 0; i < k->dim; i++) m->sliding[i] = NAN;
  meet_ctx c;
  tf_codim2_sys s;
  make_sys(&s, &c, k, p, x);
  memcpy(m->n1, c.n1, k->dim * sizeof *x);
  memcpy(m->n2, c.n2, k->dim * sizeof *x);
  classify(k, p, &c, &s, t, x, m);
  if (!c.refused) return;
  /* a verdict taken without the fields of some directions would be a guess */
  m->model_code = c.refused;
  undefined(m, "the model refused its slip field next to the intersection");
  for (size_t i = 0; i < k->dim; i++) m->sliding[i] = NAN;
}

void tf_meet_departure(const tf_kernel *k, const double *p, const tf_meet *m, int which, double eta,
                       double *x, int *side) {
  const tf_meet_direction d = m->dir[which];
  for (size_t i = 0; i < k->dim; i++) x[i] += eta * (cos(d.phi) * m->n1[i] + sin(d.phi) * m->n2[i]);
  if (d.side == 0) onto_sigma(k, p, x);
  *side = d.side;
}

double tf_meet_arrival_direction(const tf_meet *m, int from, double g_sign, const double *x,
                                 const double *before, size_t n) {
  if (from == 0) return g_sign < 0 ? -M_PI / 2 : M_PI / 2;
  double d[TF_MAX_DIM];
  for (size_t i = 0; i < n; i++) d[i] = before[i] - x[i];
  const double seen = atan2(tf_dot(d, m->n2, n), tf_dot(d, m->n1, n));
  int best = -1;
  double best_gap = INFINITY;
  for (int i = 0; i < m->count; i++) {
    const tf_meet_direction *c = &m->dir[i];
    if (c->side != from || !(c->R < 0)) continue;
    /* a fan of arrivals outranks any single one; within a rank, the nearest in angle */
    const double gap = fabs(remainder(c->phi - seen, 2 * M_PI)) + (c->angular > 0 ? 0 : 10);
    if (gap < best_gap) best_gap = gap, best = i;
  }
  return best < 0 ? NAN : m->dir[best].phi;
}

/* --- the regularised departure: the blow-up z = (h, g) / eps about a point of I --------------- */

typedef struct inner_ctx {
  const tf_kernel *k;
  const double *p;
  const tf_smoothing *law;
  double t, eta, grad_h; /* |grad h|: h / eps = grad_h z1 */
  const double *x, *n1, *n2;
} inner_ctx;

/* The smoothed field of the blow-up: the slip fields at x displaced (by eta) in the direction of
 * z, mixed by Lambda(h / eps), projected onto the frame. */
static int inner_field(double tau, const double *z, void *ctx, double *dz) {
  (void)tau;
  const inner_ctx *c = ctx;
  const size_t n = c->k->dim;
  const double rho = hypot(z[0], z[1]);
  double y[TF_MAX_DIM], up[TF_MAX_DIM], down[TF_MAX_DIM];
  for (size_t i = 0; i < n; i++)
    y[i] = c->x[i] + (rho > 0 ? c->eta / rho : 0) * (z[0] * c->n1[i] + z[1] * c->n2[i]);
  const int rc = tf_model_code_join(c->k->filippov->slip(c->t, y, +1, c->p, up),
                                    c->k->filippov->slip(c->t, y, -1, c->p, down));
  const double lambda = tf_smooth_sign(c->law, c->grad_h * z[0], NULL);
  for (size_t i = 0; i < n; i++) up[i] = 0.5 * (1 + lambda) * up[i] + 0.5 * (1 - lambda) * down[i];
  dz[0] = tf_dot(up, c->n1, n);
  dz[1] = tf_dot(up, c->n2, n);
  return rc;
}

/* Reading off the departure.  Slip: |h| / eps beyond INNER_H_FAR, where Lambda is +-1 to 5e-7
 * for every law.  Sticking along Sigma: the orbit sits in the layer (h / eps no longer moves,
 * relative to g / eps, by more than INNER_LAYER) and moves out along Sigma beyond INNER_G_OUT,
 * past the structure of the blow-up near its origin (the wheel's lies within |g| / eps < 10).
 * In the layer the blow-up is stiff (relaxation at rate O(1), motion along it at the sticking
 * flow's rate), so following it to infinity would cost millions of steps; once in the
 * attracting layer and moving out the orbit stays in it. */
static const double INNER_H_FAR = 1e3, INNER_G_OUT = 200, INNER_LAYER = 1e-6;

/* The repelling direction of m closest in angle to phi among those of side `side` (any side if
 * none there), or -1. */
static int nearest_repelling(const tf_meet *m, int side, double phi) {
  int best = -1;
  double best_gap = INFINITY;
  for (int pass = 0; pass < 2 && best < 0; pass++)
    for (int i = 0; i < m->count; i++) {
      if (!(m->dir[i].R > 0) || (pass == 0 && m->dir[i].side != side)) continue;
      const double gap = fabs(remainder(m->dir[i].phi - phi, 2 * M_PI));
      if (gap < best_gap) best_gap = gap, best = i;
    }
  return best;
}

/* Where the blow-up orbit entering at radius rho0 along phi_in leaves to: an index into m->dir,
 * or -1 (it stays bounded, or the integration fails). */
static int inner_fate(tf_stepper *ode, const inner_ctx *c, const tf_meet *m, double phi_in,
                      double rho0) {
  double z[2] = {rho0 * cos(phi_in), rho0 * sin(phi_in)}, dz[2], tau = 0;
  if (fabs(z[0]) < 1e-12 * rho0) z[0] = 0; /* an entry along Sigma starts on it */
  const double entry_g = z[1];
  tf_stepper_reset(ode, 0, z);
  for (long steps = 0; steps < 200000; steps++) {
    if (tf_stepper_step(ode, &tau, z, INFINITY) != TF_ODE_OK) return -1;
    const double rho = hypot(z[0], z[1]);
    if (c->grad_h * fabs(z[0]) >= INNER_H_FAR && rho > 2 * rho0)
      return nearest_repelling(m, z[0] > 0 ? 1 : -1, atan2(z[1], z[0]));
    const bool out_along_sigma =
        fabs(z[1]) >= INNER_G_OUT && (z[1] * entry_g <= 0 || fabs(z[1]) > 2 * fabs(entry_g));
    if (!out_along_sigma) continue;
    inner_field(tau, z, (void *)c, dz);
    if (dz[1] * z[1] > 0 && fabs(dz[0]) <= INNER_LAYER * fabs(dz[1])) {
      const int along = nearest_repelling(m, 0, z[1] > 0 ? M_PI / 2 : -M_PI / 2);
      return along >= 0 && m->dir[along].side == 0 ? along : -1;
    }
  }
  return -1;
}

int tf_meet_regularised(const tf_kernel *k, const double *p, double t, const double *x,
                        const tf_meet *m, double phi_in, const tf_smoothing *law) {
  if (!isfinite(phi_in)) return -1;
  const size_t n = k->dim;
  double grad[TF_MAX_DIM], scale = 1;
  k->filippov->switching(x, p, grad);
  for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(x[i]));
  const inner_ctx c = {k, p, law, t, 1e-8 * scale, sqrt(tf_dot(grad, grad, n)), x, m->n1, m->n2};
  tf_stepper *ode = tf_stepper_create(2);
  if (!ode) return -1;
  tf_ode_options o = tf_ode_default_options();
  o.rtol = 1e-9, o.atol = 1e-12, o.max_steps = 0;
  tf_stepper_setup(ode, inner_field, (void *)&c, &o);
  int fate = inner_fate(ode, &c, m, phi_in, 1e2);
  const int next = inner_fate(ode, &c, m, phi_in, 1e3);
  if (fate != next) fate = next == inner_fate(ode, &c, m, phi_in, 1e4) ? next : -1;
  tf_stepper_destroy(ode);
  return fate;
}
