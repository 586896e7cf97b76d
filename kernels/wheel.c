/* wheel.c — the wheel on a turntable of Szalai & Jeffrey (2014), a Filippov system with a
 * nondeterministic (Teixeira) two-fold singularity.
 *
 * State x = (r, v, omega): slider position, slider speed, top-disc angular speed, in the
 * paper's rescaled time (eqs 1-3).  Slip friction F(h, g), M(h, g) from the stretched-string
 * tyre model (eqs 6-7); on the switching surface Sigma = {h = 0} (eq 4) the wheel sticks
 * laterally and F = mu*lambda, M = kappa*mu*lambda with lambda in [-1, 1] (the paper's
 * lambda in [-mu, mu], eq 12).  kappa and k2 are chosen, as in the paper, so that a two-fold
 * sits at (rstar, vstar, omegastar): vstar by eq (9), kappa by eq (10), k2 by eq (11).
 * Both versions of the paper (arXiv and Phys. Rev. E) print the same eqs (1)-(11); the PRE
 * text extraction garbles (1)-(3) and (9)-(11), so the arXiv text is the reference.
 * The rolling speed g (eq 5) is the second switching function: the sticking moment flips
 * across g = 0, and at h = g = 0 (full stick) the law depends on the slip direction, a
 * codimension-2 set the engine continues by the extended Filippov verdict (intersection.h). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "twofold/fast_math.h"
#include "twofold/model.h"

enum {
  D,
  M,
  C1,
  C2,
  BETA,
  R0,
  OMEGA0,
  MU,
  GAMMA,
  RSTAR,
  OMEGASTAR,
  KAPPA,
  K2,
  SIGNED_MOMENT,
  CONTINUATION
};

static const tf_param params[] = {
    {"d", 1.0, -INFINITY, INFINITY, "offset of the slider axis from the disc centre", false},
    {"m", 1.0, 1e-12, INFINITY, "slider mass", false},
    {"c1", 1e-3, 0.0, INFINITY, "viscous coupling between the discs", false},
    {"c2", 1e-3, 0.0, INFINITY, "slider damping", false},
    {"beta", 0.05, 0.0, INFINITY, "radius of gyration of the top disc (scaled)", false},
    {"r0", 0.1, -INFINITY, INFINITY, "spring rest position of the slider", false},
    {"omega0", -1.0, -INFINITY, INFINITY, "angular speed of the bottom disc", false},
    {"mu", 1.0, 1e-12, INFINITY, "friction coefficient", false},
    {"gamma", -0.75 * M_PI, -M_PI, M_PI, "mounting angle of the wheel (radians)", false},
    {"rstar", 0.1859, -INFINITY, INFINITY, "r of the designed two-fold", false},
    {"omegastar", -1.037, -INFINITY, INFINITY, "omega of the designed two-fold", false},
    {"kappa", 0.0, 0.0, INFINITY, "tyre length scale; 0 = derive by eq (10)", true},
    {"k2", 0.0, 0.0, INFINITY, "slider spring stiffness; 0 = derive by eq (11)", true},
    {"signed_moment", 1.0, 0.0, 1.0,
     "sticking moment on Sigma: 1 = sign(g) kappa F (continuous with the slip limits), "
     "0 = kappa F as printed in section IV (the same where g > 0)",
     false},
    {"continuation", 0.0, 0.0, 1.0,
     "a slip field past Sigma, met only inside steps that cross it: 0 = the tyre law's |h| "
     "(a kink on Sigma), 1 = a C2 continuation (fewer rejected steps; the same fields on "
     "their own sides)",
     false},
};

static const char *const state_names[] = {"r", "v", "omega"};
static const double initial[] = {0.1859, -0.0301, -1.037};

/* The fields' arithmetic reads parameter j of a member at p[j * n]: n = 1 for one member's
 * parameters, n = lanes for lane l's with p pointing at lane l's first (structure of arrays),
 * so the lanes fields below run the scalar operations one for one. */
#define P(j) p[(j)*n]

static inline double p2_with(double r, const double *p, size_t n, double sin_g, double cos_g) {
  return P(D) * r * cos_g + (P(BETA) * P(BETA) + r * r) * sin_g;
}

static double p2_of(double r, const double *p) {
  return p2_with(r, p, 1, sin(p[GAMMA]), cos(p[GAMMA]));
}

/* eq (9) */
static double vstar_of(const double *p) {
  return (p[OMEGASTAR] - p[OMEGA0]) * (p[D] - p[RSTAR] / tan(p[GAMMA]));
}

/* Derives vstar, kappa and k2 first and validates afterwards, so that a parameter map
 * (Fig. 4) can record the derived values even where they are unphysical. */
static int prepare(double *p, tf_error *err) {
  const double g = p[GAMMA], rs = p[RSTAR], ws = p[OMEGASTAR], w0 = p[OMEGA0];
  const double b2 = p[BETA] * p[BETA], d = p[D], m = p[M], c1 = p[C1], c2 = p[C2];
  if (sin(g) == 0.0) return tf_model_fail(err, "gamma = %g: eq (9) needs sin(gamma) != 0", g);
  if (p[SIGNED_MOMENT] != 0.0 && p[SIGNED_MOMENT] != 1.0)
    return tf_model_fail(err, "signed_moment must be 0 or 1, got %g", p[SIGNED_MOMENT]);
  if (p[CONTINUATION] != 0.0 && p[CONTINUATION] != 1.0)
    return tf_model_fail(err, "continuation must be 0 or 1, got %g", p[CONTINUATION]);
  const double vs = vstar_of(p);
  const bool derive_kappa = p[KAPPA] == 0.0, derive_k2 = p[K2] == 0.0;
  if (derive_kappa) {
    if (rs == 0.0 || cos(g) == 0.0)
      return tf_model_fail(
          err, "eq (10) is singular for rstar = %g, gamma = %g (needs rstar cos(gamma) != 0)", rs,
          g);
    p[KAPPA] = -(2 * rs * rs + b2 * (1 - cos(2 * g))) / (2 * rs * cos(g)); /* eq (10) */
  }
  if (derive_k2) {
    const double denom = (rs - p[R0]) * p2_of(rs, p);
    if (denom == 0.0)
      return tf_model_fail(err, "eq (11) is singular: (rstar - r0) p2(rstar) = 0 at rstar = %g",
                           rs);
    const double num =
        sin(g) * (b2 + rs * rs) * (m * rs * ws * ws - c2 * vs) -
        cos(g) * (c1 * rs * ws + c2 * d * rs * vs +
                  m * (rs * rs * (vs * (ws + w0) - d * ws * ws) + b2 * vs * (w0 - ws)));
    p[K2] = num / denom; /* eq (11) */
  }
  if (!(p[KAPPA] > 0))
    return tf_model_fail(
        err,
        "eq (10) gives kappa = %.6g <= 0 at rstar = %g: no tyre model has a two-fold "
        "there (condition (g) of Fig. 4, kappa > 0, fails)",
        p[KAPPA], rs);
  if (!(p[K2] > 0))
    return tf_model_fail(
        err,
        "eq (11) gives k2 = %.6g <= 0 at (rstar, omegastar) = (%g, %g): the spring "
        "would have to push (condition (g) of Fig. 4, k2 > 0, fails)",
        p[K2], rs, ws);
  return 0;
}

/* sin and cos of the contact angle gamma and arccot(6 kappa): functions of the parameters
 * alone, yet libm's sincos and atan of them were a fifth of an ensemble's instructions when
 * every evaluation took its own.  Each is remembered for the last parameter value it was
 * asked for (per thread), so any parameter array gives the same bits as direct calls. */
typedef struct contact {
  double s, c;
} contact;
static contact contact_at(double gamma) {
  static _Thread_local double last = NAN;
  static _Thread_local contact k;
  if (!(gamma == last)) last = gamma, k = (contact){sin(gamma), cos(gamma)};
  return k;
}
static contact contact_of(const double *p) {
  return contact_at(p[GAMMA]);
}

static double arccot_6kappa_at(double kappa) { /* kappa > 0 */
  static _Thread_local double last = NAN, value;
  if (!(kappa == last)) last = kappa, value = atan(1.0 / (6 * kappa));
  return value;
}
static double arccot_6kappa(const double *p) {
  return arccot_6kappa_at(p[KAPPA]);
}

/* eqs (4) and (5) at (r, v, omega) = (r, v, w); of a state x */
static inline double sideways_slip_of(double r, double v, double w, const double *p, size_t n,
                                      contact k) {
  const double dw = w - P(OMEGA0);
  return -(v - P(D) * dw) * k.s - r * dw * k.c;
}
static inline double rolling_speed_of(double r, double v, double w, const double *p, size_t n,
                                      contact k) {
  const double dw = w - P(OMEGA0);
  return -(v - P(D) * dw) * k.c + r * dw * k.s;
}
static double sideways_slip(const double *x, const double *p, contact k) {
  return sideways_slip_of(x[0], x[1], x[2], p, 1, k);
}
static double rolling_speed_at(const double *x, const double *p, contact k) {
  return rolling_speed_of(x[0], x[1], x[2], p, 1, k);
}

static double switching(const double *x, const double *p, double *grad) {
  const contact k = contact_of(p);
  if (grad) {
    const double dw = x[2] - p[OMEGA0];
    grad[0] = -dw * k.c;
    grad[1] = -k.s;
    grad[2] = p[D] * k.s - x[0] * k.c;
  }
  return sideways_slip(x, p, k);
}

static double rolling_speed(const double *x, const double *p, double *grad) {
  const contact k = contact_of(p);
  if (grad) {
    const double dw = x[2] - p[OMEGA0];
    grad[0] = dw * k.s;
    grad[1] = -k.c;
    grad[2] = p[D] * k.c + x[0] * k.s;
  }
  return rolling_speed_at(x, p, k);
}

/* sign(x) as (x > 0) - (x < 0) gives it (+0 at 0 and for NaN), as a difference of two masks:
 * gcc vectorises it for every target (a nested choice only for AVX-512) */
static inline double sign_of(double x) {
  return (x > 0 ? 1.0 : 0.0) - (x < 0 ? 1.0 : 0.0);
}

/* eqs (1)-(3) for given friction force F and moment M at (r, v, omega) = (r, v, w) */
static inline void field_of(double r, double v, double w, const double *p, size_t n, contact k,
                            double force, double moment, double *dx) {
  const double b2 = P(BETA) * P(BETA);
  const double p1 = P(K2) * (P(R0) - r) - P(C2) * v + P(M) * r * w * w;
  const double coupling = P(C1) + 2 * P(M) * r * v;
  dx[0] = P(M) * (b2 + r * r) * v;
  dx[1] = (b2 + P(D) * P(D) + r * r) * p1 - P(D) * coupling * w +
          force * p2_with(r, p, n, k.s, k.c) + P(D) * moment;
  dx[2] = P(D) * p1 - coupling * w + force * r * k.c + moment;
}
static void field(const double *x, const double *p, contact k, double force, double moment,
                  double *dx) {
  field_of(x[0], x[1], x[2], p, 1, k, force, moment, dx);
}

/* The state-dependent transcendental functions of the fields, atan2 of the slip angle and sin
 * and cos of the tyre angle, over n values: libm's (model.field_math: exact) or
 * twofold/fast_math.h's (fast: vectorised, the same bits for every n).  Every field below takes
 * `fast` as a constant and is compiled twice, once for each table of operations. */
TF_FAST_INLINE void slip_angles(int n, const double *habs, const double *gabs, double *angle,
                                bool fast) {
  if (fast)
    tf_fast_atan2_array(n, habs, gabs, angle);
  else
    for (int i = 0; i < n; i++) angle[i] = atan2(habs[i], gabs[i]);
}
TF_FAST_INLINE void sines_cosines(int n, const double *psi, double *sine, double *cosine,
                                  bool fast) {
  if (fast)
    tf_fast_sincos_array(n, psi, sine, cosine);
  else
    for (int i = 0; i < n; i++) sine[i] = sin(psi[i]), cosine[i] = cos(psi[i]);
}

/* The tyre angle psi = a6k + spread angle of eqs (6)-(7), angle = atan2(|h|, |g|) and
 * spread = |1 - 2 a6k / pi| (a6k = arccot 6 kappa) */
static inline double tyre_psi(double a6k, double angle) {
  return a6k + fabs(1 - 2 / M_PI * a6k) * angle;
}

/* psi at slip speeds a = |h|, b = |g|, its sine and cot, in either math.  One value: the fast
 * functions' forms with branches (the same values as the arrays'). */
static void tyre_angle_one(double a, double b, double a6k, bool fast, double *psi, double *sine,
                           double *cot) {
  const double angle = fast ? tf_fast_atan2(a, b) : atan2(a, b);
  *psi = tyre_psi(a6k, angle);
  double cosine;
  if (fast)
    tf_fast_sincos(*psi, sine, &cosine);
  else
    *sine = sin(*psi), cosine = cos(*psi);
  *cot = cosine / *sine;
}

/* A slip field past Sigma (side h < 0) is met only inside a step that crosses Sigma, whose
 * stages run on into the other side before the crossing is located.  The tyre law's cot psi
 * there is C(|h|, |g|), with a kink at h = 0 that makes the error estimate of every such step
 * large (rejected steps).  Under continuation 1 a field of one side is continued past Sigma by
 * E = 3 C(0) - 3 C(|h|) + C(2 |h|) (C(0) = cot a6k for every g): its value and first two
 * derivatives in h meet the law's at h = 0, and it stays within the law's bounds times
 * constants (no pole, as the odd continuation atan2(side h, |g|) has where 6 kappa > 1).
 * `extend` is the lane's continuation parameter (0 or 1). */
static inline bool past_sigma(double extend, double side, double h) {
  return extend != 0 && side * h < 0;
}
static inline double continued_cot(double cot0, double cot, double cot2) {
  return 3 * cot0 - 3 * cot + cot2;
}

/* cot a6k in either math: C(0), remembered for the last kappa (per thread and math) */
static double cot_a6k_at(double kappa, bool fast) {
  static _Thread_local double last[2] = {NAN, NAN}, value[2];
  if (!(kappa == last[fast])) {
    double psi, sine;
    last[fast] = kappa,
    tyre_angle_one(0, 1, arccot_6kappa_at(kappa), fast, &psi, &sine, &value[fast]);
  }
  return value[fast];
}

/* The tyre angle at a state: the same for both slip sides, and a smoothed or Filippov field
 * asks for both sides (and their Jacobians) at one state in a row, so the last state's values
 * are remembered (per thread and per kind of math; same bits as computing them afresh).  Under
 * continuation 1 a field asked for past Sigma also needs the angle at (2 |h|, |g|) and C(0):
 * computed then (`past`), and remembered with the rest. */
typedef struct tyre_angle {
  double h, g, psi, sin_psi, cot_psi;
  double extend, cot0, sin_psi2, cot_psi2; /* continuation; the rest only where has2 */
  bool has2;
} tyre_angle;
static tyre_angle tyre_angle_of(const double *x, const double *p, contact k, bool fast) {
  tyre_angle a = {.extend = p[CONTINUATION]};
  a.h = sideways_slip(x, p, k), a.g = rolling_speed_at(x, p, k);
  tyre_angle_one(fabs(a.h), fabs(a.g), arccot_6kappa(p), fast, &a.psi, &a.sin_psi, &a.cot_psi);
  return a;
}

static tyre_angle tyre_angle_at(const double *x, int side, const double *p, contact k, bool fast) {
  /* the key: the state and every parameter h, g and psi depend on */
  enum { KEYS = 8 };
  static _Thread_local double key[2][KEYS] = {{NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN},
                                              {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}};
  static _Thread_local tyre_angle a[2];
  const double now[KEYS] = {x[0], x[1], x[2], p[D], p[OMEGA0], p[GAMMA], p[KAPPA], p[CONTINUATION]};
  bool same = true;
  for (int i = 0; i < KEYS; i++) same = same && now[i] == key[fast][i];
  if (!same) {
    a[fast] = tyre_angle_of(x, p, k, fast);
    for (int i = 0; i < KEYS; i++) key[fast][i] = now[i];
  }
  tyre_angle *t = &a[fast];
  if (!t->has2 && past_sigma(t->extend, side, t->h)) {
    double psi2;
    tyre_angle_one(2 * fabs(t->h), fabs(t->g), arccot_6kappa(p), fast, &psi2, &t->sin_psi2,
                   &t->cot_psi2);
    t->cot0 = cot_a6k_at(p[KAPPA], fast), t->has2 = true;
  }
  return *t;
}

/* cot psi for the slip field of `side` at the tyre angle a */
static inline double side_cot(const tyre_angle *a, double side) {
  return past_sigma(a->extend, side, a->h) ? continued_cot(a->cot0, a->cot_psi, a->cot_psi2)
                                           : a->cot_psi;
}

/* eqs (6)-(7) with sign(h) = side, continued onto h = 0, at (r, v, w) with rolling speed g
 * and tyre angle cot psi; at the tyre angle a of x */
static inline void slip_of(double r, double v, double w, double side, double g, double cot_psi,
                           const double *p, size_t n, contact k, double *dx) {
  const double force = side * P(MU) * (4.0 / 3.0 - cot_psi / (18 * P(KAPPA)));
  const double sign_g = sign_of(g);
  const double moment = sign_g * side * P(MU) / 6 * cot_psi;
  field_of(r, v, w, p, n, k, force, moment, dx);
}
static void slip_at(const double *x, int side, const double *p, contact k, tyre_angle a,
                    double *dx) {
  slip_of(x[0], x[1], x[2], side, a.g, side_cot(&a, side), p, 1, k, dx);
}

static inline int slip_with(const double *x, int side, const double *p, double *dx, bool fast) {
  const contact k = contact_of(p);
  slip_at(x, side, p, k, tyre_angle_at(x, side, p, k, fast), dx);
  return 0;
}
static int slip(double t, const double *x, int side, const double *p, double *dx) {
  (void)t;
  return slip_with(x, side, p, dx, false);
}
static int slip_fast(double t, const double *x, int side, const double *p, double *dx) {
  (void)t;
  return slip_with(x, side, p, dx, true);
}

enum { NPARAMS = CONTINUATION + 1 };

/* The contact's sin and cos and arccot(6 kappa) of every lane: computed once where the lanes
 * share gamma and kappa (as an ensemble's members do), else lane by lane. */
TF_FAST_INLINE void contacts(int lanes, const double *restrict p, double *restrict s,
                             double *restrict c, double *restrict a6k) {
  const double *gamma = p + GAMMA * lanes, *kappa = p + KAPPA * lanes;
  int differ = 0;
  for (int l = 0; l < lanes; l++) differ |= (gamma[l] != gamma[0]) | (kappa[l] != kappa[0]);
  const contact k0 = contact_at(gamma[0]);
  const double a0 = arccot_6kappa_at(kappa[0]);
  for (int l = 0; l < lanes; l++) s[l] = k0.s, c[l] = k0.c, a6k[l] = a0;
  for (int l = 0; differ && l < lanes; l++) {
    const contact k = contact_at(gamma[l]);
    s[l] = k.s, c[l] = k.c, a6k[l] = arccot_6kappa_at(kappa[l]);
  }
}

/* The lanes whose side lies past Sigma under continuation 1 (side[l] != 0, not asked for
 * otherwise) get their cot continued, packed: their angles at (2 |h|, |g|) in one call (the
 * fast functions' bits do not depend on the packing), as slip does one by one. */
TF_FAST_INLINE void continue_lanes(int lanes, const double *h, const double *habs,
                                   const double *gabs, const double *side, const double *extend,
                                   const double *kappa, const double *a6k, double *cot, bool fast) {
  enum { W = TF_LANES_MAX };
  int past[W], m = 0;
  for (int l = 0; l < lanes; l++)
    if (side[l] != 0 && past_sigma(extend[l], side[l], h[l])) past[m++] = l;
  if (m == 0) return;
  double a2[W], b[W], angle[W], psi[W], sine[W], cosine[W];
  for (int i = 0; i < m; i++) a2[i] = 2 * habs[past[i]], b[i] = gabs[past[i]];
  slip_angles(m, a2, b, angle, fast);
  for (int i = 0; i < m; i++) psi[i] = tyre_psi(a6k[past[i]], angle[i]);
  sines_cosines(m, psi, sine, cosine, fast);
  for (int i = 0; i < m; i++) {
    const int l = past[i];
    cot[l] = continued_cot(cot_a6k_at(kappa[l], fast), cot[l], cosine[i] / sine[i]);
  }
}

/* slip lane by lane (model.h, slip_lanes), with the same operations as slip and its tyre angle
 * computed afresh (the cache serves a field asked twice at one state, which lanes never are).
 * In phases over all lanes, structure of arrays: loops of plain arithmetic that the compiler
 * vectorises, and between them the transcendental functions (fast_math.h's in one vector loop
 * over all lanes, or libm's for the lanes asked for, side not 0, one after another and
 * independent, so the core overlaps them).  The lanes not asked for get values nobody reads. */
TF_FAST_INLINE void slip_lanes_with(int lanes, const double *restrict x, const double *restrict p,
                                    double *restrict dx, int *restrict code, bool fast) {
  enum { W = TF_LANES_MAX };
  const size_t n = (size_t)lanes;
  const double *restrict r = x, *restrict v = x + lanes, *restrict w = x + 2 * lanes;
  const double *restrict side = p + NPARAMS * lanes;
  double ks[W], kc[W], a6k[W], h[W], g[W], habs[W], gabs[W], angle[W], psi[W], sine[W], cosine[W],
      cot[W];
  contacts(lanes, p, ks, kc, a6k);
  for (int l = 0; l < lanes; l++) {
    const contact k = {ks[l], kc[l]};
    h[l] = sideways_slip_of(r[l], v[l], w[l], p + l, n, k);
    habs[l] = fabs(h[l]);
    g[l] = rolling_speed_of(r[l], v[l], w[l], p + l, n, k);
    gabs[l] = fabs(g[l]);
  }
  if (fast)
    slip_angles(lanes, habs, gabs, angle, true);
  else
    for (int l = 0; l < lanes; l++) angle[l] = side[l] != 0 ? atan2(habs[l], gabs[l]) : 0.0;
  for (int l = 0; l < lanes; l++) psi[l] = tyre_psi(a6k[l], angle[l]);
  if (fast)
    sines_cosines(lanes, psi, sine, cosine, true);
  else
    for (int l = 0; l < lanes; l++)
      sine[l] = side[l] != 0 ? sin(psi[l]) : 1.0, cosine[l] = side[l] != 0 ? cos(psi[l]) : 0.0;
  for (int l = 0; l < lanes; l++) cot[l] = cosine[l] / sine[l];
  continue_lanes(lanes, h, habs, gabs, side, p + CONTINUATION * lanes, p + KAPPA * lanes, a6k, cot,
                 fast);
  double out[3 * W]; /* dx in full afterwards: stores to it could alias p, as far as gcc knows */
  for (int l = 0; l < lanes; l++) {
    double d[3];
    slip_of(r[l], v[l], w[l], side[l], g[l], cot[l], p + l, n, (contact){ks[l], kc[l]}, d);
    out[l] = d[0], out[lanes + l] = d[1], out[2 * lanes + l] = d[2];
  }
  memcpy(dx, out, 3 * n * sizeof *dx);
  memset(code, 0, n * sizeof *code);
}
TF_FAST_LANES static void slip_lanes(int lanes, const double *t, const double *x, const double *p,
                                     double *dx, int *code) {
  (void)t;
  slip_lanes_with(lanes, x, p, dx, code, false);
}
TF_FAST_LANES static void slip_lanes_fast(int lanes, const double *t, const double *x,
                                          const double *p, double *dx, int *code) {
  (void)t;
  slip_lanes_with(lanes, x, p, dx, code, true);
}

/* d(slip)/dx: the chain rule through h and g, then through psi, F and M.  At full stick
 * (h = g = 0) psi has no derivative; the terms through psi are left out there.  Entry (i, j)
 * into jac[(3 i + j) ld]: ld 1 for one matrix, W for lanes' matrices (structure of arrays);
 * inlined, so that a loop over lanes vectorises it. */
static inline __attribute__((always_inline)) void slip_jacobian_at(const double *x, int side,
                                                                   const double *p, contact k,
                                                                   tyre_angle ta, double a6k,
                                                                   double *jac, int ld) {
  const double r = x[0], v = x[1], w = x[2], dw = w - p[OMEGA0], b2 = p[BETA] * p[BETA];
  const double h = ta.h, g = ta.g, sin_psi = ta.sin_psi, cot_psi = ta.cot_psi;
  const double spread = fabs(1 - 2 / M_PI * a6k);
  const double sign_h = sign_of(h), sign_g = sign_of(g);
  const double grad_h[3] = {-dw * k.c, -k.s, p[D] * k.s - r * k.c};
  const double grad_g[3] = {dw * k.s, -k.c, p[D] * k.c + r * k.s};
  const double rho2 = h * h + g * g;
  /* past Sigma under continuation 1: dE = -3 dC(|h|, |g|) + dC(2 |h|, |g|) */
  const bool past = past_sigma(ta.extend, side, h);
  const double weight2 = past ? 3 * spread / rho2 / (sin_psi * sin_psi) -
                                    2 * spread / (4 * h * h + g * g) / (ta.sin_psi2 * ta.sin_psi2)
                              : 0.0;
  double dcot[3];
  for (int j = 0; j < 3; j++) { /* chosen, not branched: 0 at full stick */
    const double term = fabs(g) * sign_h * grad_h[j] - fabs(h) * sign_g * grad_g[j];
    dcot[j] = past ? term * weight2 : rho2 > 0 ? -spread * term / rho2 / (sin_psi * sin_psi) : 0.0;
  }
  const double cot = past ? continued_cot(ta.cot0, cot_psi, ta.cot_psi2) : cot_psi;
  const double force = side * p[MU] * (4.0 / 3.0 - cot / (18 * p[KAPPA]));
  const double p1 = p[K2] * (p[R0] - r) - p[C2] * v + p[M] * r * w * w;
  const double coupling = p[C1] + 2 * p[M] * r * v;
  const double dp1[3] = {-p[K2] + p[M] * w * w, -p[C2], 2 * p[M] * r * w};
  const double dcoupling[3] = {2 * p[M] * v, 2 * p[M] * r, 0};
  const double a = b2 + p[D] * p[D] + r * r, p2 = p2_with(r, p, 1, k.s, k.c);
  const double dp2_dr = p[D] * k.c + 2 * r * k.s;
  for (int j = 0; j < 3; j++) {
    const double dforce = -side * p[MU] / (18 * p[KAPPA]) * dcot[j];
    const double dmoment = sign_g * side * p[MU] / 6 * dcot[j];
    const double dr = j == 0, dwj = j == 2;
    jac[(0 * 3 + j) * ld] = p[M] * (j == 0 ? 2 * r * v : j == 1 ? b2 + r * r : 0.0);
    jac[(1 * 3 + j) * ld] = 2 * r * dr * p1 + a * dp1[j] -
                            p[D] * (dcoupling[j] * w + coupling * dwj) + dforce * p2 +
                            force * dp2_dr * dr + p[D] * dmoment;
    jac[(2 * 3 + j) * ld] = p[D] * dp1[j] - (dcoupling[j] * w + coupling * dwj) + dforce * r * k.c +
                            force * k.c * dr + dmoment;
  }
}

static inline void slip_jacobian_with(const double *x, int side, const double *p, double *jac,
                                      bool fast) {
  const contact k = contact_of(p);
  slip_jacobian_at(x, side, p, k, tyre_angle_at(x, side, p, k, fast), arccot_6kappa(p), jac, 1);
}
static void slip_jacobian(double t, const double *x, int side, const double *p, double *jac) {
  (void)t;
  slip_jacobian_with(x, side, p, jac, false);
}
static void slip_jacobian_fast(double t, const double *x, int side, const double *p, double *jac) {
  (void)t;
  slip_jacobian_with(x, side, p, jac, true);
}

/* The tyre angle psi = a6k + spread atan2(|h|, |g|) and its sine and cosine over n lanes.  Each
 * lane's last values are remembered (per thread and per kind of math) and taken again where its
 * |h| and |g| and a6k are bitwise those of the last call (the same bits as computing them
 * afresh): a Rosenbrock step's Jacobian is taken at the state where the step before evaluated
 * the field last (first same as last), and so does not compute a seventh of a RODAS4 step's
 * transcendental functions again.  The others are computed together, packed (libm's one after
 * another, or fast_math.h's in one vector loop, whose bits do not depend on the packing). */
typedef struct tyre_angles {
  uint64_t habs[TF_LANES_MAX], gabs[TF_LANES_MAX], a6k[TF_LANES_MAX];
  double psi[TF_LANES_MAX], sine[TF_LANES_MAX], cosine[TF_LANES_MAX];
} tyre_angles;
static uint64_t bits_of(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}
TF_FAST_INLINE const tyre_angles *tyre_angles_lanes(int slot, int n, const double *habs,
                                                    const double *gabs, double a6k, double spread,
                                                    bool fast) {
  enum { W = TF_LANES_MAX };
  static _Thread_local tyre_angles memo[2][2]; /* [fast][slot]: slot 1 for (2 |h|, |g|) */
  static _Thread_local bool ready[2][2];
  tyre_angles *a = &memo[fast][slot];
  if (!ready[fast][slot]) /* keys no a6k has: ~0 is a NaN */
    for (int l = 0; l < W; l++) a->a6k[l] = ~0ULL, ready[fast][slot] = true;
  double ha[W], ga[W], angle[W], pm[W], sm[W], cm[W];
  int miss[W], m = 0;
  const uint64_t a6k_bits = bits_of(a6k);
  for (int l = 0; l < n; l++)
    if (a6k_bits != a->a6k[l] || bits_of(habs[l]) != a->habs[l] || bits_of(gabs[l]) != a->gabs[l])
      miss[m] = l, ha[m] = habs[l], ga[m] = gabs[l], m++;
  slip_angles(m, ha, ga, angle, fast);
  for (int i = 0; i < m; i++) pm[i] = a6k + spread * angle[i];
  sines_cosines(m, pm, sm, cm, fast);
  for (int i = 0; i < m; i++) {
    const int l = miss[i];
    a->habs[l] = bits_of(ha[i]), a->gabs[l] = bits_of(ga[i]), a->a6k[l] = a6k_bits;
    a->psi[l] = pm[i], a->sine[l] = sm[i], a->cosine[l] = cm[i];
  }
  return a;
}

/* Both slip sides' Jacobians over the lanes (entry (i, j) of lane l at [(3 i + j) lanes + l])
 * at their tyre angles: into locals with a constant row length ld >= lanes, which nothing else
 * can point to (the loop vectorises), then copied out, at once where ld is lanes. */
typedef struct tyre_angle_lanes {
  const double *h, *g, *psi, *sine, *cot;
  double extend, cot0;        /* continuation and C(0) */
  const double *sine2, *cot2; /* at (2 |h|, |g|), where extend != 0 */
} tyre_angle_lanes;
TF_FAST_INLINE void slip_jacobians_lanes(int lanes, const int ld, const double *r, const double *v,
                                         const double *w, const double *p, contact k, double a6k,
                                         const tyre_angle_lanes *at, double *restrict jup,
                                         double *restrict jdown) {
  double ju[9 * TF_LANES_MAX], jd[9 * TF_LANES_MAX];
  for (int l = 0; l < lanes; l++) {
    const double xl[3] = {r[l], v[l], w[l]};
    tyre_angle a = {at->h[l], at->g[l], at->psi[l], at->sine[l], at->cot[l], .extend = at->extend};
    if (at->extend != 0) a.cot0 = at->cot0, a.sin_psi2 = at->sine2[l], a.cot_psi2 = at->cot2[l];
    slip_jacobian_at(xl, +1, p, k, a, a6k, ju + l, ld);
    slip_jacobian_at(xl, -1, p, k, a, a6k, jd + l, ld);
  }
  if (lanes == ld) {
    memcpy(jup, ju, 9 * (size_t)ld * sizeof *ju), memcpy(jdown, jd, 9 * (size_t)ld * sizeof *jd);
    return;
  }
  for (int i = 0; i < 9; i++)
    for (int l = 0; l < lanes; l++)
      jup[i * lanes + l] = ju[i * ld + l], jdown[i * lanes + l] = jd[i * ld + l];
}

/* The switching function and both slip sides (and their Jacobians) lane by lane for the
 * smoothed field (model.h, slip_sides_lanes), with switching's, slip's and slip_jacobian's
 * operations: each lane's tyre angle once
 * for all four, in phases over the lanes (structure of arrays): libm's calls of all lanes one
 * after another between loops of plain arithmetic that the compiler vectorises. */
TF_FAST_INLINE void slip_sides_lanes_with(int lanes, const double *restrict x,
                                          const double *restrict param, double *restrict h,
                                          double *restrict up, double *restrict down,
                                          double *restrict jup, double *restrict jdown,
                                          int *restrict code, bool fast) {
  enum { W = TF_LANES_MAX };
  /* the parameters copied: stores to the outputs cannot change them, so the loops vectorise */
  double p[NPARAMS];
  memcpy(p, param, sizeof p);
  const contact k = contact_of(p);
  const double a6k = arccot_6kappa(p), spread = fabs(1 - 2 / M_PI * a6k);
  const double *restrict r = x, *restrict v = x + lanes, *restrict w = x + 2 * lanes;
  double g[W], habs[W], gabs[W], cot[W], cot2[W], cot_up[W], cot_down[W];
  double hl[W], ul[3 * W], dl[3 * W]; /* h, up and down in full afterwards (slip_lanes_with) */
  for (int l = 0; l < lanes; l++) {
    hl[l] = sideways_slip_of(r[l], v[l], w[l], p, 1, k);
    g[l] = rolling_speed_of(r[l], v[l], w[l], p, 1, k);
    habs[l] = fabs(hl[l]), gabs[l] = fabs(g[l]);
  }
  const tyre_angles *angles = tyre_angles_lanes(0, lanes, habs, gabs, a6k, spread, fast);
  const double *psi = angles->psi, *sine = angles->sine, *cosine = angles->cosine;
  for (int l = 0; l < lanes; l++) cot[l] = cot_up[l] = cot_down[l] = cosine[l] / sine[l];
  /* under continuation 1 the side past Sigma at (2 |h|, |g|): every lane off Sigma has one */
  const double extend = p[CONTINUATION], cot0 = extend != 0 ? cot_a6k_at(p[KAPPA], fast) : 0.0;
  const tyre_angles *angles2 = NULL;
  if (extend != 0) {
    double h2[W];
    for (int l = 0; l < lanes; l++) h2[l] = 2 * habs[l];
    angles2 = tyre_angles_lanes(1, lanes, h2, gabs, a6k, spread, fast);
    for (int l = 0; l < lanes; l++) {
      cot2[l] = angles2->cosine[l] / angles2->sine[l];
      const double continued = continued_cot(cot0, cot[l], cot2[l]);
      if (past_sigma(extend, +1, hl[l])) cot_up[l] = continued;
      if (past_sigma(extend, -1, hl[l])) cot_down[l] = continued;
    }
  }
  for (int l = 0; l < lanes; l++) {
    double d[2][3];
    slip_of(r[l], v[l], w[l], +1, g[l], cot_up[l], p, 1, k, d[0]);
    slip_of(r[l], v[l], w[l], -1, g[l], cot_down[l], p, 1, k, d[1]);
    ul[l] = d[0][0], ul[lanes + l] = d[0][1], ul[2 * lanes + l] = d[0][2];
    dl[l] = d[1][0], dl[lanes + l] = d[1][1], dl[2 * lanes + l] = d[1][2];
  }
  const size_t n = (size_t)lanes;
  memcpy(h, hl, n * sizeof *h);
  memcpy(up, ul, 3 * n * sizeof *up);
  memcpy(down, dl, 3 * n * sizeof *down);
  memset(code, 0, n * sizeof *code);
  if (!jup) return;
  const tyre_angle_lanes at = {
      hl, g, psi, sine, cot, extend, cot0, angles2 ? angles2->sine : NULL, angles2 ? cot2 : NULL};
  if (lanes <= 8)
    slip_jacobians_lanes(lanes, 8, r, v, w, p, k, a6k, &at, jup, jdown);
  else
    slip_jacobians_lanes(lanes, W, r, v, w, p, k, a6k, &at, jup, jdown);
}
TF_FAST_LANES static void slip_sides_lanes(int lanes, const double *t, const double *restrict x,
                                           const double *restrict p, double *restrict h,
                                           double *restrict up, double *restrict down,
                                           double *restrict jup, double *restrict jdown,
                                           int *restrict code) {
  (void)t;
  slip_sides_lanes_with(lanes, x, p, h, up, down, jup, jdown, code, false);
}
TF_FAST_LANES static void slip_sides_lanes_fast(int lanes, const double *t,
                                                const double *restrict x, const double *restrict p,
                                                double *restrict h, double *restrict up,
                                                double *restrict down, double *restrict jup,
                                                double *restrict jdown, int *restrict code) {
  (void)t;
  slip_sides_lanes_with(lanes, x, p, h, up, down, jup, jdown, code, true);
}

/* On Sigma the paper ties M = kappa F (section IV).  The slip limits are
 * F -> ±mu, M -> ±sign(g) mu kappa (eqs 6-7), so the sticking moment that joins them
 * continuously is M = sign(g) kappa F: the paper's relation wherever g > 0, which holds
 * around its two-fold.  With sign(g) (signed_moment = 1, the default) the fields on Sigma
 * agree with the slip limits also where the wheel rolls backwards (g < 0), which
 * trajectories of Fig. 5 visit; without it they chatter there.  signed_moment = 0
 * reproduces the printed relation, which the paper's Fig. 4 conditions assume everywhere. */
static int stick_side(double t, const double *x, double lambda, int side, const double *p,
                      double *dx) {
  (void)t;
  const double sign_g = p[SIGNED_MOMENT] == 0.0 ? 1.0 : side;
  field(x, p, contact_of(p), p[MU] * lambda, sign_g * p[KAPPA] * p[MU] * lambda, dx);
  return 0;
}

static int stick(double t, const double *x, double lambda, const double *p, double *dx) {
  const double g = rolling_speed_at(x, p, contact_of(p));
  return stick_side(t, x, lambda, (g > 0) - (g < 0), p, dx);
}

static bool continued(const double *p) {
  return p[CONTINUATION] != 0;
}

static int twofold_guess(const double *p, double *x) {
  x[0] = p[RSTAR];
  x[1] = vstar_of(p);
  x[2] = p[OMEGASTAR];
  return 0;
}

/* the table of operations of either math: WHEEL_OPS() libm's, WHEEL_OPS(_fast) the fast one */
#define WHEEL_OPS(suffix)                                                               \
  {                                                                                     \
    TF_OPS_SIZE(tf_filippov_ops),                                                       \
        .switching = switching, .slip = slip##suffix, .stick = stick,                   \
        .slip_jacobian = slip_jacobian##suffix, .secondary_switching = rolling_speed,   \
        .stick_side = stick_side, .twofold_guess = twofold_guess,                       \
        .slip_lanes = slip_lanes##suffix, .slip_sides_lanes = slip_sides_lanes##suffix, \
        .continued = continued,                                                         \
  }
static const tf_filippov_ops ops = WHEEL_OPS(), ops_fast = WHEEL_OPS(_fast);

#define WHEEL_DEF(table, fast_variant)                                                       \
  {                                                                                          \
    TF_MODEL_HEAD,                                                                           \
        .name = "wheel",                                                                     \
        .doc = "wheel on a turntable with Coulomb tyre friction (Szalai & Jeffrey 2014)",    \
        .kind = TF_MODEL_FILIPPOV, .dim = 3, .state_names = state_names, .initial = initial, \
        .nparams = sizeof params / sizeof params[0], .params = params, .prepare = prepare,   \
        .filippov = table, .autonomous = true, .fast_math = fast_variant,                    \
  }
/* model.field_math: fast (twofold/model.h, fast_math): atan2, sin and cos of the tyre
 * angle from twofold/fast_math.h */
static const tf_model_def wheel_fast = WHEEL_DEF(&ops_fast, NULL);
const tf_model_def tf_kernel_wheel = WHEEL_DEF(&ops, &wheel_fast);
