/* dual_contact.c — see dual_contact.h.  The step loop (events on the dense output, landing,
 * Zeno bound) is event_loop.c's; this file gives it the cases' fields, event functions and
 * transitions.  The two discontinuity sets are seen through tf_codim2_sys views so that
 * codim2.c's analysis (limit directions, Theorem 2.17) serves both. */
#include "dual_contact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_loop.h"
#include "status.h"

enum { MAX_EVENT_FUNCTIONS = 3, RR_GRID = 36 };
static const double RR_EDGE = 1e-7; /* closest approach of the grid to sin phi = 0 */

struct tf_dual {
  const tf_kernel *k;
  const double *p;
  size_t n;
  int ip, im, ia; /* state indices of u1+, u1-, u_a */
  tf_evolve2_options opt;
  tf_event_loop *loop;
  tf_dc_case mode;
  double dref_p[2], dref_m[2]; /* slip direction references of the two contacts */
  int sgn;                     /* sign of u1 at the slipping contact in SR / RS */
  bool sliding_failed;
  /* the first refusal of the field outside the stepper's stages (a classification, a
   * departure, an event function): both views' refusal points here; it ends the run as the
   * model's failure */
  int refused;
  /* quasi-steady slipping at both contacts (see project_quasi_steady) */
  bool qs;
  double qs_a, qs_b;        /* slip angles of P+ and P- after the last step */
  long qs_wait, qs_backoff; /* steps until the next test for slaving, and the next wait */
  bool rr_armed; /* SS: the slips have been above sigma_tol (an arrival at Sigma_RR can follow) */
  tf_codim2_sys view_sr, view_rs; /* Sigma_SR and Sigma_RS of F_SS */
  tf_dc_event_fn on_event;
  tf_dc_step_fn on_step;
  void *ctx;
  tf_dual_result *res; /* of the run in progress */
};

const char *tf_dc_case_name(tf_dc_case c) {
  static const char *const names[] = {"SS", "SR", "RS", "RR"};
  return (unsigned)c < TF_DC_CASE_COUNT ? names[c] : "?";
}

const char *tf_dc_event_kind_name(tf_dc_event_kind k) {
  static const char *const names[] = {"to_SS", "to_SR", "to_RS", "to_RR", "crossing"};
  return (unsigned)k < TF_DC_EVENT_KIND_COUNT ? names[k] : "?";
}

/* --- the two views of F_SS -------------------------------------------------------------- */

static void sigma_sr(const double *x, void *ctx, double *h, double *grad) {
  const tf_dual *d = ctx;
  h[0] = x[d->im], h[1] = x[d->ia];
  if (!grad) return;
  memset(grad, 0, 2 * d->n * sizeof *grad);
  grad[d->im] = 1.0, grad[d->n + (size_t)d->ia] = 1.0;
}

static void sigma_rs(const double *x, void *ctx, double *h, double *grad) {
  const tf_dual *d = ctx;
  h[0] = x[d->ip], h[1] = x[d->ia];
  if (!grad) return;
  memset(grad, 0, 2 * d->n * sizeof *grad);
  grad[d->ip] = 1.0, grad[d->n + (size_t)d->ia] = 1.0;
}

/* On Sigma_SR the other contact slips along u1+ only: d+ = (sgn u1+, 0) (4.37). */
static int field_sr(double t, const double *x, const double *dir, void *ctx, double *dx) {
  const tf_dual *d = ctx;
  const double dp[2] = {(double)d->sgn, 0.0};
  return d->k->two_contact->field_dual(t, x, dp, dir, d->p, dx);
}

static int field_rs(double t, const double *x, const double *dir, void *ctx, double *dx) {
  const tf_dual *d = ctx;
  const double dm[2] = {(double)d->sgn, 0.0};
  return d->k->two_contact->field_dual(t, x, dir, dm, d->p, dx);
}

/* field_dual where the engine analyses rather than steps: a refusal writes NaN and is kept
 * where the views keep theirs (d->refused, through a const engine). */
static void analysed_field(const tf_dual *d, double t, const double *x, const double *dp,
                           const double *dm, double *f) {
  const int rc = d->k->two_contact->field_dual(t, x, dp, dm, d->p, f);
  if (!rc) return;
  tf_model_code_keep(d->view_sr.refusal, rc);
  for (size_t i = 0; i < d->n; i++) f[i] = NAN;
}

/* The sliding vector on Sigma_SR (or RS) with the slipping contact's sign s. */
static int sliding_with_sign(tf_dual *d, const tf_codim2_sys *view, int s, double t,
                             const double *x, double *out) {
  const int keep = d->sgn;
  d->sgn = s;
  tf_codim2_sliding sv;
  const int rc = tf_codim2_sliding_vector(view, t, x, &sv);
  d->sgn = keep;
  memcpy(out, sv.Fs, d->n * sizeof *out);
  return rc;
}

/* --- slip directions in SS ------------------------------------------------------------------ */

static void set_dir(double *dir, double phi) {
  dir[0] = cos(phi), dir[1] = sin(phi);
}

static bool newton_double(const tf_dual *d, double t, const double *x, double rho,
                          const double *target, double *a, double *b, double *jac);

static double slaved_angle(const tf_codim2_sys *view, double t, const double *x, double phi) {
  for (int it = 0; it < 6; it++) {
    double v, vp, vm;
    const double dphi = 1e-6;
    tf_codim2_rv(view, t, x, phi, NULL, &v);
    tf_codim2_rv(view, t, x, phi + dphi, NULL, &vp);
    tf_codim2_rv(view, t, x, phi - dphi, NULL, &vm);
    const double slope = (vp - vm) / (2 * dphi);
    if (!(fabs(slope) > 1e-300)) break;
    const double step = v / slope;
    phi -= fmax(-0.2, fmin(0.2, step));
    if (fabs(step) < 1e-14) break;
  }
  return phi;
}

/* Direction of contact c (+1: P+, -1: P-) in SS: its slip vector, continued through the
 * discontinuity set with the reference orientation, slaved near it. */
static void contact_direction(tf_dual *d, int c, double t, const double *x, double *dir) {
  const double *ref = c > 0 ? d->dref_p : d->dref_m;
  const double h0 = x[c > 0 ? d->ip : d->im], h1 = x[d->ia];
  const double r = hypot(h0, h1);
  const double r_other = hypot(x[c > 0 ? d->im : d->ip], h1);
  if (r < d->opt.slave_radius && r_other < d->opt.slave_radius) {
    /* near Sigma_RR (and not quasi-steady) both directions are slaved to a limit direction of
     * (3.42) at the state as it is */
    double a = atan2(d->dref_p[1], d->dref_p[0]), b = atan2(d->dref_m[1], d->dref_m[0]);
    if (newton_double(d, t, x, -1.0, NULL, &a, &b, NULL) && sin(a) * sin(b) > 0) {
      set_dir(dir, c > 0 ? a : b);
      return;
    }
  }
  if (r < d->opt.slave_radius && r_other > d->opt.slave_radius) {
    const double other_u1 = x[c > 0 ? d->im : d->ip];
    const int keep = d->sgn;
    d->sgn = other_u1 >= 0 ? 1 : -1;
    const double phi = slaved_angle(c > 0 ? &d->view_rs : &d->view_sr, t, x, atan2(ref[1], ref[0]));
    d->sgn = keep;
    dir[0] = cos(phi), dir[1] = sin(phi);
    return;
  }
  if (r == 0.0) {
    dir[0] = ref[0], dir[1] = ref[1];
    return;
  }
  const double s = h0 * ref[0] + h1 * ref[1] < 0 ? -1.0 : 1.0;
  dir[0] = s * h0 / r, dir[1] = s * h1 / r;
}

/* --- RR: Filippov's combination of the SR (or RS) fields and the double discontinuity ---- */

static void rr_field(tf_dual *d, double t, const double *x, double *out, double *lp, double *lm) {
  double fp[TF_MAX_DIM], fm[TF_MAX_DIM];
  const int bad = sliding_with_sign(d, &d->view_sr, 1, t, x, fp) |
                  sliding_with_sign(d, &d->view_sr, -1, t, x, fm);
  if (bad) d->sliding_failed = true;
  *lp = fp[d->ip], *lm = fm[d->ip];
  const double denom = *lp - *lm;
  /* (2.10) with F1 = F_SR(+), n1 = e1+: alpha1 = <F2, n2>/(<F1, n1> + <F2, n2>) */
  const double a1 = denom != 0 ? -*lm / denom : 0.5, a2 = denom != 0 ? *lp / denom : 0.5;
  for (size_t i = 0; i < d->n; i++) out[i] = a1 * fp[i] + a2 * fm[i];
}

static void rs_tangencies(tf_dual *d, double t, const double *x, double *lp, double *lm) {
  double fp[TF_MAX_DIM], fm[TF_MAX_DIM];
  if (sliding_with_sign(d, &d->view_rs, 1, t, x, fp) |
      sliding_with_sign(d, &d->view_rs, -1, t, x, fm))
    d->sliding_failed = true;
  *lp = fp[d->im], *lm = fm[d->im];
}

typedef struct hat {
  double R, Vp, Vm;
} hat;

/* The state x with its slips (u1+, u1-, u_a) replaced by rho times the unit vector whose two
 * slip directions are (phi+, phi-), sgn sin phi+ = sgn sin phi- (rho < 0: x as it is);
 * returns that unit vector's norm factor, the direction normal (3.43) being nh / norm. */
static double on_ray_dirs(const tf_dual *d, const double *x, double rho, const double *dp,
                          const double *dm, double *xs, double *nh) {
  const double s = dp[1] > 0 ? 1.0 : -1.0;
  nh[0] = dp[0] / dp[1] * s, nh[1] = dm[0] / dm[1] * s, nh[2] = s;
  const double norm = sqrt(nh[0] * nh[0] + nh[1] * nh[1] + nh[2] * nh[2]);
  memcpy(xs, x, d->n * sizeof *xs);
  if (rho >= 0)
    xs[d->ip] = rho * nh[0] / norm, xs[d->im] = rho * nh[1] / norm, xs[d->ia] = rho * nh[2] / norm;
  return norm;
}

static double on_ray(const tf_dual *d, const double *x, double rho, double pp, double pm,
                     double *xs, double *nh) {
  const double dp[2] = {cos(pp), sin(pp)}, dm[2] = {cos(pm), sin(pm)};
  return on_ray_dirs(d, x, rho, dp, dm, xs, nh);
}

/* R^, V+^, V-^ of (3.43) at (phi+, phi-), sgn sin phi+ = sgn sin phi-, at the state whose slip
 * vector is rho along those directions (rho = 0: on Sigma_RR; rho < 0: x as it is). */
static hat double_limit(const tf_dual *d, double t, const double *x, double rho, double pp,
                        double pm) {
  const double dp[2] = {cos(pp), sin(pp)}, dm[2] = {cos(pm), sin(pm)};
  double f[TF_MAX_DIM], xs[TF_MAX_DIM], nh[3];
  const double norm = on_ray_dirs(d, x, rho, dp, dm, xs, nh);
  analysed_field(d, t, xs, dp, dm, f);
  hat h;
  h.R = (f[d->ip] * nh[0] + f[d->im] * nh[1] + f[d->ia] * nh[2]) / norm;
  h.Vp = -dp[1] * f[d->ip] + dp[0] * f[d->ia];
  h.Vm = -dm[1] * f[d->im] + dm[0] * f[d->ia];
  return h;
}

/* 2-D Newton on (V+^, V-^) = target (NULL: zero) from (*a, *b) at slip magnitude rho; true
 * if it converged.  The Jacobian d(V+^, V-^)/d(a, b), row-major, goes to jac if not NULL. */
static bool newton_double(const tf_dual *d, double t, const double *x, double rho,
                          const double *target, double *a, double *b, double *jac) {
  const double tp = target ? target[0] : 0.0, tm = target ? target[1] : 0.0;
  for (int it = 0; it < 30; it++) {
    const double e = 1e-7;
    const hat h0 = double_limit(d, t, x, rho, *a, *b), ha = double_limit(d, t, x, rho, *a + e, *b),
              hb = double_limit(d, t, x, rho, *a, *b + e);
    const double j11 = (ha.Vp - h0.Vp) / e, j12 = (hb.Vp - h0.Vp) / e;
    const double j21 = (ha.Vm - h0.Vm) / e, j22 = (hb.Vm - h0.Vm) / e;
    const double det = j11 * j22 - j12 * j21;
    if (!(fabs(det) > 1e-300)) return false;
    const double rp = h0.Vp - tp, rm = h0.Vm - tm;
    const double da = (rp * j22 - j12 * rm) / det, db = (j11 * rm - j21 * rp) / det;
    *a -= fmax(-0.1, fmin(0.1, da)), *b -= fmax(-0.1, fmin(0.1, db));
    if (jac) jac[0] = j11, jac[1] = j12, jac[2] = j21, jac[3] = j22;
    if (fabs(da) + fabs(db) < 1e-13) return true;
  }
  return false;
}

/* Zeros of (V+^, V-^) by a grid over each half (sin > 0, sin < 0) and 2-D Newton. */
static void rr_double(tf_dual *d, double t, const double *x, tf_dc_rr_point *out) {
  out->R_max = -INFINITY, out->directions = 0;
  double found[32][2];
  int nfound = 0;
  for (int half = 0; half < 2; half++) {
    const double base = half ? -M_PI : 0.0;
    hat grid[RR_GRID][RR_GRID];
    double ang[RR_GRID];
    /* the cells reach to within RR_EDGE of sin = 0: directions close to the plane u_a = 0
     * (a slip mostly along the u1 axes, e.g. a wheelset's symmetric slip 5.60) lie there */
    for (int i = 0; i < RR_GRID; i++)
      ang[i] = base + RR_EDGE + (M_PI - 2 * RR_EDGE) * i / (RR_GRID - 1);
    for (int i = 0; i < RR_GRID; i++)
      for (int j = 0; j < RR_GRID; j++) grid[i][j] = double_limit(d, t, x, 0.0, ang[i], ang[j]);
    for (int i = 0; i + 1 < RR_GRID; i++)
      for (int j = 0; j + 1 < RR_GRID; j++) {
        const hat c[4] = {grid[i][j], grid[i + 1][j], grid[i][j + 1], grid[i + 1][j + 1]};
        bool p1 = false, n1 = false, p2 = false, n2 = false;
        for (int q = 0; q < 4; q++)
          p1 |= c[q].Vp >= 0, n1 |= c[q].Vp <= 0, p2 |= c[q].Vm >= 0, n2 |= c[q].Vm <= 0;
        if (!(p1 && n1 && p2 && n2)) continue;
        double a = 0.5 * (ang[i] + ang[i + 1]), b = 0.5 * (ang[j] + ang[j + 1]);
        const bool ok = newton_double(d, t, x, 0.0, NULL, &a, &b, NULL);
        if (!ok || sin(a) * sin(b) <= 0 || fabs(sin(a)) < 1e-9 || fabs(sin(b)) < 1e-9) continue;
        bool dup = false;
        for (int q = 0; q < nfound; q++)
          dup |= fabs(remainder(found[q][0] - a, 2 * M_PI)) < 1e-7 &&
                 fabs(remainder(found[q][1] - b, 2 * M_PI)) < 1e-7;
        if (dup || nfound >= 32) continue;
        found[nfound][0] = a, found[nfound][1] = b, nfound++;
        const hat h = double_limit(d, t, x, 0.0, a, b);
        if (h.R > out->R_max) out->R_max = h.R, out->phi_plus = a, out->phi_minus = b;
      }
  }
  out->directions = nfound;
}

void tf_dual_rr_analysis(tf_dual *d, double t, const double *x, tf_dc_rr_point *out) {
  memset(out, 0, sizeof *out);
  rr_field(d, t, x, out->F_rr, &out->lp_sr, &out->lm_sr);
  rs_tangencies(d, t, x, &out->lp_rs, &out->lm_rs);
  rr_double(d, t, x, out);
}

/* --- quasi-steady slipping at both contacts ----------------------------------------------------
 * With both contacts slipping slowly (near Sigma_RR, or at a stationary X_SS with small
 * slips, such as just above the persistence bifurcation P3 of the flowmeter) each slip
 * direction relaxes at a rate |dV/dphi|/|u|, orders of magnitude faster than the rest of the
 * motion: an explicit integrator is held to steps of that time scale (10^6 steps for a few
 * hundred seconds).  There the directions are slaved: for the slip magnitude rho = |(u1+,
 * u1-, u_a)| and the other state values, (phi+, phi-) solve V+^ = V-^ = 0 with the field
 * evaluated at the state whose slips lie along them (the slow manifold at finite slip, not the
 * limit directions at rho = 0, whose error would be O(rho)).  While slaved, the integrated
 * slip vector only carries rho (it moves along its own direction at the rate R^ of the
 * manifold's field), and the state is its image on the manifold (manifold_state): the slow
 * motion (rho and the rest) is integrated under error control, and no projection between
 * steps distorts it.  Stationary states of the slaved motion are those of F_SS exactly; a
 * moving one differs by the directions' lag, tau times the rate of phi+ and phi- (tau the
 * relaxation time), so the slaving holds only while that lag is below codim2.slave_lag, and
 * starts only when the state's own directions agree with the slaved ones that closely. */

typedef struct quasi_steady {
  double a, b;           /* slip angles of P+ and P- (first order in tau) */
  double da, db;         /* their first-order lag corrections */
  double rho;            /* slip magnitude */
  double tau;            /* relaxation time of the directions */
  double xs[TF_MAX_DIM]; /* the state on the slow manifold */
} quasi_steady;

/* The slow manifold at the slip magnitude of x: the zeroth-order directions (V+^ = V-^ = 0),
 * then the first-order ones, which turn at the rate the zeroth-order ones move along the slow
 * flow (V+^ = |u+| a*', V-^ = |u-| b*', the rates from the implicit function theorem with a
 * difference quotient of (V+^, V-^) along the flow), so the lag left is second order. */
static bool solve_quasi_steady(const tf_dual *d, double t, const double *x, double a, double b,
                               quasi_steady *q) {
  const double rho = sqrt(x[d->ip] * x[d->ip] + x[d->im] * x[d->im] + x[d->ia] * x[d->ia]);
  double J[4];
  if (!newton_double(d, t, x, rho, NULL, &a, &b, J) || !(sin(a) * sin(b) > 0)) return false;
  double nh[3], f[TF_MAX_DIM], xe[TF_MAX_DIM], dp[2], dm[2];
  on_ray(d, x, rho, a, b, q->xs, nh);
  set_dir(dp, a), set_dir(dm, b);
  analysed_field(d, t, q->xs, dp, dm, f);
  const double R = (f[d->ip] * nh[0] + f[d->im] * nh[1] + f[d->ia] * nh[2]) /
                   sqrt(nh[0] * nh[0] + nh[1] * nh[1] + nh[2] * nh[2]);
  double fmax_ = fabs(R), scale = fmax(rho, 1e-300);
  for (size_t i = 0; i < d->n; i++)
    fmax_ = fmax(fmax_, fabs(f[i])), scale = fmax(scale, fabs(x[i]));
  const double eps = fmax_ > 0 ? 1e-7 * scale / fmax_ : 0.0;
  double rate_a = 0, rate_b = 0;
  if (eps > 0) {
    for (size_t i = 0; i < d->n; i++) xe[i] = q->xs[i] + eps * f[i];
    const hat h = double_limit(d, t + eps, xe, rho + eps * R, a, b);
    const double det = J[0] * J[3] - J[1] * J[2];
    const double gp = h.Vp / eps, gm = h.Vm / eps; /* V^ along the flow at fixed angles */
    rate_a = -(gp * J[3] - J[1] * gm) / det, rate_b = -(J[0] * gm - J[2] * gp) / det;
  }
  const double sp = hypot(q->xs[d->ip], q->xs[d->ia]), sm = hypot(q->xs[d->im], q->xs[d->ia]);
  q->tau = fmax(sp / fabs(J[0]), sm / fabs(J[3]));
  const double target[2] = {sp * rate_a, sm * rate_b};
  double a1 = a, b1 = b;
  if (newton_double(d, t, x, rho, target, &a1, &b1, NULL) && sin(a1) * sin(b1) > 0) {
    q->da = a1 - a, q->db = b1 - b;
    a = a1, b = b1;
    on_ray(d, x, rho, a, b, q->xs, nh);
  } else {
    return false;
  }
  q->a = a, q->b = b, q->rho = rho;
  return true;
}

/* The state that the integrated values x stand for (x itself unless slaved). */
static void manifold_state(const tf_dual *d, double t, double *x) {
  quasi_steady q;
  if (d->qs && solve_quasi_steady(d, t, x, d->qs_a, d->qs_b, &q)) memcpy(x, q.xs, d->n * sizeof *x);
}

/* The slaved field: the manifold state's field, the slip vector moved along itself. */
static bool quasi_steady_field(const tf_dual *d, double t, const double *x, double a, double b,
                               double *dx) {
  quasi_steady q;
  if (!solve_quasi_steady(d, t, x, a, b, &q)) return false;
  double dp[2], dm[2], unit[TF_MAX_DIM], nh[3];
  set_dir(dp, q.a), set_dir(dm, q.b);
  analysed_field(d, t, q.xs, dp, dm, dx);
  on_ray(d, x, 1.0, q.a, q.b, unit, nh);
  const double R = dx[d->ip] * unit[d->ip] + dx[d->im] * unit[d->im] + dx[d->ia] * unit[d->ia];
  const double *along = q.rho > 0 ? x : unit, scale = q.rho > 0 ? R / q.rho : R;
  dx[d->ip] = scale * along[d->ip], dx[d->im] = scale * along[d->im],
  dx[d->ia] = scale * along[d->ia];
  return true;
}

/* The largest angle between the state's own slip directions and (a, b). */
static double misalignment(const tf_dual *d, const double *x, double a, double b) {
  const double ep = remainder(atan2(x[d->ia], x[d->ip]) - a, 2 * M_PI);
  const double em = remainder(atan2(x[d->ia], x[d->im]) - b, 2 * M_PI);
  return fmax(fabs(ep), fabs(em));
}

/* The slow manifold at x (from the angles a, b) and the lag the first-order directions leave:
 * tau times the rate at which their correction changes along the slow flow (a difference
 * quotient over a time step small against the slow motion, large against round-off). */
static bool slaving_lag(const tf_dual *d, double t, const double *x, double a, double b,
                        quasi_steady *q, double *lag) {
  double dx[TF_MAX_DIM], xe[TF_MAX_DIM];
  quasi_steady qe;
  if (!solve_quasi_steady(d, t, x, a, b, q) || !quasi_steady_field(d, t, x, q->a, q->b, dx))
    return false;
  double fmax_ = 0, scale = 0;
  for (size_t i = 0; i < d->n; i++)
    fmax_ = fmax(fmax_, fabs(dx[i])), scale = fmax(scale, fabs(x[i]));
  if (!(fmax_ > 0)) {
    *lag = 0;
    return true;
  }
  const double eps = 1e-4 * scale / fmax_;
  for (size_t i = 0; i < d->n; i++) xe[i] = x[i] + eps * dx[i];
  if (!solve_quasi_steady(d, t + eps, xe, q->a, q->b, &qe)) return false;
  *lag = q->tau * fmax(fabs(qe.da - q->da), fabs(qe.db - q->db)) / eps;
  return true;
}

/* After each SS step: keep, start or end the slaving (ending it puts the manifold state into
 * x, and returns true).  It starts where the lag is a quarter of codim2.slave_lag and the
 * state's own directions agree with the slaved ones to slave_lag, and ends above slave_lag. */
static bool update_quasi_steady(void *ctx, double t, double *x) {
  tf_dual *d = ctx;
  if (d->mode != TF_DC_SS || d->opt.slave_lag <= 0) return false;
  quasi_steady q;
  double lag;
  if (d->qs) {
    if (!slaving_lag(d, t, x, d->qs_a, d->qs_b, &q, &lag) || lag > d->opt.slave_lag) {
      manifold_state(d, t, x); /* the directions lag behind: follow them */
      d->qs = false;
      return true;
    }
  } else {
    /* testing costs two manifold solves: after a failed test, wait 1, 2, 4, ... 1024 steps */
    if (d->qs_wait > 0) {
      d->qs_wait--;
      return false;
    }
    d->qs_wait = d->qs_backoff, d->qs_backoff = d->qs_backoff < 1024 ? 2 * d->qs_backoff + 1 : 1024;
    const double rp = hypot(x[d->ip], x[d->ia]), rm = hypot(x[d->im], x[d->ia]);
    if (!(rp > 0 && rm > 0) ||
        !slaving_lag(d, t, x, atan2(x[d->ia], x[d->ip]), atan2(x[d->ia], x[d->im]), &q, &lag) ||
        lag > 0.25 * d->opt.slave_lag || misalignment(d, x, q.a, q.b) > d->opt.slave_lag)
      return false;
  }
  d->qs = true, d->qs_a = q.a, d->qs_b = q.b, d->qs_wait = d->qs_backoff = 0;
  set_dir(d->dref_p, q.a), set_dir(d->dref_m, q.b);
  return false;
}

/* --- right-hand side and event functions --------------------------------------------------- */

static int case_field(tf_dual *d, double t, const double *x, double *dx) {
  switch (d->mode) {
    case TF_DC_SS: {
      double dp[2], dm[2];
      if (d->qs && quasi_steady_field(d, t, x, d->qs_a, d->qs_b, dx)) return 0;
      contact_direction(d, 1, t, x, dp);
      contact_direction(d, -1, t, x, dm);
      return d->k->two_contact->field_dual(t, x, dp, dm, d->p, dx);
    }
    case TF_DC_SR:
    case TF_DC_RS: {
      tf_codim2_sliding s;
      if (tf_codim2_sliding_vector(d->mode == TF_DC_SR ? &d->view_sr : &d->view_rs, t, x, &s))
        d->sliding_failed = true;
      memcpy(dx, s.Fs, d->n * sizeof *dx);
      return 0;
    }
    default: {
      double lp, lm;
      rr_field(d, t, x, dx, &lp, &lm);
      return 0;
    }
  }
}

/* A refusal met here is the stage's (the stepper retries a positive one with a smaller step),
 * not the run's: it is returned, and the run's record left as it was. */
static int rhs(double t, const double *x, void *ctx, double *dx) {
  tf_dual *d = ctx;
  const int before = d->refused;
  d->refused = 0;
  const bool failed = d->sliding_failed;
  const int rc = tf_model_code_join(case_field(d, t, x, dx), d->refused);
  if (d->refused) d->sliding_failed = failed; /* NaN from a refusal, not a non-unique vector */
  d->refused = before;
  return rc;
}

/* Event functions of the current case, positive while it lasts. */
static int event_values(void *ctx, double t, const double *x_in, double *g) {
  tf_dual *d = ctx;
  double xm[TF_MAX_DIM];
  const double *x = x_in;
  if (d->qs) {
    memcpy(xm, x_in, d->n * sizeof *xm);
    manifold_state(d, t, xm);
    x = xm;
  }
  switch (d->mode) {
    case TF_DC_SS:
      g[0] = x[d->im] * d->dref_m[0] + x[d->ia] * d->dref_m[1]; /* -> Sigma_SR */
      g[1] = x[d->ip] * d->dref_p[0] + x[d->ia] * d->dref_p[1]; /* -> Sigma_RS */
      /* -> Sigma_RR: both slips vanish together (a double limit direction; near a neutral
       * one they decay too slowly for the two functions above to change sign soon) */
      g[2] = d->rr_armed
                 ? fmax(hypot(x[d->ip], x[d->ia]), hypot(x[d->im], x[d->ia])) - d->opt.sigma_tol
                 : 1.0;
      return 3;
    case TF_DC_SR:
    case TF_DC_RS: {
      tf_codim2_point pt;
      tf_codim2_classify(d->mode == TF_DC_SR ? &d->view_sr : &d->view_rs, t, x, &pt);
      g[0] = pt.region == TF_CODIM2_SPIRAL ? -1.0 : -pt.R_max;
      g[1] = d->sgn * x[d->mode == TF_DC_SR ? d->ip : d->im];
      return 2;
    }
    default: {
      tf_dc_rr_point a;
      double f[TF_MAX_DIM];
      rr_field(d, t, x, f, &a.lp_sr, &a.lm_sr);
      rs_tangencies(d, t, x, &a.lp_rs, &a.lm_rs);
      rr_double(d, t, x, &a);
      g[0] = fmin(-a.lp_sr, a.lm_sr);
      g[1] = fmin(-a.lp_rs, a.lm_rs);
      g[2] = a.directions ? -a.R_max : 1.0;
      return 3;
    }
  }
}

/* Newton may correct the located time of every event function but the distance to Sigma_RR
 * in SS: a hypot, not differentiable where the slips vanish, so the central difference along
 * the field straddles that point and its slope means nothing. */
static bool smooth_event(void *ctx, int which) {
  const tf_dual *d = ctx;
  return !(which == 2 && d->mode == TF_DC_SS);
}

/* The field for the slope when landing on an event: evaluations off the trajectory say
 * nothing of whether the sliding vectors are unique on it. */
static void current_field(void *ctx, double t, const double *x, double *dx) {
  tf_dual *d = ctx;
  const bool failed = d->sliding_failed;
  const int rc = rhs(t, x, d, dx);
  tf_model_code_keep(&d->refused, rc); /* at a located event: no step to shrink */
  d->sliding_failed = failed;
}

/* --- transitions ----------------------------------------------------------------------------- */

static void emit(tf_dual *d, tf_dual_result *res, tf_dc_event_kind kind, double t, const double *x,
                 tf_dc_case from, tf_dc_case to) {
  res->counts[kind]++;
  res->events++;
  if (d->on_event) {
    const tf_dc_event ev = {kind, t, x, from, to};
    d->on_event(d->ctx, &ev);
  }
}

static bool rolls(const tf_codim2_point *pt) {
  return pt->region == TF_CODIM2_SLIDING || (pt->region == TF_CODIM2_TANGENCY && pt->R_max <= 0);
}

/* Enter (or pass) Sigma_SR (c = -1: P- stops slipping) or Sigma_RS (c = +1) from SS. */
static void leave_rr(tf_dual *d, tf_dual_result *res, int which, double t, double *x);
static int event_values(void *ctx, double t, const double *x, double *g);

/* Both contacts stop slipping together (arrival at Sigma_RR along a double limit direction):
 * roll at both if Proposition 3.3 allows no departure there, else leave as it says. */
static void arrive_both(tf_dual *d, tf_dual_result *res, double t, double *x) {
  x[d->ip] = x[d->im] = x[d->ia] = 0.0;
  d->mode = TF_DC_RR;
  double g[MAX_EVENT_FUNCTIONS];
  event_values(d, t, x, g);
  int worst = -1;
  for (int j = 0; j < 3; j++)
    if (g[j] < 0 && (worst < 0 || g[j] < g[worst])) worst = j;
  if (worst < 0) {
    emit(d, res, TF_DC_TO_RR, t, x, TF_DC_SS, TF_DC_RR);
    return;
  }
  leave_rr(d, res, worst, t, x); /* logged as RR -> ... at the same instant */
}

static void arrive_ss(tf_dual *d, tf_dual_result *res, int c, double t, double *x) {
  if (hypot(x[c < 0 ? d->ip : d->im], x[d->ia]) <= d->opt.sigma_tol) {
    arrive_both(d, res, t, x);
    return;
  }
  tf_codim2_sys *view = c < 0 ? &d->view_sr : &d->view_rs;
  const int other = c < 0 ? d->ip : d->im;
  double *ref = c < 0 ? d->dref_m : d->dref_p;
  const double phi_in = atan2(ref[1], ref[0]);
  d->sgn = x[other] >= 0 ? 1 : -1;
  tf_codim2_project(view, x);
  tf_codim2_point pt;
  tf_codim2_classify(view, t, x, &pt);
  if (rolls(&pt)) {
    const tf_dc_case to = c < 0 ? TF_DC_SR : TF_DC_RS;
    emit(d, res, c < 0 ? TF_DC_TO_SR : TF_DC_TO_RS, t, x, TF_DC_SS, to);
    d->mode = to;
    return;
  }
  /* crossing: leave along the repelling limit direction closest to straight on */
  double best = pt.phi_R_max, best_cos = -2;
  for (int i = 0; i < pt.count; i++)
    if (pt.R[i] > 0 && cos(pt.phi[i] - phi_in - M_PI) > best_cos)
      best_cos = cos(pt.phi[i] - phi_in - M_PI), best = pt.phi[i];
  set_dir(ref, best);
  emit(d, res, TF_DC_CROSSING, t, x, TF_DC_SS, TF_DC_SS);
}

/* SR/RS: the slipping contact's u1 reached 0 (Sigma_RR), a codim-1 question for F_SR. */
static void arrive_rr(tf_dual *d, tf_dual_result *res, double t, double *x) {
  const tf_dc_case from = d->mode;
  const int idx = from == TF_DC_SR ? d->ip : d->im;
  x[idx] = 0.0;
  double lp, lm;
  if (from == TF_DC_SR) {
    double f[TF_MAX_DIM];
    rr_field(d, t, x, f, &lp, &lm);
  } else {
    rs_tangencies(d, t, x, &lp, &lm);
  }
  const double other = d->sgn > 0 ? lm : lp;
  if (d->sgn * other < 0) { /* the other side's field carries on through */
    d->sgn = -d->sgn;
    emit(d, res, TF_DC_CROSSING, t, x, from, from);
    return;
  }
  d->mode = TF_DC_RR;
  emit(d, res, TF_DC_TO_RR, t, x, from, TF_DC_RR);
}

/* Leave RR by event `which` (0: towards SR, 1: towards RS, 2: towards SS). */
static void leave_rr(tf_dual *d, tf_dual_result *res, int which, double t, double *x) {
  /* on Sigma_RR: the round-off the RR field left in the slips would start the slipping
   * contact on an arbitrary side */
  x[d->ip] = x[d->im] = x[d->ia] = 0.0;
  tf_dc_rr_point a;
  tf_dual_rr_analysis(d, t, x, &a);
  if (which < 2) {
    const bool sr = which == 0;
    const double lp = sr ? a.lp_sr : a.lp_rs;
    d->sgn = lp >= 0 ? 1 : -1;
    tf_codim2_point pt;
    tf_codim2_classify(sr ? &d->view_sr : &d->view_rs, t, x, &pt);
    if (rolls(&pt)) {
      d->mode = sr ? TF_DC_SR : TF_DC_RS;
      emit(d, res, sr ? TF_DC_TO_SR : TF_DC_TO_RS, t, x, TF_DC_RR, d->mode);
      return;
    }
    /* the other contact would not keep rolling: both slip (Proposition 3.3 a) */
    double *mine = sr ? d->dref_p : d->dref_m, *theirs = sr ? d->dref_m : d->dref_p;
    mine[0] = d->sgn, mine[1] = 0;
    set_dir(theirs, pt.phi_R_max);
  } else { /* along the double limit direction: quasi-steady from rho = 0 */
    d->rr_armed = false;
    set_dir(d->dref_p, a.phi_plus);
    set_dir(d->dref_m, a.phi_minus);
    d->qs = true, d->qs_a = a.phi_plus, d->qs_b = a.phi_minus;
  }
  d->mode = TF_DC_SS;
  emit(d, res, TF_DC_TO_SS, t, x, TF_DC_RR, TF_DC_SS);
}

static void start_case(tf_dual *d, tf_dual_result *res, double t, double *x) {
  const double rp = hypot(x[d->ip], x[d->ia]), rm = hypot(x[d->im], x[d->ia]);
  const double tol = d->opt.sigma_tol;
  d->mode = TF_DC_SS;
  d->qs = false, d->rr_armed = true, d->qs_wait = d->qs_backoff = 0;
  if (rp > tol) d->dref_p[0] = x[d->ip] / rp, d->dref_p[1] = x[d->ia] / rp;
  if (rm > tol) d->dref_m[0] = x[d->im] / rm, d->dref_m[1] = x[d->ia] / rm;
  if (rp > tol && rm > tol) return;
  if (rp > tol || rm > tol) { /* on one discontinuity set */
    const int c = rm <= tol ? -1 : 1;
    double *ref = c < 0 ? d->dref_m : d->dref_p;
    tf_codim2_sys *view = c < 0 ? &d->view_sr : &d->view_rs;
    d->sgn = x[c < 0 ? d->ip : d->im] >= 0 ? 1 : -1;
    tf_codim2_project(view, x);
    tf_codim2_point pt;
    tf_codim2_classify(view, t, x, &pt);
    if (rolls(&pt)) {
      d->mode = c < 0 ? TF_DC_SR : TF_DC_RS;
      return;
    }
    set_dir(ref, pt.phi_R_max);
    emit(d, res, TF_DC_TO_SS, t, x, c < 0 ? TF_DC_SR : TF_DC_RS, TF_DC_SS);
    return;
  }
  x[d->ip] = x[d->im] = x[d->ia] = 0.0; /* on Sigma_RR */
  d->mode = TF_DC_RR;
  double g[MAX_EVENT_FUNCTIONS];
  event_values(d, t, x, g);
  int worst = -1;
  for (int j = 0; j < 3; j++)
    if (g[j] < 0 && (worst < 0 || g[j] < g[worst])) worst = j;
  if (worst >= 0) leave_rr(d, res, worst, t, x);
}

/* --- the loop's hooks ----------------------------------------------------------------------- */

/* Renews the slip direction references before each SS step (see evolve2.c). */
static void renew_references(void *ctx, double t, const double *x) {
  (void)t;
  tf_dual *d = ctx;
  if (d->mode != TF_DC_SS) return;
  const double rp = hypot(x[d->ip], x[d->ia]), rm = hypot(x[d->im], x[d->ia]);
  /* leaving Sigma_RR, the slips start below sigma_tol: only a return below it is an arrival */
  if (!d->rr_armed) d->rr_armed = fmax(rp, rm) > 2 * d->opt.sigma_tol;
  if (d->qs) return; /* slaved: the references are the slaved directions */
  if (rp > d->opt.slave_radius) d->dref_p[0] = x[d->ip] / rp, d->dref_p[1] = x[d->ia] / rp;
  if (rm > d->opt.slave_radius) d->dref_m[0] = x[d->im] / rm, d->dref_m[1] = x[d->ia] / rm;
}

static int check_sliding(void *ctx) {
  tf_dual *d = ctx;
  if (d->refused) return TF_MEMBER_FAILED;
  if (!d->sliding_failed) return TF_MEMBER_OK;
  d->res->failure = "a sliding vector is not unique here (Theorem 2.17 does not apply)";
  return TF_MEMBER_FAILED;
}

static void step_done(void *ctx, double t0, double t1) {
  tf_dual *d = ctx;
  d->res->time_in[d->mode] += t1 - t0;
  if (d->on_step) d->on_step(d->ctx, d, t0, t1);
}

/* The transition at event `which` of the current case (event_values' order). */
static int transition(void *ctx, int which, double t, double *x) {
  tf_dual *d = ctx;
  tf_dual_result *res = d->res;
  manifold_state(d, t, x);
  d->rr_armed = true; /* leave_rr disarms it for a departure from Sigma_RR into SS */
  d->qs_wait = d->qs_backoff = 0;
  d->qs = false; /* restarts (leave_rr) or is re-established after a later step */
  switch (d->mode) {
    case TF_DC_SS: {
      if (which == 2) {
        arrive_both(d, res, t, x);
        break;
      }
      const int c = which == 0 ? -1 : 1;
      const double r = hypot(x[c < 0 ? d->im : d->ip], x[d->ia]);
      if (r > d->opt.sigma_tol) { /* the slip direction turned: renew the reference */
        double *ref = c < 0 ? d->dref_m : d->dref_p;
        ref[0] = x[c < 0 ? d->im : d->ip] / r, ref[1] = x[d->ia] / r;
      } else {
        arrive_ss(d, res, c, t, x);
      }
      break;
    }
    case TF_DC_SR:
    case TF_DC_RS:
      if (which == 1) {
        arrive_rr(d, res, t, x);
      } else {
        const bool sr = d->mode == TF_DC_SR;
        tf_codim2_point pt;
        tf_codim2_classify(sr ? &d->view_sr : &d->view_rs, t, x, &pt);
        double *rolling = sr ? d->dref_m : d->dref_p, *slipping = sr ? d->dref_p : d->dref_m;
        set_dir(rolling, pt.phi_R_max);
        slipping[0] = d->sgn, slipping[1] = 0;
        const tf_dc_case from = d->mode;
        d->mode = TF_DC_SS;
        emit(d, res, TF_DC_TO_SS, t, x, from, TF_DC_SS);
      }
      break;
    default:
      leave_rr(d, res, which, t, x);
  }
  return d->refused ? TF_MEMBER_FAILED : TF_MEMBER_OK;
}

static const tf_event_loop_ops loop_ops = {.rhs = rhs,
                                           .field = current_field,
                                           .events = event_values,
                                           .transition = transition,
                                           .before_step = renew_references,
                                           .after_step = check_sliding,
                                           .on_step = step_done,
                                           .smooth = smooth_event,
                                           .project = update_quasi_steady};

/* --- the driver ------------------------------------------------------------------------------ */

tf_dual *tf_dual_create(const tf_kernel *k, const double *params, const tf_evolve2_options *opts) {
  if (k->kind != TF_MODEL_TWO_CONTACT) return NULL;
  tf_dual *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->k = k, d->p = params, d->n = k->dim;
  const int *ci = k->two_contact->contact_index;
  d->ip = ci[0], d->im = ci[1], d->ia = ci[2];
  d->opt = opts ? *opts : tf_evolve2_default_options();
  d->view_sr = (tf_codim2_sys){
      .dim = d->n, .sigma2 = sigma_sr, .field2 = field_sr, .ctx = d, .refusal = &d->refused};
  d->view_rs = (tf_codim2_sys){
      .dim = d->n, .sigma2 = sigma_rs, .field2 = field_rs, .ctx = d, .refusal = &d->refused};
  d->sgn = 1;
  d->dref_p[0] = d->dref_m[0] = 1.0;
  const tf_event_loop_options lo = {.ode = d->opt.ode,
                                    .event_tol = d->opt.event_tol,
                                    .max_event_rate = d->opt.max_event_rate,
                                    .max_events = d->opt.max_events,
                                    .qr_interval = 1.0};
  d->loop = tf_event_loop_create(d->n, 0, &loop_ops, d, &lo);
  if (!d->loop) {
    tf_dual_destroy(d);
    return NULL;
  }
  return d;
}

void tf_dual_destroy(tf_dual *d) {
  if (!d) return;
  tf_event_loop_destroy(d->loop);
  free(d);
}

void tf_dual_set_callbacks(tf_dual *d, tf_dc_event_fn on_event, tf_dc_step_fn on_step, void *ctx) {
  d->on_event = on_event, d->on_step = on_step, d->ctx = ctx;
}

void tf_dual_dense(const tf_dual *d, double t, double *x) {
  tf_stepper_dense(tf_event_loop_stepper(d->loop), t, x);
  manifold_state(d, t, x);
}

tf_dc_case tf_dual_case(const tf_dual *d) {
  return d->mode;
}

void tf_dual_request_stop(tf_dual *d) {
  tf_event_loop_request_stop(d->loop);
}

tf_dual_result tf_dual_run(tf_dual *d, double t0, double *x, double t_end) {
  tf_dual_result res = {.status = TF_MEMBER_OK, .t = t0};
  d->sliding_failed = false;
  d->refused = 0;
  if (!tf_state_finite(x, d->n)) {
    res.status = TF_MEMBER_NONFINITE;
    return res;
  }
  start_case(d, &res, t0, x);
  if (d->refused) {
    res.status = tf_kernel_member_failed(d->k, d->refused, t0);
    res.final_case = d->mode;
    return res;
  }
  d->res = &res;
  const tf_event_loop_result r = tf_event_loop_run(d->loop, t0, x, t_end, &res.events);
  d->res = NULL;
  manifold_state(d, r.t, x);
  d->qs = false;
  const int code = r.model_code ? r.model_code : d->refused;
  res.status = code ? tf_kernel_member_failed(d->k, code, r.t) : r.status;
  res.work = r.work;
  res.t = r.t;
  res.final_case = d->mode;
  return res;
}
