/* codim2.h — the local geometry of an extended Filippov system at its codimension-2
 * discontinuity Sigma = {H1 = H2 = 0} (Antali 2017, chapter 2; Antali & Stepan 2018).
 *
 * Spatial Coulomb friction makes the field discontinuous only where a 2-D slip velocity
 * vanishes, so at a point x0 of Sigma there is a whole circle of limit vectors F*(phi)
 * (eq 2.18), one per direction n(phi) = cos phi n1 + sin phi n2 of approach.  Everything an
 * event-driven integrator needs is derived from F*(phi) alone, as in the thesis:
 *   R(phi) = <F*(phi), n(phi)>, V(phi) = <F*(phi), n(phi + pi/2)>                 (2.24)
 *   limit directions: the zeros of V; attracting if R < 0, repelling if R > 0     (Def 2.14)
 *   sliding region: all limit directions attracting (or all repelling), crossing
 *   region: both kinds present                                                    (Thm 2.15)
 *   sliding vector: F_s = Fbar + a F_A + b F_B tangent to Sigma when
 *   F*(phi) = Fbar + A(phi) F_A + B(phi) F_B                                       (Thm 2.17)
 * Fbar is the mean of F* over the circle (eq 2.29 as the worked examples use it).  The
 * decomposition is found from samples of F*: first as the first Fourier harmonic (A = cos,
 * B = sin, the thesis' own form, so a and b are the thesis' numbers), otherwise by an SVD of
 * the centred samples (any A, B); a rank above 2 means the sliding vector is not unique (the
 * thesis' open case) and is reported, not guessed.  Limit directions are the roots of V
 * bracketed on a grid and polished with GSL's Brent solver.  V identically zero (every
 * direction is a limit direction, e.g. the billiard ball without drag) is recognised and
 * classified by the sign of R over the whole circle. */
#ifndef TF_CODIM2_H
#define TF_CODIM2_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel.h"
#include "max_dim.h"

enum { TF_CODIM2_MAX_DIRECTIONS = 16 };

/* The system the analysis works on: H = (H1, H2) with gradients (2 x dim) and the field with
 * a given slip direction.  A codim-2 kernel is one (tf_codim2_from_kernel); a body with two
 * contacts gives one per discontinuity set (dual_contact.c). */
typedef struct tf_codim2_sys {
  size_t dim;
  void (*sigma2)(const double *x, void *ctx, double *h, double *grad);
  /* 0, or the model's refusal (twofold/model.h) */
  int (*field2)(double t, const double *x, const double *dir, void *ctx, double *dx);
  void *ctx;
  /* Optional: field2 in `count` directions (cos_phi[j], sin_phi[j]) at once, bit for bit as
   * field2 one after another, direction j's field at dx[j * dim]; the scans of the circle
   * take it where the model can evaluate its field side by side (slip_lanes).  Returns the
   * directions' joined refusal (tf_model_code_join), NaN written for each refused one. */
  int (*field2_many)(double t, const double *x, int count, const double *cos_phi,
                     const double *sin_phi, void *ctx, double *dx);
  /* Optional: where the analysis below records the first refusal of any evaluation of the
   * field (a direction whose F* the model does not define).  Its functions return values, not
   * codes, and take NaN for such a direction; a caller that acts on their answer (a verdict, a
   * sliding vector, a departure) clears *refusal first and fails the member with the code
   * after, instead of deciding on a field the model never gave. */
  int *refusal;
} tf_codim2_sys;

/* F* in direction dir (field2), and in `count` directions (field2_many where there is one):
 * NaN for a refused direction, its code kept in s->refusal. */
void tf_codim2_field(const tf_codim2_sys *s, double t, const double *x, const double *dir,
                     double *out);
void tf_codim2_fields(const tf_codim2_sys *s, double t, const double *x, int count,
                      const double *cos_phi, const double *sin_phi, double *out);

typedef struct tf_codim2_kernel_ctx {
  const tf_kernel *k;
  const double *p;
} tf_codim2_kernel_ctx;

/* The system of a codim-2 kernel (twofold/model.h tf_codim2_ops) with parameters p; `store` must
 * outlive the system. */
void tf_codim2_from_kernel(tf_codim2_sys *s, tf_codim2_kernel_ctx *store, const tf_kernel *k,
                           const double *p);

typedef enum tf_codim2_region {
  TF_CODIM2_SLIDING,   /* all limit directions attracting: rolling / sticking persists */
  TF_CODIM2_REPELLING, /* all repelling: repelling sliding, escape in any of them */
  TF_CODIM2_CROSSING,  /* attracting and repelling directions: the trajectory passes */
  TF_CODIM2_TANGENCY,  /* some F*(phi) tangent to Sigma (R = V = 0): the boundary */
  TF_CODIM2_SPIRAL     /* no limit direction (Theorem 2.15 does not apply) */
} tf_codim2_region;

const char *tf_codim2_region_name(tf_codim2_region r);

/* The normal frame at x: n1, n2 (dim values each), unit and orthogonal; h = (H1, H2) scaled
 * by the gradient norms (so that |h| is the distance to Sigma to first order). */
void tf_codim2_frame(const tf_codim2_sys *s, const double *x, double *h, double *n1, double *n2);

/* F*(phi) at x (the kernel's field2 with dir = (cos phi, sin phi)). */
void tf_codim2_limit(const tf_codim2_sys *s, double t, const double *x, double phi, double *out);
/* R(phi) and V(phi) (eq 2.24); either output may be NULL. */
void tf_codim2_rv(const tf_codim2_sys *s, double t, const double *x, double phi, double *R,
                  double *V);

typedef struct tf_codim2_point {
  tf_codim2_region region;
  bool all_directions; /* V == 0 on the whole circle: every phi is a limit direction */
  int count;           /* limit directions found (0 if all_directions) */
  double phi[TF_CODIM2_MAX_DIRECTIONS], R[TF_CODIM2_MAX_DIRECTIONS];
  double R_max, R_min; /* over the limit directions (over the circle if all_directions) */
  double phi_R_max;    /* where R_max is attained */
} tf_codim2_point;

/* An increasing grid of angles to scan V on.  `periodic`: the last point is the first one
 * again (2 pi), and takes its value.  What a caller already has saves evaluations, with the
 * same bits: cos_phi and sin_phi (a fixed grid's, tabulated once), v (V at every point, from
 * the caller's own scan); NULL where not known. */
typedef struct tf_codim2_grid {
  const double *phi;
  int points;
  bool periodic;
  const double *cos_phi, *sin_phi, *v;
} tf_codim2_grid;

/* The roots of V between consecutive points of the grid (a root at a grid point counts once,
 * from the bracket it starts), polished by Brent, at most max; their R into R.  Returns how
 * many. */
int tf_codim2_roots_of_v(const tf_codim2_sys *s, double t, const double *x,
                         const tf_codim2_grid *grid, int max, double *phi, double *R);

/* Limit directions and the region at x (taken as a point of Sigma). */
void tf_codim2_classify(const tf_codim2_sys *s, double t, const double *x, tf_codim2_point *pt);

typedef enum tf_codim2_decomposition {
  TF_CODIM2_HARMONIC,   /* F* = Fbar + cos(phi) F_A + sin(phi) F_B exactly */
  TF_CODIM2_SVD,        /* general A(phi), B(phi) from the centred samples */
  TF_CODIM2_NOT_UNIQUE, /* F* spans more than a plane: Theorem 2.17 does not apply */
  TF_CODIM2_DEGENERATE  /* condition (2.31) fails: a and b are not determined */
} tf_codim2_decomposition;

const char *tf_codim2_decomposition_name(tf_codim2_decomposition d);

typedef struct tf_codim2_sliding {
  tf_codim2_decomposition how;
  double a, b, det; /* weights of (2.32) and the determinant of (2.31) */
  double Fbar[TF_MAX_DIM], FA[TF_MAX_DIM], FB[TF_MAX_DIM];
  double Fs[TF_MAX_DIM];
} tf_codim2_sliding;

/* The sliding vector at x by Theorem 2.17.  Returns 0, or -1 when it is not unique or not
 * determined (s->how says which; Fs is then NaN). */
int tf_codim2_sliding_vector(const tf_codim2_sys *s, double t, const double *x,
                             tf_codim2_sliding *out);

/* Newton onto Sigma along the normals (min-norm correction).  */
void tf_codim2_project(const tf_codim2_sys *s, double *x);

#endif
