/* smooth.h — a Filippov kernel run as a smooth (stiff) flow.
 *
 * Szalai & Jeffrey (2014) close by noting that smoothing the friction law gives a stiff
 * smooth model whose trajectories approximate the Filippov ones; Jeffrey (2015) writes
 * the smoothed sign as Lambda_eps.  Here sign(h) is replaced by a regularisation
 * lambda = Lambda_eps(h) and the field is the kernel's field at that lambda:
 *
 *   law    tanh    Lambda = tanh(h / eps)
 *          sqrt    Lambda = (h / eps) / sqrt(1 + (h / eps)^2)   (Jeffrey's Lambda_eps)
 *          linear  Lambda = clamp(h / eps, -1, 1)               (exact fields for |h| >= eps)
 *   field  convex       (1 + Lambda)/2 slip(x, +1) + (1 - Lambda)/2 slip(x, -1)
 *                       (Sotomayor–Teixeira; every Filippov kernel has it)
 *          stick        the kernel's stick(x, Lambda) (the friction law with sign -> Lambda)
 *          regularised  the kernel's regularised(x, Lambda), which may be nonlinear in
 *                       Lambda (Jeffrey's nonlinear sticking rho Lambda (1 - Lambda^2))
 *          auto         regularised if the kernel defines it, else convex
 *
 * As eps -> 0 the smoothed trajectories converge to the Filippov ones (sliding becomes a
 * boundary layer of width O(eps) about Sigma), and the Jacobian grows like 1/eps: the
 * system is stiff, hence ts.h. */
#ifndef TF_SMOOTH_H
#define TF_SMOOTH_H

#include <stdbool.h>

#include "config.h"
#include "kernel.h"

typedef enum tf_smooth_law { TF_SMOOTH_TANH, TF_SMOOTH_SQRT, TF_SMOOTH_LINEAR } tf_smooth_law;
typedef enum tf_smooth_field {
  TF_SMOOTH_CONVEX,
  TF_SMOOTH_STICK,
  TF_SMOOTH_REGULARISED
} tf_smooth_field;

typedef struct tf_smoothing {
  tf_smooth_law law;
  tf_smooth_field field;
  double epsilon;
} tf_smoothing;

/* True if the config has a `model.smoothing` section. */
bool tf_smoothing_requested(const tf_config *cfg);

/* Reads model.smoothing.law (tanh), .epsilon (required, > 0), .field (auto)
 * for Filippov kernel k.  Errors name file, line and key. */
int tf_smoothing_from_config(tf_config *cfg, const tf_kernel *k, tf_smoothing *s, tf_error *err);

/* Lambda_eps(h); if dlambda is not NULL it receives dLambda/dh. */
double tf_smooth_sign(const tf_smoothing *s, double h, double *dlambda);

/* The smoothed field f(x, Lambda_eps(h(x))). */
int tf_smooth_rhs(const tf_kernel *k, const double *p, const tf_smoothing *s, double t,
                  const double *x, double *dx);

/* d f(x, lambda) / d lambda at lambda = Lambda_eps(h(x)) (dim values): the direction in
 * which a perturbation of the friction law moves the state (noise on the friction law). */
int tf_smooth_lambda_direction(const tf_kernel *k, const double *p, const tf_smoothing *s, double t,
                               const double *x, double *dir);

/* True if an analytic Jacobian exists: the regularised field with regularised_jacobian, or
 * the convex field of a kernel with slip_jacobian (the chain rule through lambda). */
bool tf_smooth_has_jacobian(const tf_kernel *k, const tf_smoothing *s);
/* df/dx of the smoothed field, row-major dim x dim (only if tf_smooth_has_jacobian). */
void tf_smooth_jacobian(const tf_kernel *k, const double *p, const tf_smoothing *s, double t,
                        const double *x, double *jac);

/* For members side by side (integrator.lanes; structure of arrays as tf_lane_field_fn, p
 * shared by the lanes): the smoothed field and its Jacobian (entry (i, j) of lane l at
 * [(i * dim + j) * lanes + l]), bit for bit tf_smooth_rhs and tf_smooth_jacobian lane by lane.
 * Where tf_smooth_has_lanes: the convex field of a kernel with slip_sides_lanes (the Jacobian
 * also where tf_smooth_has_jacobian). */
bool tf_smooth_has_lanes(const tf_kernel *k, const tf_smoothing *s);
void tf_smooth_rhs_lanes(const tf_kernel *k, const double *p, const tf_smoothing *s, int lanes,
                         const double *t, const double *x, double *dx, int *code);
void tf_smooth_jacobian_lanes(const tf_kernel *k, const double *p, const tf_smoothing *s, int lanes,
                              const double *t, const double *x, double *jac);

const char *tf_smooth_law_name(tf_smooth_law law);
const char *tf_smooth_field_name(tf_smooth_field field);

#endif
