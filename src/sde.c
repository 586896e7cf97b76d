/* sde.c — Euler–Maruyama (strong order 1/2, weak order 1) and Milstein (strong order 1 for
 * diagonal noise) on counter-based Wiener increments. */
#include "sde.h"

#include <math.h>

long tf_sde_step_count(double t0, double t_end, double dt) {
  const double span = t_end - t0;
  if (span <= 0) return 0;
  /* Tolerate round-off: 1.0 / 0.1 must give 10 steps, not 11. */
  return (long)ceil(span / dt * (1.0 - 1e-12));
}

tf_sde_status tf_sde_integrate_range(const tf_sde_system *sys, tf_sde_scheme scheme, tf_rng_key key,
                                     double t0, double h, long k_begin, long k_end, double *x,
                                     double *work, long *steps) {
  const size_t n = sys->n;
  double *f = work, *g = work + n, *dg = work + 2 * n, *dw = work + 3 * n;
  const double sqrt_h = sqrt(h);
  *steps = 0;
  for (long k = k_begin; k < k_end; k++) {
    const double t = t0 + (double)k * h;
    sys->drift(t, x, sys->ctx, f);
    sys->diffusion(t, x, sys->ctx, g);
    if (scheme == TF_SDE_MILSTEIN) sys->diffusion_dx(t, x, sys->ctx, dg);
    tf_rng_normals(key, (uint64_t)k, TF_RNG_NOISE, n, dw);
    for (size_t i = 0; i < n; i++) {
      const double w = sqrt_h * dw[i];
      x[i] += f[i] * h + g[i] * w;
      if (scheme == TF_SDE_MILSTEIN) x[i] += 0.5 * g[i] * dg[i] * (w * w - h);
    }
    *steps += 1;
    for (size_t i = 0; i < n; i++)
      if (!isfinite(x[i])) return TF_SDE_NONFINITE;
  }
  return TF_SDE_OK;
}

tf_sde_status tf_sde_integrate(const tf_sde_system *sys, tf_sde_scheme scheme, tf_rng_key key,
                               double t0, double t_end, double dt, double *x, double *work,
                               long *steps) {
  const long nsteps = tf_sde_step_count(t0, t_end, dt);
  const double h = nsteps > 0 ? (t_end - t0) / (double)nsteps : 0.0;
  return tf_sde_integrate_range(sys, scheme, key, t0, h, 0, nsteps, x, work, steps);
}
