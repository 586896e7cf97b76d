/* jeffrey_oscillator.c — the dry-friction oscillator of Jeffrey (2015), "On the mathematical
 * basis of solid friction", with nonlinear sticking (rho), hysteresis (beta), smoothing
 * (eps) and force noise.
 *
 * State x = (y, v, z, theta): displacement, slip speed, the hysteresis variable, and the
 * forcing phase theta' = omega (so the fields are autonomous).  Unit mass:
 *     y' = v
 *     v' = qdd(theta) - k y - c v - N mu,     qdd = -a sin(theta)
 *     mu = Lambda(v) (1 + rho z),              beta z' = Gamma(v) - z
 * with Lambda = sign and Gamma = 1 - Lambda^2 (zero off v = 0) in the discontinuous model,
 * and Jeffrey's smoothing Lambda_eps(v) = u / sqrt(1 + u^2), Gamma_eps = 1 - Lambda_eps^2
 * = 1 / (1 + u^2), u = v / eps, when eps > 0.  beta = 0 (smoothed only) is the model without
 * hysteresis, mu = Lambda + rho Lambda Gamma.
 *
 * Stated in the paper (abstract and appendices, the only parts available): Lambda_eps,
 * Gamma_eps, the friction term Lambda + rho Lambda Gamma, the state {y, v, z}, the dummy
 * variables lambda, gamma(lambda) = 1 - lambda^2 on v = 0, the sticking condition of its
 * Proposition 5 and the forcing qdd = -sigma sin(omega t) (here `a`, keeping sigma for
 * noise).  Reconstructed: the exact place of c, k, N and beta in the equations above.
 *
 * Filippov form (eps = 0, beta > 0): Sigma = {v = 0}; the sticking fields
 *     stick(x, lambda) = (v, F - c v - N lambda (1 + rho z), (1 - lambda^2 - z)/beta, omega)
 * with F = qdd - k y are affine in lambda in the v-component (the only one h_x·f sees), so
 * the engine's multiplier lambda = F / (N (1 + rho z)) is Jeffrey's dummy variable, and z
 * relaxes towards gamma(lambda).  Its fixed points z = 1 - lambda^2 solve F = N mu(lambda)
 * with the cubic mu(lambda) = lambda + rho lambda (1 - lambda^2); they are stable for
 * |lambda| < lambda_s, the maximum of mu, so as beta -> 0 the block breaks loose when
 * |F| reaches N mu_s (static friction) and sticks again only once |F| < N(1 + rho z).
 * Noise (eps > 0 only): dv gains `noise` dW, a random force. */
#include <math.h>

#include "twofold/fast_math.h"
#include "twofold/model.h"

enum { K, C, NLOAD, AMP, OMEGA, RHO, BETA, EPS, NOISE };
enum { Y, V, Z, THETA };

static const tf_param params[] = {
    {"k", 1.0, 0.0, INFINITY, "spring stiffness", false},
    {"c", 0.0, 0.0, INFINITY, "viscous damping", false},
    {"N", 1.0, 1e-12, INFINITY, "normal load (kinetic friction force N)", false},
    {"a", 1.0, 0.0, INFINITY, "forcing amplitude: qdd = -a sin(theta)", false},
    {"omega", 1.0, 0.0, INFINITY, "forcing frequency (theta' = omega)", false},
    {"rho", 2.0, 0.0, INFINITY, "nonlinear sticking; 0 = Filippov (linear) sticking", false},
    {"beta", 0.01, 0.0, INFINITY, "hysteresis time scale of z; 0 = none (needs eps > 0)", false},
    {"eps", 0.0, 0.0, INFINITY, "smoothing of sign(v) by Lambda_eps; 0 = discontinuous", false},
    {"noise", 0.0, 0.0, INFINITY, "amplitude of the random force on v (needs eps > 0)", false},
};

static const char *const state_names[] = {"y", "v", "z", "theta"};
static const double initial[] = {0.0, 0.0, 1.0, 0.0};

static int prepare(double *p, tf_error *err) {
  if (p[EPS] == 0.0 && p[BETA] == 0.0)
    return tf_model_fail(err,
                         "beta = 0 needs eps > 0: without hysteresis the sticking law "
                         "mu = lambda + rho lambda (1 - lambda^2) is not affine in lambda and "
                         "has no Filippov form (use beta > 0 or smooth with eps > 0)");
  if (p[EPS] == 0.0 && p[NOISE] > 0.0)
    return tf_model_fail(err,
                         "noise = %g needs eps > 0 (the event-driven Filippov integrator is "
                         "deterministic)",
                         p[NOISE]);
  return 0;
}

/* sin and cos of the forcing phase over n lanes: libm's (model.field_math: exact) or
 * twofold/fast_math.h's (fast: vectorised, the same bits for every n).  Every field below that
 * needs them takes `fast` as a constant and is compiled twice, once for each model table. */
TF_FAST_INLINE void phase_sines(int n, const double *theta, double *sine, bool fast) {
  if (fast)
    tf_fast_sincos_array(n, theta, sine, NULL);
  else
    for (int l = 0; l < n; l++) sine[l] = sin(theta[l]);
}
TF_FAST_INLINE void phase_cosines(int n, const double *theta, double *cosine, bool fast) {
  if (fast)
    tf_fast_sincos_array(n, theta, NULL, cosine);
  else
    for (int l = 0; l < n; l++) cosine[l] = cos(theta[l]);
}
static inline double phase_sine(double theta, bool fast) {
  return fast ? tf_fast_sin(theta) : sin(theta);
}
static inline double phase_cosine(double theta, bool fast) {
  return fast ? tf_fast_cos(theta) : cos(theta);
}

static inline double applied_force(const double *x, const double *p, bool fast) {
  return -p[AMP] * phase_sine(x[THETA], fast) - p[K] * x[Y];
}

static double switching(const double *x, const double *p, double *grad) {
  (void)p;
  if (grad) grad[Y] = 0.0, grad[V] = 1.0, grad[Z] = 0.0, grad[THETA] = 0.0;
  return x[V];
}

static inline int stick_with(const double *x, double lambda, const double *p, double *dx,
                             bool fast) {
  dx[Y] = x[V];
  dx[V] = applied_force(x, p, fast) - p[C] * x[V] - p[NLOAD] * lambda * (1 + p[RHO] * x[Z]);
  dx[Z] = (1 - lambda * lambda - x[Z]) / p[BETA];
  dx[THETA] = p[OMEGA];
  return 0;
}
static int stick(double t, const double *x, double lambda, const double *p, double *dx) {
  (void)t;
  return stick_with(x, lambda, p, dx, false);
}
static int stick_fast(double t, const double *x, double lambda, const double *p, double *dx) {
  (void)t;
  return stick_with(x, lambda, p, dx, true);
}

/* Off Sigma Lambda = side and Gamma = 0: the sticking field at lambda = side. */
static int slip(double t, const double *x, int side, const double *p, double *dx) {
  return stick(t, x, side, p, dx);
}
static int slip_fast(double t, const double *x, int side, const double *p, double *dx) {
  return stick_fast(t, x, side, p, dx);
}

/* v / eps, and (gam - z) / beta: fast multiplies by the reciprocals (a division costs
 * several multiplications' time in a vector unit, and the field's other division and its root
 * are already two of them per lane) */
TF_FAST_INLINE double over(double a, double b, bool fast) {
  return fast ? a * (1.0 / b) : a / b;
}

/* Lambda_eps, Gamma_eps and, unless dlam is NULL, their v-derivatives, with u = over(v, eps,
 * fast); Gamma as 1/(1+u^2), never 1 - Lambda^2 (which cancels to zero in floating point for
 * |u| >> 1). */
static inline void smoothed_sign(double v, double eps, bool fast, double *lam, double *gam,
                                 double *dlam, double *dgam) {
  const double u = over(v, eps, fast), q = 1.0 / (1.0 + u * u), s = sqrt(q);
  *lam = u * s;
  *gam = q;
  if (!dlam) return;
  *dlam = q * s / eps;
  *dgam = -2.0 * u * q * q / eps;
}

static inline int rhs_with(const double *x, const double *p, double *dx, bool fast) {
  double lam, gam;
  smoothed_sign(x[V], p[EPS], fast, &lam, &gam, NULL, NULL);
  const double z = p[BETA] > 0 ? x[Z] : gam;
  dx[Y] = x[V];
  dx[V] = applied_force(x, p, fast) - p[C] * x[V] - p[NLOAD] * lam * (1 + p[RHO] * z);
  dx[Z] = p[BETA] > 0 ? over(gam - x[Z], p[BETA], fast) : 0.0;
  dx[THETA] = p[OMEGA];
  return 0;
}
static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  return rhs_with(x, p, dx, false);
}
static int rhs_fast(double t, const double *x, const double *p, double *dx) {
  (void)t;
  return rhs_with(x, p, dx, true);
}

/* rhs for lanes side by side (twofold/model.h): rhs's operations, in its order, lane by lane;
 * component c of lane l is x[c * lanes + l]. */
TF_FAST_INLINE void rhs_lanes_with(int lanes, const double *x, const double *p, double *dx,
                                   int *code, bool fast) {
  const double *restrict y = x + Y * lanes, *restrict v = x + V * lanes;
  const double *restrict zs = x + Z * lanes, *restrict theta = x + THETA * lanes;
  double *restrict dy = dx + Y * lanes, *restrict dv = dx + V * lanes;
  double *restrict dz = dx + Z * lanes, *restrict dtheta = dx + THETA * lanes;
  int *restrict codes = code;
  /* the parameters as locals: the stores below could alias p, which would keep the loop scalar */
  const double eps = p[EPS], amp = p[AMP], k = p[K], c = p[C], n = p[NLOAD], r = p[RHO];
  const double beta = p[BETA], omega = p[OMEGA];
  const bool hysteresis = beta > 0;
  double sine[TF_LANES_MAX]; /* apart, so that the loop below vectorises */
  phase_sines(lanes, theta, sine, fast);
  /* Written so that gcc vectorises it: a division behind a condition, or a store to dz in the
   * loop that reads x, keeps the loop scalar (it cannot tell the lanes' arrays apart). */
  double gam[TF_LANES_MAX];
  for (int l = 0; l < lanes; l++) {
    const double u = over(v[l], eps, fast), q = 1.0 / (1.0 + u * u), lam = u * sqrt(q);
    const double z = hysteresis ? zs[l] : q;
    dy[l] = v[l];
    dv[l] = -amp * sine[l] - k * y[l] - c * v[l] - n * lam * (1 + r * z);
    gam[l] = q;
  }
  if (hysteresis)
    for (int l = 0; l < lanes; l++) dz[l] = over(gam[l] - zs[l], beta, fast);
  else
    for (int l = 0; l < lanes; l++) dz[l] = 0.0;
  for (int l = 0; l < lanes; l++) dtheta[l] = omega, codes[l] = 0;
}
static void rhs_lanes(int lanes, const double *t, const double *x, const double *p, double *dx,
                      int *code) {
  (void)t;
  rhs_lanes_with(lanes, x, p, dx, code, false);
}
TF_FAST_LANES static void rhs_lanes_fast(int lanes, const double *t, const double *x,
                                         const double *p, double *dx, int *code) {
  (void)t;
  rhs_lanes_with(lanes, x, p, dx, code, true);
}

static inline void jacobian_with(const double *x, const double *p, double *j, bool fast) {
  double lam, gam, dlam, dgam;
  smoothed_sign(x[V], p[EPS], false, &lam, &gam, &dlam, &dgam); /* divides in both tables */
  const double n = p[NLOAD], r = p[RHO];
  for (int i = 0; i < 16; i++) j[i] = 0.0;
  j[4 * Y + V] = 1.0;
  j[4 * V + Y] = -p[K];
  j[4 * V + THETA] = -p[AMP] * phase_cosine(x[THETA], fast);
  if (p[BETA] > 0) {
    j[4 * V + V] = -p[C] - n * dlam * (1 + r * x[Z]);
    j[4 * V + Z] = -n * r * lam;
    j[4 * Z + V] = dgam / p[BETA];
    j[4 * Z + Z] = -1.0 / p[BETA];
  } else {
    j[4 * V + V] = -p[C] - n * (dlam * (1 + r * gam) + r * lam * dgam);
  }
}
static void jacobian(double t, const double *x, const double *p, double *j) {
  (void)t;
  jacobian_with(x, p, j, false);
}
static void jacobian_fast(double t, const double *x, const double *p, double *j) {
  (void)t;
  jacobian_with(x, p, j, true);
}

/* jacobian for lanes side by side (twofold/model.h): jacobian's operations, in its order, lane
 * by lane; entry (i, j) of lane l is jac[(4 i + j) * lanes + l]. */
TF_FAST_INLINE void jacobian_lanes_with(int lanes, const double *x, const double *p, double *jac,
                                        bool fast) {
  const double *restrict v = x + V * lanes, *restrict zs = x + Z * lanes;
  const double *restrict theta = x + THETA * lanes;
  const double n = p[NLOAD], r = p[RHO];
  double cosine[TF_LANES_MAX]; /* apart, so that the loop below vectorises */
  phase_cosines(lanes, theta, cosine, fast);
  for (int i = 0; i < 16 * lanes; i++) jac[i] = 0.0;
#define J(i, j) jac[(4 * (i) + (j)) * lanes + l]
  for (int l = 0; l < lanes; l++) {
    const double u = v[l] / p[EPS], q = 1.0 / (1.0 + u * u), s = sqrt(q);
    const double lam = u * s, gam = q, dlam = q * s / p[EPS], dgam = -2.0 * u * q * q / p[EPS];
    J(Y, V) = 1.0;
    J(V, Y) = -p[K];
    J(V, THETA) = -p[AMP] * cosine[l];
    if (p[BETA] > 0) {
      J(V, V) = -p[C] - n * dlam * (1 + r * zs[l]);
      J(V, Z) = -n * r * lam;
      J(Z, V) = dgam / p[BETA];
      J(Z, Z) = -1.0 / p[BETA];
    } else {
      J(V, V) = -p[C] - n * (dlam * (1 + r * gam) + r * lam * dgam);
    }
  }
#undef J
}
static void jacobian_lanes(int lanes, const double *t, const double *x, const double *p,
                           double *jac) {
  (void)t;
  jacobian_lanes_with(lanes, x, p, jac, false);
}
TF_FAST_LANES static void jacobian_lanes_fast(int lanes, const double *t, const double *x,
                                              const double *p, double *jac) {
  (void)t;
  jacobian_lanes_with(lanes, x, p, jac, true);
}

/* The field with Lambda = lambda and Gamma = gamma(lambda) = 1 - lambda^2 anywhere in state
 * space, for model.smoothing (smooth.h evaluates it at lambda = Lambda_eps(v), so law sqrt
 * reproduces the eps > 0 model above).  Without hysteresis (beta = 0) this is where the
 * nonlinear term rho lambda (1 - lambda^2) that stick() cannot express lives. */
static inline int regularised_with(const double *x, double lambda, const double *p, double *dx,
                                   bool fast) {
  if (p[BETA] > 0) {
    return stick_with(x, lambda, p, dx, fast);
  }
  dx[Y] = x[V];
  dx[V] = applied_force(x, p, fast) - p[C] * x[V] -
          p[NLOAD] * lambda * (1 + p[RHO] * (1 - lambda * lambda));
  dx[Z] = 0.0;
  dx[THETA] = p[OMEGA];
  return 0;
}
static int regularised(double t, const double *x, double lambda, const double *p, double *dx) {
  (void)t;
  return regularised_with(x, lambda, p, dx, false);
}
static int regularised_fast(double t, const double *x, double lambda, const double *p, double *dx) {
  (void)t;
  return regularised_with(x, lambda, p, dx, true);
}

static inline void regularised_jacobian_with(const double *x, double lambda, const double *p,
                                             double *j, double *dlambda, bool fast) {
  const double n = p[NLOAD], r = p[RHO];
  for (int i = 0; i < 16; i++) j[i] = 0.0;
  j[4 * Y + V] = 1.0;
  j[4 * V + Y] = -p[K];
  j[4 * V + V] = -p[C];
  j[4 * V + THETA] = -p[AMP] * phase_cosine(x[THETA], fast);
  dlambda[Y] = dlambda[THETA] = 0.0;
  if (p[BETA] > 0) {
    j[4 * V + Z] = -n * r * lambda;
    j[4 * Z + Z] = -1.0 / p[BETA];
    dlambda[V] = -n * (1 + r * x[Z]);
    dlambda[Z] = -2.0 * lambda / p[BETA];
  } else {
    dlambda[V] = -n * (1 + r * (1 - 3 * lambda * lambda));
    dlambda[Z] = 0.0;
  }
}
static void regularised_jacobian(double t, const double *x, double lambda, const double *p,
                                 double *j, double *dlambda) {
  (void)t;
  regularised_jacobian_with(x, lambda, p, j, dlambda, false);
}
static void regularised_jacobian_fast(double t, const double *x, double lambda, const double *p,
                                      double *j, double *dlambda) {
  (void)t;
  regularised_jacobian_with(x, lambda, p, j, dlambda, true);
}

static int diffusion(double t, const double *x, const double *p, double *g) {
  (void)t, (void)x;
  g[Y] = 0.0, g[V] = p[NOISE], g[Z] = 0.0, g[THETA] = 0.0;
  return 0;
}

static int diffusion_dx(double t, const double *x, const double *p, double *dg) {
  (void)t, (void)x, (void)p;
  dg[Y] = dg[V] = dg[Z] = dg[THETA] = 0.0;
  return 0;
}

static bool smoothed(const double *p) {
  return p[EPS] > 0;
}

/* the tables of either math: SMOOTH_OPS() and JEFFREY_OPS(..) libm's, (_fast) the fast one */
#define SMOOTH_OPS(suffix)                                                          \
  {                                                                                 \
    TF_OPS_SIZE(tf_flow_ops), .rhs = rhs##suffix, .jacobian = jacobian##suffix,     \
                              .diffusion = diffusion, .diffusion_dx = diffusion_dx, \
                              .rhs_lanes = rhs_lanes##suffix,                       \
                              .jacobian_lanes = jacobian_lanes##suffix,             \
  }
static const tf_flow_ops smooth = SMOOTH_OPS(), smooth_fast = SMOOTH_OPS(_fast);

#define JEFFREY_OPS(suffix)                                                                   \
  {                                                                                           \
    TF_OPS_SIZE(tf_filippov_ops), .switching = switching, .slip = slip##suffix,               \
                                  .stick = stick##suffix, .regularised = regularised##suffix, \
                                  .regularised_jacobian = regularised_jacobian##suffix,       \
                                  .smoothed = smoothed, .smooth = &smooth##suffix,            \
  }
static const tf_filippov_ops ops = JEFFREY_OPS(), ops_fast = JEFFREY_OPS(_fast);

#define JEFFREY_DEF(table, fast_variant)                                                        \
  {                                                                                             \
    TF_MODEL_HEAD,                                                                              \
        .name = "jeffrey-oscillator",                                                           \
        .doc =                                                                                  \
            "Jeffrey (2015) dry-friction oscillator: nonlinear sticking rho, hysteresis beta, " \
            "smoothing eps, force noise",                                                       \
        .kind = TF_MODEL_FILIPPOV, .dim = 4, .state_names = state_names, .initial = initial,    \
        .nparams = sizeof params / sizeof params[0], .params = params, .prepare = prepare,      \
        .filippov = table, .autonomous = true, .fast_math = fast_variant,                       \
  }
/* model.field_math: fast (twofold/model.h, fast_math): sin and cos of the forcing phase
 * from twofold/fast_math.h */
static const tf_model_def jeffrey_fast = JEFFREY_DEF(&ops_fast, NULL);
const tf_model_def tf_kernel_jeffrey_oscillator = JEFFREY_DEF(&ops, &jeffrey_fast);
