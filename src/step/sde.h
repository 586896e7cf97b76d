/* sde.h — fixed-step schemes for SDE members with diagonal noise:
 *     dx_i = f_i(t, x) dt + g_i(t, x) dW_i.
 *
 * The Wiener increments of step k are drawn from the counter-based stream
 * (seed, member, counter = k, purpose = TF_RNG_NOISE), so a member's path is the same on
 * any rank and after a restart, and two schemes run with the same key see the same
 * Brownian path (which is what strong-order tests need). */
#ifndef TF_SDE_H
#define TF_SDE_H

#include <stdbool.h>
#include <stddef.h>

#include "max_dim.h"
#include "rng.h"

typedef enum tf_sde_scheme {
  TF_SDE_EULER_MARUYAMA,
  TF_SDE_MILSTEIN,
  /* theta-method in the drift (implicit, solved by Newton with a GSL LU solve each
   * iteration), explicit in the noise: for stiff drifts (smoothed friction), where explicit
   * schemes need dt below the smoothing scale.  Strong order 1/2 (1 for additive noise),
   * weak order 1; theta = 1 is the L-stable backward (drift-implicit) Euler. */
  TF_SDE_DRIFT_IMPLICIT,
  TF_SDE_DRIFT_IMPLICIT_MILSTEIN /* the same with the Milstein correction (strong order 1) */
} tf_sde_scheme;

/* The functions return 0, or a model's refusal (twofold/model.h), which ends the run. */
typedef struct tf_sde_system {
  size_t n;
  int (*drift)(double t, const double *x, void *ctx, double *f);
  int (*diffusion)(double t, const double *x, void *ctx, double *g);
  int (*diffusion_dx)(double t, const double *x, void *ctx, double *dg); /* Milstein only */
  void *ctx;
  /* Optional general noise with m Wiener processes (instead of `diffusion`):
   * dx = f dt + G(t, x) dW, G n x m row-major.  Milstein schemes need m = 1 (a single noise
   * source is always commutative); the derivative (G'G) is taken by central differences. */
  size_t m;
  int (*noise)(double t, const double *x, void *ctx, double *G);
  /* Optional df/dx (n x n, row-major) for the drift-implicit schemes; NULL: differences. */
  void (*drift_jacobian)(double t, const double *x, void *ctx, double *jac);
  double theta; /* drift-implicit weight in (0, 1]; 0 means 1 */
  /* Wiener increments from tf_rng_normals_run_fast (integrator.normals: fast) instead of
   * tf_rng_normals_run: the same Box–Muller on the same counters, own vectorised log and
   * sin/cos (rng.h) */
  bool fast_normals;
  /* Optional (n <= TF_MAX_DIM): sees every step k, from the state xa at t0 + k h to xb at its
   * end (nothing of the run depends on it: the path is the same with or without) */
  void (*accepted)(void *ctx, long k, const double *xa, const double *xb);
} tf_sde_system;

typedef enum tf_sde_status {
  TF_SDE_OK = 0,
  TF_SDE_NONFINITE,
  TF_SDE_NEWTON_FAILED, /* drift-implicit step: Newton did not converge (or singular matrix) */
  TF_SDE_MODEL_FAILED   /* a model function refused (returned nonzero: with a fixed step there
                           is no smaller step to retry) */
} tf_sde_status;

/* Integrates from t0 to t_end in ceil((t_end - t0) / dt) equal steps (the step is shortened
 * slightly so that the last one lands on t_end).  `work` holds 4 n doubles.  On return
 * *steps is the number of steps taken. */
tf_sde_status tf_sde_integrate(const tf_sde_system *sys, tf_sde_scheme scheme, tf_rng_key key,
                               double t0, double t_end, double dt, double *x, double *work,
                               long *steps);

/* Steps k = k_begin .. k_end-1 of the grid t_k = t0 + k h (the step-k increments come from
 * counter k), so a run can be split into segments without changing the path.  *steps
 * counts the steps taken in this call. */
tf_sde_status tf_sde_integrate_range(const tf_sde_system *sys, tf_sde_scheme scheme, tf_rng_key key,
                                     double t0, double h, long k_begin, long k_end, double *x,
                                     double *work, long *steps);

/* Number of steps tf_sde_integrate takes for these times. */
long tf_sde_step_count(double t0, double t_end, double dt);

#endif
