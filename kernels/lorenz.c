/* lorenz.c — the Lorenz (1963) system, optionally with additive noise.
 *
 * The smooth reference model of the engine: chaotic, cheap, with a known Lyapunov spectrum
 * and a constant Jacobian trace -(sigma + 1 + beta).  With noise > 0 each component gets an
 * independent additive Wiener forcing of that amplitude. */
#include "twofold/model.h"

#include <math.h>

enum { SIGMA, RHO, BETA, NOISE };

static const tf_param params[] = {
    {"sigma", 10.0, 0.0, INFINITY, "Prandtl number", false},
    {"rho", 28.0, 0.0, INFINITY, "Rayleigh number (relative)", false},
    {"beta", 8.0 / 3.0, 0.0, INFINITY, "geometric factor", false},
    {"noise", 0.0, 0.0, INFINITY, "additive noise amplitude on each component (0: deterministic)",
     false},
};

static const double initial[] = {1.0, 1.0, 1.0};
static const char *const state_names[] = {"x", "y", "z"};

static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = p[SIGMA] * (x[1] - x[0]);
  dx[1] = x[0] * (p[RHO] - x[2]) - x[1];
  dx[2] = x[0] * x[1] - p[BETA] * x[2];
  return 0;
}

/* rhs for lanes side by side (twofold/model.h): the same expressions lane by lane, compiled for
 * AVX2 where the CPU has it (the same operations on each element: the same bits).  Not for
 * AVX-512: the engine writes the stages in 256-bit halves (src/engine/flow_lanes.h), and a
 * 512-bit load of two of them waits until both stores reach the cache (no store forwarding),
 * which doubled this field's time. */
__attribute__((target_clones("avx2", "default"))) static void rhs_lanes(int lanes, const double *t,
                                                                        const double *restrict x,
                                                                        const double *restrict p,
                                                                        double *restrict dx,
                                                                        int *restrict code) {
  (void)t;
  const double *restrict x0 = x, *restrict x1 = x + lanes, *restrict x2 = x + 2 * lanes;
  double *restrict d0 = dx, *restrict d1 = dx + lanes, *restrict d2 = dx + 2 * lanes;
  for (int l = 0; l < lanes; l++) {
    d0[l] = p[SIGMA] * (x1[l] - x0[l]);
    d1[l] = x0[l] * (p[RHO] - x2[l]) - x1[l];
    d2[l] = x0[l] * x1[l] - p[BETA] * x2[l];
    code[l] = 0;
  }
}

static void jacobian(double t, const double *x, const double *p, double *j) {
  (void)t;
  j[0] = -p[SIGMA], j[1] = p[SIGMA], j[2] = 0.0;
  j[3] = p[RHO] - x[2], j[4] = -1.0, j[5] = -x[0];
  j[6] = x[1], j[7] = x[0], j[8] = -p[BETA];
}

static int diffusion(double t, const double *x, const double *p, double *g) {
  (void)t, (void)x;
  g[0] = g[1] = g[2] = p[NOISE];
  return 0;
}

static int diffusion_dx(double t, const double *x, const double *p, double *dg) {
  (void)t, (void)x, (void)p;
  dg[0] = dg[1] = dg[2] = 0.0;
  return 0;
}

static const tf_flow_ops ops = {
    TF_OPS_SIZE(tf_flow_ops),     .rhs = rhs,
    .jacobian = jacobian,         .diffusion = diffusion,
    .diffusion_dx = diffusion_dx, .rhs_lanes = rhs_lanes,
};

const tf_model_def tf_kernel_lorenz = {
    TF_MODEL_HEAD,
    .name = "lorenz",
    .doc = "Lorenz 1963 convection model, optional additive noise",
    .kind = TF_MODEL_FLOW,
    .dim = 3,
    .state_names = state_names,
    .initial = initial,
    .nparams = sizeof params / sizeof params[0],
    .params = params,
    .flow = &ops,
};
