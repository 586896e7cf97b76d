/* fold.h — branches of stationary states and their folds, by continuation of F(x, p) = 0.
 *
 * Why: a bifurcation diagram computed by simulation (scan) sees only the stable states, and
 * where a branch turns back in the parameter (a fold, saddle-node) it only sees the jump.
 * The fold's position, and in a second parameter the curve of folds and where it ends (the
 * flowmeter's mu_fold, Antali 2017, Fig. 4.6), are properties of the field itself:
 *   - pseudo-arclength continuation of y = (x, p) along F(x, p) = 0 (Keller): predictor along
 *     the tangent, corrector Newton on (F, tangent . (y - y_pred)), adaptive step; a fold is a
 *     sign change of the tangent's p-component;
 *   - each fold located to round-off by Brent on that component along the arc between the
 *     two points that bracket it (first derivatives only: no second differences);
 *   - a fold followed in a second parameter q by small steps, each fold found next to the
 *     previous one (tf_fold_follow).
 * Derivatives are central differences of the kernel's field (step relative to each value;
 * near zero, floors at 1e-6 and 1e-9 of the state's size compared: the field may depend on
 * directions of small vectors).
 * The field is the kernel's rhs: a smooth flow, or a body with two contacts slipping at both
 * (F_SS with the state's own slip directions), away from its discontinuity sets. */
#ifndef TF_FOLD_H
#define TF_FOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel.h"
#include "max_dim.h"

enum { TF_FOLD_MAX_PARAMS = 64 };

typedef struct tf_fold_options {
  double step;         /* initial arclength step */
  double step_max;     /* largest arclength step */
  double tol;          /* Newton: |correction|_inf relative to max(1, |y|_inf) */
  int max_newton;      /* iterations per corrector */
  double p_min, p_max; /* the branch is followed inside [p_min, p_max] */
} tf_fold_options;

tf_fold_options tf_fold_default_options(void);

typedef struct tf_fold_point {
  double p;
  double x[TF_MAX_DIM];
  double tangent[TF_MAX_DIM + 1]; /* unit tangent of the branch in (x, p) */
  double max_real;                /* largest real part of the eigenvalues of F_x (stable below 0) */
  bool fold;                      /* a fold (tangent's p-component zero), not an ordinary point */
} tf_fold_point;

/* The problem: kernel k with its parameters (copied; the continuation parameter ip is set by
 * the functions below, others may be changed between calls through params). */
typedef struct tf_fold_problem {
  const tf_kernel *k;
  size_t n;
  int ip;
  double params[TF_FOLD_MAX_PARAMS];
  double t; /* time argument of the field (autonomous fields ignore it) */
} tf_fold_problem;

/* 0, or -1 if the kernel has no rhs, more than TF_MAX_DIM states or ip is not one of its
 * parameters. */
int tf_fold_problem_init(tf_fold_problem *pb, const tf_kernel *k, const double *params, int ip);

/* Newton on F(x, p) = 0 at fixed p from x; 0 if it converged (x overwritten). */
int tf_fold_stationary(tf_fold_problem *pb, double p, double *x, const tf_fold_options *o);

/* Follows the branch from the stationary state (p0, x0) in the direction of increasing p
 * (dir > 0) or decreasing p, for at most cap points (the start included); folds are located
 * on the way (Brent on the tangent's p-component along the arc) and stored among the points,
 * flagged.  Returns the number of points (why it stopped in *end), or -1 if the start is
 * not a regular stationary state. */
typedef enum tf_fold_end {
  TF_FOLD_END_RANGE,  /* the parameter left [p_min, p_max] */
  TF_FOLD_END_POINTS, /* cap points */
  TF_FOLD_END_STALLED /* no step of at least 1e-6 of o->step converges: the field is not
                         smooth ahead (e.g. a slip velocity vanishes: a discontinuity set) */
} tf_fold_end;

long tf_fold_continue(tf_fold_problem *pb, double p0, const double *x0, int dir,
                      const tf_fold_options *o, tf_fold_point *branch, size_t cap,
                      tf_fold_end *end);

/* The fold next to a known one after the parameters changed a little (a curve of folds):
 * corrects `near` onto the new branch across its tangent, then walks along the branch both
 * ways to the sign change of the tangent's p-component.  0 and *out on success. */
int tf_fold_follow(tf_fold_problem *pb, const tf_fold_point *near, double reach,
                   const tf_fold_options *o, tf_fold_point *out);

#endif
