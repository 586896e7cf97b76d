/* codim2.c — see codim2.h. */
#include "codim2.h"
#include "ode.h"
#include "vec.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <string.h>

/* Samples of the circle: V on a grid to bracket its roots, F* to decompose it.  A trig
 * polynomial of degree below SLIDING_SAMPLES/2 is integrated exactly by the trapezoid rule,
 * which is what makes the harmonic decomposition exact. */
enum { DIRECTION_SAMPLES = 72, SLIDING_SAMPLES = 32 };

const char *tf_codim2_region_name(tf_codim2_region r) {
  static const char *const names[] = {"sliding", "repelling", "crossing", "tangency", "spiral"};
  return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

const char *tf_codim2_decomposition_name(tf_codim2_decomposition d) {
  static const char *const names[] = {"harmonic", "svd", "not_unique", "degenerate"};
  return (unsigned)d < sizeof names / sizeof names[0] ? names[d] : "?";
}

static void kernel_sigma2(const double *x, void *ctx, double *h, double *grad) {
  const tf_codim2_kernel_ctx *c = ctx;
  c->k->codim2->sigma2(x, c->p, h, grad);
}

static int kernel_field2(double t, const double *x, const double *dir, void *ctx, double *dx) {
  const tf_codim2_kernel_ctx *c = ctx;
  return c->k->codim2->field2(t, x, dir, c->p, dx);
}

void tf_codim2_from_kernel(tf_codim2_sys *s, tf_codim2_kernel_ctx *store, const tf_kernel *k,
                           const double *p) {
  store->k = k, store->p = p;
  *s = (tf_codim2_sys){
      .dim = k->dim, .sigma2 = kernel_sigma2, .field2 = kernel_field2, .ctx = store};
}

void tf_codim2_frame(const tf_codim2_sys *s, const double *x, double *h, double *n1, double *n2) {
  const size_t n = s->dim;
  double grad[2 * TF_MAX_DIM], hh[2];
  s->sigma2(x, s->ctx, hh, grad);
  const double g1 = sqrt(tf_dot(grad, grad, n)), g2 = sqrt(tf_dot(grad + n, grad + n, n));
  if (h) h[0] = g1 > 0 ? hh[0] / g1 : hh[0], h[1] = g2 > 0 ? hh[1] / g2 : hh[1];
  if (!n1) return;
  for (size_t i = 0; i < n; i++) n1[i] = g1 > 0 ? grad[i] / g1 : 0.0;
  /* Gram-Schmidt: the thesis requires orthogonal gradients on Sigma; off Sigma (event
   * location, integration error) keep the frame orthonormal anyway. */
  const double c = tf_dot(grad + n, n1, n);
  for (size_t i = 0; i < n; i++) n2[i] = grad[n + i] - c * n1[i];
  const double norm = sqrt(tf_dot(n2, n2, n));
  for (size_t i = 0; i < n; i++) n2[i] = norm > 0 ? n2[i] / norm : 0.0;
}

/* A refused evaluation leaves no field: NaN in its place (no decision can take it for one), the
 * first code kept where the caller asked for it. */
static void note_refusal(const tf_codim2_sys *s, int code, size_t count, double *out) {
  if (!code) return;
  if (s->refusal) tf_model_code_keep(s->refusal, code);
  for (size_t i = 0; i < count; i++) out[i] = NAN;
}

void tf_codim2_field(const tf_codim2_sys *s, double t, const double *x, const double *dir,
                     double *out) {
  note_refusal(s, s->field2(t, x, dir, s->ctx, out), s->dim, out);
}

void tf_codim2_fields(const tf_codim2_sys *s, double t, const double *x, int count,
                      const double *cos_phi, const double *sin_phi, double *out) {
  if (s->field2_many) { /* it writes NaN for a refused direction itself */
    note_refusal(s, s->field2_many(t, x, count, cos_phi, sin_phi, s->ctx, out), 0, out);
    return;
  }
  for (int j = 0; j < count; j++)
    tf_codim2_field(s, t, x, (const double[2]){cos_phi[j], sin_phi[j]}, out + (size_t)j * s->dim);
}

void tf_codim2_limit(const tf_codim2_sys *s, double t, const double *x, double phi, double *out) {
  const double dir[2] = {cos(phi), sin(phi)};
  tf_codim2_field(s, t, x, dir, out);
}

/* F*(phi) = f rotated into (R, V) in the frame (n1, n2), with phi's cos c and sin sn. */
static void rv_of_field(size_t dim, const double *f, double c, double sn, const double *n1,
                        const double *n2, double *R, double *V) {
  const double f1 = tf_dot(f, n1, dim), f2 = tf_dot(f, n2, dim);
  if (R) *R = c * f1 + sn * f2;
  if (V) *V = -sn * f1 + c * f2;
}

/* The limit field's direction and the rotation into (R, V) share one cos and sin of phi: on a
 * scan of the circle they cost about as much as the field itself. */
static void rv_in_frame_cs(const tf_codim2_sys *s, double t, const double *x, double c, double sn,
                           const double *n1, const double *n2, double *R, double *V) {
  double f[TF_MAX_DIM];
  const double dir[2] = {c, sn};
  tf_codim2_field(s, t, x, dir, f);
  rv_of_field(s->dim, f, c, sn, n1, n2, R, V);
}

static void rv_in_frame(const tf_codim2_sys *s, double t, const double *x, double phi,
                        const double *n1, const double *n2, double *R, double *V) {
  rv_in_frame_cs(s, t, x, cos(phi), sin(phi), n1, n2, R, V);
}

void tf_codim2_rv(const tf_codim2_sys *s, double t, const double *x, double phi, double *R,
                  double *V) {
  double n1[TF_MAX_DIM], n2[TF_MAX_DIM];
  tf_codim2_frame(s, x, NULL, n1, n2);
  rv_in_frame(s, t, x, phi, n1, n2, R, V);
}

/* known: V at the ends of the bracket being polished, which the scan has (GSL's Brent
 * evaluates both ends again when it is set); a time is matched bit for bit, so a remembered
 * value is the one V would give again. */
typedef struct v_ctx {
  const tf_codim2_sys *s;
  const double *x, *n1, *n2;
  double t;
  double known_phi[2], known_v[2];
} v_ctx;

static double v_of_phi(double phi, void *params) {
  const v_ctx *c = params;
  for (int i = 0; i < 2; i++)
    if (memcmp(&phi, &c->known_phi[i], sizeof phi) == 0) return c->known_v[i];
  double V;
  rv_in_frame(c->s, c->t, c->x, phi, c->n1, c->n2, NULL, &V);
  return V;
}

/* Brent (GSL) on a bracket [a, b] of a sign change of V, va and vb the scan's values there
 * (NAN: not taken at that angle, 2 pi standing in as 0 on a periodic grid). */
static double polish_root(gsl_root_fsolver *solver, v_ctx *c, double a, double va, double b,
                          double vb) {
  gsl_function fn = {v_of_phi, c};
  /* the bracket is re-checked, since GSL aborts on one that does not straddle */
  if (isnan(va)) va = v_of_phi(a, c);
  if (isnan(vb)) vb = v_of_phi(b, c);
  c->known_phi[0] = a, c->known_v[0] = va, c->known_phi[1] = b, c->known_v[1] = vb;
  if (va == 0.0) return a;
  if (vb == 0.0 || !(va * vb < 0.0)) return fabs(va) < fabs(vb) ? a : b;
  if (gsl_root_fsolver_set(solver, &fn, a, b) != GSL_SUCCESS) return 0.5 * (a + b);
  double root = 0.5 * (a + b);
  for (int it = 0; it < 100; it++) {
    if (gsl_root_fsolver_iterate(solver) != GSL_SUCCESS) break;
    root = gsl_root_fsolver_root(solver);
    const double lo = gsl_root_fsolver_x_lower(solver), hi = gsl_root_fsolver_x_upper(solver);
    if (gsl_root_test_interval(lo, hi, 1e-15, 1e-14) == GSL_SUCCESS) break;
  }
  return root;
}

/* V at point i of the grid, from what the grid knows. */
static double v_on_grid(const tf_codim2_grid *g, int i, v_ctx *c) {
  if (g->v) return g->v[i];
  if (!g->cos_phi) return v_of_phi(g->phi[i], c);
  double V;
  rv_in_frame_cs(c->s, c->t, c->x, g->cos_phi[i], g->sin_phi[i], c->n1, c->n2, NULL, &V);
  return V;
}

/* V at every point of a tabulated grid through field2_many, in chunks: the values the scan
 * would take one by one. */
enum { MANY_CHUNK = 32, MANY_POINTS = 256 };
static void v_on_grid_many(const tf_codim2_sys *s, double t, const double *x, const double *n1,
                           const double *n2, const tf_codim2_grid *g, double *v) {
  double f[MANY_CHUNK * TF_MAX_DIM];
  for (int j0 = 0; j0 < g->points; j0 += MANY_CHUNK) {
    const int count = g->points - j0 < MANY_CHUNK ? g->points - j0 : MANY_CHUNK;
    tf_codim2_fields(s, t, x, count, g->cos_phi + j0, g->sin_phi + j0, f);
    for (int j = 0; j < count; j++)
      rv_of_field(s->dim, f + (size_t)j * s->dim, g->cos_phi[j0 + j], g->sin_phi[j0 + j], n1, n2,
                  NULL, &v[j0 + j]);
  }
}

int tf_codim2_roots_of_v(const tf_codim2_sys *s, double t, const double *x, const tf_codim2_grid *g,
                         int max, double *phi, double *R) {
  double n1[TF_MAX_DIM], n2[TF_MAX_DIM];
  tf_codim2_frame(s, x, NULL, n1, n2);
  double v_many[MANY_POINTS];
  tf_codim2_grid batched;
  if (!g->v && g->cos_phi && s->field2_many && g->points <= MANY_POINTS) {
    v_on_grid_many(s, t, x, n1, n2, g, v_many);
    batched = *g, batched.v = v_many, g = &batched;
  }
  gsl_root_fsolver *solver = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  v_ctx c = {s, x, n1, n2, t, {NAN, NAN}, {NAN, NAN}};
  const double *grid = g->phi;
  const int points = g->points;
  int count = 0;
  const double v_first = v_on_grid(g, 0, &c);
  double v_next = v_first;
  for (int i = 0; i + 1 < points && count < max; i++) {
    const double v = v_next;
    const bool wraps = g->periodic && i + 2 == points;
    v_next = wraps ? v_first : v_on_grid(g, i + 1, &c);
    double root;
    if (v == 0.0)
      root = grid[i];
    else if (v * v_next < 0.0 && solver)
      root = polish_root(solver, &c, grid[i], v, grid[i + 1], wraps ? NAN : v_next);
    else
      continue;
    phi[count] = root;
    rv_in_frame(s, t, x, root, n1, n2, &R[count], NULL);
    count++;
  }
  if (solver) gsl_root_fsolver_free(solver);
  return count;
}

void tf_codim2_classify(const tf_codim2_sys *s, double t, const double *x, tf_codim2_point *pt) {
  memset(pt, 0, sizeof *pt);
  double n1[TF_MAX_DIM], n2[TF_MAX_DIM];
  tf_codim2_frame(s, x, NULL, n1, n2);
  double R[DIRECTION_SAMPLES + 1], V[DIRECTION_SAMPLES + 1], phi[DIRECTION_SAMPLES + 1];
  double scale = 0, v_max = 0;
  for (int i = 0; i <= DIRECTION_SAMPLES; i++) {
    phi[i] = 2 * M_PI * i / DIRECTION_SAMPLES;
    if (i < DIRECTION_SAMPLES)
      rv_in_frame(s, t, x, phi[i], n1, n2, &R[i], &V[i]);
    else
      R[i] = R[0], V[i] = V[0];
    scale = fmax(scale, hypot(R[i], V[i]));
    v_max = fmax(v_max, fabs(V[i]));
  }
  const double zero = 1e-11 * scale + 1e-300;
  pt->R_max = -INFINITY, pt->R_min = INFINITY;
  if (v_max <= zero) {
    /* Every direction is a limit direction (F* normal part purely radial). */
    pt->all_directions = true;
    for (int i = 0; i < DIRECTION_SAMPLES; i++) {
      if (R[i] > pt->R_max) pt->R_max = R[i], pt->phi_R_max = phi[i];
      pt->R_min = fmin(pt->R_min, R[i]);
    }
  } else {
    const tf_codim2_grid grid = {phi, DIRECTION_SAMPLES + 1, true, NULL, NULL, V};
    pt->count = tf_codim2_roots_of_v(s, t, x, &grid, TF_CODIM2_MAX_DIRECTIONS, pt->phi, pt->R);
    for (int i = 0; i < pt->count; i++) {
      if (pt->R[i] > pt->R_max) pt->R_max = pt->R[i], pt->phi_R_max = pt->phi[i];
      pt->R_min = fmin(pt->R_min, pt->R[i]);
    }
  }
  if (!pt->all_directions && pt->count == 0)
    pt->region = TF_CODIM2_SPIRAL;
  else if (fabs(pt->R_max) <= zero || fabs(pt->R_min) <= zero)
    pt->region = TF_CODIM2_TANGENCY;
  else if (pt->R_max < 0)
    pt->region = TF_CODIM2_SLIDING;
  else if (pt->R_min > 0)
    pt->region = TF_CODIM2_REPELLING;
  else
    pt->region = TF_CODIM2_CROSSING;
}

/* Fbar and the first harmonic; returns the largest deviation of the samples from
 * Fbar + cos F_A + sin F_B relative to their spread. */
static double harmonic_fit(size_t n, double F[][TF_MAX_DIM], tf_codim2_sliding *s, double *spread) {
  const int N = SLIDING_SAMPLES;
  for (size_t i = 0; i < n; i++) s->Fbar[i] = s->FA[i] = s->FB[i] = 0;
  for (int j = 0; j < N; j++) {
    const double phi = 2 * M_PI * j / N, c = cos(phi), sn = sin(phi);
    for (size_t i = 0; i < n; i++) {
      s->Fbar[i] += F[j][i] / N;
      s->FA[i] += 2.0 / N * F[j][i] * c;
      s->FB[i] += 2.0 / N * F[j][i] * sn;
    }
  }
  double worst = 0;
  *spread = 0;
  for (int j = 0; j < N; j++) {
    const double phi = 2 * M_PI * j / N, c = cos(phi), sn = sin(phi);
    for (size_t i = 0; i < n; i++) {
      *spread = fmax(*spread, fabs(F[j][i] - s->Fbar[i]));
      worst = fmax(worst, fabs(F[j][i] - s->Fbar[i] - c * s->FA[i] - sn * s->FB[i]));
    }
  }
  return *spread > 0 ? worst / *spread : 0.0;
}

/* General A(phi), B(phi): the two leading right singular vectors of the centred samples. */
static tf_codim2_decomposition svd_fit(size_t n, double F[][TF_MAX_DIM], tf_codim2_sliding *s) {
  const int N = SLIDING_SAMPLES;
  gsl_matrix *A = gsl_matrix_alloc((size_t)N, n), *Vm = gsl_matrix_alloc(n, n);
  gsl_vector *S = gsl_vector_alloc(n), *work = gsl_vector_alloc(n);
  tf_codim2_decomposition how = TF_CODIM2_DEGENERATE;
  if (A && Vm && S && work) {
    for (int j = 0; j < N; j++)
      for (size_t i = 0; i < n; i++) gsl_matrix_set(A, (size_t)j, i, F[j][i] - s->Fbar[i]);
    if (gsl_linalg_SV_decomp(A, Vm, S, work) == GSL_SUCCESS) {
      const double s0 = gsl_vector_get(S, 0);
      int rank = 0;
      for (size_t i = 0; i < n; i++) rank += gsl_vector_get(S, i) > 1e-9 * s0 && s0 > 0;
      if (rank > 2)
        how = TF_CODIM2_NOT_UNIQUE;
      else if (rank == 2) {
        how = TF_CODIM2_SVD;
        for (size_t i = 0; i < n; i++) {
          s->FA[i] = gsl_matrix_get(Vm, i, 0) * gsl_vector_get(S, 0);
          s->FB[i] = gsl_matrix_get(Vm, i, 1) * gsl_vector_get(S, 1);
        }
      }
    }
  }
  if (A) gsl_matrix_free(A);
  if (Vm) gsl_matrix_free(Vm);
  if (S) gsl_vector_free(S);
  if (work) gsl_vector_free(work);
  return how;
}

int tf_codim2_sliding_vector(const tf_codim2_sys *sys, double t, const double *x,
                             tf_codim2_sliding *s) {
  const size_t n = sys->dim;
  double F[SLIDING_SAMPLES][TF_MAX_DIM];
  memset(s, 0, sizeof *s);
  for (int j = 0; j < SLIDING_SAMPLES; j++)
    tf_codim2_limit(sys, t, x, 2 * M_PI * j / SLIDING_SAMPLES, F[j]);
  double spread;
  const double misfit = harmonic_fit(n, F, s, &spread);
  s->how = TF_CODIM2_HARMONIC;
  if (spread == 0)
    s->how = TF_CODIM2_DEGENERATE; /* F* constant: no discontinuity here */
  else if (misfit > 1e-9)
    s->how = svd_fit(n, F, s);
  if (s->how == TF_CODIM2_HARMONIC || s->how == TF_CODIM2_SVD) {
    double n1[TF_MAX_DIM], n2[TF_MAX_DIM];
    tf_codim2_frame(sys, x, NULL, n1, n2);
    const double m00 = tf_dot(s->FA, n1, n), m01 = tf_dot(s->FB, n1, n);
    const double m10 = tf_dot(s->FA, n2, n), m11 = tf_dot(s->FB, n2, n);
    const double r0 = -tf_dot(s->Fbar, n1, n), r1 = -tf_dot(s->Fbar, n2, n);
    s->det = m00 * m11 - m01 * m10;
    const double size = sqrt(tf_dot(s->FA, s->FA, n) * tf_dot(s->FB, s->FB, n));
    if (!(fabs(s->det) > 1e-12 * size)) {
      s->how = TF_CODIM2_DEGENERATE;
    } else {
      s->a = (r0 * m11 - m01 * r1) / s->det;
      s->b = (m00 * r1 - m10 * r0) / s->det;
      for (size_t i = 0; i < n; i++) s->Fs[i] = s->Fbar[i] + s->a * s->FA[i] + s->b * s->FB[i];
      return 0;
    }
  }
  for (size_t i = 0; i < n; i++) s->Fs[i] = NAN;
  s->a = s->b = NAN;
  return -1;
}

void tf_codim2_project(const tf_codim2_sys *s, double *x) {
  const size_t n = s->dim;
  double grad[2 * TF_MAX_DIM], h[2];
  for (int it = 0; it < 3; it++) {
    s->sigma2(x, s->ctx, h, grad);
    if (h[0] == 0 && h[1] == 0) return;
    /* min-norm step for the 2 x n system grad dx = -h */
    const double a = tf_dot(grad, grad, n), b = tf_dot(grad, grad + n, n),
                 d = tf_dot(grad + n, grad + n, n);
    const double det = a * d - b * b;
    if (!(det > 0)) return;
    const double y0 = (d * h[0] - b * h[1]) / det, y1 = (a * h[1] - b * h[0]) / det;
    for (size_t i = 0; i < n; i++) x[i] -= y0 * grad[i] + y1 * grad[n + i];
  }
}
