/* test_kernel_lanes.c — every built-in kernel's lane callbacks (twofold/model.h) against its
 * scalar callbacks, bit for bit, as the engine requires of them: a member's numbers must not
 * depend on which members share its lanes.
 *
 * For each kernel and its fast_math variant: a flow's rhs_lanes and jacobian_lanes (parameters
 * shared by the lanes), a Filippov model's slip_lanes (each lane its own parameters and side,
 * +1 and -1 mixed; a side-0 lane is not compared, as model.h allows it anything), an impact
 * model's rhs_lanes, surface_lanes and rate_lanes (each lane its own parameters), at lane counts
 * 1 to 16 and pseudo-random states and times.  A value compares equal when the bits are, or when
 * both are NaN (a square root of a negative state: no NaN payload is promised). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "kernel.h"

enum { W = TF_LANES_MAX, MAXP = 64, MAXD = 16 };

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static double uniform(double lo, double hi) { /* xorshift64*: a fixed, portable sequence */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  const uint64_t r = rng_state * 0x2545f4914f6cdd1du;
  return lo + (hi - lo) * ((double)(r >> 11) * 0x1.0p-53);
}

static bool same(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

static bool prepared(const tf_kernel *k, double *p) {
  tf_error err = {0};
  return !k->prepare || k->prepare(p, &err) == 0;
}

/* the defaults, prepared; in odd lanes each parameter nudged where the kernel accepts it alone
 * (an integer-valued flag refuses a nudge, the rest still differ from the even lanes') */
static void lane_params(const tf_kernel *k, int l, double *p) {
  double base[MAXP], q[MAXP];
  for (size_t j = 0; j < k->nparams; j++) base[j] = k->params[j].def;
  for (size_t j = 0; l % 2 && j < k->nparams; j++) {
    const double v = k->params[j].def * (1 + 1e-3 * (double)(j + 1));
    for (size_t i = 0; i < k->nparams; i++) q[i] = k->params[i].def;
    q[j] = v;
    if (v >= k->params[j].min && v <= k->params[j].max && prepared(k, q)) base[j] = v;
  }
  memcpy(p, base, k->nparams * sizeof *p);
  CHECK(prepared(k, p), "%s: the nudged parameters together", k->name);
}

typedef struct lanes_in {
  int n;
  double t[W], x[MAXD * W], p[(MAXP + 1) * W];
  double own_p[W][MAXP], own_x[W][MAXD];
} lanes_in;

static void fill(const tf_kernel *k, int n, bool shared_params, lanes_in *in) {
  in->n = n;
  for (int l = 0; l < n; l++) {
    in->t[l] = uniform(0, 10);
    for (size_t i = 0; i < k->dim; i++) {
      in->own_x[l][i] = uniform(-2, 2);
      in->x[i * (size_t)n + (size_t)l] = in->own_x[l][i];
    }
    lane_params(k, shared_params ? 0 : l, in->own_p[l]);
    for (size_t j = 0; j < k->nparams; j++) in->p[j * (size_t)n + (size_t)l] = in->own_p[l][j];
  }
}

/* lane l of a lanes field (n lanes, its code) against the scalar field's one[] and code c:
 * the values that differ */
static long lane_differs(const tf_kernel *k, int n, int l, const double *dx, int code, int c,
                         const double *one) {
  long bad = code != c;
  for (size_t i = 0; i < k->dim; i++) bad += !same(dx[i * (size_t)n + (size_t)l], one[i]);
  return bad;
}

/* a Filippov model's own smoothing (tf_filippov_ops smoothed/smooth) needs its smoothing
 * parameter: eps, where the defaults leave it 0 */
static void smoothing_on(const tf_kernel *k, lanes_in *in) {
  const int eps = tf_kernel_param_index(k, "eps");
  if (eps < 0 || k->filippov->smoothed(in->own_p[0])) return;
  in->own_p[0][eps] = 0.05;
  CHECK(k->filippov->smoothed(in->own_p[0]), "%s: eps 0.05 smooths it", k->name);
}

static long flow_lanes(const tf_kernel *k, const tf_flow_ops *f) {
  long bad = 0;
  for (int n = 1; n <= W; n++) {
    lanes_in in;
    fill(k, n, true, &in);
    if (f != k->flow) smoothing_on(k, &in);
    double dx[MAXD * W], jac[MAXD * MAXD * W];
    int code[W];
    if (f->rhs_lanes) f->rhs_lanes(n, in.t, in.x, in.own_p[0], dx, code);
    if (f->jacobian_lanes) f->jacobian_lanes(n, in.t, in.x, in.own_p[0], jac);
    for (int l = 0; l < n; l++) {
      double one[MAXD], j1[MAXD * MAXD];
      if (f->rhs_lanes) {
        const int c = f->rhs(in.t[l], in.own_x[l], in.own_p[0], one);
        bad += lane_differs(k, n, l, dx, code[l], c, one);
      }
      if (f->jacobian_lanes && f->jacobian) {
        f->jacobian(in.t[l], in.own_x[l], in.own_p[0], j1);
        for (size_t e = 0; e < k->dim * k->dim; e++)
          bad += !same(jac[e * (size_t)n + (size_t)l], j1[e]);
      }
    }
  }
  return bad;
}

static long filippov_lanes(const tf_kernel *k) {
  const tf_filippov_ops *f = k->filippov;
  long bad = 0;
  for (int n = 1; n <= W; n++) {
    lanes_in in;
    fill(k, n, false, &in);
    int side[W];
    for (int l = 0; l < n; l++) {
      side[l] = (l % 3 == 0) ? 1 : (l % 3 == 1 ? -1 : 0);
      in.p[k->nparams * (size_t)n + (size_t)l] = side[l];
    }
    double dx[MAXD * W];
    int code[W];
    f->slip_lanes(n, in.t, in.x, in.p, dx, code);
    for (int l = 0; l < n; l++) {
      if (!side[l]) continue;
      double one[MAXD];
      const int c = f->slip(in.t[l], in.own_x[l], side[l], in.own_p[l], one);
      bad += lane_differs(k, n, l, dx, code[l], c, one);
    }
  }
  return bad;
}

static long impact_lanes(const tf_kernel *k) {
  const tf_impact_ops *f = k->impact;
  long bad = 0;
  for (int n = 1; n <= W; n++) {
    lanes_in in;
    fill(k, n, false, &in);
    double dx[MAXD * W], h[W];
    int code[W];
    if (f->rhs_lanes) {
      f->rhs_lanes(n, in.t, in.x, in.p, dx, code);
      for (int l = 0; l < n; l++) {
        double one[MAXD];
        const int c = f->rhs(in.t[l], in.own_x[l], in.own_p[l], one);
        bad += lane_differs(k, n, l, dx, code[l], c, one);
      }
    }
    for (size_t s = 0; f->surface_lanes && s < f->nimpacts; s++) {
      f->surface_lanes((int)s, n, in.x, in.p, h);
      for (int l = 0; l < n; l++)
        bad += !same(h[l], f->surface((int)s, in.own_x[l], in.own_p[l], NULL));
    }
    for (size_t i = 0; f->rate_lanes && f->rate && i < k->dim; i++) {
      f->rate_lanes((int)i, n, in.t, in.x, in.p, h);
      for (int l = 0; l < n; l++)
        bad += !same(h[l], f->rate((int)i, in.t[l], in.own_x[l], in.own_p[l]));
    }
  }
  return bad;
}

/* the kernel's lane callbacks, or 0 if it has none; *bad counts the values that differ */
static int check_kernel(const tf_kernel *k, long *bad) {
  *bad = 0;
  if (k->dim > MAXD || k->nparams > MAXP) return 0;
  if (k->kind == TF_MODEL_FLOW && k->flow && (k->flow->rhs_lanes || k->flow->jacobian_lanes))
    return *bad = flow_lanes(k, k->flow), 1;
  if (k->kind == TF_MODEL_IMPACT && k->impact &&
      (k->impact->rhs_lanes || k->impact->surface_lanes || k->impact->rate_lanes))
    return *bad = impact_lanes(k), 1;
  if (k->kind != TF_MODEL_FILIPPOV || !k->filippov) return 0;
  const tf_filippov_ops *f = k->filippov;
  const bool smooth = f->smooth && f->smooth->rhs_lanes && f->smoothed;
  if (f->slip_lanes) *bad += filippov_lanes(k);
  if (smooth) *bad += flow_lanes(k, f->smooth);
  return f->slip_lanes || smooth;
}

int main(void) {
  int checked = 0;
  const char *wanted[] = {"lorenz", "jeffrey-oscillator", "pressure_valve", "wheel", "relay"};
  for (size_t w = 0; w < sizeof wanted / sizeof *wanted; w++) {
    const tf_kernel *k = tf_kernel_find(wanted[w]);
    long bad = 0;
    CHECK(k && check_kernel(k, &bad), "%s has lane callbacks", wanted[w]);
  }
  for (size_t i = 0; i < tf_kernel_count(); i++) {
    const tf_kernel *variants[2] = {tf_kernel_at(i), tf_kernel_at(i)->fast_math};
    for (int v = 0; v < 2; v++) {
      long bad = 0;
      if (!variants[v] || !check_kernel(variants[v], &bad)) continue;
      checked++;
      CHECK(bad == 0, "%s%s: %ld lane values differ from the scalar callbacks'", variants[v]->name,
            v ? " (fast_math)" : "", bad);
    }
  }
  CHECK(checked >= 5, "%d kernels' lane callbacks checked", checked);
  return check_report("test_kernel_lanes");
}
